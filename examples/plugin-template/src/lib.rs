//! A handoff plugin template: one target, `template-notes`, whose native store is one JSON
//! document per session, `<root>/template-notes/<uuid>.json`, holding the ownership marker, the
//! session's cwd and the canonical events.
//!
//! Replace the store with your tool's real one: this file is only the format (the SDK dispatches,
//! checks what it is handed and what is to be written, locks and checks the owner).

use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    atomic, serde_json, session_files, sessions_newest_first, CreateOptions, Event, Feature,
    PluginError, ResumePlan, SessionInfo, SessionRef, StoreRoot, Target, TargetKind,
    TargetManifest, Transcript,
};
use serde::{Deserialize, Serialize};

/// The plugin's name (also the `plugin` of its ownership marker).
pub const PLUGIN: &str = "template";
/// Its one target.
pub const TARGET: &str = "template-notes";

/// The template plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct TemplatePlugin;
handoff_sdk::targets!(TemplatePlugin, PLUGIN, [Notes]);

/// The `template-notes` target.
struct Notes;

/// The native document of one session.
#[derive(Serialize, Deserialize)]
struct Document {
    #[serde(rename = "x-handoff")]
    marker: Option<OwnershipMarker>,
    cwd: Option<String>,
    events: Vec<Event>,
}

fn load(path: &Path) -> Result<Document, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    serde_json::from_slice(&bytes).map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: Some(e.line()),
        field: None,
        message: e.to_string(),
    })
}

fn write(out: &mut dyn std::io::Write, document: &Document) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, document)?;
    out.write_all(b"\n")
}

impl Target for Notes {
    fn name(&self) -> &'static str {
        TARGET
    }

    fn manifest(&self) -> TargetManifest {
        TargetManifest {
            name: TARGET.into(),
            kind: TargetKind::Cli,
            provider: "template".into(),
            // Declare exactly what your store carries; the SDK refuses the rest before writing.
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
        }
    }

    fn create(
        &self,
        root: &StoreRoot,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let id = uuid::Uuid::new_v4().to_string();
        let path = root.join(&[TARGET, &format!("{id}.json")])?;
        let document = Document {
            marker: Some(OwnershipMarker {
                plugin: PLUGIN.into(),
                locator: options.locator.clone(),
            }),
            cwd: options.cwd.clone().or_else(|| transcript.cwd.clone()),
            events: transcript.events.clone(),
        };
        root.create_file(&path, |out| write(out, &document))?;
        Ok(SessionRef {
            target: TARGET.into(),
            id,
            path,
        })
    }

    fn owner(
        &self,
        _root: &StoreRoot,
        session: &SessionRef,
    ) -> Result<Option<OwnershipMarker>, PluginError> {
        Ok(load(&session.path)?.marker)
    }

    fn append(
        &self,
        _root: &StoreRoot,
        session: &SessionRef,
        _marker: &OwnershipMarker,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let mut document = load(&session.path)?;
        document.events.extend_from_slice(events);
        // The new events must fit the ones stored (a result answers a call of the session).
        Transcript::new(document.events.clone()).validate()?;
        atomic::replace(&session.path, |out| write(out, &document))
            .map_err(|e| PluginError::io(&session.path, &e))?;
        Ok(session.clone())
    }

    fn read_path(&self, path: &Path) -> Result<Transcript, PluginError> {
        let document = load(path)?;
        let mut transcript = Transcript::new(document.events);
        transcript.cwd = document.cwd;
        transcript.validate().map_err(|e| PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: Some(e.field.clone()),
            message: e.to_string(),
        })?;
        Ok(transcript)
    }

    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
        let dir = root.path().join(TARGET);
        let files = session_files(&dir, 0, |name| name.strip_suffix(".json"))?;
        Ok(sessions_newest_first(TARGET, PLUGIN, files, |path| {
            load(path).ok().and_then(|d| d.marker)
        }))
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
        let path = root.join(&[TARGET, &format!("{id}.json")])?;
        handoff_sdk::session_at(TARGET, id, path, &root.path().join(TARGET))
    }

    fn plan(
        &self,
        _root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        // Name the exact session, never "latest": your CLI's resume-by-id command goes here.
        Ok(ResumePlan::Command {
            program: "template-agent".into(),
            args: vec!["--resume".into(), session.id.clone(), prompt.into()],
            env: vec![],
            cwd: self.read_path(&session.path)?.cwd.map(PathBuf::from),
            close_stdin: true,
            // And the command that opens the session in your CLI's own interactive UI.
            interactive_args: Some(vec!["--resume".into(), session.id.clone()]),
        })
    }
}

// The one line that makes the .so a handoff plugin.
handoff_sdk::export_plugin!(TemplatePlugin);
