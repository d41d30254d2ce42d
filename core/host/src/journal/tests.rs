//! The journal's own tests: each kind of write killed and rolled back, and planted journals.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::MetadataExt;

use super::*;

fn setup() -> (tempfile::TempDir, StoreRoot, SessionRef) {
    let tmp = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(tmp.path().join("store")).unwrap();
    let path = root.path().join("sessions/s.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"one\ntwo\n").unwrap();
    let session = SessionRef {
        target: "t".into(),
        id: "s".into(),
        path,
    };
    (tmp, root, session)
}

fn key() -> String {
    Lock::key("conversation")
}

/// This test's user key (one per test binary: every journal it writes verifies in it).
fn seal() -> &'static Seal {
    Seal::of_this_process()
}

fn of<'a>(root: &'a StoreRoot, key: &'a str) -> Conversation<'a> {
    Conversation {
        root,
        seal: seal(),
        key,
        target: "t",
        locator: "c",
    }
}

#[test]
fn an_in_place_append_is_cut_back_by_the_next_run() {
    let (_tmp, root, session) = setup();
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    assert!(journal.path().is_file());
    std::mem::forget(journal); // the run is killed
    let mut file = OpenOptions::new().append(true).open(&session.path).unwrap();
    file.write_all(b"three\n{\"torn").unwrap();
    let temp = session.path.with_file_name(format!(
        "{}abc",
        handoff_store::atomic::temp_prefix(std::process::id())
    ));
    std::fs::write(&temp, b"half").unwrap();

    let hot = hot(&root, seal(), None).unwrap().journals;
    assert_eq!(hot.len(), 1);
    let done = hot[0].roll_back().unwrap().unwrap();
    assert_eq!(
        done,
        Rollback::CutBack {
            path: session.path.clone(),
            from: 20,
            to: 8
        }
    );
    for h in hot {
        h.finish().unwrap();
    }
    assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
    assert!(!temp.exists());
    assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
}

#[test]
fn a_replaced_file_gets_its_old_inode_back() {
    let (_tmp, root, session) = setup();
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    handoff_store::atomic::replace(&session.path, |w| w.write_all(b"other\n")).unwrap();
    let done = journal.roll_back().unwrap();
    assert_eq!(
        done,
        Rollback::Restored {
            path: session.path.clone()
        }
    );
    assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
}

