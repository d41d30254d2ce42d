//! Writing and reading a synthetic 5,000-turn Claude Code session (user → assistant text +
//! tool_use → ~1.3 KB tool_result → assistant; about 18 MB), beside the floor: serde_json parsing
//! the same file into values and serialising them back to a file; and `create_streamed` (fed by
//! `HeldEvents`, which clones each event) beside `create`.
//!
//! Peak memory is measured in child processes (VmHWM from /proc/self/status), so each figure is
//! one operation's own: `cargo bench -p handoff-claude --bench claude_store`.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use handoff_claude::{ClaudePlugin, CLAUDE_CODE};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, EventStream, HeldEvents, Origin, Part, Plugin,
    PluginError, ReadFrom, StoreRoot, Timestamp, ToolCall, Transcript,
};

const TURNS: usize = 5_000;
const CWD: &str = "/home/dev/bench-project";

fn synthetic() -> Transcript {
    let origin = Some(Origin::new(
        "anthropic",
        "claude-opus-4-8",
        "anthropic-messages",
    ));
    let output: String = (0..26)
        .map(|i| format!("drwxr-xr-x  2 dev dev 4096 Nov 30 00:{i:02} src/module_{i:02}/\n"))
        .collect::<String>();
    let output = &output[..1300.min(output.len())];
    let mut events = Vec::with_capacity(TURNS * 4);
    let mut ms = 1_764_000_000_000;
    let mut at = || {
        ms += 1_000;
        Timestamp::from_millis(ms)
    };
    for turn in 0..TURNS {
        let call = format!("toolu_{turn:020}");
        events.push(Event::new(
            format!("u{turn}"),
            at(),
            Body::User {
                content: vec![Part::text(format!(
                    "Step {turn}: list the sources and tell me which module changed."
                ))],
            },
        ));
        events.push(Event::new(format!("a{turn}"), at(), Body::Assistant {
            content: vec![
                AssistantPart::text(format!("I'll list the sources for step {turn}.")),
                AssistantPart::ToolCall(ToolCall::new(call.clone(), "Bash", json!({"command": format!("ls -la src/ # {turn}"), "description": "List sources"}))),
            ],
            origin: origin.clone(),
        }));
        events.push(Event::new(
            format!("r{turn}"),
            at(),
            Body::tool_output(call, output),
        ));
        events.push(Event::new(
            format!("b{turn}"),
            at(),
            Body::Assistant {
                content: vec![AssistantPart::text(format!(
                    "Module {} changed in step {turn}; the rest are as before.",
                    turn % 26
                ))],
                origin: origin.clone(),
            },
        ));
    }
    let mut t = Transcript::new(events);
    t.cwd = Some(CWD.into());
    t
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some(CWD.into()),
        locator: None,
    }
}

fn create_streamed(root: &StoreRoot, t: &Transcript) -> PathBuf {
    ClaudePlugin
        .writer()
        .create_streamed(root, CLAUDE_CODE, &mut HeldEvents::new(t), &options())
        .expect("streamed write")
        .path
}

fn write_and_read(root: &StoreRoot, t: &Transcript) -> PathBuf {
    let s = ClaudePlugin
        .writer()
        .create(root, CLAUDE_CODE, t, &options())
        .expect("write");
    let back = ClaudePlugin
        .reader()
        .read(ReadFrom::File(CLAUDE_CODE, &s.path))
        .expect("read");
    assert_eq!(back.events.len(), t.events.len());
    s.path
}

