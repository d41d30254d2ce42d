//! Write + read of a synthetic 5,000-turn pi session against the serde_json floor (parse every
//! line into a `Value` and serialise it again), measured in the same run.
//!
//! `cargo bench -p handoff-pi --bench session`

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::{ById, CreateOptions, Plugin, ReadFrom, StoreRoot};

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
        handoff_live::bench::TURNS,
        transcript.events.len(),
        bytes.len() as f64 / 1e6
    );
    let back = plugin.read_id(&root, TARGET, &sample.id).expect("read");
    let comparison = handoff_pi::target_manifest().comparison();
    comparison
        .diff(&transcript, &back)
        .expect("the sample reads back equal");

    interleaved(&plugin, &root, &transcript, &sample.path);

    let mut group = c.benchmark_group("pi-5000-turns");
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
                .create(&root, TARGET, &transcript, &CreateOptions::default())
                .expect("create");
            std::fs::remove_file(&session.path).expect("remove");
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
    group.bench_function("read_each (as the engine's verify reads)", |b| {
        b.iter(|| {
            let mut events = 0usize;
            plugin
                .reader()
                .read_each(ReadFrom::Session(&root, &sample), &mut |_| {
                    events += 1;
                    true
                })
                .expect("read_each");
            events
        })
    });
    group.finish();
}

/// CPU time of this thread so far (user + system), from `/proc/thread-self/schedstat`: what the
/// work cost, whatever else the machine was doing; waits (fsync, other processes) are not in it.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The floor and write + read, alternated (so load from other processes hits both alike): the
/// median of each, and the median of the per-pair ratios, in wall time and in CPU time.
fn interleaved(
    plugin: &PiPlugin,
    root: &StoreRoot,
    transcript: &handoff_sdk::Transcript,
    sample: &std::path::Path,
) {
    const PAIRS: usize = 15;
    let mut wall: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut time = |which: usize, work: &mut dyn FnMut()| {
        let (started, cpu_started) = (Instant::now(), cpu_ns());
        work();
        wall[which].push(started.elapsed().as_secs_f64() * 1e3);
        cpu[which].push((cpu_ns() - cpu_started) as f64 / 1e6);
    };
    for _ in 0..PAIRS {
        time(0, &mut || {
            let bytes = std::fs::read(sample).expect("read");
            std::hint::black_box(handoff_live::bench::serde_floor(&bytes));
        });
        let mut session = None;
        time(1, &mut || {
            let s = plugin
                .writer()
                .create(root, TARGET, transcript, &CreateOptions::default())
                .expect("create");
            let back = plugin
                .reader()
                .read(ReadFrom::Session(root, &s))
                .expect("read");
            std::hint::black_box(back);
            session = Some(s);
        });
        plugin
            .writer()
            .remove(root, &session.expect("created"))
            .expect("remove");
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (what, [floor, ours]) in [("wall", &mut wall), ("cpu", &mut cpu)] {
        let mut ratios: Vec<f64> = ours.iter().zip(floor.iter()).map(|(o, f)| o / f).collect();
        let ratio = median(&mut ratios);
        eprintln!(
            "interleaved, {PAIRS} pairs, {what} time: floor median {:.0} ms, write + read median \
             {:.0} ms, ratio median {ratio:.2} (min {:.2}, max {:.2})",
            median(floor),
            median(ours),
            ratios[0],
            ratios[PAIRS - 1]
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