#[test]
fn a_live_runs_journal_is_not_hot_and_a_commit_leaves_nothing() {
    let (_tmp, root, session) = setup();
    let lock = Lock::acquire(&root, "conversation", Default::default()).unwrap();
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    assert!(
        hot(&root, seal(), None).unwrap().journals.is_empty(),
        "its lock is held"
    );
    assert_eq!(
        hot(&root, seal(), Some(&key())).unwrap().journals.len(),
        1,
        "held by me"
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(&session.path)
        .unwrap()
        .write_all(b"three\n")
        .unwrap();
    journal.commit().unwrap();
    drop(lock);
    assert!(hot(&root, seal(), None).unwrap().journals.is_empty());
    assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
    assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\nthree\n");
}

#[test]
fn without_hard_links_a_copy_restores_even_a_file_changed_in_place() {
    let (_tmp, root, session) = setup();
    let journal = Journal::begin_append_keeping(of(&root, &key()), &session, false).unwrap();
    assert!(matches!(
        journal.record().op,
        Op::Append {
            backup: Backup::Copy,
            ..
        }
    ));
    let file = OpenOptions::new().write(true).open(&session.path).unwrap();
    std::os::unix::fs::FileExt::write_at(&file, b"ONE\ntwo\nthree\n", 0).unwrap();
    std::mem::forget(journal);
    let hot = hot(&root, seal(), None).unwrap().journals;
    let done = hot[0].roll_back().unwrap().unwrap();
    assert!(matches!(done, Rollback::Restored { .. }), "{done:?}");
    for h in hot {
        h.finish().unwrap();
    }
    assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
}

#[test]
fn a_failed_copy_leaves_nothing_and_names_both_files() {
    let (tmp, _root, session) = setup();
    let to = tmp.path().join("missing-folder/copy");
    let err = copy_durably(&session.path, &to).unwrap_err();
    assert!(err.to_string().contains("s.jsonl"), "{err}");
    assert!(err.to_string().contains("missing-folder/copy"), "{err}");
    assert!(!to.exists());
}

#[test]
fn a_file_changed_in_place_is_not_cut_back_blindly() {
    let (_tmp, root, session) = setup();
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    std::mem::forget(journal);
    let file = OpenOptions::new().write(true).open(&session.path).unwrap();
    std::os::unix::fs::FileExt::write_at(&file, b"ONE\ntwo\nthree\n", 0).unwrap();
    let hot = hot(&root, seal(), None).unwrap().journals;
    let err = hot[0].roll_back().unwrap_err();
    assert!(err.to_string().contains("changed in place"), "{err}");
    assert!(err.to_string().contains("s.jsonl"), "{err}");
    assert_eq!(
        std::fs::read(&session.path).unwrap(),
        b"ONE\ntwo\nthree\n",
        "left alone"
    );
}

#[test]
fn a_create_journal_names_what_was_made_and_a_half_written_journal_is_cleared() {
    let (_tmp, root, session) = setup();
    let mut journal = Journal::begin_create(of(&root, &key()), Some("old")).unwrap();
    journal.created(&session).unwrap();
    std::mem::forget(journal);
    std::fs::write(
        dir(&root).join(format!("{}.1-2-x.json.tmp", Lock::key("other"))),
        b"{\"sch",
    )
    .unwrap();
    let hot = hot(&root, seal(), None).unwrap().journals;
    assert_eq!(hot.len(), 2);
    let rollbacks: Vec<_> = hot.iter().map(|h| h.roll_back().unwrap()).collect();
    assert!(rollbacks.contains(&None));
    assert!(rollbacks.contains(&Some(Rollback::Create {
        created: Some(session.clone()),
        previous: Some("old".into())
    })));
    for h in hot {
        h.finish().unwrap();
    }
    assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
}

#[test]
fn temps_of_a_dead_run_are_found_anywhere_in_the_store() {
    let (_tmp, root, _session) = setup();
    let deep = root.path().join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    let prefix = handoff_store::atomic::temp_prefix(4_000_001);
    std::fs::write(deep.join(format!("{prefix}x")), b"").unwrap();
    std::fs::write(deep.join(".handoff-tmp-4000002-x"), b"").unwrap();
    assert_eq!(remove_temps_under(&root, 4_000_001).unwrap(), 1);
    assert_eq!(std::fs::read_dir(&deep).unwrap().count(), 1);
}

/// A victim outside the store root, and a journal's name as a run would make it.
fn victim(tmp: &tempfile::TempDir) -> PathBuf {
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, b"the user's own file\n").unwrap();
    victim
}

fn plant(root: &StoreRoot, record: &Record) -> PathBuf {
    let dir = dir(root);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.1-2-planted.json", key()));
    std::fs::write(&path, serde_json::to_vec_pretty(record).unwrap()).unwrap();
    path
}

fn planted(op: Op, seal: String) -> Record {
    Record {
        schema: JOURNAL_SCHEMA.into(),
        pid: 4_000_000,
        started_ms: 0,
        target: "t".into(),
        locator: "c".into(),
        op,
        seal,
    }
}

