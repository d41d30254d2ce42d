//! `handoff continue` of a generated session of hundreds of MB, in both directions (Codex →
//! Claude Code and Claude Code → Codex, Codex → Qwen Code and Qwen Code → Codex), and from
//! Claude Code into pi, OpenCode and Copilot CLI, with the peak resident memory of the `handoff`
//! process checked (its `ru_maxrss`, from `wait4`) and the continuation verified (the engine's
//! read-back verify, and `--json` saying what it created).
//!
//! The session's size: `HANDOFF_MEMORY_TEST_MB`, 400 by default (about 2 minutes for both in a
//! debug build on two cores, 16 s in release; see `docs/continuation.md`). The generated
//! sessions are written into a temp dir and removed with it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_host::{
    CreateOptions, Event, EventStream, Origin, Plugin, PluginError, StoreRoot, Transcript,
};
use handoff_qwen::QwenPlugin;
use handoff_transcript::synthetic::LongSession;

/// The limit the issue sets for the process (its bench aims at half of it).
const PEAK_LIMIT: u64 = 128 << 20;

fn size_mb() -> u64 {
    std::env::var("HANDOFF_MEMORY_TEST_MB")
        .ok()
        .map(|v| v.parse().expect("HANDOFF_MEMORY_TEST_MB is a number of MB"))
        .unwrap_or(400)
}

/// A generated session as a writer's stream (never held).
struct Generated(LongSession);

impl EventStream for Generated {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        Ok(self.0.next())
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        Err(PluginError::Other(
            "the generated session is streamed, never held".into(),
        ))
    }
}

/// About this many bytes a turn in either format (measured: 3.6 KB of text, and a 64 KiB image
/// every 20th turn, base64 in both).
const BYTES_A_TURN: u64 = 3_700 + (64 << 10) * 4 / 3 / 20;

/// About this many bytes a turn of text alone.
const TEXT_BYTES_A_TURN: u64 = 3_100;

/// What a continuation continues: a generated session of `target`, with an image every 20th turn
/// and a compaction every 500th (`rich`, for a target that carries them) or text alone.
struct Source<'p> {
    plugin: &'p dyn Plugin,
    target: &'p str,
    rich: bool,
}

impl Source<'_> {
    /// A session of about `mb` MB of this kind.
    fn session(&self, mb: u64, origin: &Origin) -> LongSession {
        let bytes = mb << 20;
        if self.rich {
            LongSession::new((bytes / BYTES_A_TURN) as usize, origin, (20, 64 << 10), 500)
        } else {
            LongSession::new((bytes / TEXT_BYTES_A_TURN) as usize, origin, (0, 0), 0)
        }
    }
}

/// Writes `source`'s session of about `mb` MB with its plugin's own writer; returns its path.
fn generate(source: &Source<'_>, root: &Path, origin: &Origin, mb: u64) -> PathBuf {
    let session = source.session(mb, origin);
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        ..CreateOptions::default()
    };
    let root = StoreRoot::new(root).expect("root");
    source
        .plugin
        .writer()
        .create_streamed(&root, source.target, &mut Generated(session), &options)
        .expect("write the generated session")
        .path
}

/// Runs `handoff` and returns its exit, output and peak resident memory in bytes.
fn run_measured(mut command: Command) -> (i32, String, String, u64) {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run handoff");
    let pid = child.id() as libc::pid_t;
    // Read the pipes on threads so a full pipe never blocks the child.
    let mut child = child;
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child spawned above, which nothing else waits for.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    std::mem::forget(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // ru_maxrss is in KiB on Linux.
    let peak = usage.ru_maxrss as u64 * 1024;
    (code, out.join().unwrap(), err.join().unwrap(), peak)
}

fn continue_in_bounded_memory(
    (source, source_target): (&dyn Plugin, &str),
    to: &str,
    provider: &str,
    limit: u64,
) {
    continue_with(source, source_target, to, provider, limit, &[]);
}

/// The continuation of a generated `source_target` session into `to`, with `extra` arguments.
fn continue_with(
    source: &dyn Plugin,
    source_target: &str,
    to: &str,
    provider: &str,
    limit: u64,
    extra: &[&str],
) {
    let source = Source {
        plugin: source,
        target: source_target,
        rich: true,
    };
    continue_from(&source, to, provider, limit, extra);
}

/// A generated session of `target`, text alone.
fn text_alone<'p>(plugin: &'p dyn Plugin, target: &'p str) -> Source<'p> {
    Source {
        plugin,
        target,
        rich: false,
    }
}

/// The continuation of `source` into `to`, with `extra` arguments.
fn continue_from(source: &Source<'_>, to: &str, provider: &str, limit: u64, extra: &[&str]) {
    let mb = size_mb();
    let dir = tempfile::tempdir().expect("temp dir");
    let origin = Origin {
        provider: provider.into(),
        model: Some("model-1".into()),
        api: None,
    };
    let source_target = source.target;
    let path = generate(source, &dir.path().join("source"), &origin, mb);
    let len = std::fs::metadata(&path).expect("source").len();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("certificate_dir = {:?}\n", dir.path().join("certificates")),
    )
    .unwrap();
    let handoff = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_handoff"));
        command
            .arg("--config")
            .arg(&config)
            .args(args)
            .env("HOME", dir.path().join("home"));
        command
    };
    // The built-ins are certified on first use: that first, so the peak measured is the
    // continuation's alone.
    let certified = handoff(&["targets"]).output().expect("run handoff targets");
    assert!(certified.status.success(), "{certified:?}");
    let source_arg = format!("{source_target}:{}", path.display());
    let (root, cwd) = (dir.path().join("target"), dir.path().to_owned());
    let mut command = handoff(&["continue", "--json", "--from", &source_arg, "--to", to]);
    command
        .arg("--store-root")
        .arg(&root)
        .arg("--cwd")
        .arg(&cwd)
        .args(extra);
    let started = std::time::Instant::now();
    let (code, out, err, peak) = run_measured(command);
    eprintln!(
        "{source_target} → {to}: {:.1} MB continued in {:.1} s, peak {:.1} MiB",
        len as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        peak as f64 / (1024.0 * 1024.0)
    );
    assert_eq!(code, 0, "handoff continue failed:\n{err}");
    assert_quiet(&err);
    let answer: serde_json::Value = serde_json::from_str(&out).expect("--json output");
    assert_eq!(answer["action"]["kind"], "created", "{answer}");
    let written = answer["session"]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("no session path in {answer}"));
    // OpenCode's session is rows of its database (and its write-ahead log); the path is
    // handoff's handle of them.
    let written_len = if to == "opencode" {
        ["opencode.db", "opencode.db-wal"]
            .iter()
            .filter_map(|f| std::fs::metadata(root.join(f)).ok())
            .map(|m| m.len())
            .sum()
    } else {
        std::fs::metadata(written).expect("the new session").len()
    };
    assert!(
        written_len > len / 2,
        "the new session is much smaller than its source"
    );
    assert!(
        len >= (mb << 20) * 9 / 10,
        "the source is {len} bytes, not about {mb} MB"
    );
    assert!(
        peak < limit,
        "{source_target} → {to}: peak {peak} bytes for a {len}-byte session (limit {limit})"
    );
}

