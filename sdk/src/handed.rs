//! What a [`Target`](crate::Target) is handed: each value says what the SDK has already checked,
//! so a target cannot be handed a session that skipped a check.

use std::ops::Deref;

use handoff_capability::{CreateOptions, SessionRef};
use handoff_store::marker::OwnershipMarker;
use handoff_store::StoreRoot;
use handoff_transcript::{Event, Transcript};

/// Where events go, one at a time, as a session is read: `false` stops the read.
pub type EventSink<'a> = &'a mut dyn FnMut(Event) -> bool;

/// A session to create: the store it goes in and the caller's options.
#[derive(Clone, Copy)]
pub struct New<'a> {
    /// The store the session is made in.
    pub root: &'a StoreRoot,
    /// The session's cwd and the locator its marker carries.
    pub options: &'a CreateOptions,
}

/// A session of a target's store that the SDK checked ([`SessionRef::check`]: its target is
/// this one and its file, `path`, is inside the root). It reads as the [`SessionRef`].
#[derive(Clone, Copy)]
pub struct Checked<'a> {
    root: &'a StoreRoot,
    session: &'a SessionRef,
}

impl<'a> Checked<'a> {
    /// Only the SDK checks.
    pub(crate) fn new(root: &'a StoreRoot, session: &'a SessionRef) -> Self {
        Checked { root, session }
    }

    /// The store the session is in.
    pub fn root(&self) -> &'a StoreRoot {
        self.root
    }

    /// The session.
    pub fn session(&self) -> &'a SessionRef {
        self.session
    }
}

impl Deref for Checked<'_> {
    type Target = SessionRef;

    fn deref(&self) -> &SessionRef {
        self.session
    }
}

impl<'a> New<'a> {
    /// The new session's working directory: the caller's (`options.cwd`), else the transcript's.
    pub fn cwd<'t>(&self, transcript: &'t Transcript) -> Option<&'t str>
    where
        'a: 't,
    {
        self.options.cwd.as_deref().or(transcript.cwd.as_deref())
    }
}

/// A checked session that this plugin owns, handed over while the SDK holds its writer lock:
/// what `append` and `remove` are given. It reads as the [`Checked`] session.
pub struct Owned<'a> {
    checked: Checked<'a>,
    marker: OwnershipMarker,
}

impl<'a> Owned<'a> {
    /// Only the SDK locks and checks the owner.
    pub(crate) fn new(checked: Checked<'a>, marker: OwnershipMarker) -> Self {
        Owned { checked, marker }
    }

    /// The session's own marker, as [`Target::owner`](crate::Target::owner) read it.
    pub fn marker(&self) -> &OwnershipMarker {
        &self.marker
    }
}

impl<'a> Deref for Owned<'a> {
    type Target = Checked<'a>;

    fn deref(&self) -> &Checked<'a> {
        &self.checked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_sessions_cwd_is_the_callers_else_the_transcripts() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let mut transcript = Transcript::new(vec![]);
        let none = CreateOptions::default();
        let given = CreateOptions {
            cwd: Some("/given".into()),
            ..CreateOptions::default()
        };
        let new = |options| New {
            root: &root,
            options,
        };
        assert_eq!(new(&none).cwd(&transcript), None);
        transcript.cwd = Some("/recorded".into());
        assert_eq!(new(&none).cwd(&transcript), Some("/recorded"));
        assert_eq!(new(&given).cwd(&transcript), Some("/given"));
    }
}
