//! handoff-capability, the third layer (on the transcript, the dialects' names and the store).
//!
//! The capability traits every provider plugin implements, and what they exchange.
//!
//! These are plain Rust traits. A plugin linked into the host implements them directly; a plugin
//! loaded from a shared library is wrapped back into them by the loader, so the continuation engine
//! and the conformance suite see one kind of plugin.
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use handoff_store::StoreRoot;
use handoff_transcript::{Event, Transcript};

mod batch;
mod error;
pub mod live;
pub mod manifest;
mod written;
pub use batch::in_batches;
pub use batch::EventBatch;
pub use written::fd_path;
pub use written::{GrowingRead, Growth, WrittenFile, ABANDONED};

pub use crate::manifest::{DefaultRoot, Manifest, RootBase, TargetKind, TargetManifest};

/// Makes a built-in plugin: a plugin crate's `handoff_builtin` (see `register_builtin!` in the
/// SDK), which a host registers explicitly.
pub type MakePlugin = fn() -> Box<dyn Plugin>;

/// The plugin API version this host implements. A plugin declares a semver requirement on it.
pub const PLUGIN_API_VERSION: &str = "1.0.0";

/// A native session: its target, its exact native id and its file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRef {
    /// The target it belongs to.
    pub target: String,
    /// The exact native session id.
    pub id: String,
    /// The native file that holds it.
    pub path: PathBuf,
}

impl SessionRef {
    /// Checks a session handed to a plugin: it is of `target` and its file is inside `root` (a
    /// host could hand over anything). Returns the file.
    pub fn check(&self, root: &StoreRoot, target: &str) -> Result<&Path, PluginError> {
        if self.target != target {
            return Err(PluginError::UnknownTarget {
                target: self.target.clone(),
            });
        }
        root.check_inside(&self.path)?;
        Ok(&self.path)
    }
}

/// A session as listed by a reader.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session.
    pub session: SessionRef,
    /// Whether this plugin marked it as its own.
    pub owned: bool,
    /// The conversation locator it was marked with, if any.
    pub locator: Option<String>,
    /// When it was last written, in milliseconds since the epoch (newest first in listings).
    pub updated_ms: i64,
    /// The title the CLI itself shows for it (its name or summary where it keeps one, else the
    /// first user text), where the plugin's listing gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its working directory, where the plugin's listing gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// How many canonical events its reader yields, where counted: an exact count needs a full
    /// read, so listings leave it out and a host counts only the sessions it shows. Absent from
    /// the JSON when not counted, so plugins built before it existed still load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
}

impl SessionInfo {
    /// A session file as a listing shows it: `updated_ms` from the file's modification time, and
    /// owned when `marker` (the plugin's own, already checked) is present.
    pub fn of_file(
        target: &str,
        id: &str,
        path: &Path,
        marker: Option<handoff_store::marker::OwnershipMarker>,
    ) -> SessionInfo {
        let updated_ms = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        SessionInfo {
            session: SessionRef {
                target: target.to_owned(),
                id: id.to_owned(),
                path: path.to_owned(),
            },
            owned: marker.is_some(),
            locator: marker.and_then(|m| m.locator),
            updated_ms,
            title: None,
            cwd: None,
            events: None,
        }
    }

    /// The same, with the title and cwd the CLI shows.
    pub fn with_details(mut self, title: Option<String>, cwd: Option<String>) -> SessionInfo {
        self.title = title;
        self.cwd = cwd;
        self
    }

    /// The same, with its event count.
    pub fn with_events(mut self, events: u64) -> SessionInfo {
        self.events = Some(events);
        self
    }

    /// The first session of a newest-first listing that this plugin marked with `locator`: what
    /// [`Reader::find_owned`] returns when a plugin has nothing faster.
    pub fn newest_owned(listing: Vec<SessionInfo>, locator: &str) -> Option<SessionRef> {
        listing
            .into_iter()
            .find(|s| s.owned && s.locator.as_deref() == Some(locator))
            .map(|s| s.session)
    }

    /// Sorts a listing newest first, ties by id, so listings are stable.
    pub fn sort_newest_first(sessions: &mut [SessionInfo]) {
        sessions.sort_by(|a, b| {
            b.updated_ms
                .cmp(&a.updated_ms)
                .then_with(|| a.session.id.cmp(&b.session.id))
        });
    }
}

/// Options for creating a session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateOptions {
    /// The working directory the session belongs to (CLIs key sessions by it). Defaults to the
    /// transcript's cwd.
    pub cwd: Option<String>,
    /// A stable conversation locator written into the ownership marker, so the continuation engine
    /// can find this session again.
    pub locator: Option<String>,
}

