//! The `codex` target: Codex 0.171.0's rollout files and its state database.
//!
//! [`layout`] says where rollouts live, [`records`] what their lines are, [`read`] turns a file
//! into a transcript and [`write`] a transcript into lines; what only Codex needs is beside them:
//! [`state_db`] (the thread row), [`config`] (the model provider), [`time`] (its timestamps) and
//! [`live`] (resuming and the live recipe). This module is the target's operations over them.

mod config;
mod layout;
mod list;
pub(crate) mod live;
mod read;
mod records;
mod state_db;
mod time;
mod write;

use std::path::Path;

use chrono::{Local, TimeZone};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    atomic, own_marker, require_owned, session_lock, Body, CreateOptions, Event, Part, PluginError,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Timestamp, Transcript,
};

pub use read::image_part;

use crate::manifest::{target_manifest, PLUGIN, TARGET};

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> PluginError + '_ {
    move |e| PluginError::io(path, &e)
}

/// The first user text of a transcript (the thread title Codex shows).
fn first_user_text(events: &[Event]) -> &str {
    events
        .iter()
        .find_map(|e| match &e.body {
            Body::User { content } => content.iter().find_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            }),
            _ => None,
        })
        .unwrap_or("")
}

fn last_model(events: &[Event]) -> &str {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            Body::Assistant {
                origin: Some(origin),
                ..
            } => origin.model.as_deref(),
            _ => None,
        })
        .unwrap_or("gpt-5")
}

/// Creates a new rollout holding `transcript` and registers its thread.
pub(crate) fn create(
    root: &StoreRoot,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    transcript.validate()?;
    target_manifest().check_carried(transcript)?;
    write::check_representable(transcript, 0)?;
    let cwd = options
        .cwd
        .as_deref()
        .or(transcript.cwd.as_deref())
        .ok_or_else(|| {
            PluginError::InvalidTranscript(
                "a Codex session needs a working directory: set CreateOptions.cwd or the transcript's cwd"
                    .into(),
            )
        })?;

    let provider = config::model_provider(root)?;
    let id = uuid::Uuid::now_v7().to_string();
    let started = transcript
        .events
        .first()
        .map_or_else(Timestamp::now, |e| e.timestamp);
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
    let written = atomic::create_new(&file, |out| {
        let mut lines = write::Lines::new(out);
        let mut renderer = write::Renderer::new(transcript, cwd, &provider);
        renderer.session_meta(&mut lines, &id, &time::format(started), &marker)?;
        renderer.events(&mut lines, 0)?;
        lines.finish()
    })
    .map_err(io_error(&file));
    let registered = written.and_then(|()| {
        state_db::register(
            root,
            &state_db::ThreadRow {
                id: &id,
                rollout_path: &file,
                created_ms: started.millis(),
                updated_ms: transcript
                    .events
                    .last()
                    .map_or(started, |e| e.timestamp)
                    .millis(),
                cwd,
                model_provider: &provider,
                first_user_message: first_user_text(&transcript.events),
                model: last_model(&transcript.events),
            },
        )
    });
    if let Err(e) = registered {
        let _ = std::fs::remove_file(&file);
        root.remove_created_dirs(&created_dirs);
        return Err(e);
    }
    Ok(SessionRef {
        target: TARGET.to_owned(),
        id,
        path: file,
    })
}

/// Appends `events` to a rollout this plugin created, and refreshes its thread row.
pub(crate) fn append(
    root: &StoreRoot,
    session: &SessionRef,
    events: &[Event],
) -> Result<SessionRef, PluginError> {
    let path = session.check(root, TARGET)?;
    let id = session.id.as_str();
    // One handoff writer per session at a time (Codex itself is not stopped by this).
    let _lock = session_lock(root, session)?;
    let header = read::read_header(path)?;
    require_owned(path, header.marker.clone(), PLUGIN)?;
    let mut whole = read::read_rollout_as_written(path)?;
    let first = whole.events.len();
    whole.events.extend_from_slice(events);
    whole.validate()?;
    let suffix = Transcript::new(events.to_vec());
    target_manifest().check_carried(&suffix)?;
    write::check_representable(&whole, first)?;
    if events.is_empty() {
        return Ok(session.clone());
    }
    let previous_len = atomic::append(path, |out| {
        let mut lines = write::Lines::new(out);
        write::Renderer::new(&whole, &header.cwd, &header.model_provider)
            .events(&mut lines, first)?;
        lines.finish()
    })
    .map_err(io_error(path))?;
    let created_ms = whole.events.first().map_or(0, |e| e.timestamp.millis());
    let registered = state_db::register(
        root,
        &state_db::ThreadRow {
            id,
            rollout_path: path,
            created_ms,
            updated_ms: whole
                .events
                .last()
                .map_or(created_ms, |e| e.timestamp.millis()),
            cwd: &header.cwd,
            model_provider: &header.model_provider,
            first_user_message: first_user_text(&whole.events),
            model: last_model(&whole.events),
        },
    );
    if let Err(e) = registered {
        let _ = atomic::truncate_to(path, previous_len);
        return Err(e);
    }
    Ok(session.clone())
}

/// Removes a rollout this plugin created, its thread row and the date folders it leaves empty.
pub(crate) fn remove(root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
    let path = session.check(root, TARGET)?;
    let _lock = session_lock(root, session)?;
    require_owned(path, read::read_header(path)?.marker, PLUGIN)?;
    state_db::unregister(root, &session.id)?;
    std::fs::remove_file(path).map_err(io_error(path))?;
    layout::remove_empty_date_dirs(root, path);
    Ok(())
}

/// Reads a resolved rollout.
pub(crate) fn read(root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
    read::read_rollout(session.check(root, TARGET)?)
}

/// Reads a rollout file.
pub(crate) fn read_path(path: &Path) -> Result<Transcript, PluginError> {
    read::read_rollout(path)
}

/// Streams a resolved rollout to `sink`.
pub(crate) fn read_each(
    root: &StoreRoot,
    session: &SessionRef,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    read::read_each_as_sent(session.check(root, TARGET)?, sink).map(drop)
}

/// Every rollout in the store, newest first, with the cwd and title Codex's own list shows
/// (see [`list`]); the `session_meta` line is read once for the marker and the cwd.
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let files = layout::all_rollouts(root)?;
    let names = list::thread_names(root);
    let mut sessions: Vec<SessionInfo> = files
        .into_iter()
        .map(|(id, path)| {
            let (marker, cwd) = match read::read_header(&path) {
                Ok(header) => (own_marker(header.marker, PLUGIN), Some(header.cwd)),
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
pub(crate) fn find_owned(
    root: &StoreRoot,
    locator: &str,
) -> Result<Option<SessionRef>, PluginError> {
    for (id, path) in layout::rollouts_newest_first(root)? {
        let Ok(header) = read::read_header(&path) else {
            continue;
        };
        let ours = own_marker(header.marker, PLUGIN)
            .is_some_and(|m| m.locator.as_deref() == Some(locator));
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
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
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
pub(crate) fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let header = read::read_header(session.check(root, TARGET)?)?;
    Ok(live::resume_plan(root, &session.id, &header.cwd, prompt))
}
