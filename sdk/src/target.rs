//! One target's format behind one trait, and the plugin the SDK makes of a list of them.
//!
//! A target implements [`Target`]: how its store is written, read, listed, looked up by id and
//! resumed, and how the ownership marker of one of its files is read. Everything every target
//! does the same way is done once, here, by [`Targets`] (what [`targets!`](crate::targets)
//! declares a plugin with):
//!
//! - dispatch by target name (an unknown name is [`PluginError::UnknownTarget`]);
//! - [`SessionRef::check`] on every session handed in (its target, its file inside the root);
//! - the input check before anything is written: [`Transcript::validate`] and the target's carried
//!   parts for `create`, the carried parts of the new events for `append` (the whole session's
//!   rules need the events already stored, which only the target reads);
//! - for `append` and `remove`, the [session lock](crate::session_lock), then the owner check
//!   ([`require_owned`](crate::require_owned) on the marker [`Target::owner`] reads), then the
//!   target's code.

use std::path::Path;
use std::sync::OnceLock;

use handoff_capability::{
    not_whole, CreateOptions, EventStream, Manifest, PluginError, ReadFrom, ReadOutcome, Reader,
    ResumePlan, Resumer, SessionInfo, SessionRef, TargetManifest, Writer, WrittenFile,
};
use handoff_store::marker::OwnershipMarker;
use handoff_store::StoreRoot;
use handoff_transcript::{Event, Transcript};

use crate::handed::{Checked, EventSink, New, Owned};
use crate::{require_owned, session_lock, Result};

/// One target's format. What it is handed says what the SDK has checked: a [`Checked`] session
/// (its target is this one, its file inside the root), an [`Owned`] one for `append` and `remove`
/// (also locked and owned by this plugin); every transcript it is asked to create has passed
/// [`Transcript::validate`] and the target's carried parts.
pub trait Target: Send + Sync {
    /// The target's manifest entry: its name (as every [`SessionRef`] of it spells it) and what
    /// it carries (what `create` and `append` are held to). The SDK asks for it once.
    fn manifest(&self) -> TargetManifest;

    /// Creates a new session holding `transcript`, marked with this plugin's marker and
    /// `new.options.locator`.
    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef>;

    /// [`Writer::create_streamed`]: overridden by a target that writes as events arrive; by
    /// default the whole transcript is taken and [`Target::create`] called.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        self.create(new, events.whole()?)
    }

    /// The ownership marker of the session's file (`None`: unmarked). A target whose file must
    /// also name the session (a header's id) refuses one that does not here.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>>;

    /// Appends `events` (each a part the target carries) to a session this plugin owns (the
    /// session stays the one handed in: the SDK returns it).
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()>;

    /// Removes a session this plugin owns: by default its file.
    fn remove(&self, session: Owned<'_>) -> Result<()> {
        std::fs::remove_file(&session.path).map_err(|e| PluginError::io(&session.path, &e))
    }

    /// The read primitive: reads a session of this target event by event, in order, until
    /// `sink` returns `false`, and returns its working directory (what a whole read's transcript
    /// carries). Whole reads and batches are made of it by the SDK.
    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>>;

    /// [`Target::read_each`] as version `cli_version` of the target's CLI sends the session
    /// ([`Reader::reading_as`]: the host reads a source as the CLI the user has installed):
    /// overridden by a target whose CLI's versions send the same file differently; by default
    /// the version is ignored. `None`: as the target reads by default.
    fn read_each_as(
        &self,
        from: Stored<'_>,
        cli_version: Option<&str>,
        sink: EventSink<'_>,
    ) -> Result<Option<String>> {
        let _ = cli_version;
        self.read_each(from, sink)
    }

    /// The working directory [`Target::read_each`] gives the file at `path`: overridden by a
    /// target that finds it without reading every event (a header line); by default every event
    /// is read and dropped.
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        self.read_each(Stored::File(path), &mut |_| true)
    }

    /// Reads a session file its writer still writes ([`ReadFrom::Written`]): overridden by a
    /// target that reads through [`GrowingRead`](crate::GrowingRead); by default
    /// [`ReadOutcome::NotSupported`], nothing read (the host reads the session once it is whole).
    fn read_written(&self, file: &dyn WrittenFile, sink: EventSink<'_>) -> Result<ReadOutcome> {
        let _ = (file, sink);
        Ok(ReadOutcome::NotSupported)
    }

    /// [`Target::read_written`] as version `cli_version` of the target's CLI sends the session
    /// (the host reads a source file as one already written first, and a source is read as the
    /// CLI the user has installed): overridden by a target that overrides both
    /// [`Target::read_each_as`] and [`Target::read_written`]. By default a read as a version is
    /// declined ([`ReadOutcome::NotSupported`], nothing read: the host reads the file whole, as
    /// that version), since `read_written` may not read as it; without one it is `read_written`.
    fn read_written_as(
        &self,
        file: &dyn WrittenFile,
        cli_version: Option<&str>,
        sink: EventSink<'_>,
    ) -> Result<ReadOutcome> {
        match cli_version {
            None => self.read_written(file, sink),
            Some(_) => Ok(ReadOutcome::NotSupported),
        }
    }

    /// The sessions of the store, newest first (see [`crate::session_files`] and
    /// [`crate::sessions_newest_first`]).
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>>;

    /// The newest session this plugin marked with `locator`: by default the first of
    /// [`Target::list`]'s; a target with a faster way (newest files first) overrides it.
    fn find_owned(&self, root: &StoreRoot, locator: &str) -> Result<Option<SessionRef>> {
        Ok(SessionInfo::newest_owned(self.list(root)?, locator))
    }

    /// The session file of exactly this id; a missing one is [`PluginError::NotFound`].
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef>;

    /// How to resume exactly this session with `prompt`.
    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan>;
}

