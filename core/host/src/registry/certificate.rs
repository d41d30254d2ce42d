//! Certificates: the record that a plugin passed the conformance suite.
//!
//! A certificate is keyed by what it vouches for (a plugin file's sha256, or a built-in's name
//! and version inside one host binary, by that binary's sha256), the suite version and the
//! plugin-API major. The key is the file name, so a lookup never parses a directory of JSON, and
//! the content repeats the key, so a renamed file vouches for nothing.
//!
//! A certificate is trusted only if handoff issued it: each is sealed ([`crate::seal`]) with
//! the user's key, kept beside the certificates. One forged from scratch, edited (`passed: true`
//! beside a failed check) or written with another key vouches for nothing, and says so.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::seal::{Purpose, Seal};

/// The schema of a certificate file. `/1` certificates carried no seal; this host trusts none.
pub const CERTIFICATE_SCHEMA: &str = "handoff.certificate/2";

/// How long a run waits for another run certifying the same subject (the whole suite on one
/// plugin takes seconds; a run still certifying after this is stuck).
pub const CERTIFY_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// What a certificate vouches for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A plugin file, by the sha256 of its bytes.
    File {
        /// Lowercase hex sha256 of the file.
        sha256: String,
        /// Where it was when certified (informational: the hash is the key).
        path: PathBuf,
    },
    /// A plugin linked into a host binary.
    BuiltIn {
        /// The plugin name from its manifest.
        name: String,
        /// The plugin version from its manifest.
        version: String,
        /// Lowercase hex sha256 of the host executable it is linked into.
        host_sha256: String,
    },
}

impl Subject {
    /// The part of the certificate file name that names the subject.
    pub fn key(&self) -> String {
        match self {
            Subject::File { sha256, .. } => format!("file-{sha256}"),
            Subject::BuiltIn {
                name,
                version,
                host_sha256,
            } => format!(
                "builtin-{}-{}-host-{host_sha256}",
                file_safe(name),
                file_safe(version)
            ),
        }
    }
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One check as the certificate records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertifiedCheck {
    /// The check id, e.g. `round_trip/claude-code`.
    pub id: String,
    /// `pass`, `fail` or `skip`.
    pub status: String,
}

/// The outcome of a suite run, as a certificate needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteOutcome {
    /// The suite version that ran.
    pub suite_version: String,
    /// Every check that ran.
    pub checks: Vec<CertifiedCheck>,
}

impl SuiteOutcome {
    /// Passed: at least one check ran and every one passed (a skip is not a pass).
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.status == "pass")
    }
}

/// A certificate file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificate {
    /// Always [`CERTIFICATE_SCHEMA`].
    pub schema: String,
    /// What it vouches for.
    pub subject: Subject,
    /// The plugin name (manifest).
    pub plugin: String,
    /// The plugin version (manifest).
    pub plugin_version: String,
    /// The targets the plugin offered when certified.
    pub targets: Vec<String>,
    /// The suite version that ran.
    pub suite_version: String,
    /// The plugin-API major of the host that ran it.
    pub api_major: u64,
    /// The full plugin-API version of that host.
    pub host_api_version: String,
    /// Whether every check passed.
    pub passed: bool,
    /// Every check and its status.
    pub checks: Vec<CertifiedCheck>,
    /// When it was issued (RFC 3339, UTC).
    pub issued_at: String,
    /// The seal over the rest of the certificate, under the key of the user who issued it; set
    /// when it is written.
    #[serde(default)]
    pub seal: String,
}

impl Certificate {
    /// A certificate for `subject` from a suite run of `manifest`.
    pub fn new(
        subject: Subject,
        manifest: &handoff_capability::Manifest,
        outcome: SuiteOutcome,
    ) -> Self {
        Certificate {
            schema: CERTIFICATE_SCHEMA.to_owned(),
            subject,
            plugin: manifest.name.clone(),
            plugin_version: manifest.version.clone(),
            targets: manifest.targets.iter().map(|t| t.name.clone()).collect(),
            passed: outcome.passed(),
            suite_version: outcome.suite_version,
            api_major: handoff_abi::api_major(),
            host_api_version: handoff_capability::PLUGIN_API_VERSION.to_owned(),
            checks: outcome.checks,
            issued_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            seal: String::new(),
        }
    }

