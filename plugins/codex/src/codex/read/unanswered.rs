//! Codex answers a tool call that has no output anywhere in the history when it resumes it (an
//! interrupted turn: the session ended while the tool ran): `ensure_call_outputs_present` puts
//! an output "aborted" (no error flag: the Responses wire has none) right after the call. The
//! reader does the same, so it reads what Codex sends.
//!
//! Events stream through [`AnswerOpenCalls`]: an assistant turn with calls is held, with what
//! follows it, until every call held has its output, then handed on unchanged; at the end, each
//! call still open gets its output right after its turn. In a well-formed rollout the outputs
//! follow their turn at once, so at most one turn and its outputs are held.

use std::collections::HashSet;

use handoff_sdk::{AssistantPart, Body, Event, Part};

/// The output Codex sends for a call with none.
const ABORTED_OUTPUT: &str = "aborted";
/// The event id of such an output: the call id and this.
const ABORTED_ID_SUFFIX: &str = ":aborted";

/// A sink that answers the calls no output answers (see the module docs).
pub(super) struct AnswerOpenCalls<'a> {
    sink: &'a mut dyn FnMut(Event) -> bool,
    held: Vec<Event>,
    open: HashSet<String>,
    stopped: bool,
}

impl<'a> AnswerOpenCalls<'a> {
    pub(super) fn new(sink: &'a mut dyn FnMut(Event) -> bool) -> Self {
        AnswerOpenCalls {
            sink,
            held: Vec::new(),
            open: HashSet::new(),
            stopped: false,
        }
    }

    /// Takes the next event; `false` once the sink wants no more.
    pub(super) fn push(&mut self, event: Event) -> bool {
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

    /// The end of the history: each call still open gets Codex's output after its turn.
    pub(super) fn finish(mut self) {
        if self.stopped || self.held.is_empty() {
            return;
        }
        let open = std::mem::take(&mut self.open);
        for event in std::mem::take(&mut self.held) {
            let answers: Vec<Event> = match &event.body {
                Body::Assistant { content, .. } => call_ids(content)
                    .filter(|id| open.contains(id))
                    .map(|call_id| aborted(&event, call_id))
                    .collect(),
                _ => Vec::new(),
            };
            if !self.hand_on(event) {
                return;
            }
            for answer in answers {
                if !self.hand_on(answer) {
                    return;
                }
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

fn call_ids(content: &[AssistantPart]) -> impl Iterator<Item = String> + '_ {
    content.iter().filter_map(|part| match part {
        AssistantPart::ToolCall(call) => Some(call.id.clone()),
        _ => None,
    })
}

/// Codex's output for `call_id`, at its turn's time.
fn aborted(turn: &Event, call_id: String) -> Event {
    Event::new(
        format!("{call_id}{ABORTED_ID_SUFFIX}"),
        turn.timestamp,
        Body::ToolResult {
            call_id,
            content: vec![Part::text(ABORTED_OUTPUT)],
            is_error: false,
        },
    )
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::json;
    use handoff_sdk::{Timestamp, ToolCall};

    use super::*;

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn assistant(id: &str, calls: &[&str]) -> Event {
        let content = calls
            .iter()
            .map(|c| {
                AssistantPart::ToolCall(ToolCall {
                    id: (*c).into(),
                    name: "shell".into(),
                    arguments: json!({}),
                })
            })
            .collect();
        event(
            id,
            Body::Assistant {
                content,
                origin: None,
            },
        )
    }

    fn result(id: &str, call: &str) -> Event {
        event(
            id,
            Body::ToolResult {
                call_id: call.into(),
                content: vec![Part::text("r")],
                is_error: false,
            },
        )
    }

    fn user(id: &str) -> Event {
        event(
            id,
            Body::User {
                content: vec![Part::text("u")],
            },
        )
    }

    fn run(events: Vec<Event>) -> Vec<String> {
        let mut out = Vec::new();
        let mut sink = |e: Event| {
            let text = match &e.body {
                Body::ToolResult { content, .. } => format!("{content:?}"),
                _ => String::new(),
            };
            out.push(format!(
                "{}{}",
                e.id,
                if text.contains("aborted") { "!" } else { "" }
            ));
            true
        };
        let mut answer = AnswerOpenCalls::new(&mut sink);
        for e in events {
            answer.push(e);
        }
        answer.finish();
        out
    }

    #[test]
    fn answered_calls_pass_unchanged_even_when_the_output_comes_later() {
        let got = run(vec![
            user("u1"),
            assistant("a1", &["c1"]),
            result("r1", "c1"),
        ]);
        assert_eq!(got, ["u1", "a1", "r1"]);
        let got = run(vec![
            assistant("a1", &["c1"]),
            user("u2"),
            result("r1", "c1"),
        ]);
        assert_eq!(got, ["a1", "u2", "r1"]);
    }

    /// Differential case codex/tool-call/interrupted-call: the rollout ends on the call.
    #[test]
    fn an_open_call_gets_codex_s_output_right_after_its_turn() {
        let got = run(vec![user("u1"), assistant("a1", &["c1"])]);
        assert_eq!(got, ["u1", "a1", "c1:aborted!"]);
        let got = run(vec![
            assistant("a1", &["c1", "c2"]),
            result("r2", "c2"),
            user("u2"),
        ]);
        assert_eq!(got, ["a1", "c1:aborted!", "r2", "u2"]);
    }
}
