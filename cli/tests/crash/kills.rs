//! SIGKILL at points spread over each phase of a `continue` (create, then append) of a large session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use handoff_host::{Plugin, Transcript};

use crate::support::*;

/// Turns in the large session: 4 events and about 2.4 KB of Codex rollout each.
const TURNS: usize = 3_000;
/// Kills per kind of write (two rounds over the six phases).
const KILLS: usize = 12;

struct Large {
    scratch: Scratch,
    whole: Transcript,
    prefix_source: PathBuf,
    whole_source: PathBuf,
    /// The prefix's session, grown in place to the whole conversation (as Claude Code grows a
    /// session the person goes on with): one conversation with the prefix, by its first event.
    grown_source: PathBuf,
}

fn large() -> Large {
    let scratch = Scratch::new();
    let whole = conversation(env_number("HANDOFF_KILL_TURNS", TURNS));
    let mut prefix = whole.clone();
    prefix.events.truncate(whole.events.len() * 6 / 10);
    let prefix_source = claude_source(&scratch.path("claude-prefix"), &prefix);
    let whole_source = claude_source(&scratch.path("claude-whole"), &whole);
    let grown_root = scratch.path("claude-grown");
    copy_tree(&scratch.path("claude-prefix"), &grown_root);
    let grown_source = grown_root.join(
        prefix_source
            .strip_prefix(scratch.path("claude-prefix"))
            .unwrap(),
    );
    let root = handoff_host::StoreRoot::new(&grown_root).unwrap();
    let session = handoff_host::SessionRef {
        target: "claude-code".into(),
        id: grown_source
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned(),
        path: grown_source.clone(),
    };
    handoff_claude::ClaudePlugin
        .writer()
        .append(&root, &session, &whole.events[prefix.events.len()..])
        .expect("grow the prefix's session");
    let whole = read_source(&whole_source);
    Large {
        scratch,
        whole,
        prefix_source,
        whole_source,
        grown_source,
    }
}

/// Where to kill: the engine phase to wait for, then how long after it. The kills go round the
/// phases of the run (source reading, lookup, the plugin writing, the verify, the end), each phase's
/// kills spread over its measured length.
fn schedule(
    phases: &[(String, Duration)],
    total: Duration,
    kills: usize,
) -> Vec<(String, Duration)> {
    let mut windows: Vec<(String, Duration)> = Vec::new();
    let mut start = ("reading".to_owned(), Duration::ZERO);
    for (phase, at) in phases.iter().chain([&("exit".to_owned(), total)]) {
        windows.push((start.0.clone(), at.saturating_sub(start.1)));
        start = (phase.clone(), *at);
    }
    // The phases where a kill finds something to roll back come first and get the most kills.
    let order = [
        "journaled",
        "written",
        "locked",
        "reading",
        "verified",
        "committed",
    ];
    let windows: Vec<(String, Duration)> = order
        .iter()
        .filter_map(|name| windows.iter().find(|(p, _)| p == name).cloned())
        .collect();
    let mut planned = Vec::new();
    for k in 0..kills {
        let (phase, length) = &windows[k % windows.len()];
        let round = k / windows.len();
        let rounds = kills.div_ceil(windows.len());
        let fraction = (round as f64 + 0.5) / rounds as f64;
        planned.push((phase.clone(), length.mul_f64(fraction)));
    }
    planned
}

fn print_phases(what: &str, phases: &[(String, Duration)], total: Duration, bytes: u64) {
    let list: Vec<String> = phases
        .iter()
        .map(|(p, at)| format!("{p} {:.0} ms", at.as_secs_f64() * 1e3))
        .collect();
    eprintln!(
        "{what}: {:.1} MB, uninterrupted {:.0} ms: {}",
        bytes as f64 / 1e6,
        total.as_secs_f64() * 1e3,
        list.join(", ")
    );
}

