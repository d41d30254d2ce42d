//! The structural rules of a transcript, checked one event at a time.

use handoff_sdk::{AssistantPart, Body, Event, IdDigest, IdMap, IdSeeds, ValidationError};

/// The structural rules of [`Transcript::validate`], checked one event at a time, so a streamed
/// read refuses exactly what a whole read refuses. (Event ids are unique by construction here:
/// the reader refuses a reused tagged id and gives untagged items unused ones.)
#[derive(Default)]
pub(super) struct StructureCheck {
    /// Call id (its digest: 16 bytes, never the id) → answered yet?
    calls: IdMap<IdDigest, bool>,
    seeds: IdSeeds,
}

impl StructureCheck {
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
                        if self
                            .calls
                            .insert(self.seeds.digest(&call.id), false)
                            .is_some()
                        {
                            return Err(fail(
                                format!("body.content[{i}].id"),
                                format!("tool call id {:?} is used twice", call.id),
                            ));
                        }
                    }
                }
            }
            Body::ToolResult { call_id, .. } => {
                match self.calls.get_mut(&self.seeds.digest(call_id)) {
                    None => {
                        return Err(fail(
                            "body.call_id".into(),
                            format!("{call_id:?} answers no earlier tool call"),
                        ))
                    }
                    Some(true) => {
                        return Err(fail(
                            "body.call_id".into(),
                            format!("tool call {call_id:?} already has a result"),
                        ))
                    }
                    Some(answered) => *answered = true,
                }
            }
            Body::User { .. } | Body::Compaction { .. } => {}
        }
        Ok(())
    }
}
