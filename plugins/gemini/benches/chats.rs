//! Write + read of a synthetic 5,000-turn Gemini CLI session against the serde_json floor (parse
//! every line of the same file into a `Value` and serialise it again), measured in the same run.
//!
//! A turn: user text → assistant text + call → ~1.3 KB tool output → assistant text (as the codex
//! bench, so the two compare).

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_gemini::GeminiPlugin;
use handoff_sdk::serde_json::{self, json};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Origin, Part, Plugin, ReadFrom, StoreRoot,
    Timestamp, ToolCall, Transcript,
};

const TARGET: &str = "gemini-cli";
const TURNS: usize = 5_000;

fn transcript() -> Transcript {
    let output =
        "drwxr-xr-x  2 dev dev 4096 Nov 30 00:41 src/main.rs and some more text\n".repeat(18);
    let origin = Some(Origin {
        provider: "google".into(),
        model: Some("gemini-2.5-flash".into()),
        api: Some("gemini".into()),
    });
    let mut events = Vec::with_capacity(TURNS * 4);
    let mut ms = 1_795_999_300_000i64;
    let mut next = || {
        ms += 7;
        Timestamp::from_millis(ms)
    };
    for turn in 0..TURNS {
        let call = format!("call_{turn:06}");
        events.push(Event::new(format!("u{turn}"), next(), Body::User { content: vec![Part::text(format!(
            "Turn {turn}: please list the files in the project and tell me what changed since the last turn."
        ))] }));
        events.push(Event::new(format!("a{turn}"), next(), Body::Assistant {
            content: vec![
                AssistantPart::text("I will list the files in the project directory first, then compare."),
                AssistantPart::ToolCall(ToolCall::new(call.clone(), "run_shell_command", json!({"command": "ls -la src", "dir_path": "/home/dev/proj", "timeout_ms": 10000}))),
            ],
            origin: origin.clone(),
        }));
        events.push(Event::new(
            format!("r{turn}"),
            next(),
            Body::ToolResult {
                call_id: call,
                content: vec![Part::text(output.clone())],
                is_error: false,
            },
        ));
        events.push(Event::new(format!("b{turn}"), next(), Body::Assistant {
            content: vec![AssistantPart::text(
                "The project has one source directory with the main file; nothing changed since the last turn, \
                 so the build should still pass. Let me know what you would like to do next.",
            )],
            origin: origin.clone(),
        }));
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

fn serde_floor(bytes: &[u8]) -> usize {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let value: serde_json::Value = serde_json::from_slice(line).expect("valid line");
        serde_json::to_writer(&mut out, &value).expect("serialises");
        out.push(b'\n');
    }
    out.len()
}

fn bench(c: &mut Criterion) {
    let transcript = transcript();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join(".gemini")).expect("store root");
    let plugin = GeminiPlugin;
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: None,
    };
    let sample = plugin
        .writer()
        .create(&root, TARGET, &transcript, &options)
        .expect("create");
    let bytes = std::fs::read(&sample.path).expect("read the sample");
    eprintln!(
        "synthetic session: {TURNS} turns, {} events, {:.1} MB",
        transcript.events.len(),
        bytes.len() as f64 / 1e6
    );

    let mut group = c.benchmark_group("gemini-cli-5000-turns");
    group.sample_size(10);
    group.bench_function("serde_json floor (read file, parse + re-serialise)", |b| {
        b.iter(|| serde_floor(&std::fs::read(&sample.path).expect("read")))
    });
    group.bench_function("write + read (create, read back, remove)", |b| {
        b.iter(|| {
            let session = plugin
                .writer()
                .create(&root, TARGET, &transcript, &options)
                .expect("create");
            let back = plugin
                .reader()
                .read(ReadFrom::Session(&root, &session))
                .expect("read");
            assert_eq!(back.events.len(), transcript.events.len());
            plugin.writer().remove(&root, &session).expect("remove");
        })
    });
    group.bench_function("write (create)", |b| {
        b.iter(|| {
            let session = plugin
                .writer()
                .create(&root, TARGET, &transcript, &options)
                .expect("create");
            std::fs::remove_file(&session.path).expect("remove");
        })
    });
    group.bench_function("read", |b| {
        b.iter(|| {
            plugin
                .reader()
                .read(ReadFrom::Session(&root, &sample))
                .expect("read")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
