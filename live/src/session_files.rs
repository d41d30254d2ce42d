//! Every session file of one format that the tests hold: a plugin's own samples, and the live
//! tier's differential and corpus files of that format. The plugins' tests that must read every
//! such file alike two ways (spilled and in memory, streamed and whole) take their list here.

use std::path::{Path, PathBuf};

/// The files below `samples` (a plugin's sample folder, walked to any depth) and below the live
/// tier's `tests/differential/<format>` and `tests/corpus/<format>` that `keep` keeps, sorted.
pub fn session_files(samples: &Path, format: &str, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let live = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut folders = vec![
        samples.to_owned(),
        live.join("differential").join(format),
        live.join("corpus").join(format),
    ];
    let mut files = Vec::new();
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if keep(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether `path`'s extension is `extension`.
pub fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e == extension)
}

/// Each of `files` reads the same (`read` of the file and a spill threshold) with its ids
/// written out past each of `thresholds` as with all of them in memory (`usize::MAX`).
pub fn assert_alike_spilled_or_not<T: PartialEq + std::fmt::Debug>(
    files: &[PathBuf],
    thresholds: &[usize],
    read: impl Fn(&Path, usize) -> T,
) {
    for path in files {
        let in_memory = read(path, usize::MAX);
        for &threshold in thresholds {
            assert_eq!(
                read(path, threshold),
                in_memory,
                "{} spilled past {threshold}",
                path.display()
            );
        }
    }
}