/// The exact resume of one native session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResumePlan {
    /// Run this command (a CLI target).
    Command(ResumeCommand),
    /// Send this request (an API target).
    Request {
        /// The wire dialect of the body.
        dialect: handoff_dialects::Dialect,
        /// The request body: the whole history plus the new prompt.
        body: Value,
    },
}

impl ResumePlan {
    /// The command to run, for a CLI target.
    pub fn command(&self) -> Option<&ResumeCommand> {
        match self {
            ResumePlan::Command(command) => Some(command),
            ResumePlan::Request { .. } => None,
        }
    }
}

/// The command that resumes a session of a CLI target (its JSON members are those of
/// [`ResumePlan::Command`], beside `"kind": "command"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResumeCommand {
    /// The program, e.g. `claude`.
    pub program: String,
    /// Its arguments; they name the session exactly (never "latest").
    pub args: Vec<String>,
    /// Environment variables to set.
    pub env: Vec<(String, String)>,
    /// The directory to run it in.
    pub cwd: Option<PathBuf>,
    /// Whether stdin must be closed (some CLIs wait on it otherwise).
    pub close_stdin: bool,
    /// The arguments that open the same session in the CLI's own interactive session (its
    /// terminal UI), with the same program, environment and cwd, and no prompt: where a
    /// person continues the conversation. `None`: the plugin offers only the headless
    /// command above (a plugin built before this field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive_args: Option<Vec<String>>,
}

impl ResumeCommand {
    /// `program` run in `cwd` with stdin closed and no environment: `session` are the arguments
    /// that open the session (alone, in the CLI's own terminal UI: the interactive arguments), and
    /// `prompt` those after them that send the prompt headless.
    pub fn new(
        program: &str,
        session: Vec<String>,
        prompt: impl IntoIterator<Item = String>,
        cwd: Option<PathBuf>,
    ) -> ResumeCommand {
        let mut args = session.clone();
        args.extend(prompt);
        ResumeCommand {
            program: program.to_owned(),
            args,
            env: Vec::new(),
            cwd,
            close_stdin: true,
            interactive_args: Some(session),
        }
    }

    /// The headless arguments start with `words`, which the interactive ones do not (a
    /// subcommand such as `codex exec`, a flag such as `claude -p`).
    pub fn headless_after(mut self, words: &[&str]) -> ResumeCommand {
        self.args
            .splice(0..0, words.iter().map(|w| (*w).to_owned()));
        self
    }

    /// Sets `var` to `value` in the command's environment.
    pub fn with_env(mut self, var: &str, value: impl Into<String>) -> ResumeCommand {
        self.env.push((var.to_owned(), value.into()));
        self
    }
}

pub use error::{panic_message, PluginError};

/// Writes native sessions. Every path it touches is inside the [`StoreRoot`] it is handed.
///
/// A session is resolved once ([`Resumer::resolve`], or returned by [`Writer::create`]) and the
/// [`SessionRef`] is handed to every later call, so no call walks the store again. A plugin still
/// checks what it is handed ([`SessionRef::check`]): the target is its own and the file is inside
/// the root.
pub trait Writer: Send + Sync {
    /// Creates a new native session holding `transcript`, marked as this plugin's own; returns its
    /// native id. A transcript with a part the target does not carry is refused before anything is
    /// written.
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError>;

    /// Appends `events` to a session this plugin owns, natively (whole records only).
    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError>;

    /// Removes a session this plugin owns; refuses one it does not.
    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError>;

    /// [`Writer::create`] fed event by event, so a long session is never held whole: the
    /// continuation engine streams a source session through it. A writer that can write as events
    /// arrive overrides this; one that meets what it cannot write without the rest (a compaction
    /// that keeps earlier events, say) discards what it began and asks `events` for the whole
    /// transcript. The default asks for the whole transcript at once and calls `create`.
    ///
    /// Every event `events` hands out is checked ([`Transcript::validate`]'s rules and the
    /// target's carried parts) by the engine before it arrives; an error from `events` must end
    /// the create, removing everything begun, and be returned unchanged: through a plugin file,
    /// `whole()` can fail with a marker the SDK turns into a restart by the host (docs/abi.md).
    fn create_streamed(
        &self,
        root: &StoreRoot,
        target: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let transcript = events.whole()?;
        self.create(root, target, transcript, options)
    }
}

/// The events of a transcript as a [`Writer::create_streamed`] takes them.
pub trait EventStream {
    /// The next event, or `None` after the last.
    fn next_event(&mut self) -> Result<Option<Event>, PluginError>;

