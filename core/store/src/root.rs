use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why [`StoreRoot::create_file`] made no file (and left nothing behind).
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The path was refused.
    #[error(transparent)]
    Path(#[from] PathError),
    /// Making its directories or writing it failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory or file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Why a path or name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum PathError {
    /// A name (id, file name, directory name) is not a single safe path component.
    #[error("{what} {value:?} is not a valid name: {reason}")]
    BadName {
        /// What the name is (`session id`, `file name`, …).
        what: String,
        /// The value refused.
        value: String,
        /// Why.
        reason: String,
    },
    /// A path is outside the store root.
    #[error("{} is outside the store root {}", path.display(), root.display())]
    Outside {
        /// The path.
        path: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// A working directory a session would carry is not a clean absolute path.
    #[error("working directory {value:?} is refused: {reason}")]
    BadCwd {
        /// The value refused.
        value: String,
        /// Why.
        reason: String,
    },
    /// The store root itself is unusable.
    #[error("store root {}: {reason}", root.display())]
    BadRoot {
        /// The root.
        root: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Checks that `value` is one safe path component: not empty, not `.` or `..`, no separator, no
/// NUL, no control characters.
pub fn validate_component(what: &str, value: &str) -> Result<(), PathError> {
    let bad = |reason: &str| PathError::BadName {
        what: what.to_owned(),
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    if value.is_empty() {
        return Err(bad("it is empty"));
    }
    if value == "." || value == ".." {
        return Err(bad("it names a directory, not an entry"));
    }
    if value.contains('/') || value.contains('\\') {
        return Err(bad("it contains a path separator"));
    }
    if value.contains('\0') {
        return Err(bad("it contains NUL"));
    }
    if value.chars().any(char::is_control) {
        return Err(bad("it contains a control character"));
    }
    if value.len() > 255 {
        return Err(bad("it is longer than 255 bytes"));
    }
    Ok(())
}

/// Checks a working directory a new session is to carry (every target: the continuation engine
/// checks it once, before any plugin sees it): not empty, no NUL or control character, absolute
/// (`/…`, or a Windows drive path `C:\…` for a session that came from Windows), and no `.` or `..`
/// component, so a resume plan's `cd` goes exactly where the session says.
pub fn validate_cwd(value: &str) -> Result<(), PathError> {
    let bad = |reason: &str| PathError::BadCwd {
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    if value.is_empty() {
        return Err(bad("it is empty"));
    }
    if value.contains('\0') {
        return Err(bad("it contains NUL"));
    }
    if value.chars().any(char::is_control) {
        return Err(bad("it contains a control character"));
    }
    let bytes = value.as_bytes();
    let windows = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes[2] == b'\\' || bytes[2] == b'/');
    if !value.starts_with('/') && !windows {
        return Err(bad("it must be an absolute path"));
    }
    let separators: &[char] = if windows { &['/', '\\'] } else { &['/'] };
    if value
        .split(separators)
        .any(|component| component == "." || component == "..")
    {
        return Err(bad("it must not contain . or .. components"));
    }
    Ok(())
}

/// The directory a plugin is handed; every path it touches is inside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreRoot {
    path: PathBuf,
}

impl StoreRoot {
    /// A store root at `path`, which must be absolute and, if it exists, a directory. It is created
    /// lazily by the first write.
    pub fn new(path: impl Into<PathBuf>) -> Result<Self, PathError> {
        let path = path.into();
        let bad = |reason: &str| PathError::BadRoot {
            root: path.clone(),
            reason: reason.to_owned(),
        };
        if !path.is_absolute() {
            return Err(bad("it must be an absolute path"));
        }
        if path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        {
            return Err(bad("it must not contain . or .. components"));
        }
        match std::fs::metadata(&path) {
            Ok(m) if !m.is_dir() => return Err(bad("it exists and is not a directory")),
            _ => {}
        }
        Ok(StoreRoot { path })
    }

    /// The root directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `components` under the root, each validated as one safe name.
    pub fn join(&self, components: &[&str]) -> Result<PathBuf, PathError> {
        let mut path = self.path.clone();
        for c in components {
            validate_component("path component", c)?;
            path.push(c);
        }
        Ok(path)
    }

    /// Checks that `path` is inside the root (lexically: no `..`, under the root prefix).
    pub fn check_inside(&self, path: &Path) -> Result<(), PathError> {
        let lexically_clean = !path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir));
        if lexically_clean && path.starts_with(&self.path) && path != self.path {
            Ok(())
        } else {
            Err(PathError::Outside {
                path: path.to_owned(),
                root: self.path.clone(),
            })
        }
    }

    /// Creates the directories of `dir` (which must be inside the root), returning the ones that
    /// did not exist before, outermost first, so a failed write can remove exactly those.
    pub fn create_dirs(&self, dir: &Path) -> Result<Vec<PathBuf>, std::io::Error> {
        self.check_inside(dir)
            .or_else(|e| if dir == self.path { Ok(()) } else { Err(e) })
            .map_err(std::io::Error::other)?;
        let mut missing = Vec::new();
        let mut cursor = Some(dir);
        while let Some(d) = cursor {
            if d.exists() {
                break;
            }
            missing.push(d.to_owned());
            cursor = d.parent();
        }
        missing.reverse();
        std::fs::create_dir_all(dir)?;
        Ok(missing)
    }

    /// Creates the new file `path` (inside the root) whole or not at all: its missing directories
    /// are made, the bytes `write` produces go in through [`super::atomic::create_new`], and on any
    /// failure the directories this call made are removed again, so nothing is left behind.
    pub fn create_file(
        &self,
        path: &Path,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), CreateError> {
        self.check_inside(path)?;
        let dir = path.parent().ok_or_else(|| PathError::Outside {
            path: path.to_owned(),
            root: self.path.clone(),
        })?;
        let created = self.create_dirs(dir).map_err(|source| CreateError::Io {
            path: dir.to_owned(),
            source,
        })?;
        super::atomic::create_new(path, write).map_err(|source| {
            self.remove_created_dirs(&created);
            CreateError::Io {
                path: path.to_owned(),
                source,
            }
        })
    }

    /// Removes the directories `created` (as returned by [`StoreRoot::create_dirs`]) if they are
    /// empty, innermost first. Used to leave nothing behind after a failed write.
    pub fn remove_created_dirs(&self, created: &[PathBuf]) {
        for dir in created.iter().rev() {
            if self.check_inside(dir).is_ok() || dir == &self.path {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_traversal_separators_and_nul() {
        for bad in ["", ".", "..", "a/b", "a\\b", "a\0b", "line\nbreak"] {
            assert!(validate_component("id", bad).is_err(), "{bad:?}");
        }
        validate_component("id", "01a229e6-854b-7501-91aa-ee582218765e").unwrap();
    }

    #[test]
    fn a_cwd_is_a_clean_absolute_path() {
        for good in ["/", "/home/me/my proj", "C:\\Users\\me", "d:/work"] {
            validate_cwd(good).unwrap();
        }
        for (bad, why) in [
            ("", "empty"),
            ("../../etc", "absolute"),
            ("proj", "absolute"),
            ("/home/../etc", ". or .."),
            ("/home/./me", ". or .."),
            ("C:\\a\\..\\b", ". or .."),
            ("/a\0b", "NUL"),
            ("/a\nb", "control"),
        ] {
            let err = validate_cwd(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    #[test]
    fn root_must_be_absolute_and_a_directory() {
        assert!(StoreRoot::new("relative/dir").is_err());
        assert!(StoreRoot::new("/tmp/../etc").is_err());
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = StoreRoot::new(file.path()).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn join_and_check_inside() {
        let root = StoreRoot::new("/srv/store").unwrap();
        assert_eq!(
            root.join(&["projects", "x.jsonl"]).unwrap(),
            PathBuf::from("/srv/store/projects/x.jsonl")
        );
        assert!(root.join(&["..", "etc"]).is_err());
        assert!(root.check_inside(Path::new("/srv/store/a")).is_ok());
        assert!(root.check_inside(Path::new("/srv/store/../a")).is_err());
        assert!(root.check_inside(Path::new("/srv/storefront/a")).is_err());
        assert!(root.check_inside(Path::new("/srv/store")).is_err());
    }

    #[test]
    fn create_file_leaves_nothing_behind_on_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let path = tmp.path().join("a/b/s.jsonl");
        let err = root.create_file(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(err.unwrap_err().to_string().contains("disk full"));
        assert!(!tmp.path().join("a").exists());
        root.create_file(&path, |w| w.write_all(b"whole\n"))
            .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole\n");
        assert!(root
            .create_file(&tmp.path().join("../x"), |_| Ok(()))
            .is_err());
    }

    #[test]
    fn create_dirs_reports_only_new_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        std::fs::create_dir(tmp.path().join("a")).unwrap();
        let made = root.create_dirs(&tmp.path().join("a/b/c")).unwrap();
        assert_eq!(made, vec![tmp.path().join("a/b"), tmp.path().join("a/b/c")]);
        root.remove_created_dirs(&made);
        assert!(tmp.path().join("a").exists());
        assert!(!tmp.path().join("a/b").exists());
    }
}
