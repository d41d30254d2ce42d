//! Tiny C shared libraries for loader tests, built with the system C compiler: one plain, one
//! whose ELF initialiser (a constructor, run by the dynamic loader before any symbol is looked up)
//! leaves a marker file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The marker the evil library's initialiser writes, for libraries built into `dir`.
pub(crate) fn evil_marker(dir: &Path) -> PathBuf {
    dir.join("evil-initialiser-ran")
}

/// Builds `good.so` and `evil.so` in `dir`; `None` (with a note) when there is no C compiler.
pub(crate) fn build(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let marker = evil_marker(dir);
    let good = compile(dir, "good", "int handoff_test_good(void) { return 1; }\n")?;
    let evil_source = format!(
        "#include <stdio.h>\n\
         __attribute__((constructor)) static void evil(void) {{\n\
           FILE *f = fopen({:?}, \"w\"); if (f) {{ fputs(\"ran\", f); fclose(f); }}\n\
         }}\n\
         int handoff_test_evil(void) {{ return 2; }}\n",
        marker.display().to_string()
    );
    let evil = compile(dir, "evil", &evil_source)?;
    Some((good, evil))
}

fn compile(dir: &Path, name: &str, source: &str) -> Option<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    let so = dir.join(format!("{name}.so"));
    std::fs::write(&c, source).ok()?;
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    match Command::new(&compiler)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
    {
        Ok(status) if status.success() => Some(so),
        other => {
            eprintln!("SKIP: cannot build a test library with {compiler}: {other:?}");
            None
        }
    }
}
