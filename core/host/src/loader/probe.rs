//! Step 1: read the declaration before any plugin code runs.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{LoadError, PluginFile};
use handoff_abi::declaration::{Declaration, PluginDeclaration, DECLARATION_SYMBOL};
use handoff_capability::PLUGIN_API_VERSION;

/// A plugin file whose declaration was read and accepted.
#[derive(Debug)]
pub struct Probe {
    /// What the file is.
    pub file: PluginFile,
    /// A sealed copy of exactly the bytes that were hashed; the loader maps this copy.
    pub(super) copy: SealedCopy,
}

/// Reads, hashes and checks the plugin at `path` without calling any of its functions.
pub fn probe(path: &Path) -> Result<Probe, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Unreadable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    probe_bytes(path, bytes)
}

/// [`probe`] of bytes already read from `path` (and hashed, looked up, by the caller): the file
/// is not read again, so the library that is mapped is exactly these bytes, whatever happens to
/// the file meanwhile.
pub fn probe_bytes(path: &Path, bytes: Vec<u8>) -> Result<Probe, LoadError> {
    if !bytes.starts_with(b"\x7fELF") {
        return Err(LoadError::NotElf {
            path: path.to_owned(),
        });
    }
    if let Err(reason) = check_elf_extent(&bytes) {
        return Err(LoadError::Open {
            path: path.to_owned(),
            message: reason,
        });
    }
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let copy = SealedCopy::write(path, &bytes)?;
    drop(bytes);
    let declaration = read_declaration(path, copy.path())?;
    check_declaration(path, &declaration)?;
    Ok(Probe {
        file: PluginFile {
            path: path.to_owned(),
            sha256,
            declaration,
        },
        copy,
    })
}

/// Opens the library with libloading and reads its declaration static.
fn read_declaration(path: &Path, copy: &Path) -> Result<Declaration, LoadError> {
    // SAFETY: opening a library runs its ELF initialisers. handoff plugins have none (the SDK
    // registers built-ins without initialisers); for a foreign library this is the same trust a user
    // gives any library they ask a program to open.
    let library = unsafe { libloading::Library::new(copy) }.map_err(|e| LoadError::Open {
        path: path.to_owned(),
        message: one_line(&e.to_string()).replace(&copy.display().to_string(), "the file"),
    })?;
    let symbol = format!("{DECLARATION_SYMBOL}\0");
    // SAFETY: the address of a data symbol; nothing is called.
    let address = unsafe { library.get::<*const PluginDeclaration>(symbol.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| LoadError::NotAPlugin {
            path: path.to_owned(),
            reason: format!("it exports no {DECLARATION_SYMBOL}"),
        })?;
    // SAFETY: the symbol names a static in the library, which stays loaded while `library` lives;
    // `read` checks the magic before trusting anything else and copies everything out.
    let declaration = unsafe { PluginDeclaration::read(address) };
    drop(library);
    declaration.map_err(|reason| LoadError::NotAPlugin {
        path: path.to_owned(),
        reason,
    })
}

/// The host-side rules: API requirement and panic strategy.
fn check_declaration(path: &Path, declaration: &Declaration) -> Result<(), LoadError> {
    let host = semver::Version::parse(PLUGIN_API_VERSION).expect("PLUGIN_API_VERSION is semver");
    let requirement = semver::VersionReq::parse(&declaration.api_requirement).map_err(|e| {
        LoadError::NotAPlugin {
            path: path.to_owned(),
            reason: format!(
                "its API requirement {:?} is not a semver requirement: {e}",
                declaration.api_requirement
            ),
        }
    })?;
    if !requirement.matches(&host) {
        return Err(LoadError::ApiMismatch {
            path: path.to_owned(),
            name: declaration.name.clone(),
            version: declaration.version.clone(),
            requirement: declaration.api_requirement.clone(),
            host: PLUGIN_API_VERSION.to_owned(),
        });
    }
    if !declaration.panic_unwind {
        return Err(LoadError::PanicAbort {
            path: path.to_owned(),
            name: declaration.name.clone(),
            version: declaration.version.clone(),
        });
    }
    Ok(())
}

/// A copy of the hashed bytes that nobody can change, so the library that is opened is exactly
/// what was hashed (and a rebuilt file at the same path is never confused with the one already
/// open).
///
/// On Linux it is a sealed memfd (`memfd_create`, then `F_SEAL_WRITE | F_SEAL_SHRINK |
/// F_SEAL_GROW | F_SEAL_SEAL`: not even this process can change it) opened by the dynamic loader
/// as `/proc/self/fd/<n>`. Its descriptor is never closed: the loader knows a library by the name
/// it was opened by, so that name must never name another file while this process lives.
/// Elsewhere (no memfd, no /proc) it is a private temp file, written, synced and loaded by path.
#[derive(Debug)]
pub(super) struct SealedCopy {
    path: PathBuf,
    _temp: Option<tempfile::TempPath>,
}

impl SealedCopy {
    pub(super) fn write(original: &Path, bytes: &[u8]) -> Result<Self, LoadError> {
        match sealed_memfd(bytes) {
            Ok(path) => Ok(SealedCopy { path, _temp: None }),
            Err(e) => {
                tracing::debug!("no sealed memfd ({e}); loading a private temp copy");
                SealedCopy::temp_file(original, bytes)
            }
        }
    }

    fn temp_file(original: &Path, bytes: &[u8]) -> Result<Self, LoadError> {
        let unreadable = |e: std::io::Error| LoadError::Unreadable {
            path: original.to_owned(),
            message: format!("cannot make a private copy to load: {e}"),
        };
        let mut file = tempfile::Builder::new()
            .prefix("handoff-plugin-")
            .suffix(".so")
            .tempfile()
            .map_err(unreadable)?;
        std::io::Write::write_all(&mut file, bytes).map_err(unreadable)?;
        file.as_file().sync_all().map_err(unreadable)?;
        let temp = file.into_temp_path();
        Ok(SealedCopy {
            path: temp.to_path_buf(),
            _temp: Some(temp),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes `bytes` to a new memfd, seals it against every change, and returns the path the
/// dynamic loader opens it by. The descriptor is deliberately leaked (see [`SealedCopy`]).
#[cfg(target_os = "linux")]
fn sealed_memfd(bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

    let name = c"handoff-plugin";
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: a valid NUL-terminated name; the result is checked.
    let mut fd = unsafe { libc::memfd_create(name.as_ptr(), base | libc::MFD_EXEC) };
    if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // Kernels before 6.3 know no MFD_EXEC (and make every memfd executable).
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(name.as_ptr(), base) };
    }
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(bytes)?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor this function owns.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let path = PathBuf::from(format!("/proc/self/fd/{fd}"));
    if !path.exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "/proc is not mounted",
        ));
    }
    // Leaked on purpose: the name must keep naming this copy for the life of the process.
    let _ = file.into_raw_fd();
    Ok(path)
}

