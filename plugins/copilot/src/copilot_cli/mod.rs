//! The `copilot-cli` target: GitHub Copilot CLI's session-state event logs.

mod layout;
mod read;
mod records;
mod write;

use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::stream_stop;
use handoff_sdk::{
    Checked, Event, EventSink, EventStream, New, Owned, PluginError, Result, ResumeCommand,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored, Target, TargetManifest, Transcript,
};

use layout::{events_path, session_dir};

/// The plugin's name (also the `plugin` of its ownership marker).
pub const PLUGIN: &str = "copilot";
/// Its one target.
pub const TARGET: &str = "copilot-cli";
/// The environment variable Copilot CLI reads its home (the store root) from.
pub const HOME_ENV: &str = "COPILOT_HOME";
/// The folder of the store root that holds one folder per session.
pub const SESSIONS_DIR: &str = "session-state";
/// The event log of a session, in its folder.
pub const EVENTS_FILE: &str = "events.jsonl";

/// The `copilot-cli` target.
pub struct CopilotCli;

impl Target for CopilotCli {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::target()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        let id = uuid::Uuid::new_v4().to_string();
        let path = events_path(root, &id)?;
        let marker = OwnershipMarker {
            plugin: PLUGIN.into(),
            locator: options.locator.clone(),
        };
        let lines = write::session(&id, new.cwd(transcript), &marker, &transcript.events)?;
        root.create_file(&path, |out| write::lines(out, &lines))?;
        Ok(SessionRef {
            target: TARGET.into(),
            id,
            path,
        })
    }

    /// Writes each line as its event arrives ([`write::write_stream`]); a refused event or a
    /// failed stream removes what was begun (the file and the session's folder).
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let id = uuid::Uuid::new_v4().to_string();
        let path = events_path(root, &id)?;
        let marker = OwnershipMarker {
            plugin: PLUGIN.into(),
            locator: options.locator.clone(),
        };
        let written = stream_stop::within(
            |body| root.create_file(&path, body),
            |out| write::write_stream(out, (&id, Some(cwd), &marker), first, events),
        )?;
        match written {
            Ok(()) => Ok(SessionRef {
                target: TARGET.into(),
                id,
                path,
            }),
            // A start-over is not asked for by `write_stream` (nothing it writes needs look-ahead).
            Err(stop) => stop.answer(&path, || self.create(new, events.whole()?)),
        }
    }

    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        let start = read::start(&session.path)?;
        if start.session_id != session.id {
            return Err(PluginError::malformed_line(
                &session.path,
                1,
                Some("data.sessionId"),
                format!(
                    "the log is of session {}, not {}",
                    start.session_id, session.id
                ),
            ));
        }
        Ok(start.marker)
    }

    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        // The new events must fit the ones stored (a result answers a call of the session),
        // read one at a time.
        let mut order = write::CallOrder::default();
        let mut read = read::read_each(&session.path, &mut |stored| {
            // What the reader gives is in the CLI's order already.
            let _ = order.see(&stored.body);
            true
        })?;
        for event in events {
            read.validator.push(event)?;
        }
        let last = read::last_event_id(&session.path)?;
        let lines = write::continuation(Some(last), &mut order, events)?;
        handoff_sdk::atomic::append(&session.path, |out| write::lines(out, &lines))
            .map_err(|e| PluginError::io(&session.path, &e))?;
        Ok(())
    }

    fn remove(&self, session: Owned<'_>) -> Result<()> {
        // The session is its folder (the CLI adds workspace.yaml, checkpoints/ … beside the log),
        // and only a folder named by the session is one.
        let dir = session_dir(&session.path)?;
        if dir.file_name().and_then(|n| n.to_str()) != Some(session.id.as_str()) {
            return Err(PluginError::Other(format!(
                "{} is not the folder of session {}; refusing to remove it",
                dir.display(),
                session.id
            )));
        }
        std::fs::remove_dir_all(dir).map_err(|e| PluginError::io(dir, &e))
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        read::read_each(from.path(), sink).map(|read| read.cwd)
    }

    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        Ok(read::start(path)?.cwd)
    }

    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let files = layout::session_logs(root)?;
        Ok(handoff_sdk::sessions_newest_first(
            TARGET,
            PLUGIN,
            files,
            |path| read::start(path).ok().and_then(|s| s.marker),
        ))
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let path = events_path(root, id)?;
        handoff_sdk::session_at(TARGET, id, path, &root.path().join(SESSIONS_DIR))
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let root = session.root();
        // Read through first: a plan is made only for a session this reader accepts.
        let read = read::read_each(&session.path, &mut |_| true)?;
        // `--resume <full id>` names the exact session (the CLI also matches an id prefix of 7+
        // characters or a session name); `--prompt=` runs the prompt and exits, and keeps a
        // prompt that starts with `-` a prompt (`-p -x` is refused as an unquoted prompt).
        // `copilot --resume <id>`: the same session in Copilot CLI's own terminal UI.
        let resume = vec!["--resume".into(), session.id.clone()];
        let prompt = [format!("--prompt={prompt}")];
        let command = ResumeCommand::new("copilot", resume, prompt, read.cwd.map(PathBuf::from))
            .with_env(HOME_ENV, root.path().to_string_lossy());
        Ok(ResumePlan::Command(command))
    }
}
