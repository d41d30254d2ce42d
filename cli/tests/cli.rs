//! The `handoff` command end to end: each command, bad input with clear errors and nothing written,
//! and Claude Code → Codex → Claude Code continuations that reuse the same native ids.

use handoff_host::ById;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_host::{
    Body, Comparison, Event, Part, Plugin, ReadFrom, StoreRoot, Timestamp, Transcript,
};
use serde_json::Value;

const SAMPLE: &str = "examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A configuration shared by every test of this run: certificates in one scratch directory, so the
/// built-ins are certified once (by the first command) rather than by every test.
fn config() -> &'static Path {
    static CONFIG: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &CONFIG
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let config = dir.path().join("config.toml");
            std::fs::write(
                &config,
                format!("certificate_dir = {:?}\n", dir.path().join("certificates")),
            )
            .unwrap();
            let out = handoff_with(&config, &["targets"]);
            assert!(out.status.success(), "{}", stderr(&out));
            (dir, config)
        })
        .1
}

fn handoff_with(config: &Path, args: &[&str]) -> Output {
    handoff_command(config, args).output().expect("run handoff")
}

fn handoff_command(config: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_handoff"));
    command
        .arg("--config")
        .arg(config)
        .args(args)
        .current_dir(repo())
        .env("HOME", "/nonexistent-home-handoff-tests");
    command
}

fn handoff(args: &[&str]) -> Output {
    handoff_with(config(), args)
}

/// `continue` of the bundled Claude Code sample into pi under `root`, in `cwd`, as `locator`.
fn continue_sample_into_pi(root: &Path, cwd: &Path, locator: &str, extra: &[&str]) -> Output {
    let source = format!("claude-code:{SAMPLE}");
    let mut args = vec![
        "continue",
        "--from",
        &source,
        "--to",
        "pi",
        "--locator",
        locator,
        "--cwd",
        cwd.to_str().unwrap(),
        "--store-root",
        root.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    handoff(&args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        stderr(out)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn read(target: &str, session: &str, root: &Path) -> Transcript {
    let out = handoff(&[
        "read",
        target,
        session,
        "--json",
        "--store-root",
        root.to_str().unwrap(),
    ]);
    serde_json::from_value(json(&out)).expect("a transcript")
}

/// `continue --json`, in this checkout (`--cwd`): the bundled session's own cwd is not on this
/// machine.
fn continue_json(from: &str, to: &str, root: &Path) -> Value {
    json(&handoff(&[
        "continue",
        "--from",
        from,
        "--to",
        to,
        "--store-root",
        root.to_str().unwrap(),
        "--cwd",
        repo().to_str().unwrap(),
        "--json",
    ]))
}

fn two_more(after: &Transcript) -> Vec<Event> {
    let t = after.events.last().unwrap().timestamp.millis();
    vec![
        Event::new(
            "more-user",
            Timestamp::from_millis(t + 60_000),
            Body::user_text("One more question: is the fix merged?"),
        ),
        Event::new(
            "more-assistant",
            Timestamp::from_millis(t + 61_000),
            Body::assistant(vec![handoff_host::AssistantPart::text("Yes, in main.")]),
        ),
    ]
}

#[test]
fn targets_lists_the_built_ins_as_verified() {
    let listing = json(&handoff(&["targets", "--json"]));
    let verified: Vec<&str> = listing
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["availability"]["status"] == "verified")
        .filter_map(|l| l["target"].as_str())
        .collect();
    for target in ["claude-code", "anthropic-messages", "codex"] {
        assert!(
            verified.contains(&target),
            "{target} not verified in {listing}"
        );
    }
}

#[test]
fn read_shows_roles_tool_calls_and_errors() {
    let out = handoff(&["read", "claude-code", SAMPLE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let view = String::from_utf8_lossy(&out.stdout);
    assert!(
        view.contains("→ Bash [toolu_01Ls0000000000000000001]"),
        "{view}"
    );
    assert!(
        view.contains("tool result [toolu_01Ct0000000000000000002]  ERROR"),
        "{view}"
    );
    assert!(view.contains("#6 assistant"), "{view}");
}

#[test]
fn claude_code_to_codex_and_back_reuses_the_same_ids() {
    let scratch = tempfile::tempdir().unwrap();
    let claude_root = scratch.path().join("claude");
    let codex_root = scratch.path().join("codex");

    // A Claude Code session this conversation lives in (owned, so the test can grow it).
    let source = read("claude-code", SAMPLE, &claude_root);
    let claude = StoreRoot::new(&claude_root).unwrap();
    let origin = ClaudePlugin
        .writer()
        .create(&claude, "claude-code", &source, &Default::default())
        .unwrap();
    let from_claude = format!("claude-code:{}", origin.path.display());

    // Claude Code → Codex: created, verified, and the resume names the id.
    let first = continue_json(&from_claude, "codex", &codex_root);
    assert_eq!(first["action"]["kind"], "created");
    let codex_id = first["session"]["id"].as_str().unwrap().to_owned();
    let codex_path = first["session"]["path"].as_str().unwrap().to_owned();
    assert!(first["command"].as_str().unwrap().contains(&codex_id));
    let on_codex = read("codex", &codex_path, &codex_root);
    Comparison::for_target(&["openai".into()])
        .diff(&source, &on_codex)
        .unwrap();

    // The conversation goes on in Claude Code; continuing again appends to the same Codex id.
    let more = two_more(&source);
    ClaudePlugin
        .append_id(&claude, "claude-code", &origin.id, &more)
        .unwrap();
    let second = continue_json(&from_claude, "codex", &codex_root);
    assert_eq!(
        second["action"],
        serde_json::json!({"kind": "appended", "events": 2})
    );
    assert_eq!(second["session"]["id"], codex_id.as_str());
    let grown = read("codex", &codex_id, &codex_root);
    assert_eq!(grown.events.len(), source.events.len() + 2);

    // Codex → Claude Code, then the Codex side grows and the same Claude id is reused.
    let back_root = scratch.path().join("claude-back");
    let from_codex = format!("codex:{codex_path}");
    let third = continue_json(&from_codex, "claude-code", &back_root);
    assert_eq!(third["action"]["kind"], "created");
    let claude_id = third["session"]["id"].as_str().unwrap().to_owned();
    let codex = StoreRoot::new(&codex_root).unwrap();
    let later = two_more(&grown);
    CodexPlugin
        .append_id(&codex, "codex", &codex_id, &later)
        .unwrap();
    let fourth = continue_json(&from_codex, "claude-code", &back_root);
    assert_eq!(
        fourth["action"],
        serde_json::json!({"kind": "appended", "events": 2})
    );
    assert_eq!(fourth["session"]["id"], claude_id.as_str());
    let on_claude = read("claude-code", &claude_id, &back_root);
    assert_eq!(on_claude.events.len(), source.events.len() + 4);
}

fn assert_fails(out: &Output, code: i32, message: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert!(
        stderr(out).contains(message),
        "stderr lacks {message:?}: {}",
        stderr(out)
    );
}

fn is_empty_or_missing(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none())
}

#[test]
fn an_unknown_target_is_a_usage_error() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("store");
    let out = handoff(&[
        "continue",
        "--from",
        &format!("claude-code:{SAMPLE}"),
        "--to",
        "nosuch",
        "--store-root",
        root.to_str().unwrap(),
    ]);
    assert_fails(&out, 2, "unknown target \"nosuch\"");
    assert!(stderr(&out).contains("known targets: anthropic-messages, claude-code, codex"));
    assert!(is_empty_or_missing(&root));
}

#[test]
fn a_malformed_session_names_file_and_line_and_writes_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let bad = scratch
        .path()
        .join("4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(repo().join(SAMPLE))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines[2] = "{\"type\":\"user\",\"message\":".into();
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let root = scratch.path().join("store");
    let out = handoff(&[
        "continue",
        "--from",
        &format!("claude-code:{}", bad.display()),
        "--to",
        "codex",
        "--store-root",
        root.to_str().unwrap(),
        // The source is streamed, so its cwd (read from its head) is checked before line 3.
        "--cwd",
        scratch.path().to_str().unwrap(),
    ]);
    assert_fails(&out, 1, &format!("{}:3", bad.display()));
    assert!(!root.join("sessions").exists());
}

/// A record whose `message` is no object, on the conversation: Claude Code 2.1.197 resumes
/// nothing and the read names the file, line and field; 2.1.332 passes the record over, and so
/// does the read as 2.1.332, saying so on stderr: never passed over unsaid.
#[test]
fn a_record_passed_over_as_the_newest_claude_code_does_is_said() {
    let scratch = tempfile::tempdir().unwrap();
    let bad = scratch
        .path()
        .join("4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl");
    let mut records: Vec<Value> = std::fs::read_to_string(repo().join(SAMPLE))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Line 11: the last answer.
    records[10]["message"] = Value::from("error");
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let file = bad.to_str().unwrap();

    let oldest = handoff(&["read", "claude-code", file, "--read-as", "2.1.197"]);
    assert_fails(&oldest, 1, &format!("{}:11", bad.display()));
    assert!(stderr(&oldest).contains("message"), "{}", stderr(&oldest));

    let newest = handoff(&["read", "claude-code", file, "--read-as", "2.1.332"]);
    assert!(newest.status.success(), "{}", stderr(&newest));
    let said = stderr(&newest);
    assert!(
        said.contains(&format!("{}:11", bad.display())) && said.contains("passed over"),
        "{said}"
    );
    let view = String::from_utf8_lossy(&newest.stdout);
    assert!(!view.contains("It exports `parse"), "{view}");
    assert!(view.contains("what does parse.rs export?"), "{view}");
}

#[test]
fn a_missing_id_is_an_error() {
    let scratch = tempfile::tempdir().unwrap();
    let out = handoff(&[
        "read",
        "codex",
        "01a229e6-0000-7000-8000-000000000000",
        "--store-root",
        scratch.path().to_str().unwrap(),
    ]);
    assert_fails(
        &out,
        1,
        "no session with id \"01a229e6-0000-7000-8000-000000000000\"",
    );
}

#[test]
fn a_store_root_that_is_a_file_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let out = handoff(&[
        "continue",
        "--from",
        &format!("claude-code:{SAMPLE}"),
        "--to",
        "codex",
        "--store-root",
        file.to_str().unwrap(),
    ]);
    assert_fails(&out, 2, "is not a directory");
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

#[test]
fn a_cwd_that_does_not_exist_is_refused_before_anything_is_written() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("store");
    let out = handoff(&[
        "continue",
        "--from",
        &format!("claude-code:{SAMPLE}"),
        "--to",
        "codex",
        "--store-root",
        root.to_str().unwrap(),
        "--cwd",
        "/no/such/dir",
    ]);
    assert_fails(&out, 2, "--cwd /no/such/dir: no such directory");
    assert!(is_empty_or_missing(&root));
}

#[test]
fn a_bad_from_is_a_usage_error() {
    let out = handoff(&["continue", "--from", "just-a-path.jsonl", "--to", "codex"]);
    assert_fails(&out, 2, "must be TARGET:SESSION or TARGET");
    let out = handoff(&["continue", "--from", "codex:", "--to", "pi"]);
    assert_fails(&out, 2, "must be TARGET:SESSION or TARGET");
}

#[test]
fn an_uncertified_plugin_file_is_not_offered() {
    let scratch = tempfile::tempdir().unwrap();
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    // Any file named like a plugin: the registry hashes it, finds no certificate, never opens it.
    std::fs::write(
        plugins.join("libhandoff_plugin_reference.so"),
        b"\x7fELF not really",
    )
    .unwrap();
    let config = scratch.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "plugin_dirs = [{:?}]\ncertificate_dir = {:?}\n",
            plugins,
            config_dir_certificates()
        ),
    )
    .unwrap();
    let listing = handoff_with(&config, &["targets"]);
    assert!(listing.status.success(), "{}", stderr(&listing));
    let text = String::from_utf8_lossy(&listing.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("libhandoff_plugin_reference.so"))
        .unwrap_or_else(|| panic!("the plugin file is not listed: {text}"));
    assert!(line.contains("NOT OFFERED"), "{line}");
}

