//! The registry: every plugin a host knows, and which of their targets it may offer.
//!
//! Plugins come from two places: built-ins linked into the host (the host registers each with
//! [`Registry::add_builtin`], see [`builtin`]) and plugin files in configured directories. A target is offered
//! only when its plugin has a passing [`Certificate`] for exactly what runs: a file's sha256, or a
//! built-in's name and version inside this host binary — always for the configured suite version
//! and this host's plugin-API major. [`Registry::targets`] says why every other one is not offered.
//!
//! An uncertified plugin file is never opened: the registry hashes it and looks the hash up, so
//! no uncertified code runs in the host.
//!
//! ```no_run
//! use handoff_host::registry::{Availability, Registry, RegistryConfig};
//!
//! let registry = Registry::open(RegistryConfig {
//!     plugin_dirs: vec!["/usr/lib/handoff/plugins".into()],
//!     certificate_dir: "/var/lib/handoff/certificates".into(),
//!     suite_version: "1.0.0".into(), // handoff_conformance::SUITE_VERSION
//!     ..Default::default()
//! });
//! for listing in registry.targets() {
//!     match &listing.availability {
//!         Availability::Verified { .. } => println!("{:?}: verified", listing.target),
//!         Availability::NotOffered { reason } => println!("{:?}: {reason}", listing.target),
//!     }
//! }
//! let plugin = registry.plugin_for("claude-code"); // Ok only for a verified target
//! ```

pub mod builtin;
pub mod certificate;
pub mod permissions;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use builtin::MakePlugin;
pub use certificate::{
    Certificate, CertificateError, CertificateStore, CertifiedCheck, Subject, SuiteOutcome,
    CERTIFICATE_SCHEMA,
};

use handoff_capability::Plugin;

/// Where a registry looks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryConfig {
    /// Directories whose `*.so` files are plugins.
    pub plugin_dirs: Vec<PathBuf>,
    /// Single plugin files.
    pub plugin_files: Vec<PathBuf>,
    /// Where certificates are kept.
    pub certificate_dir: PathBuf,
    /// The conformance suite version a certificate must come from.
    pub suite_version: String,
}

/// Where a plugin came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PluginSource {
    /// Linked into the host.
    BuiltIn,
    /// A plugin file.
    File {
        /// The file.
        path: PathBuf,
        /// Its sha256 when the registry read it.
        sha256: String,
    },
}

/// Whether a target is offered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Availability {
    /// Offered: a passing certificate vouches for the plugin.
    Verified {
        /// When the certificate was issued.
        certified_at: String,
        /// The suite version that certified it.
        suite_version: String,
    },
    /// Not offered, and why (one line that says what to do).
    NotOffered {
        /// Why.
        reason: String,
    },
}

/// One line of [`Registry::targets`].
///
/// Two verified plugins may offer the same target (a plugin file and a built-in, say). The one
/// in use is chosen by a fixed rule: plugin files before built-ins (a user who installs a plugin
/// file wants it used), files in the order they are configured (`plugin_files`, then each
/// `plugin_dirs` folder's `*.so` sorted by name). The others are listed as shadowed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetListing {
    /// The target name; `None` when the plugin could not be asked (an uncertified file is never
    /// opened) and no earlier certificate names its targets.
    pub target: Option<String>,
    /// The plugin name (for a file that was never opened: its file name).
    pub plugin: String,
    /// Where the plugin came from.
    pub source: PluginSource,
    /// Whether it is offered.
    pub availability: Availability,
    /// For a verified target that another verified plugin also offers and that is not the one in
    /// use: the plugin and source that is used instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<String>,
}

impl TargetListing {
    /// Whether the target is offered.
    pub fn is_verified(&self) -> bool {
        matches!(self.availability, Availability::Verified { .. })
    }

    /// Whether this is the plugin used for its target (verified and not shadowed).
    pub fn in_use(&self) -> bool {
        self.is_verified() && self.shadowed_by.is_none()
    }
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginSource::BuiltIn => f.write_str("built-in"),
            PluginSource::File { path, .. } => write!(f, "{}", path.display()),
        }
    }
}

/// A plugin the registry knows.
struct Entry {
    name: String,
    source: PluginSource,
    state: State,
}

