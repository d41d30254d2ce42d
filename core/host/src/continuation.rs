//! The continuation engine: continue a conversation on a target, natively, verified, by its id.
//!
//! The native store is the ledger; there is no side database. For a conversation locator the
//! engine finds the newest session the plugin marked with it; if that session's transcript is an
//! exact prefix of the canonical one, it appends the missing suffix and resumes the same native id;
//! otherwise it creates a new session. Every write is read back and compared; any mismatch fails
//! closed: a created session is removed, an appended one gets its exact previous bytes back.
//!
//! Every write is journaled first ([`crate::journal`]): a run killed at any point leaves a
//! hot journal, and the next run that opens the store root rolls it back ([`recover`]) before it
//! does anything else, so a session always has its old bytes or its complete new ones.

mod batches;
mod progress;
mod recovery;
mod source;
mod whole_file;
mod written;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use progress::{with_progress, Progress};
pub use recovery::{recover, Recovered};
pub use source::SourceFile;

use batches::read_back;
use source::{drop_and_check, SourceRead, SourceStream};
use written::{ReadWritten, WriteWatch};

use crate::episodes::{self, Episode, Witness};
use crate::journal::{Conversation, Journal};
use crate::seal::Seal;
use handoff_capability::manifest::TargetManifest;
use handoff_capability::{
    CreateOptions, EventStream, Plugin, PluginError, ReadFrom, ResumePlan, SessionRef,
};
use handoff_store::lock::Lock;
use handoff_store::tap;
use handoff_store::{validate_cwd, StoreRoot};
use handoff_transcript::{
    Comparison, Difference, DropFilter, Dropped, Feature, Fingerprinter, NotDroppable, PrintChain,
    Transcript,
};

/// The conversation to continue.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// A transcript already in memory.
    Transcript(&'a Transcript),
    /// A session file, streamed into the target as its reader reads it: never held whole when
    /// the continuation creates a session (see `continuation/source.rs`).
    File(SourceFile<'a>),
}

impl<'a> From<&'a Transcript> for Source<'a> {
    fn from(transcript: &'a Transcript) -> Self {
        Source::Transcript(transcript)
    }
}

/// What to continue, and where.
#[derive(Clone)]
pub struct ContinueRequest<'a> {
    /// The whole conversation.
    pub source: Source<'a>,
    /// A stable name for the conversation (the same on every continuation of it, on every
    /// target). `None`, for a [`Source::File`]: the source's own conversation
    /// ([`crate::episodes::identify_source`]: an episode handoff wrote carries its
    /// conversation on), else the source starts one: `<source target>:<its first event's id>`.
    pub locator: Option<&'a str>,
    /// The target name.
    pub target: &'a str,
    /// The target's store root.
    pub root: &'a StoreRoot,
    /// The key that seals this run's journals, and proves those it finds are handoff's
    /// ([`crate::seal`]): a host keeps one per user (the CLI's is beside its certificates).
    pub seal: &'a Seal,
    /// The working directory for a new session (defaults to the source's).
    pub cwd: Option<String>,
    /// The prompt the resume plan carries.
    pub prompt: &'a str,
    /// The kinds of event or part to continue without (`--drop`): each dropped item is listed in
    /// [`Continued::dropped`], and the verify compares the rest. Empty: nothing is dropped, and
    /// a part the target does not carry refuses the continuation.
    pub drop: &'a [Feature],
    /// How long to wait for another continuation of the same conversation to finish.
    pub lock_wait: Duration,
    /// Extend this session of the target (by its native id) instead of the conversation's
    /// episode: the user's own session, which is never touched otherwise. Refused, with the
    /// first difference, when it is not a prefix of the source.
    pub into: Option<&'a str>,
}

/// What the engine did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// A new native session was created.
    Created,
    /// The existing session was a prefix; this many events were appended to it.
    Appended {
        /// How many events.
        events: usize,
    },
    /// The existing session already held the whole conversation.
    Unchanged,
}

