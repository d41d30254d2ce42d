//! Every provider folder is wired the same way, and the facts each plugin declares agree with the
//! repository: a new folder under `plugins/` is built (workspace glob), linked into `handoff`
//! (one `[dependencies]` line), tested offline, live and as a shared library (its
//! `tests/conformance.rs`), and its CLI pinned once (`scripts/cli-versions.env`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use handoff_host::{Plugin, TargetKind};

// The same built-ins as the `handoff` binary (build.rs lists every plugin dependency).
include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn builtins() -> Vec<Box<dyn Plugin>> {
    BUILTINS.iter().map(|make| make()).collect()
}

/// `scripts/cli-versions.env` as NAME -> (package, version, program), read the way the live tier
/// reads it; a pin missing its version or program is an error here.
fn pins() -> BTreeMap<String, (String, String, String)> {
    pinned()
        .into_iter()
        .map(|(name, p)| (name, (p.package, p.version, p.program)))
        .collect()
}

fn pinned() -> BTreeMap<String, handoff_live::cli::PinnedCli> {
    let pins: BTreeMap<_, _> = handoff_live::cli::pinned_clis()
        .into_iter()
        .map(|p| (p.name.clone(), p))
        .collect();
    let declared = handoff_live::cli::PINNED_VERSIONS_FILE
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains("_PACKAGE="))
        .count();
    assert_eq!(
        pins.len(),
        declared,
        "cli-versions.env: a pin lacks its _VERSION or _PROGRAM"
    );
    pins
}

#[test]
fn every_live_recipe_is_pinned_once_in_cli_versions_env() {
    let pins = pins();
    let mut used = Vec::new();
    for plugin in builtins() {
        for target in plugin.manifest().targets {
            let Some(recipe) = &target.live else { continue };
            let (name, pin) = pins
                .iter()
                .find(|(_, (_, _, program))| program == &recipe.program)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: no pin for program {:?} in scripts/cli-versions.env",
                        target.name, recipe.program
                    )
                });
            assert_eq!(
                (&pin.0, &pin.1),
                (&recipe.npm_package, &recipe.version),
                "{}: the plugin's recipe and scripts/cli-versions.env ({name}) disagree",
                target.name
            );
            // The verified range: from the pin to its newest end (the pin alone without one).
            let pin = &pinned()[name];
            let newest = pin.newest_version.as_ref().unwrap_or(&pin.version);
            let range = recipe.verified_range();
            assert_eq!(
                (&range.oldest, &range.newest),
                (&pin.version, newest),
                "{}: the recipe's verified range and scripts/cli-versions.env ({name}) disagree",
                target.name
            );
            used.push(name.clone());
        }
    }
    for name in pins.keys() {
        assert!(
            used.contains(name),
            "cli-versions.env pins {name}, which no plugin's recipe uses"
        );
    }
}

#[test]
fn every_target_declares_what_the_host_needs() {
    for plugin in builtins() {
        for target in plugin.manifest().targets {
            assert!(
                target.default_root.is_some(),
                "{}: no default store root",
                target.name
            );
            match target.kind {
                TargetKind::Cli => assert!(
                    target.live.is_some(),
                    "{}: a CLI target without a live recipe",
                    target.name
                ),
                TargetKind::Api => assert!(
                    target.dialect.is_some(),
                    "{}: an API target without a dialect",
                    target.name
                ),
            }
        }
    }
}

#[test]
fn every_provider_folder_is_built_in_tested_and_exported() {
    let cli_manifest = std::fs::read_to_string(repo().join("cli/Cargo.toml")).unwrap();
    let names: Vec<String> = builtins().iter().map(|p| p.manifest().name).collect();
    let mut folders = 0;
    for entry in std::fs::read_dir(repo().join("plugins")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("Cargo.toml").is_file() {
            continue;
        }
        folders += 1;
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let crate_manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            crate_manifest.contains(&format!("name = \"handoff-{name}\"")),
            "plugins/{name}: the crate must be handoff-{name}"
        );
        let so = std::fs::read_to_string(dir.join("so/Cargo.toml"))
            .unwrap_or_else(|e| panic!("plugins/{name}/so/Cargo.toml: {e}"));
        assert!(
            so.contains(&format!("name = \"handoff_plugin_{name}\"")) && so.contains("cdylib"),
            "plugins/{name}/so must build libhandoff_plugin_{name}.so"
        );
        assert!(
            cli_manifest.contains(&format!(
                "handoff-{name} = {{ path = \"../plugins/{name}\" }}"
            )),
            "plugins/{name} is not a built-in of handoff: add it to cli/Cargo.toml [dependencies]"
        );
        assert!(
            names.contains(&name),
            "plugins/{name}: no linked plugin is named {name:?} (linked: {names:?})"
        );
        let tests = std::fs::read_to_string(dir.join("tests/conformance.rs"))
            .unwrap_or_else(|e| panic!("plugins/{name}/tests/conformance.rs: {e}"));
        assert!(
            tests.contains("plugin_tests!"),
            "plugins/{name}/tests/conformance.rs must run handoff_live::plugin_tests!"
        );
    }
    assert!(folders >= 2, "found {folders} provider folders");
}
