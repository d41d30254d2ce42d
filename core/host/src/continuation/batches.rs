//! A reader run on a thread of its own, its events handed to the caller's thread in batches over
//! a bounded channel: reading (on the reader's thread) and what the caller does with each event
//! (write, check, fingerprint, drop) overlap on two cores. A plugin file's batches cross still
//! encoded and are decoded on the caller's thread ([`EventBatch`]), so the reading thread does no
//! more than the plugin's reading.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::Scope;

use handoff_capability::{EventBatch, PluginError, ReadFrom, Reader, SessionRef};
use handoff_store::StoreRoot;
use handoff_transcript::Event;

/// Batches in flight: the reader runs at most this far ahead of the caller.
const IN_FLIGHT: usize = 4;

enum Message {
    Batch(EventBatch),
    End(Result<(), PluginError>),
}

/// The events of a reader running on another thread (see [`Batches::spawn`]).
pub(super) struct Batches {
    /// `None` once the reader was told to stop.
    events: Option<Receiver<Message>>,
    batch: std::vec::IntoIter<Event>,
    ended: bool,
    /// What is read, for the error of a reader thread that ended without a result.
    what: String,
}

/// Who reads on the thread, for errors: the plugin's target, its method, and what it reads.
pub(super) struct ReaderName<'a> {
    pub(super) target: &'a str,
    pub(super) method: &'static str,
    pub(super) what: String,
}

impl Batches {
    /// Runs `read` on a thread of `scope` named `thread`, its batches handed to
    /// [`Batches::next`]. A panic in `read` is the error of the reader's method; a reader whose
    /// receiver is gone is told to stop at its next batch.
    pub(super) fn spawn<'scope, F>(
        scope: &'scope Scope<'scope, '_>,
        thread: &str,
        reader: ReaderName<'scope>,
        read: F,
    ) -> Batches
    where
        F: FnOnce(&mut dyn FnMut(EventBatch) -> bool) -> Result<(), PluginError> + Send + 'scope,
    {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let (target, method) = (reader.target, reader.method);
        std::thread::Builder::new()
            .name(thread.into())
            .spawn_scoped(scope, move || send_all(target, method, read, tx))
            .expect("a thread for a reader");
        Batches {
            events: Some(rx),
            batch: Vec::new().into_iter(),
            ended: false,
            what: reader.what,
        }
    }

    /// The next event from the reader thread; `None` at its end, its error if it failed (or a
    /// batch of it did not decode).
    pub(super) fn next(&mut self) -> Result<Option<Event>, PluginError> {
        loop {
            if let Some(event) = self.batch.next() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            let Some(events) = &self.events else {
                return Err(PluginError::Other(format!(
                    "{}: the reader was stopped; its stream is over",
                    self.what
                )));
            };
            match events.recv() {
                Ok(Message::Batch(batch)) => match batch.into_events() {
                    Ok(events) => self.batch = events.into_iter(),
                    Err(e) => {
                        self.stop();
                        self.ended = true;
                        return Err(e);
                    }
                },
                Ok(Message::End(result)) => {
                    self.ended = true;
                    result?;
                }
                Err(_) => {
                    self.ended = true;
                    return Err(PluginError::Other(format!(
                        "{}: the reader stopped without a result",
                        self.what
                    )));
                }
            }
        }
    }

    /// Tells the reader thread to stop (at its next batch) and drops what it sent.
    pub(super) fn stop(&mut self) {
        self.events = None;
        self.batch = Vec::new().into_iter();
    }
}

/// Runs `read`, sending its batches until it ends or the receiver is gone.
fn send_all(
    target: &str,
    method: &'static str,
    read: impl FnOnce(&mut dyn FnMut(EventBatch) -> bool) -> Result<(), PluginError>,
    tx: SyncSender<Message>,
) {
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        read(&mut |batch| tx.send(Message::Batch(batch)).is_ok())
    }));
    let result =
        read.unwrap_or_else(|payload| Err(PluginError::panicked(target, method, &*payload)));
    let _ = tx.send(Message::End(result));
}

/// Runs `read` on a thread of its own named `thread` and hands each event to `consume` on this
/// one, until `consume` returns `false` or the reader ends: the reading and what is done with
/// each event overlap (and a plugin file's batches are decoded here, not on the reader's thread).
pub(super) fn read_beside<F>(
    thread: &str,
    reader: ReaderName<'_>,
    read: F,
    mut consume: impl FnMut(Event) -> bool,
) -> Result<(), PluginError>
where
    F: FnOnce(&mut dyn FnMut(EventBatch) -> bool) -> Result<(), PluginError> + Send,
{
    std::thread::scope(|scope| {
        let mut events = Batches::spawn(scope, thread, reader, read);
        while let Some(event) = events.next()? {
            if !consume(event) {
                events.stop();
                break;
            }
        }
        Ok(())
    })
}

/// Reads `session` back with `reader` beside the caller, which compares (see [`read_beside`]).
pub(super) fn read_back(
    reader: &dyn Reader,
    root: &StoreRoot,
    session: &SessionRef,
    consume: impl FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let name = ReaderName {
        target: &session.target,
        method: "read_each",
        what: session.path.display().to_string(),
    };
    read_beside(
        "handoff-verify",
        name,
        |sink| {
            reader
                .read_batches(ReadFrom::Session(root, session), sink)
                .map(drop)
        },
        consume,
    )
}
