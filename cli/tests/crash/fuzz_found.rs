//! Every input a fuzz target once crashed on (`fuzz/regressions/<fuzz target>/`, minimised with
//! `cargo fuzz tmin`) is refused with an error that names the file, never a panic. See
//! docs/fuzzing.md.

use std::path::{Path, PathBuf};

use handoff_dialects::{Dialect, RenderOptions};
use handoff_host::Plugin;
use handoff_host::ReadFrom;

// `BUILTINS`: the plugins the `handoff` binary links, as build.rs lists them from Cargo.toml, so a
// new provider's regressions are read without a second list here.
include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

fn plugin_for(target: &str) -> Box<dyn Plugin> {
    BUILTINS
        .iter()
        .map(|make| make())
        .find(|p| p.manifest().target(target).is_some())
        .unwrap_or_else(|| panic!("no plugin offers {target}"))
}

/// A file name of the target's own shape, for readers that look at it.
fn file_name(target: &str) -> &'static str {
    match target {
        "claude-code" => "4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl",
        "codex" => "rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl",
        "pi" => "2026-11-30T00-41-56-911Z_01a229e6-bba6-74e0-b59d-5af60023ff26.jsonl",
        "gemini-cli" => "session-2026-11-30T00-42-d0a744dc.jsonl",
        "copilot-cli" => "events.jsonl",
        _ => "01a229e6-854b-7501-91aa-ee582218765e.json",
    }
}

fn regressions() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut found = Vec::new();
    for fuzz_target in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = fuzz_target.file_name().to_string_lossy().into_owned();
        for input in std::fs::read_dir(fuzz_target.path()).unwrap().flatten() {
            found.push((name.clone(), input.path()));
        }
    }
    found.sort();
    found
}

#[test]
fn inputs_that_once_crashed_a_reader_or_parser_are_refused_by_name() {
    let found = regressions();
    assert!(!found.is_empty(), "fuzz/regressions holds the inputs");
    let scratch = tempfile::tempdir().unwrap();
    for (fuzz_target, input) in found {
        let bytes = std::fs::read(&input).unwrap();
        let outcome = std::panic::catch_unwind(|| {
            if let Some(target) = fuzz_target.strip_prefix("read_") {
                let target = target.replace('_', "-");
                let file = scratch.path().join(file_name(&target));
                std::fs::write(&file, &bytes).unwrap();
                match plugin_for(&target)
                    .reader()
                    .read(ReadFrom::File(&target, &file))
                {
                    Ok(_) => None,
                    Err(e) => Some((e.to_string(), file)),
                }
            } else {
                let name = fuzz_target
                    .strip_prefix("parse_")
                    .unwrap()
                    .replace('_', "-");
                let dialect = Dialect::ALL.into_iter().find(|d| d.name() == name).unwrap();
                if let Ok(body) = serde_json::from_slice(&bytes) {
                    let _ = dialect.validate(&body);
                    if let Ok(parsed) = dialect.parse(&body) {
                        let _ = dialect.render_body(&parsed.transcript, &RenderOptions::default());
                    }
                }
                None
            }
        });
        let Ok(refusal) = outcome else {
            panic!("{fuzz_target} panics on {}", input.display());
        };
        if let Some((message, file)) = refusal {
            assert!(
                message.contains(&file.display().to_string()),
                "{fuzz_target} {}: the error names no file: {message}",
                input.display()
            );
        }
    }
}
