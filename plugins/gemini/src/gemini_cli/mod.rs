//! The `gemini-cli` target: Gemini CLI 0.61.0's JSONL chats under `<root>/tmp/<short id>/chats/`.

mod chat;
mod layout;
mod list;
mod parts;
mod read;
mod record_types;
mod records;
mod registry;
mod write;
mod write_streamed;

use std::path::Path;

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::stream_stop;
use handoff_sdk::{
    atomic, AssistantPart, Body, Checked, CreateOptions, Event, EventSink, EventStream, New, Owned,
    PluginError, Result, ResumeCommand, ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored,
    Target, TargetManifest, Timestamp, ToolCall, Transcript,
};

pub(crate) use parts::is_google;
pub use parts::PROVIDER;

use crate::manifest::{GEMINI_CLI, PLUGIN_NAME};
use chat::Chat;

/// The key of this target's native fields in `Event::opaque`.
pub const OPAQUE_KEY: &str = "gemini-cli";
/// `opaque["gemini-cli"].thoughts`: a `gemini` message's `thoughts`, verbatim. Gemini CLI never
/// sends them to the model, so they are no canonical thinking; the writer puts them back.
pub const THOUGHTS: &str = "thoughts";
/// `opaque["gemini-cli"].thoughtParts`: `[{at, part}]`, the thought parts of a `gemini` message's
/// `content` (which the CLI strips before it sends the history), each with its index there.
pub const THOUGHT_PARTS: &str = "thoughtParts";

/// The CLI version whose store this target writes.
pub const CLI_VERSION: &str = "0.61.0";

/// The `gemini-cli` target.
pub(crate) struct GeminiCli;

