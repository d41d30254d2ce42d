//! A certificate on arbitrary bytes: refused, or trusted only if it is exactly the certificate
//! that was sealed; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: handoff_fuzz::sealed::seed_certificate_if_asked(),
    |data: &[u8]| handoff_fuzz::sealed::certificate(data)
);
