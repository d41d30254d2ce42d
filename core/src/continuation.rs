//! The continuation engine: continue a conversation on a target, natively, verified, by its id.
//!
//! The native store is the ledger; there is no side database. For a conversation locator the
//! engine finds the newest session the plugin marked with it; if that session's transcript is an
//! exact prefix of the canonical one, it appends the missing suffix and resumes the same native id;
//! otherwise it creates a new session. Every write is read back and compared; any mismatch fails
//! closed: a created session is removed, an appended one gets its exact previous bytes back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::capability::{CreateOptions, Plugin, PluginError, ResumePlan, SessionRef};
use crate::store::lock::Lock;
use crate::store::StoreRoot;
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
    let comparison = target.comparison();

    let _lock = Lock::acquire(
        request.root,
        &format!("continuation\0{}\0{}", request.target, request.locator),
        request.lock_wait,
    )
    .map_err(|e| ContinueError::Busy {
        target: request.target.to_owned(),
        locator: request.locator.to_owned(),
        detail: e.to_string(),
    })?;

    let existing = plugin
        .reader()
        .find_owned(request.root, request.target, request.locator)?;

    let mut diverged_from = None;
    if let Some(session) = existing {
        match plugin.reader().read(request.root, &session) {
            Ok(current) => match comparison.prefix_of(&current, request.transcript) {
                Ok(covered) if covered == request.transcript.events.len() => {
                    return finish(plugin, request, session, Action::Unchanged, None);
                }
                Ok(covered) => {
                    let suffix = &request.transcript.events[covered..];
                    append_verified(plugin, request, &session, suffix, &comparison)?;
                    let action = Action::Appended {
                        events: suffix.len(),
                    };
                    return finish(plugin, request, session, action, None);
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

    let options = CreateOptions {
        cwd: request
            .cwd
            .clone()
            .or_else(|| request.transcript.cwd.clone()),
        locator: Some(request.locator.to_owned()),
    };
    let session =
        plugin
            .writer()
            .create(request.root, request.target, request.transcript, &options)?;
    let verified = verify(
        plugin,
        request,
        &session,
        &comparison,
        "the new session was removed",
    );
    if let Err(e) = verified {
        if let Err(remove) = plugin.writer().remove(request.root, &session) {
            tracing::error!(id = %session.id, error = %remove, "could not remove the session this run created");
        }
        return Err(e);
    }
    finish(plugin, request, session, Action::Created, diverged_from)
}

fn finish(
    plugin: &dyn Plugin,
    request: &ContinueRequest<'_>,
    session: SessionRef,
    action: Action,
    diverged_from: Option<SessionRef>,
) -> Result<Continued, ContinueError> {
    let plan = plugin
        .resumer()
        .plan(request.root, &session, request.prompt)?;
    Ok(Continued {
        session,
        action,
        diverged_from,
        plan,
    })
}

/// Appends `suffix`, reads back, and on any failure puts the file's exact previous bytes back.
fn append_verified(
    plugin: &dyn Plugin,
    request: &ContinueRequest<'_>,
    session: &SessionRef,
    suffix: &[crate::transcript::Event],
    comparison: &Comparison,
) -> Result<(), ContinueError> {
    let backup = Backup::take(request.root, &session.path)?;
    let outcome = plugin
        .writer()
        .append(request.root, session, suffix)
        .map_err(ContinueError::from)
        .and_then(|_| {
            verify(
                plugin,
                request,
                session,
                comparison,
                "the session's previous bytes were restored",
            )
        });
    match outcome {
        Ok(()) => {
            backup.discard();
            Ok(())
        }
        Err(e) => {
            if let Err(restore) = backup.restore() {
                tracing::error!(path = %session.path.display(), error = %restore, "could not restore the session");
            }
            Err(e)
        }
    }
}

/// Reads `session` back event by event and compares it with the whole transcript, so a long
/// session is never held twice.
fn verify(
    plugin: &dyn Plugin,
    request: &ContinueRequest<'_>,
    session: &SessionRef,
    comparison: &Comparison,
    undo: &str,
) -> Result<(), ContinueError> {
    let mut verifier = comparison.verifier(request.transcript);
    plugin
        .reader()
        .read_each(request.root, session, &mut |event| verifier.push(&event))?;
    verifier.finish().map_err(|diff| ContinueError::Mismatch {
        target: request.target.to_owned(),
        id: session.id.clone(),
        diff,
        undo: undo.to_owned(),
    })
}

/// A copy of a session file on disk, beside the store's bookkeeping, so an append can be undone
/// byte for byte without holding the file in memory.
struct Backup {
    original: PathBuf,
    copy: PathBuf,
}

impl Backup {
    fn take(root: &StoreRoot, original: &Path) -> Result<Backup, PluginError> {
        let dir = root.path().join(".handoff").join("backup");
        std::fs::create_dir_all(&dir).map_err(|e| PluginError::io(&dir, &e))?;
        let copy = dir.join(format!(
            "{}.{}",
            original
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("session"),
            std::process::id()
        ));
        std::fs::copy(original, &copy).map_err(|e| PluginError::io(original, &e))?;
        Ok(Backup {
            original: original.to_owned(),
            copy,
        })
    }

    fn restore(self) -> std::io::Result<()> {
        std::fs::rename(&self.copy, &self.original)?;
        if let Some(dir) = self.original.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    fn discard(self) {
        let _ = std::fs::remove_file(&self.copy);
    }
}
