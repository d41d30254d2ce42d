//! Transcript → lines: the header, then one event per line.

use std::io::Write;

use handoff_sdk::Event;

use super::records::Header;

/// A whole session file.
pub(super) fn session(
    out: &mut dyn Write,
    header: &Header,
    events: &[Event],
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, header)?;
    out.write_all(b"\n")?;
    self::events(out, events)
}

/// Event lines (what an append adds).
pub(super) fn events(out: &mut dyn Write, events: &[Event]) -> std::io::Result<()> {
    for event in events {
        serde_json::to_writer(&mut *out, event)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