/// The result of a continuation.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Continued {
    /// The native session, by its exact id.
    pub session: SessionRef,
    /// What was done to it.
    pub action: Action,
    /// A session of this conversation that had diverged and was left as it was, if any.
    pub diverged_from: Option<SessionRef>,
    /// Where it diverged: the first event of it that differs from the source.
    pub diverged_at: Option<DivergedAt>,
    /// Which hop of the conversation this is (the origin is hop 0; the first continuation 1).
    pub hop: u32,
    /// How the source's conversation was known (`None`: the request named it).
    pub witness: Option<Witness>,
    /// How to resume it.
    pub plan: ResumePlan,
    /// What this run rolled back first: writes of killed runs it found in the store root.
    pub recovered: Vec<Recovered>,
    /// The conversation (given, carried by the source episode, or the source's origin).
    pub locator: String,
    /// How many events the session holds (the source's, less those dropped whole).
    pub events: usize,
    /// What was left out of the source because the request asked to drop it, in source order:
    /// the session holds the source minus these (a later continuation of the conversation
    /// reuses it only when asked to drop the same).
    pub dropped: Vec<Dropped>,
    /// The version of the source's CLI the source was read as ([`SourceFile::cli_version`]);
    /// `None`: as its reader reads by default (a transcript source, or none asked for).
    pub read_as: Option<String>,
}

/// The first event of an episode that differs from the source.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DivergedAt {
    /// Its index (in the episode, as the comparison counts).
    pub index: usize,
    /// The episode's event there, if it has one.
    pub event_id: Option<String>,
    /// What differs.
    pub field: String,
}

impl From<&Difference> for DivergedAt {
    fn from(diff: &Difference) -> Self {
        DivergedAt {
            index: diff.index,
            event_id: diff.left_id.clone(),
            field: diff.field.clone(),
        }
    }
}

/// Why a continuation failed. Nothing it wrote is left behind.
#[derive(Debug, thiserror::Error)]
pub enum ContinueError {
    /// The plugin refused or failed.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// What was read back is not what was written; the write was undone.
    #[error("{target}: session {id} read back differs from what was written ({undo}): {diff}")]
    Mismatch {
        /// The target.
        target: String,
        /// The session id.
        id: String,
        /// The first difference.
        diff: Box<Difference>,
        /// What was undone.
        undo: String,
    },
    /// The store root cannot be written (read-only, full, no permission): names the path.
    #[error("store root {}: {message}", root.display())]
    Store {
        /// The store root.
        root: PathBuf,
        /// What failed, naming the file or folder.
        message: String,
    },
    /// A killed run's write could not be rolled back; its journal is kept.
    #[error("cannot roll back the interrupted write recorded in {}: {message}", journal.display())]
    Recovery {
        /// The journal file.
        journal: PathBuf,
        /// Why, naming the session file.
        message: String,
    },
    /// A kind was asked to be dropped that cannot be.
    #[error(transparent)]
    NotDroppable(#[from] NotDroppable),
    /// `--into`: the named session is not a prefix of the source; nothing was written.
    #[error(
        "{target} session {id} is not a prefix of the source, so it cannot be extended: {diff}"
    )]
    NotAPrefix {
        /// The target.
        target: String,
        /// The session asked for.
        id: String,
        /// The first difference (left: the session, right: the source).
        diff: Box<Difference>,
    },
    /// Another continuation of the same conversation holds the lock.
    #[error("another continuation of {locator} is running on {target}; try again when it ends ({detail})")]
    Busy {
        /// The target.
        target: String,
        /// The conversation.
        locator: String,
        /// The lock error.
        detail: String,
    },
}

