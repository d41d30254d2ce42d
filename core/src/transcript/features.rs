use serde::{Deserialize, Serialize};

use super::{AssistantPart, Body, Event, Part, Transcript};

/// A part of the canonical model that a target may or may not carry natively.
///
/// A target's manifest lists what it carries; a write of a transcript that uses anything else is
/// refused, naming the first event that needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Text in user and assistant turns.
    Text,
    /// Images by bytes in user turns.
    Image,
    /// Images by URL.
    ImageUrl,
    /// Thinking text.
    Thinking,
    /// Thinking with a provider signature or encrypted blob.
    ThinkingSignature,
    /// Tool calls.
    ToolCall,
    /// Tool results.
    ToolResult,
    /// The error flag of a failed tool result.
    ToolError,
    /// Images inside tool results.
    ToolResultImage,
    /// Compaction events.
    Compaction,
    /// Event authors (several people in one conversation).
    Author,
}

impl Feature {
    /// Every feature, in a fixed order.
    pub const ALL: [Feature; 11] = [
        Feature::Text,
        Feature::Image,
        Feature::ImageUrl,
        Feature::Thinking,
        Feature::ThinkingSignature,
        Feature::ToolCall,
        Feature::ToolResult,
        Feature::ToolError,
        Feature::ToolResultImage,
        Feature::Compaction,
        Feature::Author,
    ];

    /// The snake_case name used in manifests and messages.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Text => "text",
            Feature::Image => "image",
            Feature::ImageUrl => "image_url",
            Feature::Thinking => "thinking",
            Feature::ThinkingSignature => "thinking_signature",
            Feature::ToolCall => "tool_call",
            Feature::ToolResult => "tool_result",
            Feature::ToolError => "tool_error",
            Feature::ToolResultImage => "tool_result_image",
            Feature::Compaction => "compaction",
            Feature::Author => "author",
        }
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Event {
    /// Every feature this event needs, in [`Feature::ALL`] order, without repeats.
    pub fn features(&self) -> Vec<Feature> {
        let mut found = Vec::new();
        let mut add = |f: Feature| {
            if !found.contains(&f) {
                found.push(f);
            }
        };
        if self.author.is_some() {
            add(Feature::Author);
        }
        match &self.body {
            Body::User { content } => {
                for part in content {
                    add(user_part_feature(part, false));
                }
            }
            Body::Assistant { content, .. } => {
                for part in content {
                    match part {
                        AssistantPart::Text { .. } => add(Feature::Text),
                        AssistantPart::Thinking(t) => {
                            add(Feature::Thinking);
                            if t.signature.is_some() {
                                add(Feature::ThinkingSignature);
                            }
                        }
                        AssistantPart::ToolCall(_) => add(Feature::ToolCall),
                    }
                }
            }
            Body::ToolResult {
                content, is_error, ..
            } => {
                add(Feature::ToolResult);
                if *is_error {
                    add(Feature::ToolError);
                }
                for part in content {
                    add(user_part_feature(part, true));
                }
            }
            Body::Compaction { .. } => add(Feature::Compaction),
        }
        found.sort();
        found
    }
}

fn user_part_feature(part: &Part, in_tool_result: bool) -> Feature {
    match part {
        Part::Text { .. } => Feature::Text,
        Part::Image { .. } if in_tool_result => Feature::ToolResultImage,
        Part::Image { .. } => Feature::Image,
        Part::ImageUrl { .. } => Feature::ImageUrl,
    }
}

impl Transcript {
    /// Every feature the transcript uses, sorted, without repeats.
    pub fn features(&self) -> Vec<Feature> {
        let mut all: Vec<Feature> = self.events.iter().flat_map(Event::features).collect();
        all.sort();
        all.dedup();
        all
    }

    /// The first event (index and event) that needs a feature `carried` does not contain.
    pub fn first_uncarried(&self, carried: &[Feature]) -> Option<(usize, &Event, Feature)> {
        self.events.iter().enumerate().find_map(|(i, e)| {
            e.features()
                .into_iter()
                .find(|f| !carried.contains(f))
                .map(|f| (i, e, f))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Thinking, Timestamp};

    #[test]
    fn names_the_first_event_a_target_cannot_carry() {
        let t = Transcript::new(vec![
            Event::new(
                "a",
                Timestamp::from_millis(0),
                Body::User {
                    content: vec![Part::text("hi")],
                },
            ),
            Event::new(
                "b",
                Timestamp::from_millis(1),
                Body::Assistant {
                    content: vec![AssistantPart::Thinking(Thinking {
                        text: "hm".into(),
                        signature: None,
                    })],
                    origin: None,
                },
            ),
        ]);
        let (index, event, feature) = t.first_uncarried(&[Feature::Text]).unwrap();
        assert_eq!(
            (index, event.id.as_str(), feature),
            (1, "b", Feature::Thinking)
        );
        assert!(t
            .first_uncarried(&[Feature::Text, Feature::Thinking])
            .is_none());
    }
}
