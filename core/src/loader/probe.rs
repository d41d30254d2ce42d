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
    // keeps inventory out of cdylib builds); for a foreign library this is the same trust a user
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
    let requirement =
        semver::VersionReq::parse(&declaration.api_requirement).map_err(|e| {
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

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