    /// The whole transcript from its first event, however many events were taken before: for a
    /// writer that cannot go on event by event (it starts over with [`Writer::create`]).
    fn whole(&mut self) -> Result<&Transcript, PluginError>;
}

/// A held transcript as an [`EventStream`] (each event cloned as it is taken): for tests, and for
/// hosts that have the transcript already.
pub struct HeldEvents<'a> {
    transcript: &'a Transcript,
    next: usize,
}

impl<'a> HeldEvents<'a> {
    /// The events of `transcript`, from its first.
    pub fn new(transcript: &'a Transcript) -> Self {
        HeldEvents {
            transcript,
            next: 0,
        }
    }
}

impl EventStream for HeldEvents<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        let event = self.transcript.events.get(self.next).cloned();
        self.next += usize::from(event.is_some());
        Ok(event)
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        Ok(self.transcript)
    }
}

/// Where a [`Reader`] reads a session from: the one value every read takes, so a reader has one
/// streaming primitive ([`Reader::read_each`]) instead of one method per place and kind of read.
#[derive(Clone, Copy)]
pub enum ReadFrom<'a> {
    /// A resolved session of a store (checked by the reader: [`SessionRef::check`]).
    Session(&'a StoreRoot, &'a SessionRef),
    /// A session file of the target named first, read directly.
    File(&'a str, &'a Path),
    /// A session file of the target named first that its writer still writes: the continuation
    /// engine's verify reads a new session as it is written, so reading it back overlaps writing
    /// it. A reader that can reads it through [`GrowingRead`]; one that cannot answers
    /// [`ReadOutcome::NotSupported`] without reading.
    Written(&'a str, &'a dyn WrittenFile),
}

impl ReadFrom<'_> {
    /// The target the session belongs to.
    pub fn target(&self) -> &str {
        match self {
            ReadFrom::Session(_, session) => &session.target,
            ReadFrom::File(target, _) | ReadFrom::Written(target, _) => target,
        }
    }

    /// The file read, for errors and logs (a written file's name is its writer's temp file).
    pub fn path(&self) -> &Path {
        match self {
            ReadFrom::Session(_, session) => &session.path,
            ReadFrom::File(_, path) => path,
            ReadFrom::Written(_, file) => file.name(),
        }
    }
}

/// Whether a read read its source: only a file still being written may be declined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The source was read (to its end, or until the sink said stop).
    Read,
    /// The reader reads whole files only: nothing was read ([`ReadFrom::Written`] alone).
    NotSupported,
}

/// Reads native sessions into the canonical transcript.
///
/// One streaming primitive, [`Reader::read_each`], reads any [`ReadFrom`]; whole reads
/// ([`Reader::read`]) and batches ([`Reader::read_batches`]) are provided on it. A reader
/// overrides them only where it has something better: a plugin file's reader hands batches on as
/// they crossed the boundary, and a whole read that crosses once.
pub trait Reader: Send + Sync {
    /// Reads `from` event by event, in order, handing each to `sink` until it returns `false`;
    /// only [`ReadFrom::Written`] may answer [`ReadOutcome::NotSupported`]. The continuation
    /// engine streams sessions with it so it never holds a second copy of a long one. From a
    /// file still being written, the engine trusts what was read only once the file has turned
    /// out to be the session (the same file, of the same length); on any error it reads the
    /// session again once it is whole, so those errors are never shown.
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError>;

    /// The working directory of `from`, as [`Reader::read`] gives it, read without reading every
    /// event where the reader can (a header line, the first record). Of a file still being
    /// written: [`not_whole`].
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError>;

    /// Lists the sessions of a target, newest first.
    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError>;

    /// The newest session this plugin marked with `locator`, if any: the continuation engine's
    /// one look into the store. The default lists every session; a plugin whose store can hold
    /// thousands of sessions overrides it to look at the newest first and stop at the first match.
    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        Ok(SessionInfo::newest_owned(self.list(root, target)?, locator))
    }

    /// Reads `from` whole: [`Reader::cwd`] and [`Reader::read_each`]'s events. A file still being
    /// written is never read whole (its end is not known yet): that is an error.
    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        if let ReadFrom::Written(..) = from {
            return Err(not_whole(from));
        }
        let mut events = Vec::new();
        self.read_each(from, &mut |event| {
            events.push(event);
            true
        })?;
        let mut transcript = Transcript::new(events);
        transcript.cwd = self.cwd(from)?;
        Ok(transcript)
    }

    /// This reader reading as version `cli_version` of its target's CLI sends a session, where
    /// the CLI's versions send the same file differently (Claude Code 2.1.197 drops a call the
    /// session ended on, 2.1.332 answers it): the host reads a source as the CLI the user has
    /// installed. Every read of the view (each, batches, whole, cwd) reads as that version; a
    /// file still being written, and listings, as this reader does. `None` (the default): this
    /// reader reads every version alike, so the caller reads with it as it is. A version the
    /// reader does not know is read as its default.
    fn reading_as(&self, cli_version: &str) -> Option<Box<dyn Reader + '_>> {
        let _ = cli_version;
        None
    }

    /// [`Reader::read_each`] in batches, each decoded by whoever takes it: the continuation engine
    /// reads a source on one thread and takes its batches on another. The default batches
    /// `read_each`'s events; a plugin file's reader hands its batches as they crossed, so the
    /// taker's thread decodes them.
    fn read_batches(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(EventBatch) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        let mut outcome = ReadOutcome::Read;
        in_batches(
            |each| {
                outcome = self.read_each(from, each)?;
                Ok(())
            },
            sink,
        )?;
        Ok(outcome)
    }
}

