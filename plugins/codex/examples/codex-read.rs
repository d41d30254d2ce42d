//! Reads a Codex rollout file and prints the canonical transcript as JSON.
//!
//! `cargo run -p handoff-codex --example codex-read -- <rollout.jsonl>`

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::Plugin;
use handoff_sdk::ReadFrom;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read <rollout.jsonl>");
        std::process::exit(2);
    };
    match CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, path.as_ref()))
    {
        Ok(transcript) => println!("{}", transcript.to_json_pretty()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
