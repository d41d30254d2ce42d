//! The conformance suite's loopback fake provider as a process, for the hand-run experiments of
//! docs/formats/pi.md (a real CLI resuming a session the engine wrote): prints its base URL,
//! appends every request to the log file as one JSON line, and serves until killed.
//!
//! `cargo run -p handoff-pi --example pi-fake-provider -- <log file>`

use handoff_live::fake_provider::{FakeProvider, FakeProviderOptions};

fn main() {
    let log = std::env::args_os()
        .nth(1)
        .expect("usage: pi-fake-provider <log file>");
    let fake = FakeProvider::start_with(FakeProviderOptions {
        log_file: Some(log.into()),
        ..FakeProviderOptions::default()
    })
    .expect("the fake provider starts");
    println!("{}", fake.base_url());
    loop {
        std::thread::park();
    }
}
