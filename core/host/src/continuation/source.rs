//! A source session streamed into a target's writer: the source's reader runs on a thread of its
//! own and hands its events over a bounded channel, so reading the source and writing the target
//! overlap and neither side ever holds the conversation whole.
//!
//! Every event is checked on its way to the writer (the transcript rules, one event at a time, and
//! the parts the target carries) and fingerprinted as the target's comparison sees it: the verify
//! compares the session read back with those fingerprints instead of a held transcript.
//!
//! The source is first read **as a file already written** ([`SourceRead::InOnePass`]): a reader
//! that reads a growing file in one pass reads it so (Claude Code's makes each record's events as
//! its index pass reads the line, betting that Claude Code's walk of the file is its file order).
//! Such events count only once the read reached its end, where the reader checks its bet: until
//! then they may not be the source's ([`SourceStream::unconfirmed`]), and a continuation that
//! fails before is run again on the source read whole (the engine's, `continuation.rs`).
//!
//! Kinds the continuation was asked to drop (`--drop`) are taken out of each event after the
//! transcript rules checked the source's event and before the target's check and the
//! fingerprint ([`DropFilter`]): what is written, checked and verified is the source minus what
//! was dropped, and each dropped item is recorded for the report.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::batches::{Batches, ReaderName};
use super::whole_file::WholeFile;
use handoff_capability::manifest::TargetManifest;
use handoff_capability::{EventBatch, EventStream, PluginError, ReadFrom, ReadOutcome, Reader};
use handoff_transcript::{
    Body, Comparison, DropFilter, Dropped, Event, Fingerprinter, IdDigest, PrintChain, Transcript,
    Validator,
};

/// A session file to continue from, read by its own plugin's reader.
#[derive(Clone, Copy)]
pub struct SourceFile<'a> {
    /// The source plugin's reader.
    pub reader: &'a dyn Reader,
    /// The source target, e.g. `claude-code`.
    pub target: &'a str,
    /// The session file.
    pub path: &'a Path,
    /// The version of the source's CLI to read it as ([`Reader::reading_as`]; a host chooses
    /// it with [`crate::installed::ReadAs`]): `None`, as the reader reads by default.
    pub cli_version: Option<&'a str>,
}

/// How the source's reader reads it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SourceRead {
    /// As a file already written, where the reader can (else whole).
    InOnePass,
    /// Whole ([`ReadFrom::File`]).
    Whole,
}

/// The source's events as the target's writer takes them (see the module docs).
pub(super) struct SourceStream<'a> {
    file: SourceFile<'a>,
    /// The reader thread's events.
    events: Batches,
    /// Whether the reader reads the source as a file already written (set by the reader's thread
    /// to `false` once it reads it whole instead).
    in_one_pass: Arc<AtomicBool>,
    /// Whether the reader thread ended its read without an error.
    read_to_end: bool,
    /// The first event, taken early for the conversation's locator.
    peeked: Option<Event>,
    /// Source events taken from the reader thread (dropped ones included).
    taken: usize,
    /// Events handed to the writer.
    passed: usize,
    /// What the continuation was asked to drop, and what it dropped so far.
    filter: DropFilter,
    target: &'a TargetManifest,
    validator: Validator<IdDigest>,
    fingerprinter: Fingerprinter<'a>,
    /// What went in, folded (16 bytes, and 16 per 4,096 events).
    fingerprints: PrintChain,
    /// The source's cwd, for a transcript built whole.
    cwd: Option<String>,
    /// The whole transcript, once a writer asked for it.
    held: Option<Transcript>,
    /// The failed calls the ledger recorded for the source episode, whose file may have lost
    /// their flags (a native rewrite): put back as events are read.
    restored_errors: Vec<String>,
    /// The call ids of the failed tool results handed out.
    failed: Vec<String>,
}