impl Target for GeminiCli {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::cli_target()
    }

    /// Creates a new session holding `transcript`.
    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        let cwd = new.cwd(transcript).ok_or_else(|| {
            PluginError::InvalidTranscript(
                "no working directory (CreateOptions.cwd or the transcript's cwd): Gemini CLI keys sessions by project".into(),
            )
        })?;
        let project_root = layout::project_root(cwd)?;
        let records = write::records(&transcript.events, 0, None)?;
        if records.is_empty() {
            return Err(nothing_to_resume());
        }
        create_registered(root, &project_root, options, |w| {
            records.iter().try_for_each(|r| write_line(w, r))
        })
    }

    /// [`Target::create`], each turn's records written as the stream closes it, to a spool first
    /// ([`write_streamed`] says why and what it keeps); the chat is made from the spool once
    /// every event is accepted. A refused event or a failed stream leaves the store untouched.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let project_root = layout::project_root(cwd)?;
        let spool = write_streamed::spool(first, events)?;
        if spool.records == 0 {
            return Err(nothing_to_resume());
        }
        create_registered(root, &project_root, options, |w| spool.copy_to(w))
    }

    /// The first line's marker; a file whose first line names another session is `NotFound`.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        let (id, marker) = records::header(&session.path)?;
        if id.as_deref() != Some(session.id.as_str()) {
            return Err(not_this_session(&session));
        }
        Ok(marker)
    }

    /// Appends `events` to a session this plugin wrote.
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let chat = load_checked(&session)?;
        let path = session.path.as_path();
        let last = chat
            .last_message(path)?
            .filter(|m| m.kind() == Some("gemini"))
            .map(|m| (m.line, m.id));
        let existing = read::transcript(path, &chat, None)?;
        let offset = existing.events.len();
        let mut whole = existing;
        whole.events.extend_from_slice(events);
        whole.validate()?;
        let open = match last {
            Some((line, id)) => open_message(path, line, &id, &whole.events[..offset])?,
            None => None,
        };
        let mut records = write::records(events, offset, open)?;
        if records.is_empty() {
            return Ok(());
        }
        records.push(record_types::Rec::Set(record_types::SetRec {
            set: record_types::LastUpdated {
                last_updated: Timestamp::now().to_rfc3339(),
            },
        }));
        atomic::append(path, |w| records.iter().try_for_each(|r| write_line(w, r)))
            .map_err(|e| PluginError::io(path, &e))?;
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        let (path, chat, cwd) = match from {
            Stored::Session(session) => (
                session.session().path.as_path(),
                load_checked(&session)?,
                cwd_of(Some(session.root()), &session.path),
            ),
            Stored::File(path) => (path, chat::index(path)?, cwd_of(None, path)),
        };
        read::each(path, &chat, sink)?;
        Ok(cwd)
    }

    /// The project folder's `.project_root`, as `read_each` finds it for a file (no chat read).
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        Ok(cwd_of(None, path))
    }

    /// The sessions the CLI lists, in every project: a readable file with a session id, resumable
    /// content, not a subagent's; one per id (the newest `lastUpdated`), newest first; each with
    /// the title the CLI lists it under and its project root as cwd.
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let mut best: std::collections::HashMap<String, (i64, SessionInfo)> = Default::default();
        for chats in layout::all_chats_dirs(root)? {
            // One project, one cwd: read once per folder.
            let mut project_cwd: Option<Option<String>> = None;
            for path in layout::session_files(&chats, |_| true)? {
                let Ok(chat) = chat::index(&path) else {
                    continue;
                };
                let Some(id) = chat.session_id().map(str::to_owned) else {
                    continue;
                };
                if chat.is_subagent() || !resumable(&chat, &path).unwrap_or(false) {
                    continue;
                }
                let updated = last_updated(&chat);
                let marker = chat.marker().filter(|m| m.plugin == PLUGIN_NAME);
                let cwd = project_cwd
                    .get_or_insert_with(|| cwd_of(Some(root), &path))
                    .clone();
                let title = list::title(&chat, &path).ok().flatten();
                let info =
                    SessionInfo::of_file(GEMINI_CLI, &id, &path, marker).with_details(title, cwd);
                if best.get(&id).is_none_or(|(u, _)| updated > *u) {
                    best.insert(id, (updated, info));
                }
            }
        }
        let mut sessions: Vec<SessionInfo> = best.into_values().map(|(_, i)| i).collect();
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// The file `gemini --resume <id>` resumes: among the session files of that short id whose
    /// session id is exactly `id` (resumable, not a subagent's), the newest `lastUpdated`, as the
    /// CLI picks it. A missing id is `NotFound`; the same id in two projects is an error.
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let mut found: Option<(i64, std::path::PathBuf)> = None;
        let mut projects = Vec::new();
        if !id.is_empty() {
            for chats in layout::all_chats_dirs(root)? {
                for path in layout::session_files(&chats, |n| layout::may_hold(n, id))? {
                    let Ok(chat) = chat::index(&path) else {
                        continue;
                    };
                    if chat.session_id() != Some(id)
                        || chat.is_subagent()
                        || !resumable(&chat, &path).unwrap_or(false)
                    {
                        continue;
                    }
                    if !projects.contains(&chats) {
                        projects.push(chats.clone());
                    }
                    let updated = last_updated(&chat);
                    if found.as_ref().is_none_or(|(u, _)| updated > *u) {
                        found = Some((updated, path));
                    }
                }
            }
        }
        if projects.len() > 1 {
            return Err(PluginError::Other(format!(
                "session {id} is in more than one project ({}); refusing to guess",
                projects
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let (_, path) = found.ok_or_else(|| PluginError::NotFound {
            target: GEMINI_CLI.to_owned(),
            id: id.to_owned(),
            searched: root.path().join(layout::TMP),
        })?;
        Ok(SessionRef {
            target: GEMINI_CLI.to_owned(),
            id: id.to_owned(),
            path,
        })
    }

    /// `gemini --resume <uuid> -p PROMPT` in the project root, with `GEMINI_CLI_HOME` pointing at the
    /// store root's parent when the root is a `.gemini` folder (the only name the CLI reads).
    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let root = session.root();
        // `resolve` reads this file among the id's: when it picks it, it is this session's file.
        let chosen = self.resolve(root, &session.id);
        if !matches!(&chosen, Ok(c) if c.path == session.path) {
            load_checked(&session)?;
        }
        let chosen = chosen?;
        if chosen.path != session.path {
            return Err(PluginError::Other(format!(
                "gemini --resume {} would resume {}, not {}",
                session.id,
                chosen.path.display(),
                session.path.display()
            )));
        }
        let cwd = cwd_of(Some(root), &session.path).ok_or_else(|| {
            PluginError::Other(format!(
                "{}: no project root is recorded for its project folder (.project_root or projects.json)",
                session.path.display()
            ))
        })?;
        let mut env = Vec::new();
        if root.path().file_name().is_some_and(|n| n == ".gemini") {
            if let Some(home) = root.path().parent() {
                env.push((
                    "GEMINI_CLI_HOME".to_owned(),
                    home.to_string_lossy().into_owned(),
                ));
            }
        }
        let prompt_arg = if prompt.starts_with('-') {
            vec![format!("--prompt={prompt}")]
        } else {
            vec!["--prompt".to_owned(), prompt.to_owned()]
        };
        // Without `--prompt`: the same session in Gemini CLI's own terminal UI.
        let resume = vec!["--resume".to_owned(), session.id.clone()];
        let mut command = ResumeCommand::new("gemini", resume, prompt_arg, Some(cwd.into()));
        command.env = env;
        Ok(ResumePlan::Command(command))
    }
}

fn nothing_to_resume() -> PluginError {
    PluginError::InvalidTranscript(
        "nothing Gemini CLI would resume: it hides a session without conversation and its retention cleanup deletes it".into(),
    )
}

/// Registers `project_root` and creates the chat there (its records written by `records`); a
/// failed create takes back only what this run registered (see `Registration::undo`).
fn create_registered(
    root: &StoreRoot,
    project_root: &str,
    options: &CreateOptions,
    records: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<SessionRef, PluginError> {
    let registration = registry::register(root, project_root)?;
    let created = create_chat(root, &registration.slug, project_root, options, records);
    if created.is_err() {
        registration.undo(root);
    }
    created
}

/// The session file of a create, in the chats of the registered project `short_id`.
fn create_chat(
    root: &StoreRoot,
    short_id: &str,
    project_root: &str,
    options: &CreateOptions,
    records: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<SessionRef, PluginError> {
    let chats = layout::chats_dir(root, short_id)?;
    let id = fresh_id(&chats)?;
    let now = Timestamp::now();
    let minute = layout::minute_stamp(now);
    let path = chats.join(layout::file_name(&minute, &id));
    let marker = OwnershipMarker {
        plugin: PLUGIN_NAME.to_owned(),
        locator: options.locator.clone(),
    };
    let meta = json!({
        "sessionId": id,
        "projectHash": layout::project_hash(project_root),
        "startTime": now.to_rfc3339(),
        "lastUpdated": now.to_rfc3339(),
        "kind": "main",
        MARKER_KEY: marker,
    });
    root.create_file(&path, |w| {
        write_line(w, &meta)?;
        records(w)
    })?;
    Ok(SessionRef {
        target: GEMINI_CLI.to_owned(),
        id,
        path,
    })
}

fn write_line<W: std::io::Write + ?Sized>(
    w: &mut W,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *w, value)?;
    w.write_all(b"\n")
}

/// A v4 UUID whose first and last 8 characters no file in `chats` ends with (the CLI's retention
/// cleanup deletes every file sharing such an ending with an unreadable one), and differ.
fn fresh_id(chats: &Path) -> Result<String, PluginError> {
    loop {
        let id = uuid::Uuid::new_v4().to_string();
        let (first, last) = (layout::short_of(&id), layout::tail_of(&id));
        if first != last
            && layout::session_files(chats, |n| {
                layout::has_short_id(n, &first) || layout::has_short_id(n, &last)
            })?
            .is_empty()
        {
            return Ok(id);
        }
    }
}

/// A session file whose records name another session than the one handed in.
fn not_this_session(session: &SessionRef) -> PluginError {
    PluginError::NotFound {
        target: GEMINI_CLI.to_owned(),
        id: session.id.clone(),
        searched: session.path.clone(),
    }
}

/// The session's file, indexed, when it is the file of that session.
fn load_checked(session: &SessionRef) -> Result<Chat, PluginError> {
    let chat = chat::index(&session.path)?;
    if chat.session_id() != Some(session.id.as_str()) {
        return Err(not_this_session(session));
    }
    Ok(chat)
}

/// The last message (a `gemini` message at `line` with this id), when its calls still wait for
/// results: it is written again, whole, with them.
fn open_message(
    path: &Path,
    line: usize,
    id: &str,
    events: &[Event],
) -> Result<Option<write::Open<'static>>, PluginError> {
    let Some(tail) = events
        .iter()
        .rposition(|e| !matches!(e.body, Body::ToolResult { .. }))
    else {
        return Ok(None);
    };
    let Body::Assistant { content, .. } = &events[tail].body else {
        return Ok(None);
    };
    let answered: Vec<&str> = events[tail + 1..]
        .iter()
        .filter_map(|e| match &e.body {
            Body::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let pending: Vec<ToolCall> = content
        .iter()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(c) if !answered.contains(&c.id.as_str()) => Some(c.clone()),
            _ => None,
        })
        .collect();
    if pending.is_empty() {
        return Ok(None);
    }
    Ok(Some(write::Open {
        record: write::OpenRecord::Existing {
            record: records::raw_message(path, line, id)?,
            changed: false,
        },
        pending,
    }))
}

/// The project root of a session file: its project folder's `.project_root`, else the registry.
fn cwd_of(root: Option<&StoreRoot>, path: &Path) -> Option<String> {
    let dir = layout::project_dir_of(path)?;
    if let Ok(owner) = std::fs::read_to_string(dir.join(layout::PROJECT_ROOT_FILE)) {
        if !owner.trim().is_empty() {
            return Some(owner.trim().to_owned());
        }
    }
    let slug = dir.file_name()?.to_str()?;
    root.and_then(|r| registry::project_root_of(r, slug))
}

/// What the CLI counts as resumable content (`hasResumableConversationContent`): the messages
/// are read up to the first that is.
fn resumable(chat: &Chat, path: &Path) -> Result<bool, PluginError> {
    let mut found = false;
    chat.each_message(path, &mut |m| {
        found = resumable_message(&m);
        Ok(!found)
    })?;
    Ok(found)
}

fn resumable_message(m: &records::Message) -> bool {
    let text = match &m.body.content {
        record_types::ContentIn::None => String::new(),
        record_types::ContentIn::Text(t) => t.clone(),
        record_types::ContentIn::Parts(p) => parts::text_form(p),
    };
    match m.kind() {
        Some("user") => !parts::skipped_user_text(&text),
        Some("gemini") => {
            !text.trim().is_empty() || !m.body.tool_calls.is_empty() || !m.body.thoughts.is_empty()
        }
        _ => false,
    }
}

fn last_updated(chat: &Chat) -> i64 {
    ["lastUpdated", "startTime"]
        .iter()
        .find_map(|k| chat.meta.get(*k).and_then(Value::as_str))
        .and_then(|t| Timestamp::parse(t).ok())
        .map_or(0, Timestamp::millis)
}