fn config_dir_certificates() -> PathBuf {
    config().parent().unwrap().join("certificates")
}

/// The codex plugin's shared library, built beside this test by its cdylib dev-dependency.
fn codex_library() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let path = deps.join("libhandoff_plugin_codex.so");
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

#[test]
fn a_certified_plugin_file_shadows_the_builtin_and_is_the_one_used() {
    let scratch = tempfile::tempdir().unwrap();
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let library = plugins.join("libhandoff_plugin_codex.so");
    std::fs::copy(codex_library(), &library).unwrap();
    let config = scratch.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "plugin_dirs = [{:?}]\ncertificate_dir = {:?}\n",
            plugins,
            scratch.path().join("certificates")
        ),
    )
    .unwrap();
    let certified = handoff_with(&config, &["certify", library.to_str().unwrap()]);
    assert!(certified.status.success(), "{}", stderr(&certified));

    let listings = json(&handoff_with(&config, &["targets", "--json"]));
    let codex: Vec<&Value> = listings
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["target"] == "codex")
        .collect();
    assert_eq!(codex.len(), 2, "{listings:#}");
    let (file, builtin): (Vec<&Value>, Vec<&Value>) =
        codex.iter().partition(|l| l["source"]["kind"] == "file");
    assert_eq!(file[0]["availability"]["status"], "verified");
    assert!(file[0].get("shadowed_by").is_none(), "{:#}", file[0]);
    let winner = builtin[0]["shadowed_by"].as_str().unwrap();
    assert!(winner.contains("libhandoff_plugin_codex.so"), "{winner}");
    let text = String::from_utf8_lossy(&handoff_with(&config, &["targets"]).stdout).into_owned();
    assert!(
        text.lines()
            .any(|l| l.starts_with("codex") && l.contains("SHADOWED") && l.contains("built-in")),
        "{text}"
    );

    let store = scratch.path().join("codex-home");
    let sample = format!("claude-code:{SAMPLE}");
    let here = repo().display().to_string();
    let args = [
        "continue", "--from", &sample, "--to", "codex", "--cwd", &here, "--json",
    ];
    let out = handoff_with(
        &config,
        &[&args[..], &["--store-root", store.to_str().unwrap()]].concat(),
    );
    let continued = json(&out);
    assert_eq!(
        continued["plugin"]["source"]["kind"], "file",
        "{continued:#}"
    );
    assert_eq!(
        continued["plugin"]["source"]["path"],
        library.to_str().unwrap()
    );
}

