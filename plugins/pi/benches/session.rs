//! Write + read of a synthetic 5,000-turn pi session against the serde_json floor (parse every
//! line into a `Value` and serialise it again), measured in the same run
//! (`handoff_live::bench::store_group`): `cargo bench -p handoff-pi --bench session`.

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_sdk::CreateOptions;

mod synthetic;

fn bench(c: &mut Criterion) {
    let transcript = synthetic::transcript();
    let plugin = &handoff_pi::PiPlugin;
    let options = CreateOptions::default();
    handoff_live::bench::store_group(c, plugin, handoff_pi::TARGET, &transcript, &options);
}

criterion_group!(benches, bench);
criterion_main!(benches);
