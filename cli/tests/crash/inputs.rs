//! Bad input refused in one place, for every target: a working directory that is relative, empty
//! or holds a NUL (from the source session, or `--cwd`), and a session argument that is not a file.

use std::path::Path;

use handoff_codex::CodexPlugin;
use handoff_host::{CreateOptions, Plugin, StoreRoot};

use crate::support::*;

/// A Codex session whose recorded working directory is `cwd` (Codex's writer takes any string).
fn codex_source(dir: &Path, cwd: &str) -> std::path::PathBuf {
    let root = StoreRoot::new(dir).unwrap();
    let mut transcript = conversation(2);
    transcript.cwd = Some(cwd.to_owned());
    CodexPlugin
        .writer()
        .create(
            &root,
            "codex",
            &transcript,
            &CreateOptions {
                cwd: Some(cwd.to_owned()),
                locator: None,
            },
        )
        .unwrap()
        .path
}

#[test]
fn a_relative_empty_or_nul_cwd_is_refused_for_every_target() {
    let shared = shared();
    let s = Scratch::new();
    for (n, cwd) in ["../../etc", "", "/home/dev\0/proj"]
        .into_iter()
        .enumerate()
    {
        let source = codex_source(&s.path(&format!("source-{n}")), cwd);
        for target in ["codex", "anthropic-messages", "claude-code"] {
            let root = s.path(&format!("{target}-{n}"));
            let out = handoff(&shared.config, &s.tmp())
                .args(["continue", "--to", target, "--from"])
                .arg(format!("codex:{}", source.display()))
                .arg("--store-root")
                .arg(&root)
                .output()
                .unwrap();
            let message = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{target} {cwd:?}: {message}");
            assert!(
                message.contains("working directory"),
                "{target} {cwd:?}: {message}"
            );
            assert!(
                rollouts(&root).is_empty() && !root.join("projects").exists(),
                "{target} {cwd:?}: something was written"
            );
        }
    }
    // `--cwd ..` is made absolute and physical, so it is taken.
    let source = claude_source(&s.path("claude"), &conversation(2));
    let out = continue_cmd(&shared.config, &s.tmp(), &source, &s.path("codex-dotdot"))
        .args(["--cwd", ".."])
        .current_dir(s.path("tmp"))
        .output()
        .unwrap();
    let json = continued(&out);
    let cwd = json["plan"]["cwd"].as_str().unwrap().to_owned();
    assert_eq!(
        Path::new(&cwd),
        std::fs::canonicalize(s.dir.path()).unwrap(),
        "{json}"
    );
}
