//! Many runs started together on a fresh certificate folder: every one succeeds (or waits for the
//! one certifying), none sees a half-certified state, each built-in is certified once.

use std::process::{Child, Stdio};
use std::time::Instant;

use crate::support::*;

const RUNS: usize = 8;

fn finish(child: Child) -> std::process::Output {
    child.wait_with_output().unwrap()
}

#[test]
fn concurrent_first_use_certifies_once_and_every_run_succeeds() {
    let s = Scratch::new();
    let certificates = s.path("certificates");
    let config = write_config(s.dir.path(), &certificates);
    let source = claude_source(&s.path("claude"), &here(&s, conversation(10)));
    let root = s.path("codex");
    let started = Instant::now();
    let spawn = |mut command: std::process::Command| -> Child {
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut continues = Vec::new();
    let mut listings = Vec::new();
    for _ in 0..RUNS {
        continues.push(spawn(continue_cmd(&config, &s.tmp(), &source, &root)));
        let mut targets = handoff(&config, &s.tmp());
        targets.args(["targets", "--json"]);
        listings.push(spawn(targets));
    }
    let mut ids = Vec::new();
    let mut created = 0;
    for child in continues {
        let out = finish(child);
        let json = continued(&out);
        ids.push(json["session"]["id"].as_str().unwrap().to_owned());
        created += usize::from(json["action"]["kind"] == "created");
    }
    for child in listings {
        let out = finish(child);
        assert!(out.status.success(), "{}", stderr(&out));
        let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let codex = listing
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["target"] == "codex" && l["shadowed_by"].is_null())
            .expect("codex listed");
        assert_eq!(
            codex["availability"]["status"], "verified",
            "a run saw codex not offered: {codex}"
        );
    }
    eprintln!(
        "{} runs on a fresh certificate folder: {:.1} s",
        RUNS * 2,
        started.elapsed().as_secs_f64()
    );
    ids.dedup();
    assert_eq!(
        ids.len(),
        1,
        "one session for the one conversation: {ids:?}"
    );
    assert_eq!(created, 1);
    assert_eq!(rollouts(&root).len(), 1);
    let certificates_written = std::fs::read_dir(&certificates)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count();
    let builtins = std::fs::read_dir(&certificates)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("builtin-"))
        .count();
    assert_eq!(
        certificates_written, builtins,
        "one certificate per built-in"
    );
    let left = leftovers(&root, &s.tmp(), &certificates);
    assert!(left.is_empty(), "{left:#?}");
}

