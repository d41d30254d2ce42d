//! Where a streaming reader's events go: each checked against the events before it (the rules of
//! [`Transcript::validate`](handoff_transcript::Transcript::validate), ids kept as digests), then
//! handed to the reader's sink, until the sink wants no more.

use handoff_capability::PluginError;
use handoff_transcript::{Event, IdDigest, ValidationError, Validator};

/// A reader's sink behind the streamed validation. The id of the last event handed on is kept:
/// what a compaction the reader makes next replaces through.
pub struct CheckedSink<'s> {
    sink: &'s mut dyn FnMut(Event) -> bool,
    validator: Validator<IdDigest>,
    invalid: Box<dyn Fn(&ValidationError) -> PluginError + 's>,
    last: Option<String>,
    open: bool,
}

impl<'s> CheckedSink<'s> {
    /// Checks the events for `sink`; `invalid` is the error of an event that breaks the rules
    /// (it names the file the reader reads).
    pub fn new(
        sink: &'s mut dyn FnMut(Event) -> bool,
        invalid: impl Fn(&ValidationError) -> PluginError + 's,
    ) -> Self {
        CheckedSink {
            sink,
            validator: Validator::with_capacity(0),
            invalid: Box::new(invalid),
            last: None,
            open: true,
        }
    }

    /// Checks `event` and hands it on; nothing once the sink wants no more.
    pub fn push(&mut self, event: Event) -> Result<(), PluginError> {
        if !self.open {
            return Ok(());
        }
        self.validator
            .push(&event)
            .map_err(|e| (self.invalid)(&e))?;
        self.last = Some(event.id.clone());
        self.open = (self.sink)(event);
        Ok(())
    }

    /// Whether the sink still takes events.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The id of the last event handed on.
    pub fn last_id(&self) -> Option<&str> {
        self.last.as_deref()
    }

    /// The validator the events went through: an append goes on checking its events with it.
    pub fn into_validator(self) -> Validator<IdDigest> {
        self.validator
    }
}

#[cfg(test)]
mod tests {
    use handoff_transcript::{Body, Timestamp};

    use super::*;

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    #[test]
    fn events_are_checked_before_they_are_handed_on_and_a_closed_sink_gets_none() {
        let mut seen = Vec::new();
        let mut sink = |e: Event| {
            seen.push(e.id);
            seen.len() < 2
        };
        let mut checked = CheckedSink::new(&mut sink, |e| PluginError::Other(e.to_string()));
        checked.push(event("u1", Body::user_text("hi"))).unwrap();
        let twice = checked.push(event("u1", Body::user_text("again")));
        assert!(twice.unwrap_err().to_string().contains("used twice"));
        assert_eq!(checked.last_id(), Some("u1"));
        checked.push(event("u2", Body::user_text("more"))).unwrap();
        assert!(!checked.is_open());
        checked.push(event("u3", Body::user_text("late"))).unwrap();
        assert_eq!(checked.into_validator().checked(), 3);
        assert_eq!(seen, ["u1", "u2"]);
    }
}
