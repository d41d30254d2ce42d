//! What the plugin's tests share: transcripts of any length, a store root, the plugin.
#![allow(dead_code)]

use handoff_opencode::{OpencodePlugin, TARGET};
use handoff_sdk::serde_json::json;
use handoff_sdk::{
    AssistantPart, Body, ById, CreateOptions, Event, Origin, Plugin, SessionRef, StoreRoot,
    Timestamp, ToolCall, Transcript,
};

/// `turns` turns of: a user question, an answer with two parallel calls, their results (the
/// second an error), a closing text.
pub fn conversation(turns: usize) -> Transcript {
    let mut events = Vec::new();
    let mut ms = 1_790_000_000_000i64;
    let mut at = || {
        ms += 1000;
        Timestamp::from_millis(ms)
    };
    let origin = Some(Origin {
        provider: "anthropic".into(),
        model: Some("claude-sonnet-4-5".into()),
        api: None,
    });
    for t in 0..turns {
        events.push(Event::new(
            format!("u{t}"),
            at(),
            Body::user_text(format!("question {t}: list the folder")),
        ));
        events.push(Event::new(
            format!("a{t}"),
            at(),
            Body::Assistant {
                content: vec![
                    AssistantPart::text(format!("looking {t}")),
                    AssistantPart::ToolCall(ToolCall::new(
                        format!("c{t}a"),
                        "bash",
                        json!({"command": "ls"}),
                    )),
                    AssistantPart::ToolCall(ToolCall::new(
                        format!("c{t}b"),
                        "bash",
                        json!({"command": "ls /x"}),
                    )),
                ],
                origin: origin.clone(),
            },
        ));
        events.push(Event::new(
            format!("r{t}a"),
            at(),
            Body::tool_output(format!("c{t}a"), format!("file-{t}.txt\n").repeat(20)),
        ));
        events.push(Event::new(
            format!("r{t}b"),
            at(),
            Body::tool_error(format!("c{t}b"), "ls: cannot access '/x'"),
        ));
        events.push(Event::new(
            format!("z{t}"),
            at(),
            Body::Assistant {
                content: vec![AssistantPart::text(format!("done {t}"))],
                origin: origin.clone(),
            },
        ));
    }
    let mut transcript = Transcript::new(events);
    transcript.cwd = Some("/home/dev/proj".into());
    transcript
}

/// Creates `transcript` in `root`.
pub fn create(root: &StoreRoot, transcript: &Transcript) -> SessionRef {
    OpencodePlugin
        .writer()
        .create(
            root,
            TARGET,
            transcript,
            &CreateOptions {
                cwd: None,
                locator: Some("conv-1".into()),
            },
        )
        .expect("create")
}

/// Reads session `id` of `root`.
pub fn read(root: &StoreRoot, id: &str) -> Transcript {
    OpencodePlugin.read_id(root, TARGET, id).expect("read")
}
