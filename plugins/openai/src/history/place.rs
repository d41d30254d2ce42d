//! Where each canonical event's parts went in the rendered history (the writer's side of
//! `handoff.events`).
//!
//! The dialect decides the wire (Chat merges a run of assistant turns into one message and moves
//! the images of tool results into a user message after the tool messages; Responses gives every
//! reasoning blob and call an item of its own). Rather than knowing those rules, the writer parses
//! the rendered history back one entry at a time and finds each canonical part among the parsed
//! parts: a user part among user messages, an assistant part among assistant entries, a tool
//! result's parts in the entry that answers its call (its images, failing that, among user
//! messages). The dialect keeps the relative order of equal parts, and equal parts read back
//! equal, so taking the first unclaimed equal part is always a right placement. An empty text
//! found nowhere was not sent (Chat sends none): its position is kept. Any other part found
//! nowhere is one the wire cannot carry: the write is refused, naming the event and field.

use std::collections::{HashMap, VecDeque};

use handoff_sdk::serde_json;
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Transcript};

use super::entries::{Piece, Side, WireEntry};
use super::records::{EventMeta, Kind, SignatureMeta};

/// Whether thinking made by this provider is compared (and so must be carried).
pub(crate) type Keeps<'a> = &'a dyn Fn(Option<&str>) -> bool;

/// The `handoff.events` of `transcript` rendered as `entries`. Events the comparison sets aside
/// whole (assistant turns of display-only thinking) get no entry.
pub(crate) fn place(
    target: &str,
    transcript: &Transcript,
    entries: &[WireEntry],
    keeps: Keeps<'_>,
) -> Result<Vec<EventMeta>, PluginError> {
    let mut index = Index::new(entries);
    let mut out = Vec::with_capacity(transcript.events.len());
    for (i, event) in transcript.events.iter().enumerate() {
        let fail = |field: String, why: &str| {
            PluginError::InvalidTranscript(format!(
                "{target} cannot carry event {i} ({}): {field}: {why}",
                event.id
            ))
        };
        let meta = match &event.body {
            Body::User { content } => {
                let mut placed = Placed::default();
                for (j, part) in content.iter().enumerate() {
                    let found = index.take(Side::User, &Piece::Part(part.clone()));
                    placed.push(found, is_empty_text(part), || {
                        fail(format!("body.content[{j}]"), NOT_SENT)
                    })?;
                }
                placed.meta(event, Kind::User)
            }
            Body::Assistant { content, origin } => {
                let turn_maker = origin.as_ref().map(|o| o.provider.as_str());
                let compared = |p: &AssistantPart| match p {
                    AssistantPart::Thinking(t) => keeps(
                        t.signature
                            .as_ref()
                            .map(|s| s.provider.as_str())
                            .or(turn_maker),
                    ),
                    _ => true,
                };
                if !content.is_empty() && !content.iter().any(compared) {
                    continue; // display-only as a whole: neither sent nor compared
                }
                let mut placed = Placed::default();
                let mut signatures = Vec::new();
                for (j, part) in content.iter().enumerate().filter(|(_, p)| compared(p)) {
                    let found = index.take(Side::Assistant, &Piece::Assistant(part.clone()));
                    let empty = matches!(part, AssistantPart::Text { text } if text.is_empty());
                    placed.push(found, empty, || {
                        let why = match part {
                            AssistantPart::Thinking(t) if t.signature.is_none() => {
                                "reasoning without its encrypted content cannot be sent back"
                            }
                            _ => NOT_SENT,
                        };
                        fail(format!("body.content[{j}]"), why)
                    })?;
                    if let AssistantPart::Thinking(t) = part {
                        if let Some(s) = &t.signature {
                            signatures.push(SignatureMeta {
                                model: s.model.clone(),
                                redacted: s.redacted,
                            });
                        }
                    }
                }
                let mut meta = placed.meta(event, Kind::Assistant);
                meta.origin = Some(origin.clone());
                meta.signatures = signatures;
                meta
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let at = index
                    .results
                    .get(call_id.as_str())
                    .copied()
                    .ok_or_else(|| {
                        fail(
                            "body.call_id".into(),
                            "no entry of the history answers this call",
                        )
                    })?;
                let own = &entries[at].pieces;
                let mut next = 0;
                let mut placed = Placed::default();
                for (j, part) in content.iter().enumerate() {
                    let found = if matches!(own.get(next), Some(Some(Piece::Part(p))) if p == part)
                    {
                        next += 1;
                        Some((at, next - 1))
                    } else if matches!(part, Part::Image { .. } | Part::ImageUrl { .. }) {
                        // Chat sends a result's images in a user message after the tool messages.
                        index.take(Side::User, &Piece::Part(part.clone()))
                    } else {
                        None
                    };
                    placed.push(found, is_empty_text(part), || {
                        fail(format!("body.content[{j}]"), NOT_SENT)
                    })?;
                }
                let mut meta = placed.meta(event, Kind::ToolResult);
                meta.at = Some(at);
                meta.is_error = *is_error;
                meta
            }
            Body::Compaction { .. } => {
                return Err(fail(
                    "body".into(),
                    "a stateless history cannot hold a compaction",
                ))
            }
        };
        out.push(meta);
    }
    Ok(out)
}

