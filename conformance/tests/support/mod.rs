//! Building the plugin fixtures as real shared libraries.
//!
//! `cargo test` holds the lock of its own target directory while tests run, so the fixtures are
//! built by a nested `cargo build -p <crate> --lib` into their own target directory
//! (`<target>/fixtures`). Building only the selected packages keeps handoff-sdk's `static`
//! feature (which the test binaries enable) out of these libraries. Cargo's own lock serialises
//! concurrent test binaries; within one binary a mutex builds each fixture once.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("conformance/ has a parent")
        .to_owned()
}

fn fixture_target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("fixtures"),
        None => workspace_root().join("target").join("fixtures"),
    }
}

static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

/// The shared library of `package` (a workspace member), built on first use.
pub fn plugin(package: &str) -> PathBuf {
    build(package, &[], false)
}

/// The same, built with the release profile (for benchmarks against release-built host code).
pub fn plugin_release(package: &str) -> PathBuf {
    build(package, &[], true)
}

/// The panic=abort fixture: only the plugin crate itself is compiled with `-C panic=abort`
/// (`cargo rustc`), which is exactly what the export macro's `cfg!(panic = "unwind")` sees; its
/// dependencies are reused from the ordinary fixture build.
pub fn panic_abort_plugin() -> PathBuf {
    build("handoff-fixture-panic-abort", &["-C", "panic=abort"], false)
}

fn build(package: &str, rustc_args: &[&str], release: bool) -> PathBuf {
    let profile = if release { "release" } else { "debug" };
    let key = format!("{package}/{profile}");
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let cache = built.get_or_insert_with(HashMap::new);
    if let Some(path) = cache.get(&key) {
        return path.clone();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = fixture_target_dir();
    let mut command = Command::new(cargo);
    command.current_dir(workspace_root());
    command.arg(if rustc_args.is_empty() {
        "build"
    } else {
        "rustc"
    });
    command.args(["--quiet", "-p", package, "--lib", "--target-dir"]);
    command.arg(&target_dir);
    if release {
        command.arg("--release");
    }
    if !rustc_args.is_empty() {
        // Everything after `--` goes to rustc for this crate only.
        command.arg("--").args(rustc_args);
    }
    command
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {package}: {e}"));
    assert!(
        output.status.success(),
        "building fixture {package} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = target_dir
        .join(profile)
        .join(format!("lib{}.so", package.replace('-', "_")));
    assert!(path.exists(), "{} was not built", path.display());
    cache.insert(key, path.clone());
    path
}

/// A copy of `library` at `dir/name` (tests change copies, never the built file).
pub fn copy_to(library: &Path, dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::copy(library, &path).unwrap();
    path
}
