//! A synthetic long conversation, one shape for every benchmark and load test: `turns` times a
//! user prompt, an assistant text with a tool call, a ~1.3 KB tool result and an assistant answer.
//! One definition, so figures measured in different benches are of the same session.

use super::{AssistantPart, Body, Event, Origin, Part, Timestamp, ToolCall, Transcript};

/// `turns` tool turns (four events each) with `origin` on every assistant event; no cwd: a
/// [`LongSession`] without images or compactions, held.
pub fn tool_turns(turns: usize, origin: &Origin) -> Transcript {
    Transcript::new(LongSession::new(turns, origin, (0, 0), 0).collect())
}

/// A long session generated event by event, never held: the turns of [`tool_turns`], with an
/// image of `image_bytes` bytes (as a user sends a screenshot: its bytes, `data:` in a rollout)
/// in the user prompt of every `image_every`th turn, and a compaction after every
/// `compact_every`th turn that replaces everything before it (as a CLI compacts when its
/// context fills). For the memory tests and benches of sessions of hundreds of MB.
pub struct LongSession {
    origin: Origin,
    turns: usize,
    turn: usize,
    /// A turn's events not handed out yet.
    queue: std::collections::VecDeque<Event>,
    events: usize,
    at: i64,
    output: String,
    image: Vec<u8>,
    image_every: usize,
    compact_every: usize,
}

impl LongSession {
    /// `turns` turns; `image_every` / `compact_every` of 0 mean none.
    pub fn new(
        turns: usize,
        origin: &Origin,
        (image_every, image_bytes): (usize, usize),
        compact_every: usize,
    ) -> Self {
        // A PNG's signature, then bytes that do not compress (an image's do not), the same in
        // every run.
        const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut image = PNG[..PNG.len().min(image_bytes)].to_vec();
        image.extend((image.len()..image_bytes).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }));
        LongSession {
            origin: origin.clone(),
            turns,
            turn: 0,
            queue: Default::default(),
            events: 0,
            at: 1_795_999_300_000,
            output: "drwxr-xr-x 2 dev dev 4096 Nov 30 00:41 src/handoff/example/file.rs\n"
                .repeat(19),
            image,
            image_every,
            compact_every,
        }
    }

    fn push(&mut self, body: Body) {
        self.at += 1_000;
        let id = format!("e{}", self.events);
        self.events += 1;
        self.queue
            .push_back(Event::new(id, Timestamp::from_millis(self.at), body));
    }

    fn next_turn(&mut self) {
        let i = self.turn;
        self.turn += 1;
        let call_id = format!("toolu_{i:020}");
        let mut prompt = vec![Part::text(format!(
            "Turn {i}: list the files under src and tell me which changed."
        ))];
        if self.image_every > 0 && i.is_multiple_of(self.image_every) && !self.image.is_empty() {
            prompt.push(Part::Image {
                media_type: "image/png".into(),
                data: self.image.clone(),
            });
        }
        self.push(Body::User { content: prompt });
        self.push(Body::Assistant {
            content: vec![
                AssistantPart::text("I'll list them."),
                AssistantPart::ToolCall(ToolCall::new(
                    call_id.clone(),
                    "Bash",
                    serde_json::json!({"command": "ls -la src", "description": "List"}),
                )),
            ],
            origin: Some(self.origin.clone()),
        });
        self.push(Body::ToolResult {
            call_id,
            content: vec![Part::text(self.output.clone())],
            is_error: false,
        });
        self.push(Body::Assistant {
            content: vec![AssistantPart::text(format!(
                "In turn {i}, file.rs changed."
            ))],
            origin: Some(self.origin.clone()),
        });
        if self.compact_every > 0 && self.turn.is_multiple_of(self.compact_every) {
            let through = format!("e{}", self.events - 1);
            self.push(Body::Compaction {
                summary: format!("The user listed the files of src {} times.", self.turn),
                replaces_through: through,
            });
        }
    }
}

impl Iterator for LongSession {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        if self.queue.is_empty() && self.turn < self.turns {
            self.next_turn();
        }
        self.queue.pop_front()
    }
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

    #[test]
    fn a_long_session_streams_a_valid_transcript_with_images_and_compactions() {
        let origin = Origin {
            provider: "openai".into(),
            model: None,
            api: None,
        };
        let events: Vec<Event> = LongSession::new(10, &origin, (3, 1000), 4).collect();
        // 4 events a turn, and a compaction after turns 4 and 8.
        assert_eq!(events.len(), 42);
        let images = events
            .iter()
            .filter(|e| matches!(&e.body, Body::User { content } if content.len() == 2))
            .count();
        assert_eq!(images, 4);
        Transcript::new(events).validate().expect("valid");
    }
}
