//! A sink that holds an assistant turn with tool calls, and what follows it, until every call it
//! made has its result: what a reader needs when a CLI does something of its own with a call no
//! result answers when it resumes a session (Claude Code drops it, Codex answers it "aborted").
//! The reader hands its events through [`HoldUntilAnswered`] and says, at the end, what becomes
//! of the turns still held.

use handoff_transcript::{AssistantPart, Body, Event};

use crate::ids::{HashSetExt, IdSet};

/// Hands events on to a sink, holding an assistant turn with calls (and what follows it) until
/// every call held has its result, then handing them on unchanged. In a well-formed session the
/// results follow their turn at once, so at most one turn and its results are held.
pub struct HoldUntilAnswered<'a> {
    sink: &'a mut dyn FnMut(Event) -> bool,
    held: Vec<Event>,
    open: IdSet<String>,
    stopped: bool,
}

impl<'a> HoldUntilAnswered<'a> {
    /// Holds for `sink`.
    pub fn new(sink: &'a mut dyn FnMut(Event) -> bool) -> Self {
        HoldUntilAnswered {
            sink,
            held: Vec::new(),
            open: IdSet::new(),
            stopped: false,
        }
    }

    /// Takes the next event; `false` once the sink wants no more.
    pub fn push(&mut self, event: Event) -> bool {
        match &event.body {
            Body::Assistant { content, .. } => self.open.extend(call_ids(content)),
            Body::ToolResult { call_id, .. } => {
                self.open.remove(call_id);
            }
            _ => {}
        }
        if self.open.is_empty() && self.held.is_empty() {
            return self.hand_on(event);
        }
        self.held.push(event);
        if self.open.is_empty() {
            return self.release();
        }
        true
    }

    /// The end of the session: `close` turns the events still held, whose calls in `open` no
    /// result answered, into what the sink gets.
    pub fn finish(mut self, close: impl FnOnce(Vec<Event>, &IdSet<String>) -> Vec<Event>) {
        if self.stopped || self.held.is_empty() {
            return;
        }
        let open = std::mem::take(&mut self.open);
        for event in close(std::mem::take(&mut self.held), &open) {
            if !self.hand_on(event) {
                return;
            }
        }
    }

    fn release(&mut self) -> bool {
        for event in std::mem::take(&mut self.held) {
            if !self.hand_on(event) {
                return false;
            }
        }
        true
    }

    fn hand_on(&mut self, event: Event) -> bool {
        if !self.stopped && !(self.sink)(event) {
            self.stopped = true;
        }
        !self.stopped
    }
}

/// The ids of the tool calls among an assistant turn's parts.
pub fn call_ids(content: &[AssistantPart]) -> impl Iterator<Item = String> + '_ {
    content.iter().filter_map(|part| match part {
        AssistantPart::ToolCall(call) => Some(call.id.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use handoff_transcript::{Timestamp, ToolCall};

    use super::*;

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn assistant(id: &str, calls: &[&str]) -> Event {
        let content = calls
            .iter()
            .map(|c| AssistantPart::ToolCall(ToolCall::new(*c, "t", serde_json::json!({}))))
            .collect();
        event(id, Body::assistant(content))
    }

    fn result(id: &str, call: &str) -> Event {
        event(id, Body::tool_output(call, "r"))
    }

    #[test]
    fn holds_until_answered_and_the_end_decides_what_is_still_held() {
        let mut out = Vec::new();
        let mut sink = |e: Event| {
            out.push(e.id);
            true
        };
        let mut hold = HoldUntilAnswered::new(&mut sink);
        for e in [
            assistant("a1", &["c1"]),
            result("r1", "c1"),
            assistant("a2", &["c2", "c3"]),
            result("r3", "c3"),
        ] {
            assert!(hold.push(e));
        }
        let mut seen_open = Vec::new();
        hold.finish(|held, open| {
            seen_open.extend(open.iter().cloned());
            held.into_iter().rev().collect()
        });
        assert_eq!(seen_open, ["c2"]);
        assert_eq!(out, ["a1", "r1", "r3", "a2"]);
    }

    #[test]
    fn a_sink_that_wants_no_more_gets_no_more() {
        let mut out = Vec::new();
        let mut sink = |e: Event| {
            out.push(e.id);
            false
        };
        let mut hold = HoldUntilAnswered::new(&mut sink);
        assert!(hold.push(assistant("a1", &["c1"])));
        assert!(!hold.push(result("r1", "c1")));
        hold.finish(|held, _| held);
        assert_eq!(out, ["a1"]);
    }
}
