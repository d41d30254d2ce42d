//! A long session (3,000 exchanges of user turn, call and result, with text and images) is
//! written, read back equal, appended to and planned on both targets. The times are printed
//! (`--nocapture`), never asserted: speed is measured, not tested.

mod common;

use std::time::Instant;

use common::*;
use handoff_host::{
    AssistantPart, Body, ById, Event, Origin, Part, Plugin, ReadFrom, Timestamp, ToolCall,
    Transcript,
};
use handoff_openai::OpenaiPlugin;
use serde_json::json;

fn long_session(exchanges: usize) -> Transcript {
    let mut events = Vec::with_capacity(exchanges * 3);
    let at = |n: usize| Timestamp::from_millis(1_795_999_300_000 + n as i64 * 1000);
    for i in 0..exchanges {
        let call = format!("call_{i:06}");
        events.push(Event::new(
            format!("u{i}"),
            at(3 * i),
            Body::user_text(format!("step {i}: list the files again")),
        ));
        events.push(Event::new(
            format!("a{i}"),
            at(3 * i + 1),
            Body::Assistant {
                content: vec![
                    AssistantPart::text("Listing."),
                    AssistantPart::ToolCall(ToolCall::new(
                        call.clone(),
                        "shell",
                        json!({"command": ["ls", "-la"], "step": i}),
                    )),
                ],
                origin: Some(Origin::new("openai", "gpt-5", "openai-responses")),
            },
        ));
        let mut content = vec![Part::text("a.txt\nb.txt\n".repeat(20))];
        if i % 100 == 0 {
            content.push(Part::Image {
                media_type: "image/png".into(),
                data: vec![i as u8; 4096],
            });
        }
        events.push(Event::new(
            format!("r{i}"),
            at(3 * i + 2),
            Body::ToolResult {
                call_id: call,
                content,
                is_error: i % 7 == 0,
            },
        ));
    }
    Transcript::new(events)
}

#[test]
fn a_long_session_round_trips_appends_and_plans_on_both_targets() {
    let whole = long_session(3000);
    let head = Transcript::new(whole.events[..whole.events.len() - 3].to_vec());
    for target in TARGETS {
        let (_dir, root) = root();
        let started = Instant::now();
        let session = create(&root, target, &head);
        let created = started.elapsed();
        let started = Instant::now();
        let back = OpenaiPlugin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap();
        let read = started.elapsed();
        let comparison = handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin)
            .target(target)
            .unwrap()
            .comparison();
        comparison.diff(&head, &back).unwrap();
        let started = Instant::now();
        OpenaiPlugin
            .append_id(
                &root,
                target,
                &session.id,
                &whole.events[head.events.len()..],
            )
            .unwrap();
        let appended = started.elapsed();
        let started = Instant::now();
        let (dialect, body) = plan_body(&root, &session);
        let planned = started.elapsed();
        dialect.validate(&body).unwrap();
        comparison
            .diff(
                &whole,
                &OpenaiPlugin.read_id(&root, target, &session.id).unwrap(),
            )
            .unwrap();
        let bytes = std::fs::metadata(&session.path).unwrap().len();
        eprintln!(
            "{target}: {} events, {:.1} MB: create {created:.2?}, read {read:.2?}, append 3 {appended:.2?}, plan {planned:.2?}",
            whole.events.len(),
            bytes as f64 / 1e6
        );
    }
}