enum State {
    Verified {
        plugin: Arc<dyn Plugin>,
        certificate: Box<Certificate>,
    },
    NotOffered {
        plugin: Option<Arc<dyn Plugin>>,
        targets: Vec<String>,
        reason: String,
    },
}

/// Every plugin a host knows and its certificates.
pub struct Registry {
    config: RegistryConfig,
    store: CertificateStore,
    entries: Vec<Entry>,
}

impl Registry {
    /// Gathers built-ins and plugin files and checks each against the certificate store. Only
    /// certified files are loaded.
    pub fn open(config: RegistryConfig) -> Registry {
        let store = CertificateStore::new(&config.certificate_dir);
        let mut registry = Registry {
            config,
            store,
            entries: Vec::new(),
        };
        for file in registry.plugin_files() {
            let entry = match file {
                Ok(file) => registry.file_entry(&file),
                Err(refused) => refused,
            };
            registry.entries.push(entry);
        }
        registry
    }

    /// The user's key, beside the certificates: it seals them, and the host's journals
    /// ([`crate::seal`]).
    pub fn seal(&self) -> Result<&crate::seal::Seal, CertificateError> {
        self.store.seal()
    }

    /// Adds a plugin linked into the host (a host registers each built-in it links).
    pub fn add_builtin(&mut self, plugin: Arc<dyn Plugin>) {
        let manifest = plugin.manifest();
        let state = match builtin_subject(&manifest) {
            Err(reason) => State::NotOffered {
                targets: target_names(&manifest),
                plugin: Some(plugin),
                reason,
            },
            Ok(subject) => match self.find(&subject) {
                Ok(Some(certificate)) if certificate.passed => State::Verified {
                    plugin,
                    certificate: Box::new(certificate),
                },
                Ok(Some(certificate)) => State::NotOffered {
                    targets: target_names(&manifest),
                    plugin: Some(plugin),
                    reason: failed_reason(&certificate),
                },
                Ok(None) => State::NotOffered {
                    targets: target_names(&manifest),
                    plugin: Some(plugin),
                    reason: format!(
                        "built-in {} {} is not yet certified in this host binary (suite {}): it is certified on first use",
                        manifest.name, manifest.version, self.config.suite_version
                    ),
                },
                Err(e) => State::NotOffered {
                    targets: target_names(&manifest),
                    plugin: Some(plugin),
                    reason: e.to_string(),
                },
            },
        };
        self.entries.push(Entry {
            name: manifest.name,
            source: PluginSource::BuiltIn,
            state,
        });
    }

    /// The built-ins that have no certificate in this host binary yet (names), which
    /// [`Registry::certify_builtins`] would certify.
    pub fn uncertified_builtins(&self) -> Vec<String> {
        self.uncertified(|_| true)
    }

    /// The uncertified built-ins a command that uses `targets` needs: those offering one of them,
    /// unless a verified plugin file is used for it instead (see [`TargetListing`]). Which
    /// [`Registry::certify_builtins_for`] would certify.
    pub fn uncertified_builtins_for(&self, targets: &[&str]) -> Vec<String> {
        self.uncertified(|manifest| self.needed_for(manifest, targets))
    }

    /// Runs `certify` (the conformance suite) on every built-in that has no certificate yet,
    /// writes a certificate for each, and offers those that passed. Returns the certificates
    /// written. Built-ins are certified in parallel, one thread each.
    ///
    /// Many hosts may start at once on a fresh certificate directory: each built-in is certified
    /// under a lock on its certificate (see [`CertificateStore::lock`]), so one run certifies it
    /// while the others wait, then find and adopt its certificate. No run sees a half-certified
    /// state: a certificate appears whole (by rename) or not at all.
    pub fn certify_builtins(
        &mut self,
        certify: impl Fn(&dyn Plugin) -> SuiteOutcome + Sync,
    ) -> Result<Vec<PathBuf>, CertificateError> {
        let names = self.uncertified_builtins();
        self.certify_named(&names, certify)
    }

