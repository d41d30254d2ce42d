//! Running each check of a plugin file in its own child process.
//!
//! A plugin loaded into a process can take the process down (an abort, a segfault, an infinite
//! loop). So the `conformance` binary re-executes itself once per check with the hidden `child`
//! subcommand: the child loads the plugin, runs one check and writes its [`CheckResult`] as JSON
//! to a file. The parent waits with a timeout; a child that dies, hangs or writes nothing is a
//! failed check whose evidence says how it ended and what it last printed.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use handoff_conformance::report::{CheckResult, Status};

/// The schema of what a child writes.
pub const CHILD_SCHEMA: &str = "handoff.conformance-child/1";

/// What a child reports: the hash of the file it loaded and its answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildOutput {
    /// Always [`CHILD_SCHEMA`].
    pub schema: String,
    /// The sha256 of the plugin file the child loaded.
    pub sha256: String,
    /// The answer.
    pub answer: ChildAnswer,
}

/// A child's answer. Externally tagged: serde_json's `arbitrary_precision` cannot read floats
/// (durations) back through an internally tagged enum.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildAnswer {
    /// The plugin loaded: its manifest, the checks the suite would run and its capabilities.
    Loaded {
        /// The manifest.
        manifest: handoff_host::Manifest,
        /// Every check id, in order.
        check_ids: Vec<String>,
        /// The live check ids (`conformance run --live`), in order.
        #[serde(default)]
        live_check_ids: Vec<String>,
        /// The capability ids it offers.
        capabilities: Vec<String>,
    },
    /// The plugin did not load.
    LoadFailed {
        /// The loader's error kind.
        kind: String,
        /// The one-line message.
        message: String,
    },
    /// One check ran.
    Check {
        /// Its result.
        result: CheckResult,
    },
}

/// How a child process ended.
#[derive(Debug)]
pub struct ChildRun {
    /// What it wrote, if it wrote something readable.
    pub output: Option<ChildOutput>,
    /// How it ended, in words, when it did not end cleanly.
    pub failure: Option<String>,
    /// The last lines it printed on stderr and stdout.
    pub tail: Vec<String>,
    /// Wall time.
    pub duration: Duration,
}

/// Runs `exe child --plugin PLUGIN [--check ID]` with a timeout.
pub fn run_child(
    exe: &Path,
    plugin: &Path,
    check: Option<&str>,
    timeout: Duration,
) -> std::io::Result<ChildRun> {
    let scratch = tempfile::Builder::new()
        .prefix("handoff-conformance-child-")
        .tempdir()?;
    let out = scratch.path().join("output.json");
    let log = scratch.path().join("child.log");
    let log_file = std::fs::File::create(&log)?;
    let mut command = Command::new(exe);
    command
        .arg("child")
        .arg("--plugin")
        .arg(plugin)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file);
    if let Some(check) = check {
        command.arg("--check").arg(check);
    }
    // The checks make their scratch directories inside the child's own temp dir, removed with it.
    command.env("TMPDIR", scratch.path());
    let started = Instant::now();
    let mut child = command.spawn()?;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let duration = started.elapsed();
    let output = std::fs::read_to_string(&out)
        .ok()
        .and_then(|text| serde_json::from_str::<ChildOutput>(&text).ok())
        .filter(|o| o.schema == CHILD_SCHEMA);
    let failure = match status {
        None => Some(format!(
            "timed out after {:.1} s; the check's process was killed",
            timeout.as_secs_f64()
        )),
        Some(status) if !status.success() => Some(describe(status)),
        Some(_) if output.is_none() => Some("the check's process exited without an answer".into()),
        Some(_) => None,
    };
    Ok(ChildRun {
        output,
        failure,
        tail: tail(&log, 12),
        duration,
    })
}

