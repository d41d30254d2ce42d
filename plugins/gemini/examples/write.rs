//! Writes a canonical transcript (JSON) as a Gemini CLI session and prints the session and its
//! resume plan as one JSON line: `{"id", "path", "plan"}`.
//!
//! `cargo run -p handoff-gemini --example write -- <root (.gemini)> <cwd> <transcript.json>`

use handoff_gemini::GeminiPlugin;
use handoff_sdk::serde_json::json;
use handoff_sdk::{CreateOptions, Plugin, StoreRoot, Transcript};

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, cwd, transcript] = args.as_slice() else {
        eprintln!("usage: write <root> <cwd> <transcript.json>");
        std::process::exit(2);
    };
    let text =
        std::fs::read_to_string(transcript).unwrap_or_else(|e| fail(format!("{transcript}: {e}")));
    let transcript = Transcript::from_json(&text).unwrap_or_else(|e| fail(e));
    let root = StoreRoot::new(root.as_str()).unwrap_or_else(|e| fail(e));
    let options = CreateOptions {
        cwd: Some(cwd.clone()),
        locator: None,
    };
    let session = GeminiPlugin
        .writer()
        .create(&root, "gemini-cli", &transcript, &options)
        .unwrap_or_else(|e| fail(e));
    let plan = GeminiPlugin
        .resumer()
        .plan(&root, &session, "continue")
        .unwrap_or_else(|e| fail(e));
    println!(
        "{}",
        json!({ "id": session.id, "path": session.path, "plan": plan })
    );
}
