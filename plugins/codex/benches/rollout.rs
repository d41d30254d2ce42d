//! Write + read of a synthetic 5,000-turn Codex session against the serde_json floor (parse every
//! line into a `Value` and serialise it again), measured in the same run
//! (`handoff_live::bench::store_group`): `cargo bench -p handoff-codex --bench rollout`.

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_sdk::CreateOptions;

mod synthetic;

fn bench(c: &mut Criterion) {
    let transcript = synthetic::transcript();
    let plugin = &handoff_codex::CodexPlugin;
    let options = CreateOptions::default();
    handoff_live::bench::store_group(c, plugin, handoff_codex::TARGET, &transcript, &options);
}

criterion_group!(benches, bench);
criterion_main!(benches);
