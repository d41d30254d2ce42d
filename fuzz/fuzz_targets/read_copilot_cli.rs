//! The `copilot-cli` reader on arbitrary bytes: it may refuse them, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: handoff_fuzz::Native::init("copilot-cli"),
    |data: &[u8]| handoff_fuzz::Native::get().read(data)
);