fn print_outcomes(what: &str, outcomes: &BTreeMap<(String, &'static str), usize>) {
    eprintln!("{what}: (phase at kill, state after the next command) → kills");
    for ((phase, state), n) in outcomes {
        eprintln!("  {phase:>10} → {state:<9} {n}");
    }
}

fn assert_clean(root: &Path, scratch: &Scratch, context: &str) {
    let left = leftovers(root, &scratch.tmp(), &shared().certificates);
    assert!(left.is_empty(), "{context}: left behind: {left:#?}");
}

/// The append goes into the conversation's reused Codex episode, found as `handoff continue`
/// finds it (no locator: the source's conversation, then the episode by content).
#[test]
fn killed_appends_leave_the_old_or_the_complete_bytes_and_a_rerun_keeps_the_id() {
    let shared = shared();
    let large = large();
    let s = &large.scratch;
    let base = s.path("base");
    let first = continued(
        &continue_found_cmd(&shared.config, &s.tmp(), &large.prefix_source, &base)
            .output()
            .unwrap(),
    );
    let id = first["session"]["id"].as_str().unwrap().to_owned();
    let rollout = PathBuf::from(first["session"]["path"].as_str().unwrap());
    let relative = rollout.strip_prefix(&base).unwrap().to_owned();
    let old = std::fs::read(&rollout).unwrap();

    let reference = s.path("reference");
    copy_tree(&base, &reference);
    let (phases, total, out) = phase_times(continue_found_cmd(
        &shared.config,
        &s.tmp(),
        &large.grown_source,
        &reference,
    ));
    let done = continued(&out);
    assert_eq!(done["session"]["id"], id.as_str());
    assert_eq!(done["action"]["kind"], "appended");
    let complete = std::fs::read(reference.join(&relative)).unwrap();
    print_phases("append", &phases, total, complete.len() as u64);

    let kills = env_number("HANDOFF_KILLS", KILLS);
    let mut outcomes: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut rolled_back_after_journal = 0;
    for (i, (phase, after)) in schedule(&phases, total, kills).into_iter().enumerate() {
        let root = s.path(&format!("append-{i}"));
        copy_tree(&base, &root);
        let killed = kill_at(
            continue_found_cmd(&shared.config, &s.tmp(), &large.grown_source, &root),
            &phase,
            after,
        );
        let context = format!(
            "kill {i}: {:.0} ms after {phase} (last phase logged {}, finished: {})",
            after.as_secs_f64() * 1e3,
            killed.phase,
            killed.finished
        );
        // The next write into the store root rolls back what the kill left (`recover` alone).
        let next = handoff(&shared.config, &s.tmp())
            .args(["recover", "codex", "--store-root"])
            .arg(&root)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(next.status.success(), "{context}: {}", stderr(&next));
        let bytes = std::fs::read(root.join(&relative)).unwrap();
        let state = if bytes == old {
            "old"
        } else if bytes == complete
            || (bytes.starts_with(&old) && reads_as(&root.join(&relative), &large.whole).is_ok())
        {
            "complete"
        } else {
            panic!(
                "{context}: the session is neither its old {} bytes nor complete: {} bytes\n{}",
                old.len(),
                bytes.len(),
                killed.stderr
            );
        };
        assert_clean(&root, s, &context);
        if state == "old" && ["journaled", "written", "verified"].contains(&killed.phase.as_str()) {
            rolled_back_after_journal += 1;
        }
        let again = continued(
            &continue_found_cmd(&shared.config, &s.tmp(), &large.grown_source, &root)
                .output()
                .unwrap(),
        );
        assert_eq!(again["session"]["id"], id.as_str(), "{context}");
        let expected = if state == "old" {
            "appended"
        } else {
            "unchanged"
        };
        assert_eq!(again["action"]["kind"], expected, "{context}");
        assert_eq!(rollouts(&root).len(), 1, "{context}");
        assert_clean(&root, s, &context);
        *outcomes.entry((killed.phase, state)).or_default() += 1;
        std::fs::remove_dir_all(&root).unwrap();
    }
    print_outcomes("append", &outcomes);
    assert!(
        rolled_back_after_journal > 0,
        "no kill landed between the journal and the commit: {outcomes:?}"
    );
}

#[test]
fn killed_creates_leave_nothing_or_a_whole_session_and_a_rerun_makes_exactly_one() {
    let shared = shared();
    let large = large();
    let s = &large.scratch;
    let reference = s.path("reference");
    let (phases, total, out) = phase_times(continue_cmd(
        &shared.config,
        &s.tmp(),
        &large.whole_source,
        &reference,
    ));
    let done = continued(&out);
    assert_eq!(done["action"]["kind"], "created");
    let bytes = std::fs::metadata(done["session"]["path"].as_str().unwrap())
        .unwrap()
        .len();
    print_phases("create", &phases, total, bytes);
    std::fs::remove_dir_all(&reference).unwrap();

    let kills = env_number("HANDOFF_KILLS", KILLS);
    let mut outcomes: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut removed_after_journal = 0;
    for (i, (phase, after)) in schedule(&phases, total, kills).into_iter().enumerate() {
        let root = s.path(&format!("create-{i}"));
        let killed = kill_at(
            continue_cmd(&shared.config, &s.tmp(), &large.whole_source, &root),
            &phase,
            after,
        );
        let context = format!(
            "kill {i}: {:.0} ms after {phase} (last phase logged {}, finished: {})",
            after.as_secs_f64() * 1e3,
            killed.phase,
            killed.finished
        );
        // The next write into the store root rolls back what the kill left (`recover` alone).
        let next = handoff(&shared.config, &s.tmp())
            .args(["recover", "codex", "--store-root"])
            .arg(&root)
            .output()
            .unwrap();
        assert!(next.status.success(), "{context}: {}", stderr(&next));
        let found = rollouts(&root);
        let state = match found.as_slice() {
            [] => "none",
            [one] => {
                if let Err(diff) = reads_as(one, &large.whole) {
                    panic!("{context}: a partial session survived: {diff}");
                }
                "complete"
            }
            more => panic!("{context}: {} sessions: {more:?}", more.len()),
        };
        assert_clean(&root, s, &context);
        if state == "none" && ["journaled", "written", "verified"].contains(&killed.phase.as_str())
        {
            removed_after_journal += 1;
        }
        let again = continued(
            &continue_cmd(&shared.config, &s.tmp(), &large.whole_source, &root)
                .output()
                .unwrap(),
        );
        let after = rollouts(&root);
        assert_eq!(after.len(), 1, "{context}: {after:?}");
        if let [before] = found.as_slice() {
            assert_eq!(after[0], *before, "{context}: the rerun kept the id");
            assert_eq!(again["action"]["kind"], "unchanged", "{context}");
        } else {
            assert_eq!(again["action"]["kind"], "created", "{context}");
        }
        assert_clean(&root, s, &context);
        *outcomes.entry((killed.phase, state)).or_default() += 1;
        std::fs::remove_dir_all(&root).unwrap();
    }
    print_outcomes("create", &outcomes);
    assert!(
        removed_after_journal > 0,
        "no kill landed between the journal and the commit: {outcomes:?}"
    );
}
