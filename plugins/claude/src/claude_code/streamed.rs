//! A session created as its events arrive ([`handoff_sdk::Writer::create_streamed`]): each event is
//! checked as [`precheck`](super::write::precheck) checks it, then its records are written, through
//! the same atomic create as [`Target::create`](handoff_sdk::Target::create), so a refusal, an
//! error from the stream or an I/O error leaves nothing behind.
//!
//! What needs look-ahead starts over with the whole transcript and `create`:
//! - a compaction that keeps events (its `replaces_through` is not the last written event, nor
//!   an unwritten one after it): its boundary belongs before the kept events, already written;
//! - no cwd in the options: the cwd names the file's folder, and only the whole transcript says it.
//!
//! Per event it keeps the chain (call id → record uuid) and the ids of the events since the last
//! written one (usually that one alone), never the events.

use handoff_sdk::stream_stop::Stop;
use handoff_sdk::{Body, EventStream};

use super::write::{checked_blocks, is_written, replaces_nothing, RecordWriter};

/// Where the stream stands: what a compaction's check needs of the events before it.
#[derive(Default)]
struct Written {
    /// How many events have been taken.
    taken: usize,
    /// Whether any event has been written.
    any: bool,
    /// The id of the last written event and of the unwritten events after it: a compaction
    /// replacing through one of them keeps nothing.
    since_last: Vec<String>,
}

/// Writes every event of `events` through `writer`, checking each before its records go out.
pub(crate) fn write_stream(
    writer: &mut RecordWriter<'_, '_>,
    events: &mut dyn EventStream,
) -> Result<(), Stop> {
    let mut written = Written::default();
    while let Some(event) = events.next_event().map_err(Stop::Refused)? {
        let index = written.taken;
        written.taken += 1;
        if let Body::Compaction {
            replaces_through, ..
        } = &event.body
        {
            if !written.any {
                return Err(Stop::Refused(replaces_nothing(index, &event)));
            }
            if !written.since_last.contains(replaces_through) {
                return Err(Stop::StartOver);
            }
            writer.boundary(&event)?;
        }
        // Checked even when not written, as `precheck` checks it.
        let blocks = checked_blocks(index, &event).map_err(Stop::Refused)?;
        if is_written(&event) {
            writer.event(&event, blocks)?;
            written.any = true;
            written.since_last.clear();
        }
        written.since_last.push(event.id);
    }
    if !written.any {
        return Err(Stop::Refused(super::empty_conversation()));
    }
    Ok(())
}
