//! The reader's state: the events not handed out yet (what later lines can still change), the
//! ids seen, and what turns and failed calls say about tool results.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::Path;

use handoff_sdk::{
    AssistantPart, Body, Event, IdMap, IdSeeds, IdSet, Origin, PluginError, Timestamp,
};

use handoff_sdk::spill::SpillSet;

use super::line::{parse_line, parse_session_meta, Meta};
use super::replacement::UserHistory;
use super::structure::StructureCheck;
use super::Header;
use crate::codex::records::*;
use crate::THINKING_PROVIDER;

/// How the events being built are grouped.
#[derive(PartialEq)]
pub(super) enum Group {
    /// Items tagged with the id of the open event (the last one held).
    Tagged,
    /// Untagged assistant-side items (message, reasoning, call) of one model response.
    UntaggedAssistant,
    /// An event that takes no more items.
    Closed,
}

/// An event not handed out yet, with the line it started on.
pub(super) struct Held {
    pub(super) line: usize,
    pub(super) event: Event,
}

pub(super) struct ReadState<'p, 's> {
    pub(super) path: &'p Path,
    pub(super) sink: &'s mut dyn FnMut(Event) -> bool,
    /// The sink asked for no more events.
    pub(super) stopped: bool,
    pub(super) header: Option<Header>,
    pub(super) provider: String,
    pub(super) model: Option<String>,
    /// Events not handed out yet. The last is kept until the end: it may still take items, and
    /// an untagged compaction replaces through it.
    pub(super) held: VecDeque<Held>,
    /// How many events were handed out (the index of `held[0]`).
    pub(super) emitted: usize,
    /// The index of the first tool result of the current turn that a later `item_completed`
    /// may still mark failed; nothing from it on is handed out before the turn ends.
    pub(super) hold_from: Option<usize>,
    pub(super) group: Group,
    /// The digests of the event ids met (16 bytes an event, never the id itself; the older
    /// ones in a temporary file past a threshold, `transcript::spill`).
    pub(super) ids: SpillSet,
    pub(super) seeds: IdSeeds,
    /// Calls an `item_completed` said failed.
    pub(super) failed_calls: IdSet<String>,
    /// Results of this turn by call id (their index), while they may still be marked failed.
    pub(super) open_results: IdMap<String, usize>,
    pub(super) rules: StructureCheck,
    /// The user messages in Codex's history now (since its last compaction), which a
    /// `compacted` record without `replacement_history` rebuilds the history from (as far back
    /// as a rebuild reaches).
    pub(super) history_users: UserHistory,
}

/// A user message in Codex's history: its line, and its texts in order (what Codex's compaction
/// keeps of it: its images are left out).
pub(super) struct SeenUser {
    pub(super) line: usize,
    pub(super) texts: Vec<String>,
}

impl<'p, 's> ReadState<'p, 's> {
    /// A read whose id sets go to temporary files past `spill_past` ids each.
    pub(super) fn new(
        path: &'p Path,
        sink: &'s mut dyn FnMut(Event) -> bool,
        spill_past: usize,
    ) -> Self {
        ReadState {
            path,
            sink,
            stopped: false,
            header: None,
            provider: THINKING_PROVIDER.to_owned(),
            model: None,
            held: VecDeque::new(),
            emitted: 0,
            hold_from: None,
            group: Group::Closed,
            ids: SpillSet::with_threshold(spill_past),
            seeds: IdSeeds::default(),
            failed_calls: IdSet::default(),
            open_results: IdMap::default(),
            rules: StructureCheck::spilling_past(spill_past),
            history_users: UserHistory::default(),
        }
    }

    pub(super) fn line(&mut self, n: usize, bytes: &[u8]) -> Result<(), PluginError> {
        let path = self.path;
        if self.header.is_none() {
            let (_, Meta(header, provider)) = parse_session_meta(path, n, bytes)?;
            if let Some(p) = provider {
                self.provider = p;
            }
            self.header = Some(header);
            return Ok(());
        }
        let (ts, payload) = parse_line(path, n, bytes)?;
        match payload {
            PayloadIn::ResponseItem(item) => self.item(n, ts, item)?,
            PayloadIn::Compacted(compacted) => self.compacted(n, ts, compacted)?,
            PayloadIn::TurnContext(context) => {
                if let Some(model) = context.model {
                    self.model = Some(model.into_owned());
                }
            }
            PayloadIn::EventMsg(event) => match event.kind.as_deref() {
                Some("item_completed") => {
                    if let Some(EventItemIn {
                        id: Some(id),
                        status: Some(status),
                    }) = event.item
                    {
                        if status == "failed" {
                            self.call_failed(id.into_owned());
                        }
                    }
                }
                // A turn ends: its results can no longer change.
                Some("task_started" | "task_complete" | "turn_aborted") => {
                    self.open_results.clear();
                    self.hold_from = None;
                }
                _ => {}
            },
            // A second session_meta (a forked history's parent) is not history, nor are
            // world_state, token_usage_record and record types of later Codex versions. Their
            // envelope was checked above.
            PayloadIn::Other => {}
        }
        self.release(false)
    }