#[test]
fn codex_to_claude_code_in_bounded_memory() {
    continue_in_bounded_memory((&CodexPlugin, "codex"), "claude-code", "openai", PEAK_LIMIT);
}

#[test]
fn claude_code_to_codex_in_bounded_memory() {
    continue_in_bounded_memory(
        (&ClaudePlugin, "claude-code"),
        "codex",
        "anthropic",
        PEAK_LIMIT,
    );
}

/// Into pi, whose writer writes each event as it arrives too (before, the engine collected the
/// whole transcript for it: several hundred MB at this size), and whose reader keeps a few
/// bytes an entry for the verify's read-back: held to the bench's aim, half the limit.
#[test]
fn claude_code_to_pi_in_bounded_memory() {
    continue_in_bounded_memory(
        (&ClaudePlugin, "claude-code"),
        "pi",
        "anthropic",
        PEAK_LIMIT / 2,
    );
}

/// Into OpenCode, whose writer spools the events and whose reader reads a message at a time
/// (both held the whole session before); the generated compactions are dropped, as OpenCode
/// carries none.
#[test]
fn claude_code_to_opencode_in_bounded_memory() {
    continue_with(
        &ClaudePlugin,
        "claude-code",
        "opencode",
        "anthropic",
        PEAK_LIMIT / 2,
        &["--drop", "compaction"],
    );
}

/// Into Copilot CLI, whose reader reads its log a line at a time (it read the whole file, then
/// held every event, before); the generated compactions are dropped, as Copilot CLI writes
/// none of another CLI's.
#[test]
fn claude_code_to_copilot_cli_in_bounded_memory() {
    continue_with(
        &ClaudePlugin,
        "claude-code",
        "copilot-cli",
        "anthropic",
        PEAK_LIMIT / 2,
        &["--drop", "compaction"],
    );
}

/// From Qwen Code, whose reader finds the chain in one pass that keeps 16 bytes a record and reads
/// the chain's records again one model turn at a time (it held every record, parsed, before);
/// text alone, as Qwen Code carries no image.
#[test]
fn qwen_code_to_codex_in_bounded_memory() {
    let source = text_alone(&QwenPlugin, "qwen-code");
    continue_from(&source, "codex", "openai", PEAK_LIMIT / 2, &[]);
}

/// Into Qwen Code: the verify reads the new chat back through the same reader.
#[test]
fn codex_to_qwen_code_in_bounded_memory() {
    let source = text_alone(&CodexPlugin, "codex");
    continue_from(&source, "qwen-code", "openai", PEAK_LIMIT / 2, &[]);
}

/// Nothing of a progress bar (carriage returns, escapes, its counts) in what went to a pipe.
fn assert_quiet(stderr: &str) {
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}') && !stderr.contains(" events, "),
        "progress shown on a pipe: {stderr:?}"
    );
}

/// Without `--json`, a continuation whose stderr is a pipe shows no progress either.
#[test]
fn a_continuation_into_a_pipe_shows_no_progress() {
    let dir = tempfile::tempdir().expect("temp dir");
    let origin = Origin {
        provider: "openai".into(),
        model: None,
        api: None,
    };
    let root = StoreRoot::new(dir.path().join("source")).expect("root");
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        ..CreateOptions::default()
    };
    let session = LongSession::new(600, &origin, (0, 0), 0);
    let path = CodexPlugin
        .writer()
        .create_streamed(&root, "codex", &mut Generated(session), &options)
        .expect("write the source")
        .path;
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("certificate_dir = {:?}\n", dir.path().join("certificates")),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .arg("--config")
        .arg(&config)
        .args(["continue", "--from"])
        .arg(format!("codex:{}", path.display()))
        .args(["--to", "claude-code", "--store-root"])
        .arg(dir.path().join("target"))
        .arg("--cwd")
        .arg(dir.path())
        .env("HOME", dir.path().join("home"))
        .output()
        .expect("run handoff");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("created"),
        "{out:?}"
    );
    assert_quiet(&stderr);
}