    /// The bytes its seal covers: the certificate without its seal.
    fn sealed_bytes(&self) -> Vec<u8> {
        let mut unsealed = self.clone();
        unsealed.seal = String::new();
        serde_json::to_vec(&unsealed).expect("a certificate serialises")
    }

    /// The checks that did not pass.
    pub fn failed_checks(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| c.status != "pass")
            .map(|c| c.id.as_str())
            .collect()
    }
}

/// Why a certificate could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// An I/O error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The key that seals certificates cannot be had.
    #[error("the certificates' key: {message}")]
    Key {
        /// What is wrong with it, naming the file.
        message: String,
    },
    /// A certificate file is not valid.
    #[error("{}: not a valid certificate: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A directory of certificates, and the key that seals them.
#[derive(Clone, Debug)]
pub struct CertificateStore {
    dir: PathBuf,
    /// The key in `dir` ([`Seal::open`]), opened on first use (or the error it gave).
    seal: Arc<OnceLock<Result<Seal, String>>>,
}

impl CertificateStore {
    /// The store in `dir` (created by the first write), sealed with the key in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CertificateStore {
            dir: dir.into(),
            seal: Arc::new(OnceLock::new()),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The user's key, kept in this directory (made on first use): it seals certificates, and a
    /// host's journals too.
    pub fn seal(&self) -> Result<&Seal, CertificateError> {
        self.seal
            .get_or_init(|| Seal::open(&self.dir).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|message| CertificateError::Key {
                message: message.clone(),
            })
    }

    /// The file that holds the certificate for this key.
    pub fn path_for(&self, subject: &Subject, suite_version: &str, api_major: u64) -> PathBuf {
        self.dir.join(format!(
            "{}.suite-{}.api-{api_major}.json",
            subject.key(),
            file_safe(suite_version)
        ))
    }

