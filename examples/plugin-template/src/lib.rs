//! A handoff plugin template: one target, `template-notes`, whose native store is one JSON
//! document per session, `<root>/template-notes/<uuid>.json`, holding the ownership marker, the
//! session's cwd and the canonical events.
//!
//! Replace the store with your tool's real one: this file is only the format (the SDK dispatches,
//! checks what it is handed and what is to be written, locks and checks the owner, and keeps the
//! ids, paths and listing of a store of one file per id).

use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::Feature::{Text, ToolCall, ToolError, ToolResult};
use handoff_sdk::{
    atomic, each_event, load_json, write_json_line, Checked, DefaultRoot, Event, EventSink,
    FilePerId, New, Owned, PluginError, Result, ResumeCommand, ResumePlan, SessionInfo, SessionRef, StoreRoot,
    Stored, Target, TargetKind, TargetManifest, Transcript,
};
use serde::{Deserialize, Serialize};

/// The plugin's name (also the `plugin` of its ownership marker).
pub const PLUGIN: &str = "template";
/// Its one target.
pub const TARGET: &str = "template-notes";
/// Where its sessions are: `<root>/template-notes/<id>.json`.
const STORE: FilePerId = FilePerId::new(PLUGIN, TARGET, ".json");

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

/// A session file read whole, its events held to the transcript's rules.
fn read(path: &Path) -> Result<Transcript> {
    let document: Document = load_json(path)?;
    let mut transcript = Transcript::new(document.events);
    transcript.cwd = document.cwd;
    transcript
        .validate()
        .map_err(|e| PluginError::invalid_in(path, &e))?;
    Ok(transcript)
}

impl Target for Notes {
    fn manifest(&self) -> TargetManifest {
        // Declare exactly what your store carries; the SDK refuses the rest before writing.
        let carries = vec![Text, ToolCall, ToolResult, ToolError];
        TargetManifest::new(TARGET, TargetKind::Cli, "template", carries)
            .with_note("a template: the canonical events in one JSON document")
            .with_default_root(DefaultRoot::handoff_data(TARGET))
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let session = STORE.new_session(new.root)?;
        let document = Document {
            marker: Some(STORE.marker(new.options)),
            cwd: new.cwd(transcript).map(str::to_owned),
            events: transcript.events.clone(),
        };
        new.root
            .create_file(&session.path, |out| write_json_line(out, &document))?;
        Ok(session)
    }

    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        Ok(load_json::<Document>(&session.path)?.marker)
    }

    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let mut document: Document = load_json(&session.path)?;
        document.events.extend_from_slice(events);
        // The new events must fit the ones stored (a result answers a call of the session).
        Transcript::new(document.events.clone()).validate()?;
        atomic::replace(&session.path, |out| write_json_line(out, &document))
            .map_err(|e| PluginError::io(&session.path, &e))?;
        Ok(())
    }

    /// A long format hands each event on as it reads it; this one is read whole.
    fn read_each(&self, at: Stored, sink: EventSink) -> Result<Option<String>> {
        Ok(each_event(read(at.path())?, sink))
    }

    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        STORE.list(root, |path| load_json::<Document>(path).ok()?.marker)
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        STORE.resolve(root, id)
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        // Name the exact session, never "latest": your CLI's resume-by-id arguments (alone, they
        // open it in the CLI's own interactive UI), then those that send the prompt headless.
        let resume = vec!["--resume".into(), session.id.clone()];
        let cwd = read(&session.path)?.cwd.map(PathBuf::from);
        let command = ResumeCommand::new("template-agent", resume, [prompt.into()], cwd);
        Ok(ResumePlan::Command(command))
    }
}

// The one line that makes the .so a handoff plugin.
handoff_sdk::export_plugin!(TemplatePlugin);