impl<'a> SourceStream<'a> {
    /// Starts reading `file` on a thread of `scope`.
    pub(super) fn start<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        file: SourceFile<'a>,
        target: &'a TargetManifest,
        comparison: &'a Comparison,
        cwd: Option<String>,
        filter: DropFilter,
        read: SourceRead,
    ) -> Self
    where
        'a: 'scope,
    {
        let name = ReaderName {
            target: file.target,
            method: "read_batches",
            what: file.path.display().to_string(),
        };
        let in_one_pass = Arc::new(AtomicBool::new(read == SourceRead::InOnePass));
        let reading = Arc::clone(&in_one_pass);
        let events = Batches::spawn(scope, "handoff-source", name, move |sink| {
            if reading.load(Ordering::Relaxed) && read_in_one_pass(file, sink)? {
                return Ok(());
            }
            reading.store(false, Ordering::Relaxed);
            file.reader
                .read_batches(ReadFrom::File(file.target, file.path), sink)
                .map(drop)
        });
        SourceStream {
            file,
            events,
            in_one_pass,
            read_to_end: false,
            peeked: None,
            taken: 0,
            passed: 0,
            filter,
            target,
            validator: Validator::with_capacity(0),
            fingerprinter: Fingerprinter::new(comparison),
            fingerprints: PrintChain::default(),
            cwd,
            held: None,
            restored_errors: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// Puts back the error flags the ledger recorded for the source (see `episodes`).
    pub(super) fn restore_errors(&mut self, errors: Vec<String>) {
        if let Some(event) = &mut self.peeked {
            crate::episodes::restore_error_flag(event, &errors);
        }
        self.restored_errors = errors;
    }

    /// The call ids of the failed tool results written (all of them, once every event was
    /// taken).
    pub(super) fn failed_calls(&self) -> Vec<String> {
        match &self.held {
            Some(t) => crate::episodes::failed_calls(&t.events),
            None => self.failed.clone(),
        }
    }

    /// The first event, without taking it.
    pub(super) fn first(&mut self) -> Result<Option<&Event>, PluginError> {
        if self.peeked.is_none() && self.taken == 0 {
            self.peeked = self.pull()?;
        }
        Ok(self.peeked.as_ref())
    }

    /// The next event from the reader thread, unchecked.
    fn pull(&mut self) -> Result<Option<Event>, PluginError> {
        let mut next = self.events.next()?;
        match &mut next {
            Some(event) => crate::episodes::restore_error_flag(event, &self.restored_errors),
            None => self.read_to_end = true,
        }
        Ok(next)
    }

    /// Whether the events handed out may not be the source's: they were read in one pass by a
    /// reader that had not yet reached the end of the file, where it checks its bet. A
    /// continuation that failed so is to be run again on the source read whole.
    pub(super) fn unconfirmed(&self) -> bool {
        self.in_one_pass.load(Ordering::Relaxed) && !self.read_to_end && self.held.is_none()
    }

    /// Whether the writer took every event (or the whole transcript): a writer that returns
    /// early would leave a session that verifies against what it took, yet lacks the rest.
    pub(super) fn all_taken(&mut self) -> Result<bool, PluginError> {
        if self.held.is_some() {
            return Ok(true);
        }
        Ok(self.peeked.is_none() && self.pull()?.is_none())
    }

    /// The fingerprints of the events handed out, in order (see [`Fingerprinter`]).
    pub(super) fn fingerprints(&self) -> &PrintChain {
        &self.fingerprints
    }

    /// The whole transcript, if a writer asked for it.
    pub(super) fn held(&self) -> Option<&Transcript> {
        self.held.as_ref()
    }

    /// How many events were written (the source's, less those dropped whole), once all were
    /// taken.
    pub(super) fn events(&self) -> usize {
        self.held.as_ref().map_or(self.passed, |t| t.events.len())
    }

    /// What was dropped from the source (all of it, once every event was taken).
    pub(super) fn take_dropped(&mut self) -> Vec<Dropped> {
        self.filter.take_dropped()
    }

    /// The source read whole, for a verify that failed: its events as read now, less the
    /// dropped kinds (as they were written).
    pub(super) fn read_again(&self) -> Result<Transcript, PluginError> {
        let source = self.read_source_again()?;
        Ok(self.filter.fresh().apply_all(source))
    }

    /// The source read whole again, as it is.
    fn read_source_again(&self) -> Result<Transcript, PluginError> {
        let mut transcript = self
            .file
            .reader
            .read(ReadFrom::File(self.file.target, self.file.path))?;
        for event in &mut transcript.events {
            crate::episodes::restore_error_flag(event, &self.restored_errors);
        }
        Ok(transcript)
    }
}

impl EventStream for SourceStream<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        if self.held.is_some() {
            return Err(PluginError::Other(
                "next_event after whole: the writer already has the whole transcript".into(),
            ));
        }
        loop {
            let next = match self.peeked.take() {
                Some(event) => Some(event),
                None => self.pull()?,
            };
            let Some(event) = next else {
                return Ok(None);
            };
            let index = self.taken;
            self.taken += 1;
            // The source's rules hold for the source's events; the target sees what is left.
            self.validator.push(&event).map_err(PluginError::from)?;
            let Some(event) = self.filter.apply(index, event) else {
                continue;
            };
            self.target.check_carried_event(index, &event)?;
            if let Some(print) = self.fingerprinter.push(&event) {
                self.fingerprints.push(print);
            }
            self.passed += 1;
            super::progress::events(self.passed as u64);
            if let Body::ToolResult {
                call_id,
                is_error: true,
                ..
            } = &event.body
            {
                self.failed.push(call_id.clone());
            }
            return Ok(Some(event));
        }
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        if self.held.is_none() {
            let mut transcript = if self.taken == 0 {
                // Nothing reached the writer yet: what is streamed is the transcript.
                let mut events: Vec<Event> = self.peeked.take().into_iter().collect();
                while let Some(event) = self.pull()? {
                    events.push(event);
                }
                self.taken = events.len();
                Transcript::new(events)
            } else {
                // Events were taken and dropped: stop the reader thread and read afresh.
                tracing::debug!(
                    taken = self.taken,
                    "the writer asked for the whole transcript; reading the source again"
                );
                self.events.stop();
                self.read_source_again()?
            };
            if transcript.cwd.is_none() {
                transcript.cwd = self.cwd.clone();
            }
            transcript.validate()?;
            // What was dropped from events taken before is dropped again, and recorded once.
            self.filter = self.filter.fresh();
            let transcript = drop_and_check(&mut self.filter, self.target, transcript)?;
            self.held = Some(transcript);
        }
        Ok(self.held.as_ref().expect("held just now"))
    }
}

