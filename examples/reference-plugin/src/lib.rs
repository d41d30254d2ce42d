//! The reference plugin: the simplest complete handoff plugin.
//!
//! Its native store is the canonical transcript itself, as JSONL under
//! `<root>/reference/<uuid>.jsonl`: a header line (id, cwd, ownership marker), then one canonical
//! event per line. It exists to show a plugin author the whole contract in one small file, and to
//! prove that the conformance suite passes a correct plugin (its broken variants, in the suite's
//! tests, prove each check can fail).

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::{
    atomic, CreateOptions, DefaultRoot, Event, Feature, Manifest, Plugin, PluginError, Reader,
    ResumePlan, Resumer, SessionInfo, SessionRef, StoreRoot, TargetKind, TargetManifest,
    Transcript, Writer,
};
use serde::{Deserialize, Serialize};

/// The plugin's name; also its one target's name.
pub const NAME: &str = "reference";
const DIR: &str = "reference";

/// The reference plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferencePlugin;

#[derive(Serialize, Deserialize)]
struct Header {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(rename = "x-handoff", default, skip_serializing_if = "Option::is_none")]
    marker: Option<OwnershipMarker>,
}

impl Plugin for ReferencePlugin {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            api_requirement: "^1".into(),
            targets: vec![TargetManifest {
                name: NAME.into(),
                kind: TargetKind::Cli,
                provider: "reference".into(),
                carries: Feature::ALL.to_vec(),
                thinking_from: vec!["anthropic".into(), "openai".into(), "google".into()],
                notes: vec!["stores the canonical transcript as JSONL; carries everything".into()],
                live: None,
                // A store only handoff keeps, so its default lives in handoff's data directory.
                default_root: Some(DefaultRoot::handoff_data(NAME)),
                dialect: None,
            }],
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

fn check_target(target: &str) -> Result<(), PluginError> {
    if target == NAME {
        Ok(())
    } else {
        Err(PluginError::UnknownTarget {
            target: target.into(),
        })
    }
}

fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[DIR, &format!("{id}.jsonl")])?)
}

fn write_events(out: &mut dyn Write, events: &[Event]) -> std::io::Result<()> {
    for event in events {
        serde_json::to_writer(&mut *out, event)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

impl Writer for ReferencePlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        transcript.validate()?;
        self.manifest().targets[0].check_carried(transcript)?;
        let id = uuid::Uuid::new_v4().to_string();
        let path = session_path(root, &id)?;
        let header = Header {
            kind: "header".into(),
            id: id.clone(),
            cwd: options.cwd.clone().or_else(|| transcript.cwd.clone()),
            marker: Some(OwnershipMarker {
                plugin: NAME.into(),
                locator: options.locator.clone(),
            }),
        };
        // Whole or nothing: no half-written file and no new empty folder on failure.
        root.create_file(&path, |out| {
            serde_json::to_writer(&mut *out, &header)?;
            out.write_all(b"\n")?;
            write_events(out, &transcript.events)
        })?;
        Ok(SessionRef {
            target: NAME.into(),
            id,
            path,
        })
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        session.check(root, NAME)?;
        let session = session.clone();
        let (header, mut transcript) = read_file(&session.path)?;
        require_owned(&header, &session.path)?;
        transcript.events.extend_from_slice(events);
        transcript.validate()?;
        self.manifest().targets[0].check_carried(&transcript)?;
        atomic::append(&session.path, |out| write_events(out, events))
            .map_err(|e| PluginError::io(&session.path, &e))?;
        Ok(session)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        session.check(root, NAME)?;
        let (header, _) = read_file(&session.path)?;
        require_owned(&header, &session.path)?;
        std::fs::remove_file(&session.path).map_err(|e| PluginError::io(&session.path, &e))
    }
}

fn require_owned(header: &Header, path: &Path) -> Result<(), PluginError> {
    match &header.marker {
        Some(m) if m.plugin == NAME => Ok(()),
        _ => Err(PluginError::NotOwned {
            path: path.to_owned(),
        }),
    }
}

/// Reads a session file: the header, then one event per line. Any bad line is an error naming the
/// file, the line and (where serde knows it) the field; a torn last line is an error too.
fn read_file(path: &Path) -> Result<(Header, Transcript), PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let torn = ends_torn(&file).map_err(|e| PluginError::io(path, &e))?;
    let bad = |line: usize, message: String| PluginError::malformed_line(path, line, None, message);
    let mut lines = BufReader::new(file).split(b'\n').peekable();
    let mut header: Option<Header> = None;
    let mut events = Vec::new();
    let mut number = 0;
    while let Some(line) = lines.next() {
        number += 1;
        let line = line.map_err(|e| PluginError::io(path, &e))?;
        if torn && lines.peek().is_none() {
            return Err(bad(
                number,
                "the last line is torn (no final newline)".into(),
            ));
        }
        let text =
            std::str::from_utf8(&line).map_err(|e| bad(number, format!("not UTF-8: {e}")))?;
        if number == 1 {
            let h: Header = serde_json::from_str(text).map_err(|e| bad(number, e.to_string()))?;
            if h.kind != "header" {
                return Err(bad(number, "the first line is not a header".into()));
            }
            header = Some(h);
        } else {
            events
                .push(serde_json::from_str::<Event>(text).map_err(|e| bad(number, e.to_string()))?);
        }
    }
    let header = header.ok_or_else(|| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: None,
        message: "the file is empty".into(),
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = header.cwd.clone();
    transcript.validate().map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(e.field.clone()),
        message: e.to_string(),
    })?;
    Ok((header, transcript))
}

/// Whether a non-empty file lacks its final newline (a torn write).
fn ends_torn(mut file: &File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(last[0] != b'\n')
}

impl Reader for ReferencePlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        Ok(read_file(session.check(root, NAME)?)?.1)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        check_target(target)?;
        Ok(read_file(path)?.1)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        check_target(target)?;
        let dir = root.path().join(DIR);
        let mut sessions = Vec::new();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(sessions);
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            let Ok((header, _)) = read_file(&path) else {
                continue;
            };
            let marker = header.marker.filter(|m| m.plugin == NAME);
            sessions.push(SessionInfo::of_file(NAME, id, &path, marker));
        }
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }
}

impl Resumer for ReferencePlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        let path = session_path(root, id)?;
        if path.is_file() {
            Ok(SessionRef {
                target: NAME.into(),
                id: id.into(),
                path,
            })
        } else {
            Err(PluginError::NotFound {
                target: NAME.into(),
                id: id.into(),
                searched: root.path().join(DIR),
            })
        }
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        session.check(root, NAME)?;
        let (header, _) = read_file(&session.path)?;
        Ok(ResumePlan::Command {
            program: "handoff-reference-agent".into(),
            args: vec![
                "--session".into(),
                session.path.display().to_string(),
                prompt.into(),
            ],
            env: Vec::new(),
            cwd: header.cwd.map(PathBuf::from),
            close_stdin: true,
        })
    }
}

// Keep the marker key and the header field name in step.
const _: () = assert!(matches!(MARKER_KEY.as_bytes(), b"x-handoff"));

// Registers the plugin with a host that links this crate; `so/` exports it as a shared library.
handoff_sdk::register_builtin!(ReferencePlugin);
