//! The `codex` target: Codex 0.171.0's rollout files and its state database.
//!
//! [`layout`] says where rollouts live, [`records`] what their lines are, [`read`] turns a file
//! into a transcript and [`write`] a transcript into lines; what only Codex needs is beside them:
//! [`state_db`] (the thread row), [`config`] (the model provider), [`owned`] (the marker kept
//! beside a rollout Codex rewrote) and [`live`] (resuming and the live recipe). This module is the
//! target's operations over them.

mod config;
mod layout;
mod list;
pub(crate) mod live;
pub(crate) mod owned;
mod read;
mod records;
mod state_db;
mod write;

use std::path::Path;

use chrono::{Local, TimeZone};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::stream_stop::{self, Stop};
use handoff_sdk::{
    atomic, own_marker, Body, Checked, CreateOptions, Event, EventSink, EventStream, New, Owned,
    Part, PluginError, ReadOutcome, Result, ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored,
    Target, TargetManifest, Timestamp, Transcript, WrittenFile,
};

pub use read::image_part;

use crate::manifest::{target_manifest, PLUGIN, TARGET};

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> PluginError + '_ {
    move |e| PluginError::io(path, &e)
}

/// What the thread row needs of a session, gathered as its events go by.
#[derive(Default)]
struct ThreadFacts {
    /// The first user text (the thread title Codex shows).
    first_user_message: Option<String>,
    /// The model of the last assistant turn that names one.
    model: Option<String>,
    last: Option<Timestamp>,
}

impl ThreadFacts {
    fn of(events: &[Event]) -> Self {
        let mut facts = ThreadFacts::default();
        events.iter().for_each(|e| facts.note(e));
        facts
    }

