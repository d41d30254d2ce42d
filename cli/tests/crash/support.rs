//! What every crash test shares: the `handoff` binary with a private HOME, TMPDIR and certificate
//! folder; synthetic Claude Code sources; and the check that nothing was left behind.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_host::{CreateOptions, Origin, Plugin, ReadFrom, StoreRoot, Transcript};

/// One configuration for every test of this binary: a certificate folder certified once.
pub struct Shared {
    _dir: tempfile::TempDir,
    pub config: PathBuf,
    pub certificates: PathBuf,
}

pub fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let certificates = dir.path().join("certificates");
        let config = write_config(dir.path(), &certificates);
        let tmp = dir.path().join("tmp-init");
        std::fs::create_dir(&tmp).unwrap();
        let out = handoff(&config, &tmp).arg("targets").output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        Shared {
            _dir: dir,
            config,
            certificates,
        }
    })
}

/// A configuration file in `dir` naming `certificates`.
pub fn write_config(dir: &Path, certificates: &Path) -> PathBuf {
    let config = dir.join("config.toml");
    std::fs::write(&config, format!("certificate_dir = {certificates:?}\n")).unwrap();
    config
}

/// The `handoff` command with `config`, a HOME that does not exist and `tmp` as its TMPDIR (so
/// anything it leaves in a temp dir is seen), logging its engine phases at debug.
pub fn handoff(config: &Path, tmp: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_handoff"));
    command
        .arg("--config")
        .arg(config)
        .env("HOME", "/nonexistent-home-handoff-tests")
        .env_remove("HANDOFF_CERT_DIR")
        .env("TMPDIR", tmp)
        .env("RUST_LOG", "warn,handoff_host::continuation=debug")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch place for one test: a store root, a TMPDIR, and sources.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Scratch { dir }
    }

    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// `continue --from claude-code:SOURCE --to codex` into `root` (locator fixed, so a prefix and the
/// whole conversation are one conversation).
pub fn continue_cmd(config: &Path, tmp: &Path, source: &Path, root: &Path) -> Command {
    let mut command = handoff(config, tmp);
    command
        .args([
            "continue",
            "--to",
            "codex",
            "--locator",
            "crash-test",
            "--json",
        ])
        .arg("--from")
        .arg(format!("claude-code:{}", source.display()))
        .arg("--store-root")
        .arg(root);
    command
}

/// `continue --from claude-code:SOURCE --to codex` into `root` as a person runs it: no locator,
/// so the engine finds the source's conversation (its origin's first event, or the episode
/// ledger) and the conversation's Codex episode by content.
pub fn continue_found_cmd(config: &Path, tmp: &Path, source: &Path, root: &Path) -> Command {
    let mut command = handoff(config, tmp);
    command
        .args(["continue", "--to", "codex", "--json"])
        .arg("--from")
        .arg(format!("claude-code:{}", source.display()))
        .arg("--store-root")
        .arg(root);
    command
}

/// The JSON a successful `continue --json` printed.
pub fn continued(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        stderr(out)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// A synthetic conversation of `turns` turns (user → assistant text and a tool call → a ~1.3 KB
/// tool result → assistant), a few hundred bytes of Codex rollout per event.
pub fn conversation(turns: usize) -> Transcript {
    let origin = Origin::new("anthropic", "claude-opus-4-8", "anthropic-messages");
    let mut transcript = handoff_transcript::synthetic::tool_turns(turns, &origin);
    // A directory that exists here: `continue` refuses a source cwd that does not (without --cwd).
    transcript.cwd = Some(std::env::temp_dir().display().to_string());
    transcript
}

/// Writes `transcript` as a Claude Code session under `dir` and returns its file.
pub fn claude_source(dir: &Path, transcript: &Transcript) -> PathBuf {
    let root = StoreRoot::new(dir).unwrap();
    ClaudePlugin
        .writer()
        .create(&root, "claude-code", transcript, &CreateOptions::default())
        .expect("write the source session")
        .path
}

/// The transcript the `handoff` binary reads from a Claude Code source file.
pub fn read_source(path: &Path) -> Transcript {
    ClaudePlugin
        .reader()
        .read(ReadFrom::File("claude-code", path))
        .expect("read the source")
}

/// Every Codex rollout under `root`.
pub fn rollouts(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(&root.join("sessions"), &mut |p| {
        if p.extension().is_some_and(|e| e == "jsonl") {
            found.push(p.to_owned());
        }
    });
    found.sort();
    found
}

/// Whether the rollout at `path` reads back as exactly `transcript` (Codex's comparison).
pub fn reads_as(path: &Path, transcript: &Transcript) -> Result<(), String> {
    let back = CodexPlugin
        .reader()
        .read(ReadFrom::File("codex", path))
        .map_err(|e| e.to_string())?;
    CodexPlugin::target_manifest()
        .comparison()
        .diff(transcript, &back)
        .map_err(|d| d.to_string())
}

pub fn walk(dir: &Path, found: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, found);
        } else {
            found(&path);
        }
    }
}

