//! The structural rules of a transcript, checked one event at a time.

use handoff_sdk::spill::SpillSet;
use handoff_sdk::{AssistantPart, Body, Event, IdSeeds, ValidationError};

/// The structural rules of [`Transcript::validate`](handoff_sdk::Transcript::validate), checked one
/// event at a time, so a streamed read refuses exactly what a whole read refuses. (Event ids are
/// unique by construction here: the reader refuses a reused tagged id and gives untagged items
/// unused ones.)
pub(super) struct StructureCheck {
    /// The calls made and those answered, by digest (16 bytes, never the id; the older ones in
    /// a temporary file past a threshold).
    calls: SpillSet,
    answered: SpillSet,
    seeds: IdSeeds,
}

impl StructureCheck {
    /// A check whose sets go to temporary files past `threshold` calls each.
    pub(super) fn spilling_past(threshold: usize) -> Self {
        StructureCheck {
            calls: SpillSet::with_threshold(threshold),
            answered: SpillSet::with_threshold(threshold),
            seeds: IdSeeds::default(),
        }
    }

    pub(super) fn check(&mut self, index: usize, event: &Event) -> Result<(), ValidationError> {
        let fail = |field: String, message: String| ValidationError {
            index,
            event_id: event.id.clone(),
            field,
            message,
        };
        if event.id.is_empty() {
            return Err(fail("id".into(), "event id is empty".into()));
        }
        match &event.body {
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    if let AssistantPart::ToolCall(call) = part {
                        if call.id.is_empty() {
                            return Err(fail(
                                format!("body.content[{i}].id"),
                                "tool call id is empty".into(),
                            ));
                        }
                        if call.name.is_empty() {
                            return Err(fail(
                                format!("body.content[{i}].name"),
                                "tool name is empty".into(),
                            ));
                        }
                        if !self.calls.insert_new(self.seeds.digest(&call.id)) {
                            return Err(fail(
                                format!("body.content[{i}].id"),
                                format!("tool call id {:?} is used twice", call.id),
                            ));
                        }
                    }
                }
            }
            Body::ToolResult { call_id, .. } => {
                let call = self.seeds.digest(call_id);
                if !self.calls.contains(&call) {
                    return Err(fail(
                        "body.call_id".into(),
                        format!("{call_id:?} answers no earlier tool call"),
                    ));
                }
                if !self.answered.insert_new(call) {
                    return Err(fail(
                        "body.call_id".into(),
                        format!("tool call {call_id:?} already has a result"),
                    ));
                }
            }
            Body::User { .. } | Body::Compaction { .. } => {}
        }
        Ok(())
    }
}
