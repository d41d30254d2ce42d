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
//! never handed a file it would truncate. When the last read of it (a continuation's verify) is
//! of the file as it is now, what that read found is taken instead of reading it again
//! ([`accepted`]).

use std::path::Path;

use handoff_sdk::{PluginError, ResumeCommand, ResumePlan, SessionRef, StoreRoot};

use super::{accepted, assemble, layout, read, write::UNKNOWN};

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
    let found = match accepted::recall(path) {
        Some(found) => found,
        None => read_whole(path)?,
    };
    plan_of(root, session, prompt, found)
}

/// What a plan needs of `path`, by reading it whole (which remembers it too).
fn read_whole(path: &Path) -> Result<accepted::Accepted, PluginError> {
    let found = assemble::stream(
        path,
        assemble::Wanted::EVENTS,
        assemble::OpenCalls::Answered,
        &mut |_| true,
    )?;
    Ok(accepted::Accepted {
        id: found.id,
        cwd: found.cwd,
        model: found.model,
    })
}

/// The plan of a session whose read found `found`.
fn plan_of(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
    found: accepted::Accepted,
) -> Result<ResumePlan, PluginError> {
    let path = session.path.as_path();
    if found.id != session.id {
        return Err(PluginError::malformed_line(
            path,
            1,
            Some("id"),
            format!("the header says session {}, not {}", found.id, session.id),
        ));
    }
    let cwd = found.cwd.clone().ok_or_else(|| {
        PluginError::malformed_line(
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
    let prompt = ["-p".into(), prompt.to_owned()];
    let command = ResumeCommand::new("pi", args, prompt, Some(cwd.into()))
        .with_env(AGENT_DIR_ENV, root.path().to_string_lossy());
    Ok(ResumePlan::Command(command))
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use handoff_live::session_files::has_extension;
    use handoff_sdk::{PluginError, SessionRef, StoreRoot};

    use super::{accepted, plan, plan_of, read_whole};
    use crate::pi::{context, read, read_each};

    /// Every pi session file the tests, the live tier and the corpus hold.
    fn session_files() -> Vec<PathBuf> {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        handoff_live::session_files::session_files(&samples, "pi", |p| has_extension(p, "jsonl"))
    }

    /// The model as the plan found it before it read one line for it: every path line's, the
    /// last that names one.
    fn model_of_every_path_line(path: &Path) -> Result<Option<(String, String)>, PluginError> {
        let scan = read::scan(path, false)?;
        let conversation = context::conversation(&scan)?;
        let mut lines = read::Lines::open(&scan)?;
        let mut model = None;
        for &entry in &conversation.path {
            if let Some(named) = lines.model(&scan, entry)? {
                model = Some(named);
            }
        }
        Ok(model)
    }

    /// The plans of `path`: read whole with the model of every path line (as before), read whole,
    /// and remembered from the verify's read; each as text, an error too.
    fn plans(root: &StoreRoot, path: &Path) -> [String; 4] {
        let id = read::read_header(path).map_or_else(|_| "no-header".to_owned(), |h| h.id);
        let session = SessionRef {
            target: crate::pi::TARGET.to_owned(),
            id,
            path: path.to_owned(),
        };
        let prompt = "Go on.";
        let before = read_whole(path).and_then(|mut found| {
            found.model = model_of_every_path_line(path)?;
            plan_of(root, &session, prompt, found)
        });
        let read_again = read_whole(path).and_then(|f| plan_of(root, &session, prompt, f));
        let verified = read_each(path, &mut |_| true);
        let remembered = match (verified, accepted::recall(path)) {
            (Ok(_), Some(found)) => plan_of(root, &session, prompt, found),
            (Ok(_), None) => Err(PluginError::Other("a read to the end was not kept".into())),
            (Err(e), None) => Err(e),
            (Err(e), Some(_)) => Err(PluginError::Other(format!("a refused read was kept: {e}"))),
        };
        let planned = plan(root, &session, prompt);
        [before, read_again, remembered, planned].map(|p| format!("{p:?}"))
    }

    /// A session on two branches, the abandoned one naming the newer model, and a
    /// `model_change` on the path; and a long chain with compactions.
    fn generated(dir: &Path) -> Vec<PathBuf> {
        let header = r#"{"type":"session","version":3,"id":"01a229e6-8fb3-71bc-b7eb-e70473137487","timestamp":"2026-11-30T00:41:45.653Z","cwd":"/home/dev/proj"}"#;
        let user = |id: &str, parent: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-30T00:41:45.857Z","message":{{"role":"user","content":"q","timestamp":1795999305825}}}}"#
            )
        };
        let assistant = |id: &str, parent: &str, provider: &str, model: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-11-30T00:41:45.857Z","message":{{"role":"assistant","content":[{{"type":"text","text":"a"}}],"api":"openai-completions","provider":"{provider}","model":"{model}","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":1795999305825}}}}"#
            )
        };
        let change = r#"{"type":"model_change","id":"0000000c","parentId":"00000001","timestamp":"2026-11-30T00:41:45.857Z","provider":"p-change","modelId":"m-change"}"#;
        let branched = [
            header.to_owned(),
            user("00000001", "null"),
            assistant("00000002", "00000001", "p-old", "m-old"),
            user("00000003", "\"00000002\""),
            assistant("00000004", "00000003", "p-abandoned", "m-abandoned"),
            user("00000005", "\"00000002\""),
        ];
        let changed = [
            header.to_owned(),
            user("00000001", "null"),
            change.to_owned(),
            user("00000005", "\"0000000c\""),
        ];
        let mut files = Vec::new();
        for (name, lines) in [("branched", &branched[..]), ("changed", &changed[..])] {
            let path = dir.join(format!("{name}.jsonl"));
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            files.push(path);
        }
        files
    }

    /// The plan is the same whether the session is read again whole (as before, or finding its
    /// model by one line) or taken from the verify's read of it: on every sample, differential
    /// and corpus file, and on generated branches and model changes; a refused file is refused
    /// alike and not remembered.
    #[test]
    fn a_plan_after_the_verify_is_the_plan_of_reading_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path()).unwrap();
        let mut files = session_files();
        assert!(files.len() >= 10, "{} sessions", files.len());
        files.extend(generated(dir.path()));
        let mut planned = 0;
        for path in &files {
            let [before, read_again, remembered, plan] = plans(&root, path);
            let name = path.display();
            assert_eq!(read_again, before, "{name}");
            assert_eq!(remembered, before, "{name}");
            assert_eq!(plan, before, "{name}");
            planned += usize::from(before.starts_with("Ok"));
        }
        assert!(planned >= 10, "{planned} plans");
        let [branched, changed] = [&files[files.len() - 2], &files[files.len() - 1]];
        assert!(plans(&root, branched)[0].contains("\"p-old\", \"--model\", \"m-old\""));
        assert!(plans(&root, changed)[0].contains("\"p-change\", \"--model\", \"m-change\""));
    }

    /// What a read found is taken only for the file as it was read: an append, a rewrite of the
    /// same length or a new file in its place is read again.
    #[test]
    fn a_file_written_since_its_read_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let source = session_files()
            .into_iter()
            .find(|p| {
                p.to_string_lossy()
                    .contains("differential/pi/2026-11-30T00-41-45")
            })
            .unwrap();
        let path = dir.path().join("session.jsonl");
        let text = std::fs::read_to_string(source).unwrap();
        let read_whole_now = |path: &Path| read_each(path, &mut |_| true).unwrap();

        std::fs::write(&path, &text).unwrap();
        read_whole_now(&path);
        assert!(
            accepted::recall(&path).is_some(),
            "a read to the end is kept"
        );

        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"\n").unwrap();
        assert!(accepted::recall(&path).is_none(), "appended to");

        std::fs::write(&path, &text).unwrap();
        read_whole_now(&path);
        let first = text.lines().next().unwrap();
        let renamed = text.replacen(first, &first.replace("\"id\":\"0", "\"id\":\"1"), 1);
        assert_eq!(renamed.len(), text.len());
        assert_ne!(renamed, text);
        std::fs::write(&path, &renamed).unwrap();
        assert!(
            accepted::recall(&path).is_none(),
            "rewritten at the same length"
        );

        read_whole_now(&path);
        let replacement = dir.path().join("replacement.jsonl");
        std::fs::write(&replacement, &text).unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        assert!(accepted::recall(&path).is_none(), "replaced");

        read_each(&path, &mut |_| false).unwrap();
        assert!(accepted::recall(&path).is_none(), "a read stopped early");
    }
}
