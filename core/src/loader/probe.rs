//! Step 1: read the declaration before any plugin code runs.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::{LoadError, PluginFile};
use crate::abi::declaration::{Declaration, PluginDeclaration, DECLARATION_SYMBOL};
use crate::PLUGIN_API_VERSION;

/// A plugin file whose declaration was read and accepted.
#[derive(Debug)]
pub struct Probe {
    /// What the file is.
    pub file: PluginFile,
    /// A private copy of exactly the bytes that were hashed; the loader loads this copy.
    pub(super) copy: PrivateCopy,
}

/// Reads, hashes and checks the plugin at `path` without calling any of its functions.
pub fn probe(path: &Path) -> Result<Probe, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Unreadable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
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
    let copy = PrivateCopy::write(path, &bytes)?;
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

/// A private copy of the hashed bytes, so the library that is opened is exactly what was hashed
/// (and a rebuilt file at the same path is never confused with the one already open).
#[derive(Debug)]
pub(super) struct PrivateCopy {
    file: tempfile::TempPath,
}

impl PrivateCopy {
    pub(super) fn write(original: &Path, bytes: &[u8]) -> Result<Self, LoadError> {
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
        Ok(PrivateCopy {
            file: file.into_temp_path(),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.file
    }
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