/// Turns a child run into the result of `check`.
pub fn check_result(check: &str, expected_sha256: &str, run: ChildRun) -> CheckResult {
    let failed = |mut evidence: Vec<String>, run: &ChildRun| {
        if !run.tail.is_empty() {
            evidence.push("last output of the check's process:".into());
            evidence.extend(run.tail.iter().map(|l| format!("  {l}")));
        }
        CheckResult {
            id: check.to_owned(),
            status: Status::Fail,
            duration_ms: run.duration.as_secs_f64() * 1e3,
            evidence,
        }
    };
    if let Some(failure) = &run.failure {
        return failed(vec![failure.clone()], &run);
    }
    let Some(output) = &run.output else {
        return failed(vec!["no answer".into()], &run);
    };
    if output.sha256 != expected_sha256 {
        return failed(
            vec![format!(
                "the plugin file changed during the run (sha256 {} when probed, {} in the check)",
                expected_sha256, output.sha256
            )],
            &run,
        );
    }
    match &output.answer {
        ChildAnswer::Check { result } => result.clone(),
        ChildAnswer::LoadFailed { message, .. } => failed(vec![message.clone()], &run),
        ChildAnswer::Loaded { .. } => {
            failed(vec!["the child answered the wrong question".into()], &run)
        }
    }
}

#[cfg(unix)]
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (_, Some(signal)) => format!(
            "the check's process was killed by signal {signal}{}",
            signal_name(signal)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
        (Some(code), _) => format!("the check's process exited with status {code}"),
        _ => "the check's process ended abnormally".into(),
    }
}

#[cfg(not(unix))]
fn describe(status: ExitStatus) -> String {
    format!("the check's process ended with {status}")
}

#[cfg(unix)]
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// The last `lines` non-empty lines of a log, read from its last 64 KiB only (a plugin may print
/// without end).
fn tail(path: &Path, lines: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    const WINDOW: u64 = 64 * 1024;
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    if file
        .seek(SeekFrom::Start(len.saturating_sub(WINDOW)))
        .is_err()
        || file.take(WINDOW).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| l.chars().take(300).collect())
        .collect()
}

/// The child's side: load the plugin at `plugin`, then answer (the list of checks, or one
/// check), writing a [`ChildOutput`] to `out`.
pub fn child_main(plugin: &Path, check: Option<&str>, out: &Path) -> std::io::Result<()> {
    let probe = handoff_host::loader::probe(plugin);
    let sha256 = match &probe {
        Ok(p) => p.file.sha256.clone(),
        Err(_) => String::new(),
    };
    let answer = match probe.and_then(handoff_host::loader::LoadedPlugin::load_probed) {
        Err(e) => ChildAnswer::LoadFailed {
            kind: e.kind().into(),
            message: e.to_string(),
        },
        Ok(loaded) => match check {
            None => ChildAnswer::Loaded {
                manifest: handoff_host::Plugin::manifest(&loaded),
                check_ids: handoff_conformance::check_ids(&loaded),
                live_check_ids: crate::live_check_ids(
                    &loaded,
                    handoff_conformance::corpus::entries(),
                ),
                capabilities: loaded
                    .capabilities()
                    .iter()
                    .map(|c| c.to_string())
                    .collect(),
            },
            Some(id) if id.starts_with("live/") => ChildAnswer::Check {
                result: crate::run_live_check(
                    &loaded,
                    id,
                    handoff_conformance::corpus::entries(),
                    &crate::LiveOptions::default(),
                ),
            },
            Some(id) => ChildAnswer::Check {
                result: handoff_conformance::run_check(
                    &loaded,
                    id,
                    &handoff_conformance::Options::default(),
                ),
            },
        },
    };
    let output = ChildOutput {
        schema: CHILD_SCHEMA.into(),
        sha256,
        answer,
    };
    let json = serde_json::to_vec(&output).map_err(std::io::Error::other)?;
    handoff_store::atomic::replace(out, |w| w.write_all(&json))
}

/// Where the `conformance` binary keeps certificates when `--cert-dir` is not given:
/// `$HANDOFF_CERT_DIR`, else `$XDG_DATA_HOME/handoff/certificates`, else
/// `~/.local/share/handoff/certificates`.
pub fn default_certificate_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HANDOFF_CERT_DIR") {
        return Some(dir.into());
    }
    if let Some(data) = std::env::var_os("XDG_DATA_HOME") {
        return Some(PathBuf::from(data).join("handoff/certificates"));
    }
    std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".local/share/handoff/certificates"))
}