/// What a whole read or a cwd of a file still being written fails with: only
/// [`Reader::read_each`] reads one.
pub fn not_whole(from: ReadFrom<'_>) -> PluginError {
    PluginError::Other(format!(
        "{} is still being written: the {} reader reads it only event by event",
        from.path().display(),
        from.target()
    ))
}

/// The strict resume of an exact native id.
pub trait Resumer: Send + Sync {
    /// The session this exact id names; a missing id is an error, never a fresh session. The one
    /// call that looks a session up in the store.
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError>;

    /// How to resume exactly this session with a new prompt.
    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError>;
}

/// A provider plugin: a manifest and the three capabilities.
pub trait Plugin: Send + Sync {
    /// What the plugin says about itself.
    fn manifest(&self) -> Manifest;
    /// Its writer.
    fn writer(&self) -> &dyn Writer;
    /// Its reader.
    fn reader(&self) -> &dyn Reader;
    /// Its resumer.
    fn resumer(&self) -> &dyn Resumer;
}

/// The accessors of a [`Plugin`] that is itself its [`Writer`], [`Reader`] and [`Resumer`], written
/// once: `impl Plugin for P { fn manifest(&self) -> Manifest { … } parts_are_self!(); }`
/// (`handoff_sdk::parts_are_self!()` in a plugin).
#[macro_export]
macro_rules! parts_are_self {
    () => {
        fn writer(&self) -> &dyn $crate::Writer {
            self
        }
        fn reader(&self) -> &dyn $crate::Reader {
            self
        }
        fn resumer(&self) -> &dyn $crate::Resumer {
            self
        }
    };
}

/// Calls by id for callers that hold only an id (tests, tools): each resolves first, then makes
/// the call. The engine resolves once and uses the traits directly.
pub trait ById: Plugin {
    /// Resolves `id`, then reads it.
    fn read_id(&self, root: &StoreRoot, target: &str, id: &str) -> Result<Transcript, PluginError> {
        let session = self.resumer().resolve(root, target, id)?;
        self.reader().read(ReadFrom::Session(root, &session))
    }

    /// Resolves `id`, then streams it to `sink`.
    fn read_each_id(
        &self,
        root: &StoreRoot,
        target: &str,
        id: &str,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        let session = self.resumer().resolve(root, target, id)?;
        self.reader()
            .read_each(ReadFrom::Session(root, &session), sink)
            .map(drop)
    }

    /// Resolves `id`, then appends to it.
    fn append_id(
        &self,
        root: &StoreRoot,
        target: &str,
        id: &str,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let session = self.resumer().resolve(root, target, id)?;
        self.writer().append(root, &session, events)
    }

    /// Resolves `id`, then removes it.
    fn remove_id(&self, root: &StoreRoot, target: &str, id: &str) -> Result<(), PluginError> {
        let session = self.resumer().resolve(root, target, id)?;
        self.writer().remove(root, &session)
    }

    /// Resolves `id`, then plans its resume.
    fn plan_id(
        &self,
        root: &StoreRoot,
        target: &str,
        id: &str,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let session = self.resumer().resolve(root, target, id)?;
        self.resumer().plan(root, &session, prompt)
    }
}

