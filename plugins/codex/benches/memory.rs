//! Peak memory of write, read and streamed read (`read_each`) of the synthetic 5,000-turn
//! session, against the file size (`handoff_live::bench::memory`).
//! `cargo bench -p handoff-codex --bench memory`.

mod synthetic;

fn main() {
    handoff_live::bench::memory(
        &handoff_codex::CodexPlugin,
        handoff_codex::TARGET,
        synthetic::transcript,
        handoff_live::bench::StreamLimit::QuarterOfFile,
    );
}
