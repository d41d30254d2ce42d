//! Step 2 and 3: load the root module and wrap it back into the plain traits.

use std::borrow::{Borrow, Cow};
use std::path::Path;

use abi_stable::library::{lib_header_from_path, LibraryError};
use abi_stable::std_types::{RResult, RStr};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::encoded_read::{unreadable_events, EncodedReadEnd};
use super::probe::Probe;
use super::written::{report, WrittenReadEnd};
use super::{log, summarise_layout_error, LoadError, PluginFile};
use handoff_abi::binary_call::{self, HostEnd, Pull};
use handoff_abi::codec::{decode_events, Encoder, BATCH_BYTES};
use handoff_abi::wire::{
    decode_error, encode_error, ReaderRequest, ReaderRequestV2, ReaderRequestV3, ReaderRequestV4,
    ReaderRequestV5, ResumeRequest, ResumeRequestV2, StreamedCreate, TranscriptHeader,
    WriterRequest, WriterRequestV2, WriterRequestV3, WriterRequestV4,
};
use handoff_abi::{
    CapabilityBox, PluginModuleRef, READER_V1, READER_V2, READER_V3, READER_V4, READER_V5,
    RESUME_V1, RESUME_V2, WRITER_V1, WRITER_V2, WRITER_V3, WRITER_V4, WRITER_V5,
};
use handoff_capability::{
    fd_path, in_batches, not_whole, CreateOptions, EventBatch, EventStream, Manifest, Plugin,
    PluginError, ReadFrom, ReadOutcome, Reader, ResumePlan, Resumer, SessionInfo, SessionRef,
    Writer, WrittenFile,
};
use handoff_store::tap::{self, WriteTap};
use handoff_store::StoreRoot;
use handoff_transcript::{Event, Transcript, SCHEMA};

/// A plugin loaded from a shared library, seen through the same [`Plugin`] trait as a linked-in
/// one. Every call crosses the boundary as one JSON request and one JSON answer, except, with a
/// plugin that offers the v3 ids, transcripts: they cross in the binary form of
/// [`handoff_abi::codec`], and what the plugin reads is streamed back in batches. With the v4 ids,
/// `create_streamed` and `read_path_each` stream across as a built-in's do.
pub struct LoadedPlugin {
    file: PluginFile,
    manifest: Manifest,
    writer: RemoteWriter,
    reader: RemoteReader,
    resumer: RemoteResumer,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("file", &self.file)
            .field("manifest", &self.manifest.name)
            .finish()
    }
}

impl LoadedPlugin {
    /// Loads a plugin whose declaration [`super::probe`] accepted.
    pub fn load_probed(probe: Probe) -> Result<Self, LoadError> {
        Self::load_probed_up_to(probe, NEWEST_VERSION)
    }

    /// The same, as a host that knows the capability ids up to version `newest` only: an older
    /// host, for tests that prove a newer plugin still serves one.
    #[doc(hidden)]
    pub fn load_probed_up_to(probe: Probe, newest: u8) -> Result<Self, LoadError> {
        let Probe { file, copy } = probe;
        let path = file.path.clone();
        let module = lib_header_from_path(copy.path())
            .and_then(|header| header.init_root_module::<PluginModuleRef>())
            .map_err(|e| abi_error(&path, copy.path(), e))?;
        (module.set_host_logger())(log::host_logger());
        let manifest = match (module.manifest_json())() {
            RResult::ROk(json) => {
                serde_json::from_str::<Manifest>(&json).map_err(|e| LoadError::Manifest {
                    path: path.clone(),
                    message: format!("not a handoff manifest: {e}"),
                })?
            }
            RResult::RErr(json) => {
                return Err(LoadError::Manifest {
                    path: path.clone(),
                    message: decode_error(&file.declaration.name, "manifest", &json).to_string(),
                })
            }
        };
        // The newest version of each capability the plugin offers: v5 reads a file as it is
        // written, v4 streams a create and the read of a file as they go, v3 streams transcripts
        // in the binary form, v2 takes resolved sessions, a v1-only plugin resolves again on
        // every call.
        let capability = |ids: &[&'static str]| {
            ids.iter()
                .copied()
                .filter(|id| version_of(id) <= newest)
                .find_map(|id| {
                    let object = (module.get_capability())(RStr::from_str(id)).into_option()?;
                    Some(Remote {
                        plugin: manifest.name.clone(),
                        id,
                        object: Some(object),
                    })
                })
                .unwrap_or(Remote {
                    plugin: manifest.name.clone(),
                    id: ids[0],
                    object: None,
                })
        };
        let plugin = LoadedPlugin {
            writer: RemoteWriter(capability(&[
                WRITER_V5, WRITER_V4, WRITER_V3, WRITER_V2, WRITER_V1,
            ])),
            reader: RemoteReader {
                remote: capability(&[READER_V5, READER_V4, READER_V3, READER_V2, READER_V1]),
                cli_version: None,
            },
            resumer: RemoteResumer(capability(&[RESUME_V2, RESUME_V1])),
            file,
            manifest,
        };
        // A private temp copy (where there is no memfd) is unlinked: the library stays mapped
        // (abi_stable never unloads one), and no temporary file outlives the load.
        drop(copy);
        Ok(plugin)
    }