/// Continues `request.source` on `plugin`'s target: reuse-and-append, or create; verify; plan.
///
/// A [`Source::File`] is streamed: its reader runs on a second thread while the target's writer
/// writes ([`handoff_capability::Writer::create_streamed`]), and the verify compares what it reads back with
/// the fingerprints of what went in. Only an existing session of the conversation (to compare
/// and append to) makes the engine hold the source whole.
pub fn continue_conversation(
    plugin: &dyn Plugin,
    request: &ContinueRequest<'_>,
) -> Result<Continued, ContinueError> {
    let manifest = plugin.manifest();
    let target = manifest
        .target(request.target)
        .ok_or_else(|| PluginError::UnknownTarget {
            target: request.target.to_owned(),
        })?;
    let comparison = target.comparison();
    let mut filter = DropFilter::new(request.drop)?;
    match request.source {
        Source::Transcript(transcript) => {
            transcript.validate().map_err(PluginError::from)?;
            let kept;
            let transcript = if filter.is_empty() {
                target.check_carried(transcript)?;
                transcript
            } else {
                kept = drop_and_check(&mut filter, target, transcript.clone())?;
                &kept
            };
            let locator = request.locator.map(str::to_owned).ok_or_else(|| {
                PluginError::InvalidTranscript(
                    "a transcript continued from memory needs a locator".into(),
                )
            })?;
            let cwd = request.cwd.clone().or_else(|| transcript.cwd.clone());
            let run = Run::new(plugin, request, &comparison, locator, cwd, 0, None)?;
            let mut continued = run.continue_held(transcript)?;
            continued.dropped = filter.take_dropped();
            Ok(continued)
        }
        Source::File(file) => {
            // Every read of the source (streamed, and again for a failed verify) is as the
            // version asked for.
            let versioned = file.cli_version.and_then(|v| file.reader.reading_as(v));
            let file = SourceFile {
                reader: versioned.as_deref().unwrap_or(file.reader),
                ..file
            };
            let cwd = match &request.cwd {
                Some(cwd) => Some(cwd.clone()),
                None => file.reader.cwd(ReadFrom::File(file.target, file.path))?,
            };
            let source = StreamedSource {
                plugin,
                request,
                target,
                comparison: &comparison,
                file,
                cwd,
                rolled_back: std::cell::Cell::default(),
            };
            let filter_again = filter.fresh();
            match source.continue_from(filter, SourceRead::InOnePass) {
                // Events made before the reader confirmed its bet may not be the source's: the
                // error may be theirs. Nothing of the attempt is left (a failed write removes
                // its session), so it is run again on the source read whole, which decides.
                (Err(ContinueError::Plugin(e)), true) => {
                    tracing::debug!(error = %e, "the source read in one pass was not confirmed; reading it whole");
                    source.continue_from(filter_again, SourceRead::Whole).0
                }
                (result, _) => result,
            }
        }
    }
}

/// A source file to continue from, and how the continuation is asked.
struct StreamedSource<'a> {
    plugin: &'a dyn Plugin,
    request: &'a ContinueRequest<'a>,
    target: &'a TargetManifest,
    comparison: &'a Comparison,
    file: SourceFile<'a>,
    /// The request's cwd, else the source's.
    cwd: Option<String>,
    /// What the attempts so far rolled back of killed runs (`Run::new`): the continuation's own
    /// report, whichever attempt ends it.
    rolled_back: std::cell::Cell<Vec<Recovered>>,
}

impl StreamedSource<'_> {
    /// The continuation with the source streamed as `read` reads it, and whether it ended with
    /// events not confirmed to be the source's ([`SourceStream::unconfirmed`]).
    fn continue_from(
        &self,
        filter: DropFilter,
        read: SourceRead,
    ) -> (Result<Continued, ContinueError>, bool) {
        std::thread::scope(|scope| {
            let (file, cwd) = (self.file, self.cwd.clone());
            let (target, comparison) = (self.target, self.comparison);
            let mut stream =
                SourceStream::start(scope, file, target, comparison, cwd, filter, read);
            let result = self.continue_stream(&mut stream);
            let unconfirmed = result.is_err() && stream.unconfirmed();
            (result, unconfirmed)
        })
    }

    /// The continuation of what `stream` reads: its conversation found by its first event
    /// (unless the request names one), then locked and continued.
    fn continue_stream(&self, stream: &mut SourceStream<'_>) -> Result<Continued, ContinueError> {
        let (request, file) = (self.request, self.file);
        let (locator, source_hop, witness) = match request.locator {
            Some(locator) => (locator.to_owned(), 0, None),
            None => match stream.first()? {
                Some(first) => {
                    let identity =
                        episodes::identify_source(request.seal, file.target, file.path, &first.id);
                    tracing::debug!(conversation = %identity.conversation, witness = ?identity.witness, "the source's conversation");
                    stream.restore_errors(identity.errors);
                    (identity.conversation, identity.hop, Some(identity.witness))
                }
                None => {
                    return Err(PluginError::InvalidTranscript(format!(
                        "{}: the source session has no events",
                        file.path.display()
                    ))
                    .into())
                }
            },
        };
        let cwd = self.cwd.clone();
        let mut run = Run::new(
            self.plugin,
            request,
            self.comparison,
            locator,
            cwd,
            source_hop,
            witness,
        )?;
        run.recovered.splice(0..0, self.rolled_back.take());
        self.rolled_back.set(run.recovered.clone());
        let mut continued = run.continue_streamed(stream)?;
        continued.dropped = stream.take_dropped();
        continued.read_as = file.cli_version.map(str::to_owned);
        Ok(continued)
    }
}