/// Hands the events of a transcript read whole to `sink` until it returns `false`, and returns
/// its cwd: [`Target::read_each`] of a target whose format is read whole (one JSON document).
pub fn each_event(transcript: Transcript, sink: EventSink<'_>) -> Option<String> {
    for event in transcript.events {
        if !sink(event) {
            break;
        }
    }
    transcript.cwd
}

/// Where a [`Target`] reads one of its sessions from.
#[derive(Clone, Copy)]
pub enum Stored<'a> {
    /// A session of its store, checked.
    Session(Checked<'a>),
    /// A session file, read directly.
    File(&'a Path),
}

impl<'a> Stored<'a> {
    /// The session file.
    pub fn path(&self) -> &'a Path {
        match self {
            Stored::Session(session) => &session.session().path,
            Stored::File(path) => path,
        }
    }
}

/// A plugin's targets, and the capability traits made of them: what [`targets!`](crate::targets)
/// hands a plugin's `writer`, `reader` and `resumer`. `plugin` is the plugin's manifest name, the
/// one its ownership markers carry.
pub struct Targets {
    plugin: &'static str,
    targets: &'static [&'static dyn Target],
    /// Each target's [`Target::manifest`], asked once: a target's name is its manifest's.
    manifests: OnceLock<Vec<TargetManifest>>,
}

impl Targets {
    /// The targets of plugin `plugin`.
    pub const fn new(plugin: &'static str, targets: &'static [&'static dyn Target]) -> Self {
        Targets {
            plugin,
            targets,
            manifests: OnceLock::new(),
        }
    }

    fn manifests(&self) -> &[TargetManifest] {
        self.manifests
            .get_or_init(|| self.targets.iter().map(|t| t.manifest()).collect())
    }

    /// The target named `name`, or [`PluginError::UnknownTarget`].
    pub fn target(&self, name: &str) -> Result<&'static dyn Target, PluginError> {
        self.entry(name).map(|(target, _)| target)
    }

    /// The target named `name` and its manifest entry.
    fn entry(&self, name: &str) -> Result<(&'static dyn Target, &TargetManifest)> {
        self.manifests()
            .iter()
            .position(|manifest| manifest.name == name)
            .map(|at| (self.targets[at], &self.manifests()[at]))
            .ok_or_else(|| PluginError::UnknownTarget {
                target: name.to_owned(),
            })
    }