    /// The file it was loaded from, its sha256 and its declaration.
    pub fn file(&self) -> &PluginFile {
        &self.file
    }

    /// The capability ids in use (the newest version of each the plugin offers).
    pub fn capabilities(&self) -> Vec<&'static str> {
        [&self.writer.0, &self.reader.remote, &self.resumer.0]
            .into_iter()
            .filter(|c| c.object.is_some())
            .map(|c| c.id)
            .collect()
    }
}

/// The newest capability version this host knows.
const NEWEST_VERSION: u8 = 5;

/// The version of a capability id (`transcript.writer.v5` → 5).
fn version_of(id: &str) -> u8 {
    id.rsplit_once(".v")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

fn abi_error(path: &Path, copy: &Path, error: LibraryError) -> LoadError {
    let report = error
        .to_string()
        .replace(&copy.display().to_string(), "the file");
    tracing::debug!(plugin = %path.display(), "abi_stable refused the plugin:\n{report}");
    LoadError::Abi {
        path: path.to_owned(),
        summary: summarise_layout_error(&report),
    }
}

impl Plugin for LoadedPlugin {
    fn manifest(&self) -> Manifest {
        self.manifest.clone()
    }
    fn writer(&self) -> &dyn Writer {
        &self.writer
    }
    fn reader(&self) -> &dyn Reader {
        &self.reader
    }
    fn resumer(&self) -> &dyn Resumer {
        &self.resumer
    }
}

/// One capability object of a loaded plugin (or its absence).
struct Remote {
    plugin: String,
    id: &'static str,
    object: Option<CapabilityBox>,
}

impl Remote {
    fn object(&self, method: &str) -> Result<&CapabilityBox, PluginError> {
        self.object.as_ref().ok_or_else(|| {
            PluginError::Other(format!(
                "plugin {} does not offer capability {} (needed for {method})",
                self.plugin, self.id
            ))
        })
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        request: &impl Serialize,
    ) -> Result<T, PluginError> {
        let object = self.object(method)?;
        let request = serde_json::to_string(request)
            .map_err(|e| PluginError::Other(format!("cannot encode the {method} request: {e}")))?;
        match object.call(RStr::from_str(&request)) {
            RResult::ROk(answer) => self.answer(method, answer.as_bytes()),
            RResult::RErr(error) => Err(decode_error(&self.plugin, method, &error)),
        }
    }

    fn answer<T: DeserializeOwned>(&self, method: &str, json: &[u8]) -> Result<T, PluginError> {
        serde_json::from_slice(json).map_err(|e| {
            PluginError::Other(format!(
                "plugin {} answered {method} with unreadable JSON: {e}",
                self.plugin
            ))
        })
    }

    /// A binary call of a v3 id, with `host` as the host's end of it.
    fn call_binary<T: DeserializeOwned>(
        &self,
        method: &str,
        request: &impl Serialize,
        host: &mut dyn HostEnd,
    ) -> Result<T, PluginError> {
        let object = self.object(method)?;
        let answer = binary_call::invoke(object, request, host)
            .map_err(|e| PluginError::Other(format!("cannot encode the {method} request: {e}")))?;
        match answer {
            RResult::ROk(answer) => self.answer(method, answer.as_bytes()),
            RResult::RErr(error) => Err(decode_error(&self.plugin, method, &error)),
        }
    }

    /// A streamed read: events decoded from each batch go to `sink` until it returns false.
    fn read_stream<T: DeserializeOwned>(
        &self,
        method: &str,
        request: &impl Serialize,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<T, PluginError> {
        self.decoded(method, sink, |end| self.call_binary(method, request, end))
    }

    /// `call` with a host end that decodes each batch into `sink`; a batch that does not decode
    /// is the call's error.
    fn decoded<T>(
        &self,
        method: &str,
        sink: &mut dyn FnMut(Event) -> bool,
        call: impl FnOnce(&mut ReadEnd<'_>) -> Result<T, PluginError>,
    ) -> Result<T, PluginError> {
        let mut end = ReadEnd {
            sink,
            unreadable: None,
        };
        let answer = call(&mut end);
        if let Some(message) = end.unreadable {
            return Err(unreadable_events(&self.plugin, method, &message));
        }
        answer
    }

    /// A v5 `read_written_each`, its batches to `events`; `NotSupported` from an older plugin (or
    /// where a file being written cannot be named to a plugin).
    fn read_written(
        &self,
        target: &str,
        file: &dyn WrittenFile,
        events: &mut dyn HostEnd,
    ) -> Result<ReadOutcome, PluginError> {
        if !self.is_v5() {
            return Ok(ReadOutcome::NotSupported);
        }
        let name = file.name();
        // A handle of the plugin's own, named so it opens the file wherever it was renamed.
        let handle = file.open().map_err(|e| PluginError::io(name, &e))?;
        let Some(path) = fd_path(&handle) else {
            return Ok(ReadOutcome::NotSupported);
        };
        let request = ReaderRequestV5::ReadWrittenEach {
            target: Cow::Borrowed(target),
            file: Cow::Owned(path),
            name: Cow::Borrowed(name),
        };
        let mut end = WrittenReadEnd {
            events,
            file,
            lent: 0,
            growth: [0; 9],
        };
        let read: bool = self.call_binary(request.method(), &request, &mut end)?;
        Ok(if read {
            ReadOutcome::Read
        } else {
            ReadOutcome::NotSupported
        })
    }

    /// A streamed read of a whole transcript.
    fn read_whole(&self, request: &ReaderRequestV3<'_>) -> Result<Transcript, PluginError> {
        let mut events = Vec::new();
        let header: Option<TranscriptHeader> =
            self.read_stream(request.method(), request, &mut |event| {
                events.push(event);
                true
            })?;
        Ok(Transcript {
            schema: SCHEMA.to_owned(),
            cwd: header.unwrap_or_default().cwd,
            events,
        })
    }

    /// A binary writer call: the plugin pulls `events` in batches.
    fn write_binary<T: DeserializeOwned>(
        &self,
        request: &WriterRequestV3<'_>,
        events: &[Event],
    ) -> Result<T, PluginError> {
        let mut end = WriteEnd {
            events: events.iter(),
            encoder: Encoder::new(),
        };
        self.call_binary(request.method(), request, &mut end)
    }
}

/// The host's end of a streamed read.
struct ReadEnd<'s> {
    sink: &'s mut dyn FnMut(Event) -> bool,
    unreadable: Option<String>,
}

impl HostEnd for ReadEnd<'_> {
    fn on_batch(&mut self, batch: &[u8]) -> bool {
        match decode_events(batch, self.sink) {
            Ok(more) => more,
            Err(message) => {
                self.unreadable = Some(message);
                false
            }
        }
    }

    fn next_batch(&mut self) -> Pull<'_> {
        Pull::End
    }
}