    /// Like [`Registry::certify_builtins`], but only the built-ins a command using `targets`
    /// needs ([`Registry::uncertified_builtins_for`]); the others stay uncertified (and not
    /// offered) until a command uses them.
    pub fn certify_builtins_for(
        &mut self,
        targets: &[&str],
        certify: impl Fn(&dyn Plugin) -> SuiteOutcome + Sync,
    ) -> Result<Vec<PathBuf>, CertificateError> {
        let names = self.uncertified_builtins_for(targets);
        self.certify_named(&names, certify)
    }

    /// Names of the built-ins without a certificate whose manifest `wanted` accepts.
    fn uncertified(&self, wanted: impl Fn(&handoff_capability::Manifest) -> bool) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.source == PluginSource::BuiltIn)
            .filter_map(|e| match &e.state {
                State::NotOffered {
                    plugin: Some(plugin),
                    ..
                } => {
                    let manifest = plugin.manifest();
                    (builtin_subject(&manifest).is_ok() && wanted(&manifest))
                        .then(|| e.name.clone())
                }
                _ => None,
            })
            .collect()
    }

    /// Whether a built-in with `manifest` is needed to offer one of `targets`: it offers the
    /// target and no verified plugin file is used for it.
    fn needed_for(&self, manifest: &handoff_capability::Manifest, targets: &[&str]) -> bool {
        targets.iter().any(|&target| {
            manifest.target(target).is_some()
                && !self
                    .in_use(target)
                    .is_some_and(|e| matches!(e.source, PluginSource::File { .. }))
        })
    }

    /// Certifies the uncertified built-ins named `names`, each on its own thread (the suite
    /// mostly waits on the disk, so two overlap even on one core).
    fn certify_named(
        &mut self,
        names: &[String],
        certify: impl Fn(&dyn Plugin) -> SuiteOutcome + Sync,
    ) -> Result<Vec<PathBuf>, CertificateError> {
        let suite = self.config.suite_version.clone();
        let major = handoff_abi::api_major();
        let store = &self.store;
        let certify = &certify;
        let jobs: Vec<(usize, Arc<dyn Plugin>, Subject)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.source == PluginSource::BuiltIn && names.contains(&e.name))
            .filter_map(|(i, e)| match &e.state {
                State::NotOffered {
                    plugin: Some(plugin),
                    ..
                } => builtin_subject(&plugin.manifest())
                    .ok()
                    .map(|subject| (i, plugin.clone(), subject)),
                _ => None,
            })
            .collect();
        // One certificate (found or made) per job, with whether this run wrote it.
        let results: Vec<Result<(Certificate, Option<PathBuf>), CertificateError>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = jobs
                    .iter()
                    .map(|(_, plugin, subject)| {
                        let suite = &suite;
                        scope.spawn(move || {
                            certify_one(store, plugin.as_ref(), subject, suite, major, certify)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    })
                    .collect()
            });
        let mut written = Vec::new();
        let mut first_error = None;
        for ((index, plugin, _), result) in jobs.into_iter().zip(results) {
            let (certificate, path) = match result {
                Ok(done) => done,
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            written.extend(path);
            let manifest = plugin.manifest();
            self.entries[index].state = if certificate.passed {
                State::Verified {
                    plugin,
                    certificate: Box::new(certificate),
                }
            } else {
                State::NotOffered {
                    targets: target_names(&manifest),
                    plugin: Some(plugin),
                    reason: failed_reason(&certificate),
                }
            };
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    /// Every known target, offered or not, and why not.
    pub fn targets(&self) -> Vec<TargetListing> {
        let mut listings = Vec::new();
        for entry in &self.entries {
            let (targets, availability) = match &entry.state {
                State::Verified {
                    plugin,
                    certificate,
                } => (
                    target_names(&plugin.manifest()),
                    Availability::Verified {
                        certified_at: certificate.issued_at.clone(),
                        suite_version: certificate.suite_version.clone(),
                    },
                ),
                State::NotOffered {
                    targets, reason, ..
                } => (
                    targets.clone(),
                    Availability::NotOffered {
                        reason: reason.clone(),
                    },
                ),
            };
            let listing = |target: Option<String>| {
                let shadowed_by = target
                    .as_deref()
                    .filter(|_| matches!(entry.state, State::Verified { .. }))
                    .and_then(|t| self.in_use(t))
                    .filter(|winner| !std::ptr::eq(*winner, entry))
                    .map(|winner| format!("{} ({})", winner.name, winner.source));
                TargetListing {
                    target,
                    plugin: entry.name.clone(),
                    source: entry.source.clone(),
                    availability: availability.clone(),
                    shadowed_by,
                }
            };
            if targets.is_empty() {
                listings.push(listing(None));
            }
            listings.extend(targets.into_iter().map(|t| listing(Some(t))));
        }
        listings
    }

    /// The manifest of every plugin this registry could ask (the built-ins, and the plugin files
    /// it opened), with where it came from: what a target declares, certified or not yet.
    pub fn manifests(&self) -> Vec<(PluginSource, handoff_capability::Manifest)> {
        self.entries
            .iter()
            .filter_map(|entry| {
                let plugin = match &entry.state {
                    State::Verified { plugin, .. } => plugin,
                    State::NotOffered { plugin, .. } => plugin.as_ref()?,
                };
                Some((entry.source.clone(), plugin.manifest()))
            })
            .collect()
    }

    /// The verified targets only.
    pub fn verified_targets(&self) -> Vec<TargetListing> {
        self.targets()
            .into_iter()
            .filter(TargetListing::is_verified)
            .collect()
    }

    /// The plugin that offers `target`, if the target is verified; otherwise why not.
    pub fn plugin_for(&self, target: &str) -> Result<Arc<dyn Plugin>, String> {
        if let Some(Entry {
            state: State::Verified { plugin, .. },
            ..
        }) = self.in_use(target)
        {
            return Ok(plugin.clone());
        }
        let mut reasons = Vec::new();
        for entry in &self.entries {
            match &entry.state {
                State::Verified { .. } => {}
                State::NotOffered {
                    targets, reason, ..
                } if targets.iter().any(|t| t == target) => {
                    reasons.push(format!("{}: {reason}", entry.name))
                }
                State::NotOffered { .. } => {}
            }
        }
        Err(if reasons.is_empty() {
            format!("no plugin offers target {target:?}")
        } else {
            format!("target {target:?} is not offered: {}", reasons.join("; "))
        })
    }

    /// The verified entry used for `target`: plugin files (in configured order) before built-ins.
    fn in_use(&self, target: &str) -> Option<&Entry> {
        let offers = |e: &&Entry| match &e.state {
            State::Verified { plugin, .. } => plugin.manifest().target(target).is_some(),
            State::NotOffered { .. } => false,
        };
        let is_file = |e: &&Entry| matches!(e.source, PluginSource::File { .. });
        let mut verified = self.entries.iter().filter(offers);
        let first = verified.clone().next();
        verified.find(is_file).or(first)
    }

    fn find(&self, subject: &Subject) -> Result<Option<Certificate>, CertificateError> {
        self.store.find(
            subject,
            &self.config.suite_version,
            handoff_abi::api_major(),
        )
    }

    /// Every plugin file: the configured files, then `*.so` in each directory (sorted); a
    /// directory that others may write (or that is not this user's or root's) is refused whole,
    /// as an entry saying why.
    fn plugin_files(&self) -> Vec<Result<PathBuf, Entry>> {
        let mut files: Vec<Result<PathBuf, Entry>> =
            self.config.plugin_files.iter().cloned().map(Ok).collect();
        for dir in &self.config.plugin_dirs {
            let refused = std::fs::metadata(dir)
                .ok()
                .and_then(|meta| permissions::refusal(&meta, "the plugin folder"));
            if let Some(reason) = refused {
                files.push(Err(not_offered(dir, String::new(), vec![], reason)));
                continue;
            }
            let mut found: Vec<PathBuf> = match std::fs::read_dir(dir) {
                Ok(entries) => entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("so"))
                    .collect(),
                Err(e) => {
                    tracing::warn!("plugin directory {}: {e}", dir.display());
                    Vec::new()
                }
            };
            found.sort();
            files.extend(found.into_iter().map(Ok));
        }
        files
    }

    /// The entry of the plugin file `path`: read once (the file's own permissions checked on the
    /// handle read), then [`Registry::entry_of_bytes`].
    fn file_entry(&self, path: &Path) -> Entry {
        let read = std::fs::File::open(path).and_then(|mut file| {
            let meta = file.metadata()?;
            if let Some(reason) = permissions::refusal(&meta, "the plugin file") {
                return Ok(Err(reason));
            }
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            std::io::Read::read_to_end(&mut file, &mut bytes)?;
            Ok(Ok(bytes))
        });
        match read {
            Ok(Ok(bytes)) => self.entry_of_bytes(path, bytes),
            Ok(Err(reason)) => not_offered(path, String::new(), vec![], reason),
            Err(e) => not_offered(path, String::new(), vec![], format!("cannot read: {e}")),
        }
    }

    /// The entry of the plugin file `path` whose bytes were read once: hashed, looked up, and (if
    /// certified) mapped from these very bytes.
    fn entry_of_bytes(&self, path: &Path, bytes: Vec<u8>) -> Entry {
        let not_offered = |name: String, sha256: String, targets, reason| Entry {
            name,
            ..not_offered(path, sha256, targets, reason)
        };
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let subject = Subject::File {
            sha256: sha256.clone(),
            path: path.to_owned(),
        };
        let certificate = match self.find(&subject) {
            Ok(Some(c)) => c,
            Ok(None) => {
                let (targets, reason) = self.why_uncertified(path, &sha256);
                return not_offered(file_name(path), sha256, targets, reason);
            }
            Err(e) => return not_offered(file_name(path), sha256, vec![], e.to_string()),
        };
        if !certificate.passed {
            let reason = failed_reason(&certificate);
            return not_offered(certificate.plugin, sha256, certificate.targets, reason);
        }
        // The bytes that were hashed are the bytes that are mapped: the file is not read again.
        let plugin = match crate::loader::load_bytes(path, bytes) {
            Ok(plugin) => plugin,
            Err(e) => {
                return not_offered(
                    certificate.plugin,
                    sha256,
                    certificate.targets,
                    e.to_string(),
                )
            }
        };
        if plugin.file().sha256 != sha256 {
            return not_offered(
                certificate.plugin,
                sha256,
                certificate.targets,
                "the file changed while it was being loaded; try again".into(),
            );
        }
        let manifest = plugin.manifest();
        if manifest.name != certificate.plugin || manifest.version != certificate.plugin_version {
            let reason = format!(
                "it says it is {} {}, but its certificate is for {} {}",
                manifest.name, manifest.version, certificate.plugin, certificate.plugin_version
            );
            let targets = target_names(&manifest);
            return not_offered(manifest.name, sha256, targets, reason);
        }
        Entry {
            name: manifest.name,
            source: PluginSource::File {
                path: path.to_owned(),
                sha256,
            },
            state: State::Verified {
                plugin: Arc::new(plugin),
                certificate: Box::new(certificate),
            },
        }
    }

    /// Why a file with no certificate for its hash is not offered: rebuilt since certification,
    /// certified by another suite or API, or never certified.
    fn why_uncertified(&self, path: &Path, sha256: &str) -> (Vec<String>, String) {
        let all = self.store.all();
        let short = &sha256[..12.min(sha256.len())];
        let same_hash = all
            .iter()
            .find(|(_, c)| matches!(&c.subject, Subject::File { sha256: s, .. } if s == sha256));
        if let Some((_, c)) = same_hash {
            return (
                c.targets.clone(),
                format!(
                    "its certificate is from suite {} / plugin API {}, this host needs suite {} / plugin API {}: certify it again with `conformance run {}`",
                    c.suite_version, c.api_major, self.config.suite_version, handoff_abi::api_major(), path.display()
                ),
            );
        }
        // Certificates record absolute paths; compare like with like.
        let path = &std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let same_path = all
            .iter()
            .filter(|(_, c)| matches!(&c.subject, Subject::File { path: p, .. } if p == path))
            .max_by(|a, b| a.1.issued_at.cmp(&b.1.issued_at));
        if let Some((_, c)) = same_path {
            let Subject::File { sha256: old, .. } = &c.subject else {
                unreachable!("filtered to file subjects")
            };
            return (
                c.targets.clone(),
                format!(
                    "changed since it was certified (certified sha256 {}…, file is {short}…): certify it again with `conformance run {}`",
                    &old[..12.min(old.len())],
                    path.display()
                ),
            );
        }
        (
            vec![],
            format!(
                "not certified: no certificate for sha256 {short}… (suite {}, plugin API {}) in {}; run `conformance run {}`",
                self.config.suite_version,
                handoff_abi::api_major(),
                self.store.dir().display(),
                path.display()
            ),
        )
    }
}

