//! Codex answers a tool call that has no output anywhere in the history when it resumes it (an
//! interrupted turn: the session ended while the tool ran): `ensure_call_outputs_present` puts
//! an output "aborted" (no error flag: the Responses wire has none) right after the call. The
//! reader does the same, so it reads what Codex sends.
//!
//! Events stream through [`AnswerOpenCalls`], the SDK's [`HoldUntilAnswered`]: an assistant turn
//! with calls is held, with what follows it, until every call held has its output, then handed on
//! unchanged; at the end, each call still open gets its output right after it (a turn with more
//! after that call is split there, as Codex's output item splits it on the wire).

use handoff_sdk::held::call_ids;
use handoff_sdk::{AssistantPart, Body, Event, HoldUntilAnswered, IdSet, Part, Timestamp};

/// The output Codex sends for a call with none.
const ABORTED_OUTPUT: &str = "aborted";
/// The event id of such an output: the call id and this.
const ABORTED_ID_SUFFIX: &str = ":aborted";

/// A sink that answers the calls no output answers (see the module docs): the SDK's
/// [`HoldUntilAnswered`], whose end gives each open call Codex's output.
pub(super) struct AnswerOpenCalls<'a>(HoldUntilAnswered<'a>);

impl<'a> AnswerOpenCalls<'a> {
    pub(super) fn new(sink: &'a mut dyn FnMut(Event) -> bool) -> Self {
        AnswerOpenCalls(HoldUntilAnswered::new(sink))
    }

    /// Takes the next event; `false` once the sink wants no more.
    pub(super) fn push(&mut self, event: Event) -> bool {
        self.0.push(event)
    }

    /// The end of the history: each call still open gets Codex's output after its turn.
    pub(super) fn finish(self) {
        self.0.finish(|held, open| {
            held.into_iter()
                .flat_map(|event| answered(event, open))
                .collect()
        });
    }
}

/// `event` with Codex's output right after each of its calls in `open`: an assistant turn with
/// more after such a call is split there (the later parts under `<id>:<k>`), as the output
/// item Codex puts between them splits the turn on the wire.
fn answered(event: Event, open: &IdSet<String>) -> Vec<Event> {
    let has_open_call = matches!(&event.body, Body::Assistant { content, .. }
        if call_ids(content).any(|id| open.contains(&id)));
    if !has_open_call {
        return vec![event];
    }
    let Event {
        id,
        timestamp,
        author,
        body: Body::Assistant { content, origin },
        opaque,
    } = event
    else {
        unreachable!("checked: an assistant turn")
    };
    let mut out = Vec::new();
    let mut parts = Vec::new();
    let mut opaque = Some(opaque);
    let mut segment = 0;
    let mut flush = |parts: &mut Vec<AssistantPart>, out: &mut Vec<Event>| {
        let mut turn = Event::new(
            if segment == 0 {
                id.clone()
            } else {
                format!("{id}:{segment}")
            },
            timestamp,
            Body::Assistant {
                content: std::mem::take(parts),
                origin: origin.clone(),
            },
        );
        turn.author = author.clone();
        turn.opaque = opaque.take().unwrap_or_default();
        segment += 1;
        out.push(turn);
    };
    for part in content {
        let open_call = match &part {
            AssistantPart::ToolCall(call) if open.contains(&call.id) => Some(call.id.clone()),
            _ => None,
        };
        parts.push(part);
        if let Some(call_id) = open_call {
            flush(&mut parts, &mut out);
            out.push(aborted(timestamp, call_id));
        }
    }
    if !parts.is_empty() {
        flush(&mut parts, &mut out);
    }
    out
}

/// Codex's output for `call_id`, at its turn's time.
fn aborted(timestamp: Timestamp, call_id: String) -> Event {
    Event::new(
        format!("{call_id}{ABORTED_ID_SUFFIX}"),
        timestamp,
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
    use handoff_sdk::ToolCall;

    use super::*;

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn assistant(id: &str, calls: &[&str]) -> Event {
        let content = calls
            .iter()
            .map(|c| AssistantPart::ToolCall(ToolCall::new(*c, "shell", json!({}))))
            .collect();
        event(id, Body::assistant(content))
    }

    fn result(id: &str, call: &str) -> Event {
        event(id, Body::tool_output(call, "r"))
    }

    fn user(id: &str) -> Event {
        event(id, Body::user_text("u"))
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
        // Parallel calls, the first open: Codex's output splits the turn after it.
        assert_eq!(got, ["a1", "c1:aborted!", "a1:1", "r2", "u2"]);
    }

    /// Differential case codex/tool-call/output-dropped: the answer followed the call in the
    /// same turn; Codex's output goes between them.
    #[test]
    fn a_turn_with_more_after_an_open_call_is_split_there() {
        let mut turn = assistant("a1", &["c1"]);
        if let Body::Assistant { content, .. } = &mut turn.body {
            content.push(AssistantPart::Text { text: "ok".into() });
        }
        let got = run(vec![user("u1"), turn]);
        assert_eq!(got, ["u1", "a1", "c1:aborted!", "a1:1"]);
    }
}