/// The host's end of a write: the events, encoded a batch at a time as the plugin pulls them, so
/// no second copy of a whole transcript is ever made.
struct WriteEnd<'e> {
    events: std::slice::Iter<'e, Event>,
    encoder: Encoder,
}

impl HostEnd for WriteEnd<'_> {
    fn on_batch(&mut self, _: &[u8]) -> bool {
        // A writer streams nothing back.
        false
    }

    fn next_batch(&mut self) -> Pull<'_> {
        self.encoder.clear();
        for event in self.events.by_ref() {
            self.encoder.push(event);
            if self.encoder.len() >= BATCH_BYTES {
                break;
            }
        }
        if self.encoder.is_empty() {
            Pull::End
        } else {
            Pull::Batch(self.encoder.batch())
        }
    }
}

/// The host's end of a streamed create: each batch is taken from the host's [`EventStream`] only
/// when the plugin's writer pulls it, so neither side holds more than a batch of it.
struct StreamEnd<'e> {
    events: &'e mut dyn EventStream,
    encoder: Encoder,
    /// The host's error, serialised for the plugin: kept until the events taken before it were
    /// lent, then lent on every later pull.
    failed: Option<(PluginError, String)>,
    ended: bool,
    /// Where a v5 writer's reports of its file go (the host's, taken from
    /// [`tap::watched`]).
    tap: Option<Box<dyn WriteTap>>,
}

