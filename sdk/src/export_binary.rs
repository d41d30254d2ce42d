//! The binary calls of the v3 and v4 capability ids: a writer pulls its events from the host in
//! batches of the binary form of `handoff_abi::codec`, and a reader streams what it reads
//! to the host in batches, so a transcript never crosses as one JSON document. The v4 ids add
//! `create_streamed` (the writer pulls a batch only when it takes the events) and
//! `read_path_each` (the reader streams as it reads a file), and `read_path_cwd` as JSON.

use handoff_abi::binary_call::{receive, Envelope, Received};
use handoff_abi::codec::{decode_events, BatchCursor, Encoder, BATCH_BYTES};
use handoff_abi::wire::{
    ReaderRequestV3, ReaderRequestV4, ReaderRequestV5, StreamedCreate, TranscriptHeader,
    WriterRequestV3, WriterRequestV4,
};
use handoff_abi::{READER_V4, READER_V5, WRITER_V3, WRITER_V4, WRITER_V5};
use handoff_capability::{CreateOptions, EventStream, PluginError, ReadFrom, ReadOutcome, Reader};
use handoff_transcript::SCHEMA;
use handoff_transcript::{Event, Transcript};

use crate::export::{guarded, instance, plugin_name, root, to_json};

/// The call in `json` to the v3, v4 or v5 capability `id`, if it is one of theirs: a binary
/// call, or v4's `read_path_cwd`. `None` for v2's JSON requests, which they all also answer.
pub(crate) fn answer(id: &str, json: &str) -> Option<Result<String, PluginError>> {
    let unreadable = |e: String| {
        PluginError::Other(format!(
            "plugin {} cannot read a {id} binary call: {e}",
            plugin_name()
        ))
    };
    // What the host's `binary_call::invoke` writes first; anything else is a JSON request.
    let is_envelope = json.trim_start().starts_with("{\"binary_call\"");
    if let Some(answered) = answer_streamed(id, json, is_envelope) {
        return Some(answered.map_err(unreadable).and_then(|result| result));
    }
    let answered = if matches!(id, WRITER_V3 | WRITER_V4 | WRITER_V5) {
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

/// A request of the v4 or v5 ids in `json` to `id` (v5 answers v4's too): `Err` when it is a
/// binary call whose record is unreadable.
fn answer_streamed(
    id: &str,
    json: &str,
    is_envelope: bool,
) -> Option<Result<Result<String, PluginError>, String>> {
    match (id, is_envelope) {
        (READER_V5, true) => {
            if let Ok(envelope) = serde_json::from_str::<Envelope<ReaderRequestV5<'_>>>(json) {
                // SAFETY: the envelope's address is the host's record for this call.
                let received = unsafe { receive(envelope.binary_call) };
                return Some(
                    received
                        .map(|host| crate::export_written::read_written(envelope.request, host)),
                );
            }
            answer_streamed(READER_V4, json, is_envelope)
        }
        (READER_V5, false) => answer_streamed(READER_V4, json, is_envelope),
        (WRITER_V4 | WRITER_V5, true) => {
            let envelope = serde_json::from_str::<Envelope<WriterRequestV4<'_>>>(json).ok()?;
            // SAFETY: the address came in the envelope of the call being answered (the host's
            // `binary_call::invoke` made it); `received` does not outlive this call.
            let received = unsafe { receive(envelope.binary_call) };
            let reports = id == WRITER_V5;
            Some(received.map(|host| create_streamed(envelope.request, host, reports)))
        }
        (READER_V4, true) => {
            let envelope = serde_json::from_str::<Envelope<ReaderRequestV4<'_>>>(json).ok()?;
            // SAFETY: as above.
            let received = unsafe { receive(envelope.binary_call) };
            Some(received.map(|host| read_v4(envelope.request, Some(host))))
        }
        (READER_V4, false) => {
            let request = serde_json::from_str::<ReaderRequestV4<'_>>(json).ok()?;
            Some(Ok(read_v4(request, None)))
        }
        _ => None,
    }
}

/// Pulls `count` events from the host.
fn pull_events(method: &str, count: usize, host: &mut Received) -> Result<Vec<Event>, PluginError> {
    // The host's count sizes the list; capped, so a wrong count cannot ask for memory up front.
    let mut events = Vec::with_capacity(count.min(1 << 20));
    while let Some(batch) = host.pull()? {
        decode_batch(method, batch, &mut |event| events.push(event))?;
    }
    Ok(events)
}

/// Decodes one batch the host lent into `push`.
fn decode_batch(
    method: &str,
    batch: &[u8],
    push: &mut dyn FnMut(Event),
) -> Result<(), PluginError> {
    decode_events(batch, &mut |event| {
        push(event);
        true
    })
    .map(drop)
    .map_err(|e| unreadable_events(method, e))
}

/// `create_streamed`: the writer takes its events from the host as it goes.
fn create_streamed(
    request: WriterRequestV4<'_>,
    mut host: Received,
    reports: bool,
) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let writer = instance()?.writer();
        let WriterRequestV4::CreateStreamed {
            root: r,
            target,
            options,
        } = request;
        let reporter = host.clone();
        let mut events = PulledEvents::new(&mut host, &options);
        let root = root(r)?;
        let mut create = || writer.create_streamed(&root, &target, &mut events, &options);
        // Under v5 the file the writer creates is reported to the host as it is written.
        let created = if reports {
            crate::store::tap::watched(crate::export_written::reporting(reporter), create)
        } else {
            create()
        };
        match created {
            Ok(session) => to_json(method, &StreamedCreate::Created(session)),
            Err(error) if events.whole_refused && error == whole_needed() => {
                to_json(method, &StreamedCreate::WholeNeeded)
            }
            Err(error) => Err(error),
        }
    })
}

