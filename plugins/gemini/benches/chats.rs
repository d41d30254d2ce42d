//! Write + read of a synthetic 5,000-turn Gemini CLI session against the serde_json floor (parse
//! every line of the same file into a `Value` and serialise it again), measured in the same run.
//!
//! A turn: user text → assistant text + call → ~1.3 KB tool output → assistant text
//! (`handoff_live::bench::tool_session`, as the codex and pi benches, so they compare).

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_gemini::GeminiPlugin;
use handoff_live::bench::{serde_floor, tool_session, BenchCall, TURNS};
use handoff_sdk::serde_json::json;
use handoff_sdk::{CreateOptions, Origin, Plugin, ReadFrom, StoreRoot, Transcript};

const TARGET: &str = "gemini-cli";

/// The session of every plugin's write + read bench, each turn calling Gemini CLI's shell tool.
fn transcript() -> Transcript {
    let origin = Origin {
        provider: "google".into(),
        model: Some("gemini-2.5-flash".into()),
        api: Some("gemini".into()),
    };
    let call = BenchCall {
        id_prefix: "call_",
        name: "run_shell_command",
        arguments: json!({"command": "ls -la src", "dir_path": "/home/dev/proj", "timeout_ms": 10000}),
    };
    tool_session(origin, &call)
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
