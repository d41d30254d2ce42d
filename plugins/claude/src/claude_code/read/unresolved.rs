//! Claude Code drops a `tool_use` that no `tool_result` answers when it resumes a session (an
//! interrupted turn: the session ended while the tool ran), and an assistant turn left with
//! nothing; the reader does the same, so it reads what Claude Code sends.
//!
//! Events stream through [`DropUnresolvedCalls`], the SDK's [`HoldUntilAnswered`]: an assistant
//! turn with calls is held, with what follows it, until every call it (and any held turn) made has
//! its result, then handed on unchanged; calls still open at the end are removed.

use handoff_sdk::{AssistantPart, Body, Event, HoldUntilAnswered};

/// A sink that drops the calls no result answers (see the module docs): the SDK's
/// [`HoldUntilAnswered`], whose end drops the open calls and the turns they leave empty.
pub(super) struct DropUnresolvedCalls<'a>(HoldUntilAnswered<'a>);

impl<'a> DropUnresolvedCalls<'a> {
    pub(super) fn new(sink: &'a mut dyn FnMut(Event) -> bool) -> Self {
        DropUnresolvedCalls(HoldUntilAnswered::new(sink))
    }

    /// Takes the next event; `false` once the sink wants no more.
    pub(super) fn push(&mut self, event: Event) -> bool {
        self.0.push(event)
    }

    /// The end of the conversation: what is held goes out without the calls still open.
    pub(super) fn finish(self) {
        self.0.finish(|mut held, open| {
            for event in &mut held {
                if let Body::Assistant { content, .. } = &mut event.body {
                    content.retain(|part| {
                        !matches!(part, AssistantPart::ToolCall(call) if open.contains(&call.id))
                    });
                }
            }
            held.retain(
                |e| !matches!(&e.body, Body::Assistant { content, .. } if content.is_empty()),
            );
            held
        });
    }
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::json;
    use handoff_sdk::{Part, Timestamp, ToolCall};

    use super::*;

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn assistant(id: &str, text: Option<&str>, calls: &[&str]) -> Event {
        let mut content: Vec<AssistantPart> = text
            .map(|t| AssistantPart::Text { text: t.into() })
            .into_iter()
            .collect();
        content.extend(
            calls
                .iter()
                .map(|c| AssistantPart::ToolCall(ToolCall::new(*c, "Bash", json!({})))),
        );
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
            let calls = match &e.body {
                Body::Assistant { content, .. } => content
                    .iter()
                    .filter_map(|p| match p {
                        AssistantPart::ToolCall(c) => Some(c.id.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                _ => String::new(),
            };
            out.push(format!("{}{}", e.id, calls));
            true
        };
        let mut drop_open = DropUnresolvedCalls::new(&mut sink);
        for e in events {
            drop_open.push(e);
        }
        drop_open.finish();
        out
    }

    #[test]
    fn answered_calls_pass_unchanged() {
        let got = run(vec![
            user("u1"),
            assistant("a1", None, &["c1", "c2"]),
            result("r1", "c1"),
            result("r2", "c2"),
            assistant("a2", Some("done"), &[]),
        ]);
        assert_eq!(got, ["u1", "a1c1,c2", "r1", "r2", "a2"]);
    }

    /// Differential case claude-code/tool-call/interrupted-call: the session ends on the call.
    #[test]
    fn a_turn_of_unanswered_calls_only_is_dropped_and_a_text_turn_keeps_its_text() {
        let got = run(vec![user("u1"), assistant("a1", None, &["c1"])]);
        assert_eq!(got, ["u1"]);
        let got = run(vec![
            user("u1"),
            assistant("a1", Some("let me look"), &["c1", "c2"]),
            result("r1", "c1"),
        ]);
        assert_eq!(got, ["u1", "a1c1", "r1"]);
    }

    #[test]
    fn a_call_answered_later_is_kept() {
        let got = run(vec![
            assistant("a1", None, &["c1"]),
            user("u2"),
            result("r1", "c1"),
        ]);
        assert_eq!(got, ["a1c1", "u2", "r1"]);
    }
}
