//! Write + read of a synthetic pi session against the serde_json floor (filled in below).
fn main() {}
