//! The working directory a Node.js CLI records for a session (`process.cwd()`), and the folder
//! name some make of it.

use std::path::{Component, Path, PathBuf};

use handoff_capability::PluginError;

/// The working directory as a Node.js CLI sees it, `process.cwd()`: the physical directory. An
/// existing directory is canonicalised (symbolic links resolved); one that does not exist here
/// is normalised lexically (`.` and `..` taken out). It must be absolute and UTF-8; `cli` names
/// the CLI in the error (e.g. `Gemini CLI`), which keys its sessions by it.
pub fn physical_cwd(cwd: &str, cli: &str) -> Result<String, PluginError> {
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Err(PluginError::InvalidTranscript(format!(
            "the working directory {cwd:?} is not absolute; {cli} keys sessions by the absolute directory"
        )));
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let mut out = PathBuf::from("/");
        for c in path.components() {
            match c {
                Component::Normal(n) => out.push(n),
                Component::ParentDir => {
                    out.pop();
                }
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
        out
    });
    real.to_str().map(str::to_owned).ok_or_else(|| {
        PluginError::InvalidTranscript(format!("the working directory {cwd:?} is not UTF-8"))
    })
}

/// `cwd` with every UTF-16 code unit that is not an ASCII letter or digit replaced by `-` (a
/// character outside the BMP gives two): the project folder's name that Claude Code and Qwen
/// Code (`sanitizeCwd`) make of a working directory, `/home/dev/my.proj` → `-home-dev-my-proj`.
pub fn dashed_cwd(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_directory_is_normalised_an_existing_one_resolved_a_relative_one_refused() {
        assert_eq!(
            physical_cwd("/no/such/dir/../x/./y/", "X").unwrap(),
            "/no/such/x/y"
        );
        let err = physical_cwd("relative/dir", "Qwen Code").unwrap_err();
        assert!(err.to_string().contains("Qwen Code"), "{err}");
        let dir = std::env::temp_dir();
        let real = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(
            physical_cwd(dir.to_str().unwrap(), "X").unwrap(),
            real.to_str().unwrap()
        );
    }

    #[test]
    fn each_utf16_unit_that_is_no_ascii_letter_or_digit_becomes_a_dash() {
        assert_eq!(
            dashed_cwd("/tmp/qwen-scratch/home/proj"),
            "-tmp-qwen-scratch-home-proj"
        );
        assert_eq!(dashed_cwd("/a_b.c/é/😀"), "-a-b-c-----");
    }
}
