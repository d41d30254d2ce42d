//! The `pi` target: the session store of the pi coding agent 0.73.1.
//!
//! `layout` says where files live, `read` parses a file, `context` finds the conversation on
//! pi's entry tree, `convert` turns it into canonical events, `llm` is what pi sends for its own
//! message kinds, `write` turns events into entry lines, `resume` says how pi resumes a session.
//! Every mapping choice, with its source, is in `docs/formats/pi.md`.

mod accepted;
mod assemble;
mod context;
mod convert;
pub(crate) mod layout;
mod list;
mod llm;
mod read;
mod records;
mod resume;
mod streamed;
pub(crate) mod time;
mod write;

use std::path::Path;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json;
use handoff_sdk::stream_stop;
use handoff_sdk::{
    atomic, Checked, CreateOptions, Event, EventSink, EventStream, New, Owned, PluginError, Result,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored, Target, TargetManifest, Timestamp,
    Transcript,
};

pub use convert::OPAQUE_KEY;
pub use resume::AGENT_DIR_ENV;

/// The target name.
pub const TARGET: &str = "pi";
/// The plugin name (the `plugin` of the ownership marker).
pub const PLUGIN: &str = "pi";
/// pi reads only this many bytes of a file to accept it as a session (`isValidSessionFile`,
/// used by `--continue`): the header line must be whole JSON within them.
pub const HEADER_LIMIT: usize = 512;

/// The `pi` target.
pub(crate) struct Pi;

impl Target for Pi {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::target()
    }

    /// Creates a session holding `transcript` (already checked against the manifest).
    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        write::check_representable(&transcript.events, 0)?;
        let cwd = new.cwd(transcript).ok_or_else(|| {
                PluginError::InvalidTranscript(
                    "a pi session needs a working directory: set CreateOptions.cwd or the transcript's cwd"
                        .into(),
                )
            })?;
        let created = transcript
            .events
            .first()
            .map_or_else(Timestamp::now, |e| e.timestamp);
        let session = NewSession::begin(root, cwd, created, options)?;
        root.create_file(&session.file, |out| {
            session.write_header(out)?;
            write::write_held(out, &transcript.events, 0, NewSession::chain(), true)
        })?;
        Ok(session.into_ref())
    }

    /// [`Target::create`], writing each event as the stream hands it over ([`streamed`] says what
    /// it keeps and when it starts over with the whole transcript). A refused event or a failed
    /// stream removes what was begun.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let session = NewSession::begin(root, cwd, first.timestamp, options)?;
        let written = stream_stop::within(
            |body| root.create_file(&session.file, body),
            |out| {
                session.write_header(out)?;
                streamed::write_stream(out, first, events, NewSession::chain())
            },
        )?;
        match written {
            Ok(()) => Ok(session.into_ref()),
            Err(stop) => stop.answer(&session.file, || self.create(new, events.whole()?)),
        }
    }

    /// The header's marker; a header that names another session is `Malformed`.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        let path = session.path.as_path();
        let header = read::read_header(path)?;
        if header.id != session.id {
            return Err(PluginError::malformed_line(
                path,
                1,
                Some("id"),
                format!("the header says session {}, not {}", header.id, session.id),
            ));
        }
        Ok(header.marker)
    }

    /// Appends `events` to a session this plugin owns, continuing the chain from the leaf (the last
    /// entry in file order, whoever wrote it).
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let path = session.path.as_path();
        let mut whole = Transcript::new(Vec::new());
        let wanted = assemble::Wanted { ids: true };
        let found = assemble::stream(path, wanted, assemble::OpenCalls::AsWritten, &mut |e| {
            whole.events.push(e);
            true
        })?;
        whole.cwd = found.cwd.clone();
        let first = whole.events.len();
        whole.events.extend_from_slice(events);
        whole.validate()?;
        write::check_representable(&whole.events, first)?;
        if !events.is_empty() {
            atomic::append(path, |out| {
                let chain = write::Chain {
                    leaf: found.leaf,
                    model: found.model,
                    ids: write::Ids::new(found.ids),
                };
                write::write_held(out, &whole.events, first, chain, false)
            })
            .map_err(|e| PluginError::io(path, &e))?;
        }
        Ok(())
    }

    /// The file, and its folder when that is left empty.
    fn remove(&self, session: Owned<'_>) -> Result<()> {
        let root = session.root();
        let path = session.path.as_path();
        std::fs::remove_file(path).map_err(|e| PluginError::io(path, &e))?;
        if let Some(dir) = path.parent() {
            if root.check_inside(dir).is_ok() {
                let _ = std::fs::remove_dir(dir);
            }
        }
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        read_each(from.path(), sink)
    }

    /// The session header's cwd (the first line), or the whole read's where the header alone
    /// cannot be read.
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        read_cwd(path)
    }

    /// The sessions of every folder, newest first, each with the title pi's own list shows (the
    /// name its latest `session_info` gives, else the first user text) and its cwd. A file without
    /// a valid header is not a session (pi does not list it either).
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let mut sessions = Vec::new();
        for path in layout::all_files(root)? {
            let Ok(header) = read::read_header(&path) else {
                continue;
            };
            let marker = header.marker.filter(|m| m.plugin == PLUGIN);
            let info = SessionInfo::of_file(TARGET, &header.id, &path, marker);
            let title = list::title(&path);
            sessions.push(info.with_details(title, header.cwd));
        }
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// The newest session of ours marked with `locator`, reading headers only (the engine's lookup
    /// needs no titles).
    fn find_owned(&self, root: &StoreRoot, locator: &str) -> Result<Option<SessionRef>> {
        let mut found: Option<(std::time::SystemTime, SessionRef)> = None;
        for path in layout::all_files(root)? {
            let Ok(header) = read::read_header(&path) else {
                continue;
            };
            let ours = header
                .marker
                .is_some_and(|m| m.plugin == PLUGIN && m.locator.as_deref() == Some(locator));
            if !ours {
                continue;
            }
            let modified = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            if found.as_ref().is_none_or(|(newest, _)| modified > *newest) {
                let session = SessionRef {
                    target: TARGET.to_owned(),
                    id: header.id,
                    path,
                };
                found = Some((modified, session));
            }
        }
        Ok(found.map(|(_, session)| session))
    }

    /// The session with exactly this id.
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let path = layout::find(root, id)?;
        Ok(SessionRef {
            target: TARGET.to_owned(),
            id: id.to_owned(),
            path,
        })
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        resume::plan(session.root(), &session, prompt)
    }
}