/// Everything a run may leave that must not survive the next run: temp files anywhere in the
/// store, journals and backups under `.handoff`, anything in the run's TMPDIR, certification
/// scratch folders.
pub fn leftovers(root: &Path, tmp: &Path, certificates: &Path) -> Vec<String> {
    let mut found = Vec::new();
    walk(root, &mut |p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        let under_handoff = p
            .strip_prefix(root)
            .is_ok_and(|r| r.starts_with(".handoff"));
        let bookkeeping = under_handoff
            && (p.strip_prefix(root.join(".handoff/locks")).is_ok()
                || is_ledger_of_existing_sessions(root, p)
                || is_owned_copy_of_an_existing_rollout(root, p));
        if name.starts_with(".handoff-tmp-") || (under_handoff && !bookkeeping) {
            found.push(p.display().to_string());
        }
    });
    walk(tmp, &mut |p| found.push(p.display().to_string()));
    if let Ok(entries) = std::fs::read_dir(tmp) {
        found.extend(entries.flatten().map(|e| e.path().display().to_string()));
    }
    if let Ok(entries) = std::fs::read_dir(certificates.join("scratch")) {
        found.extend(entries.flatten().map(|e| e.path().display().to_string()));
    }
    found.sort();
    found.dedup();
    found
}

/// Whether `path` is an episode ledger (`.handoff/episodes/<key>.json`, kept across runs like
/// the locks) every entry of which names a session that exists: a killed run must never leave
/// the ledger naming a session it did not commit.
fn is_ledger_of_existing_sessions(root: &Path, path: &Path) -> bool {
    if path.parent() != Some(&root.join(".handoff/episodes"))
        || path.extension().is_none_or(|e| e != "json")
    {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(ledger) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let resolved = std::fs::canonicalize(root).unwrap();
    ledger["episodes"].as_array().is_some_and(|episodes| {
        episodes.iter().all(|e| {
            e["path"]
                .as_str()
                .is_some_and(|rel| resolved.join(rel).is_file())
        })
    })
}

/// Whether `path` is the Codex plugin's copy of a rollout's marker
/// (`.handoff/owned/codex/<thread id>.json`) whose rollout exists: it goes with its rollout.
fn is_owned_copy_of_an_existing_rollout(root: &Path, path: &Path) -> bool {
    if path.parent() != Some(&root.join(".handoff/owned/codex")) {
        return false;
    }
    let Some(id) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json"))
    else {
        return false;
    };
    rollouts(root)
        .iter()
        .any(|r| r.to_string_lossy().ends_with(&format!("-{id}.jsonl")))
}

/// What became of a run that was killed (or had finished first).
pub struct Killed {
    /// It exited by itself before the kill.
    pub finished: bool,
    /// The last engine phase it logged (`locked`, `journaled`, `written`, `verified`,
    /// `committed`), or `reading` before the engine.
    pub phase: String,
    pub stderr: String,
}

/// Runs `command` and SIGKILLs it `extra` after it logged the engine phase `phase` (`reading`:
/// from its start), unless it finished first.
pub fn kill_at(mut command: Command, phase: &str, extra: Duration) -> Killed {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (seen, phases) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if strip_ansi(&line).contains("phase=") {
                let _ = seen.send(last_phase(&line));
            }
            text += &line;
            text.push('\n');
        }
        text
    });
    let mut finished = false;
    if phase != "reading" {
        loop {
            match phases.recv_timeout(Duration::from_millis(5)) {
                Ok(p) if p == phase => break,
                Ok(_) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if child.try_wait().unwrap().is_some() {
                        finished = true;
                        break;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    finished = true;
                    break;
                }
            }
        }
    }
    if !finished {
        finished = wait_until(&mut child, Instant::now() + extra);
    }
    if !finished {
        child.kill().unwrap();
    }
    child.wait().unwrap();
    let stderr = reader.join().unwrap();
    Killed {
        finished,
        phase: last_phase(&stderr),
        stderr,
    }
}

fn wait_until(child: &mut Child, deadline: Instant) -> bool {
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(2)));
    }
}

/// The last `phase=` an engine log line names (colour codes ignored).
pub fn last_phase(stderr: &str) -> String {
    strip_ansi(stderr)
        .lines()
        .rev()
        .filter_map(|l| l.split("phase=").nth(1))
        .map(|p| {
            p.trim_matches('"')
                .split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .next()
        .unwrap_or_else(|| "reading".into())
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// When each engine phase began in an uninterrupted run of `command`, from its start; and when
/// it ended.
pub fn phase_times(mut command: Command) -> (Vec<(String, Duration)>, Duration, Output) {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut phases = Vec::new();
        let mut text = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let line = line.unwrap();
            if strip_ansi(&line).contains("phase=") {
                phases.push((last_phase(&line), started.elapsed()));
            }
            text += &line;
            text.push('\n');
        }
        (phases, text)
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let total = started.elapsed();
    let (phases, text) = reader.join().unwrap();
    (
        phases,
        total,
        Output {
            status,
            stdout,
            stderr: text.into_bytes(),
        },
    )
}

/// Copies the folder `from` to `to` (files and folders only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A number from the environment, or `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