    /// The target of `session`, with the session checked against it and `root`.
    fn checked<'a>(
        &self,
        root: &'a StoreRoot,
        session: &'a SessionRef,
    ) -> Result<(&'static dyn Target, &TargetManifest, Checked<'a>)> {
        let (target, manifest) = self.entry(&session.target)?;
        session.check(root, &manifest.name)?;
        Ok((target, manifest, Checked::new(root, session)))
    }

    /// Takes the lock of `session`, then checks that this plugin owns it: what `append` and
    /// `remove` run under (the lock is held while the returned lock lives).
    fn locked_and_owned<'a>(
        &self,
        target: &dyn Target,
        session: Checked<'a>,
    ) -> Result<(handoff_store::lock::Lock, Owned<'a>)> {
        let lock = session_lock(session.root(), &session)?;
        let marker = require_owned(&session.path, target.owner(session)?, self.plugin)?;
        Ok((lock, Owned::new(session, marker)))
    }

    /// The manifest of a plugin made of these targets: its name, `version`, the SDK's API
    /// requirement and each target's entry.
    pub fn manifest(&self, version: &str) -> Manifest {
        Manifest {
            name: self.plugin.to_owned(),
            version: version.to_owned(),
            api_requirement: crate::API_REQUIREMENT.to_owned(),
            targets: self.manifests().to_vec(),
        }
    }
}

fn check_carried(manifest: &TargetManifest, events: &[Event]) -> Result<(), PluginError> {
    events
        .iter()
        .enumerate()
        .try_for_each(|(index, event)| manifest.check_carried_event(index, event))
}

impl Writer for Targets {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let (target, manifest) = self.entry(target)?;
        transcript.validate()?;
        check_carried(manifest, &transcript.events)?;
        target.create(New { root, options }, transcript)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let (target, manifest, session) = self.checked(root, session)?;
        check_carried(manifest, events)?;
        let (_lock, owned) = self.locked_and_owned(target, session)?;
        target.append(owned, events)?;
        Ok(session.session().clone())
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        let (target, _, session) = self.checked(root, session)?;
        let (_lock, owned) = self.locked_and_owned(target, session)?;
        target.remove(owned)
    }

    fn create_streamed(
        &self,
        root: &StoreRoot,
        target: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        // The engine checks every event before it hands it out (see `Writer::create_streamed`).
        self.target(target)?
            .create_streamed(New { root, options }, events)
    }
}

impl Targets {
    /// The target `from` names, with the session checked, and the source as the target reads it;
    /// a file still being written is read only by [`Target::read_written`].
    fn stored<'a>(
        &self,
        from: ReadFrom<'a>,
    ) -> Result<(&'static dyn Target, Stored<'a>), PluginError> {
        match from {
            ReadFrom::Session(root, session) => {
                let (target, _, session) = self.checked(root, session)?;
                Ok((target, Stored::Session(session)))
            }
            ReadFrom::File(target, path) => Ok((self.target(target)?, Stored::File(path))),
            ReadFrom::Written(..) => Err(not_whole(from)),
        }
    }
}

impl Targets {
    /// Every read of [`Reader::read_each`], as `cli_version` of the source's CLI sends it.
    fn read_each_as(
        &self,
        from: ReadFrom<'_>,
        cli_version: Option<&str>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if let ReadFrom::Written(target, file) = from {
            return self
                .target(target)?
                .read_written_as(file, cli_version, sink);
        }
        let (target, stored) = self.stored(from)?;
        target.read_each_as(stored, cli_version, sink)?;
        Ok(ReadOutcome::Read)
    }

    /// One read, as `cli_version` sends it: the cwd is the one [`Target::read_each_as`] returns.
    fn read_as(
        &self,
        from: ReadFrom<'_>,
        cli_version: Option<&str>,
    ) -> Result<Transcript, PluginError> {
        let (target, stored) = self.stored(from)?;
        let mut events = Vec::new();
        let cwd = target.read_each_as(stored, cli_version, &mut |event| {
            events.push(event);
            true
        })?;
        let mut transcript = Transcript::new(events);
        transcript.cwd = cwd;
        Ok(transcript)
    }
}

impl Reader for Targets {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        self.read_each_as(from, None, sink)
    }

    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        let (target, stored) = self.stored(from)?;
        target.cwd(stored.path())
    }

    /// One read: the cwd is the one [`Target::read_each`] returns.
    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        self.read_as(from, None)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        self.target(target)?.list(root)
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        self.target(target)?.find_owned(root, locator)
    }

    /// Each target reads as `cli_version` ([`Target::read_each_as`]); one whose CLI's versions
    /// send alike ignores it.
    fn reading_as(&self, cli_version: &str) -> Option<Box<dyn Reader + '_>> {
        Some(Box::new(ReadingAs {
            targets: self,
            cli_version: cli_version.to_owned(),
        }))
    }
}