/// The floor: parse every line of `file` into a serde_json value, serialise them all to `out`.
fn floor(file: &Path, out: &Path) {
    let mut values: Vec<Value> = Vec::new();
    for line in BufReader::new(File::open(file).unwrap()).lines() {
        values.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let f = File::create(out).unwrap();
    let mut w = BufWriter::new(&f);
    for v in &values {
        serde_json::to_writer(&mut w, v).unwrap();
        w.write_all(b"\n").unwrap();
    }
    w.flush().unwrap();
    drop(w);
    f.sync_all().unwrap();
}

fn timed(n: u64, mut op: impl FnMut() -> Duration) -> Duration {
    (0..n).map(|_| op()).sum()
}

fn bench(c: &mut Criterion) {
    let t = synthetic();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let sample = write_and_read(&root, &t);
    let size = std::fs::metadata(&sample).unwrap().len();
    println!(
        "synthetic session: {} events, {:.1} MB",
        t.events.len(),
        size as f64 / 1e6
    );
    let out = dir.path().join("floor.jsonl");

    let mut group = c.benchmark_group("claude-code 5000 turns");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("write + read", |b| {
        b.iter_custom(|n| {
            timed(n, || {
                let start = Instant::now();
                let path = write_and_read(&root, &t);
                let took = start.elapsed();
                std::fs::remove_file(path).unwrap();
                took
            })
        })
    });
    group.bench_function("write", |b| {
        b.iter_custom(|n| {
            timed(n, || {
                let start = Instant::now();
                let s = ClaudePlugin
                    .writer()
                    .create(&root, CLAUDE_CODE, &t, &options())
                    .unwrap();
                let took = start.elapsed();
                std::fs::remove_file(s.path).unwrap();
                took
            })
        })
    });
    group.bench_function("write streamed", |b| {
        b.iter_custom(|n| {
            timed(n, || {
                let start = Instant::now();
                let path = create_streamed(&root, &t);
                let took = start.elapsed();
                std::fs::remove_file(path).unwrap();
                took
            })
        })
    });
    group.bench_function("read", |b| {
        b.iter(|| {
            ClaudePlugin
                .reader()
                .read(ReadFrom::File(CLAUDE_CODE, &sample))
                .unwrap()
        })
    });
    group.bench_function("floor: serde_json parse + re-serialise", |b| {
        b.iter(|| floor(&sample, &out))
    });
    group.finish();
}

criterion_group!(benches, bench);

/// Peak resident memory of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn current_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// In a child process: run one operation and print `<rss before> <peak after>`.
fn probe(kind: &str, file: &Path) {
    match kind {
        "read" => {
            let before = current_rss();
            let t = ClaudePlugin
                .reader()
                .read(ReadFrom::File(CLAUDE_CODE, file))
                .unwrap();
            println!("{before} {} {}", peak_rss(), t.events.len());
        }
        // The synthetic session written to `file`, for the read probes under callgrind.
        "make" => {
            let dir = tempfile::tempdir_in(file.parent().unwrap()).unwrap();
            let root = StoreRoot::new(dir.path().join("store")).unwrap();
            std::fs::copy(create_streamed(&root, &synthetic()), file).unwrap();
        }
        "read-each" => {
            let before = current_rss();
            let mut n = 0;
            ClaudePlugin
                .reader()
                .read_each(ReadFrom::File(CLAUDE_CODE, file), &mut |_| {
                    n += 1;
                    true
                })
                .unwrap();
            println!("{before} {} {n}", peak_rss());
        }
        "write" => {
            let t = synthetic();
            let before = current_rss();
            let dir = tempfile::tempdir_in(file.parent().unwrap()).unwrap();
            let root = StoreRoot::new(dir.path().join("store")).unwrap();
            ClaudePlugin
                .writer()
                .create(&root, CLAUDE_CODE, &t, &options())
                .unwrap();
            println!("{before} {} {}", peak_rss(), t.events.len());
        }
        "write-streamed" => {
            let t = synthetic();
            let before = current_rss();
            let dir = tempfile::tempdir_in(file.parent().unwrap()).unwrap();
            let root = StoreRoot::new(dir.path().join("store")).unwrap();
            create_streamed(&root, &t);
            println!("{before} {} {}", peak_rss(), t.events.len());
        }
        "write-streamed-owned" => {
            let t = synthetic();
            let before = current_rss();
            let dir = tempfile::tempdir_in(file.parent().unwrap()).unwrap();
            let root = StoreRoot::new(dir.path().join("store")).unwrap();
            let n = t.events.len();
            let mut events = OwnedEvents(t.events.into_iter());
            ClaudePlugin
                .writer()
                .create_streamed(&root, CLAUDE_CODE, &mut events, &options())
                .unwrap();
            println!("{before} {} {n}", peak_rss());
        }
        // The transcript alone: what the two writes' instruction counts include besides writing.
        "build" => {
            let t = synthetic();
            println!("0 0 {}", t.events.len());
        }
        "floor" => {
            let before = current_rss();
            floor(file, &file.with_extension("floor"));
            println!("{before} {} 0", peak_rss());
        }
        _ => unreachable!(),
    }
}

fn memory_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let file = write_and_read(&root, &synthetic());
    let size = std::fs::metadata(&file).unwrap().len() as f64;
    println!(
        "peak memory (VmHWM) above the process's resident size before the operation; file {:.1} MB",
        size / 1e6
    );
    for kind in [
        "read",
        "read-each",
        "write",
        "write-streamed",
        "write-streamed-owned",
        "floor",
    ] {
        let out = Command::new(std::env::current_exe().unwrap())
            .env("CLAUDE_STORE_MEMORY_PROBE", kind)
            .env("CLAUDE_STORE_MEMORY_FILE", &file)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let nums: Vec<f64> = text
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        if let [before, peak, ..] = nums[..] {
            let used = peak - before;
            println!(
                "  {kind:<20} {:>7.1} MB  = {:.2}× the file",
                used / 1e6,
                used / size
            );
        } else {
            println!(
                "  {kind}: probe failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Write + read and the floor, alternated so load on a shared machine hits both alike; prints the
/// median of each and their ratio.
fn paired_ratio() {
    const PAIRS: usize = 9;
    let t = synthetic();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let sample = write_and_read(&root, &t);
    let out = dir.path().join("floor.jsonl");
    let (mut ours, mut floors) = (Vec::new(), Vec::new());
    for _ in 0..PAIRS {
        let start = Instant::now();
        let path = write_and_read(&root, &t);
        ours.push(start.elapsed().as_secs_f64());
        std::fs::remove_file(path).unwrap();
        let start = Instant::now();
        floor(&sample, &out);
        floors.push(start.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut ours), median(&mut floors));
    println!(
        "paired ({PAIRS} alternating runs, medians): write + read {:.0} ms, floor {:.0} ms, ratio {:.2}",
        a * 1e3,
        b * 1e3,
        a / b
    );
}

/// Events handed over by value, as a reader hands them to the engine (no clone, unlike
/// `HeldEvents`); it holds no transcript to start over with.
struct OwnedEvents(std::vec::IntoIter<Event>);

impl EventStream for OwnedEvents {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        Ok(self.0.next())
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        Err(PluginError::Other(
            "the bench's owned events cannot start over".into(),
        ))
    }
}

/// `create` and `create_streamed` alternated; prints the median of each and their ratio.
fn streamed_ratio() {
    const PAIRS: usize = 9;
    let t = synthetic();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let (mut held, mut streamed) = (Vec::new(), Vec::new());
    for _ in 0..PAIRS {
        let start = Instant::now();
        let s = ClaudePlugin
            .writer()
            .create(&root, CLAUDE_CODE, &t, &options())
            .unwrap();
        held.push(start.elapsed().as_secs_f64());
        std::fs::remove_file(s.path).unwrap();
        let start = Instant::now();
        let path = create_streamed(&root, &t);
        streamed.push(start.elapsed().as_secs_f64());
        std::fs::remove_file(path).unwrap();
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut held), median(&mut streamed));
    println!(
        "paired ({PAIRS} alternating runs, medians): create {:.0} ms, create_streamed {:.0} ms, ratio {:.2}",
        a * 1e3,
        b * 1e3,
        b / a
    );
}

fn main() {
    if let (Ok(kind), Ok(file)) = (
        std::env::var("CLAUDE_STORE_MEMORY_PROBE"),
        std::env::var("CLAUDE_STORE_MEMORY_FILE"),
    ) {
        probe(&kind, Path::new(&file));
        return;
    }
    memory_report();
    paired_ratio();
    streamed_ratio();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
