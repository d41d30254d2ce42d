//! The `qwen-code` target: create, append, read, list, resolve and the resume plan.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::stream_stop;
use handoff_sdk::{
    atomic, Body, Checked, CreateOptions, Event, EventSink, EventStream, IdDigest, New, Owned,
    PluginError, Result, ResumeCommand, ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored,
    Target, TargetManifest, Transcript, Validator,
};

use crate::chain::{self, Head, Index};
use crate::layout;
use crate::manifest::{target_manifest, PLUGIN_NAME, QWEN_CODE};
use crate::read;
use crate::write::{self, write_line, Session};

/// The `qwen-code` target.
pub(crate) struct QwenCode;

impl Target for QwenCode {
    fn manifest(&self) -> TargetManifest {
        target_manifest()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        let cwd = new.cwd(transcript).ok_or_else(|| {
            PluginError::InvalidTranscript(
                "no working directory (CreateOptions.cwd or the transcript's cwd): Qwen Code keys sessions by it".into(),
            )
        })?;
        let new_session = NewSession::at(root, cwd, options)?;
        let records = write::records(&transcript.events, 0, HashMap::new(), new_session.session())?;
        if records.is_empty() {
            return Err(PluginError::InvalidTranscript(
                "no event: Qwen Code resumes no session without a conversation record".into(),
            ));
        }
        root.create_file(&new_session.path, |w| {
            records.iter().try_for_each(|r| write_line(w, r))
        })?;
        Ok(new_session.into_ref())
    }

    /// Writes each record as its event arrives ([`write::write_stream`]); a refused event or a
    /// failed stream removes what was begun.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let new_session = NewSession::at(root, cwd, options)?;
        let written = stream_stop::within(
            |body| root.create_file(&new_session.path, body),
            |out| write::write_stream(out, first, events, new_session.session()),
        )?;
        match written {
            Ok(()) => Ok(new_session.into_ref()),
            // A start-over is not asked for by `write_stream` (nothing it writes needs look-ahead).
            Err(stop) => stop.answer(&new_session.path, || self.create(new, events.whole()?)),
        }
    }

    /// The first record's marker; a file whose records name another session is `NotFound`.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        Ok(head_checked(&session)?.marker())
    }

    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        // The new events must fit the ones stored (a result answers a call of the session), read
        // as written one at a time; what a result may answer is a call still open.
        let index = index_checked(&session)?;
        let mut validator = Validator::<IdDigest>::with_capacity(0);
        let mut open_calls: HashMap<String, String> = HashMap::new();
        let mut invalid = None;
        read::each(&session.path, &index, false, &mut |stored| {
            if let Body::ToolResult { call_id, .. } = &stored.body {
                open_calls.remove(call_id);
            }
            open_calls.extend(
                write::tool_calls(&stored).map(|(id, name)| (id.to_owned(), name.to_owned())),
            );
            invalid = validator.push(&stored).err();
            invalid.is_none()
        })?;
        if let Some(e) = invalid {
            return Err(e.into());
        }
        let stored = validator.checked();
        for event in events {
            validator.push(event)?;
        }
        let cwd = index.head.cwd().unwrap_or_default().to_owned();
        let records = write::records(
            events,
            stored,
            open_calls,
            Session {
                id: &session.id,
                cwd: &cwd,
                parent: index.leaf().map(str::to_owned),
                marker: None,
            },
        )?;
        if !records.is_empty() {
            atomic::append(&session.path, |w| {
                records.iter().try_for_each(|r| write_line(w, r))
            })
            .map_err(|e| PluginError::io(&session.path, &e))?;
        }
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        let (path, index) = match from {
            Stored::Session(session) => {
                (session.session().path.as_path(), index_checked(&session)?)
            }
            Stored::File(path) => (path, Index::of(path)?),
        };
        read::each(path, &index, true, sink)?;
        Ok(index.head.cwd().map(str::to_owned))
    }

    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        Ok(first_record(path)?
            .and_then(|r| r.get("cwd").and_then(Value::as_str).map(str::to_owned)))
    }

    /// Every chat file of every project, newest first, with its working directory and its first
    /// prompt as title; owned when its first record carries this plugin's marker.
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let mut sessions: Vec<SessionInfo> = layout::all_sessions(root)?
            .into_iter()
            .map(|(id, path)| {
                let (first, title) = head(&path).unwrap_or_default();
                let marker = first.as_ref().and_then(OwnershipMarker::find);
                let marker = handoff_sdk::own_marker(marker, PLUGIN_NAME);
                let cwd = first
                    .as_ref()
                    .and_then(|r| r.get("cwd").and_then(Value::as_str).map(str::to_owned));
                SessionInfo::of_file(QWEN_CODE, &id, &path, marker).with_details(title, cwd)
            })
            .collect();
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// The chat file named by `id`; the same id in two projects is an error (the CLI would
    /// resume the one of the directory it runs in).
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let found: Vec<PathBuf> = layout::all_sessions(root)?
            .into_iter()
            .filter(|(i, _)| i == id)
            .map(|(_, p)| p)
            .collect();
        match found.as_slice() {
            [path] => Ok(SessionRef {
                target: QWEN_CODE.to_owned(),
                id: id.to_owned(),
                path: path.clone(),
            }),
            [] => Err(PluginError::NotFound {
                target: QWEN_CODE.to_owned(),
                id: id.to_owned(),
                searched: root.path().join(layout::PROJECTS),
            }),
            several => Err(PluginError::Other(format!(
                "session {id} is in more than one project ({}); refusing to guess",
                several
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// `qwen --resume <id> -p PROMPT` in the session's working directory, with
    /// `QWEN_RUNTIME_DIR` set to the store root (where Qwen Code looks for projects).
    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let root = session.root();
        let head = head_checked(&session)?;
        let cwd = head.cwd().ok_or_else(|| PluginError::Malformed {
            file: session.path.clone(),
            line: head.line(),
            field: Some("cwd".into()),
            message: "missing: Qwen Code resumes a session only in its working directory".into(),
        })?;
        let expected = layout::session_path(root, cwd, &session.id)?;
        if expected != session.path {
            return Err(PluginError::Other(format!(
                "qwen --resume {} in {cwd} would look for {}, not {}",
                session.id,
                expected.display(),
                session.path.display()
            )));
        }
        let prompt_arg = if prompt.starts_with('-') {
            vec![format!("--prompt={prompt}")]
        } else {
            vec!["-p".to_owned(), prompt.to_owned()]
        };
        // Without the prompt: the same session in Qwen Code's own terminal UI.
        let resume = vec!["--resume".to_owned(), session.id.clone()];
        let command = ResumeCommand::new("qwen", resume, prompt_arg, Some(cwd.into()))
            .with_env("QWEN_RUNTIME_DIR", root.path().to_string_lossy());
        Ok(ResumePlan::Command(command))
    }
}

/// The head of the session's file, when its records are that session's.
fn head_checked(session: &SessionRef) -> Result<Head, PluginError> {
    let head = chain::scan(&session.path, |_, _| {})?;
    is_the_session(&head, session)?;
    Ok(head)
}

/// The session's file, indexed, when its records are that session's.
fn index_checked(session: &SessionRef) -> Result<Index, PluginError> {
    let index = Index::of(&session.path)?;
    is_the_session(&index.head, session)?;
    Ok(index)
}

/// A file whose records name another session is not this session's: `NotFound`.
fn is_the_session(head: &Head, session: &SessionRef) -> Result<(), PluginError> {
    if head.session_id() != Some(session.id.as_str()) {
        return Err(PluginError::NotFound {
            target: QWEN_CODE.to_owned(),
            id: session.id.clone(),
            searched: session.path.clone(),
        });
    }
    Ok(())
}

/// The first record of a chat file and the first line of its first prompt's text (read up to
/// that prompt only).
fn head(path: &Path) -> Result<(Option<Value>, Option<String>), PluginError> {
    use std::io::BufRead as _;
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut first = None;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| PluginError::io(path, &e))?;
        let Ok(record) = serde_json::from_str::<Value>(line.trim_start_matches('\u{feff}')) else {
            continue;
        };
        if !record.is_object() {
            continue;
        }
        let text = (record["type"] == "user")
            .then(|| record["message"]["parts"].as_array())
            .flatten()
            .and_then(|parts| parts.iter().find_map(|p| p["text"].as_str()))
            .and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
            .map(|t| t.trim().to_owned());
        first.get_or_insert_with(|| record.clone());
        if text.is_some() {
            return Ok((first, text));
        }
    }
    Ok((first, None))
}