    /// The CLI marks a failed tool only in an `item_completed` event: mark the result of the
    /// call, whether it came before (by call id, for the rest of the file) or earlier in the
    /// same turn.
    pub(super) fn call_failed(&mut self, call_id: String) {
        if let Some(index) = self.open_results.get(&call_id) {
            if let Some(Held {
                event:
                    Event {
                        body: Body::ToolResult { is_error, .. },
                        ..
                    },
                ..
            }) = index
                .checked_sub(self.emitted)
                .and_then(|i| self.held.get_mut(i))
            {
                *is_error = true;
            }
        }
        self.failed_calls.insert(call_id);
    }

    /// Hands out the events no later line can change (all of them when `all`).
    pub(super) fn release(&mut self, all: bool) -> Result<(), PluginError> {
        let keep = if all { 0 } else { 1 };
        while self.held.len() > keep && !self.stopped {
            if self.hold_from.is_some_and(|from| self.emitted >= from) && !all {
                break;
            }
            let Some(Held { line, event }) = self.held.pop_front() else {
                break;
            };
            self.rules
                .check(self.emitted, &event)
                .map_err(|e| PluginError::Malformed {
                    file: self.path.to_owned(),
                    line: Some(line),
                    field: Some(e.field.clone()),
                    message: format!("the history is not a valid transcript: {e}"),
                })?;
            self.emitted += 1;
            if !(self.sink)(event) {
                self.stopped = true;
            }
        }
        Ok(())
    }

    /// Adds assistant-side parts: to the open event of the same group, or as a new event.
    pub(super) fn push_assistant(
        &mut self,
        n: usize,
        ts: Timestamp,
        tag: Option<Box<EventTag>>,
        item_id: Option<Cow<'_, str>>,
        parts: Vec<AssistantPart>,
        empty_message: bool,
    ) -> Result<(), PluginError> {
        let same_group = match (&tag, &self.group) {
            (Some(t), Group::Tagged) => self.held.back().is_some_and(|open| open.event.id == t.id),
            (None, Group::UntaggedAssistant) => true,
            _ => false,
        };
        if same_group {
            // The open event is never handed out before the next one starts.
            if let Some(Held {
                event:
                    Event {
                        body: Body::Assistant { content, .. },
                        ..
                    },
                ..
            }) = self.held.back_mut()
            {
                if empty_message {
                    return Err(PluginError::malformed_line(
                        self.path,
                        n,
                        Some("payload.content"),
                        "an empty assistant message inside a longer assistant turn",
                    ));
                }
                content.extend(parts);
                return Ok(());
            }
            return Err(PluginError::malformed_line(
                self.path,
                n,
                Some("payload.x-handoff-event.id"),
                "an assistant item tagged with the id of a non-assistant event",
            ));
        }
        let untagged = tag.is_none();
        let origin = match &tag {
            Some(t) => t.origin.clone(),
            None => Some(Origin {
                provider: self.provider.clone(),
                model: self.model.clone(),
                api: Some("openai-responses".to_owned()),
            }),
        };
        self.push(
            n,
            ts,
            tag,
            item_id,
            Body::Assistant {
                content: parts,
                origin,
            },
        )?;
        if untagged {
            self.group = Group::UntaggedAssistant;
        }
        Ok(())
    }

    /// Starts a new event.
    pub(super) fn push(
        &mut self,
        n: usize,
        ts: Timestamp,
        tag: Option<Box<EventTag>>,
        item_id: Option<Cow<'_, str>>,
        body: Body,
    ) -> Result<(), PluginError> {
        let (id, author, group) = match tag {
            Some(tag) => {
                let tag = *tag;
                if !self.ids.insert_new(self.seeds.digest(&tag.id)) {
                    return Err(PluginError::malformed_line(
                        self.path,
                        n,
                        Some("payload.x-handoff-event.id"),
                        format!(
                            "event id {:?} is used by an earlier, separate event",
                            tag.id
                        ),
                    ));
                }
                (tag.id, tag.author, Group::Tagged)
            }
            None => {
                let id = match item_id {
                    Some(id) if !self.ids.contains(&self.seeds.digest(&id)) => id.into_owned(),
                    _ => format!("line-{n}"),
                };
                self.ids.insert(self.seeds.digest(&id), ());
                (id, None, Group::Closed)
            }
        };
        let mut event = Event::new(id, ts, body);
        event.author = author;
        self.held.push_back(Held { line: n, event });
        self.group = group;
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Header, PluginError> {
        let header = self.header.take().ok_or_else(|| PluginError::Malformed {
            file: self.path.to_owned(),
            line: None,
            field: None,
            message: "no session_meta line".into(),
        })?;
        self.release(true)?;
        Ok(header)
    }
}