/// Reads `file` as a file already written, its batches to `sink`: `false` if its reader reads
/// only whole files (and read nothing).
fn read_in_one_pass(
    file: SourceFile<'_>,
    sink: &mut dyn FnMut(EventBatch) -> bool,
) -> Result<bool, PluginError> {
    let Ok(whole) = WholeFile::open(file.path) else {
        // The whole read names what is wrong with the file.
        return Ok(false);
    };
    let mut sent = false;
    let outcome =
        file.reader
            .read_batches(ReadFrom::Written(file.target, &whole), &mut |batch| {
                sent = true;
                sink(batch)
            })?;
    match outcome {
        ReadOutcome::Read => Ok(true),
        ReadOutcome::NotSupported if !sent => Ok(false),
        // Read again whole, what it sent would be handed on twice.
        ReadOutcome::NotSupported => Err(PluginError::Other(format!(
            "{}: the reader declined to read the file as written after it sent events of it",
            file.path.display()
        ))),
    }
}

/// `transcript` without the kinds `filter` drops, each event left checked against what `target`
/// carries (named by its index in the source).
pub(super) fn drop_and_check(
    filter: &mut DropFilter,
    target: &TargetManifest,
    transcript: Transcript,
) -> Result<Transcript, PluginError> {
    let Transcript {
        schema,
        cwd,
        events,
    } = transcript;
    let mut kept = Vec::with_capacity(events.len());
    for (index, event) in events.into_iter().enumerate() {
        if let Some(event) = filter.apply(index, event) {
            target.check_carried_event(index, &event)?;
            kept.push(event);
        }
    }
    Ok(Transcript {
        schema,
        cwd,
        events: kept,
    })
}