/// Certifies one built-in under its certificate's lock: the certificate another run wrote while
/// this one waited is adopted (`None`: nothing written), else the suite runs and its certificate is
/// written.
fn certify_one(
    store: &CertificateStore,
    plugin: &dyn Plugin,
    subject: &Subject,
    suite: &str,
    major: u64,
    certify: &(impl Fn(&dyn Plugin) -> SuiteOutcome + Sync),
) -> Result<(Certificate, Option<PathBuf>), CertificateError> {
    let _lock = store.lock(subject, suite, major)?;
    // Another run certified it while this one waited (or failed it before). One this user's
    // handoff did not issue (forged, edited, an older schema) is replaced.
    match store.find(subject, suite, major) {
        Ok(Some(found)) => return Ok((found, None)),
        Ok(None) => {}
        Err(CertificateError::Invalid { path, message }) => {
            tracing::warn!("replacing {}: {message}", path.display())
        }
        Err(e) => return Err(e),
    }
    let certificate = Certificate::new(subject.clone(), &plugin.manifest(), certify(plugin));
    let path = store.write(&certificate)?;
    Ok((certificate, Some(path)))
}

/// The entry of a plugin file (or folder) `path` that is not offered, named by its file name.
fn not_offered(path: &Path, sha256: String, targets: Vec<String>, reason: String) -> Entry {
    Entry {
        name: file_name(path),
        source: PluginSource::File {
            path: path.to_owned(),
            sha256,
        },
        state: State::NotOffered {
            plugin: None,
            targets,
            reason,
        },
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn builtin_subject(manifest: &handoff_capability::Manifest) -> Result<Subject, String> {
    Ok(Subject::BuiltIn {
        name: manifest.name.clone(),
        version: manifest.version.clone(),
        host_sha256: builtin::host_sha256()?,
    })
}

fn target_names(manifest: &handoff_capability::Manifest) -> Vec<String> {
    manifest.targets.iter().map(|t| t.name.clone()).collect()
}

fn failed_reason(certificate: &Certificate) -> String {
    format!(
        "failed conformance (suite {}): {}",
        certificate.suite_version,
        certificate.failed_checks().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::test_libs::{build, evil_marker};

    #[test]
    fn the_certified_bytes_are_the_bytes_mapped_even_if_the_file_is_swapped() {
        let dir = tempfile::tempdir().unwrap();
        let Some((good, evil)) = build(dir.path()) else {
            return;
        };
        let path = dir.path().join("plugin.so");
        std::fs::copy(&good, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let registry = Registry::open(RegistryConfig {
            certificate_dir: dir.path().join("certificates"),
            suite_version: "1.0.0".into(),
            ..Default::default()
        });
        let manifest = handoff_capability::Manifest {
            name: "good".into(),
            version: "1".into(),
            api_requirement: "^1".into(),
            targets: vec![],
        };
        let outcome = SuiteOutcome {
            suite_version: "1.0.0".into(),
            checks: vec![CertifiedCheck {
                id: "manifest".into(),
                status: "pass".into(),
            }],
        };
        let subject = Subject::File {
            sha256: sha256.clone(),
            path: path.clone(),
        };
        registry
            .store
            .write(&Certificate::new(subject, &manifest, outcome))
            .unwrap();
        // Swapped between the registry's read (and hash, and certificate lookup) and the load.
        std::fs::copy(&evil, &path).unwrap();
        let entry = registry.entry_of_bytes(&path, bytes);
        assert_eq!(
            entry.source,
            PluginSource::File {
                path: path.clone(),
                sha256
            }
        );
        let State::NotOffered { reason, .. } = &entry.state else {
            panic!("the test library is not a plugin")
        };
        assert!(reason.contains("not a handoff plugin"), "{reason}");
        assert!(
            !evil_marker(dir.path()).exists(),
            "the swapped-in file's initialiser ran"
        );
    }
}
