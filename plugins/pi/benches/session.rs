//! Write + read of a synthetic 5,000-turn pi session against the serde_json floor (parse every
//! line into a `Value` and serialise it again), measured in the same run.
//!
//! `cargo bench -p handoff-pi --bench session`

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::{ById, CreateOptions, Plugin, StoreRoot};

mod synthetic;

fn bench(c: &mut Criterion) {
    let transcript = synthetic::transcript();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join("pi")).expect("store root");
    let plugin = PiPlugin;
    let sample = plugin
        .writer()
        .create(&root, TARGET, &transcript, &CreateOptions::default())
        .expect("create");
    let bytes = std::fs::read(&sample.path).expect("read the sample");
    eprintln!(
        "synthetic session: {} turns, {} events, {:.1} MB",
        synthetic::TURNS,
        transcript.events.len(),
        bytes.len() as f64 / 1e6
    );
    let back = plugin.read_id(&root, TARGET, &sample.id).expect("read");
    let comparison = handoff_pi::target_manifest().comparison();
    comparison
        .diff(&transcript, &back)
        .expect("the sample reads back equal");

    let mut group = c.benchmark_group("pi-5000-turns");
    group.sample_size(10);
    group.bench_function("serde_json floor (read file, parse + re-serialise)", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&sample.path).expect("read");
            synthetic::serde_floor(&bytes)
        })
    });
    group.bench_function("write + read (create, read back, remove)", |b| {
        b.iter(|| {
            let session = plugin
                .writer()
                .create(&root, TARGET, &transcript, &CreateOptions::default())
                .expect("create");
            let back = plugin.reader().read(&root, &session).expect("read");
            assert_eq!(back.events.len(), transcript.events.len());
            plugin.writer().remove(&root, &session).expect("remove");
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
    group.bench_function("read", |b| {
        b.iter(|| {
            plugin
                .reader()
                .read_path(TARGET, &sample.path)
                .expect("read")
        })
    });
    group.bench_function("read_each (as the engine's verify reads)", |b| {
        b.iter(|| {
            let mut events = 0usize;
            plugin
                .reader()
                .read_each(&root, &sample, &mut |_| {
                    events += 1;
                    true
                })
                .expect("read_each");
            events
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
