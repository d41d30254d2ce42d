//! A handoff plugin template: one target, `template-notes`, whose native store is one JSON
//! document per session, `<root>/template-notes/<uuid>.json`, holding the ownership marker, the
//! session's cwd and the canonical events.
//!
//! Replace the store with your tool's real one: `write_session` / `read_session` are the two
//! functions that know the format; everything else is the contract every plugin keeps (refuse what
//! the target cannot carry before writing, mark what you create, change only what you marked,
//! resolve ids strictly, never write outside the store root).

use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    atomic, require_owned, session_files, session_lock, sessions_newest_first, CreateOptions,
    Event, Feature, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, TargetKind, TargetManifest, Transcript, Writer,
};
use serde::{Deserialize, Serialize};

/// The plugin's name (also the `plugin` of its ownership marker).
pub const PLUGIN: &str = "template";
/// Its one target.
pub const TARGET: &str = "template-notes";

/// The native document of one session.
#[derive(Serialize, Deserialize)]
struct Document {
    #[serde(rename = "x-handoff")]
    marker: Option<OwnershipMarker>,
    cwd: Option<String>,
    events: Vec<Event>,
}

/// The template plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct TemplatePlugin;

impl Plugin for TemplatePlugin {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: PLUGIN.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            api_requirement: handoff_sdk::API_REQUIREMENT.into(),
            targets: vec![TargetManifest {
                name: TARGET.into(),
                kind: TargetKind::Cli,
                provider: "template".into(),
                // Declare exactly what your store carries; the suite checks that the rest is refused.
                carries: vec![
                    Feature::Text,
                    Feature::ToolCall,
                    Feature::ToolResult,
                    Feature::ToolError,
                ],
                thinking_from: vec![],
                notes: vec!["a template: the canonical events in one JSON document".into()],
                live: None,
                default_root: Some(handoff_sdk::DefaultRoot::handoff_data(TARGET)),
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
    match target {
        TARGET => Ok(()),
        _ => Err(PluginError::UnknownTarget {
            target: target.into(),
        }),
    }
}

fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[TARGET, &format!("{id}.json")])?)
}

fn read_session(path: &Path) -> Result<Document, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    let document: Document =
        handoff_sdk::serde_json::from_slice(&bytes).map_err(|e| PluginError::Malformed {
            file: path.to_owned(),
            line: Some(e.line()),
            field: None,
            message: e.to_string(),
        })?;
    let mut transcript = Transcript::new(document.events.clone());
    transcript.cwd = document.cwd.clone();
    transcript.validate().map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(e.field.clone()),
        message: e.to_string(),
    })?;
    Ok(document)
}

fn write_session(out: &mut dyn std::io::Write, document: &Document) -> std::io::Result<()> {
    handoff_sdk::serde_json::to_writer(&mut *out, document)?;
    out.write_all(b"\n")
}

impl Writer for TemplatePlugin {
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
        let document = Document {
            marker: Some(OwnershipMarker {
                plugin: PLUGIN.into(),
                locator: options.locator.clone(),
            }),
            cwd: options.cwd.clone().or_else(|| transcript.cwd.clone()),
            events: transcript.events.clone(),
        };
        root.create_file(&path, |out| write_session(out, &document))?;
        Ok(SessionRef {
            target: TARGET.into(),
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
        let path = session.check(root, TARGET)?;
        let _lock = session_lock(root, session)?;
        let mut document = read_session(path)?;
        require_owned(path, document.marker.clone(), PLUGIN)?;
        document.events.extend_from_slice(events);
        let whole = Transcript::new(document.events.clone());
        whole.validate()?;
        self.manifest().targets[0].check_carried(&whole)?;
        atomic::replace(path, |out| write_session(out, &document))
            .map_err(|e| PluginError::io(path, &e))?;
        Ok(session.clone())
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        let path = session.check(root, TARGET)?;
        let _lock = session_lock(root, session)?;
        require_owned(path, read_session(path)?.marker, PLUGIN)?;
        std::fs::remove_file(path).map_err(|e| PluginError::io(path, &e))
    }
}

impl Reader for TemplatePlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        self.read_path(TARGET, session.check(root, TARGET)?)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        check_target(target)?;
        let document = read_session(path)?;
        let mut transcript = Transcript::new(document.events);
        transcript.cwd = document.cwd;
        Ok(transcript)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        check_target(target)?;
        let files = session_files(&root.path().join(TARGET), 0, |name| {
            name.strip_suffix(".json")
        })?;
        Ok(sessions_newest_first(TARGET, PLUGIN, files, |path| {
            read_session(path).ok().and_then(|d| d.marker)
        }))
    }
}

impl Resumer for TemplatePlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        let path = session_path(root, id)?;
        if !path.is_file() {
            return Err(PluginError::NotFound {
                target: TARGET.into(),
                id: id.into(),
                searched: root.path().join(TARGET),
            });
        }
        Ok(SessionRef {
            target: TARGET.into(),
            id: id.into(),
            path,
        })
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let path = session.check(root, TARGET)?;
        let document = read_session(path)?;
        // Name the exact session, never "latest": your CLI's resume-by-id command goes here.
        Ok(ResumePlan::Command {
            program: "template-agent".into(),
            args: vec!["--resume".into(), session.id.clone(), prompt.into()],
            env: vec![],
            cwd: document.cwd.map(PathBuf::from),
            close_stdin: true,
        })
    }
}

// The one line that makes the .so a handoff plugin.
handoff_sdk::export_plugin!(TemplatePlugin);
