//! handoff-codex: the `codex` target, the rollout JSONL store of the Codex CLI 0.171.0.
//!
//! A session is `<root>/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl` where `<root>` is
//! `CODEX_HOME`. The writer produces what the real CLI needs to list, draw and resume it (a
//! `session_meta`, per turn `task_started` + `turn_context`, the `response_item`s the model sees,
//! the `event_msg` copies the UI draws, `task_complete`), and registers the thread in Codex's state
//! database when it exists. Canonical fields Codex has no place for (event ids, authors, origins,
//! the error flag of a tool result) ride in an `x-handoff-event` member that Codex ignores and
//! never sends to the model. Every mapping choice is in `docs/formats/codex.md`.
#![deny(missing_docs)]

mod config;
mod layout;
mod live;
mod read;
mod records;
mod render;
mod state_db;
mod time;

use std::path::Path;

use chrono::{Local, TimeZone};
use handoff_sdk::dialect::Dialect;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    atomic, Body, CreateOptions, DefaultRoot, Event, Feature, Manifest, Part, Plugin, PluginError,
    Reader, ResumePlan, Resumer, SessionInfo, SessionRef, StoreRoot, TargetKind, TargetManifest,
    Timestamp, Transcript, Writer,
};

pub use read::image_part;

/// The plugin name (also the `plugin` of the ownership marker).
pub const PLUGIN: &str = "codex";
/// The one target this plugin offers.
pub const TARGET: &str = "codex";
/// The provider whose reasoning Codex sessions carry (and the provider of the target).
pub(crate) const THINKING_PROVIDER: &str = "openai";

/// The Codex plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodexPlugin;

impl CodexPlugin {
    /// The plugin.
    pub fn new() -> Self {
        CodexPlugin
    }

    /// The manifest of the `codex` target.
    pub fn target_manifest() -> TargetManifest {
        TargetManifest {
            name: TARGET.to_owned(),
            kind: TargetKind::Cli,
            provider: THINKING_PROVIDER.to_owned(),
            carries: vec![
                Feature::Text,
                Feature::Image,
                Feature::ImageUrl,
                Feature::Thinking,
                Feature::ThinkingSignature,
                Feature::ToolCall,
                Feature::ToolResult,
                Feature::ToolError,
                Feature::ToolResultImage,
                Feature::Compaction,
                Feature::Author,
                Feature::TextAfterToolCall,
                Feature::PreciseNumbers,
            ],
            thinking_from: vec![THINKING_PROVIDER.to_owned()],
            notes: vec![
                "Thinking from providers other than openai is display-only: it is not written.".into(),
                "Tool errors, event ids, authors and assistant origins ride in an `x-handoff-event` member \
                 of each response_item, which Codex ignores and never sends to the model; the model sees a \
                 failure only in the output text, as with Codex's own tools."
                    .into(),
                "Compaction is a native `compacted` record whose replacement_history is the summary (as a \
                 user message) followed by the items after the replaced events."
                    .into(),
                "Sessions are recorded with the model provider <CODEX_HOME>/config.toml selects (default \
                 openai): Codex 0.171.0 refuses to resume a thread under another provider."
                    .into(),
            ],
            live: Some(live::recipe()),
            default_root: Some(DefaultRoot::home(Some("CODEX_HOME"), ".codex")),
            dialect: Some(Dialect::OpenaiResponses),
        }
    }

    fn check_target(target: &str) -> Result<TargetManifest, PluginError> {
        if target == TARGET {
            Ok(Self::target_manifest())
        } else {
            Err(PluginError::UnknownTarget {
                target: target.to_owned(),
            })
        }
    }
}

impl Plugin for CodexPlugin {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: PLUGIN.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            api_requirement: "^1".to_owned(),
            targets: vec![Self::target_manifest()],
        }
    }

    fn writer(&self) -> &dyn Writer {
        self
    }

    fn reader(&self) -> &dyn Reader {
        self
    }

    fn resumer(&self) -> &dyn Resumer {
        self
    }
}

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

/// Takes the advisory lock of one session, waiting up to five seconds.
fn session_lock(
    root: &StoreRoot,
    id: &str,
    path: &Path,
) -> Result<handoff_sdk::lock::Lock, PluginError> {
    handoff_sdk::lock::Lock::acquire(root, &format!("codex-session:{id}"), LOCK_WAIT).map_err(|e| {
        if e.kind() == std::io::ErrorKind::WouldBlock {
            PluginError::Locked {
                path: path.to_owned(),
            }
        } else {
            PluginError::io(path, &e)
        }
    })
}

