//! The continuation engine: continue a conversation on a target, natively, verified, by its id.
//!
//! The native store is the ledger; there is no side database. For a conversation locator the
//! engine finds the newest session the plugin marked with it; if that session's transcript is an
//! exact prefix of the canonical one, it appends the missing suffix and resumes the same native id;
//! otherwise it creates a new session. Every write is read back and compared; any mismatch fails
//! closed: a created session is removed, an appended one gets its exact previous bytes back.
//!
//! Every write is journaled first ([`crate::store::journal`]): a run killed at any point leaves a
//! hot journal, and the next run that opens the store root rolls it back ([`recover`]) before it
//! does anything else, so a session always has its old bytes or its complete new ones.

mod recovery;

use std::path::PathBuf;
use std::time::Duration;

pub use recovery::{recover, Recovered};

use crate::capability::{CreateOptions, Plugin, PluginError, ResumePlan, SessionRef};
use crate::store::journal::Journal;
use crate::store::lock::Lock;
use crate::store::{validate_cwd, StoreRoot};
use crate::transcript::{Comparison, Difference, Transcript};

/// What to continue, and where.
#[derive(Clone, Debug)]
pub struct ContinueRequest<'a> {
    /// The whole conversation, canonical.
    pub transcript: &'a Transcript,
    /// A stable name for the conversation (the same on every continuation of it).
    pub locator: &'a str,
    /// The target name.
    pub target: &'a str,
    /// The target's store root.
    pub root: &'a StoreRoot,
    /// The working directory for a new session (defaults to the transcript's).
    pub cwd: Option<String>,
    /// The prompt the resume plan carries.
    pub prompt: &'a str,
    /// How long to wait for another continuation of the same conversation to finish.
    pub lock_wait: Duration,
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
    /// How to resume it.
    pub plan: ResumePlan,
    /// What this run rolled back first: writes of killed runs it found in the store root.
    pub recovered: Vec<Recovered>,
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

/// Continues `request.transcript` on `plugin`'s target: reuse-and-append, or create; verify; plan.
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
    request.transcript.validate().map_err(PluginError::from)?;
    target.check_carried(request.transcript)?;
    if let Some(cwd) = &request.cwd {
        validate_cwd(cwd).map_err(PluginError::from)?;
    }
    let comparison = target.comparison();

    let name = format!("continuation\0{}\0{}", request.target, request.locator);
    let key = Lock::key(&name);
    let _lock = Lock::acquire(request.root, &name, request.lock_wait).map_err(|e| {
        if e.kind() == std::io::ErrorKind::WouldBlock {
            ContinueError::Busy {
                target: request.target.to_owned(),
                locator: request.locator.to_owned(),
                detail: e.to_string(),
            }
        } else {
            store_error(request.root, &e)
        }
    })?;
    tracing::debug!(phase = "locked", "took the conversation lock");
    // Before anything else: roll back what killed runs left in this store root.
    let recovered = recovery::recover_holding(request.root, &[plugin], Some(&key))?;
    let run = Run {
        plugin,
        request,
        comparison: &comparison,
        key: &key,
    };

    let existing = plugin
        .reader()
        .find_owned(request.root, request.target, request.locator)?;

    let mut diverged_from = None;
    if let Some(session) = existing {
        match plugin.reader().read(request.root, &session) {
            Ok(current) => match comparison.prefix_of(&current, request.transcript) {
                Ok(covered) if covered == request.transcript.events.len() => {
                    return run.finish(session, Action::Unchanged, None, recovered);
                }
                Ok(covered) => {
                    let suffix = &request.transcript.events[covered..];
                    run.append_verified(&session, suffix)?;
                    let action = Action::Appended {
                        events: suffix.len(),
                    };
                    return run.finish(session, action, None, recovered);
                }
                Err(diff) => {
                    tracing::info!(id = %session.id, %diff, "the existing session diverged; creating a new one");
                    diverged_from = Some(session);
                }
            },
            Err(e) => {
                tracing::warn!(id = %session.id, error = %e, "the existing session cannot be read; creating a new one");
                diverged_from = Some(session);
            }
        }
    }

    let session = run.create_verified(diverged_from.as_ref())?;
    run.finish(session, Action::Created, diverged_from, recovered)
}

/// One continuation in progress: the plugin, the request, and the conversation lock it holds.
struct Run<'a> {
    plugin: &'a dyn Plugin,
    request: &'a ContinueRequest<'a>,
    comparison: &'a Comparison,
    key: &'a str,
}

impl Run<'_> {
    fn finish(
        &self,
        session: SessionRef,
        action: Action,
        diverged_from: Option<SessionRef>,
        recovered: Vec<Recovered>,
    ) -> Result<Continued, ContinueError> {
        let plan = self
            .plugin
            .resumer()
            .plan(self.request.root, &session, self.request.prompt)?;
        Ok(Continued {
            session,
            action,
            diverged_from,
            plan,
            recovered,
        })
    }

    /// Creates the session under a journal, reads it back, and removes it on any failure.
    fn create_verified(&self, previous: Option<&SessionRef>) -> Result<SessionRef, ContinueError> {
        let request = self.request;
        let cwd = request
            .cwd
            .clone()
            .or_else(|| request.transcript.cwd.clone());
        if let Some(cwd) = &cwd {
            validate_cwd(cwd).map_err(PluginError::from)?;
        }
        let options = CreateOptions {
            cwd,
            locator: Some(request.locator.to_owned()),
        };
        let root = request.root;
        let mut journal = Journal::begin_create(
            root,
            self.key,
            request.target,
            request.locator,
            previous.map(|s| s.id.as_str()),
        )
        .map_err(|e| store_error(root, &e))?;
        tracing::debug!(phase = "journaled", "journal written: creating");
        let session = match self.plugin.writer().create(
            root,
            request.target,
            request.transcript,
            &options,
        ) {
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
            .and_then(|()| self.verify(&session, "the new session was removed"));
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

    /// Appends `suffix` under a journal, reads back, and on any failure puts the file's exact
    /// previous bytes back.
    fn append_verified(
        &self,
        session: &SessionRef,
        suffix: &[crate::transcript::Event],
    ) -> Result<(), ContinueError> {
        let request = self.request;
        let root = request.root;
        let journal =
            Journal::begin_append(root, self.key, request.target, request.locator, session)
                .map_err(|e| store_error(root, &e))?;
        tracing::debug!(phase = "journaled", "journal written: appending");
        let outcome = self
            .plugin
            .writer()
            .append(root, session, suffix)
            .map_err(ContinueError::from)
            .and_then(|_| {
                tracing::debug!(phase = "written", "the plugin appended");
                self.verify(session, "the session's previous bytes were restored")
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
    fn verify(&self, session: &SessionRef, undo: &str) -> Result<(), ContinueError> {
        let request = self.request;
        let mut verifier = self.comparison.verifier(request.transcript);
        self.plugin
            .reader()
            .read_each(request.root, session, &mut |event| verifier.push(&event))?;
        tracing::debug!(phase = "verified", "read back");
        verifier.finish().map_err(|diff| ContinueError::Mismatch {
            target: request.target.to_owned(),
            id: session.id.clone(),
            diff,
            undo: undo.to_owned(),
        })
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
