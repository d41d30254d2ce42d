//! How pi resumes exactly one session.
//!
//! pi 0.73.1's `--session <value>` is loose: a value with `/`, `\` or ending `.jsonl` is a path
//! (a missing path silently starts a new session there; an empty or headerless file is truncated
//! and started fresh); anything else is an id *prefix*, matched first among the sessions of the
//! session folder (newest first), then in every folder (found elsewhere: "fork into this
//! directory?"). So the plan names the session as exactly as pi allows:
//!
//! - `--session-dir <the session's folder>`: the prefix match looks there first, whatever the
//!   user's settings or `PI_CODING_AGENT_SESSION_DIR` say;
//! - `--session <the full id>`, or the file's path when another session in that folder has an id
//!   that starts with ours (pi would pick whichever is newer);
//! - the working directory is the session's cwd (pi refuses to run a session whose cwd is gone);
//! - `--provider`/`--model` of the model the session last used, so pi resumes with it rather
//!   than a default;
//! - `PI_CODING_AGENT_DIR` = the store root, stdin closed, `-p <prompt>` (print mode).
//!
//! The file is read whole first: a plan is made only for a session this reader accepts, so pi is
//! never handed a file it would truncate.

use std::path::Path;

use handoff_sdk::{PluginError, ResumePlan, SessionRef, StoreRoot};

use super::{assemble, layout, read, write::UNKNOWN};

/// The environment variable pi reads its agent directory (the store root) from.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// The plan that resumes `session` with `prompt`.
pub fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let path = session.path.as_path();
    if prompt.starts_with('@') || (prompt.starts_with('-') && !prompt.starts_with("---")) {
        return Err(PluginError::Other(format!(
            "pi 0.73.1 would read the prompt {prompt:?} as an option or a file (it starts with \
             {:?}) and has no `--` to stop that; reword it",
            &prompt[..1]
        )));
    }
    let wanted = assemble::Wanted {
        model: true,
        ids: false,
    };
    let found = assemble::stream(path, wanted, assemble::OpenCalls::Answered, &mut |_| true)?;
    if found.id != session.id {
        return Err(read::malformed(
            path,
            1,
            Some("id"),
            format!("the header says session {}, not {}", found.id, session.id),
        ));
    }
    let cwd = found.cwd.clone().ok_or_else(|| {
        read::malformed(
            path,
            1,
            Some("cwd"),
            "the header names no working directory, and pi resumes a session in its own",
        )
    })?;
    let dir = path
        .parent()
        .ok_or_else(|| PluginError::Other(format!("{} has no folder", path.display())))?;
    let named = if shares_prefix(dir, path, &session.id)? {
        path.to_string_lossy().into_owned()
    } else {
        session.id.clone()
    };
    let mut args: Vec<String> = vec![
        "--session-dir".into(),
        dir.to_string_lossy().into_owned(),
        "--session".into(),
        named,
    ];
    if let Some((provider, model)) = found.model.filter(|(p, m)| p != UNKNOWN && m != UNKNOWN) {
        args.extend(["--provider".into(), provider, "--model".into(), model]);
    }
    // Without `-p PROMPT`: the same session in pi's own terminal UI.
    let interactive_args = args.clone();
    args.extend(["-p".into(), prompt.to_owned()]);
    Ok(ResumePlan::Command {
        program: "pi".to_owned(),
        args,
        env: vec![(
            AGENT_DIR_ENV.to_owned(),
            root.path().to_string_lossy().into_owned(),
        )],
        cwd: Some(cwd.into()),
        close_stdin: true,
        interactive_args: Some(interactive_args),
    })
}

/// Whether another file of the folder holds a session whose id `id` is a prefix of (or equals):
/// pi's prefix match could pick that one.
fn shares_prefix(dir: &Path, ours: &Path, id: &str) -> Result<bool, PluginError> {
    for file in layout::folder_files(dir)? {
        if file == ours {
            continue;
        }
        if let Ok(header) = read::read_header(&file) {
            if header.id.starts_with(id) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
