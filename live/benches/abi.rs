//! What the plugin boundary costs.
//!
//! - `load/*`: probing a plugin file (read, hash, private copy, dlopen, declaration) and the full
//!   load (plus abi_stable's header, version and layout check, the manifest and the capabilities).
//! - `transcript/*`: writing and reading back a large transcript through the reference plugin
//!   linked in (static) and loaded from its `.so` (dynamic), and the JSON encoding and decoding
//!   that the dynamic path adds, alone.
//!
//! The `.so` is built with the release profile into `target/fixtures` (see tests/support).
//! Figures and how to read them: docs/abi.md.

#[path = "../tests/support/mod.rs"]
mod support;

use handoff_host::ById;
use std::borrow::Cow;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use handoff_abi::wire::WriterRequest;
use handoff_host::loader;
use handoff_host::{
    AssistantPart, Body, CreateOptions, Event, Plugin, StoreRoot, Timestamp, ToolCall, Transcript,
};
use handoff_reference::ReferencePlugin;

/// A transcript of `turns` user / assistant-with-tool-call / tool-result triples, about 1 KiB of
/// text per event.
fn large_transcript(turns: usize) -> Transcript {
    let text =
        "The quick brown fox jumps over the lazy dog; ünïcödé, emoji 🦀, RTL שלום. ".repeat(14);
    let mut events = Vec::with_capacity(turns * 3);
    let mut at = 1_700_000_000_000;
    let mut event = |id: String, body: Body| {
        at += 1_000;
        Event {
            id,
            timestamp: Timestamp::from_millis(at),
            author: None,
            body,
            opaque: Default::default(),
        }
    };
    for turn in 0..turns {
        events.push(event(
            format!("u{turn}"),
            Body::user_text(format!("{turn}: {text}")),
        ));
        events.push(event(
            format!("a{turn}"),
            Body::assistant(vec![
                    AssistantPart::Text { text: text.clone() },
                    AssistantPart::ToolCall(ToolCall::new(format!("call{turn}"), "read_file", serde_json::json!({"path": format!("src/{turn}.rs"), "limit": 200, "ratio": 0.25}))),
                ]),
        ));
        events.push(event(
            format!("r{turn}"),
            Body::tool_output(format!("call{turn}"), text.clone()),
        ));
    }
    Transcript {
        schema: handoff_host::SCHEMA.into(),
        cwd: Some("/work/project".into()),
        events,
    }
}

fn quick<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    group
}

/// The plugins whose load time is measured (their release `.so` files).
const PLUGINS: [&str; 3] = [
    "handoff-plugin-reference",
    "handoff-plugin-claude",
    "handoff-plugin-codex",
];

fn load(c: &mut Criterion) {
    let mut group = quick(c, "load");
    for package in PLUGINS {
        let library = support::plugin_release(package);
        let size = std::fs::metadata(&library).unwrap().len();
        eprintln!("{package}: {size} bytes");
        group.measurement_time(Duration::from_secs(2));
        group.bench_function(format!("{package}/probe"), |b| {
            b.iter(|| loader::probe(&library).unwrap())
        });
        // Every full load maps a new private copy that abi_stable never unloads: keep the count
        // low.
        group.measurement_time(Duration::from_millis(500));
        group.bench_function(format!("{package}/load"), |b| {
            b.iter(|| loader::load(&library).unwrap())
        });
    }
    group.finish();
}

fn transcript(c: &mut Criterion) {
    let library = support::plugin_release("handoff-plugin-reference");
    let dynamic = loader::load(&library).unwrap();
    let linked = ReferencePlugin;
    let transcript = large_transcript(1_000);
    let json_bytes = serde_json::to_vec(&transcript).unwrap().len() as u64;
    eprintln!(
        "large transcript: {} events, {} bytes of canonical JSON",
        transcript.events.len(),
        json_bytes
    );
    let target = "reference";
    let options = CreateOptions::default();

    let mut group = quick(c, "transcript");
    group.throughput(Throughput::Bytes(json_bytes));
    for (name, plugin) in [
        ("static", &linked as &dyn Plugin),
        ("dynamic", &dynamic as &dyn Plugin),
    ] {
        group.bench_function(format!("{name}/create+read"), |b| {
            b.iter_batched(
                || tempfile::tempdir().unwrap(),
                |dir| {
                    let root = StoreRoot::new(dir.path()).unwrap();
                    let session = plugin
                        .writer()
                        .create(&root, target, &transcript, &options)
                        .unwrap();
                    let back = plugin.read_id(&root, target, &session.id).unwrap();
                    assert_eq!(back.events.len(), transcript.events.len());
                    dir
                },
                BatchSize::PerIteration,
            )
        });
    }
    // What the dynamic path adds: the request encoded by the host and decoded by the plugin,
    // the answer encoded by the plugin and decoded by the host.
    group.bench_function("boundary-json/create-request", |b| {
        b.iter(|| {
            let request = WriterRequest::Create {
                root: Cow::Borrowed(std::path::Path::new("/store")),
                target: Cow::Borrowed(target),
                transcript: Cow::Borrowed(&transcript),
                options: Cow::Borrowed(&options),
            };
            let json = serde_json::to_string(&request).unwrap();
            let back: WriterRequest<'static> = serde_json::from_str(&json).unwrap();
            back
        })
    });
    group.bench_function("boundary-json/read-answer", |b| {
        b.iter(|| {
            let json = serde_json::to_string(&transcript).unwrap();
            let back: Transcript = serde_json::from_str(&json).unwrap();
            back
        })
    });
    group.finish();
}

criterion_group!(benches, load, transcript);
criterion_main!(benches);
