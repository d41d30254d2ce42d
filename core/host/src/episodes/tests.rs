use super::*;

const KEY: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn episode(target: &str, session: &str, path: &str, hop: u32) -> Episode {
    Episode {
        target: target.into(),
        session: session.into(),
        path: path.into(),
        first_event: Some(format!("first-of-{session}")),
        hop,
        events: 3,
        updated_ms: i64::from(hop),
        into: false,
        errors: Vec::new(),
    }
}

fn store() -> (tempfile::TempDir, StoreRoot) {
    let tmp = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(tmp.path().join("store")).unwrap();
    std::fs::create_dir_all(root.path()).unwrap();
    (tmp, root)
}

#[test]
fn a_recorded_episode_reads_back_and_a_rewrite_replaces_it() {
    let (_tmp, root) = store();
    let seal = Seal::ephemeral();
    record(
        &root,
        &seal,
        "claude-code:e1",
        KEY,
        episode("codex", "A", "a.jsonl", 1),
        &[],
    )
    .unwrap();
    record(
        &root,
        &seal,
        "claude-code:e1",
        KEY,
        episode("codex", "A", "a.jsonl", 5),
        &[],
    )
    .unwrap();
    record(
        &root,
        &seal,
        "claude-code:e1",
        KEY,
        episode("codex", "B", "b.jsonl", 3),
        &[],
    )
    .unwrap();
    let found = of_conversation(&root, &seal, "claude-code:e1");
    assert_eq!(
        found
            .iter()
            .map(|e| (&*e.session, e.hop))
            .collect::<Vec<_>>(),
        [("A", 5), ("B", 3)]
    );
    record(
        &root,
        &seal,
        "claude-code:e1",
        KEY,
        episode("codex", "C", "c.jsonl", 6),
        &["B".into()],
    )
    .unwrap();
    let sessions: Vec<String> = of_conversation(&root, &seal, "claude-code:e1")
        .into_iter()
        .map(|e| e.session)
        .collect();
    assert_eq!(sessions, ["C", "A"]);
    assert!(of_conversation(&root, &seal, "another").is_empty());
    assert_eq!(all(&root, &seal).len(), 1);
}