/// What [`PulledEvents::whole`] fails with once the writer has taken events: they cannot be
/// pulled again. The writer returns it unchanged (it has discarded what it began), and the host
/// then calls `create` with the whole transcript.
fn whole_needed() -> PluginError {
    PluginError::Other(
        "the writer asked for the whole transcript after taking events; the host supplies it \
         to create instead"
            .into(),
    )
}

/// The host's events as the plugin's writer takes them: a batch is pulled only when the writer
/// asks for an event past the last batch, and each event is decoded only when it is asked for.
struct PulledEvents<'h> {
    host: &'h mut Received,
    batch: BatchCursor,
    taken: usize,
    ended: bool,
    /// The request's `options.cwd`: the cwd of the transcript [`EventStream::whole`] builds
    /// (every writer prefers `options.cwd` to the transcript's).
    cwd: Option<String>,
    whole: Option<Transcript>,
    /// Whether `whole` answered [`whole_needed`].
    whole_refused: bool,
}

impl<'h> PulledEvents<'h> {
    fn new(host: &'h mut Received, options: &CreateOptions) -> Self {
        PulledEvents {
            host,
            batch: BatchCursor::default(),
            taken: 0,
            ended: false,
            cwd: options.cwd.clone(),
            whole: None,
            whole_refused: false,
        }
    }

    /// The next event of the host's: from the batch in hand, else from the next one pulled.
    fn next(&mut self) -> Result<Option<Event>, PluginError> {
        loop {
            if let Some(event) = self
                .batch
                .next_event()
                .map_err(|e| unreadable_events("create_streamed", e))?
            {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            match self.host.pull()? {
                Some(batch) => self
                    .batch
                    .load(batch)
                    .map_err(|e| unreadable_events("create_streamed", e))?,
                None => self.ended = true,
            }
        }
    }
}

/// Events of a `method` call the plugin could not decode.
fn unreadable_events(method: &str, e: String) -> PluginError {
    PluginError::Other(format!(
        "plugin {} cannot read the events of a {method} call: {e}",
        plugin_name()
    ))
}

impl EventStream for PulledEvents<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        if self.whole.is_some() {
            return Err(PluginError::Other(
                "the writer took an event after it took the whole transcript".into(),
            ));
        }
        let event = self.next()?;
        self.taken += usize::from(event.is_some());
        Ok(event)
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        if self.whole.is_none() {
            // Events taken are gone; and without a cwd in the options, the transcript's own cwd
            // (which only the host knows) would be lost.
            if self.taken > 0 || self.cwd.is_none() {
                self.whole_refused = true;
                return Err(whole_needed());
            }
            let mut events = Vec::new();
            while let Some(event) = self.next()? {
                events.push(event);
            }
            self.whole = Some(Transcript {
                schema: SCHEMA.to_owned(),
                cwd: self.cwd.clone(),
                events,
            });
        }
        Ok(self.whole.as_ref().expect("built above"))
    }
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

