//! Claude Code resolves a `tool_use` that no `tool_result` answers when it resumes a session (an
//! interrupted turn: the session ended while the tool ran): 2.1.197 drops the call, and an
//! assistant turn left with nothing; 2.1.332 keeps a call the session ended on and sends an
//! error result of its own for it ([`ReadRules::open_call_at_end_answered`]). The reader does as
//! the version it reads for, so it reads what that Claude Code sends.
//!
//! Events stream through [`DropUnresolvedCalls`], the SDK's [`HoldUntilAnswered`]: an assistant
//! turn with calls is held, with what follows it, until every call it (and any held turn) made has
//! its result, then handed on unchanged; calls still open at the end are resolved.

use handoff_sdk::{AssistantPart, Body, Event, HoldUntilAnswered, IdSet, Part};

use super::rules::ReadRules;

/// A sink that resolves the calls no result answers (see the module docs): the SDK's
/// [`HoldUntilAnswered`], whose end drops the open calls and the turns they leave empty, or
/// answers them.
pub(super) struct DropUnresolvedCalls<'a> {
    held: HoldUntilAnswered<'a>,
    rules: ReadRules,
}

impl<'a> DropUnresolvedCalls<'a> {
    pub(super) fn new(sink: &'a mut dyn FnMut(Event) -> bool, rules: ReadRules) -> Self {
        DropUnresolvedCalls {
            held: HoldUntilAnswered::new(sink),
            rules,
        }
    }

    /// Takes the next event; `false` once the sink wants no more.
    pub(super) fn push(&mut self, event: Event) -> bool {
        self.held.push(event)
    }

    /// The end of the conversation: what is held goes out with the calls still open resolved.
    pub(super) fn finish(self) {
        let answer = self.rules.open_call_at_end_answered;
        self.held.finish(|held, open| match answer {
            Some(text) if ends_on_the_open_turn(&held, open) => answered(held, open, text),
            _ => dropped(held, open),
        });
    }
}

/// Whether the held events end on the turn that left calls open: nothing but tool results after
/// the last assistant turn, which holds every open call.
fn ends_on_the_open_turn(held: &[Event], open: &IdSet<String>) -> bool {
    let Some(last) = held
        .iter()
        .rposition(|e| matches!(e.body, Body::Assistant { .. }))
    else {
        return false;
    };
    let only_results_after = held[last + 1..]
        .iter()
        .all(|e| matches!(e.body, Body::ToolResult { .. }));
    let Body::Assistant { content, .. } = &held[last].body else {
        return false;
    };
    let calls_of_last = content
        .iter()
        .filter(|p| matches!(p, AssistantPart::ToolCall(c) if open.contains(&c.id)))
        .count();
    only_results_after && calls_of_last == open.len()
}

/// The held events with each open call of the last turn answered by Claude Code's error result,
/// after the results there are (one event each, in call order; id `<call id>:interrupted`).
fn answered(mut held: Vec<Event>, open: &IdSet<String>, text: &str) -> Vec<Event> {
    let Some(turn) = held
        .iter()
        .rev()
        .find(|e| matches!(e.body, Body::Assistant { .. }))
        .cloned()
    else {
        return held;
    };
    let Body::Assistant { content, .. } = &turn.body else {
        return held;
    };
    for part in content {
        if let AssistantPart::ToolCall(call) = part {
            if open.contains(&call.id) {
                held.push(Event::new(
                    format!("{}:interrupted", call.id),
                    turn.timestamp,
                    Body::ToolResult {
                        call_id: call.id.clone(),
                        content: vec![Part::text(text)],
                        is_error: true,
                    },
                ));
            }
        }
    }
    held
}

/// The held events without the open calls, and without a turn they leave empty.
fn dropped(mut held: Vec<Event>, open: &IdSet<String>) -> Vec<Event> {
    for event in &mut held {
        if let Body::Assistant { content, .. } = &mut event.body {
            content.retain(
                |part| !matches!(part, AssistantPart::ToolCall(call) if open.contains(&call.id)),
            );
        }
    }
    held.retain(|e| !matches!(&e.body, Body::Assistant { content, .. } if content.is_empty()));
    held
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
        event(id, Body::assistant(content))
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

    /// As Claude Code 2.1.197 resumes.
    fn run(events: Vec<Event>) -> Vec<String> {
        run_as(ReadRules::for_version("2.1.197"), events)
    }

    fn run_as(rules: ReadRules, events: Vec<Event>) -> Vec<String> {
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
        let mut drop_open = DropUnresolvedCalls::new(&mut sink, rules);
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

    /// Differential cases interrupted-call and interrupted-call-after-text at 2.1.332.
    #[test]
    fn the_newest_end_answers_the_calls_the_session_ended_on() {
        let got = run_as(
            ReadRules::NEWEST,
            vec![
                user("u1"),
                assistant("a1", Some("let me look"), &["c1", "c2"]),
                result("r1", "c1"),
            ],
        );
        assert_eq!(got, ["u1", "a1c1,c2", "r1", "c2:interrupted"]);
        // A call left open with more after it is dropped, as at every version.
        let got = run_as(
            ReadRules::NEWEST,
            vec![assistant("a1", None, &["c1"]), user("u2")],
        );
        assert_eq!(got, ["u2"]);
    }
}
