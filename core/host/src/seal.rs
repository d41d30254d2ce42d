//! The seal: how handoff knows a file it reads back is one it wrote itself.
//!
//! handoff acts on files it left for its own later runs: a journal says what to roll back, a
//! certificate says which plugin may run. Anyone who can write a folder can plant such a file (a
//! downloaded session folder, a shared certificate directory), so neither is trusted for what it
//! says. Each carries a seal instead: an HMAC-SHA256, under a per-user key, of what it says and
//! where it applies. A file whose seal does not verify under this user's key is ignored, with a
//! warning naming it, and never acted on.
//!
//! The key is 32 random bytes in `<certificate dir>/handoff.key`, made on first use with mode 0600.
//! Like ssh with its private keys, a key file that is not a regular file of this user, or that
//! anyone else may read or write, is refused: a key others can read seals nothing.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The name of the key file in its folder.
pub const KEY_FILE: &str = "handoff.key";

const KEY_LEN: usize = 32;

/// What a seal is made for: the same bytes sealed for one purpose never verify for another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A rollback journal of a store root.
    Journal,
    /// A conformance certificate.
    Certificate,
    /// A store root's record of the episodes handoff wrote there ([`crate::episodes`]).
    Episodes,
}

impl Purpose {
    fn tag(self) -> &'static [u8] {
        match self {
            Purpose::Journal => b"handoff.journal",
            Purpose::Certificate => b"handoff.certificate",
            Purpose::Episodes => b"handoff.episodes",
        }
    }
}

/// The per-user key that seals what handoff writes for itself.
#[derive(Clone)]
pub struct Seal {
    key: [u8; KEY_LEN],
    /// Where the key lives (`None`: made for this process only).
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        f.debug_struct("Seal").field("path", &self.path).finish()
    }
}

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct SealError {
    /// The key file (or its folder).
    pub path: PathBuf,
    /// What is wrong with it.
    pub message: String,
}

impl Seal {
    /// The key in `dir` (`dir/handoff.key`), made if it is missing. Refused if the file is not a
    /// regular file owned by this user, or if its mode lets anyone else read or write it.
    pub fn open(dir: &Path) -> Result<Seal, SealError> {
        let path = dir.join(KEY_FILE);
        let error = |message: String| SealError {
            path: path.clone(),
            message,
        };
        match read_key(&path) {
            Ok(key) => return Ok(Seal::with_key(key, &path)),
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(error(e.to_string())),
            Err(_) => {}
        }
        std::fs::create_dir_all(dir).map_err(|e| SealError {
            path: dir.to_owned(),
            message: e.to_string(),
        })?;
        let mut key = [0u8; KEY_LEN];
        getrandom::fill(&mut key)
            .map_err(|e| error(format!("no random bytes for a new key: {e}")))?;
        match write_new_key(&path, &key) {
            Ok(()) => Ok(Seal::with_key(key, &path)),
            // Another run made it first: use theirs.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_key(&path)
                .map(|key| Seal::with_key(key, &path))
                .map_err(|e| error(e.to_string())),
            Err(e) => Err(error(format!("cannot make a key: {e}"))),
        }
    }