/// The first line of a chat file, as JSON (`None`: an empty file or a first line that is no
/// JSON object).
fn first_record(path: &Path) -> Result<Option<Value>, PluginError> {
    use std::io::BufRead as _;
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut line = String::new();
    std::io::BufReader::new(file)
        .read_line(&mut line)
        .map_err(|e| PluginError::io(path, &e))?;
    Ok(serde_json::from_str::<Value>(&line)
        .ok()
        .filter(Value::is_object))
}

/// A session about to be created: its id, project root, file and marker.
struct NewSession {
    id: String,
    cwd: String,
    path: PathBuf,
    marker: OwnershipMarker,
}

impl NewSession {
    fn at(root: &StoreRoot, cwd: &str, options: &CreateOptions) -> Result<Self, PluginError> {
        let cwd = layout::project_root(cwd)?;
        let id = uuid::Uuid::new_v4().to_string();
        let path = layout::session_path(root, &cwd, &id)?;
        Ok(NewSession {
            id,
            cwd,
            path,
            marker: OwnershipMarker {
                plugin: PLUGIN_NAME.to_owned(),
                locator: options.locator.clone(),
            },
        })
    }

    fn session(&self) -> Session<'_> {
        Session {
            id: &self.id,
            cwd: &self.cwd,
            parent: None,
            marker: Some(&self.marker),
        }
    }

    fn into_ref(self) -> SessionRef {
        SessionRef {
            target: QWEN_CODE.to_owned(),
            id: self.id,
            path: self.path,
        }
    }
}