/// A session about to be created: its id, its file and its header line.
struct NewSession {
    id: String,
    file: std::path::PathBuf,
    header: Vec<u8>,
}

impl NewSession {
    /// The session of `cwd` created at `created` (its first event's time), marked with
    /// `options.locator`; refused when its header would not fit pi's [`HEADER_LIMIT`].
    fn begin(
        root: &StoreRoot,
        cwd: &str,
        created: Timestamp,
        options: &CreateOptions,
    ) -> Result<Self, PluginError> {
        let id = uuid::Uuid::now_v7().to_string();
        let created_iso = created.to_rfc3339();
        let marker = OwnershipMarker {
            plugin: PLUGIN.to_owned(),
            locator: options.locator.clone(),
        };
        let header = serde_json::to_vec(&records::OutHeader {
            kind: "session",
            version: 3,
            id: &id,
            timestamp: &created_iso,
            cwd,
            marker: &marker,
        })
        .map_err(|e| PluginError::Other(format!("cannot serialise the session header: {e}")))?;
        if header.len() > HEADER_LIMIT {
            return Err(PluginError::Other(format!(
                "the pi session header would be {} bytes (the working directory and the locator make it \
                 long); pi 0.73.1 accepts a session only when its first line is whole within {HEADER_LIMIT} bytes",
                header.len()
            )));
        }
        let file = root.join(&[
            layout::SESSIONS,
            &layout::folder_name(cwd),
            &layout::file_name(&created_iso, &id),
        ])?;
        Ok(NewSession { id, file, header })
    }

    /// The chain a new session's entries start: no parent, no model yet, no ids taken.
    fn chain() -> write::Chain {
        write::Chain {
            leaf: None,
            model: None,
            ids: write::Ids::new([]),
        }
    }

    fn write_header(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.header)?;
        out.write_all(b"\n")
    }

    fn into_ref(self) -> SessionRef {
        SessionRef {
            target: TARGET.to_owned(),
            id: self.id,
            path: self.file,
        }
    }
}

/// Reads a session file, handing each event to `sink` until it returns `false`; returns the
/// working directory.
pub fn read_each(
    path: &Path,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Option<String>, PluginError> {
    Ok(assemble::stream(
        path,
        assemble::Wanted::EVENTS,
        assemble::OpenCalls::Answered,
        sink,
    )?
    .cwd)
}

/// The working directory [`read`] gives: the header's, read alone where it can be.
pub fn read_cwd(path: &Path) -> Result<Option<String>, PluginError> {
    match read::read_header(path) {
        Ok(header) => Ok(header.cwd),
        Err(_) => Ok(read(path)?.cwd),
    }
}

/// Reads a whole session file.
pub fn read(path: &Path) -> Result<Transcript, PluginError> {
    let mut events = Vec::new();
    let found = assemble::stream(
        path,
        assemble::Wanted::EVENTS,
        assemble::OpenCalls::Answered,
        &mut |e| {
            events.push(e);
            true
        },
    )?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = found.cwd;
    Ok(transcript)
}

/// What pi's session list shows for one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub cwd: Option<String>,
    /// The name the latest `session_info` entry gives it (an empty name clears it).
    pub name: Option<String>,
    /// The first user text (pi's "first message").
    pub title: Option<String>,
}

/// pi's listing of one file (`buildSessionInfo`): name from the latest `session_info`, title from
/// the first user message with text (its text blocks joined by a space).
pub fn summary(path: &Path) -> Result<Summary, PluginError> {
    let mut name = None;
    let mut title = None;
    let header = read::each_entry(path, |_, entry| match entry.kind.as_deref() {
        Some("session_info") => {
            name = entry
                .extra
                .iter()
                .find(|(k, _)| k == "name")
                .and_then(|(_, v)| v.as_str())
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned);
        }
        Some("message") if title.is_none() => {
            let Some(message) = &entry.message else {
                return;
            };
            if message.role.as_deref() != Some("user") {
                return;
            }
            let text = match &message.content {
                Some(records::Content::Text(t)) => t.clone(),
                Some(records::Content::Blocks(blocks)) => blocks
                    .iter()
                    .filter(|b| b.kind.as_deref() == Some("text"))
                    .filter_map(|b| b.text.as_deref())
                    .collect::<Vec<_>>()
                    .join(" "),
                None => String::new(),
            };
            if !text.is_empty() {
                title = Some(text);
            }
        }
        _ => {}
    })?;
    Ok(Summary {
        id: header.id,
        cwd: header.cwd,
        name,
        title,
    })
}