    /// The certificate for exactly this key, if there is one. A file whose content does not repeat
    /// its key is an error, never a certificate.
    pub fn find(
        &self,
        subject: &Subject,
        suite_version: &str,
        api_major: u64,
    ) -> Result<Option<Certificate>, CertificateError> {
        let path = self.path_for(subject, suite_version, api_major);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(CertificateError::Io { path, source }),
        };
        let certificate = self.parse(&path, &text)?;
        let same_subject = match (&certificate.subject, subject) {
            (Subject::File { sha256: a, .. }, Subject::File { sha256: b, .. }) => a == b,
            (a, b) => a == b,
        };
        if !same_subject
            || certificate.suite_version != suite_version
            || certificate.api_major != api_major
        {
            return Err(CertificateError::Invalid {
                path,
                message: "its content does not match its file name (subject, suite or API major)"
                    .into(),
            });
        }
        Ok(Some(certificate))
    }

    /// The certificate the text of `path` holds, if it is one this user's handoff issued: parsed,
    /// its seal verified, and what it says consistent.
    pub fn parse(&self, path: &Path, text: &str) -> Result<Certificate, CertificateError> {
        let certificate = parse(path, text)?;
        self.check_seal(path, &certificate)?;
        Ok(certificate)
    }

    /// A certificate is trusted only if this user's key sealed it, and what it says agrees with
    /// itself.
    fn check_seal(&self, path: &Path, certificate: &Certificate) -> Result<(), CertificateError> {
        let seal = self.seal()?;
        let invalid = |message: &str| CertificateError::Invalid {
            path: path.to_owned(),
            message: message.to_owned(),
        };
        if !seal.verifies(
            Purpose::Certificate,
            &[&certificate.sealed_bytes()],
            &certificate.seal,
        ) {
            return Err(invalid(
                "its seal does not verify under this user's key: forged, edited, or issued by another user or an older handoff; certify the plugin again",
            ));
        }
        let outcome = SuiteOutcome {
            suite_version: certificate.suite_version.clone(),
            checks: certificate.checks.clone(),
        };
        if certificate.passed != outcome.passed() {
            return Err(invalid("`passed` disagrees with its checks"));
        }
        Ok(())
    }

    /// Every readable certificate in the store (unreadable and unsealed ones are skipped with a
    /// debug log).
    pub fn all(&self) -> Vec<(PathBuf, Certificate)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| self.parse(&path, &t).map_err(|e| e.to_string()))
            {
                Ok(c) => found.push((path, c)),
                Err(e) => tracing::debug!("skipping certificate {}: {e}", path.display()),
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// Takes the lock of one certificate key (`<dir>/locks/<key>.lock`), waiting while another
    /// run certifies the same subject (up to [`CERTIFY_WAIT`]). Held while a run looks for the
    /// certificate and, finding none, runs the suite and writes it.
    pub fn lock(
        &self,
        subject: &Subject,
        suite_version: &str,
        api_major: u64,
    ) -> Result<handoff_store::lock::Lock, CertificateError> {
        let certificate = self.path_for(subject, suite_version, api_major);
        let name = certificate
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = self.dir.join("locks").join(format!("{name}.lock"));
        handoff_store::lock::Lock::acquire_file(&path, CERTIFY_WAIT)
            .map_err(|source| CertificateError::Io { path, source })
    }

    /// Seals a certificate and writes it atomically (a reader sees the old file or the new one,
    /// never a torn one); returns its path.
    pub fn write(&self, certificate: &Certificate) -> Result<PathBuf, CertificateError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| CertificateError::Io {
            path: self.dir.clone(),
            source,
        })?;
        let mut certificate = certificate.clone();
        certificate.seal = self
            .seal()?
            .sign(Purpose::Certificate, &[&certificate.sealed_bytes()]);
        let certificate = &certificate;
        let path = self.path_for(
            &certificate.subject,
            &certificate.suite_version,
            certificate.api_major,
        );
        let json =
            serde_json::to_vec_pretty(certificate).map_err(|e| CertificateError::Invalid {
                path: path.clone(),
                message: e.to_string(),
            })?;
        handoff_store::atomic::replace(&path, |w| {
            w.write_all(&json)?;
            w.write_all(b"\n")
        })
        .map_err(|source| CertificateError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }
}

