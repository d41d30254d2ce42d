//! A synthetic long conversation, one shape for every benchmark and load test: `turns` times a
//! user prompt, an assistant text with a tool call, a ~1.3 KB tool result and an assistant answer.
//! One definition, so figures measured in different benches are of the same session.

use super::{AssistantPart, Body, Event, Origin, Part, Timestamp, ToolCall, Transcript};

/// `turns` tool turns (four events each) with `origin` on every assistant event; no cwd.
pub fn tool_turns(turns: usize, origin: &Origin) -> Transcript {
    let output = "drwxr-xr-x 2 dev dev 4096 Nov 30 00:41 src/handoff/example/file.rs\n".repeat(19);
    let mut events = Vec::with_capacity(turns * 4);
    let mut t = 1_795_999_300_000i64;
    let mut next = |body| {
        t += 1_000;
        let n = events.len();
        events.push(Event::new(format!("e{n}"), Timestamp::from_millis(t), body));
    };
    for i in 0..turns {
        let call_id = format!("toolu_{i:020}");
        next(Body::User {
            content: vec![Part::text(format!(
                "Turn {i}: list the files under src and tell me which changed."
            ))],
        });
        next(Body::Assistant {
            content: vec![
                AssistantPart::text("I'll list them."),
                AssistantPart::ToolCall(ToolCall::new(
                    call_id.clone(),
                    "Bash",
                    serde_json::json!({"command": "ls -la src", "description": "List"}),
                )),
            ],
            origin: Some(origin.clone()),
        });
        next(Body::ToolResult {
            call_id,
            content: vec![Part::text(output.clone())],
            is_error: false,
        });
        next(Body::Assistant {
            content: vec![AssistantPart::text(format!(
                "In turn {i}, file.rs changed."
            ))],
            origin: Some(origin.clone()),
        });
    }
    Transcript::new(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_is_answered_and_the_transcript_is_valid() {
        let origin = Origin {
            provider: "anthropic".into(),
            model: None,
            api: None,
        };
        let t = tool_turns(3, &origin);
        assert_eq!(t.events.len(), 12);
        t.validate().expect("valid");
    }
}