/// The `targets --json` listing of the plugin file or folder `path`: its availability.
fn listing_of(config: &Path, path: &Path) -> Value {
    let listings = json(&handoff_with(config, &["targets", "--json"]));
    listings
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["source"]["path"] == path.to_str().unwrap())
        .unwrap_or_else(|| panic!("{} is not listed: {listings:#}", path.display()))
        .clone()
}

fn not_offered_because(listing: &Value, why: &str) {
    assert_eq!(
        listing["availability"]["status"], "not_offered",
        "{listing:#}"
    );
    let reason = listing["availability"]["reason"].as_str().unwrap();
    assert!(reason.contains(why), "{reason}");
}

#[test]
fn a_forged_certificate_or_a_plugin_others_may_change_is_not_offered_and_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let library = plugins.join("libhandoff_plugin_codex.so");
    std::fs::copy(codex_library(), &library).unwrap();
    let certificates = scratch.path().join("certificates");
    let config = scratch.path().join("config.toml");
    std::fs::write(
        &config,
        format!("plugin_dirs = [{plugins:?}]\ncertificate_dir = {certificates:?}\n"),
    )
    .unwrap();
    let certified = handoff_with(&config, &["certify", library.to_str().unwrap()]);
    assert!(certified.status.success(), "{}", stderr(&certified));
    assert_eq!(
        listing_of(&config, &library)["availability"]["status"],
        "verified"
    );

    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // A plugin folder anyone may write: nothing in it is loaded.
    mode(&plugins, 0o777);
    not_offered_because(&listing_of(&config, &plugins), "world-writable (mode 0777)");
    mode(&plugins, 0o755);
    // A plugin file its group may write.
    mode(&library, 0o664);
    not_offered_because(&listing_of(&config, &library), "group-writable (mode 0664)");
    mode(&library, 0o755);
    assert_eq!(
        listing_of(&config, &library)["availability"]["status"],
        "verified"
    );

    // The certificate edited (its issue date), then forged from scratch without the key.
    let certificate = std::fs::read_dir(&certificates)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("file-")
        })
        .unwrap();
    let text = std::fs::read_to_string(&certificate).unwrap();
    let mut edited: Value = serde_json::from_str(&text).unwrap();
    edited["issued_at"] = "2020-01-01T00:00:00Z".into();
    std::fs::write(&certificate, edited.to_string()).unwrap();
    not_offered_because(&listing_of(&config, &library), "seal does not verify");
    edited["seal"] = Value::Null;
    edited.as_object_mut().unwrap().remove("seal");
    std::fs::write(&certificate, edited.to_string()).unwrap();
    not_offered_because(&listing_of(&config, &library), "seal does not verify");
    // Nothing used it: the built-in serves codex.
    let listings = json(&handoff_with(&config, &["targets", "--json"]));
    let used: Vec<&Value> = listings
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["target"] == "codex" && l["availability"]["status"] == "verified")
        .collect();
    assert_eq!(used.len(), 1, "{listings:#}");
    assert_eq!(used[0]["source"]["kind"], "built_in", "{listings:#}");
}

#[test]
fn certificates_are_one_place_per_user_whatever_the_store_root() {
    let scratch = tempfile::tempdir().unwrap();
    let certificates = scratch.path().join("certificates");
    let run = |root: &str| {
        Command::new(env!("CARGO_BIN_EXE_handoff"))
            .args([
                "continue",
                "--from",
                &format!("claude-code:{SAMPLE}"),
                "--to",
                "codex",
            ])
            .arg("--store-root")
            .arg(scratch.path().join(root))
            .arg("--cwd")
            .arg(repo())
            .current_dir(repo())
            .env("HOME", "/nonexistent-home-handoff-tests")
            .env("HANDOFF_CERT_DIR", &certificates)
            .output()
            .unwrap()
    };
    let count = || std::fs::read_dir(&certificates).map_or(0, |d| d.count());
    let first = run("a");
    assert!(first.status.success(), "{}", stderr(&first));
    let after_first = count();
    assert!(after_first > 0, "the first run certified nothing");
    for root in ["b", "c"] {
        let out = run(root);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(count(), after_first, "a new store root re-certified");
        assert!(!scratch
            .path()
            .join(root)
            .join(".handoff/certificates")
            .exists());
    }
}

