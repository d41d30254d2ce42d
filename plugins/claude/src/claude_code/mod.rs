//! The `claude-code` target: Claude Code's project JSONL, `<root>/projects/<cwd
//! slug>/<uuid>.jsonl`.
//!
//! [`layout`] says where sessions live, [`records`] what their lines are, [`read`] turns a file
//! into a transcript and [`write`] a transcript into records; this module is the target's
//! operations over them.

mod layout;
mod list;
mod read;
mod records;
mod streamed;
mod write;

use std::path::{Path, PathBuf};

use handoff_sdk::atomic;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::stream_stop;
use handoff_sdk::{
    own_marker, sessions_newest_first, Checked, CreateOptions, Event, EventSink, EventStream, New,
    Owned, PluginError, ReadFrom, ReadOutcome, Result, ResumeCommand, ResumePlan, SessionInfo,
    SessionRef, StoreRoot, Stored, Target, TargetManifest, Transcript, WrittenFile,
};

use crate::manifest::{CLAUDE_CODE, PLUGIN_NAME};
pub use read::ReadRules;
use records::SessionMembers;
use write::{precheck, write_events, ChainState, RecordWriter};

/// The `claude-code` target.
pub(crate) struct ClaudeCode;

impl Target for ClaudeCode {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::claude_code()
    }

    /// Creates a new session file holding `transcript` (checked by the SDK, or by the engine event
    /// by event).
    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        if !transcript.events.iter().any(write::is_written) {
            return Err(empty_conversation());
        }
        precheck(&transcript.events, 0)?;
        let cwd = new.cwd(transcript).ok_or_else(|| PluginError::InvalidTranscript("claude-code needs the session's cwd (CreateOptions::cwd or the transcript's cwd): Claude Code keys sessions by it".into()))?;
        let session = NewSession::at(root, cwd, options)?;
        root.create_file(&session.path, |out| {
            write_events(
                out,
                &session.members(),
                &mut ChainState::default(),
                &transcript.events,
                Some(&session.marker),
            )
        })?;
        Ok(session.into_ref())
    }

    /// Creates a new session file from `events` as they arrive, checking each before its records
    /// are written; what needs look-ahead starts over with [`Target::create`] ([`streamed`] says
    /// when).
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some(cwd) = options.cwd.as_deref() else {
            return self.create(new, events.whole()?);
        };
        let session = NewSession::at(root, cwd, options)?;
        let created = stream_stop::within(
            |body| root.create_file(&session.path, body),
            |out| {
                let members = session.members();
                let mut chain = ChainState::default();
                let mut writer =
                    RecordWriter::new(out, &members, &mut chain, Some(&session.marker));
                streamed::write_stream(&mut writer, events)?;
                Ok(writer.finish()?)
            },
        )?;
        match created {
            Ok(()) => Ok(session.into_ref()),
            Err(stop) => stop.answer(&session.path, || self.create(new, events.whole()?)),
        }
    }

    /// The marker of the file's first record.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        Ok(read::marker(&session.path))
    }

    /// Appends `events` to a session this plugin made, continuing its chain.
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let path = session.path.as_path();
        let existing = read::read_session(path)?;
        let from = existing.transcript.events.len();
        let mut whole = existing.transcript;
        whole.events.extend_from_slice(events);
        whole.validate()?;
        precheck(&whole.events, from)?;
        let cwd = whole.cwd.clone().ok_or_else(|| {
            PluginError::malformed_line(path, 1, Some("cwd"), "no record names the session's cwd")
        })?;
        let file_id = existing.session_id.unwrap_or_else(|| session.id.to_owned());
        let mut chain = existing.chain;
        let members = SessionMembers {
            id: &file_id,
            cwd: &cwd,
        };
        atomic::append(path, |out| {
            write_events(out, &members, &mut chain, events, None)
        })
        .map_err(|e| PluginError::io(path, &e))?;
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        read::read_each(from.path(), ReadRules::default(), sink)
    }

    /// As that Claude Code version sends the session ([`ReadRules::for_version`]); without
    /// one, as the newest end of the verified range does.
    fn read_each_as(
        &self,
        from: Stored<'_>,
        cli_version: Option<&str>,
        sink: EventSink<'_>,
    ) -> Result<Option<String>> {
        read::read_each(from.path(), ReadRules::of(cli_version), sink)
    }

    /// The index loaded as the file grows.
    fn read_written(&self, file: &dyn WrittenFile, sink: EventSink<'_>) -> Result<ReadOutcome> {
        self.read_written_as(file, None, sink)
    }

    /// As [`Target::read_each_as`] reads: the version's rules.
    fn read_written_as(
        &self,
        file: &dyn WrittenFile,
        cli_version: Option<&str>,
        sink: EventSink<'_>,
    ) -> Result<ReadOutcome> {
        read::read_written_each(file, ReadRules::of(cli_version), sink).map(|()| ReadOutcome::Read)
    }

    /// From the first conversation records only (a file that holds a malformed line after them is
    /// an error for `read_each` but not here).
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        read::session_cwd(path)
    }

    /// Every session in the store, newest first, with the title and cwd Claude Code's own list
    /// shows (read from each file's head and tail only, see [`list`]).
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let files = layout::session_files(root)?;
        let mut sessions: Vec<SessionInfo> = files
            .into_iter()
            .map(|(id, path)| {
                let details = list::details(&path);
                let marker = own_marker(details.marker, PLUGIN_NAME);
                SessionInfo::of_file(CLAUDE_CODE, &id, &path, marker)
                    .with_details(details.title, details.cwd)
            })
            .collect();
        SessionInfo::sort_newest_first(&mut sessions);
        Ok(sessions)
    }

    /// The newest session of ours marked with `locator`, reading first records only (the engine's
    /// lookup needs no titles).
    fn find_owned(&self, root: &StoreRoot, locator: &str) -> Result<Option<SessionRef>> {
        let files = layout::session_files(root)?;
        let listing = sessions_newest_first(CLAUDE_CODE, PLUGIN_NAME, files, read::marker);
        Ok(SessionInfo::newest_owned(listing, locator))
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        layout::resolve(root, id)
    }

    /// `claude -p --resume <id> PROMPT`, run in the session's cwd (Claude Code looks for the id only in
    /// that cwd's project folder).
    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let root = session.root();
        let path = session.path.as_path();
        let id = session.id.as_str();
        let Some(cwd) = read::session_cwd(path)? else {
            if read::only_sidechain_records(path)? {
                return Err(PluginError::Other(format!(
                    "{}: a subagent's thread (sidechain records only), which Claude Code does not \
                     resume (\"No conversation found with session ID\"); it reads, and continues into \
                     any target",
                    path.display()
                )));
            }
            return Err(PluginError::malformed_line(
                path,
                1,
                Some("cwd"),
                "no record names the session's cwd",
            ));
        };
        let expected = layout::session_path(root, &cwd, id)?;
        if expected != path {
            return Err(PluginError::Other(format!(
                "{}: the records say cwd {cwd:?}, whose project folder is {}; Claude Code would not find the session",
                path.display(),
                expected.parent().map(|p| p.display().to_string()).unwrap_or_default()
            )));
        }
        // `claude --resume <id>`: the same session in Claude Code's own terminal UI.
        let session = vec!["--resume".to_owned(), id.to_owned()];
        let mut command =
            ResumeCommand::new("claude", session, prompt_args(prompt), Some(cwd.into()))
                .headless_after(&["-p"]);
        command.env = config_dir_env(root, |var| std::env::var_os(var));
        Ok(ResumePlan::Command(command))
    }
}

