//! The plugin libraries the tests load.
//!
//! Every plugin and fixture is a `cdylib` dev-dependency of this crate, so the `cargo test` (or
//! `cargo bench`) that builds these tests has already built its `.so` beside them, in the same
//! profile: a test finds it next to its own executable and never runs cargo itself. The one
//! exception is the panic=abort fixture, which needs its own rustc flags (see
//! [`panic_abort_plugin`]).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use handoff_host::ReadFrom;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("live/ has a parent")
        .to_owned()
}

/// The `deps/` folder of the profile that built this test executable.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    exe.parent()
        .expect("the executable is in a folder")
        .to_owned()
}

/// The shared library of `package`, a `cdylib` dev-dependency of this crate, built with the tests.
pub fn plugin(package: &str) -> PathBuf {
    let file = format!("lib{}.so", package.replace('-', "_"));
    let deps = deps_dir();
    let path = [deps.join(&file), deps.parent().unwrap().join(&file)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "{file} is not in {}: add {package} to the dev-dependencies of handoff-conformance",
                deps.display()
            )
        });
    path
}

/// The plugin library of `package` (see [`plugin`]), loaded.
pub fn load(package: &str) -> handoff_host::loader::LoadedPlugin {
    handoff_host::loader::load(&plugin(package)).unwrap_or_else(|e| panic!("{package}: {e}"))
}

/// [`load`], checked to offer the newest capability ids (v5's writer and reader, v2's resume).
pub fn load_newest(package: &str) -> handoff_host::loader::LoadedPlugin {
    use handoff_abi::{READER_V5, RESUME_V2, WRITER_V5};
    let loaded = load(package);
    assert_eq!(
        loaded.capabilities(),
        vec![WRITER_V5, READER_V5, RESUME_V2],
        "{package}"
    );
    loaded
}

/// The same, for a benchmark (built with the bench profile beside it).
pub fn plugin_release(package: &str) -> PathBuf {
    plugin(package)
}

fn fixture_target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("fixtures"),
        None => workspace_root().join("target").join("fixtures"),
    }
}

static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The panic=abort fixture: only the plugin crate itself is compiled with `-C panic=abort`
/// (`cargo rustc`, which is exactly what the export macro's `cfg!(panic = "unwind")` sees), into
/// its own target directory: `cargo test` holds the lock of its own while tests run. A mutex
/// builds it once per test binary; cargo's own lock serialises test binaries.
pub fn panic_abort_plugin() -> PathBuf {
    let package = "handoff-fixture-panic-abort";
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.as_ref() {
        return path.clone();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = fixture_target_dir();
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["rustc", "--quiet", "-p", package, "--lib", "--target-dir"])
        .arg(&target_dir)
        .args(["--", "-C", "panic=abort"])
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {package}: {e}"));
    assert!(
        output.status.success(),
        "building fixture {package} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = target_dir
        .join("debug")
        .join(format!("lib{}.so", package.replace('-', "_")));
    assert!(path.exists(), "{} was not built", path.display());
    *built = Some(path.clone());
    path
}

/// A copy of `library` at `dir/name` (tests change copies, never the built file).
pub fn copy_to(library: &Path, dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::copy(library, &path).unwrap();
    path
}

/// A conversation of `turns` user / assistant pairs, ~1 KB each: many 64 KiB batches.
pub fn long_transcript(turns: usize) -> handoff_host::Transcript {
    long_conversation(turns, false)
}

/// [`long_transcript`] with a tool call in each answer and its result after it.
pub fn long_transcript_with_calls(turns: usize) -> handoff_host::Transcript {
    long_conversation(turns, true)
}

fn long_conversation(turns: usize, calls: bool) -> handoff_host::Transcript {
    use handoff_host::{AssistantPart, Body, Event, Part, Timestamp, ToolCall, Transcript};
    let mut events = Vec::new();
    for i in 0..turns {
        let t = Timestamp::from_millis(1_700_000_000_000 + 2_000 * i as i64);
        events.push(Event::new(
            format!("u{i}"),
            t,
            Body::User {
                content: vec![Part::text(format!("turn {i}: {}", "x".repeat(1_000)))],
            },
        ));
        let mut answer = vec![AssistantPart::text(format!("answer {i}"))];
        if calls {
            answer.push(AssistantPart::ToolCall(ToolCall::new(
                format!("call_{i}"),
                "shell",
                serde_json::json!({"command": ["ls"], "n": i}),
            )));
        }
        events.push(Event::new(
            format!("a{i}"),
            Timestamp::from_millis(t.millis() + 1_000),
            Body::assistant(answer),
        ));
        if calls {
            events.push(Event::new(
                format!("r{i}"),
                Timestamp::from_millis(t.millis() + 1_500),
                Body::tool_output(format!("call_{i}"), "done"),
            ));
        }
    }
    let mut transcript = Transcript::new(events);
    transcript.cwd = Some("/from/the/transcript".into());
    transcript
}

/// Every event `plugin`'s `read_path_each` hands of the session file at `path`.
pub fn read_path_each_all(
    plugin: &dyn handoff_host::Plugin,
    target: &str,
    path: &Path,
) -> Result<Vec<handoff_host::Event>, handoff_host::PluginError> {
    let mut events = Vec::new();
    plugin
        .reader()
        .read_each(ReadFrom::File(target, path), &mut |event| {
            events.push(event);
            true
        })?;
    Ok(events)
}

/// Asserts that `error` is the panicking fixture's deliberate panic in `method`, caught at the
/// boundary and named with its plugin and method.
pub fn assert_fixture_panicked(error: &handoff_host::PluginError, method: &str) {
    match error {
        handoff_host::PluginError::Panicked {
            plugin,
            method: panicked_in,
            message,
        } => {
            assert_eq!(plugin, "panicking");
            assert_eq!(panicked_in, method);
            let expected = format!("deliberate panic in {method}");
            assert!(message.contains(&expected), "{message}");
        }
        other => panic!("expected the fixture's panic in {method}, got {other}"),
    }
}
