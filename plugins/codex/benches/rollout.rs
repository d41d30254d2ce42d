//! Write + read of a synthetic 5,000-turn Codex session against the serde_json floor (parse every
//! line into a `Value` and serialise it again), measured in the same run.

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::ById;
use handoff_sdk::{CreateOptions, Plugin, ReadFrom, StoreRoot};

mod synthetic;

fn bench(c: &mut Criterion) {
    let transcript = synthetic::transcript();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join("codex")).expect("store root");
    let plugin = CodexPlugin;
    let sample = plugin
        .writer()
        .create(&root, TARGET, &transcript, &CreateOptions::default())
        .expect("create");
    let bytes = std::fs::read(&sample.path).expect("read the sample");
    eprintln!(
        "synthetic session: {} turns, {} events, {:.1} MB",
        handoff_live::bench::TURNS,
        transcript.events.len(),
        bytes.len() as f64 / 1e6
    );

    let mut group = c.benchmark_group("codex-5000-turns");
    group.sample_size(10);
    group.bench_function("serde_json floor (read file, parse + re-serialise)", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&sample.path).expect("read");
            handoff_live::bench::serde_floor(&bytes)
        })
    });
    group.bench_function("write + read (create, read back, remove)", |b| {
        b.iter(|| {
            let session = plugin
                .writer()
                .create(&root, TARGET, &transcript, &CreateOptions::default())
                .expect("create");
            let back = plugin.read_id(&root, TARGET, &session.id).expect("read");
            assert_eq!(back.events.len(), transcript.events.len());
            plugin
                .remove_id(&root, TARGET, &session.id)
                .expect("remove");
        })
    });
    group.bench_function("write (create)", |b| {
        b.iter(|| {
            let session = plugin
                .writer()
                .create(&root, TARGET, &transcript, &CreateOptions::default())
                .expect("create");
            std::fs::remove_file(&session.path).expect("remove");
        })
    });
    group.bench_function("read_each (streamed, as the engine's verify reads)", |b| {
        b.iter(|| {
            let mut events = 0usize;
            plugin
                .read_each_id(&root, TARGET, &sample.id, &mut |_| {
                    events += 1;
                    true
                })
                .expect("read_each");
            events
        })
    });
    group.bench_function("read", |b| {
        b.iter(|| {
            plugin
                .reader()
                .read(ReadFrom::File(TARGET, &sample.path))
                .expect("read")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