/// The refusal of a transcript with nothing to write.
fn empty_conversation() -> PluginError {
    PluginError::InvalidTranscript(
        "claude-code cannot hold an empty conversation: Claude Code finds no session without a message".into(),
    )
}

/// A session about to be created: its id, its file and its marker.
struct NewSession<'c> {
    id: String,
    cwd: &'c str,
    path: PathBuf,
    marker: OwnershipMarker,
}

impl<'c> NewSession<'c> {
    /// A session id in `cwd`'s project folder, which must be absolute.
    fn at(root: &StoreRoot, cwd: &'c str, options: &CreateOptions) -> Result<Self, PluginError> {
        if !cwd.starts_with('/') {
            return Err(PluginError::InvalidTranscript(format!(
                "claude-code needs an absolute cwd, not {cwd:?}"
            )));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let path = layout::session_path(root, cwd, &id)?;
        let marker = OwnershipMarker {
            plugin: PLUGIN_NAME.to_owned(),
            locator: options.locator.clone(),
        };
        Ok(NewSession {
            id,
            cwd,
            path,
            marker,
        })
    }

    fn members(&self) -> SessionMembers<'_> {
        SessionMembers {
            id: &self.id,
            cwd: self.cwd,
        }
    }

    fn into_ref(self) -> SessionRef {
        SessionRef {
            target: CLAUDE_CODE.to_owned(),
            id: self.id,
            path: self.path,
        }
    }
}

