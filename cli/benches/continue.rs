//! `continue` Claude Code → Codex on synthetic 5,000- and 25,000-turn sessions, including the
//! read-back verify, beside the floor: parsing and re-serialising the same bytes with serde_json,
//! measured in the same run. Wall time is the median of several runs; peak memory is each phase's
//! VmHWM in a child process of its own, less that process's resident size before the work.
//!
//! Run: `cargo bench -p handoff-cli --bench continue` (add `-- --quick` for the 5,000-turn size
//! only). Figures are printed as a table and as ratios to the floor and to the input size.

use handoff_core::ById;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_core::continuation::{continue_conversation, ContinueRequest};
use handoff_core::{
    AssistantPart, Body, CreateOptions, Event, Origin, Part, Plugin, StoreRoot, Timestamp,
    ToolCall, Transcript,
};

const RUNS: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[5_000] } else { &[5_000, 25_000] };
    println!(
        "{:>7} {:>9} {:>10} {:>12} {:>6} {:>11} {:>14} {:>9}",
        "turns",
        "input MB",
        "floor ms",
        "continue ms",
        "ratio",
        "floor peak",
        "continue peak",
        "÷ input"
    );
    for &turns in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let source = write_source(dir.path(), turns);
        let input = std::fs::metadata(&source).expect("source").len();
        let floor = median((0..RUNS).map(|_| time(|| floor_pass(&source))).collect());
        let cont = median(
            (0..RUNS)
                .map(|i| time(|| continue_pass(&source, &dir.path().join(format!("codex-{i}")))))
                .collect(),
        );
        let read = median((0..RUNS).map(|_| time(|| read_pass(&source))).collect());
        eprintln!(
            "  read source alone: {:.0} ms, {:.2}× the floor",
            ms(read),
            read.as_secs_f64() / floor.as_secs_f64()
        );
        phases(&source, &dir.path().join("codex-phases"));
        let floor_peak = peak_of("floor", &source);
        let cont_peak = peak_of("continue", &source);
        let read_peak = peak_of("read", &source);
        eprintln!(
            "  peak of reading the source alone: {:.1} MB, {:.2}× the input",
            mb(read_peak),
            read_peak as f64 / input as f64
        );
        println!(
            "{:>7} {:>9.1} {:>10.0} {:>12.0} {:>5.2}× {:>8.1} MB {:>11.1} MB {:>8.2}×",
            turns,
            mb(input),
            ms(floor),
            ms(cont),
            cont.as_secs_f64() / floor.as_secs_f64(),
            mb(floor_peak),
            mb(cont_peak),
            cont_peak as f64 / input as f64,
        );
    }
}

/// A Claude Code session of `turns` turns: user → assistant text + tool call → ~1.3 KB tool
/// result → assistant text, written by the Claude plugin's own writer.
fn write_source(dir: &Path, turns: usize) -> PathBuf {
    let output: String =
        "drwxr-xr-x 2 dev dev 4096 Nov 30 00:41 src/handoff/example/file.rs\n".repeat(19);
    let origin = Origin {
        provider: "anthropic".into(),
        model: Some("claude-opus-4-8".into()),
        api: Some("anthropic-messages".into()),
    };
    let mut events = Vec::with_capacity(turns * 4);
    let mut t = 1_795_999_300_000i64;
    let mut next = |body| {
        t += 1_000;
        let n = events.len();
        events.push(Event::new(format!("e{n}"), Timestamp::from_millis(t), body));
    };
    for i in 0..turns {
        next(Body::User {
            content: vec![Part::text(format!(
                "Turn {i}: list the files under src and tell me which changed."
            ))],
        });
        next(Body::Assistant {
            content: vec![
                AssistantPart::text("I'll list them."),
                AssistantPart::ToolCall(ToolCall {
                    id: format!("toolu_{i:020}"),
                    name: "Bash".into(),
                    arguments: serde_json::json!({"command": "ls -la src", "description": "List"}),
                }),
            ],
            origin: Some(origin.clone()),
        });
        next(Body::ToolResult {
            call_id: format!("toolu_{i:020}"),
            content: vec![Part::text(output.clone())],
            is_error: false,
        });
        next(Body::Assistant {
            content: vec![AssistantPart::text(format!(
                "In turn {i}, file.rs changed."
            ))],
            origin: Some(origin.clone()),
        });
    }
    let mut transcript = Transcript::new(events);
    transcript.cwd = Some("/home/dev/proj".into());
    let root = StoreRoot::new(dir.join("claude")).expect("root");
    let session = ClaudePlugin
        .writer()
        .create(&root, "claude-code", &transcript, &CreateOptions::default())
        .expect("write the source session");
    session.path
}