/// [`Targets`] reading as one version of the source's CLI ([`Reader::reading_as`]).
struct ReadingAs<'t> {
    targets: &'t Targets,
    cli_version: String,
}

impl Reader for ReadingAs<'_> {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        self.targets
            .read_each_as(from, Some(&self.cli_version), sink)
    }

    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        self.targets.cwd(from)
    }

    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        self.targets.read_as(from, Some(&self.cli_version))
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        self.targets.list(root, target)
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        self.targets.find_owned(root, target, locator)
    }

    fn reading_as(&self, cli_version: &str) -> Option<Box<dyn Reader + '_>> {
        self.targets.reading_as(cli_version)
    }
}

impl Resumer for Targets {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        self.target(target)?.resolve(root, id)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let (target, _, session) = self.checked(root, session)?;
        target.plan(session, prompt)
    }
}

/// Makes a plugin of a list of [`Target`]s: implements [`Plugin`](crate::Plugin) for `$plugin`
/// (a type of the calling crate), its writer, reader and resumer a static [`Targets`], so the
/// plugin's own code is its targets' formats. `$name` is the plugin's name (its markers'
/// `plugin`); the manifest is made of the targets' entries and the crate's version
/// ([`Targets::manifest`]), so a plugin declares each target once, in its [`Target::manifest`].
///
/// ```ignore
/// #[derive(Clone, Copy, Debug, Default)]
/// pub struct GeminiPlugin;
/// handoff_sdk::targets!(GeminiPlugin, PLUGIN_NAME, [GeminiCli, GeminiApi]);
/// ```
#[macro_export]
macro_rules! targets {
    ($plugin:ty, $name:expr, [$($target:expr),+ $(,)?]) => {
        impl $crate::Plugin for $plugin {
            fn manifest(&self) -> $crate::Manifest {
                <$plugin>::__handoff_targets().manifest(env!("CARGO_PKG_VERSION"))
            }
            fn writer(&self) -> &dyn $crate::Writer {
                <$plugin>::__handoff_targets()
            }
            fn reader(&self) -> &dyn $crate::Reader {
                <$plugin>::__handoff_targets()
            }
            fn resumer(&self) -> &dyn $crate::Resumer {
                <$plugin>::__handoff_targets()
            }
        }
        impl $plugin {
            #[doc(hidden)]
            fn __handoff_targets() -> &'static $crate::Targets {
                static TARGETS: $crate::Targets = $crate::Targets::new($name, &[$(&$target),+]);
                &TARGETS
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use handoff_capability::{Plugin, TargetKind};
    use handoff_transcript::{Body, Feature, Part, Timestamp};

    use super::*;

    /// A target whose file is its marker's plugin name, one line; it counts the calls that got
    /// through the SDK's checks.
    struct Notes;
    static APPENDS: AtomicUsize = AtomicUsize::new(0);
    static REMOVES: AtomicUsize = AtomicUsize::new(0);

    impl Target for Notes {
        fn manifest(&self) -> TargetManifest {
            TargetManifest {
                name: "notes".into(),
                kind: TargetKind::Cli,
                provider: "test".into(),
                carries: vec![Feature::Text],
                thinking_from: vec![],
                notes: vec![],
                live: None,
                default_root: None,
                dialect: None,
            }
        }
        fn create(&self, new: New<'_>, _: &Transcript) -> Result<SessionRef> {
            let path = new.root.join(&["notes", "s.txt"])?;
            new.root.create_file(&path, |w| w.write_all(b"me"))?;
            Ok(SessionRef {
                target: "notes".into(),
                id: "s".into(),
                path,
            })
        }
        fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
            let plugin = std::fs::read_to_string(&session.path)
                .map_err(|e| PluginError::io(&session.path, &e))?;
            Ok(Some(OwnershipMarker {
                plugin,
                locator: None,
            }))
        }
        fn append(&self, session: Owned<'_>, _: &[Event]) -> Result<()> {
            assert_eq!(session.marker().plugin, "me");
            // The SDK holds the session's lock while the target writes.
            let short = std::time::Duration::from_millis(20);
            let name = format!("session\0{}\0{}", session.target, session.id);
            assert!(handoff_store::lock::Lock::acquire(session.root(), &name, short).is_err());
            APPENDS.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn remove(&self, session: Owned<'_>) -> Result<()> {
            REMOVES.fetch_add(1, Ordering::SeqCst);
            std::fs::remove_file(&session.path).map_err(|e| PluginError::io(&session.path, &e))
        }
        /// Two events, the file's name as the cwd.
        fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
            let _ = sink(user("n1", Part::text("one"))) && sink(user("n2", Part::text("two")));
            Ok(Some(from.path().display().to_string()))
        }
        /// As a version: an event naming it first, then what `read_each` reads.
        fn read_each_as(
            &self,
            from: Stored<'_>,
            cli_version: Option<&str>,
            sink: EventSink<'_>,
        ) -> Result<Option<String>> {
            match cli_version {
                Some(version) if !sink(user("as", Part::text(version))) => Ok(None),
                _ => self.read_each(from, sink),
            }
        }
        fn list(&self, _: &StoreRoot) -> Result<Vec<SessionInfo>> {
            Ok(vec![])
        }
        fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
            Ok(SessionRef {
                target: "notes".into(),
                id: id.into(),
                path: root.join(&["notes", &format!("{id}.txt")])?,
            })
        }
        fn plan(&self, _: Checked<'_>, _: &str) -> Result<ResumePlan> {
            Err(PluginError::Other("no plan".into()))
        }
    }

    #[derive(Default)]
    struct NotesPlugin;
    crate::targets!(NotesPlugin, "me", [Notes]);

    fn user(id: &str, part: Part) -> Event {
        Event::new(
            id,
            Timestamp::now(),
            Body::User {
                content: vec![part],
            },
        )
    }

    #[test]
    fn the_sdk_dispatches_checks_locks_and_checks_the_owner_before_the_target() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let plugin = NotesPlugin;
        let manifest = plugin.manifest();
        assert_eq!((manifest.name.as_str(), manifest.targets.len()), ("me", 1));
        assert_eq!(manifest.version, env!("CARGO_PKG_VERSION"));

        let text = Transcript::new(vec![user("u1", Part::text("hi"))]);
        let options = CreateOptions::default();
        match plugin.writer().create(&root, "other", &text, &options) {
            Err(PluginError::UnknownTarget { target }) => assert_eq!(target, "other"),
            other => panic!("expected UnknownTarget, got {other:?}"),
        }
        let session = plugin
            .writer()
            .create(&root, "notes", &text, &options)
            .unwrap();

        // Not carried: refused before the lock, the owner check or the target.
        let image = [user(
            "u2",
            Part::ImageUrl {
                url: "https://example.com/a.png".into(),
            },
        )];
        assert!(matches!(
            plugin.writer().append(&root, &session, &image),
            Err(PluginError::NotCarried { index: 0, .. })
        ));
        // A session of another target, or outside the root, never reaches the target.
        let mut foreign = session.clone();
        foreign.target = "codex".into();
        assert!(matches!(
            plugin.writer().append(&root, &foreign, &[]),
            Err(PluginError::UnknownTarget { .. })
        ));
        let mut outside = session.clone();
        outside.path = tmp.path().parent().unwrap().join("s.txt");
        assert!(plugin
            .reader()
            .read(ReadFrom::Session(&root, &outside))
            .is_err());
        assert_eq!(APPENDS.load(Ordering::SeqCst), 0);

        let more = [user("u2", Part::text("again"))];
        plugin.writer().append(&root, &session, &more).unwrap();
        assert_eq!(APPENDS.load(Ordering::SeqCst), 1);

        // Another plugin's session: NotOwned naming the file, neither appended to nor removed.
        std::fs::write(&session.path, "someone-else").unwrap();
        match plugin.writer().remove(&root, &session) {
            Err(PluginError::NotOwned { path }) => assert_eq!(path, session.path),
            other => panic!("expected NotOwned, got {other:?}"),
        }
        assert!(plugin.writer().append(&root, &session, &more).is_err());
        assert_eq!(
            (
                APPENDS.load(Ordering::SeqCst),
                REMOVES.load(Ordering::SeqCst)
            ),
            (1, 0)
        );
        std::fs::write(&session.path, "me").unwrap();
        plugin.writer().remove(&root, &session).unwrap();
        assert!(!session.path.exists());
    }

    /// A file lent as if still being written (nothing reads it here).
    struct Unread(std::path::PathBuf);

    impl WrittenFile for Unread {
        fn open(&self) -> std::io::Result<std::fs::File> {
            std::fs::File::open(&self.0)
        }
        fn name(&self) -> &Path {
            &self.0
        }
        fn wait_past(&self, _: u64) -> handoff_capability::Growth {
            handoff_capability::Growth::Abandoned
        }
    }

    #[test]
    fn every_read_of_the_host_is_the_targets_one_primitive() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let reader = NotesPlugin.reader();
        let path = tmp.path().join("notes").join("s.txt");
        let ids = |events: Vec<Event>| events.into_iter().map(|e| e.id).collect::<Vec<_>>();

        // A whole read: the events and the cwd of one read_each.
        let whole = reader.read(ReadFrom::File("notes", &path)).unwrap();
        assert_eq!(ids(whole.events), ["n1", "n2"]);
        assert_eq!(whole.cwd.as_deref(), Some(path.to_str().unwrap()));
        // The cwd by default: read_each's, the events dropped.
        let cwd = reader.cwd(ReadFrom::File("notes", &path)).unwrap();
        assert_eq!(cwd, whole.cwd);
        // A sink that stops gets no more; a session of the store is checked, then read.
        let mut handed = 0;
        let session = SessionRef {
            target: "notes".into(),
            id: "s".into(),
            path: path.clone(),
        };
        let outcome = reader
            .read_each(ReadFrom::Session(&root, &session), &mut |_| {
                handed += 1;
                false
            })
            .unwrap();
        assert_eq!((outcome, handed), (ReadOutcome::Read, 1));
        let mut batched = Vec::new();
        reader
            .read_batches(ReadFrom::Session(&root, &session), &mut |batch| {
                batched.extend(batch.into_events().unwrap());
                true
            })
            .unwrap();
        assert_eq!(ids(batched), ["n1", "n2"]);
        let mut foreign = session.clone();
        foreign.target = "other".into();
        assert!(matches!(
            reader.read_each(ReadFrom::Session(&root, &foreign), &mut |_| true),
            Err(PluginError::UnknownTarget { .. })
        ));

        // A file still being written: the target does not read one, so nothing is handed on,
        // and it is never read whole.
        let written = Unread(path.clone());
        let mut handed = 0;
        let outcome = reader
            .read_each(ReadFrom::Written("notes", &written), &mut |_| {
                handed += 1;
                true
            })
            .unwrap();
        assert_eq!((outcome, handed), (ReadOutcome::NotSupported, 0));
        assert!(reader.read(ReadFrom::Written("notes", &written)).is_err());
        assert!(reader.cwd(ReadFrom::Written("notes", &written)).is_err());
    }

    #[test]
    fn a_reader_reading_as_a_version_hands_it_to_the_target_in_every_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let reader = NotesPlugin.reader();
        let path = tmp.path().join("notes").join("s.txt");
        let file = ReadFrom::File("notes", &path);
        let texts = |events: Vec<Event>| {
            events
                .into_iter()
                .map(|e| match e.body {
                    Body::User { content } => match &content[0] {
                        Part::Text { text } => text.clone(),
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(reader.read(file).unwrap().events), ["one", "two"]);

        let as_197 = reader
            .reading_as("2.1.197")
            .expect("the SDK's reader takes a version");
        let whole = as_197.read(file).unwrap();
        assert_eq!(texts(whole.events), ["2.1.197", "one", "two"]);
        assert_eq!(whole.cwd.as_deref(), Some(path.to_str().unwrap()));
        assert_eq!(as_197.cwd(file).unwrap(), whole.cwd);
        let session = SessionRef {
            target: "notes".into(),
            id: "s".into(),
            path: path.clone(),
        };
        let mut batched = Vec::new();
        as_197
            .read_batches(ReadFrom::Session(&root, &session), &mut |batch| {
                batched.extend(batch.into_events().unwrap());
                true
            })
            .unwrap();
        assert_eq!(texts(batched), ["2.1.197", "one", "two"]);
        // A view of a view reads as the newer request, not both.
        let as_332 = as_197.reading_as("2.1.332").unwrap();
        assert_eq!(
            texts(as_332.read(file).unwrap().events),
            ["2.1.332", "one", "two"]
        );
        // The session's check still runs first.
        let mut foreign = session.clone();
        foreign.target = "other".into();
        assert!(matches!(
            as_197.read(ReadFrom::Session(&root, &foreign)),
            Err(PluginError::UnknownTarget { .. })
        ));
    }
}