#[cfg(not(target_os = "linux"))]
fn sealed_memfd(_bytes: &[u8]) -> std::io::Result<PathBuf> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "memfd is Linux only",
    ))
}

/// Checks that every loadable segment and the section headers of a 64-bit little-endian ELF file
/// lie inside the file. The dynamic loader maps segments without that check, so a truncated
/// library would crash the host with SIGBUS instead of being refused.
fn check_elf_extent(bytes: &[u8]) -> Result<(), String> {
    const PT_LOAD: u32 = 1;
    let u16_at = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
    };
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        bytes
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    // EI_CLASS 2 = 64-bit, EI_DATA 1 = little-endian; other layouts are left to the loader.
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Ok(());
    }
    let truncated = |what: &str| format!("the ELF file is truncated ({what} lies past its end)");
    let len = bytes.len() as u64;
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return Err(truncated("the ELF header"));
    };
    let (Some(shoff), Some(shentsize), Some(shnum)) = (u64_at(0x28), u16_at(0x3A), u16_at(0x3C))
    else {
        return Err(truncated("the ELF header"));
    };
    let end = |offset: u64, size: u64| offset.checked_add(size).filter(|end| *end <= len);
    if end(phoff, phentsize.saturating_mul(phnum)).is_none() {
        return Err(truncated("the program header table"));
    }
    if shoff != 0 && end(shoff, shentsize.saturating_mul(shnum)).is_none() {
        return Err(truncated("the section header table"));
    }
    for index in 0..phnum {
        let header = (phoff + index * phentsize) as usize;
        let (Some(kind), Some(offset), Some(filesz)) =
            (u32_at(header), u64_at(header + 0x08), u64_at(header + 0x20))
        else {
            return Err(truncated("a program header"));
        };
        if kind == PT_LOAD && end(offset, filesz).is_none() {
            return Err(truncated(&format!("loadable segment {index}")));
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_sealed_copy_cannot_be_changed_even_by_this_process() {
        let path = sealed_memfd(b"\x7fELF exactly these bytes").unwrap();
        assert!(path.starts_with("/proc/self/fd"));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"\x7fELF exactly these bytes"
        );
        let err = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"evil"))
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"\x7fELF exactly these bytes"
        );
    }
}
