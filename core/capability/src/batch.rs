//! Events in batches, decoded where they are taken: a plugin file's reader hands its batches as
//! they crossed the boundary, and the thread that takes a batch decodes it (the continuation
//! engine reads a source on one thread and writes the target on another, so the decoding moves
//! off the reading thread, which is the slower one).

use super::PluginError;
use handoff_transcript::Event;

/// Events a reader has read, as [`super::Reader::read_batches`] hands them on.
pub struct EventBatch(Form);

/// The decoding of a batch, done by whoever takes it.
type Decode = Box<dyn FnOnce() -> Result<Vec<Event>, PluginError> + Send>;

enum Form {
    Events(Vec<Event>),
    Encoded(Decode),
}

impl EventBatch {
    /// A batch of events already decoded.
    pub fn events(events: Vec<Event>) -> Self {
        EventBatch(Form::Events(events))
    }

    /// A batch `decode` turns into its events when it is taken.
    pub fn encoded(
        decode: impl FnOnce() -> Result<Vec<Event>, PluginError> + Send + 'static,
    ) -> Self {
        EventBatch(Form::Encoded(Box::new(decode)))
    }

    /// The batch's events, decoded now if they were not yet (an error names what did not decode).
    pub fn into_events(self) -> Result<Vec<Event>, PluginError> {
        match self.0 {
            Form::Events(events) => Ok(events),
            Form::Encoded(decode) => decode(),
        }
    }
}

/// Events per batch of [`in_batches`]: enough that handing a batch on costs nothing per event,
/// few enough that the taker starts early and little is in flight.
pub(crate) const BATCH: usize = 128;

/// Runs `read` and hands its events to `sink` in batches of `BATCH` (the last one shorter),
/// until `read` ends or `sink` returns `false` (then `read`'s sink says stop).
pub fn in_batches(
    read: impl FnOnce(&mut dyn FnMut(Event) -> bool) -> Result<(), PluginError>,
    sink: &mut dyn FnMut(EventBatch) -> bool,
) -> Result<(), PluginError> {
    let mut batch = Vec::with_capacity(BATCH);
    let mut stopped = false;
    read(&mut |event| {
        batch.push(event);
        if batch.len() < BATCH {
            return true;
        }
        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
        stopped = !sink(EventBatch::events(full));
        !stopped
    })?;
    if !stopped && !batch.is_empty() {
        sink(EventBatch::events(batch));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_transcript::{Body, Part, Timestamp};

    fn event(i: usize) -> Event {
        Event::new(
            format!("e{i}"),
            Timestamp::from_millis(0),
            Body::User {
                content: vec![Part::Text {
                    text: i.to_string(),
                }],
            },
        )
    }

    fn read_n(n: usize) -> impl FnOnce(&mut dyn FnMut(Event) -> bool) -> Result<(), PluginError> {
        move |sink| {
            for i in 0..n {
                if !sink(event(i)) {
                    break;
                }
            }
            Ok(())
        }
    }

    #[test]
    fn batches_hold_every_event_in_order() {
        let mut sizes = Vec::new();
        let mut ids = Vec::new();
        in_batches(read_n(2 * BATCH + 5), &mut |batch| {
            let events = batch.into_events().unwrap();
            sizes.push(events.len());
            ids.extend(events.into_iter().map(|e| e.id));
            true
        })
        .unwrap();
        assert_eq!(sizes, [BATCH, BATCH, 5]);
        let expected: Vec<String> = (0..2 * BATCH + 5).map(|i| format!("e{i}")).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn a_sink_that_stops_stops_the_read_and_gets_no_more() {
        let mut batches = 0;
        let mut read_events = 0;
        in_batches(
            |sink| {
                for i in 0..10 * BATCH {
                    read_events += 1;
                    if !sink(event(i)) {
                        break;
                    }
                }
                Ok(())
            },
            &mut |_| {
                batches += 1;
                false
            },
        )
        .unwrap();
        assert_eq!((batches, read_events), (1, BATCH));
    }

    #[test]
    fn an_encoded_batch_decodes_when_taken_and_its_error_comes_back() {
        let ok = EventBatch::encoded(|| Ok(vec![event(1)]));
        assert_eq!(ok.into_events().unwrap()[0].id, "e1");
        let bad = EventBatch::encoded(|| Err(PluginError::Other("event 3: bad tag".into())));
        assert!(bad
            .into_events()
            .unwrap_err()
            .to_string()
            .contains("bad tag"));
    }
}
