//! A session created as its events arrive ([`handoff_sdk::Writer::create_streamed`]): each event is
//! checked as [`check_representable`](super::write::check_representable) checks it, then its
//! entries are written through the same atomic create as
//! [`Target::create`](handoff_sdk::Target::create), so a refusal, an error from the stream or an
//! I/O error leaves nothing behind.
//!
//! What the whole-transcript write looks at beyond the event it writes, and what is kept here
//! instead:
//! - the first `model_change` names the model of the first assistant turn that names one, and
//!   comes before the first event: the events up to that turn (usually one user prompt) are held
//!   until it comes — the one look-ahead; a session none of whose turns names a model is held
//!   to its end (then there is no such entry);
//! - a tool result's `toolName` is its call's: the names of the calls not answered yet, each
//!   dropped when its result is written;
//! - a compaction's `firstKeptEntryId` is its own id when it keeps nothing (it replaces through
//!   the event just before it: the id of that event is kept); one that keeps events needs their
//!   entry ids, so the write starts over with the whole transcript (which refuses it unless a
//!   later compaction hides it: pi shows only the last summary, before what it keeps);
//! - what a pi session had after its last event rides in that event: the latest event's is kept;
//! - the entry ids in use (4 bytes an entry, in the chain's [`Ids`](super::write::Ids)), so a
//!   fresh id never repeats one.

use std::collections::VecDeque;
use std::io::Write;

use foldhash::{HashMap, HashMapExt};
use handoff_sdk::serde_json::Value;
use handoff_sdk::stream_stop::Stop;
use handoff_sdk::{Body, Event, EventStream};

use super::write::{
    carried_after, check_event, first_model, from_pi, modelled_origin, tool_calls, Chain,
    EntryWriter, Known,
};

/// Writes `first` and every event after it in `events` as entries after the header, continuing
/// `chain` (a new session's).
pub(crate) fn write_stream(
    out: &mut dyn Write,
    first: Event,
    events: &mut dyn EventStream,
    chain: Chain,
) -> Result<(), Stop> {
    let mut window = VecDeque::from([first]);
    if !from_pi(&window[0]) {
        // Up to the first turn that names its model (or the end): what the first entry names.
        while modelled_origin(window.back().expect("holds the first")).is_none() {
            match events.next_event().map_err(Stop::Refused)? {
                Some(event) => window.push_back(event),
                None => break,
            }
        }
    }
    let mut stream = Streamed {
        writer: EntryWriter::new(out, chain),
        taken: 0,
        previous: None,
        open_calls: HashMap::new(),
        after: None,
    };
    stream.writer.start(&window[0], first_model(&window))?;
    while let Some(event) = window.pop_front() {
        stream.write(event)?;
    }
    while let Some(event) = events.next_event().map_err(Stop::Refused)? {
        stream.write(event)?;
    }
    Ok(stream.writer.after(stream.after.as_ref())?)
}

/// The writer and what it keeps between events.
struct Streamed<'a> {
    writer: EntryWriter<'a>,
    /// How many events have been taken.
    taken: usize,
    /// The id of the event written last: a compaction replacing through it keeps nothing.
    previous: Option<String>,
    /// Call id → tool name of the calls written and not answered yet.
    open_calls: HashMap<String, String>,
    /// What a pi session had after the event written last.
    after: Option<Value>,
}

impl Streamed<'_> {
    fn write(&mut self, event: Event) -> Result<(), Stop> {
        let index = self.taken;
        self.taken += 1;
        check_event(index, &event).map_err(Stop::Refused)?;
        let mut call_name = None;
        match &event.body {
            Body::Compaction {
                replaces_through, ..
            } if self.previous.as_ref() != Some(replaces_through) => {
                // It keeps events whose entry ids are no longer at hand.
                return Err(Stop::StartOver);
            }
            Body::ToolResult { call_id, .. } => call_name = self.open_calls.remove(call_id),
            _ => {}
        }
        let known = Known {
            tool_name: call_name.as_deref(),
            first_kept: None,
        };
        self.writer.event(&event, known)?;
        for (id, name) in tool_calls(&event) {
            self.open_calls.insert(id.to_owned(), name.to_owned());
        }
        self.after = carried_after(&event).cloned();
        self.previous = Some(event.id);
        Ok(())
    }
}
