//! Peak memory of write, read and streamed read (`read_each`) of the synthetic 5,000-turn
//! session, against the file size (`handoff_live::bench::memory`).
//! `cargo bench -p handoff-pi --bench memory`.

mod synthetic;

fn main() {
    handoff_live::bench::memory(
        &handoff_pi::PiPlugin,
        handoff_pi::TARGET,
        synthetic::transcript,
        handoff_live::bench::StreamLimit::NotAboveRead,
    );
}