impl HostEnd for StreamEnd<'_> {
    fn on_batch(&mut self, bytes: &[u8]) -> bool {
        // A writer streams no events back; under v5 it reports its file.
        if let Some(tap) = &mut self.tap {
            report(&mut **tap, bytes);
        }
        true
    }

    fn next_batch(&mut self) -> Pull<'_> {
        self.encoder.clear();
        while !self.ended && self.failed.is_none() && self.encoder.len() < BATCH_BYTES {
            match self.events.next_event() {
                Ok(Some(event)) => self.encoder.push(&event),
                Ok(None) => self.ended = true,
                Err(error) => {
                    let json = encode_error(&error);
                    self.failed = Some((error, json));
                }
            }
        }
        if !self.encoder.is_empty() {
            return Pull::Batch(self.encoder.batch());
        }
        match &self.failed {
            Some((_, json)) => Pull::Failed(json.as_bytes()),
            None => Pull::End,
        }
    }
}

struct RemoteWriter(Remote);
/// The plugin's reader; [`Reader::reading_as`] lends one reading as a version of the source's
/// CLI, which every read request then carries (`cli_version`: a plugin built before it ignores
/// it).
struct RemoteReader<R: Borrow<Remote> = Remote> {
    remote: R,
    cli_version: Option<String>,
}
struct RemoteResumer(Remote);

impl Remote {
    fn is_v1(&self) -> bool {
        self.version() == 1
    }

    /// Whether transcripts cross in the binary form (the v3 ids and later, which answer v3's
    /// requests too).
    fn is_v3(&self) -> bool {
        self.version() >= 3
    }

    /// Whether `create_streamed`, `read_path_each` and `read_path_cwd` cross (the v4 ids).
    fn is_v4(&self) -> bool {
        self.version() >= 4
    }

    /// Whether a create reports its file and a file can be read as it is written (the v5 ids).
    fn is_v5(&self) -> bool {
        self.version() >= 5
    }

    fn version(&self) -> u8 {
        if self.object.is_some() {
            version_of(self.id)
        } else {
            0
        }
    }
}

impl Writer for RemoteWriter {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        if self.0.is_v3() {
            let request = WriterRequestV3::Create {
                root: Cow::Borrowed(root.path()),
                target: Cow::Borrowed(target),
                cwd: transcript.cwd.as_deref().map(Cow::Borrowed),
                options: Cow::Borrowed(options),
                event_count: transcript.events.len(),
            };
            return self.0.write_binary(&request, &transcript.events);
        }
        // The create request has the same shape in v1 and v2.
        let request = WriterRequestV2::Create {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            transcript: Cow::Borrowed(transcript),
            options: Cow::Borrowed(options),
        };
        self.0.call("create", &request)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let root = Cow::Borrowed(root.path());
        if self.0.is_v3() {
            let request = WriterRequestV3::Append {
                root,
                session: Cow::Borrowed(session),
                event_count: events.len(),
            };
            return self.0.write_binary(&request, events);
        }
        let events = Cow::Borrowed(events);
        if self.0.is_v1() {
            let request = WriterRequest::Append {
                root,
                target: Cow::Borrowed(&session.target),
                id: Cow::Borrowed(&session.id),
                events,
            };
            return self.0.call("append", &request);
        }
        let request = WriterRequestV2::Append {
            root,
            session: Cow::Borrowed(session),
            events,
        };
        self.0.call("append", &request)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        let root = Cow::Borrowed(root.path());
        if self.0.is_v1() {
            let request = WriterRequest::Remove {
                root,
                target: Cow::Borrowed(&session.target),
                id: Cow::Borrowed(&session.id),
            };
            return self.0.call("remove", &request);
        }
        let request = WriterRequestV2::Remove {
            root,
            session: Cow::Borrowed(session),
        };
        self.0.call("remove", &request)
    }

    fn create_streamed(
        &self,
        root: &StoreRoot,
        target: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        if !self.0.is_v4() {
            // The trait's default: an older plugin takes the whole transcript.
            return self.create(root, target, events.whole()?, options);
        }
        let request = WriterRequestV4::CreateStreamed {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            options: Cow::Borrowed(options),
        };
        let mut end = StreamEnd {
            events: &mut *events,
            encoder: Encoder::new(),
            failed: None,
            ended: false,
            // Under v5 the plugin's create reports its file; the host's own create is not
            // watched (it writes nothing).
            tap: if self.0.is_v5() { tap::take() } else { None },
        };
        let answer = self.0.call_binary(request.method(), &request, &mut end);
        let failed = end.failed.take().map(|(error, _)| error);
        match (answer, failed) {
            (Ok(StreamedCreate::Created(session)), None) => Ok(session),
            // A writer that went on after the host's events failed broke the contract: what it
            // made of part of the events must not stay.
            (Ok(StreamedCreate::Created(session)), Some(error)) => {
                let _ = self.remove(root, &session);
                Err(error)
            }
            (Ok(StreamedCreate::WholeNeeded), None) => {
                self.create(root, target, events.whole()?, options)
            }
            // Nor does a writer that asks to start over after them get anything but their error.
            (Ok(StreamedCreate::WholeNeeded), Some(error)) => Err(error),
            (Err(error), _) => Err(error),
        }
    }
}