#[test]
fn a_ledger_sealed_with_another_key_edited_or_moved_is_not_trusted() {
    let (tmp, root) = store();
    let seal = Seal::ephemeral();
    record(
        &root,
        &seal,
        "c",
        KEY,
        episode("codex", "A", "a.jsonl", 1),
        &[],
    )
    .unwrap();
    // Another key (a planted ledger).
    assert!(of_conversation(&root, &Seal::ephemeral(), "c").is_empty());
    // Edited: the session swapped for a user's own.
    let file = dir(&std::fs::canonicalize(root.path()).unwrap()).join(file_name("c"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("\"A\"", "\"users-own\"")).unwrap();
    assert!(of_conversation(&root, &seal, "c").is_empty());
    std::fs::write(&file, &text).unwrap();
    assert_eq!(of_conversation(&root, &seal, "c").len(), 1);
    // Moved to another store root whole: the seal names the root it was written for.
    let other = StoreRoot::new(tmp.path().join("other")).unwrap();
    std::fs::create_dir_all(dir(other.path())).unwrap();
    std::fs::copy(&file, dir(other.path()).join(file_name("c"))).unwrap();
    assert!(of_conversation(&other, &seal, "c").is_empty());
}

#[test]
fn a_ledger_folder_that_leads_out_of_the_root_is_not_read() {
    let (tmp, root) = store();
    let seal = Seal::ephemeral();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(root.path().join(".handoff")).unwrap();
    std::os::unix::fs::symlink(&outside, dir(root.path())).unwrap();
    assert!(record(
        &root,
        &seal,
        "c",
        KEY,
        episode("codex", "A", "a.jsonl", 1),
        &[]
    )
    .is_err());
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(of_conversation(&root, &seal, "c").is_empty());
}

#[test]
fn a_source_is_known_by_ledger_then_marker_then_first_event_else_an_origin() {
    let (_tmp, root) = store();
    let seal = Seal::ephemeral();
    let resolved = std::fs::canonicalize(root.path()).unwrap();
    let write = |name: &str, head: &str| {
        let path = resolved.join(name);
        std::fs::write(&path, format!("{head}\n{{\"type\":\"x\"}}\n")).unwrap();
        path
    };
    let recorded = write(
        "a.jsonl",
        r#"{"payload":{"x-handoff":{"plugin":"codex","locator":"conv"}}}"#,
    );
    record(
        &root,
        &seal,
        "conv",
        KEY,
        episode("codex", "A", "a.jsonl", 4),
        &[],
    )
    .unwrap();
    let known = identify_source(&seal, "codex", &recorded, "whatever");
    assert_eq!(
        (known.conversation.as_str(), known.hop, known.witness),
        ("conv", 4, Witness::Ledger)
    );

    // A native rewrite dropped the marker: the ledger still knows it.
    let rewritten = write("a.jsonl", r#"{"type":"session_meta"}"#);
    assert_eq!(
        identify_source(&seal, "codex", &rewritten, "x").witness,
        Witness::Ledger
    );

    // The marker names another conversation: the file is not the one recorded; the marker wins.
    let replaced = write(
        "a.jsonl",
        r#"{"x-handoff":{"plugin":"codex","locator":"other"}}"#,
    );
    let known = identify_source(&seal, "codex", &replaced, "x");
    assert_eq!(
        (known.conversation.as_str(), known.witness),
        ("other", Witness::Marker)
    );

    // No ledger entry, a marker: the marker.
    let marked = write(
        "m.jsonl",
        r#"{"x-handoff":{"plugin":"codex","locator":"conv"}}"#,
    );
    let known = identify_source(&seal, "codex", &marked, "y");
    assert_eq!(
        (known.conversation.as_str(), known.hop, known.witness),
        ("conv", 4, Witness::Marker)
    );

    // A session a CLI continued natively into a new file with the episode's first record.
    let forked = write("f.jsonl", r#"{"type":"x"}"#);
    let known = identify_source(&seal, "codex", &forked, "first-of-A");
    assert_eq!(
        (known.conversation.as_str(), known.witness),
        ("conv", Witness::FirstEvent)
    );

    // Nothing: the source starts a conversation.
    let own = write("own.jsonl", r#"{"type":"x"}"#);
    let known = identify_source(&seal, "codex", &own, "e1");
    assert_eq!(
        (known.conversation.as_str(), known.hop, known.witness),
        ("codex:e1", 0, Witness::Origin)
    );
    // A planted ledger (another key) does not make it an episode.
    let planted = Seal::ephemeral();
    record(
        &root,
        &planted,
        "planted",
        KEY,
        episode("codex", "own", "own.jsonl", 9),
        &[],
    )
    .unwrap();
    assert_eq!(
        identify_source(&seal, "codex", &own, "e1").witness,
        Witness::Origin
    );
}

#[test]
fn a_killed_runs_ledger_temp_goes_once_its_lock_is_free() {
    let (_tmp, root) = store();
    let seal = Seal::ephemeral();
    record(
        &root,
        &seal,
        "c",
        KEY,
        episode("codex", "A", "a.jsonl", 1),
        &[],
    )
    .unwrap();
    let folder = dir(&std::fs::canonicalize(root.path()).unwrap());
    let name = |key: &str| folder.join(format!("{}.{key}.tmp", file_name("c")));
    let held_key = handoff_store::lock::Lock::key("a run still going");
    let _held = handoff_store::lock::Lock::acquire(
        &root,
        "a run still going",
        std::time::Duration::from_secs(1),
    )
    .unwrap();
    for key in [KEY, held_key.as_str()] {
        std::fs::write(name(key), b"half a ledger").unwrap();
    }
    std::fs::write(folder.join("not-ours.tmp"), b"x").unwrap();
    remove_stale_temps(&root, None);
    assert!(!name(KEY).exists(), "its run is gone");
    assert!(name(&held_key).exists(), "its run still holds the lock");
    assert!(folder.join("not-ours.tmp").exists());
    remove_stale_temps(&root, Some(&held_key));
    assert!(!name(&held_key).exists(), "the caller's own");
    assert_eq!(of_conversation(&root, &seal, "c").len(), 1);
}
