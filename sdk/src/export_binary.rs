//! The binary calls of the v3 capability ids: a writer receives its events in the binary form of
//! `handoff_core::abi::codec`, and a reader streams what it reads to the host in batches, so a
//! transcript never crosses as one JSON document.

use handoff_core::abi::binary_call::{receive, Received};
use handoff_core::abi::codec::{decode_all, Encoder};
use handoff_core::abi::wire::{BinaryRequest, ReaderRequestV3, TranscriptHeader, WriterRequestV3};
use handoff_core::abi::{READER_V3, WRITER_V3};
use handoff_core::transcript::SCHEMA;
use handoff_core::{Event, PluginError, Transcript};

use crate::export::{decode, guarded, instance, plugin_name, root, to_json};

/// A batch is handed to the host once it holds this many bytes: large enough that the call per
/// batch costs nothing, small enough that a sink that stops early stops the read soon after.
const BATCH_BYTES: usize = 64 * 1024;

fn split<'a>(capability: &str, request: &'a [u8]) -> Result<(&'a str, &'a [u8]), PluginError> {
    BinaryRequest::split(request).map_err(|e| {
        PluginError::Other(format!(
            "plugin {} cannot read a {capability} request: {e}",
            plugin_name()
        ))
    })
}

fn events(method: &str, batch: &[u8]) -> Result<Vec<Event>, PluginError> {
    decode_all(batch).map_err(|e| {
        PluginError::Other(format!(
            "plugin {} cannot read the events of a {method} request: {e}",
            plugin_name()
        ))
    })
}

/// Answers the binary call at `address` to the capability `id` (a v3 id).
pub(crate) fn call(id: &str, address: u64) -> Result<String, PluginError> {
    // SAFETY: the address came in the envelope of the call being answered (the host's
    // `binary_call::invoke` made it), and `received` does not outlive this call.
    let mut received = unsafe { receive(address) }.map_err(|e| {
        PluginError::Other(format!(
            "plugin {} cannot read a {id} binary call: {e}",
            plugin_name()
        ))
    })?;
    if id == WRITER_V3 {
        writer_call(received.request)
    } else {
        reader_call(&mut received)
    }
}

/// `create` and `append` with their events in the binary form.
fn writer_call(request: &[u8]) -> Result<String, PluginError> {
    let (header, batch) = split(WRITER_V3, request)?;
    let header: WriterRequestV3<'_> = decode(WRITER_V3, header)?;
    let method = header.method();
    guarded(method, || {
        let writer = instance()?.writer();
        let answer = match header {
            WriterRequestV3::Create {
                root: r,
                target,
                cwd,
                options,
            } => {
                let transcript = Transcript {
                    schema: SCHEMA.to_owned(),
                    cwd: cwd.map(|c| c.into_owned()),
                    events: events(method, batch)?,
                };
                to_json(
                    method,
                    &writer.create(&root(r)?, &target, &transcript, &options)?,
                )?
            }
            WriterRequestV3::Append { root: r, session } => to_json(
                method,
                &writer.append(&root(r)?, &session, &events(method, batch)?)?,
            )?,
        };
        Ok(answer)
    })
}

/// `read`, `read_path` and `read_each`, streaming the events to `sink`.
fn reader_call(received: &mut Received<'_>) -> Result<String, PluginError> {
    let (header, _) = split(READER_V3, received.request)?;
    let header: ReaderRequestV3<'_> = decode(READER_V3, header)?;
    let method = header.method();
    guarded(method, || {
        let reader = instance()?.reader();
        let mut stream = Stream {
            encoder: Encoder::new(),
            host: received,
            open: true,
        };
        let answer = match header {
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

/// Events on their way to the host's sink, a batch at a time.
struct Stream<'s, 'a> {
    encoder: Encoder,
    host: &'s mut Received<'a>,
    /// False once the sink said stop.
    open: bool,
}

impl Stream<'_, '_> {
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