    /// The key already in `dir`, if there is one, checked as [`Seal::open`] checks it; never
    /// makes one (for a host that only reports, like `handoff doctor`).
    pub fn existing(dir: &Path) -> Result<Option<Seal>, SealError> {
        let path = dir.join(KEY_FILE);
        match read_key(&path) {
            Ok(key) => Ok(Some(Seal::with_key(key, &path))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(SealError {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// A key of this process alone: what it seals no other process can verify. For tests, and for
    /// a host that keeps nothing across runs.
    pub fn ephemeral() -> Seal {
        let mut key = [0u8; KEY_LEN];
        getrandom::fill(&mut key).expect("the OS gives random bytes");
        Seal { key, path: None }
    }

    /// One [`Seal::ephemeral`] key for the whole process, made on first use.
    pub fn of_this_process() -> &'static Seal {
        static SEAL: std::sync::OnceLock<Seal> = std::sync::OnceLock::new();
        SEAL.get_or_init(Seal::ephemeral)
    }

    fn with_key(key: [u8; KEY_LEN], path: &Path) -> Seal {
        Seal {
            key,
            path: Some(path.to_owned()),
        }
    }

    /// The key file, if the key has one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The seal of `parts` for `purpose`: lowercase hex. Each part is length-prefixed, so no two
    /// different lists of parts give the same message.
    pub fn sign(&self, purpose: Purpose, parts: &[&[u8]]) -> String {
        hex::encode(self.mac(purpose, parts).finalize().into_bytes())
    }

    /// Whether `seal` is the seal of `parts` for `purpose` under this key (compared in constant
    /// time). Only the form [`Seal::sign`] writes, lowercase hex, is a seal: one file has one
    /// sealed form (the journal fuzz target found an upper-case twin verifying).
    pub fn verifies(&self, purpose: Purpose, parts: &[&[u8]], seal: &str) -> bool {
        if !seal.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return false;
        }
        match hex::decode(seal) {
            Ok(tag) => self.mac(purpose, parts).verify_slice(&tag).is_ok(),
            Err(_) => false,
        }
    }

    /// Sets the seal of `record`, a file named `name` under the store root `root` (resolved).
    pub fn seal_record<R: SealedRecord>(
        &self,
        root: &Path,
        name: &str,
        record: &mut R,
    ) -> io::Result<()> {
        *record.seal_mut() = String::new();
        let parts = record_parts(root, name, record)?;
        *record.seal_mut() = self.sign(R::PURPOSE, &parts.each());
        Ok(())
    }

    /// Whether `record`'s seal is its seal as [`Seal::seal_record`] made it for `root` and `name`.
    pub fn verifies_record<R: SealedRecord>(&self, root: &Path, name: &str, record: &R) -> bool {
        let mut unsealed = record.clone();
        let seal = std::mem::take(unsealed.seal_mut());
        record_parts(root, name, &unsealed)
            .is_ok_and(|parts| self.verifies(R::PURPOSE, &parts.each(), &seal))
    }

    fn mac(&self, purpose: Purpose, parts: &[&[u8]]) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        for part in std::iter::once(purpose.tag()).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac
    }
}

/// A record handoff keeps in a file of a store root and seals: its seal covers the store root,
/// the file's name and the record's JSON without the seal, so a record moved to another root or
/// name, or edited, no longer verifies.
pub trait SealedRecord: serde::Serialize + Clone {
    /// What the record's seal is made for.
    const PURPOSE: Purpose;

    /// The record's seal (lowercase hex; empty while it is computed).
    fn seal_mut(&mut self) -> &mut String;
}

/// The parts a record's seal covers; `record`'s own seal is empty.
fn record_parts(root: &Path, name: &str, record: &impl serde::Serialize) -> io::Result<Parts> {
    Ok(Parts([
        root.as_os_str().as_encoded_bytes().to_vec(),
        name.as_bytes().to_vec(),
        serde_json::to_vec(record).map_err(io::Error::other)?,
    ]))
}

struct Parts([Vec<u8>; 3]);

impl Parts {
    fn each(&self) -> [&[u8]; 3] {
        self.0.each_ref().map(Vec::as_slice)
    }
}

/// Reads a key file, refusing one that is not this user's alone.
fn read_key(path: &Path) -> io::Result<[u8; KEY_LEN]> {
    // No symbolic link: the key is this very file.
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    let refuse = |why: String| io::Error::new(io::ErrorKind::PermissionDenied, why);
    if !meta.is_file() {
        return Err(refuse("the key is not a regular file".into()));
    }
    if meta.uid() != effective_uid() {
        return Err(refuse(format!(
            "the key belongs to user {} (not this user, {}): it is refused",
            meta.uid(),
            effective_uid()
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(refuse(format!(
            "the key's mode is {mode:04o}: others may read or change it, so it seals nothing; `chmod 600` it, or remove it to make a new one (certificates are then made again)"
        )));
    }
    let mut text = String::new();
    (&mut file).take(256).read_to_string(&mut text)?;
    let bytes = hex::decode(text.trim())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not a key (hex): {e}")))?;
    bytes.try_into().map_err(|bytes: Vec<u8>| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a key is {KEY_LEN} bytes, this one {}", bytes.len()),
        )
    })
}

/// Writes a new key file (mode 0600 from the start) durably; fails if one exists.
fn write_new_key(path: &Path, key: &[u8; KEY_LEN]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Written whole under a temp name, then linked into place: a reader never sees half a key.
    let mut temp = tempfile::Builder::new()
        .prefix(".handoff-key-")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    temp.write_all(hex::encode(key).as_bytes())?;
    temp.write_all(b"\n")?;
    temp.as_file().sync_all()?;
    temp.persist_noclobber(path).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_verifies_only_its_own_parts_purpose_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let seal = Seal::open(dir.path()).unwrap();
        let tag = seal.sign(Purpose::Journal, &[b"root", b"record"]);
        assert!(seal.verifies(Purpose::Journal, &[b"root", b"record"], &tag));
        assert!(!seal.verifies(Purpose::Certificate, &[b"root", b"record"], &tag));
        assert!(!seal.verifies(Purpose::Journal, &[b"roo", b"trecord"], &tag));
        assert!(!seal.verifies(Purpose::Journal, &[b"root", b"record!"], &tag));
        assert!(!seal.verifies(Purpose::Journal, &[b"root", b"record"], "zz"));
        assert!(!seal.verifies(Purpose::Journal, &[b"root", b"record"], &tag.to_uppercase()));
        assert!(!Seal::ephemeral().verifies(Purpose::Journal, &[b"root", b"record"], &tag));
        // The same key file, opened again, verifies it.
        let again = Seal::open(dir.path()).unwrap();
        assert!(again.verifies(Purpose::Journal, &[b"root", b"record"], &tag));
    }

    #[test]
    fn the_key_is_made_private_and_a_shared_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        Seal::open(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Seal::open(dir.path()).unwrap_err();
        assert!(e.to_string().contains("0644"), "{e}");
        assert!(e.to_string().contains(KEY_FILE), "{e}");
    }

    #[test]
    fn a_key_behind_a_link_or_of_another_user_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        Seal::open(elsewhere.path()).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join(KEY_FILE), dir.path().join(KEY_FILE))
            .unwrap();
        assert!(Seal::open(dir.path()).is_err());
        if effective_uid() == 0 {
            let owned = elsewhere.path().join(KEY_FILE);
            std::os::unix::fs::chown(&owned, Some(65534), None).unwrap();
            let e = Seal::open(elsewhere.path()).unwrap_err();
            assert!(e.to_string().contains("belongs to user 65534"), "{e}");
        }
    }

    #[test]
    fn a_damaged_key_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, "not hex\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Seal::open(dir.path()).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not hex\n");
    }
}