fn parse(path: &Path, text: &str) -> Result<Certificate, CertificateError> {
    let certificate: Certificate =
        serde_json::from_str(text).map_err(|e| CertificateError::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    if certificate.schema != CERTIFICATE_SCHEMA {
        return Err(CertificateError::Invalid {
            path: path.to_owned(),
            message: format!(
                "schema {:?}; this host reads {CERTIFICATE_SCHEMA:?}",
                certificate.schema
            ),
        });
    }
    Ok(certificate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> handoff_capability::Manifest {
        handoff_capability::Manifest {
            name: "demo".into(),
            version: "0.1.0".into(),
            api_requirement: "^1".into(),
            targets: vec![],
        }
    }

    fn outcome(status: &str) -> SuiteOutcome {
        SuiteOutcome {
            suite_version: "1.0.0".into(),
            checks: vec![CertifiedCheck {
                id: "manifest".into(),
                status: status.into(),
            }],
        }
    }

    #[test]
    fn written_certificates_are_found_by_their_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = CertificateStore::new(dir.path().join("certs"));
        let subject = Subject::File {
            sha256: "ab".repeat(32),
            path: "/x/p.so".into(),
        };
        let certificate = Certificate::new(subject.clone(), &manifest(), outcome("pass"));
        assert!(certificate.passed);
        store.write(&certificate).unwrap();
        let major = handoff_abi::api_major();
        let found = store.find(&subject, "1.0.0", major).unwrap().unwrap();
        assert_eq!(
            Certificate {
                seal: String::new(),
                ..found
            },
            certificate
        );
        assert_eq!(store.find(&subject, "2.0.0", major).unwrap(), None);
        let other = Subject::File {
            sha256: "cd".repeat(32),
            path: "/x/p.so".into(),
        };
        assert_eq!(store.find(&other, "1.0.0", major).unwrap(), None);
    }

    #[test]
    fn a_renamed_certificate_vouches_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = CertificateStore::new(dir.path());
        let real = Subject::File {
            sha256: "ab".repeat(32),
            path: "/x/p.so".into(),
        };
        let forged = Subject::File {
            sha256: "cd".repeat(32),
            path: "/x/p.so".into(),
        };
        let written = store
            .write(&Certificate::new(real, &manifest(), outcome("pass")))
            .unwrap();
        let major = handoff_abi::api_major();
        std::fs::rename(written, store.path_for(&forged, "1.0.0", major)).unwrap();
        assert!(store.find(&forged, "1.0.0", major).is_err());
    }

    #[test]
    fn one_certifier_per_subject_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = CertificateStore::new(dir.path());
        let subject = Subject::File {
            sha256: "ab".repeat(32),
            path: "/x/p.so".into(),
        };
        let held = store.lock(&subject, "1.0.0", 1).unwrap();
        let file = held.path().to_owned();
        assert!(
            file.starts_with(dir.path().join("locks")),
            "{}",
            file.display()
        );
        let waiter = {
            let store = store.clone();
            let subject = subject.clone();
            std::thread::spawn(move || {
                let started = std::time::Instant::now();
                let _lock = store.lock(&subject, "1.0.0", 1).unwrap();
                started.elapsed()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(150));
        drop(held);
        assert!(waiter.join().unwrap() >= std::time::Duration::from_millis(100));
        // The lock folder is not mistaken for a certificate.
        store
            .write(&Certificate::new(subject, &manifest(), outcome("pass")))
            .unwrap();
        assert_eq!(store.all().len(), 1);
    }

    #[test]
    fn a_skip_is_not_a_pass() {
        assert!(!outcome("skip").passed());
        assert!(!SuiteOutcome {
            suite_version: "1".into(),
            checks: vec![]
        }
        .passed());
    }

    #[test]
    fn a_forged_or_edited_certificate_vouches_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = CertificateStore::new(dir.path());
        let subject = Subject::File {
            sha256: "ab".repeat(32),
            path: "/x/p.so".into(),
        };
        let major = handoff_abi::api_major();
        let failed = Certificate::new(subject.clone(), &manifest(), outcome("fail"));
        let path = store.write(&failed).unwrap();
        assert!(store.find(&subject, "1.0.0", major).is_ok());
        let text = std::fs::read_to_string(&path).unwrap();
        let mut edits = vec![
            // `passed: true` beside a failed check.
            text.replace("\"passed\": false", "\"passed\": true"),
            // Every check gone and `passed: true`.
            text.replace("\"passed\": false", "\"passed\": true")
                .replace("\"status\": \"fail\"", "\"status\": \"pass\""),
        ];
        // Forged from scratch: a passing certificate with no seal, and one with a made-up seal.
        let mut forged = Certificate::new(subject.clone(), &manifest(), outcome("pass"));
        edits.push(serde_json::to_string(&forged).unwrap());
        forged.seal = "ab".repeat(32);
        edits.push(serde_json::to_string(&forged).unwrap());
        // Sealed with another user's key.
        let other = tempfile::tempdir().unwrap();
        let theirs = CertificateStore::new(other.path());
        let their_path = theirs.write(&forged).unwrap();
        edits.push(std::fs::read_to_string(their_path).unwrap());
        for edit in edits {
            assert_ne!(edit, text);
            std::fs::write(&path, &edit).unwrap();
            let err = store.find(&subject, "1.0.0", major).unwrap_err();
            assert!(
                err.to_string().contains("seal does not verify")
                    || err.to_string().contains("disagrees"),
                "{err}"
            );
            assert!(
                store.all().is_empty(),
                "an unsealed one is not listed either"
            );
        }
    }
}
