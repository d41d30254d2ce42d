//! Continued sessions show up in the target CLI's own listing, with our id and the title our
//! listing (`handoff sessions`) gives them: a conversation continued into Gemini CLI is listed by
//! `gemini --list-sessions`, run in its project with the temp HOME; one continued into pi by pi's
//! own `SessionManager.list` (what its `--resume` picker lists; pi has no listing flag); one
//! continued into OpenCode by `opencode session list --format json`. Claude
//! Code and Codex list sessions only in interactive pickers.
//!
//! The conversation has one user message: Gemini CLI asks the model for a summary of a session
//! with more than one before listing, and no provider answers here (its base URL is a closed
//! port), so nothing leaves the machine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_capability::live::LiveRecipe;
use handoff_host::continuation::{continue_conversation, ContinueRequest};
use handoff_host::{
    AssistantPart, Body, Event, Plugin, SessionInfo, StoreRoot, Timestamp, Transcript,
};
use handoff_live::cli::{find_cli, run, FoundCli, Invocation};
use handoff_live::skips_are_failures;

const PROMPT: &str = "Fix the flaky retry test in ci.yml, please";

fn conversation() -> Transcript {
    let t = 1_795_999_300_000;
    Transcript::new(vec![
        Event::new("u1", Timestamp::from_millis(t), Body::user_text(PROMPT)),
        Event::new(
            "a1",
            Timestamp::from_millis(t + 1_000),
            Body::assistant(vec![AssistantPart::text(
                "Done: the retry now waits for the port.",
            )]),
        ),
    ])
}

/// The pinned CLI of `target` and its recipe, or `None` (after saying why) when the CLI is absent
/// or another version and that is allowed.
fn pinned(plugin: &dyn Plugin, target: &str) -> Option<(FoundCli, LiveRecipe)> {
    let recipe = plugin
        .manifest()
        .target(target)
        .and_then(|t| t.live.clone())
        .unwrap_or_else(|| panic!("{target} declares no live recipe"));
    let why = match find_cli(&recipe.program, &recipe.npm_package, None) {
        Ok(found) if found.version.as_deref() == Some(recipe.version.as_str()) => {
            return Some((found, recipe))
        }
        Ok(found) => format!(
            "{} is {:?}, not the pinned {}",
            found.path.display(),
            found.version,
            recipe.version
        ),
        Err(why) => why,
    };
    assert!(!skips_are_failures(), "HANDOFF_LIVE_REQUIRED=1 but {why}");
    eprintln!("SKIP: {why}");
    None
}

/// A temp HOME with the recipe's files, a project folder, and the conversation continued into
/// the target's store under HOME (its real place there) with the project as cwd. Returns HOME,
/// the project, and our listing's entry for the session.
fn continued(
    plugin: &dyn Plugin,
    target: &str,
    recipe: &LiveRecipe,
    scratch: &Path,
) -> (PathBuf, PathBuf, SessionInfo) {
    let home = scratch.join("home");
    let project = scratch.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    for (file, text) in &recipe.files {
        let path = home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let root = StoreRoot::new(home.join(&recipe.store_root)).unwrap();
    let done = continue_conversation(
        plugin,
        &ContinueRequest {
            source: (&conversation()).into(),
            locator: Some("listed-by-the-cli"),
            target,
            root: &root,
            seal: handoff_host::seal::Seal::of_this_process(),
            cwd: Some(project.display().to_string()),
            prompt: "Continue.",
            drop: &[],
            lock_wait: Duration::from_secs(5),
            into: None,
        },
    )
    .unwrap_or_else(|e| panic!("{target}: {e}"));
    let ours = plugin
        .reader()
        .list(&root, target)
        .unwrap()
        .into_iter()
        .find(|s| s.session.id == done.session.id)
        .expect("our listing lists the session");
    assert_eq!(ours.title.as_deref(), Some(PROMPT), "{ours:?}");
    assert_eq!(
        ours.cwd.as_deref(),
        Some(project.display().to_string().as_str())
    );
    (home, project, ours)
}

/// The recipe's environment with the provider's base URL on a closed port.
fn offline_env(recipe: &LiveRecipe) -> Vec<(String, String)> {
    recipe
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.replace("{base_url}", "http://127.0.0.1:9")))
        .collect()
}

#[test]
fn gemini_list_sessions_lists_a_continued_session_with_our_id_and_title() {
    let plugin = handoff_gemini::GeminiPlugin;
    let Some((cli, recipe)) = pinned(&plugin, "gemini-cli") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let (home, project, ours) = continued(&plugin, "gemini-cli", &recipe, scratch.path());
    let out = run(&Invocation {
        program: cli.path.clone(),
        args: vec!["--list-sessions".into()],
        home,
        env: offline_env(&recipe),
        cwd: project,
        close_stdin: true,
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert!(out.succeeded(), "{}", out.summary());
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains(&format!("[{}]", ours.session.id)))
        .unwrap_or_else(|| panic!("our id is not listed: {}", out.stdout));
    let title = ours.title.as_deref().unwrap();
    assert!(
        line.contains(&format!(". {title} (")),
        "listed as {line:?}, our title is {title:?}"
    );
}

#[test]
fn pi_session_manager_lists_a_continued_session_with_our_id_and_title() {
    let plugin = handoff_pi::PiPlugin;
    let Some((cli, recipe)) = pinned(&plugin, "pi") else {
        return;
    };
    // The package's library beside its CLI (`dist/cli.js` → `dist/index.js`).
    let library = std::fs::canonicalize(&cli.path)
        .unwrap()
        .with_file_name("index.js");
    assert!(library.is_file(), "{}", library.display());
    let scratch = tempfile::tempdir().unwrap();
    let (home, project, ours) = continued(&plugin, "pi", &recipe, scratch.path());
    let script = "const pi = await import(process.argv[1]);\n\
        const listed = await pi.SessionManager.list(process.argv[2]);\n\
        console.log(JSON.stringify(listed.map(s => ({ id: s.id, title: s.name ?? s.firstMessage }))));";
    let out = run(&Invocation {
        program: "node".into(),
        args: vec![
            "--input-type=module".into(),
            "-e".into(),
            script.into(),
            format!("file://{}", library.display()),
            project.display().to_string(),
        ],
        home,
        env: offline_env(&recipe),
        cwd: project,
        close_stdin: true,
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert!(out.succeeded(), "{}", out.summary());
    let listed: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == ours.session.id.as_str())
        .unwrap_or_else(|| panic!("our id is not listed: {listed}"));
    assert_eq!(entry["title"], ours.title.as_deref().unwrap(), "{listed}");
}

#[test]
fn opencode_session_list_lists_a_continued_session_with_our_id_and_title() {
    let plugin = handoff_opencode::OpencodePlugin;
    let Some((cli, recipe)) = pinned(&plugin, "opencode") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let (home, project, ours) = continued(&plugin, "opencode", &recipe, scratch.path());
    let out = run(&Invocation {
        program: cli.path.clone(),
        args: ["session", "list", "--format", "json"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        home,
        env: offline_env(&recipe),
        cwd: project,
        close_stdin: true,
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert!(out.succeeded(), "{}", out.summary());
    let listed: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == ours.session.id.as_str())
        .unwrap_or_else(|| panic!("our id is not listed: {listed}"));
    assert_eq!(entry["title"], ours.title.as_deref().unwrap(), "{listed}");
}
