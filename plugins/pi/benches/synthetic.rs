//! The synthetic session both benchmarks use: `handoff_live::bench::tool_session` (5,000 turns)
//! as a Claude Code session read by handoff would hand it over, each turn calling `Bash` after
//! signed thinking (about 19 MB as a pi session).

use handoff_live::bench::{tool_session, BenchCall};
use handoff_sdk::serde_json::json;
use handoff_sdk::{AssistantPart, Body, Origin, Signature, Thinking, Transcript};

/// Builds the transcript.
pub fn transcript() -> Transcript {
    let origin = Origin::new("anthropic", "claude-sonnet-4-5", "anthropic-messages");
    let call = BenchCall {
        id_prefix: "toolu_",
        name: "Bash",
        arguments: json!({"command": "ls -la src", "description": "List the sources", "timeout": 10000}),
    };
    let mut t = tool_session(origin, &call);
    // Signed thinking before each turn's call: the turn's first assistant event, `a<turn>`.
    for (turn, event) in t.events.iter_mut().skip(1).step_by(4).enumerate() {
        let Body::Assistant { content, .. } = &mut event.body else {
            unreachable!("the second event of every turn is the assistant's call")
        };
        content.insert(
            0,
            AssistantPart::Thinking(Thinking {
                text: "The user wants the listing; run ls in src and compare with the last one."
                    .into(),
                signature: Some(Signature {
                    provider: "anthropic".into(),
                    model: None,
                    value: format!("EqQBCkgIBxABGAIiQ{turn:08}FakeSignatureForTheBenchmark=="),
                    redacted: false,
                }),
            }),
        );
    }
    t
}