const NOT_SENT: &str = "the wire has no room for this part (it would not be sent)";

fn is_empty_text(part: &Part) -> bool {
    matches!(part, Part::Text { text } if text.is_empty())
}

/// One event's content as placed: pointers to the parts the wire holds, and the positions of the
/// empty texts it does not send.
#[derive(Default)]
struct Placed {
    pointers: Vec<(usize, usize)>,
    empty: Vec<usize>,
}

impl Placed {
    /// The next part: found at `found`, else an empty text the wire leaves out, else `fail`.
    fn push(
        &mut self,
        found: Option<(usize, usize)>,
        empty_text: bool,
        fail: impl FnOnce() -> PluginError,
    ) -> Result<(), PluginError> {
        match found {
            Some(at) => self.pointers.push(at),
            None if empty_text => self.empty.push(self.pointers.len() + self.empty.len()),
            None => return Err(fail()),
        }
        Ok(())
    }

    fn meta(self, event: &Event, kind: Kind) -> EventMeta {
        EventMeta {
            id: event.id.clone(),
            timestamp: event.timestamp,
            kind,
            author: event.author.clone(),
            at: None,
            parts: runs(&self.pointers),
            empty: self.empty,
            is_error: false,
            origin: None,
            signatures: Vec::new(),
        }
    }
}

/// `(entry, part)` pointers as runs `[entry, first, count]`.
fn runs(pointers: &[(usize, usize)]) -> Vec<[usize; 3]> {
    let mut out: Vec<[usize; 3]> = Vec::new();
    for &(entry, part) in pointers {
        match out.last_mut() {
            Some(run) if run[0] == entry && run[1] + run[2] == part => run[2] += 1,
            _ => out.push([entry, part, 1]),
        }
    }
    out
}

/// The unclaimed parts of user and assistant entries by what they say, and the entry that
/// answers each call.
struct Index<'a> {
    by_key: HashMap<String, VecDeque<(usize, usize)>>,
    results: HashMap<&'a str, usize>,
}

impl<'a> Index<'a> {
    fn new(entries: &'a [WireEntry]) -> Self {
        let mut by_key: HashMap<String, VecDeque<(usize, usize)>> = HashMap::new();
        let mut results = HashMap::new();
        for (e, entry) in entries.iter().enumerate() {
            if entry.side == Side::Result {
                if let Some(id) = &entry.call_id {
                    results.entry(id.as_str()).or_insert(e);
                }
                continue;
            }
            for (k, piece) in entry.pieces.iter().enumerate() {
                if let Some(piece) = piece {
                    by_key
                        .entry(key(entry.side, piece))
                        .or_default()
                        .push_back((e, k));
                }
            }
        }
        Index { by_key, results }
    }

    /// The first unclaimed part on `side` equal to `piece`, now claimed.
    fn take(&mut self, side: Side, piece: &Piece) -> Option<(usize, usize)> {
        self.by_key.get_mut(&key(side, piece))?.pop_front()
    }
}

/// What a part is found by: its JSON, without what no wire says about a signature (its model and
/// whether it is redacted; `handoff.events` keeps those).
fn key(side: Side, piece: &Piece) -> String {
    let json = match piece {
        Piece::Part(p) => serde_json::to_string(p),
        Piece::Assistant(AssistantPart::Thinking(t)) if t.signature.is_some() => {
            let mut t = t.clone();
            if let Some(s) = &mut t.signature {
                s.model = None;
                s.redacted = false;
            }
            serde_json::to_string(&AssistantPart::Thinking(t))
        }
        Piece::Assistant(p) => serde_json::to_string(p),
    };
    format!("{side:?}:{}", json.expect("parts always serialise"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_runs() {
        assert_eq!(
            runs(&[(1, 0), (1, 1), (3, 0), (1, 2), (1, 3)]),
            [[1, 0, 2], [3, 0, 1], [1, 2, 2]]
        );
        assert!(runs(&[]).is_empty());
    }
}
