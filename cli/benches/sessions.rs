//! `handoff sessions` on a store of 10,000 sessions, for every built-in target: the plugin's
//! listing (id, title, cwd, update time), then the exact event count of the 20 shown (what the
//! command does with its default `--limit`), beside a floor measured in the same run: walking the
//! store and reading every file's metadata, which any listing sorted by update time must do.
//!
//! The store is written once per target by the plugin's own writer: 10,000 sessions of 5 turns
//! (20 events: user, assistant text + tool call, a 1.3 KB tool result, assistant text) spread
//! over 100 working directories, then its files are read once so the page cache holds them (the
//! figures are warm-cache figures; a cold cache adds the disk's read time for the bytes read).
//!
//! Run: `cargo bench -p handoff-cli --bench sessions` (`-- --sessions N` for another store size,
//! `-- TARGET…` for some targets only). Wall time is the median of several runs.

use std::path::Path;
use std::time::{Duration, Instant};

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_gemini::GeminiPlugin;
use handoff_host::{
    AssistantPart, Body, CreateOptions, Event, Part, Plugin, ReadFrom, SessionInfo, StoreRoot,
    Timestamp, ToolCall, Transcript,
};
use handoff_openai::OpenaiPlugin;
use handoff_pi::PiPlugin;

/// The `handoff` binary's allocator (cli/src/main.rs), so the figures are the command's.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const RUNS: usize = 5;
const SHOWN: usize = 20;
const TURNS: usize = 5;
const DIRS: usize = 100;

fn plugins() -> Vec<(&'static str, &'static dyn Plugin)> {
    vec![
        ("claude-code", &ClaudePlugin),
        ("codex", &CodexPlugin),
        ("pi", &PiPlugin),
        ("gemini-cli", &GeminiPlugin),
        ("anthropic-messages", &ClaudePlugin),
        ("openai-chat", &OpenaiPlugin),
        ("openai-responses", &OpenaiPlugin),
        ("gemini-api", &GeminiPlugin),
    ]
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut sessions = 10_000;
    if let Some(at) = args.iter().position(|a| a == "--sessions") {
        sessions = args[at + 1].parse().expect("--sessions N");
        args.drain(at..at + 2);
    }
    println!(
        "{:>18} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8}",
        "target", "sessions", "store MB", "floor ms", "list ms", "+count ms", "list/fl", "total/fl"
    );
    for (target, plugin) in plugins() {
        if !args.is_empty() && !args.iter().any(|a| a == target) {
            continue;
        }
        let dir = tempfile::tempdir().expect("scratch");
        let root = StoreRoot::new(dir.path()).expect("root");
        let start = Instant::now();
        fill(plugin, &root, target, sessions);
        eprintln!(
            "  {target}: wrote {sessions} sessions in {:.1} s",
            start.elapsed().as_secs_f64()
        );
        let bytes = warm(dir.path());
        let floor = median(|| {
            std::hint::black_box(walk(dir.path()));
        });
        let mut listed = 0;
        let list = median(|| {
            listed = plugin.reader().list(&root, target).expect("list").len();
        });
        assert_eq!(listed, sessions, "{target}: the listing lost sessions");
        let total = median(|| {
            let shown: Vec<SessionInfo> = plugin
                .reader()
                .list(&root, target)
                .expect("list")
                .into_iter()
                .take(SHOWN)
                .collect();
            for s in &shown {
                let mut n = 0u64;
                plugin
                    .reader()
                    .read_each(ReadFrom::Session(&root, &s.session), &mut |_| {
                        n += 1;
                        true
                    })
                    .expect("count");
                assert_eq!(n, (TURNS * 4) as u64, "{target}: event count");
            }
        });
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:>18} {:>8} {:>9.1} {:>9.1} {:>10.1} {:>10.1} {:>7.1}× {:>7.1}×",
            target,
            sessions,
            bytes as f64 / 1e6,
            ms(floor),
            ms(list),
            ms(total),
            list.as_secs_f64() / floor.as_secs_f64(),
            total.as_secs_f64() / floor.as_secs_f64(),
        );
    }
}

/// Writes `count` sessions with the plugin's own writer, in `DIRS` working directories.
fn fill(plugin: &dyn Plugin, root: &StoreRoot, target: &str, count: usize) {
    for n in 0..count {
        let mut transcript = conversation(n);
        let cwd = format!("/home/dev/project-{:03}", n % DIRS);
        transcript.cwd = Some(cwd.clone());
        plugin
            .writer()
            .create(
                root,
                target,
                &transcript,
                &CreateOptions {
                    cwd: Some(cwd),
                    locator: Some(format!("bench-{n}")),
                },
            )
            .unwrap_or_else(|e| panic!("{target}: write session {n}: {e}"));
    }
}

/// A 5-turn conversation; `n` makes its first prompt (the title) its own.
fn conversation(n: usize) -> Transcript {
    let output = "drwxr-xr-x 2 dev dev 4096 Nov 30 00:41 src/handoff/example/file.rs\n".repeat(19);
    let mut events = Vec::with_capacity(TURNS * 4);
    let mut t = 1_795_999_300_000i64 + n as i64 * 100_000;
    let mut next = |body| {
        t += 1_000;
        let id = format!("e{n}-{}", events.len());
        events.push(Event::new(id, Timestamp::from_millis(t), body));
    };
    for i in 0..TURNS {
        next(Body::User {
            content: vec![Part::text(format!(
                "Session {n}, turn {i}: list the files under src and tell me which changed."
            ))],
        });
        next(Body::assistant(vec![
            AssistantPart::text("I'll list them."),
            AssistantPart::ToolCall(ToolCall::new(
                format!("call_{n}_{i}"),
                "Bash",
                serde_json::json!({"command": "ls -la src"}),
            )),
        ]));
        next(Body::tool_output(format!("call_{n}_{i}"), output.clone()));
        next(Body::assistant(vec![AssistantPart::text(format!(
            "In turn {i}, file.rs changed."
        ))]));
    }
    Transcript::new(events)
}

/// Every file under `dir` read once (so the runs measure warm-cache listing); their total size.
fn warm(dir: &Path) -> u64 {
    walk(dir)
        .iter()
        .map(|p| std::fs::read(p).map_or(0, |b| b.len() as u64))
        .sum()
}

/// The floor: every file under `dir`, with its metadata read (the update time a listing sorts by).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                std::hint::black_box(meta.modified().ok());
                files.push(entry.path());
            }
        }
    }
    files
}

fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}
