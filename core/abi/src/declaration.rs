//! The declaration static: what the loader reads before any plugin code runs.
//!
//! It is plain `#[repr(C)]` data with no abi_stable type in it, so a host can read it from any
//! shared library without trusting its layout checks: first the magic, then the declaration
//! version, and only when both match, the rest.

/// The exported symbol name of the declaration static.
pub const DECLARATION_SYMBOL: &str = "HANDOFF_PLUGIN_DECLARATION";

/// The first 16 bytes of every declaration.
pub const DECLARATION_MAGIC: [u8; 16] = *b"handoff-plugin\0\x01";

/// The layout version of [`PluginDeclaration`]. Bumped only with a new layout; the loader reads
/// nothing past this field of a declaration with another version.
pub const DECLARATION_VERSION: u32 = 1;

/// A string inside the declaration: a pointer to UTF-8 bytes with a length.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DeclStr {
    /// The first byte.
    pub ptr: *const u8,
    /// The number of bytes.
    pub len: usize,
}

impl DeclStr {
    /// Points at a `'static` string.
    pub const fn new(s: &'static str) -> Self {
        DeclStr {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// Reads the string back.
    ///
    /// # Safety
    ///
    /// `ptr` must point at `len` readable bytes that stay valid for `'a` (true for a declaration
    /// inside a loaded library that is never unloaded while borrowed).
    pub unsafe fn read<'a>(&self, field: &str) -> Result<&'a str, String> {
        const MAX: usize = 4096;
        if self.ptr.is_null() {
            return Err(format!("{field} is a null pointer"));
        }
        if self.len > MAX {
            return Err(format!(
                "{field} is {} bytes long (at most {MAX})",
                self.len
            ));
        }
        // SAFETY: the caller guarantees ptr/len describe live bytes.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        std::str::from_utf8(bytes).map_err(|e| format!("{field} is not UTF-8: {e}"))
    }
}

/// The declaration a plugin exports as [`DECLARATION_SYMBOL`]. The SDK's export macro fills it in;
/// nobody writes one by hand.
#[repr(C)]
#[derive(Debug)]
pub struct PluginDeclaration {
    /// Always [`DECLARATION_MAGIC`].
    pub magic: [u8; 16],
    /// Always [`DECLARATION_VERSION`] for this layout.
    pub declaration_version: u32,
    /// 1 when the plugin was built with `panic=unwind` (so `catch_unwind` can contain its panics).
    pub panic_unwind: u8,
    /// The plugin API versions it works with: a semver requirement such as `^1`.
    pub api_requirement: DeclStr,
    /// The `rustc --version` that built it.
    pub rustc_version: DeclStr,
    /// The plugin crate's name.
    pub name: DeclStr,
    /// The plugin crate's version.
    pub version: DeclStr,
}

// SAFETY: the declaration is immutable and every pointer in it points at 'static string data.
unsafe impl Sync for PluginDeclaration {}

/// A declaration read into owned, checked values.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Declaration {
    /// The plugin API requirement, e.g. `^1`.
    pub api_requirement: String,
    /// Whether it was built with `panic=unwind`.
    pub panic_unwind: bool,
    /// The rustc that built it.
    pub rustc_version: String,
    /// The plugin crate's name.
    pub name: String,
    /// The plugin crate's version.
    pub version: String,
}

impl PluginDeclaration {
    /// Reads and checks a declaration: magic, then version, then the strings.
    ///
    /// # Safety
    ///
    /// `raw` must point at a readable `PluginDeclaration`-sized value (for example the address of
    /// the exported symbol of a loaded library).
    pub unsafe fn read(raw: *const PluginDeclaration) -> Result<Declaration, String> {
        if raw.is_null() {
            return Err("the declaration symbol is null".into());
        }
        // SAFETY: the magic is the first field; the caller guarantees the memory is readable.
        let magic = unsafe { std::ptr::addr_of!((*raw).magic).read_unaligned() };
        if magic != DECLARATION_MAGIC {
            return Err("its declaration has the wrong magic".into());
        }
        // SAFETY: as above; the version follows the magic in every layout.
        let version = unsafe { std::ptr::addr_of!((*raw).declaration_version).read_unaligned() };
        if version != DECLARATION_VERSION {
            return Err(format!(
                "its declaration has layout version {version}; this host reads version {DECLARATION_VERSION}"
            ));
        }
        // SAFETY: magic and version match, so the whole layout is ours.
        let declaration = unsafe { &*raw };
        // SAFETY: the strings of a checked declaration point into the loaded library.
        unsafe {
            Ok(Declaration {
                api_requirement: declaration
                    .api_requirement
                    .read("api_requirement")?
                    .to_owned(),
                panic_unwind: declaration.panic_unwind == 1,
                rustc_version: declaration.rustc_version.read("rustc_version")?.to_owned(),
                name: declaration.name.read("name")?.to_owned(),
                version: declaration.version.read("version")?.to_owned(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static GOOD: PluginDeclaration = PluginDeclaration {
        magic: DECLARATION_MAGIC,
        declaration_version: DECLARATION_VERSION,
        panic_unwind: 1,
        api_requirement: DeclStr::new("^1"),
        rustc_version: DeclStr::new("rustc 1.95.0"),
        name: DeclStr::new("demo"),
        version: DeclStr::new("0.1.0"),
    };

    #[test]
    fn reads_a_good_declaration() {
        let d = unsafe { PluginDeclaration::read(&GOOD) }.unwrap();
        assert_eq!(d.api_requirement, "^1");
        assert!(d.panic_unwind);
        assert_eq!(d.name, "demo");
    }

    #[test]
    fn refuses_wrong_magic_and_version() {
        let bad_magic = PluginDeclaration {
            magic: [0; 16],
            ..GOOD
        };
        let e = unsafe { PluginDeclaration::read(&bad_magic) }.unwrap_err();
        assert!(e.contains("magic"), "{e}");
        let bad_version = PluginDeclaration {
            declaration_version: 7,
            ..GOOD
        };
        let e = unsafe { PluginDeclaration::read(&bad_version) }.unwrap_err();
        assert!(e.contains("layout version 7"), "{e}");
    }
}