/// The prompt of `claude -p --resume <id> PROMPT`. A prompt that starts with `-` would be taken
/// for an option (measured: `error: unknown option '--help me'`), so it goes after `--`; only
/// then, because options after `--` are not honoured (measured: a trailing `--output-format
/// json` was ignored), and callers append options to these arguments.
fn prompt_args(prompt: &str) -> Vec<String> {
    let dashes = prompt.starts_with('-').then(|| "--".to_owned());
    dashes.into_iter().chain([prompt.to_owned()]).collect()
}

/// `CLAUDE_CONFIG_DIR=<root>` when the store root is not the one Claude Code uses by default
/// (`$CLAUDE_CONFIG_DIR`, else `~/.claude`), so the printed command finds the session. It is not
/// set for the default root: Claude Code keeps its login in `$CLAUDE_CONFIG_DIR/.claude.json`
/// when the variable is set, and in `~/.claude.json` when it is not.
fn config_dir_env(
    root: &StoreRoot,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<(String, String)> {
    let default_root = crate::manifest::claude_code().default_root.and_then(|d| {
        let home = var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        d.resolve(&var, home.as_deref(), None)
    });
    let same = |default: &Path| {
        default == root.path()
            || matches!(
                (std::fs::canonicalize(default), std::fs::canonicalize(root.path())),
                (Ok(a), Ok(b)) if a == b
            )
    };
    if default_root.as_deref().is_some_and(same) {
        Vec::new()
    } else {
        vec![(
            "CLAUDE_CONFIG_DIR".to_owned(),
            root.path().to_string_lossy().into_owned(),
        )]
    }
}

/// A Claude Code session file (a session of a store, checked as the SDK checks it, or a file read
/// as it is written) read as the Claude Code of `rules` sends it.
pub(crate) fn read_each_as(
    from: ReadFrom<'_>,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let path = match from {
        ReadFrom::Session(root, session) => session.check(root, CLAUDE_CODE)?,
        ReadFrom::File(_, path) => path,
        ReadFrom::Written(_, file) => return read::read_written_each(file, rules, sink),
    };
    read::read_each(path, rules, sink).map(drop)
}

#[cfg(test)]
mod config_dir_tests {
    use super::*;
    use std::ffi::OsString;

    fn env_for(root: &Path, vars: &[(&str, &Path)]) -> Vec<(String, String)> {
        let root = StoreRoot::new(root).unwrap();
        config_dir_env(&root, |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn the_default_root_sets_nothing_and_another_root_is_named() {
        let home = tempfile::tempdir().unwrap();
        let default = home.path().join(".claude");
        std::fs::create_dir(&default).unwrap();
        assert_eq!(env_for(&default, &[("HOME", home.path())]), Vec::new());
        let scratch = home.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        assert_eq!(
            env_for(&scratch, &[("HOME", home.path())]),
            vec![(
                "CLAUDE_CONFIG_DIR".to_owned(),
                scratch.to_string_lossy().into_owned()
            )]
        );
        // The variable already names the root: Claude Code finds it as it is.
        assert_eq!(
            env_for(
                &scratch,
                &[("HOME", home.path()), ("CLAUDE_CONFIG_DIR", &scratch)]
            ),
            Vec::new()
        );
    }
}
