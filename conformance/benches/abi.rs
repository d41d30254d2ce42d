//! Load time per plugin, and the dynamic path against the static path (filled in below).
use criterion::{criterion_group, criterion_main, Criterion};

fn nothing(_: &mut Criterion) {}

criterion_group!(benches, nothing);
criterion_main!(benches);