/// One continuation in progress: the plugin, the request, and the conversation lock it holds.
struct Run<'a> {
    plugin: &'a dyn Plugin,
    request: &'a ContinueRequest<'a>,
    comparison: &'a Comparison,
    locator: String,
    /// The new session's working directory: the request's, else the source's.
    cwd: Option<String>,
    key: String,
    _lock: Lock,
    recovered: Vec<Recovered>,
    /// The hop that last wrote the source (0: an origin).
    source_hop: u32,
    witness: Option<Witness>,
    /// The conversation's episodes on this target the ledger records (newest first).
    recorded: Vec<Episode>,
    /// The id of the session's first event as its reader read it (the verify's read, or the
    /// episode found whole), for the ledger: never read again for it.
    first_read: std::cell::RefCell<Option<String>>,
}

impl<'a> Run<'a> {
    /// Takes the conversation lock, then rolls back what killed runs left in the store root.
    fn new(
        plugin: &'a dyn Plugin,
        request: &'a ContinueRequest<'a>,
        comparison: &'a Comparison,
        locator: String,
        cwd: Option<String>,
        source_hop: u32,
        witness: Option<Witness>,
    ) -> Result<Self, ContinueError> {
        // The one check of the cwd, the request's or the source's, before anything is locked.
        if let Some(cwd) = &cwd {
            validate_cwd(cwd).map_err(PluginError::from)?;
        }
        let name = format!("continuation\0{}\0{}", request.target, locator);
        let key = Lock::key(&name);
        let lock = Lock::acquire(request.root, &name, request.lock_wait).map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                ContinueError::Busy {
                    target: request.target.to_owned(),
                    locator: locator.clone(),
                    detail: e.to_string(),
                }
            } else {
                store_error(request.root, &e)
            }
        })?;
        tracing::debug!(phase = "locked", "took the conversation lock");
        // Before anything else: roll back what killed runs left in this store root.
        let recovered =
            recovery::recover_holding(request.root, request.seal, &[plugin], Some(&key))?;
        let recorded = episodes::of_conversation(request.root, request.seal, &locator)
            .into_iter()
            .filter(|e| e.target == request.target)
            .collect();
        Ok(Run {
            plugin,
            request,
            comparison,
            locator,
            cwd,
            key,
            _lock: lock,
            recovered,
            source_hop,
            witness,
            recorded,
            first_read: std::cell::RefCell::new(None),
        })
    }

    /// What this run's journals are for.
    fn conversation(&self) -> Conversation<'_> {
        Conversation {
            root: self.request.root,
            seal: self.request.seal,
            key: &self.key,
            target: self.request.target,
            locator: &self.locator,
        }
    }

    /// The sessions this run may extend, newest first: with `into`, that session alone; else
    /// the conversation's episodes on the target — those the sealed ledger records (unless the
    /// file's marker names another conversation: then the marker wins, and the entry is
    /// forgotten), else the newest the plugin finds by its marker. The user's own sessions are
    /// never among them.
    fn episodes(&self) -> Result<Candidates, ContinueError> {
        let request = self.request;
        let (root, target) = (request.root, request.target);
        if let Some(id) = request.into {
            let session = self.plugin.resumer().resolve(root, target, id)?;
            return Ok(Candidates {
                sessions: vec![session],
                ..Candidates::default()
            });
        }
        let mut found = Candidates::default();
        for episode in self.recorded.iter().filter(|e| !e.into) {
            let session = match self
                .plugin
                .resumer()
                .resolve(root, target, &episode.session)
            {
                Ok(session) => session,
                Err(e) => {
                    tracing::debug!(id = %episode.session, error = %e, "a recorded episode is gone");
                    found.stale.push(episode.session.clone());
                    continue;
                }
            };
            match episodes::marker_in_head(&session.path).and_then(|m| m.locator) {
                Some(other) if other != self.locator => {
                    tracing::warn!(id = %session.id, ledger = %self.locator, marker = %other,
                        "the ledger and the session's marker name different conversations; the marker wins");
                    found.stale.push(episode.session.clone());
                }
                _ => {
                    if !episode.errors.is_empty() {
                        found
                            .errors
                            .insert(session.id.clone(), episode.errors.clone());
                    }
                    found.sessions.push(session)
                }
            }
        }
        // The marker alone only when the ledger knows no episode here: a CLI that copies a
        // session natively (a fork) copies the marker too, and that copy is the person's session.
        if found.sessions.is_empty() {
            if let Some(session) = self
                .plugin
                .reader()
                .find_owned(root, target, &self.locator)?
            {
                found.sessions.push(session);
            }
        }
        Ok(found)
    }

    /// Continues a held transcript: appends to the first episode that is a prefix of it (or
    /// finds one whole), else creates one, naming the newest that diverged.
    fn continue_held(self, transcript: &Transcript) -> Result<Continued, ContinueError> {
        let candidates = self.episodes()?;
        let mut diverged: Option<(SessionRef, DivergedAt)> = None;
        let events = transcript.events.len();
        for session in candidates.sessions.iter().cloned() {
            let restored = candidates.errors_of(&session);
            let read = self
                .plugin
                .reader()
                .read(ReadFrom::Session(self.request.root, &session))
                .map(|mut current| {
                    for event in &mut current.events {
                        episodes::restore_error_flag(event, restored);
                    }
                    current
                });
            match read {
                Ok(current) => match self.comparison.prefix_of(&current, transcript) {
                    Ok(covered) if covered == events => {
                        *self.first_read.borrow_mut() =
                            current.events.first().map(|e| e.id.clone());
                        return self.finish(
                            session,
                            Action::Unchanged,
                            None,
                            events,
                            &candidates,
                            episodes::failed_calls(&transcript.events),
                        );
                    }
                    Ok(covered) => {
                        let suffix = &transcript.events[covered..];
                        self.append_verified(&session, transcript, suffix, restored)?;
                        let action = Action::Appended {
                            events: suffix.len(),
                        };
                        return self.finish(
                            session,
                            action,
                            None,
                            events,
                            &candidates,
                            episodes::failed_calls(&transcript.events),
                        );
                    }
                    Err(diff) => {
                        if self.request.into.is_some() {
                            return Err(ContinueError::NotAPrefix {
                                target: self.request.target.to_owned(),
                                id: session.id.clone(),
                                diff,
                            });
                        }
                        tracing::info!(id = %session.id, %diff, "the episode diverged");
                        if diverged.is_none() {
                            diverged = Some((session, DivergedAt::from(&*diff)));
                        }
                    }
                },
                Err(e) => {
                    if self.request.into.is_some() {
                        return Err(e.into());
                    }
                    tracing::warn!(id = %session.id, error = %e, "the episode cannot be read; it counts as diverged");
                    if diverged.is_none() {
                        let at = DivergedAt {
                            index: 0,
                            event_id: None,
                            field: format!("(it cannot be read: {e})"),
                        };
                        diverged = Some((session, at));
                    }
                }
            }
        }
        let session = self.create_verified(
            diverged.as_ref().map(|(s, _)| s),
            |options| {
                self.plugin.writer().create(
                    self.request.root,
                    self.request.target,
                    transcript,
                    options,
                )
            },
            |session| self.verify_held(session, transcript, "the new session was removed", &[]),
        )?;
        self.finish(
            session,
            Action::Created,
            diverged,
            events,
            &candidates,
            episodes::failed_calls(&transcript.events),
        )
    }

    /// Continues a streamed source: a new session is written as the source is read; an existing
    /// session of the conversation needs the source whole (to compare, then append).
    fn continue_streamed(self, stream: &mut SourceStream<'_>) -> Result<Continued, ContinueError> {
        let candidates = self.episodes()?;
        if !candidates.sessions.is_empty() {
            let transcript = stream.whole()?;
            return self.continue_held(transcript);
        }
        // The writer takes the stream on this thread; the verify reads what it writes on another
        // (`written`), then compares the fingerprints with those of what went in.
        let stream = std::cell::RefCell::new(stream);
        let watch = Arc::new(WriteWatch::default());
        let reader = self.plugin.reader();
        let target = self.request.target;
        let session = std::thread::scope(|scope| {
            let verifying = std::thread::Builder::new()
                .name("handoff-verify".into())
                .spawn_scoped(scope, || watch.read(reader, target, self.comparison))
                .expect("a thread for the verify");
            // However this ends, a reader waiting for more of the file stops.
            let _abandon = AbandonOnDrop(&watch);
            self.create_verified(
                None,
                |options| self.write_watched(&watch, &mut stream.borrow_mut(), options),
                |session| self.verify_streamed(session, &stream.borrow(), verifying.join()),
            )
        })?;
        let stream = stream.into_inner();
        let events = stream.events();
        let failed = stream.failed_calls();
        self.finish(session, Action::Created, None, events, &candidates, failed)
    }

    /// The plugin's streamed create of a new session, its file watched (`written`).
    fn write_watched(
        &self,
        watch: &Arc<WriteWatch>,
        stream: &mut SourceStream<'_>,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let request = self.request;
        let writer = self.plugin.writer();
        let session = tap::watched(watch.tap(), || {
            writer.create_streamed(request.root, request.target, stream, options)
        })?;
        if !stream.all_taken()? {
            // The plugin stopped early: what it wrote would verify against what it took.
            let _ = writer.remove(request.root, &session);
            return Err(PluginError::Other(format!(
                "{}: the writer returned before it took every event of the source",
                request.target
            )));
        }
        watch.confirm(&session);
        Ok(session)
    }

    /// The verify of a session written from a stream: what was read as it was written, if it
    /// was and agrees; else the session read whole (against the transcript, when the writer
    /// asked for it whole).
    fn verify_streamed(
        &self,
        session: &SessionRef,
        stream: &SourceStream<'_>,
        read: std::thread::Result<ReadWritten>,
    ) -> Result<(), ContinueError> {
        let undo = "the new session was removed";
        if let Some(transcript) = stream.held() {
            return self.verify_held(session, transcript, undo, &[]);
        }
        match read {
            Ok(ReadWritten::Read(prints, first)) if prints == *stream.fingerprints() => {
                tracing::debug!(phase = "verified", "read back as it was written");
                *self.first_read.borrow_mut() = first;
                return Ok(());
            }
            Ok(ReadWritten::Read(..)) => {
                tracing::warn!("the session read as it was written differs; reading it again whole")
            }
            Ok(ReadWritten::NotRead(why)) => {
                tracing::debug!(%why, "the session was not read as it was written")
            }
            Err(_) => tracing::warn!("the verify's thread panicked; reading the session whole"),
        }
        self.verify_fingerprints(session, stream, undo)
    }

    fn finish(
        self,
        session: SessionRef,
        action: Action,
        diverged: Option<(SessionRef, DivergedAt)>,
        events: usize,
        candidates: &Candidates,
        failed: Vec<String>,
    ) -> Result<Continued, ContinueError> {
        let plan = self
            .plugin
            .resumer()
            .plan(self.request.root, &session, self.request.prompt)?;
        let hop = self.record(&session, &action, events, candidates, failed);
        let (diverged_from, diverged_at) = diverged.unzip();
        Ok(Continued {
            session,
            action,
            diverged_from,
            diverged_at,
            hop,
            witness: self.witness,
            plan,
            recovered: self.recovered,
            locator: self.locator,
            events,
            dropped: Vec::new(),
            read_as: None,
        })
    }

    /// Records the session as the conversation's episode on this target in the ledger, and
    /// returns this hop's number: one more than any hop the source or the target's episodes
    /// recorded (an unchanged episode keeps its own). A ledger that cannot be written is named in
    /// a warning: the session is verified and committed, and its marker still names the
    /// conversation.
    fn record(
        &self,
        session: &SessionRef,
        action: &Action,
        events: usize,
        candidates: &Candidates,
        failed: Vec<String>,
    ) -> u32 {
        let request = self.request;
        let previous = self.recorded.iter().find(|e| e.session == session.id);
        let newest = self.recorded.iter().map(|e| e.hop).max().unwrap_or(0);
        let hop = match (action, previous) {
            (Action::Unchanged, Some(episode)) => episode.hop,
            _ => self.source_hop.max(newest) + 1,
        };
        let Some(path) = episodes::relative_path(request.root, &session.path) else {
            tracing::warn!(path = %session.path.display(), "the session is not inside the store root; not recorded as an episode");
            return hop;
        };
        let first_event = self.first_read.borrow_mut().take();
        let episode = Episode {
            target: request.target.to_owned(),
            session: session.id.clone(),
            path,
            first_event,
            hop,
            events,
            updated_ms: chrono::Utc::now().timestamp_millis(),
            into: request.into.is_some(),
            errors: failed,
        };
        if let Err(e) = episodes::record(
            request.root,
            request.seal,
            &self.locator,
            &self.key,
            episode,
            &candidates.stale,
        ) {
            tracing::warn!(root = %request.root.path().display(), error = %e, "cannot record the episode in the ledger");
        }
        hop
    }

    /// Creates the session under a journal with `write`, checks it with `verify`, and removes it
    /// on any failure.
    fn create_verified(
        &self,
        previous: Option<&SessionRef>,
        write: impl FnOnce(&CreateOptions) -> Result<SessionRef, PluginError>,
        verify: impl FnOnce(&SessionRef) -> Result<(), ContinueError>,
    ) -> Result<SessionRef, ContinueError> {
        let request = self.request;
        let options = CreateOptions {
            cwd: self.cwd.clone(),
            locator: Some(self.locator.clone()),
        };
        let root = request.root;
        let mut journal =
            Journal::begin_create(self.conversation(), previous.map(|s| s.id.as_str()))
                .map_err(|e| store_error(root, &e))?;
        tracing::debug!(phase = "journaled", "journal written: creating");
        let session = match write(&options) {
            Ok(session) => session,
            Err(e) => {
                // The plugin removed what it began; the journal goes (or stays, for the next run).
                if let Err(discard) = journal.discard() {
                    tracing::error!(error = %discard, "cannot remove the journal of a failed create");
                }
                return Err(e.into());
            }
        };
        tracing::debug!(phase = "written", id = %session.id, "the plugin created the session");
        let outcome = journal
            .created(&session)
            .map_err(|e| store_error(root, &e))
            .and_then(|()| verify(&session));
        match outcome {
            Ok(()) => {
                journal.commit().map_err(|e| store_error(root, &e))?;
                tracing::debug!(phase = "committed", "journal deleted");
                Ok(session)
            }
            Err(e) => {
                match self.plugin.writer().remove(root, &session) {
                    Ok(()) => {
                        if let Err(discard) = journal.discard() {
                            tracing::error!(error = %discard, "cannot remove the journal of an undone create");
                        }
                    }
                    Err(remove) => {
                        tracing::error!(id = %session.id, error = %remove, "could not remove the session this run created; the next run will")
                    }
                }
                Err(e)
            }
        }
    }

    /// Appends `suffix` (the end of `transcript`) under a journal, reads back, and on any
    /// failure puts the file's exact previous bytes back.
    fn append_verified(
        &self,
        session: &SessionRef,
        transcript: &Transcript,
        suffix: &[handoff_transcript::Event],
        restored: &[String],
    ) -> Result<(), ContinueError> {
        let request = self.request;
        let root = request.root;
        let journal = Journal::begin_append(self.conversation(), session)
            .map_err(|e| store_error(root, &e))?;
        tracing::debug!(phase = "journaled", "journal written: appending");
        let outcome = self
            .plugin
            .writer()
            .append(root, session, suffix)
            .map_err(ContinueError::from)
            .and_then(|_| {
                tracing::debug!(phase = "written", "the plugin appended");
                self.verify_held(
                    session,
                    transcript,
                    "the session's previous bytes were restored",
                    restored,
                )
            });
        match outcome {
            Ok(()) => {
                journal.commit().map_err(|e| store_error(root, &e))?;
                tracing::debug!(phase = "committed", "journal deleted");
                Ok(())
            }
            Err(mut e) => {
                let journal_path = journal.path();
                if let Err(restore) = journal.roll_back() {
                    tracing::error!(path = %session.path.display(), error = %restore, "could not restore the session; the next run will (journal {})", journal_path.display());
                    if let ContinueError::Mismatch { undo, .. } = &mut e {
                        *undo = format!(
                            "its previous bytes could not be restored yet: {restore}; the next run restores them"
                        );
                    }
                }
                Err(e)
            }
        }
    }

    /// Reads `session` back event by event and compares it with the whole transcript, so a long
    /// session is never held twice.
    fn verify_held(
        &self,
        session: &SessionRef,
        transcript: &Transcript,
        undo: &str,
        restored: &[String],
    ) -> Result<(), ContinueError> {
        let request = self.request;
        let mut verifier = self.comparison.verifier(transcript);
        let mut first = None;
        read_back(self.plugin.reader(), request.root, session, |mut event| {
            if first.is_none() {
                first = Some(event.id.clone());
            }
            episodes::restore_error_flag(&mut event, restored);
            verifier.push(&event)
        })?;
        *self.first_read.borrow_mut() = first;
        tracing::debug!(phase = "verified", "read back");
        verifier
            .finish()
            .map_err(|diff| self.mismatch(session, diff, undo))
    }

    /// Reads `session` back event by event and compares each event's fingerprint with that of
    /// the event the stream handed the writer. A difference is then located field by field
    /// against the source read again (the fingerprints only say where).
    fn verify_fingerprints(
        &self,
        session: &SessionRef,
        stream: &SourceStream<'_>,
        undo: &str,
    ) -> Result<(), ContinueError> {
        let request = self.request;
        let expected = stream.fingerprints();
        let mut fingerprinter = Fingerprinter::new(self.comparison);
        let mut read = PrintChain::default();
        let mut first = None;
        read_back(self.plugin.reader(), request.root, session, |event| {
            if first.is_none() {
                first = Some(event.id.clone());
            }
            if let Some(fingerprint) = fingerprinter.push(&event) {
                read.push(fingerprint);
            }
            true
        })?;
        tracing::debug!(phase = "verified", "read back");
        let Some(at) = expected.first_difference(&read) else {
            *self.first_read.borrow_mut() = first;
            return Ok(());
        };
        let at = usize::try_from(at).unwrap_or(usize::MAX);
        tracing::warn!(
            from_event = at,
            "the session read back differs from what was written; locating the difference"
        );
        let source = stream.read_again()?;
        let located = self.verify_held(session, &source, undo, &[]);
        Err(match located {
            Err(e) => e,
            // The source changed since it was streamed: say where the fingerprints differ.
            Ok(()) => self.mismatch(
                session,
                Box::new(Difference {
                    index: at,
                    left_id: None,
                    right_id: None,
                    field: "(event)".into(),
                    left: format!(
                        "the events as they were written (a difference at or after event {at})"
                    ),
                    right: "another event (the source has changed since, so the fields cannot be named)"
                        .into(),
                }),
                undo,
            ),
        })
    }

    fn mismatch(&self, session: &SessionRef, diff: Box<Difference>, undo: &str) -> ContinueError {
        ContinueError::Mismatch {
            target: self.request.target.to_owned(),
            id: session.id.clone(),
            diff,
            undo: undo.to_owned(),
        }
    }
}

