//! The host's end of a streamed read whose batches are handed on as they crossed: each is copied
//! out of the plugin's buffer and decoded by whoever takes it ([`EventBatch::encoded`]), so the
//! thread that calls the plugin does the plugin's reading and no more.

use handoff_abi::binary_call::{HostEnd, Pull};
use handoff_abi::codec::decode_all;
use handoff_capability::{EventBatch, PluginError};

/// Collects nothing: hands each batch to `sink`, encoded.
pub(super) struct EncodedReadEnd<'s> {
    pub(super) sink: &'s mut dyn FnMut(EventBatch) -> bool,
    pub(super) plugin: &'s str,
    pub(super) method: &'s str,
}

impl HostEnd for EncodedReadEnd<'_> {
    fn on_batch(&mut self, batch: &[u8]) -> bool {
        let bytes = batch.to_vec();
        let (plugin, method) = (self.plugin.to_owned(), self.method.to_owned());
        (self.sink)(EventBatch::encoded(move || {
            decode_all(&bytes).map_err(|message| unreadable_events(&plugin, &method, &message))
        }))
    }

    fn next_batch(&mut self) -> Pull<'_> {
        Pull::End
    }
}

/// The error of a batch of events that does not decode.
pub(super) fn unreadable_events(plugin: &str, method: &str, message: &str) -> PluginError {
    PluginError::Other(format!(
        "plugin {plugin} answered {method} with unreadable events: {message}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_abi::codec::encode_events;
    use handoff_transcript::{Body, Event, Part, Timestamp};

    fn taken(batch: &[u8]) -> Result<Vec<Event>, PluginError> {
        let mut batches = Vec::new();
        let mut end = EncodedReadEnd {
            sink: &mut |batch| {
                batches.push(batch);
                true
            },
            plugin: "p",
            method: "read_each",
        };
        assert!(end.on_batch(batch));
        assert_eq!(batches.len(), 1);
        batches.pop().unwrap().into_events()
    }

    #[test]
    fn a_batch_decodes_when_taken_into_the_events_that_crossed() {
        let events: Vec<Event> = (0..3)
            .map(|i| {
                Event::new(
                    format!("e{i}"),
                    Timestamp::from_millis(i),
                    Body::User {
                        content: vec![Part::text(format!("text {i}"))],
                    },
                )
            })
            .collect();
        assert_eq!(taken(&encode_events(&events)).unwrap(), events);
    }

    #[test]
    fn a_batch_that_does_not_decode_is_an_error_naming_the_plugin_and_method() {
        let err = taken(b"\x02\x00\x00\x00not an event").unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("plugin p answered read_each with unreadable events"),
            "{message}"
        );
        assert!(message.contains("event 0 of the batch"), "{message}");
    }
}
