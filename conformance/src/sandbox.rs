//! A scratch store root for one check, and snapshots that prove what a plugin touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use handoff_host::StoreRoot;
use sha2::{Digest, Sha256};

/// A temporary directory holding the store root and a canary beside it.
pub struct Sandbox {
    dir: tempfile::TempDir,
    /// The store root handed to the plugin.
    pub root: StoreRoot,
}

const CANARY: &str = "outside-the-store-root.txt";

impl Sandbox {
    /// A fresh sandbox (under `parent` when given, else the system temp dir).
    pub fn new(parent: Option<&Path>) -> std::io::Result<Self> {
        let dir = match parent {
            Some(p) => tempfile::Builder::new()
                .prefix("conformance-")
                .tempdir_in(p)?,
            None => tempfile::Builder::new()
                .prefix("handoff-conformance-")
                .tempdir()?,
        };
        std::fs::write(dir.path().join(CANARY), b"a plugin must never touch this\n")?;
        let root = StoreRoot::new(dir.path().join("store"))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        std::fs::create_dir(root.path())?;
        Ok(Sandbox { dir, root })
    }

    /// Everything outside the store root that changed: must be empty.
    pub fn outside_changes(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for entry in std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name();
            if name != "store" && name != CANARY {
                problems.push(format!(
                    "wrote {} outside the store root",
                    entry.path().display()
                ));
            }
        }
        match std::fs::read(self.dir.path().join(CANARY)) {
            Ok(b) if b == b"a plugin must never touch this\n" => {}
            _ => problems.push("changed a file outside the store root".into()),
        }
        problems
    }
}

/// Every path under `dir` with the sha256 of its bytes (`None` for directories).
pub type Snapshot = BTreeMap<PathBuf, Option<String>>;

/// Takes a [`Snapshot`] of `dir`.
pub fn snapshot(dir: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

fn walk(dir: &Path, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.insert(path.clone(), None);
            walk(&path, out);
        } else {
            let hash = std::fs::read(&path)
                .map(|b| hex::encode(Sha256::digest(&b)))
                .unwrap_or_else(|e| format!("unreadable: {e}"));
            out.insert(path, Some(hash));
        }
    }
}

/// How `after` differs from `before`, one line per path, ignoring paths `ignore` accepts.
pub fn changes(before: &Snapshot, after: &Snapshot, ignore: impl Fn(&Path) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for (path, hash) in before {
        if ignore(path) {
            continue;
        }
        match after.get(path) {
            None => out.push(format!("removed {}", path.display())),
            Some(h) if h != hash => out.push(format!("changed {}", path.display())),
            _ => {}
        }
    }
    for path in after.keys() {
        if !ignore(path) && !before.contains_key(path) {
            out.push(format!("created {}", path.display()));
        }
    }
    out
}

/// Whether `path` is the suite's own bookkeeping (locks under `.handoff/`), which any write may
/// create.
pub fn is_bookkeeping(root: &StoreRoot, path: &Path) -> bool {
    path.strip_prefix(root.path())
        .is_ok_and(|rel| rel.starts_with(".handoff"))
}
