//! Reads a Gemini CLI session file and prints the canonical transcript (JSON).
//!
//! `cargo run -p handoff-gemini --example read -- <session file>`

use handoff_gemini::GeminiPlugin;
use handoff_sdk::Plugin;
use handoff_sdk::ReadFrom;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read <session file>");
        std::process::exit(2);
    };
    match GeminiPlugin
        .reader()
        .read(ReadFrom::File("gemini-cli", path.as_ref()))
    {
        Ok(t) => println!("{}", t.to_json_pretty()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