impl<R: Borrow<Remote>> RemoteReader<R> {
    fn remote(&self) -> &Remote {
        self.remote.borrow()
    }

    /// The version this reader asks the plugin to read as, on the wire.
    fn cli_version(&self) -> Option<Cow<'_, str>> {
        self.cli_version.as_deref().map(Cow::Borrowed)
    }

    /// Whether `from` crosses as one JSON transcript, its events handed on after: a plugin older
    /// than the v3 ids streams nothing (it cannot read a file being written either).
    fn crosses_whole(&self, from: ReadFrom<'_>) -> bool {
        !self.remote().is_v3() && !matches!(from, ReadFrom::Written(..))
    }

    /// The binary call that streams what the plugin reads from `from` to `end`: the newest the
    /// plugin answers (a file is read as it is read with v4, whole and then streamed with v3).
    fn stream(
        &self,
        from: ReadFrom<'_>,
        end: &mut dyn HostEnd,
    ) -> Result<ReadOutcome, PluginError> {
        match from {
            // The wire's read of a file being written names no version: one asked for is read
            // whole, as that version.
            ReadFrom::Written(..) if self.cli_version.is_some() => Ok(ReadOutcome::NotSupported),
            ReadFrom::Written(target, file) => self.remote().read_written(target, file, end),
            ReadFrom::File(target, path) if self.remote().is_v4() => {
                let (target, path) = (Cow::Borrowed(target), Cow::Borrowed(path));
                let request = ReaderRequestV4::ReadPathEach {
                    target,
                    path,
                    cli_version: self.cli_version(),
                };
                self.remote()
                    .call_binary::<()>(request.method(), &request, end)?;
                Ok(ReadOutcome::Read)
            }
            ReadFrom::File(target, path) => self.stream_v3(
                ReaderRequestV3::ReadPath {
                    target: Cow::Borrowed(target),
                    path: Cow::Borrowed(path),
                    cli_version: self.cli_version(),
                },
                end,
            ),
            ReadFrom::Session(root, session) => self.stream_v3(
                ReaderRequestV3::ReadEach {
                    root: Cow::Borrowed(root.path()),
                    session: Cow::Borrowed(session),
                    cli_version: self.cli_version(),
                },
                end,
            ),
        }
    }

    /// A v3 read request streamed to `end` (its answer, the transcript's header, is not needed).
    fn stream_v3(
        &self,
        request: ReaderRequestV3<'_>,
        end: &mut dyn HostEnd,
    ) -> Result<ReadOutcome, PluginError> {
        self.remote()
            .call_binary::<Option<TranscriptHeader>>(request.method(), &request, end)?;
        Ok(ReadOutcome::Read)
    }
}