/// How long append and remove wait for another writer of the same session.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Refuses a session this plugin did not mark as its own.
fn require_owned(path: &Path) -> Result<read::Header, PluginError> {
    let header = read::read_header(path)?;
    match &header.marker {
        Some(marker) if marker.plugin == PLUGIN => Ok(header),
        _ => Err(PluginError::NotOwned {
            path: path.to_owned(),
        }),
    }
}

impl Writer for CodexPlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let manifest = Self::check_target(target)?;
        transcript.validate()?;
        manifest.check_carried(transcript)?;
        render::check_representable(transcript, 0)?;
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
            let mut lines = render::Lines::new(out);
            let mut renderer = render::Renderer::new(transcript, cwd, &provider);
            renderer.session_meta(&mut lines, &id, &crate::time::format(started), &marker)?;
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

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let manifest = Self::check_target(&session.target)?;
        let path = session.check(root, TARGET)?.to_owned();
        let id = session.id.as_str();
        let header = require_owned(&path)?;
        // One handoff writer per session at a time (Codex itself is not stopped by this).
        let _lock = session_lock(root, id, &path)?;
        let mut whole = read::read_rollout(&path)?;
        let first = whole.events.len();
        whole.events.extend_from_slice(events);
        whole.validate()?;
        let suffix = Transcript::new(events.to_vec());
        manifest.check_carried(&suffix)?;
        render::check_representable(&whole, first)?;
        if events.is_empty() {
            return Ok(SessionRef {
                target: TARGET.to_owned(),
                id: id.to_owned(),
                path,
            });
        }
        let previous_len = atomic::append(&path, |out| {
            let mut lines = render::Lines::new(out);
            render::Renderer::new(&whole, &header.cwd, &header.model_provider)
                .events(&mut lines, first)?;
            lines.finish()
        })
        .map_err(io_error(&path))?;
        let created_ms = whole.events.first().map_or(0, |e| e.timestamp.millis());
        let registered = state_db::register(
            root,
            &state_db::ThreadRow {
                id,
                rollout_path: &path,
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
            let _ = atomic::truncate_to(&path, previous_len);
            return Err(e);
        }
        Ok(SessionRef {
            target: TARGET.to_owned(),
            id: id.to_owned(),
            path,
        })
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        let path = session.check(root, TARGET)?;
        let id = session.id.as_str();
        require_owned(&path)?;
        let _lock = session_lock(root, id, &path)?;
        state_db::unregister(root, id)?;
        std::fs::remove_file(&path).map_err(io_error(&path))?;
        layout::remove_empty_date_dirs(root, &path);
        Ok(())
    }
}

impl Reader for CodexPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        read::read_rollout(session.check(root, TARGET)?)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        Self::check_target(target)?;
        read::read_rollout(path)
    }

    /// Streams the rollout: each event goes to `sink` as soon as no later line can change it, so
    /// the continuation engine verifies a long session without a second copy of it in memory.
    fn read_each(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        read::read_each(session.check(root, TARGET)?, sink).map(drop)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        Self::check_target(target)?;
        let mut sessions = Vec::new();
        for (id, path) in layout::all_rollouts(root)? {
            let marker = read::read_header(&path)
                .ok()
                .and_then(|h| h.marker)
                .filter(|m| m.plugin == PLUGIN);
            sessions.push(SessionInfo::of_file(TARGET, &id, &path, marker));
        }
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// Reads headers newest first and stops at the first of ours with this locator: in a store of
    /// thousands of rollouts a continuation reads only those created after its own session.
    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        Self::check_target(target)?;
        for (id, path) in layout::rollouts_newest_first(root)? {
            let Ok(header) = read::read_header(&path) else {
                continue;
            };
            let ours = header
                .marker
                .is_some_and(|m| m.plugin == PLUGIN && m.locator.as_deref() == Some(locator));
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
}

impl Resumer for CodexPlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        Self::check_target(target)?;
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

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let header = read::read_header(session.check(root, TARGET)?)?;
        Ok(live::resume_plan(root, &session.id, &header.cwd, prompt))
    }
}

// Registers the plugin with a host that links this crate; `so/` exports it as a shared library.
handoff_sdk::register_builtin!(CodexPlugin);