#[test]
fn sessions_lists_newest_first_with_the_title_the_cli_shows_and_filters_by_cwd() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("pi");
    let (here, there) = (scratch.path().join("here"), scratch.path().join("there"));
    for (dir, locator) in [(&there, "first"), (&here, "second")] {
        std::fs::create_dir(dir).unwrap();
        let out = continue_sample_into_pi(&root, dir, locator, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let all = json(&handoff(&[
        "sessions",
        "pi",
        "--store-root",
        root.to_str().unwrap(),
        "--json",
    ]));
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2, "{all:#?}");
    assert_eq!(
        all[0]["cwd"],
        here.to_str().unwrap(),
        "newest first: {all:#?}"
    );
    let first_user_text = ClaudePlugin
        .reader()
        .read(ReadFrom::File("claude-code", &repo().join(SAMPLE)))
        .unwrap()
        .events
        .iter()
        .find_map(|e| match &e.body {
            Body::User { content } => content.iter().find_map(|p| match p {
                Part::Text { text } => Some(text.clone()),
                _ => None,
            }),
            _ => None,
        })
        .unwrap();
    assert_eq!(all[0]["title"], first_user_text.as_str());
    let mine = json(&handoff(&[
        "sessions",
        "pi",
        "--store-root",
        root.to_str().unwrap(),
        "--cwd",
        there.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert_eq!(mine[0]["cwd"], there.to_str().unwrap());
}

/// The id in `continue`'s summary line (`created <target> session <id> with …`).
fn session_id_in(summary: &str) -> String {
    let words: Vec<&str> = summary.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "session").unwrap();
    words[at + 1].to_owned()
}

#[test]
fn a_source_cwd_missing_here_needs_cwd_and_the_printed_command_runs_as_printed() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("codex");
    let from = format!("claude-code:{SAMPLE}");
    let base = [
        "continue",
        "--from",
        &from,
        "--to",
        "codex",
        "--store-root",
        root.to_str().unwrap(),
    ];
    // The bundled session was recorded in /home/dev/proj, which is not on this machine.
    let refused = handoff(&base);
    assert_fails(
        &refused,
        2,
        "working directory /home/dev/proj does not exist on this machine",
    );
    assert!(
        stderr(&refused).contains("pass --cwd DIR"),
        "{}",
        stderr(&refused)
    );
    assert!(is_empty_or_missing(&root.join("sessions")));

    let work = scratch.path().join("work dir");
    std::fs::create_dir(&work).unwrap();
    let out = handoff(&[&base[..], &["--cwd", work.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/home/dev/proj does not exist here; the new session uses --cwd"),
        "{}",
        stderr(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let id = session_id_in(stdout.lines().next().unwrap());
    let printed_after = |heading: &str| {
        stdout
            .lines()
            .skip_while(|l| *l != heading)
            .nth(1)
            .unwrap_or_else(|| panic!("no {heading:?} in {stdout}"))
            .trim()
            .to_owned()
    };
    // The interactive session first, then the headless command.
    let interactive = printed_after("open it with (or run again with --exec):");
    assert!(
        interactive.ends_with(&format!("codex resume {id}")),
        "{interactive}"
    );
    let printed = printed_after("or resume headless, with a prompt:");

    // Run the line as printed, from elsewhere, with a stand-in `codex` that records where it ran,
    // its arguments and the store it was pointed at.
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let stand_in = bin.join("codex");
    std::fs::write(
        &stand_in,
        "#!/bin/sh\npwd -P > \"$RECORD\"\necho \"$CODEX_HOME\" >> \"$RECORD\"\nprintf '%s\\n' \"$@\" >> \"$RECORD\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let record = scratch.path().join("record");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ran = Command::new("sh")
        .arg("-c")
        .arg(&printed)
        .current_dir("/")
        .env("PATH", path)
        .env("RECORD", &record)
        .status()
        .unwrap();
    assert!(ran.success(), "{printed}");
    let record = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(
        lines[0],
        std::fs::canonicalize(&work).unwrap().to_str().unwrap(),
        "{printed}"
    );
    assert_eq!(lines[1], root.to_str().unwrap(), "{printed}");
    assert!(lines[2..].contains(&id.as_str()), "{printed}: {record}");
}

#[test]
fn a_bare_from_or_read_takes_the_newest_session_of_the_directory_and_says_which() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("pi");
    let (here, there) = (scratch.path().join("here"), scratch.path().join("there"));
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&there).unwrap();
    let mut ids = Vec::new();
    for (dir, locator) in [(&here, "older"), (&there, "elsewhere"), (&here, "newest")] {
        let continued = json(&continue_sample_into_pi(&root, dir, locator, &["--json"]));
        ids.push(continued["session"]["id"].as_str().unwrap().to_owned());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let newest_here = ids[2].as_str();

    let out = handoff(&[
        "read",
        "pi",
        "--cwd",
        here.to_str().unwrap(),
        "--store-root",
        root.to_str().unwrap(),
        "--json",
    ]);
    let transcript: Transcript = serde_json::from_value(json(&out)).unwrap();
    assert!(
        stderr(&out).contains(&format!("taking the newest pi session {newest_here}")),
        "{}",
        stderr(&out)
    );

    let codex = scratch.path().join("codex");
    let out = handoff(&[
        "continue",
        "--from",
        "pi",
        "--from-store-root",
        root.to_str().unwrap(),
        "--to",
        "codex",
        "--store-root",
        codex.to_str().unwrap(),
        "--cwd",
        here.to_str().unwrap(),
        "--json",
    ]);
    let continued = json(&out);
    assert_eq!(continued["source"]["session"], newest_here);
    assert!(stderr(&out).contains(newest_here), "{}", stderr(&out));
    let events = format!("{} events", transcript.events.len());
    assert!(stderr(&out).contains(&events), "{}", stderr(&out));

    // The current directory (this checkout) has no pi session in that store.
    let none = handoff(&[
        "continue",
        "--from",
        "pi",
        "--from-store-root",
        root.to_str().unwrap(),
        "--to",
        "codex",
        "--store-root",
        codex.to_str().unwrap(),
    ]);
    assert_fails(
        &none,
        2,
        &format!("no pi session with cwd {}", repo().display()),
    );

    // The listing counts each shown session's events exactly, and --limit bounds what it shows.
    let listed = json(&handoff(&[
        "sessions",
        "pi",
        "--store-root",
        root.to_str().unwrap(),
        "--json",
    ]));
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0]["session"]["id"], newest_here);
    for session in listed {
        assert_eq!(session["events"], transcript.events.len(), "{session:#}");
    }
    let one = json(&handoff(&[
        "sessions",
        "pi",
        "--store-root",
        root.to_str().unwrap(),
        "--limit",
        "1",
        "--json",
    ]));
    assert_eq!(one.as_array().unwrap().len(), 1);
}

/// The API targets, whose sessions are one JSON document each.
const API_TARGETS: [&str; 4] = [
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-api",
];

#[test]
fn an_api_history_that_is_no_json_document_is_named_by_both_read_and_continue() {
    let scratch = tempfile::tempdir().unwrap();
    let store = scratch.path().join("store");
    for target in API_TARGETS {
        // A genuine history of the target, cut in half, is a truncated one.
        let made = continue_json(&format!("claude-code:{SAMPLE}"), target, &store);
        let genuine = std::fs::read(made["session"]["path"].as_str().unwrap()).unwrap();
        let half = genuine.len() / 2;
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let cases: [(&str, &[u8], String); 4] = [
            ("empty", b"", "empty file".into()),
            (
                "binary",
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
                "not JSON: expected value at line 1 column 1".into(),
            ),
            (
                "truncated",
                &genuine[..half],
                format!("truncated at byte {half} (EOF while parsing"),
            ),
            (
                "deep",
                deep.as_bytes(),
                "nested deeper than 127 levels (at line 1 column 128)".into(),
            ),
        ];
        for (kind, bytes, why) in cases {
            let file = scratch.path().join(format!("{target}-{kind}.json"));
            std::fs::write(&file, bytes).unwrap();
            let named = format!("{}", file.display());
            let read = handoff(&["read", target, &named, "--json"]);
            let into = scratch.path().join(format!("into-{target}-{kind}"));
            let continued = handoff(&[
                "continue",
                "--from",
                &format!("{target}:{named}"),
                "--to",
                "openai-chat",
                "--store-root",
                into.to_str().unwrap(),
                "--cwd",
                scratch.path().to_str().unwrap(),
            ]);
            for (command, out) in [("read", &read), ("continue", &continued)] {
                let said = stderr(out);
                assert_eq!(
                    out.status.code(),
                    Some(1),
                    "{target} {kind} {command}: {said}"
                );
                assert!(
                    said.contains(&named) && said.contains(&why),
                    "{target} {kind} {command}: wanted {why:?}: {said}"
                );
                assert!(
                    !said.contains("handoff.cwd"),
                    "{target} {kind} {command}: {said}"
                );
            }
            assert!(
                is_empty_or_missing(&into.join("openai-chat")),
                "{target} {kind}"
            );
        }
    }
}

/// The bundled session with `longer` bytes added to every text (so that what a command prints of
/// it can be more than a pipe holds), its cwd `cwd` and its id `id`.
fn long_sample(cwd: &Path, id: &str, longer: usize) -> String {
    let sample_id = "4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11";
    let long = "x".repeat(longer);
    let mut out = String::new();
    for line in std::fs::read_to_string(repo().join(SAMPLE))
        .unwrap()
        .lines()
    {
        let mut record: Value = serde_json::from_str(line).unwrap();
        if record.get("cwd").is_some() {
            record["cwd"] = Value::String(cwd.display().to_string());
        }
        if let Some(content) = record.pointer_mut("/message/content") {
            match content {
                Value::String(text) => *text += &long,
                Value::Array(blocks) => {
                    for block in blocks.iter_mut().filter(|b| b["type"] == "text") {
                        block["text"] = format!("{}{long}", block["text"].as_str().unwrap()).into();
                    }
                }
                _ => {}
            }
        }
        out += &record.to_string().replace(sample_id, id);
        out.push('\n');
    }
    out
}

/// Runs `handoff args` with stdout a pipe of one page whose reader closes it after reading
/// `after` bytes (`None`: before the command starts). The pipe's size, and the output.
fn with_stdout_closed(args: &[&str], after: Option<usize>) -> (usize, Output) {
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    let (reader, writer) = std::io::pipe().unwrap();
    // SAFETY: a plain fcntl on a descriptor `reader` keeps open.
    let size = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(
        size > 0,
        "F_SETPIPE_SZ: {}",
        std::io::Error::last_os_error()
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_handoff"));
    command
        .arg("--config")
        .arg(config())
        .args(args)
        .current_dir(repo())
        .env("HOME", "/nonexistent-home-handoff-tests")
        .stdout(writer)
        .stderr(std::process::Stdio::piped());
    let mut reader = match after {
        None => {
            drop(reader);
            None
        }
        Some(_) => Some(reader),
    };
    let child = command.spawn().unwrap();
    drop(command); // this process's copy of the pipe's write end
    if let (Some(mut pipe), Some(n)) = (reader.take(), after) {
        let mut first = vec![0u8; n];
        pipe.read_exact(&mut first).unwrap();
    }
    (size as usize, child.wait_with_output().unwrap())
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let id = "5a7d3b9f-2c8e-4d4b-8f66-3e1a9b7c8d22";
    let big = dir.join(format!("{id}.jsonl"));
    std::fs::write(&big, long_sample(dir, id, 20_000)).unwrap();
    let store = dir.join("claude");
    let project = store.join("projects").join("-scratch");
    std::fs::create_dir_all(&project).unwrap();
    for n in 0..60 {
        let id = format!("5a7d3b9f-2c8e-4d4b-8f66-3e1a9b7c{n:04}");
        std::fs::write(
            project.join(format!("{id}.jsonl")),
            long_sample(dir, &id, 0),
        )
        .unwrap();
    }
    let big = big.to_str().unwrap();
    let from = format!("claude-code:{big}");
    let store = store.to_str().unwrap();
    let into = |n: usize| dir.join(format!("into-{n}")).display().to_string();
    let (into_1, into_2, into_3, into_4) = (into(1), into(2), into(3), into(4));
    let sessions = [
        "sessions",
        "claude-code",
        "--store-root",
        store,
        "--limit",
        "0",
    ];
    let continued = [
        "continue",
        "--from",
        &from,
        "--to",
        "openai-chat",
        "--store-root",
    ];
    let commands: Vec<Vec<&str>> = vec![
        vec!["read", "claude-code", big, "--json"],
        vec!["read", "claude-code", big],
        [&sessions[..], &["--json"]].concat(),
        sessions.to_vec(),
        [&continued[..], &[&into_1, "--json"]].concat(),
        [&continued[..], &[&into_2]].concat(),
        vec!["targets", "--json"],
        vec!["targets"],
    ];
    for args in &commands {
        // Closed after one byte: a command printing more than the pipe holds meets the closed
        // pipe mid-write (the premise is checked: it prints more than two pipes' worth).
        let (pipe, out) = with_stdout_closed(args, Some(1));
        let mut whole = args.to_vec();
        if args[0] == "continue" {
            whole[args.len() - 1 - usize::from(args.contains(&"--json"))] = &into_3;
        }
        let printed = handoff(&whole).stdout.len();
        let written = args[0] != "targets";
        if written {
            assert!(printed > 2 * pipe, "{args:?} prints only {printed} bytes");
        }
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
        // Closed before the command starts: its first write meets it, whatever it prints.
        let mut closed = args.to_vec();
        if args[0] == "continue" {
            closed[args.len() - 1 - usize::from(args.contains(&"--json"))] = &into_4;
        }
        let (_, out) = with_stdout_closed(&closed, None);
        assert_eq!(out.status.code(), Some(0), "{closed:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{closed:?}");
    }
}

/// Issue 24: a queue-operation record whose timestamp is an object. Claude Code 2.1.197 resumes
/// such a file (live/tests/differential.rs, `queue-timestamp-object`), so `read` and `continue`
/// both take it, as the same conversation as the file without the fault.
#[test]
fn read_and_continue_give_one_verdict_on_a_queue_record_with_an_object_timestamp() {
    let scratch = tempfile::tempdir().unwrap();
    let sample = std::fs::read_to_string(repo().join(SAMPLE)).unwrap();
    let first = sample.lines().next().unwrap();
    assert!(first.contains(r#""type":"queue-operation""#), "{first}");
    let odd = sample.replacen(
        r#""timestamp":"2026-11-30T00:50:00.000Z""#,
        r#""timestamp":{"seconds":1796000000,"nanos":0}"#,
        1,
    );
    assert_ne!(odd, sample);
    let file = scratch
        .path()
        .join("4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl");
    std::fs::write(&file, &odd).unwrap();
    let file = file.to_str().unwrap();
    let store = scratch.path().join("store");
    let read_odd = read("claude-code", file, &store);
    let read_genuine = read("claude-code", SAMPLE, &store);
    assert_eq!(read_odd, read_genuine);
    let continued = continue_json(&format!("claude-code:{file}"), "pi", &store);
    let written = read("pi", continued["session"]["path"].as_str().unwrap(), &store);
    if let Err(difference) = Comparison::exact().diff(&read_genuine, &written) {
        panic!("the continued session is not the conversation read: {difference:?}");
    }
}

/// An append to an API history replaces its file whole (by a rename); the file keeps its mode,
/// owner and group (a 0640 file of group `nobody` — `nogroup`, 65534 — where this test may give
/// it one, as root).
#[test]
fn an_appended_api_history_keeps_its_mode_owner_and_group() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let scratch = tempfile::tempdir().unwrap();
    let claude_root = scratch.path().join("claude");
    let source = read("claude-code", SAMPLE, &claude_root);
    let claude = StoreRoot::new(&claude_root).unwrap();
    let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    for target in API_TARGETS {
        let origin = ClaudePlugin
            .writer()
            .create(&claude, "claude-code", &source, &Default::default())
            .unwrap();
        let from = format!("claude-code:{}", origin.path.display());
        let store = scratch.path().join(target);
        let created = continue_json(&from, target, &store);
        let path = PathBuf::from(created["session"]["path"].as_str().unwrap());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let group = if as_root {
            65534
        } else {
            std::fs::metadata(&path).unwrap().gid()
        };
        std::os::unix::fs::chown(&path, None, Some(group)).unwrap();
        let before = std::fs::metadata(&path).unwrap();
        ClaudePlugin
            .append_id(&claude, "claude-code", &origin.id, &two_more(&source))
            .unwrap();
        let appended = continue_json(&from, target, &store);
        assert_eq!(
            appended["action"],
            serde_json::json!({"kind": "appended", "events": 2}),
            "{target}"
        );
        let after = std::fs::metadata(&path).unwrap();
        assert_ne!(after.ino(), before.ino(), "{target}: replaced by a rename");
        assert_eq!(after.mode() & 0o7777, 0o640, "{target}");
        assert_eq!(
            (after.uid(), after.gid()),
            (before.uid(), group),
            "{target}"
        );
    }
}

#[test]
fn a_part_the_target_refuses_is_dropped_only_when_asked_and_listed() {
    use handoff_host::{DropFilter, Feature};
    let scratch = tempfile::tempdir().unwrap();
    let codex_root = scratch.path().join("codex");
    let claude_root = scratch.path().join("claude");
    // A Codex session whose user sends an image by URL, which Claude Code does not carry.
    let mut source = read("claude-code", SAMPLE, &scratch.path().join("sample"));
    let mut more = two_more(&source);
    more[0].body = Body::User {
        content: vec![
            Part::text("What is in this picture?"),
            Part::ImageUrl {
                url: "https://example.com/cat.png".into(),
            },
        ],
    };
    let with_url = source.events.len();
    source.events.extend(more);
    let codex = StoreRoot::new(&codex_root).unwrap();
    let written = CodexPlugin
        .writer()
        .create(&codex, "codex", &source, &Default::default())
        .unwrap();
    let from = format!("codex:{}", written.path.display());
    let here = repo();
    let continue_args = |extra: &[&str]| {
        let mut args = vec![
            "continue",
            "--from",
            &from,
            "--to",
            "claude-code",
            "--store-root",
            claude_root.to_str().unwrap(),
            "--cwd",
            here.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        handoff(&args)
    };

    // Without --drop: refused as before, naming the event, and the flag that lets it through.
    let refused = continue_args(&[]);
    assert_fails(
        &refused,
        1,
        "has image_url, which claude-code does not carry",
    );
    assert!(
        stderr(&refused).contains("pass --drop image_url"),
        "{}",
        stderr(&refused)
    );
    let sessions = handoff(&[
        "sessions",
        "claude-code",
        "--store-root",
        claude_root.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(json(&sessions).as_array().map(Vec::len), Some(0));

    // With it: carried without the image URL, which is listed; the rest is intact.
    let carried = json(&continue_args(&["--drop", "image_url", "--json"]));
    assert_eq!(carried["action"]["kind"], "created");
    assert_eq!(
        carried["dropped"],
        serde_json::json!([{
            "index": with_url,
            "event_id": "more-user",
            "kind": "image_url",
            "parts": 1,
            "whole_event": false,
            "what": "1 image URL",
        }])
    );
    let id = carried["session"]["id"].as_str().unwrap().to_owned();
    let on_claude = read("claude-code", &id, &claude_root);
    let on_codex = read("codex", written.path.to_str().unwrap(), &codex_root);
    let expected = DropFilter::new(&[Feature::ImageUrl])
        .unwrap()
        .apply_all(on_codex);
    assert_eq!(expected.events.len(), source.events.len());
    Comparison::for_target(&["anthropic".into()])
        .diff(&expected, &on_claude)
        .unwrap();
    assert_eq!(
        on_claude.events[with_url].body,
        Body::user_text("What is in this picture?")
    );

    // Again with --drop: the session already holds the conversation minus the URL, and the
    // human report still says what it lacks.
    let again = continue_args(&["--drop", "image_url"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let report = String::from_utf8_lossy(&again.stdout);
    assert!(report.contains("already holds all"), "{report}");
    assert!(
        report.contains(&format!(
            "event {with_url} (more-user): 1 image URL [image_url]"
        )),
        "{report}"
    );
    // Without --drop the same session is not taken for the whole conversation: refused.
    assert_fails(&continue_args(&[]), 1, "pass --drop image_url");

    // A kind that cannot be dropped is bad usage.
    let text = continue_args(&["--drop", "text"]);
    assert_fails(&text, 2, "text cannot be dropped");
}

/// Polls `done` until it holds or a minute has passed (the caller asserts what it waited for).
fn wait_until(mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A program named `name` in `dir` that prints `version` for `--version` (a native install:
/// no npm package beside it, so it is asked).
fn fake_cli(dir: &Path, name: &str, version: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn doctor_names_a_cli_outside_its_verified_range_and_continue_warns() {
    let bin = tempfile::tempdir().unwrap();
    fake_cli(bin.path(), "pi", "99.0.0");
    fake_cli(bin.path(), "codex", "codex-cli 0.0.1");
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let doctor = |args: &[&str]| {
        handoff_command(config(), args)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let out = doctor(&["doctor", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let cli = |target: &str| {
        report["clis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["target"] == target)
            .unwrap_or_else(|| panic!("no {target} in {report}"))
            .clone()
    };
    let pi = cli("pi");
    assert_eq!(pi["version"], "99.0.0");
    assert_eq!(pi["standing"], "newer");
    assert_eq!(pi["found"], bin.path().join("pi").to_str().unwrap());
    assert_eq!(cli("codex")["standing"], "older");
    assert_eq!(cli("codex")["version"], "0.0.1");
    assert!(cli("claude-code")["found"].is_null(), "{report}");
    // The text names the CLI and what was verified.
    let text = String::from_utf8(doctor(&["doctor"]).stdout).unwrap();
    // "0.73.1 to 1.6.0", or one version where the range is one.
    let (oldest, newest) = (
        pi["verified"]["oldest"].as_str().unwrap(),
        pi["verified"]["newest"].as_str().unwrap(),
    );
    let verified = if oldest == newest {
        newest.to_owned()
    } else {
        format!("{oldest} to {newest}")
    };
    let pi_line = text.lines().find(|l| l.contains(" pi ")).unwrap();
    assert!(
        pi_line.contains("99.0.0")
            && pi_line.contains(&format!("NEWER than verified ({verified})")),
        "{text}"
    );
    assert!(text.contains("not on PATH"), "{text}");

    // `continue` into pi writes the session, and says the installed pi is outside the range.
    let root = tempfile::tempdir().unwrap();
    let source = format!("claude-code:{SAMPLE}");
    let continue_into_pi = |locator: &str| {
        let out = handoff_command(
            config(),
            &[
                "continue",
                "--from",
                &source,
                "--to",
                "pi",
                "--locator",
                locator,
                "--cwd",
                repo().to_str().unwrap(),
                "--store-root",
                root.path().to_str().unwrap(),
            ],
        )
        .env("PATH", &path)
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let warning = continue_into_pi("doctor-newer");
    assert!(
        warning.contains("warning:")
            && warning.contains("is 99.0.0, newer than the versions verified")
            && warning.contains(newest),
        "{warning}"
    );
    // Within the range nothing is said.
    fake_cli(bin.path(), "pi", newest);
    let quiet = continue_into_pi("doctor-within");
    assert!(!quiet.contains("warning:"), "{quiet}");
}

#[test]
fn completions_offer_the_known_targets_and_the_man_pages_cover_every_command() {
    let out = handoff(&["completions", "bash"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), &out.stdout).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(script.path())
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n refused the completion script");
    let text = String::from_utf8(out.stdout).unwrap();
    let targets = json(&handoff(&["targets", "--json"]));
    for listing in targets.as_array().unwrap() {
        let name = listing["target"].as_str().unwrap();
        assert!(text.contains(name), "the completions do not offer {name}");
    }
    let out = handoff(&["completions", "nushell"]);
    assert_eq!(out.status.code(), Some(2), "an unknown shell is bad usage");

    let pages = tempfile::tempdir().unwrap();
    let out = handoff(&["man", "--out", pages.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for command in ["continue", "sessions", "doctor", "completions"] {
        let page = std::fs::read_to_string(pages.path().join(format!("handoff-{command}.1")))
            .unwrap_or_else(|e| panic!("no page for {command}: {e}"));
        assert!(page.starts_with(".ie") && page.contains(".TH"), "{page}");
    }
    let out = handoff(&["man"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("handoff\\-continue"));
}

/// `continue --exec`: without `--prompt`, handoff is replaced by the target CLI's interactive
/// session on this terminal; with `--prompt`, the headless command runs; without a terminal, the
/// interactive one is refused naming `--prompt`. The CLI is a stand-in `pi` that logs how it ran.
#[test]
fn exec_opens_the_interactive_session_in_place_of_handoff_or_runs_the_headless_one() {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("pi.log");
    let pi = bin.path().join("pi");
    std::fs::write(
        &pi,
        format!(
            "#!/bin/sh\ntest \"$1\" = --version && exit 0\nif test -t 0; then tty=yes; else tty=no; fi\nprintf 'PID=%s TTY=%s ARGS=%s\\n' \"$$\" \"$tty\" \"$*\" > {log:?}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let root = tempfile::tempdir().unwrap();
    let source = format!("claude-code:{}", repo().join(SAMPLE).display());
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "--config",
            config().to_str().unwrap(),
            "continue",
            "--from",
            &source,
            "--to",
            "pi",
            "--cwd",
            repo().to_str().unwrap(),
            "--store-root",
            root.path().to_str().unwrap(),
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();

    // Headless, with a prompt: a child whose exit code is handoff's.
    let out = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(args(&["--exec", "--prompt", "go on"]))
        .env("PATH", &path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let headless = logged();
    assert!(
        headless.contains("TTY=no") && headless.contains("-p go on"),
        "{headless}"
    );

    // No terminal and no prompt: refused before anything runs, naming --prompt.
    std::fs::remove_file(&log).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(args(&["--exec"]))
        .env("PATH", &path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_fails(&out, 2, "needs a terminal; pass --prompt TEXT");
    assert_eq!(logged(), "", "nothing ran");

    // On a terminal: the interactive command, in handoff's own process.
    let home = tempfile::tempdir().unwrap();
    let terminal = handoff_live::pty::PtySession::start(&handoff_live::cli::Invocation {
        program: env!("CARGO_BIN_EXE_handoff").into(),
        args: args(&["--exec"]),
        home: home.path().to_owned(),
        env: vec![("PATH".to_owned(), path.clone())],
        cwd: repo(),
        close_stdin: false,
        timeout: std::time::Duration::from_secs(60),
    })
    .unwrap();
    wait_until(|| logged().contains("ARGS="));
    let pid = terminal.pid();
    let screen = terminal.end();
    let interactive = logged();
    assert!(
        interactive.contains(&format!("PID={pid} ")),
        "not run in handoff's place (handoff was {pid}): {interactive} {screen}"
    );
    assert!(interactive.contains("TTY=yes"), "{interactive}");
    assert!(interactive.contains("--session"), "{interactive}");
    assert!(!interactive.contains(" -p "), "{interactive}");
}

/// `handoff` alone on a terminal lists the sessions of the directory from every CLI store, newest
/// first, and continues the one picked on the agent picked, opening it there. Keyboard only.
#[test]
fn handoff_alone_on_a_terminal_picks_a_session_and_an_agent_and_opens_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().unwrap();
    let proj = home.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    let proj = std::fs::canonicalize(&proj).unwrap();
    let source = format!("claude-code:{SAMPLE}");
    // A Claude Code session, then (newer) a Codex one, both of this directory.
    let mut made = Vec::new();
    for (target, store) in [("claude-code", ".claude"), ("codex", ".codex")] {
        let out = handoff(&[
            "continue",
            "--from",
            &source,
            "--to",
            target,
            "--cwd",
            proj.to_str().unwrap(),
            "--store-root",
            home.path().join(store).to_str().unwrap(),
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        made.push(json(&out)["session"]["id"].as_str().unwrap().to_owned());
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("agent.log");
    for program in ["claude", "codex", "pi", "gemini"] {
        let path = bin.path().join(program);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ntest \"$1\" = --version && exit 0\nprintf '{program} PID=%s ARGS=%s\\n' \"$$\" \"$*\" >> {log:?}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut terminal = handoff_live::pty::PtySession::start(&handoff_live::cli::Invocation {
        program: env!("CARGO_BIN_EXE_handoff").into(),
        args: vec!["--config".into(), config().to_str().unwrap().into()],
        home: home.path().to_owned(),
        env: vec![(
            "PATH".to_owned(),
            format!("{}:/usr/bin:/bin", bin.path().display()),
        )],
        cwd: proj.clone(),
        close_stdin: false,
        timeout: std::time::Duration::from_secs(60),
    })
    .unwrap();
    let wait_for = |terminal: &handoff_live::pty::PtySession, what: &str| {
        wait_until(|| terminal.screen().contains(what));
        assert!(
            terminal.screen().contains(what),
            "no {what:?} in {:?}",
            terminal.screen()
        );
    };
    wait_for(&terminal, "Continue which session");
    terminal.settle(
        std::time::Duration::from_millis(300),
        std::time::Duration::from_secs(5),
    );
    let listed = terminal.screen();
    // Both stores' sessions, the newer (Codex) first.
    let (codex_row, claude_row) = (
        listed.find("codex ").unwrap(),
        listed.find("claude-code ").unwrap(),
    );
    assert!(codex_row < claude_row, "{listed:?}");
    // Both continue one conversation (the bundled session's): one label in the conversation column.
    let labels: Vec<&str> = listed
        .split(['\r', '\n'])
        .filter_map(|line| line.split(" events  ").nth(1)?.split_whitespace().next())
        .collect();
    assert_eq!(labels.len(), 2, "{listed:?}");
    assert_eq!(labels[0], labels[1], "{listed:?}");
    assert!(labels[0].len() == 8 && labels[0].chars().all(|c| c.is_ascii_hexdigit()));
    // Down to the Claude Code session, pick it; then the first agent offered (not Claude Code).
    terminal.send(b"\x1b[B").unwrap();
    terminal.settle(
        std::time::Duration::from_millis(300),
        std::time::Duration::from_secs(5),
    );
    terminal.send(b"\r").unwrap();
    wait_for(&terminal, "Continue it on which agent?");
    terminal.settle(
        std::time::Duration::from_millis(300),
        std::time::Duration::from_secs(5),
    );
    terminal.type_keys("\r").unwrap();
    wait_until(|| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("ARGS=")
    });
    let pid = terminal.pid();
    let screen = terminal.end();
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    // Codex, in handoff's own process, on the session of this conversation (its interactive
    // command), which holds the Claude Code session picked.
    assert!(
        ran.starts_with(&format!("codex PID={pid} ARGS=resume ")),
        "{ran} {screen:?}"
    );
    let resumed = ran.trim().rsplit(' ').next().unwrap();
    let continued = read("codex", resumed, &home.path().join(".codex"));
    let original = read("claude-code", &made[0], &home.path().join(".claude"));
    assert_eq!(continued.events.len(), original.events.len());
}

/// `continue` into `root` with `--json` and `extra` arguments.
fn continue_json_with(from: &str, to: &str, root: &Path, extra: &[&str]) -> Output {
    let here = repo();
    let mut args = vec![
        "continue",
        "--from",
        from,
        "--to",
        to,
        "--store-root",
        root.to_str().unwrap(),
        "--cwd",
        here.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    handoff(&args)
}

/// Issue 26: one conversation hops Claude Code → Codex → Claude Code → Codex, each side growing
/// between hops (the plugin's append stands in for the CLI's turn). Each hop carries the
/// conversation on; the user's own session is never touched; the Codex episode is found by
/// content and extended with the same id; `sessions` shows one conversation; `--into` extends
/// the user's session only when asked, and refuses one that is not a prefix; a divergence makes a
/// new episode naming the old one and the first differing event.
#[test]
fn every_hop_of_one_conversation_reuses_its_episode() {
    let scratch = tempfile::tempdir().unwrap();
    let claude_root = scratch.path().join("claude");
    let codex_root = scratch.path().join("codex");
    let source = read("claude-code", SAMPLE, &claude_root);
    let claude = StoreRoot::new(&claude_root).unwrap();
    let codex = StoreRoot::new(&codex_root).unwrap();
    // The user's own session (a plugin-written copy stands in for it: it carries no conversation).
    let origin = ClaudePlugin
        .writer()
        .create(&claude, "claude-code", &source, &Default::default())
        .unwrap();
    let origin_bytes = std::fs::read(&origin.path).unwrap();
    let origin_from = format!("claude-code:{}", origin.path.display());

    let hop1 = json(&continue_json_with(&origin_from, "codex", &codex_root, &[]));
    assert_eq!(hop1["action"]["kind"], "created");
    assert_eq!(hop1["hop"], 1);
    assert_eq!(hop1["source_known_by"], "origin");
    let conversation = hop1["conversation"].as_str().unwrap().to_owned();
    let origin_first = read("claude-code", &origin.id, &claude_root).events[0]
        .id
        .clone();
    assert_eq!(conversation, format!("claude-code:{origin_first}"));
    let codex_id = hop1["session"]["id"].as_str().unwrap().to_owned();
    let codex_path = hop1["session"]["path"].as_str().unwrap().to_owned();

    // A turn in Codex, then back to Claude Code: a new episode there, the origin untouched.
    let on_codex = read("codex", &codex_id, &codex_root);
    CodexPlugin
        .append_id(&codex, "codex", &codex_id, &two_more(&on_codex))
        .unwrap();
    let hop2 = json(&continue_json_with(
        &format!("codex:{codex_path}"),
        "claude-code",
        &claude_root,
        &[],
    ));
    assert_eq!(hop2["action"]["kind"], "created");
    assert_eq!(
        (hop2["hop"].as_u64(), hop2["source_known_by"].as_str()),
        (Some(2), Some("ledger"))
    );
    assert_eq!(hop2["conversation"], conversation.as_str());
    let episode_id = hop2["session"]["id"].as_str().unwrap().to_owned();
    assert_ne!(episode_id, origin.id);
    assert_eq!(std::fs::read(&origin.path).unwrap(), origin_bytes);

    // A turn in that Claude Code episode, then to Codex again: the Codex episode is a prefix of
    // it (by content; every id differs per target), so the same id gets the suffix.
    let on_claude = read("claude-code", &episode_id, &claude_root);
    ClaudePlugin
        .append_id(&claude, "claude-code", &episode_id, &two_more(&on_claude))
        .unwrap();
    let episode_from = format!("claude-code:{}", hop2["session"]["path"].as_str().unwrap());
    let hop3 = json(&continue_json_with(
        &episode_from,
        "codex",
        &codex_root,
        &[],
    ));
    assert_eq!(
        hop3["action"],
        serde_json::json!({"kind": "appended", "events": 2})
    );
    assert_eq!(hop3["session"]["id"], codex_id.as_str());
    assert_eq!(hop3["hop"], 3);
    assert_eq!(hop3["conversation"], conversation.as_str());
    assert_eq!(
        read("codex", &codex_id, &codex_root).events.len(),
        source.events.len() + 4
    );
    // Again, nothing new: unchanged, the same hop.
    let again = json(&continue_json_with(
        &episode_from,
        "codex",
        &codex_root,
        &[],
    ));
    assert_eq!(again["action"]["kind"], "unchanged");
    assert_eq!(again["hop"], 3);

    // `sessions` shows which sessions belong to the conversation.
    let listed = json(&handoff(&[
        "sessions",
        "claude-code",
        "--store-root",
        claude_root.to_str().unwrap(),
        "--json",
    ]));
    let of = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session"]["id"] == id)
            .unwrap_or_else(|| panic!("{id} listed: {listed:#}"))
            .clone()
    };
    assert_eq!(of(&episode_id)["conversation"], conversation.as_str());
    assert_eq!(of(&episode_id)["hop"], 2);
    // The origin starts the conversation: the same id, hop 0.
    assert_eq!(of(&origin.id)["conversation"], conversation.as_str());
    assert_eq!(of(&origin.id)["hop"], 0);
    let text = handoff(&[
        "sessions",
        "claude-code",
        "--store-root",
        claude_root.to_str().unwrap(),
    ]);
    let label = handoff_host::episodes::short_label(&conversation);
    let lines = String::from_utf8(text.stdout).unwrap();
    assert_eq!(lines.matches(&label).count(), 2, "{lines}");
    assert!(
        lines.contains("hop 2") && lines.contains("origin"),
        "{lines}"
    );

    // `--into` the user's own session: asked for by name, it is extended (a prefix).
    let into = json(&continue_json_with(
        &format!("codex:{codex_path}"),
        "claude-code",
        &claude_root,
        &["--into", &origin.id],
    ));
    assert_eq!(into["action"]["kind"], "appended");
    assert_eq!(into["session"]["id"], origin.id.as_str());
    let into_bytes = std::fs::read(&origin.path).unwrap();
    assert!(into_bytes.starts_with(&origin_bytes));
    // Later hops still use the episode, not the user's session.
    let later = json(&continue_json_with(
        &format!("codex:{codex_path}"),
        "claude-code",
        &claude_root,
        &[],
    ));
    assert_eq!(later["session"]["id"], episode_id.as_str());
    assert_eq!(std::fs::read(&origin.path).unwrap(), into_bytes);

    // Both sides grow apart: the Claude Code episode's new turn is not in Codex, and Codex's
    // new turn not in the episode. `--into` the episode is refused with the first difference,
    // nothing written; the default makes a new Codex episode naming where the old one diverged.
    let on_codex = read("codex", &codex_id, &codex_root);
    let mut codex_turn = two_more(&on_codex);
    if let Body::User { content } = &mut codex_turn[0].body {
        content[0] = Part::text("Only in Codex.");
    }
    for (n, event) in codex_turn.iter_mut().enumerate() {
        event.id = format!("only-in-codex-{n}");
    }
    CodexPlugin
        .append_id(&codex, "codex", &codex_id, &codex_turn)
        .unwrap();
    let on_claude = read("claude-code", &episode_id, &claude_root);
    ClaudePlugin
        .append_id(&claude, "claude-code", &episode_id, &two_more(&on_claude))
        .unwrap();
    let codex_bytes = std::fs::read(&codex_path).unwrap();
    let refused = continue_json_with(&episode_from, "codex", &codex_root, &["--into", &codex_id]);
    assert_fails(&refused, 1, "is not a prefix of the source");
    assert_eq!(std::fs::read(&codex_path).unwrap(), codex_bytes);
    let diverged = json(&continue_json_with(
        &episode_from,
        "codex",
        &codex_root,
        &[],
    ));
    assert_eq!(diverged["action"]["kind"], "created");
    assert_ne!(diverged["session"]["id"], codex_id.as_str());
    assert_eq!(diverged["diverged_from"]["id"], codex_id.as_str());
    assert_eq!(
        diverged["diverged_at"]["index"].as_u64(),
        Some(on_codex.events.len() as u64),
        "{diverged:#}"
    );
    assert_eq!(std::fs::read(&codex_path).unwrap(), codex_bytes);
    assert_eq!(diverged["conversation"], conversation.as_str());
}
