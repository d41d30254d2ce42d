//! Strict resume: `resolve` finds exactly one id (never a prefix, never "latest"), and the plan
//! names exactly that session for pi's loose `--session` matching.

mod common;

use common::*;
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::serde_json::json;
use handoff_sdk::{ById, Plugin, PluginError, ResumePlan, SessionRef};

fn plan(root: &handoff_sdk::StoreRoot, session: &SessionRef, prompt: &str) -> ResumePlan {
    PiPlugin
        .resumer()
        .plan(root, session, prompt)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn args(plan: &ResumePlan) -> Vec<String> {
    plan.command().expect("a command").args.clone()
}

/// Copies `session` under `id` (file name and header), newer than it.
fn copy_as(session: &SessionRef, id: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(&session.path)
        .unwrap()
        .replace(&session.id, id);
    let path = session
        .path
        .with_file_name(format!("2027-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_plan_names_the_session_its_folder_cwd_and_model() {
    let (_dir, root) = root();
    let session = create(
        &root,
        &transcript(vec![
            user("e1", 0, "q"),
            assistant("e2", 1, vec![text("a")], claude()),
            user("e3", 2, "q2"),
            assistant("e4", 3, vec![text("b")], gpt()),
        ]),
    );
    let plan = plan(&root, &session, "Go on.");
    let command = plan.command().expect("a command");
    assert_eq!(command.program, "pi");
    let folder = session
        .path
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        command.args,
        [
            "--session-dir",
            folder.as_str(),
            "--session",
            session.id.as_str(),
            "--provider",
            "openai",
            "--model",
            "gpt-5",
            "-p",
            "Go on."
        ]
    );
    // The interactive session: the same, without `-p PROMPT`.
    assert_eq!(
        command.interactive_args.as_deref(),
        Some(&command.args[..command.args.len() - 2])
    );
    assert_eq!(
        command.env,
        [(
            "PI_CODING_AGENT_DIR".to_owned(),
            root.path().to_string_lossy().into_owned()
        )]
    );
    assert_eq!(command.cwd.as_deref(), Some(std::path::Path::new(CWD)));
    assert!(command.close_stdin);
}

#[test]
fn a_session_without_a_model_gets_no_model_flags() {
    let (_dir, root) = root();
    let session = create(&root, &transcript(vec![user("e1", 0, "only a question")]));
    let a = args(&plan(&root, &session, "Hello"));
    assert!(!a.contains(&"--model".to_owned()), "{a:?}");
    assert_eq!(a[a.len() - 2..], ["-p", "Hello"]);
}

#[test]
fn resolve_is_exact_and_the_plan_survives_prefix_decoys() {
    let (_dir, root) = root();
    let base = transcript(vec![
        user("e1", 0, "ours"),
        assistant("e2", 1, vec![text("a")], claude()),
    ]);
    let ours = create(&root, &base);
    // A newer session sharing all but the last character of our id: a full id does not match it.
    let mut near = ours.id.clone();
    let last = near.pop().unwrap();
    near.push(if last == '0' { '1' } else { '0' });
    copy_as(&ours, &near);
    assert_eq!(
        PiPlugin.resumer().resolve(&root, TARGET, &ours.id).unwrap(),
        ours
    );
    assert_eq!(args(&plan(&root, &ours, "p"))[3], ours.id);

    // A newer session whose id *starts with* ours: pi's prefix match would pick it for our id,
    // so the plan names our file instead.
    let longer = format!("{}x", ours.id);
    copy_as(&ours, &longer);
    assert_eq!(
        PiPlugin.resumer().resolve(&root, TARGET, &ours.id).unwrap(),
        ours
    );
    assert_eq!(
        args(&plan(&root, &ours, "p"))[3],
        ours.path.to_string_lossy()
    );

    for missing in [
        "01a22fc4-0000-7000-8000-00000000dead".to_owned(),
        ours.id[..12].to_owned(),
    ] {
        let err = PiPlugin
            .resumer()
            .resolve(&root, TARGET, &missing)
            .unwrap_err();
        assert!(
            matches!(err, PluginError::NotFound { .. }),
            "{missing}: {err}"
        );
        assert!(PiPlugin.plan_id(&root, TARGET, &missing, "p").is_err());
    }
}

#[test]
fn resolve_refuses_a_file_whose_header_is_another_session() {
    let (_dir, root) = root();
    let ours = create(&root, &transcript(vec![user("e1", 0, "q")]));
    let other = "01a22fc4-0000-7000-8000-0000000a1b2c";
    std::fs::copy(
        &ours.path,
        ours.path
            .with_file_name(format!("2027-01-01T00-00-00-000Z_{other}.jsonl")),
    )
    .unwrap();
    let err = PiPlugin
        .resumer()
        .resolve(&root, TARGET, other)
        .unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed { field: Some(f), .. } if f == "id"),
        "{err}"
    );
}

#[test]
fn two_files_for_one_id_are_an_error_not_a_guess() {
    let (_dir, root) = root();
    let ours = create(&root, &transcript(vec![user("e1", 0, "q")]));
    let elsewhere = root.path().join("sessions/--srv--");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(&ours.path, elsewhere.join(ours.path.file_name().unwrap())).unwrap();
    let err = PiPlugin
        .resumer()
        .resolve(&root, TARGET, &ours.id)
        .unwrap_err();
    assert!(err.to_string().contains("refusing to guess"), "{err}");
}

#[test]
fn prompts_pi_would_misread_are_refused() {
    let (_dir, root) = root();
    let session = create(&root, &transcript(vec![user("e1", 0, "q")]));
    for bad in ["-v", "--help", "@notes.md"] {
        let err = PiPlugin.resumer().plan(&root, &session, bad).unwrap_err();
        assert!(err.to_string().contains("option or a file"), "{bad}: {err}");
    }
    assert_eq!(args(&plan(&root, &session, "--- a rule"))[5], "--- a rule");
}

#[test]
fn no_plan_for_a_file_pi_would_truncate() {
    let (_dir, root) = root();
    let session = create(&root, &transcript(vec![user("e1", 0, "q")]));
    std::fs::write(&session.path, "").unwrap();
    assert!(PiPlugin.resumer().plan(&root, &session, "p").is_err());
    std::fs::write(
        &session.path,
        format!("{}\n", json!({"type": "message", "id": "a"})),
    )
    .unwrap();
    assert!(PiPlugin.resumer().plan(&root, &session, "p").is_err());
}

#[test]
fn a_session_outside_the_root_or_of_another_target_is_refused() {
    let (_dir, root) = root();
    let session = create(&root, &transcript(vec![user("e1", 0, "q")]));
    let (_other_dir, other_root) = common::root();
    assert!(PiPlugin.resumer().plan(&other_root, &session, "p").is_err());
    let wrong = SessionRef {
        target: "codex".into(),
        ..session
    };
    assert!(matches!(
        PiPlugin.resumer().plan(&root, &wrong, "p"),
        Err(PluginError::UnknownTarget { .. })
    ));
}