/// The plugin method a streamed read of `from` runs, for errors.
fn stream_method(from: ReadFrom<'_>) -> &'static str {
    match from {
        ReadFrom::Session(..) => "read_each",
        ReadFrom::File(..) => "read_path_each",
        ReadFrom::Written(..) => "read_written_each",
    }
}

impl<R: Borrow<Remote> + Send + Sync> Reader for RemoteReader<R> {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if self.crosses_whole(from) {
            for event in self.read(from)?.events {
                if !sink(event) {
                    break;
                }
            }
            return Ok(ReadOutcome::Read);
        }
        self.remote()
            .decoded(stream_method(from), sink, |end| self.stream(from, end))
    }

    /// The batches as they crossed: the taker's thread decodes them.
    fn read_batches(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(EventBatch) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if self.crosses_whole(from) {
            in_batches(|each| self.read_each(from, each).map(drop), sink)?;
            return Ok(ReadOutcome::Read);
        }
        let mut end = EncodedReadEnd {
            sink,
            plugin: &self.remote().plugin,
            method: stream_method(from),
        };
        self.stream(from, &mut end)
    }

    /// One call: the plugin reads the whole session and its header carries the cwd.
    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        match from {
            ReadFrom::Written(..) => Err(not_whole(from)),
            ReadFrom::Session(root, session) => {
                let root = Cow::Borrowed(root.path());
                let session = Cow::Borrowed(session);
                if self.remote().is_v3() {
                    return self.remote().read_whole(&ReaderRequestV3::Read {
                        root,
                        session,
                        cli_version: self.cli_version(),
                    });
                }
                if self.remote().is_v1() {
                    let request = ReaderRequest::Read {
                        root,
                        target: Cow::Borrowed(&session.target),
                        id: Cow::Borrowed(&session.id),
                    };
                    return self.remote().call("read", &request);
                }
                self.remote()
                    .call("read", &ReaderRequestV2::Read { root, session })
            }
            ReadFrom::File(target, path) => {
                let (target, path) = (Cow::Borrowed(target), Cow::Borrowed(path));
                if self.remote().is_v3() {
                    return self.remote().read_whole(&ReaderRequestV3::ReadPath {
                        target,
                        path,
                        cli_version: self.cli_version(),
                    });
                }
                self.remote()
                    .call("read_path", &ReaderRequestV2::ReadPath { target, path })
            }
        }
    }

    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        match from {
            ReadFrom::File(target, path) if self.remote().is_v4() => {
                let request = ReaderRequestV4::ReadPathCwd {
                    target: Cow::Borrowed(target),
                    path: Cow::Borrowed(path),
                };
                self.remote().call(request.method(), &request)
            }
            // Older plugins, and sessions: v4 reads the cwd of a file only.
            _ => Ok(self.read(from)?.cwd),
        }
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        let request = ReaderRequestV2::List {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
        };
        self.remote().call("list", &request)
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        if self.remote().is_v1() {
            // v1 has no such call: list, as the trait's default does.
            return Ok(SessionInfo::newest_owned(self.list(root, target)?, locator));
        }
        let request = ReaderRequestV2::FindOwned {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            locator: Cow::Borrowed(locator),
        };
        self.remote().call("find_owned", &request)
    }

    /// The same plugin, every read request carrying `cli_version`. Sent to every plugin: one
    /// built before the member reads as its default, one whose targets read versions alike
    /// ignores it, and a v1 or v2 plugin (whose reads have no such member) is never asked.
    fn reading_as(&self, cli_version: &str) -> Option<Box<dyn Reader + '_>> {
        Some(Box::new(RemoteReader {
            remote: self.remote(),
            cli_version: Some(cli_version.to_owned()),
        }))
    }
}

impl Resumer for RemoteResumer {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        let request = ResumeRequestV2::Resolve {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
        };
        self.0.call("resolve", &request)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let root = Cow::Borrowed(root.path());
        let prompt = Cow::Borrowed(prompt);
        if self.0.is_v1() {
            let request = ResumeRequest::Plan {
                root,
                target: Cow::Borrowed(&session.target),
                id: Cow::Borrowed(&session.id),
                prompt,
            };
            return self.0.call("plan", &request);
        }
        let request = ResumeRequestV2::Plan {
            root,
            session: Cow::Borrowed(session),
            prompt,
        };
        self.0.call("plan", &request)
    }
}