/// The floor: parse every line into a JSON value and serialise it again.
fn floor_pass(source: &Path) {
    let text = std::fs::read_to_string(source).expect("read");
    let mut out = Vec::with_capacity(text.len());
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("json");
        serde_json::to_writer(&mut out, &value).expect("write");
        out.push(b'\n');
    }
    std::hint::black_box(out);
}

/// Reading the source alone (the Claude Code reader), for its own peak memory.
fn read_pass(source: &Path) {
    let transcript = ClaudePlugin
        .reader()
        .read_path("claude-code", source)
        .expect("read the source");
    std::hint::black_box(transcript);
}

/// What `handoff continue --from claude-code:PATH --to codex` does: read the source, write the
/// Codex session, read it back and compare, plan the resume.
fn continue_pass(source: &Path, codex_root: &Path) {
    let transcript = ClaudePlugin
        .reader()
        .read_path("claude-code", source)
        .expect("read the source");
    let root = StoreRoot::new(codex_root).expect("root");
    let done = continue_conversation(
        &CodexPlugin,
        &ContinueRequest {
            transcript: &transcript,
            locator: "bench",
            target: "codex",
            root: &root,
            cwd: None,
            prompt: "go on",
            lock_wait: Duration::from_secs(5),
        },
    )
    .expect("continue");
    std::hint::black_box(done);
}

/// Where the time of one continuation goes (printed to stderr, for the docs).
fn phases(source: &Path, codex_root: &Path) {
    let root = StoreRoot::new(codex_root).expect("root");
    let start = Instant::now();
    let transcript = ClaudePlugin
        .reader()
        .read_path("claude-code", source)
        .expect("read");
    let read_source = start.elapsed();
    let start = Instant::now();
    let session = CodexPlugin
        .writer()
        .create(&root, "codex", &transcript, &CreateOptions::default())
        .expect("create");
    let write = start.elapsed();
    let start = Instant::now();
    let back = CodexPlugin
        .read_id(&root, "codex", &session.id)
        .expect("read back");
    let read_back = start.elapsed();
    let start = Instant::now();
    handoff_core::Comparison::for_target(&["openai".into()])
        .diff(&transcript, &back)
        .expect("equal");
    let compare = start.elapsed();
    let start = Instant::now();
    CodexPlugin
        .plan_id(&root, "codex", &session.id, "go on")
        .expect("plan");
    let plan = start.elapsed();
    eprintln!(
        "  phases: read source {:.0} ms, write {:.0} ms, read back {:.0} ms, compare {:.0} ms, plan {:.0} ms",
        ms(read_source), ms(write), ms(read_back), ms(compare), ms(plan)
    );
}

fn child(phase: &str, source: &Path) {
    let before = vm("VmRSS");
    let scratch = tempfile::tempdir().expect("temp dir");
    match phase {
        "floor" => floor_pass(source),
        "read" => read_pass(source),
        _ => continue_pass(source, &scratch.path().join("codex")),
    }
    let peak = vm("VmHWM");
    let mut out = std::io::stdout();
    writeln!(out, "{}", peak.saturating_sub(before)).expect("stdout");
}

fn peak_of(phase: &str, source: &Path) -> u64 {
    let exe = std::env::current_exe().expect("exe");
    let out = std::process::Command::new(exe)
        .args(["--child", phase])
        .arg(source)
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a number")
}

/// A `/proc/self/status` field in bytes.
fn vm(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