impl<P: Plugin + ?Sized> ById for P {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan crosses the plugin boundary as JSON: the command's members stand beside
    /// `"kind": "command"` (as when they were the variant's own fields), and a plugin built before
    /// `interactive_args` existed sends none.
    #[test]
    fn a_command_plan_json_is_the_commands_members_beside_its_kind() {
        let old = r#"{"kind":"command","program":"pi","args":["--session","s1"],"env":[["K","v"]],"cwd":"/w","close_stdin":true}"#;
        let plan: ResumePlan = serde_json::from_str(old).unwrap();
        let command = plan.command().expect("a command");
        assert_eq!(
            (
                command.program.as_str(),
                command.args.len(),
                command.interactive_args.as_ref()
            ),
            ("pi", 2, None)
        );
        assert_eq!(command.env, [("K".to_owned(), "v".to_owned())]);
        assert_eq!(serde_json::to_string(&plan).unwrap(), old);
        let mut interactive = plan.clone();
        if let ResumePlan::Command(command) = &mut interactive {
            command.interactive_args = Some(vec!["--session".into(), "s1".into()]);
        }
        let json = serde_json::to_value(&interactive).unwrap();
        assert_eq!(json["interactive_args"][1], "s1");
        assert_eq!(json["kind"], "command");
    }

    /// A listing crosses the plugin boundary as JSON: a plugin built before `title`, `cwd` and
    /// `events` existed sends none of them, and a host built before them must not see them.
    #[test]
    fn session_info_json_stays_readable_both_ways() {
        let old = r#"{"session":{"target":"t","id":"s1","path":"/r/s1.jsonl"},"owned":true,"locator":null,"updated_ms":5}"#;
        let info: SessionInfo = serde_json::from_str(old).unwrap();
        assert_eq!(
            (info.title.clone(), info.cwd.clone(), info.events),
            (None, None, None)
        );
        assert_eq!(serde_json::to_string(&info).unwrap(), old);
        let counted = info
            .with_details(Some("fix it".into()), None)
            .with_events(7);
        let json = serde_json::to_value(&counted).unwrap();
        assert_eq!(json["events"], 7);
        assert_eq!(json["title"], "fix it");
        assert!(json.get("cwd").is_none());
        let back: SessionInfo = serde_json::from_value(json).unwrap();
        assert_eq!(back, counted);
    }

    /// A reader of two events from any session or file, which declines a file being written and
    /// counts its reads.
    struct Two {
        reads: std::sync::atomic::AtomicUsize,
    }

    impl Reader for Two {
        fn read_each(
            &self,
            from: ReadFrom<'_>,
            sink: &mut dyn FnMut(Event) -> bool,
        ) -> Result<ReadOutcome, PluginError> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let ReadFrom::Written(..) = from {
                return Ok(ReadOutcome::NotSupported);
            }
            for id in ["e1", "e2"] {
                let body = handoff_transcript::Body::User {
                    content: vec![handoff_transcript::Part::text(id)],
                };
                let at = handoff_transcript::Timestamp::from_millis(0);
                if !sink(Event::new(id, at, body)) {
                    break;
                }
            }
            Ok(ReadOutcome::Read)
        }
        fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
            Ok(Some(format!("/of/{}", from.target())))
        }
        fn list(&self, _: &StoreRoot, _: &str) -> Result<Vec<SessionInfo>, PluginError> {
            Ok(vec![])
        }
    }

    struct Growing(PathBuf);

    impl WrittenFile for Growing {
        fn open(&self) -> std::io::Result<std::fs::File> {
            std::fs::File::open(&self.0)
        }
        fn name(&self) -> &Path {
            &self.0
        }
        fn wait_past(&self, _: u64) -> Growth {
            Growth::Abandoned
        }
    }

    #[test]
    fn whole_reads_and_batches_are_made_of_the_one_primitive() {
        let two = Two {
            reads: Default::default(),
        };
        let file = ReadFrom::File("t", Path::new("/s.jsonl"));
        let whole = two.read(file).unwrap();
        let ids: Vec<_> = whole.events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(
            (ids, whole.cwd.as_deref()),
            (vec!["e1", "e2"], Some("/of/t"))
        );
        let mut batched = 0;
        let outcome = two
            .read_batches(file, &mut |batch| {
                batched += batch.into_events().unwrap().len();
                true
            })
            .unwrap();
        assert_eq!((outcome, batched), (ReadOutcome::Read, 2));

        // A file being written is declined through the batches too, and never read whole.
        let written = Growing(PathBuf::from("/tmp/written"));
        let from = ReadFrom::Written("t", &written);
        assert_eq!(from.path(), Path::new("/tmp/written"));
        let outcome = two.read_batches(from, &mut |_| true).unwrap();
        assert_eq!(outcome, ReadOutcome::NotSupported);
        let before = two.reads.load(std::sync::atomic::Ordering::SeqCst);
        let error = two.read(from).unwrap_err().to_string();
        assert!(error.contains("/tmp/written"), "{error}");
        assert_eq!(two.reads.load(std::sync::atomic::Ordering::SeqCst), before);
    }
}
