//! The binary calls of the v3 capability ids: a writer pulls its events from the host in batches
//! of the binary form of `handoff_core::abi::codec`, and a reader streams what it reads to the
//! host in batches, so a transcript never crosses as one JSON document.

use handoff_core::abi::binary_call::{receive, Envelope, Received};
use handoff_core::abi::codec::{decode_events, Encoder, BATCH_BYTES};
use handoff_core::abi::wire::{ReaderRequestV3, TranscriptHeader, WriterRequestV3};
use handoff_core::transcript::SCHEMA;
use handoff_core::{Event, PluginError, Transcript};

use crate::export::{guarded, instance, plugin_name, root, to_json};

/// The binary call in `json` to the v3 capability `id`, if it is one: v3 ids also answer v2's
/// JSON requests, which are no [`Envelope`].
pub(crate) fn answer(id: &str, json: &str, writer: bool) -> Option<Result<String, PluginError>> {
    let unreadable = |e: String| {
        PluginError::Other(format!(
            "plugin {} cannot read a {id} binary call: {e}",
            plugin_name()
        ))
    };
    // What the host's `binary_call::invoke` writes first; anything else is a v2 request.
    let is_envelope = json.trim_start().starts_with("{\"binary_call\"");
    let answered = if writer {
        serde_json::from_str::<Envelope<WriterRequestV3<'_>>>(json).map(|envelope| {
            // SAFETY: the address came in the envelope of the call being answered (the host's
            // `binary_call::invoke` made it); `received` does not outlive this call.
            let received = unsafe { receive(envelope.binary_call) }.map_err(unreadable)?;
            write(envelope.request, received)
        })
    } else {
        serde_json::from_str::<Envelope<ReaderRequestV3<'_>>>(json).map(|envelope| {
            // SAFETY: as above.
            let received = unsafe { receive(envelope.binary_call) }.map_err(unreadable)?;
            read(envelope.request, received)
        })
    };
    match answered {
        Ok(result) => Some(result),
        Err(e) if is_envelope => Some(Err(unreadable(e.to_string()))),
        Err(_) => None,
    }
}

/// Pulls `count` events from the host.
fn pull_events(method: &str, count: usize, host: &mut Received) -> Result<Vec<Event>, PluginError> {
    // The host's count sizes the list; capped, so a wrong count cannot ask for memory up front.
    let mut events = Vec::with_capacity(count.min(1 << 20));
    while let Some(batch) = host.pull() {
        decode_events(batch, &mut |event| {
            events.push(event);
            true
        })
        .map_err(|e| {
            PluginError::Other(format!(
                "plugin {} cannot read the events of a {method} call: {e}",
                plugin_name()
            ))
        })?;
    }
    Ok(events)
}

/// `create` and `append`, their events pulled from the host.
fn write(request: WriterRequestV3<'_>, mut host: Received) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let writer = instance()?.writer();
        match request {
            WriterRequestV3::Create {
                root: r,
                target,
                cwd,
                options,
                event_count,
            } => {
                let transcript = Transcript {
                    schema: SCHEMA.to_owned(),
                    cwd: cwd.map(|c| c.into_owned()),
                    events: pull_events(method, event_count, &mut host)?,
                };
                to_json(
                    method,
                    &writer.create(&root(r)?, &target, &transcript, &options)?,
                )
            }
            WriterRequestV3::Append {
                root: r,
                session,
                event_count,
            } => {
                let events = pull_events(method, event_count, &mut host)?;
                to_json(method, &writer.append(&root(r)?, &session, &events)?)
            }
        }
    })
}

/// `read`, `read_path` and `read_each`, streaming the events to the host.
fn read(request: ReaderRequestV3<'_>, mut host: Received) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let reader = instance()?.reader();
        let mut stream = Stream {
            encoder: Encoder::new(),
            host: &mut host,
            open: true,
        };
        let answer = match request {
            ReaderRequestV3::Read { root: r, session } => {
                let transcript = reader.read(&root(r)?, &session)?;
                stream.all(transcript)
            }
            ReaderRequestV3::ReadPath { target, path } => {
                let transcript = reader.read_path(&target, &path)?;
                stream.all(transcript)
            }
            ReaderRequestV3::ReadEach { root: r, session } => {
                reader.read_each(&root(r)?, &session, &mut |event| stream.push(&event))?;
                stream.flush();
                None
            }
        };
        to_json(method, &answer)
    })
}

/// Events on their way to the host, a batch at a time.
struct Stream<'s> {
    encoder: Encoder,
    host: &'s mut Received,
    /// False once the host said stop.
    open: bool,
}

impl Stream<'_> {
    /// Adds an event; hands the batch on once it is full. False once the host wants no more.
    fn push(&mut self, event: &Event) -> bool {
        self.encoder.push(event);
        if self.encoder.len() >= BATCH_BYTES {
            self.flush();
        }
        self.open
    }

    fn flush(&mut self) {
        if self.open && !self.encoder.is_empty() {
            self.open = self.host.push(self.encoder.batch());
        }
        self.encoder.clear();
    }

    /// Streams a whole transcript (each event freed once encoded) and returns its header.
    fn all(mut self, transcript: Transcript) -> Option<TranscriptHeader> {
        for event in transcript.events {
            if !self.push(&event) {
                break;
            }
        }
        self.flush();
        Some(TranscriptHeader {
            cwd: transcript.cwd,
        })
    }
}