#[test]
fn a_run_killed_while_certifying_leaves_scratch_the_next_run_removes() {
    let s = Scratch::new();
    let certificates = s.path("certificates");
    let config = write_config(s.dir.path(), &certificates);
    let scratch = certificates.join("scratch");
    let mut targets = handoff(&config, &s.tmp());
    targets.args(["targets", "--json"]);
    let mut child = targets
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it is certifying (its scratch folder exists), then kill it.
    let started = Instant::now();
    let certifying = loop {
        let busy = std::fs::read_dir(&scratch)
            .map(|d| d.flatten().any(|e| e.path().is_dir()))
            .unwrap_or(false);
        if busy || child.try_wait().unwrap().is_some() {
            break busy;
        }
        assert!(
            started.elapsed().as_secs() < 120,
            "certification never began"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(certifying, "the run ended before it certified anything");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        std::fs::read_dir(&scratch).unwrap().count() > 0,
        "the killed run left its scratch"
    );
    let out = handoff(&config, &s.tmp())
        .args(["targets", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(&scratch)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:#?}");
    assert!(
        std::fs::read_dir(s.tmp()).unwrap().next().is_none(),
        "nothing in TMPDIR"
    );
}

/// `transcript` with the scratch folder as its cwd (`continue` needs a cwd that exists).
fn here(s: &Scratch, mut transcript: handoff_host::Transcript) -> handoff_host::Transcript {
    transcript.cwd = Some(s.dir.path().display().to_string());
    transcript
}

/// The certificate files in `dir`, by name, with their bytes.
fn certificates_in(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read(e.path()).unwrap())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The plugin names the certificates are for (`builtin-<name>-<version>-host-…`).
fn certified_plugins(dir: &std::path::Path) -> Vec<String> {
    certificates_in(dir)
        .keys()
        .map(|name| {
            let rest = name
                .strip_prefix("builtin-")
                .expect("a built-in's certificate");
            rest.split('-').next().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn a_command_certifies_only_the_plugins_it_uses_and_a_second_run_none() {
    let s = Scratch::new();
    let certificates = s.path("certificates");
    let config = write_config(s.dir.path(), &certificates);
    let source = claude_source(&s.path("claude"), &here(&s, conversation(3)));
    let run = |args: &[&str]| {
        let out = handoff(&config, &s.tmp()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        out
    };

    // `read` uses one plugin: only it is certified.
    let read = ["read", "claude-code", source.to_str().unwrap(), "--json"];
    run(&read);
    assert_eq!(certified_plugins(&certificates), ["claude"]);
    let after_first = certificates_in(&certificates);
    run(&read);
    assert_eq!(
        certificates_in(&certificates),
        after_first,
        "a second run certified again"
    );

    // `sessions` of another plugin certifies that one too, and nothing else.
    let root = s.path("codex");
    run(&["sessions", "codex", "--store-root", root.to_str().unwrap()]);
    assert_eq!(certified_plugins(&certificates), ["claude", "codex"]);

    // `continue` between the two certified plugins certifies nothing.
    let before = certificates_in(&certificates);
    continued(
        &continue_cmd(&config, &s.tmp(), &source, &root)
            .output()
            .unwrap(),
    );
    assert_eq!(certificates_in(&certificates), before);

    // `targets` reports verification: every built-in is certified, and every one is listed.
    let out = run(&["targets", "--json"]);
    let listings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut listed: Vec<String> = listings
        .as_array()
        .unwrap()
        .iter()
        .inspect(|l| assert_eq!(l["availability"]["status"], "verified", "{l}"))
        .map(|l| l["plugin"].as_str().unwrap().to_owned())
        .collect();
    listed.dedup();
    assert!(listed.len() > 2, "{listed:?}");
    listed.sort();
    assert_eq!(certified_plugins(&certificates), listed);
    assert_eq!(
        certificates_in(&certificates).get(after_first.keys().next().unwrap()),
        after_first.values().next(),
        "targets certified claude again"
    );
}

#[test]
fn continue_on_a_fresh_certificate_folder_certifies_the_source_and_the_target() {
    let s = Scratch::new();
    let certificates = s.path("certificates");
    let config = write_config(s.dir.path(), &certificates);
    let source = claude_source(&s.path("claude"), &here(&s, conversation(3)));
    continued(
        &continue_cmd(&config, &s.tmp(), &source, &s.path("codex"))
            .output()
            .unwrap(),
    );
    assert_eq!(certified_plugins(&certificates), ["claude", "codex"]);
}

#[test]
fn a_target_a_certified_plugin_file_offers_does_not_certify_the_builtin_it_shadows() {
    let s = Scratch::new();
    let certificates = s.path("certificates");
    let plugins = s.path("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let library = plugins.join("libhandoff_plugin_codex.so");
    std::fs::copy(deps.join("libhandoff_plugin_codex.so"), &library).unwrap();
    let config = s.path("config.toml");
    std::fs::write(
        &config,
        format!("plugin_dirs = [{plugins:?}]\ncertificate_dir = {certificates:?}\n"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = handoff(&config, &s.tmp()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    run(&["certify", library.to_str().unwrap()]);
    let names = || -> Vec<String> { certificates_in(&certificates).into_keys().collect() };
    let file_only = names();
    assert!(
        file_only.len() == 1 && file_only[0].starts_with("file-"),
        "{file_only:?}"
    );

    // codex is the plugin file's: the built-in codex is not certified for it.
    let root = s.path("codex");
    run(&["sessions", "codex", "--store-root", root.to_str().unwrap()]);
    assert_eq!(names(), file_only);

    // claude-code has only the built-in: it is certified, and only it.
    let source = claude_source(&s.path("claude"), &conversation(3));
    run(&["read", "claude-code", source.to_str().unwrap()]);
    let now = names();
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(
        now.iter().any(|n| n.starts_with("builtin-claude-")),
        "{now:?}"
    );
}
