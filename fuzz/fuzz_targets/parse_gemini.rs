//! The `gemini` wire dialect parser (and validator) on arbitrary bytes: it may refuse them,
//! never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: handoff_fuzz::seed_dialect_if_asked("gemini"),
    |data: &[u8]| handoff_fuzz::parse_dialect("gemini", data)
);