#[test]
fn planted_journals_are_ignored_and_touch_nothing() {
    let (tmp, root, session) = setup();
    let victim = victim(&tmp);
    let meta = std::fs::metadata(&victim).unwrap();
    let as_victim = SessionRef {
        target: "t".into(),
        id: "v".into(),
        path: victim.clone(),
    };
    let digest = {
        let mut file = File::open(&victim).unwrap();
        rollback::tail_digest(&mut file, 5).unwrap()
    };
    let ops = [
        Op::Create {
            previous: None,
            created: Some(as_victim.clone()),
            created_file: Some(FileId::of(&meta)),
        },
        Op::Append {
            session: as_victim.clone(),
            len: 5,
            dev: meta.dev(),
            ino: meta.ino(),
            tail_sha256: digest,
            backup: Backup::Copy,
        },
        Op::Append {
            session: session.clone(),
            len: 0,
            dev: 0,
            ino: 0,
            tail_sha256: String::new(),
            backup: Backup::Copy,
        },
    ];
    // No seal, a made-up seal, and an old schema: none is acted on.
    for op in ops {
        for (schema, tag) in [
            (JOURNAL_SCHEMA, String::new()),
            (JOURNAL_SCHEMA, "ab".repeat(32)),
            ("handoff.journal/1", String::new()),
        ] {
            let mut record = planted(op.clone(), tag);
            record.schema = schema.into();
            let path = plant(&root, &record);
            // A planted .orig beside it, ready to be renamed over the victim.
            std::fs::write(path.with_extension("orig"), b"attacker").unwrap();
            let found = hot(&root, seal(), None).unwrap();
            assert!(found.journals.is_empty(), "{record:?}");
            assert_eq!(found.ignored.len(), 1);
            assert_eq!(found.ignored[0].path, path);
            assert!(path.exists(), "an ignored journal is left where it is");
            std::fs::remove_file(path.with_extension("orig")).unwrap();
            std::fs::remove_file(&path).unwrap();
        }
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"the user's own file\n");
    assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
}

#[test]
fn a_sealed_journal_of_another_root_or_run_does_not_verify() {
    let (tmp, root, session) = setup();
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    let bytes = std::fs::read(journal.path()).unwrap();
    let name = journal.name.clone();
    let here = on_disk::root_id(&root);
    assert!(matches!(
        verify(seal(), &here, &name, &bytes),
        Verdict::Sealed(_)
    ));
    // Copied to another store root, renamed to another conversation, or edited: untrusted.
    let elsewhere = tmp.path().join("elsewhere");
    assert!(matches!(
        verify(seal(), &elsewhere, &name, &bytes),
        Verdict::Untrusted(_)
    ));
    let other_key = format!("{}{}", Lock::key("other"), &name[64..]);
    assert!(matches!(
        verify(seal(), &here, &other_key, &bytes),
        Verdict::Untrusted(_)
    ));
    let edited = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"len\": 8", "\"len\": 3");
    assert_ne!(edited.as_bytes(), &bytes[..]);
    assert!(matches!(
        verify(seal(), &here, &name, edited.as_bytes()),
        Verdict::Untrusted(_)
    ));
    // Another user's key.
    assert!(matches!(
        verify(&Seal::ephemeral(), &here, &name, &bytes),
        Verdict::Untrusted(_)
    ));
    journal.commit().unwrap();
}

#[test]
fn a_sealed_journal_never_acts_outside_its_store_root() {
    let (tmp, root, session) = setup();
    let victim = victim(&tmp);
    // The session's folder becomes a link out of the store root after the journal was written.
    let journal = Journal::begin_append(of(&root, &key()), &session).unwrap();
    std::mem::forget(journal);
    let folder = session.path.parent().unwrap();
    std::fs::remove_dir_all(folder).unwrap();
    std::os::unix::fs::symlink(tmp.path(), folder).unwrap();
    std::fs::rename(&victim, tmp.path().join("s.jsonl")).unwrap();
    let found = hot(&root, seal(), None).unwrap();
    assert_eq!(found.journals.len(), 1);
    let err = found.journals[0].roll_back().unwrap_err();
    assert!(err.to_string().contains("outside the store root"), "{err}");
    assert_eq!(
        std::fs::read(tmp.path().join("s.jsonl")).unwrap(),
        b"the user's own file\n"
    );
}

#[test]
fn a_kept_copy_that_is_not_the_old_file_is_not_restored() {
    let (_tmp, root, session) = setup();
    let journal = Journal::begin_append_keeping(of(&root, &key()), &session, false).unwrap();
    let orig = journal.backup_path();
    std::mem::forget(journal);
    handoff_store::atomic::replace(&session.path, |w| w.write_all(b"new\n")).unwrap();
    std::fs::write(&orig, b"attacker").unwrap();
    let found = hot(&root, seal(), None).unwrap();
    let err = found.journals[0].roll_back().unwrap_err();
    assert!(err.to_string().contains("not the old file"), "{err}");
    assert_eq!(std::fs::read(&session.path).unwrap(), b"new\n");
}
