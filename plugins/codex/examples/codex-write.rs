//! Writes a canonical transcript (JSON) as a Codex session and prints its id and path.
//!
//! `cargo run -p handoff-codex --example codex-write -- <CODEX_HOME> <transcript.json>`

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::{CreateOptions, Plugin, StoreRoot, Transcript};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, transcript] = args.as_slice() else {
        eprintln!("usage: write <CODEX_HOME> <transcript.json>");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(transcript).unwrap_or_else(|e| {
        eprintln!("{transcript}: {e}");
        std::process::exit(1)
    });
    let transcript = Transcript::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let root = StoreRoot::new(root.as_str()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    match CodexPlugin
        .writer()
        .create(&root, TARGET, &transcript, &CreateOptions::default())
    {
        Ok(session) => println!("{} {}", session.id, session.path.display()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