    fn note(&mut self, event: &Event) {
        self.last = Some(event.timestamp);
        match &event.body {
            Body::User { content } if self.first_user_message.is_none() => {
                self.first_user_message = content.iter().find_map(|p| match p {
                    Part::Text { text } => Some(text.clone()),
                    _ => None,
                });
            }
            Body::Assistant {
                origin: Some(origin),
                ..
            } => {
                if let Some(model) = &origin.model {
                    if self.model.as_deref() != Some(model) {
                        self.model = Some(model.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The thread row of rollout `file` of session `id`.
    fn row<'a>(
        &'a self,
        id: &'a str,
        file: &'a Path,
        created: Timestamp,
        cwd: &'a str,
        provider: &'a str,
    ) -> state_db::ThreadRow<'a> {
        state_db::ThreadRow {
            id,
            rollout_path: file,
            created_ms: created.millis(),
            updated_ms: self.last.unwrap_or(created).millis(),
            cwd,
            model_provider: provider,
            first_user_message: self.first_user_message.as_deref().unwrap_or(""),
            model: self.model.as_deref().unwrap_or("gpt-5"),
        }
    }
}

/// A rollout being created: its id, file and the folders made for it, before its lines.
struct NewRollout {
    id: String,
    provider: String,
    started: Timestamp,
    file: std::path::PathBuf,
    created_dirs: Vec<std::path::PathBuf>,
    marker: OwnershipMarker,
}

impl NewRollout {
    /// Names a rollout started at `started` (its date folder) and makes its folders.
    fn begin(
        root: &StoreRoot,
        started: Timestamp,
        options: &CreateOptions,
    ) -> Result<Self, PluginError> {
        let provider = config::model_provider(root)?;
        let id = uuid::Uuid::now_v7().to_string();
        let local = Local
            .timestamp_millis_opt(started.millis())
            .single()
            .ok_or_else(|| {
                PluginError::InvalidTranscript(format!("timestamp {started} is out of range"))
            })?;
        let (dir, file) = layout::rollout_path(root, &local, &id)?;
        let created_dirs = root.create_dirs(&dir).map_err(io_error(&dir))?;
        let marker = OwnershipMarker {
            plugin: PLUGIN.to_owned(),
            locator: options.locator.clone(),
        };
        Ok(NewRollout {
            id,
            provider,
            started,
            file,
            created_dirs,
            marker,
        })
    }

    /// The rollout's lines into `out` (its file, as an atomic create hands it over): the
    /// `session_meta` line written, and the renderer for its events.
    fn lines<'o>(
        &'o self,
        out: &'o mut dyn std::io::Write,
        cwd: &'o str,
    ) -> std::io::Result<(write::Lines<'o>, write::Renderer<'o>)> {
        let mut lines = write::Lines::new(out);
        let renderer = write::Renderer::new(cwd, &self.provider);
        let started = self.started.to_rfc3339();
        renderer.session_meta(&mut lines, &self.id, &started, &self.marker)?;
        Ok((lines, renderer))
    }

    /// Registers the thread once the file is written; on any failure removes the file and the
    /// folders made for it.
    fn finish(
        self,
        root: &StoreRoot,
        written: Result<(), PluginError>,
        cwd: &str,
        facts: &ThreadFacts,
    ) -> Result<SessionRef, PluginError> {
        let registered = written.and_then(|()| {
            let row = facts.row(&self.id, &self.file, self.started, cwd, &self.provider);
            state_db::register(root, &row)?;
            owned::record(root, &self.id, &self.marker).inspect_err(|_| {
                let _ = state_db::unregister(root, &self.id);
            })
        });
        if let Err(e) = registered {
            let _ = std::fs::remove_file(&self.file);
            root.remove_created_dirs(&self.created_dirs);
            return Err(e);
        }
        Ok(SessionRef {
            target: TARGET.to_owned(),
            id: self.id,
            path: self.file,
        })
    }
}

/// The `codex` target.
pub(crate) struct Codex;

impl Target for Codex {
    fn manifest(&self) -> TargetManifest {
        target_manifest()
    }

    /// Creates a new rollout holding `transcript` (checked by the SDK, or by the engine event by
    /// event) and registers its thread.
    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        write::check_representable(transcript, 0)?;
        let cwd = new.cwd(transcript).ok_or_else(|| {
                PluginError::InvalidTranscript(
                    "a Codex session needs a working directory: set CreateOptions.cwd or the transcript's cwd"
                        .into(),
                )
            })?;
        let started = transcript
            .events
            .first()
            .map_or_else(Timestamp::now, |e| e.timestamp);
        let rollout = NewRollout::begin(root, started, options)?;
        let written = atomic::create_new(&rollout.file, |out| {
            let (mut lines, mut renderer) = rollout.lines(out, cwd)?;
            renderer.events(&mut lines, transcript, 0)?;
            lines.finish()
        })
        .map_err(io_error(&rollout.file));
        let facts = ThreadFacts::of(&transcript.events);
        rollout.finish(root, written, cwd, &facts)
    }

    /// [`Target::create`], writing each event as the stream hands it over, so the transcript is
    /// never held. The first event decides the rollout's date folder; a compaction that keeps
    /// events before it (its replacement history holds them) makes it start over with the whole
    /// transcript.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let rollout = NewRollout::begin(root, first.timestamp, options)?;
        let mut facts = ThreadFacts::default();
        let written = stream_stop::within(
            |body| atomic::create_new(&rollout.file, body),
            |out| {
                let (mut lines, mut renderer) = rollout.lines(out, cwd)?;
                let mut next = Some(first);
                let mut index = 0;
                while let Some(event) = next {
                    write::check_event(index, &event).map_err(Stop::Refused)?;
                    if let Body::Compaction {
                        replaces_through, ..
                    } = &event.body
                    {
                        // Its replacement history holds the events it keeps, no longer at hand.
                        if !renderer.keeps_nothing(replaces_through) {
                            return Err(Stop::StartOver);
                        }
                    }
                    facts.note(&event);
                    renderer.event(&mut lines, &event, None)?;
                    index += 1;
                    next = events.next_event().map_err(Stop::Refused)?;
                }
                renderer.finish(&mut lines)?;
                Ok(lines.finish()?)
            },
        );
        let written = match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(Stop::StartOver)) => {
                root.remove_created_dirs(&rollout.created_dirs);
                return self.create(new, events.whole()?);
            }
            Ok(Err(Stop::Refused(e))) => Err(e),
            Ok(Err(Stop::Io(e))) | Err(e) => Err(io_error(&rollout.file)(e)),
        };
        rollout.finish(root, written, cwd, &facts)
    }

    /// The `session_meta` line's marker, else, for a rollout Codex rewrote (which dropped it),
    /// the copy kept beside the store ([`owned`]).
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        let root = session.root();
        Ok(read::read_header(&session.path)?.marker_or_kept(root))
    }

    /// Appends `events` to a rollout this plugin created, and refreshes its thread row.
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let root = session.root();
        let path = session.path.as_path();
        let id = session.id.as_str();
        let header = read::read_header(path)?;
        let mut whole = read::read_rollout_as_written(path)?;
        let first = whole.events.len();
        whole.events.extend_from_slice(events);
        whole.validate()?;
        write::check_representable(&whole, first)?;
        if events.is_empty() {
            return Ok(());
        }
        // A rollout Codex rewrote numbers its records; ours go on from its last.
        let next_ordinal = if header.rewritten_by_codex {
            Some(read::last_ordinal(path)?.map_or(0, |n| n + 1))
        } else {
            None
        };
        let previous_len = atomic::append(path, |out| {
            let mut lines = match next_ordinal {
                Some(next) => write::Lines::numbered_from(out, next),
                None => write::Lines::new(out),
            };
            write::Renderer::new(&header.cwd, &header.model_provider)
                .events(&mut lines, &whole, first)?;
            lines.finish()
        })
        .map_err(io_error(path))?;
        let created = whole
            .events
            .first()
            .map_or(Timestamp::from_millis(0), |e| e.timestamp);
        let facts = ThreadFacts::of(&whole.events);
        let registered = state_db::register(
            root,
            &facts.row(id, path, created, &header.cwd, &header.model_provider),
        );
        if let Err(e) = registered {
            let _ = atomic::truncate_to(path, previous_len);
            return Err(e);
        }
        Ok(())
    }

    /// The rollout, its thread row and the date folders it leaves empty.
    fn remove(&self, session: Owned<'_>) -> Result<()> {
        let root = session.root();
        let path = session.path.as_path();
        state_db::unregister(root, &session.id)?;
        std::fs::remove_file(path).map_err(io_error(path))?;
        owned::remove(root, &session.id)?;
        layout::remove_empty_date_dirs(root, path);
        Ok(())
    }

    /// Streams the rollout as Codex sends it on resume: each event goes to `sink` as soon as no
    /// later line can change it, so a long session is verified without a second copy in memory.
    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        Ok(Some(read::read_each_as_sent(from.path(), sink)?.cwd))
    }

    /// The `session_meta` line's cwd, the first line only.
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        Ok(Some(read::read_header(path)?.cwd))
    }

    /// Streams the rollout as its writer writes it (the continuation engine's verify).
    fn read_written(&self, file: &dyn WrittenFile, sink: EventSink<'_>) -> Result<ReadOutcome> {
        read::read_written_as_sent(file, sink).map(|()| ReadOutcome::Read)
    }

    /// Every rollout in the store, newest first, with the cwd and title Codex's own list shows
    /// (see [`list`]); the `session_meta` line is read once for the marker and the cwd.
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let files = layout::all_rollouts(root)?;
        let names = list::thread_names(root);
        let mut sessions: Vec<SessionInfo> = files
            .into_iter()
            .map(|(id, path)| {
                let (marker, cwd) = match read::read_header(&path) {
                    Ok(header) => {
                        let cwd = header.cwd.clone();
                        (own_marker(header.marker_or_kept(root), PLUGIN), Some(cwd))
                    }
                    Err(_) => (None, None),
                };
                let title = names
                    .get(&id)
                    .cloned()
                    .or_else(|| list::first_user_message(&path));
                SessionInfo::of_file(TARGET, &id, &path, marker).with_details(title, cwd)
            })
            .collect();
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// The newest rollout of ours marked with `locator`: headers read newest first, stopping at the
    /// first match, so in a store of thousands of rollouts a continuation reads only those created
    /// after its own session.
    fn find_owned(&self, root: &StoreRoot, locator: &str) -> Result<Option<SessionRef>> {
        for (id, path) in layout::rollouts_newest_first(root)? {
            let Ok(header) = read::read_header(&path) else {
                continue;
            };
            let marker = header.marker_or_kept(root);
            let ours =
                own_marker(marker, PLUGIN).is_some_and(|m| m.locator.as_deref() == Some(locator));
            if ours {
                return Ok(Some(SessionRef {
                    target: TARGET.to_owned(),
                    id,
                    path,
                }));
            }
        }
        Ok(None)
    }

    /// The rollout named exactly `id`, its `session_meta` agreeing.
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let path = layout::resolve(root, id)?;
        let header = read::read_header(&path)?;
        if header.id != id {
            return Err(PluginError::Malformed {
                file: path,
                line: Some(1),
                field: Some("payload.id".into()),
                message: format!(
                    "the file name says session {id} but session_meta says {}",
                    header.id
                ),
            });
        }
        Ok(SessionRef {
            target: TARGET.to_owned(),
            id: id.to_owned(),
            path,
        })
    }

    /// `codex exec resume <id> PROMPT` in the session's cwd.
    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let root = session.root();
        let header = read::read_header(&session.path)?;
        Ok(live::resume_plan(root, &session.id, &header.cwd, prompt))
    }
}