/// `read_path_each`, streaming the events to the host as the reader reads them, and
/// `read_path_cwd` (JSON, no record).
fn read_v4(request: ReaderRequestV4<'_>, host: Option<Received>) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let reader = instance()?.reader();
        match (request, host) {
            (ReaderRequestV4::ReadPathCwd { target, path }, _) => {
                to_json(method, &reader.cwd(ReadFrom::File(&target, &path))?)
            }
            (
                ReaderRequestV4::ReadPathEach {
                    target,
                    path,
                    cli_version,
                },
                Some(mut host),
            ) => {
                let versioned = reading_as(reader, cli_version.as_deref());
                let reader = versioned.as_deref().unwrap_or(reader);
                Stream::to(&mut host).each(reader, ReadFrom::File(&target, &path))?;
                to_json(method, &())
            }
            (ReaderRequestV4::ReadPathEach { .. }, None) => Err(PluginError::Other(format!(
                "plugin {}: read_path_each is a binary call, not a JSON request",
                plugin_name()
            ))),
        }
    })
}

/// `read`, `read_path` and `read_each`, streaming the events to the host.
fn read(request: ReaderRequestV3<'_>, mut host: Received) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let reader = instance()?.reader();
        let versioned = reading_as(reader, request.cli_version());
        let reader = versioned.as_deref().unwrap_or(reader);
        let stream = Stream::to(&mut host);
        let answer = match request {
            ReaderRequestV3::Read {
                root: r, session, ..
            } => stream.all(reader.read(ReadFrom::Session(&root(r)?, &session))?),
            ReaderRequestV3::ReadPath { target, path, .. } => {
                stream.all(reader.read(ReadFrom::File(&target, &path))?)
            }
            ReaderRequestV3::ReadEach {
                root: r, session, ..
            } => {
                stream.each(reader, ReadFrom::Session(&root(r)?, &session))?;
                None
            }
        };
        to_json(method, &answer)
    })
}

/// The plugin's reader reading as the CLI version the host asked for, if it asked and the reader
/// reads versions apart ([`Reader::reading_as`]).
fn reading_as<'r>(
    reader: &'r dyn Reader,
    cli_version: Option<&str>,
) -> Option<Box<dyn Reader + 'r>> {
    reader.reading_as(cli_version?)
}

/// Events on their way to the host, a batch at a time.
pub(crate) struct Stream<'s> {
    encoder: Encoder,
    host: &'s mut Received,
    /// False once the host said stop.
    open: bool,
}

impl<'s> Stream<'s> {
    /// Events to `host`, none sent yet.
    pub(crate) fn to(host: &'s mut Received) -> Self {
        Stream {
            encoder: Encoder::new(),
            host,
            open: true,
        }
    }

    /// Adds an event; hands the batch on once it is full. False once the host wants no more.
    fn push(&mut self, event: &Event) -> bool {
        self.encoder.push(event);
        if self.encoder.len() >= BATCH_BYTES {
            self.flush();
        }
        self.open
    }

    /// Streams what `reader` reads from `from`, to its end or until the host says stop.
    pub(crate) fn each(
        mut self,
        reader: &dyn Reader,
        from: ReadFrom<'_>,
    ) -> Result<ReadOutcome, PluginError> {
        let outcome = reader.read_each(from, &mut |event| self.push(&event))?;
        self.flush();
        Ok(outcome)
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