/// The sessions a run may extend, and the ledger's entries found stale.
#[derive(Default)]
struct Candidates {
    sessions: Vec<SessionRef>,
    /// The failed calls the ledger recorded for each session (by id), put back as it is read.
    errors: std::collections::HashMap<String, Vec<String>>,
    /// Recorded episodes that are gone or whose marker names another conversation.
    stale: Vec<String>,
}

impl Candidates {
    fn errors_of(&self, session: &SessionRef) -> &[String] {
        self.errors.get(&session.id).map_or(&[], Vec::as_slice)
    }
}

/// Abandons the watch when dropped: a verify thread waiting for bytes of a write that will
/// never come stops.
struct AbandonOnDrop<'w>(&'w WriteWatch);

impl Drop for AbandonOnDrop<'_> {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

/// An I/O failure in the store root, said plainly (read-only, full, no permission) with the path.
fn store_error(root: &StoreRoot, e: &std::io::Error) -> ContinueError {
    use std::io::ErrorKind;
    let message = match e.kind() {
        ErrorKind::ReadOnlyFilesystem => format!("it is read-only ({e})"),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => format!("no space left ({e})"),
        ErrorKind::PermissionDenied => format!("no permission to write ({e})"),
        _ => e.to_string(),
    };
    ContinueError::Store {
        root: root.path().to_owned(),
        message,
    }
}
