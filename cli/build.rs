//! Links every provider plugin this crate depends on as a built-in.
//!
//! A plugin crate registers itself through `inventory`, but the linker drops a crate nothing
//! names. Naming each one by hand would be a second place to touch when a provider is added, so
//! this script names every dependency whose path is under `plugins/`: adding a provider to the
//! `handoff` binary is its one line in `[dependencies]`.

use std::fmt::Write as _;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").expect("cli/Cargo.toml is readable");
    let mut uses = String::new();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        let Some((name, spec)) = line.split_once('=') else {
            continue;
        };
        if in_dependencies && spec.contains("\"../plugins/") {
            let crate_name = name.trim().replace('-', "_");
            writeln!(uses, "use {crate_name} as _;").unwrap();
        }
    }
    assert!(
        !uses.is_empty(),
        "cli/Cargo.toml names no plugin under ../plugins/"
    );
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("builtins.rs");
    std::fs::write(out, uses).expect("OUT_DIR is writable");
}
