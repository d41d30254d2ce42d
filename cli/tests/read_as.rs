//! `read` and `continue` read a source as the version of its CLI installed (issue 27): a Claude
//! Code session that ends on a call is sent without the call by Claude Code 2.1.197 and with its
//! own "interrupted" result by 2.1.332. The installed `claude` here is a fake that prints its
//! version, on a PATH of the test's own: nothing depends on the machine's PATH or HOME.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const SAMPLE: &str = "examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl";
/// The sample's session id (its file name).
const SESSION_ID: &str = "4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11";
/// Claude Code 2.1.332's result for the call a session ended on.
const INTERRUPTED: &str = "[Tool call interrupted";
/// The open call's command.
const OPEN_CALL: &str = "ls src";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// `handoff --config CONFIG ARGS` with `path` as the only PATH folder.
fn handoff(config: &Path, path: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_handoff"))
        .arg("--config")
        .arg(config)
        .args(args)
        .current_dir(repo())
        .env("HOME", "/nonexistent-home-handoff-tests")
        .env("PATH", path)
        .output()
        .expect("run handoff")
}

fn stdout_of(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A folder holding a `claude` that says it is `version`, as `claude --version` does.
fn installed_claude(scratch: &Path, version: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = scratch.join(format!("bin-{version}"));
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join("claude");
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho '{version} (Claude Code)'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// The bundled sample cut after its first call: the session ends on a call with no result.
fn session_ending_on_a_call(scratch: &Path) -> PathBuf {
    let sample = std::fs::read_to_string(repo().join(SAMPLE)).unwrap();
    let lines: Vec<&str> = sample.lines().take(4).collect();
    assert!(
        lines[3].contains(OPEN_CALL),
        "the sample's fourth line is the call"
    );
    let path = scratch.join(Path::new(SAMPLE).file_name().unwrap());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// What each installed Claude Code makes of the session, through `read` and `continue` into
/// codex (the codex session read back holds what was read), with `config`'s plugins.
fn reads_as_the_installed_claude(config: &Path, scratch: &Path, via: &str) {
    let session = session_ending_on_a_call(scratch);
    let session = session.to_str().unwrap();
    let empty = scratch.join("bin-none");
    std::fs::create_dir_all(&empty).unwrap();
    let cases = [
        (
            installed_claude(scratch, "2.1.197"),
            "2.1.197",
            "installed",
            false,
        ),
        (
            installed_claude(scratch, "2.1.332"),
            "2.1.332",
            "installed",
            true,
        ),
        // Outside the verified range, and none at all: the newest end.
        (
            installed_claude(scratch, "2.1.99"),
            "2.1.332",
            "newest_end",
            true,
        ),
        (empty.clone(), "2.1.332", "newest_end", true),
    ];
    for (n, (path, version, basis, call_kept)) in cases.into_iter().enumerate() {
        let what = format!("{via}, {} on PATH", path.display());
        let out = handoff(config, &path, &["read", "claude-code", session, "--json"]);
        let read = stdout_of(&out);
        assert_eq!(read.contains(OPEN_CALL), call_kept, "{what}: {read}");
        assert_eq!(read.contains(INTERRUPTED), call_kept, "{what}: {read}");
        // Said on stderr, unless it is the newest end (what a reader reads as untold).
        let said = String::from_utf8_lossy(&out.stderr);
        let note = format!("reading as claude-code {version} sends it");
        assert_eq!(
            said.contains(&note),
            basis != "newest_end",
            "{what}: {said}"
        );

        let root = scratch.join(format!("codex-{n}"));
        let from = format!("claude-code:{session}");
        let here = repo().display().to_string();
        let args = [
            "continue",
            "--from",
            &from,
            "--to",
            "codex",
            "--cwd",
            &here,
            "--store-root",
            root.to_str().unwrap(),
            "--json",
        ];
        let continued: Value =
            serde_json::from_str(&stdout_of(&handoff(config, &path, &args))).unwrap();
        assert_eq!(
            continued["read_as"]["version"], version,
            "{what}: {continued:#}"
        );
        assert_eq!(
            continued["read_as"]["basis"], basis,
            "{what}: {continued:#}"
        );
        let id = continued["session"]["id"].as_str().unwrap();
        let written = stdout_of(&handoff(
            config,
            &empty,
            &[
                "read",
                "codex",
                id,
                "--store-root",
                root.to_str().unwrap(),
                "--json",
            ],
        ));
        assert_eq!(written.contains(OPEN_CALL), call_kept, "{what}: {written}");
        assert_eq!(
            written.contains(INTERRUPTED),
            call_kept,
            "{what}: {written}"
        );
    }

    // Asked for, whatever is installed.
    let newest = installed_claude(scratch, "2.1.332");
    let out = handoff(
        config,
        &newest,
        &[
            "read",
            "claude-code",
            session,
            "--json",
            "--read-as",
            "2.1.197",
        ],
    );
    assert!(!stdout_of(&out).contains(OPEN_CALL), "{via}: --read-as");
    let refused = handoff(
        config,
        &newest,
        &["read", "claude-code", session, "--read-as", "latest"],
    );
    assert_eq!(refused.status.code(), Some(2), "{via}: --read-as latest");
}

fn config_in(scratch: &Path) -> PathBuf {
    let config = scratch.join("config.toml");
    let text = format!("certificate_dir = {:?}\n", scratch.join("certificates"));
    std::fs::write(&config, text).unwrap();
    config
}

#[test]
fn the_built_in_reads_a_claude_code_source_as_the_installed_claude() {
    let scratch = tempfile::tempdir().unwrap();
    let config = config_in(scratch.path());
    reads_as_the_installed_claude(&config, scratch.path(), "built-in");
}

/// The same through the engine, the source read by the Claude plugin loaded from its shared
/// library: the version crosses the boundary in the read requests.
#[test]
fn the_plugin_file_reads_a_claude_code_source_as_the_installed_claude() {
    use handoff_host::continuation::{continue_conversation, ContinueRequest, Source, SourceFile};
    use handoff_host::installed::{ReadAs, ReadAsBasis};
    use handoff_host::{ById, Plugin, ReadFrom, StoreRoot};

    let scratch = tempfile::tempdir().unwrap();
    let scratch = scratch.path();
    let library = std::env::current_exe()
        .unwrap()
        .with_file_name("libhandoff_plugin_claude.so");
    let loaded = handoff_host::loader::load(&library).expect("the claude plugin file loads");
    let manifest = loaded.manifest();
    let recipe = manifest
        .target("claude-code")
        .unwrap()
        .live
        .clone()
        .unwrap();
    let session = session_ending_on_a_call(scratch);
    // The same session in a Claude Code store, to be read by its id.
    let claude_store = StoreRoot::new(scratch.join("claude")).unwrap();
    let project = claude_store.path().join("projects/-home-dev-proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(&session, project.join(session.file_name().unwrap())).unwrap();
    let codex = handoff_codex::CodexPlugin;
    let cases = [
        (Some("2.1.197"), "2.1.197", ReadAsBasis::Installed, false),
        (Some("2.1.332"), "2.1.332", ReadAsBasis::Installed, true),
        (None, "2.1.332", ReadAsBasis::NewestEnd, true),
    ];
    for (n, (installed, version, basis, call_kept)) in cases.into_iter().enumerate() {
        let dirs = match installed {
            Some(v) => vec![installed_claude(scratch, v)],
            None => vec![scratch.join("bin-none")],
        };
        let read_as = ReadAs::installed(&recipe, dirs);
        assert_eq!((read_as.version.as_str(), read_as.basis), (version, basis));

        let as_version = loaded.reader().reading_as(version).unwrap();
        let read = as_version
            .read(ReadFrom::File("claude-code", &session))
            .unwrap();
        let read = serde_json::to_string(&read).unwrap();
        assert_eq!(read.contains(OPEN_CALL), call_kept, "{version}: {read}");
        assert_eq!(read.contains(INTERRUPTED), call_kept, "{version}: {read}");
        // A session of a store, whole (`read`) and streamed (`read_each`), crosses the same way.
        let stored = loaded
            .resumer()
            .resolve(&claude_store, "claude-code", SESSION_ID)
            .unwrap();
        let whole = as_version
            .read(ReadFrom::Session(&claude_store, &stored))
            .unwrap();
        let mut streamed = Vec::new();
        as_version
            .read_each(ReadFrom::Session(&claude_store, &stored), &mut |e| {
                streamed.push(e);
                true
            })
            .unwrap();
        assert_eq!(whole.events, streamed, "{version}");
        let whole = serde_json::to_string(&whole).unwrap();
        assert_eq!(whole.contains(INTERRUPTED), call_kept, "{version}: {whole}");

        let root = StoreRoot::new(scratch.join(format!("codex-{n}"))).unwrap();
        let here = repo().display().to_string();
        let continued = continue_conversation(
            &codex,
            &ContinueRequest {
                source: Source::File(SourceFile {
                    reader: loaded.reader(),
                    target: "claude-code",
                    path: &session,
                    cli_version: Some(&read_as.version),
                }),
                locator: None,
                target: "codex",
                root: &root,
                seal: handoff_host::seal::Seal::of_this_process(),
                cwd: Some(here),
                prompt: "go on",
                drop: &[],
                lock_wait: std::time::Duration::from_secs(10),
                into: None,
            },
        )
        .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(continued.read_as.as_deref(), Some(version));
        let written = codex
            .read_id(&root, "codex", &continued.session.id)
            .unwrap();
        let written = serde_json::to_string(&written).unwrap();
        assert_eq!(
            written.contains(OPEN_CALL),
            call_kept,
            "{version}: {written}"
        );
        assert_eq!(
            written.contains(INTERRUPTED),
            call_kept,
            "{version}: {written}"
        );
    }
}
