//! Times the phases of writing and reading a 5,000-turn session (for finding where time goes).
//!
//! `cargo run --release -p handoff-gemini --example phases -- <transcript.json>`

use std::time::Instant;

use handoff_gemini::GeminiPlugin;
use handoff_sdk::{CreateOptions, Plugin, ReadFrom, StoreRoot, Transcript};

fn main() {
    let path = std::env::args().nth(1).expect("a transcript");
    let t = Transcript::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join(".gemini")).unwrap();
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: None,
    };
    for _ in 0..5 {
        let a = Instant::now();
        let s = GeminiPlugin
            .writer()
            .create(&root, "gemini-cli", &t, &options)
            .unwrap();
        let b = Instant::now();
        let back = GeminiPlugin
            .reader()
            .read(ReadFrom::Session(&root, &s))
            .unwrap();
        let c = Instant::now();
        let bytes = std::fs::read(&s.path).unwrap();
        let mut n = 0;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let v: handoff_sdk::serde_json::Value =
                handoff_sdk::serde_json::from_slice(line).unwrap();
            n += handoff_sdk::serde_json::to_vec(&v).unwrap().len();
        }
        let d = Instant::now();
        back.validate().unwrap();
        let e = Instant::now();
        eprintln!(
            "write {:?} read {:?} floor {:?} validate {:?} ({n} bytes)",
            b - a,
            c - b,
            d - c,
            e - d
        );
        GeminiPlugin.writer().remove(&root, &s).unwrap();
    }
}
