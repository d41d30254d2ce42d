//! Journals handoff did not write: planted in a store root (a downloaded session folder, say),
//! they are ignored with a warning naming them, and the files they name are left byte-identical,
//! whether the next command reads or writes there (issue 24's three attacks).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::*;

/// A journal's file name: the key of a conversation lock, then a run.
fn journal_name(run: &str) -> String {
    format!("{}.{run}", "ab".repeat(32))
}

/// What an attacker writes: a journal of `op`, in the schema handoff wrote before seals (`/1`)
/// or the current one with a made-up seal.
fn journal(schema: &str, op: Value) -> Value {
    let mut record = json!({
        "schema": schema, "pid": 1, "started_ms": 0,
        "target": "codex", "locator": "x", "op": op,
    });
    if schema.ends_with("/2") {
        record["seal"] = json!("00".repeat(32));
    }
    record
}

/// Plants the three attacks on `victim` under `root`'s journal folder.
fn plant(root: &Path, victim: &Path, schema: &str) {
    let dir = root.join(".handoff/journal");
    std::fs::create_dir_all(&dir).unwrap();
    let meta = std::fs::metadata(victim).unwrap();
    let bytes = std::fs::read(victim).unwrap();
    let session = json!({"target": "codex", "id": "victim", "path": victim});
    // 1. A create naming the victim as the session it made: removing it deletes the victim.
    let create = journal(
        schema,
        json!({"kind": "create", "previous": null, "created": session,
               "created_file": {"dev": meta.dev(), "ino": meta.ino()}}),
    );
    // 2. An append naming the victim's length, identity and tail: cutting back truncates it.
    let append = journal(
        schema,
        json!({"kind": "append", "session": session, "len": 3,
               "dev": meta.dev(), "ino": meta.ino(),
               "tail_sha256": hex::encode(Sha256::digest(&bytes[..3])), "backup": "link"}),
    );
    // 3. An append of a "replaced" file whose kept old bytes are the attacker's.
    let replaced = journal(
        schema,
        json!({"kind": "append", "session": session, "len": 8,
               "dev": meta.dev(), "ino": meta.ino() + 1,
               "tail_sha256": hex::encode(Sha256::digest(b"attacker")), "backup": "copy"}),
    );
    for (run, record) in [
        ("1-1-create", create),
        ("2-2-append", append),
        ("3-3-swap", replaced),
    ] {
        let name = journal_name(run);
        std::fs::write(dir.join(format!("{name}.json")), record.to_string()).unwrap();
        if run.ends_with("swap") {
            std::fs::write(dir.join(format!("{name}.orig")), b"attacker").unwrap();
        }
    }
}

struct Planted {
    scratch: Scratch,
    root: PathBuf,
    victim: PathBuf,
    bytes: Vec<u8>,
}

fn planted(schema: &str) -> Planted {
    let scratch = Scratch::new();
    let victim = scratch.path("victim.txt");
    let bytes = b"the user's own file\n".to_vec();
    std::fs::write(&victim, &bytes).unwrap();
    let root = scratch.path("downloaded");
    plant(&root, &victim, schema);
    Planted {
        scratch,
        root,
        victim,
        bytes,
    }
}

fn assert_untouched(p: &Planted, context: &str) {
    assert_eq!(
        std::fs::read(&p.victim).unwrap(),
        p.bytes,
        "{context}: the victim changed"
    );
    let journals = std::fs::read_dir(p.root.join(".handoff/journal"))
        .unwrap()
        .count();
    assert_eq!(
        journals, 4,
        "{context}: the planted files are left where they are"
    );
}

#[test]
fn planted_journals_change_nothing_from_read_or_continue() {
    for schema in ["handoff.journal/1", "handoff.journal/2"] {
        let p = planted(schema);
        let config = &shared().config;
        let tmp = p.scratch.tmp();
        // A read by id, and a read of a session file under the planted root.
        let session = p.root.join("sessions/2026/11/30/rollout.jsonl");
        std::fs::create_dir_all(session.parent().unwrap()).unwrap();
        std::fs::write(&session, b"").unwrap();
        for args in [
            vec![
                "read",
                "codex",
                "00000000-0000-0000-0000-000000000000",
                "--store-root",
            ],
            vec!["read", "codex", session.to_str().unwrap()],
        ] {
            let mut command = handoff(config, &tmp);
            command.args(&args);
            if args.len() == 4 {
                command.arg(&p.root);
            }
            let out = command.output().unwrap();
            assert_untouched(&p, &format!("{schema}: {args:?}: {}", stderr(&out)));
        }
        std::fs::remove_file(&session).unwrap();
        // A continue into the planted root, and from a session under it.
        let source = claude_source(&p.scratch.path("claude"), &conversation(2));
        let out = continue_cmd(config, &tmp, &source, &p.root)
            .output()
            .unwrap();
        let done = continued(&out);
        assert_eq!(done["action"]["kind"], "created");
        assert_eq!(done["recovered"], json!([]));
        let warned = stderr(&out);
        assert!(
            warned.contains("ignoring") && warned.contains(&journal_name("1-1-create")),
            "{schema}: {warned}"
        );
        assert_untouched(&p, &format!("{schema}: continue into the root"));
        let written = done["session"]["path"].as_str().unwrap();
        let out = handoff(config, &tmp)
            .args(["continue", "--to", "claude-code", "--json", "--cwd", "/"])
            .arg("--from")
            .arg(format!("codex:{written}"))
            .arg("--store-root")
            .arg(p.scratch.path("claude-out"))
            .output()
            .unwrap();
        continued(&out);
        assert_untouched(
            &p,
            &format!("{schema}: continue from a session in the root"),
        );
        // `recover`, asked for by name, ignores them as well.
        let out = handoff(config, &tmp)
            .args(["recover", "codex", "--store-root"])
            .arg(&p.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_untouched(&p, &format!("{schema}: recover"));
    }
}
