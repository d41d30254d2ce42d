//! The differential harness (issue 15): genuine sessions written by the real CLIs, and mutations
//! of them that real stores contain, read by the plugin's reader and resumed by the real CLI
//! against the fake provider. The reader must read exactly the conversation the CLI sends, or
//! fail (naming file and line) where the CLI fails. Each case states what is expected; a
//! deliberate difference says why (docs/live.md, "Differential tests").
//!
//! Run: `HANDOFF_LIVE_REQUIRED=1 cargo test -p handoff-live --test differential`.

use std::path::PathBuf;

use handoff_host::{Plugin, ReadFrom};
use handoff_live::differential::{
    generic, join, lines, map_records, no_side_files, run_case, Case, CaseResult, Mutation,
    Outcome, SideFile, GENUINE,
};
use handoff_live::{skips_are_failures, LiveOptions};
use serde_json::{json, Value};

#[path = "differential/claude_rules.rs"]
mod claude_rules;
#[path = "differential/copilot.rs"]
mod copilot;
#[path = "differential/gemini.rs"]
mod gemini;
#[path = "differential/opencode.rs"]
mod opencode;
#[path = "differential/pi.rs"]
mod pi;
#[path = "differential/qwen.rs"]
mod qwen;

/// What a case must come to.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The reader reads what the CLI sends.
    Agree,
    /// The CLI sends nothing; the reader fails naming the file and line.
    BothFail,
    /// The CLI resumes; the reader refuses, on purpose (the reason is in docs/live.md).
    DeliberateReaderFails(&'static str),
    /// Both read a conversation and they differ, on purpose or not yet resolved (the reason is
    /// in docs/live.md).
    Differs(&'static str),
    /// The CLI sends a history the provider refuses (an API rule it breaks), the one the reader
    /// reads (`same`) or another; why is in docs/live.md.
    ProviderRefuses { same: bool, why: &'static str },
    /// The CLI finds or resumes nothing; the reader reads the conversation, on purpose (an end
    /// of the verified range that stopped resuming such a file; the reason is in docs/live.md).
    DeliberateCliFails(&'static str),
}

/// The working directory every genuine sample was recorded in.
pub(crate) const RECORDED_CWD: &str = "/home/dev/proj";

fn sample(path: &str) -> Vec<u8> {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/differential")
        .join(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Runs every case, prints a table, and fails on the first case whose outcome is not expected
/// (after running them all, so the table is whole).
fn check(plugin: &dyn Plugin, cases: Vec<(Case<'_>, Expect)>) {
    // HANDOFF_DIFF_KEEP=1 keeps every temporary HOME (with the fake provider's request log).
    let options = LiveOptions {
        keep_homes: std::env::var_os("HANDOFF_DIFF_KEEP").is_some(),
        ..LiveOptions::default()
    };
    let mut wrong = Vec::new();
    let mut skipped = Vec::new();
    // HANDOFF_DIFF_ONLY=<text> runs only the cases whose name contains it.
    let only = std::env::var("HANDOFF_DIFF_ONLY").unwrap_or_default();
    for (case, expect) in cases.iter().filter(|(c, _)| c.name.contains(&only)) {
        let result = run_case(plugin, case, &options);
        let verdict = judge(&result, *expect);
        println!(
            "{:<58} {:>6.0} ms  {}",
            result.name,
            result.duration_ms,
            match &result.outcome {
                Ok(o) => format!("{} ({verdict})", o.kind()),
                Err(e) => format!("not run: {e}"),
            }
        );
        if let Expect::DeliberateReaderFails(why)
        | Expect::Differs(why)
        | Expect::DeliberateCliFails(why)
        | Expect::ProviderRefuses { why, .. } = expect
        {
            println!("    why: {why}");
        }
        if let Ok(
            Outcome::Differ(diff)
            | Outcome::ProviderRefuses {
                diff: Some(diff), ..
            },
        ) = &result.outcome
        {
            println!("    diff: {diff}");
        }
        if result.skipped {
            skipped.push(result.name.clone());
        } else if verdict != "as expected" {
            wrong.push(format!(
                "{}: expected {expect:?}, got {:?}; evidence: {}",
                result.name,
                result.outcome,
                result.evidence.join(" | ")
            ));
        }
    }
    println!("{} cases", cases.len());
    assert!(
        wrong.is_empty(),
        "{} of {} cases disagree:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    if !skipped.is_empty() {
        assert!(
            !skips_are_failures(),
            "HANDOFF_LIVE_REQUIRED=1 and {} cases were skipped (CLI absent): {skipped:?}",
            skipped.len()
        );
        eprintln!("skipped (CLI absent): {skipped:?}");
    }
}

/// One genuine session of a CLI target, and where the CLI finds it.
struct Sample<'a> {
    target: &'a str,
    /// Its short name in case names, e.g. `tool-call`.
    short: &'a str,
    id: &'a str,
    bytes: &'a [u8],
    place: &'a dyn Fn(&str) -> PathBuf,
    side_files: &'a dyn Fn(&str) -> Vec<SideFile>,
    /// The working directory its records name.
    recorded_cwd: &'a str,
}

/// One genuine session of a CLI (short name, id, bytes, where the CLI finds it) and its
/// mutations, with what each must come to.
type SampleRows<'a> = (
    &'a str,
    &'a str,
    &'a [u8],
    &'a dyn Fn(&str) -> PathBuf,
    Vec<(Mutation, Expect)>,
);

/// The cases of a CLI's samples, in order: [`cases_of`] each.
fn cases_of_samples<'a>(
    target: &'a str,
    side_files: &'a dyn Fn(&str) -> Vec<SideFile>,
    samples: Vec<SampleRows<'a>>,
) -> Vec<(Case<'a>, Expect)> {
    samples
        .into_iter()
        .flat_map(|(short, id, bytes, place, rows)| {
            let sample = Sample {
                target,
                short,
                id,
                bytes,
                place,
                side_files,
                recorded_cwd: RECORDED_CWD,
            };
            cases_of(&sample, rows)
        })
        .collect()
}

/// The cases of `sample`: one per mutation, with what it must come to.
fn cases_of<'a>(
    sample: &Sample<'a>,
    rows: impl IntoIterator<Item = (Mutation, Expect)>,
) -> Vec<(Case<'a>, Expect)> {
    rows.into_iter()
        .map(|(mutation, expect)| {
            let case = Case {
                name: format!("{}/{}/{}", sample.target, sample.short, mutation.name),
                target: sample.target,
                id: sample.id,
                genuine: sample.bytes,
                recorded_cwd: sample.recorded_cwd,
                place: sample.place,
                side_files: sample.side_files,
                mutation,
            };
            (case, expect)
        })
        .collect()
}

fn judge(result: &CaseResult, expect: Expect) -> &'static str {
    match (&result.outcome, expect) {
        (Ok(Outcome::Agree(_)), Expect::Agree)
        | (Ok(Outcome::BothFail(_)), Expect::BothFail)
        | (Ok(Outcome::ReaderFails(_)), Expect::DeliberateReaderFails(_))
        | (Ok(Outcome::Differ(_)), Expect::Differs(_))
        | (Ok(Outcome::CliFails(_)), Expect::DeliberateCliFails(_)) => "as expected",
        (Ok(Outcome::ProviderRefuses { diff, .. }), Expect::ProviderRefuses { same, .. })
            if diff.is_none() == same =>
        {
            "as expected"
        }
        (Err(_), _) => "not run",
        _ => "NOT AS EXPECTED",
    }
}

// ---------------------------------------------------------------------------------------------
// Claude Code

const CLAUDE_TOOL: &str = "claude-code/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl";
const CLAUDE_TOOL_ID: &str = "31c027dc-f6fd-435e-b40a-e98d9514124a";
const CLAUDE_TWO: &str = "claude-code/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl";
const CLAUDE_TWO_ID: &str = "7ab6d42f-f51c-4eb0-8cba-032f2fa35adf";

/// Claude Code's project folder name for a cwd (every non-alphanumeric becomes `-`; the scene's
/// cwd is short and ASCII).
fn claude_place(id: &'static str) -> impl Fn(&str) -> PathBuf {
    move |cwd: &str| {
        let slug: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        PathBuf::from("projects")
            .join(slug)
            .join(format!("{id}.jsonl"))
    }
}

fn records(bytes: &[u8]) -> Vec<Value> {
    lines(bytes)
        .into_iter()
        .map(|l| serde_json::from_slice(l).expect("genuine lines are JSON"))
        .collect()
}

fn to_bytes(records: &[Value]) -> Vec<u8> {
    let text: Vec<String> = records.iter().map(Value::to_string).collect();
    join(&text.iter().map(|t| t.as_bytes()).collect::<Vec<_>>())
}

fn is_message(r: &Value) -> bool {
    matches!(r["type"].as_str(), Some("user" | "assistant"))
}

/// A copy of a message record under a new uuid (the last 4 hex digits changed), with a new
/// parent and its text replaced.
fn fork(r: &Value, tag: &str, parent: &Value, text: &str) -> Value {
    let mut copy = r.clone();
    let uuid = r["uuid"].as_str().unwrap();
    copy["uuid"] = json!(format!("{}{tag}", &uuid[..uuid.len() - 4]));
    copy["parentUuid"] = parent.clone();
    match &mut copy["message"]["content"] {
        Value::String(s) => *s = text.to_owned(),
        Value::Array(blocks) => {
            for b in blocks {
                if b["type"] == "text" {
                    b["text"] = json!(text);
                }
            }
        }
        _ => {}
    }
    if let Some(id) = copy["message"]["id"].as_str() {
        copy["message"]["id"] = json!(format!("{id}{tag}"));
    }
    copy
}

/// The last two message records swapped in place: the final assistant turn before its parent
/// (issue 15's case).
const SWAP_LAST_TWO_RECORDS: Mutation = Mutation {
    name: "swap-last-two-records",
    apply: |b| {
        let mut r = records(b);
        let at: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (x, y) = (at[at.len() - 2], at[at.len() - 1]);
        r.swap(x, y);
        to_bytes(&r)
    },
};

/// The whole file in reverse line order (every child before its parent).
const REVERSED: Mutation = Mutation {
    name: "reversed",
    apply: |b| {
        let mut l = lines(b);
        l.reverse();
        join(&l)
    },
};

/// The last assistant record written again right after itself (streamed records re-written).
const REPEAT_ASSISTANT: Mutation = Mutation {
    name: "repeat-assistant",
    apply: |b| {
        let mut l = lines(b);
        let last = (0..l.len())
            .rev()
            .find(|&i| {
                l[i].starts_with(b"{\"parentUuid\"") && contains(l[i], b"\"type\":\"assistant\"")
            })
            .expect("an assistant record");
        l.insert(last + 1, l[last]);
        join(&l)
    },
};

/// The first assistant record written again at the end of the file.
const REPEAT_EARLY_ASSISTANT_AT_END: Mutation = Mutation {
    name: "repeat-early-assistant-at-end",
    apply: |b| {
        let mut l = lines(b);
        let first = l
            .iter()
            .position(|x| contains(x, b"\"type\":\"assistant\""))
            .expect("an assistant record");
        l.push(l[first]);
        join(&l)
    },
};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// An abandoned branch: before the second turn, an earlier attempt at it (same parent, other
/// uuids and texts) that the person left by editing the prompt.
const ABANDONED_BRANCH: Mutation = Mutation {
    name: "abandoned-branch",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (user2, asst2) = (msgs[2], msgs[3]);
        let u = fork(
            &r[user2],
            "aaa1",
            &r[user2]["parentUuid"],
            "an abandoned question",
        );
        let a = fork(&r[asst2], "aaa2", &u["uuid"], "an abandoned answer");
        let mut out = r.clone();
        out.insert(user2, a);
        out.insert(user2, u);
        to_bytes(&out)
    },
};

/// A resumed older branch: at the end of the file, a turn that goes on from the first answer
/// (the person rewound past the second turn), then the `last-prompt` record Claude Code writes
/// after a turn, naming the new leaf.
const RESUMED_OLDER_BRANCH: Mutation = Mutation {
    name: "resumed-older-branch",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (asst1, user2, asst2) = (msgs[1], msgs[2], msgs[3]);
        let u = later(
            fork(&r[user2], "bbb1", &r[asst1]["uuid"], "a newer question"),
            5,
        );
        let a = later(fork(&r[asst2], "bbb2", &u["uuid"], "a newer answer"), 5);
        let prompt = json!({"type": "last-prompt", "lastPrompt": "a newer question",
            "leafUuid": a["uuid"], "sessionId": r[asst2]["sessionId"]});
        let mut out = r.clone();
        out.extend([u, a, prompt]);
        to_bytes(&out)
    },
};

/// The records without their `last-prompt` lines.
fn without_last_prompt(b: &[u8]) -> Vec<u8> {
    map_records(b, |_, r| (r["type"] != "last-prompt").then_some(r))
}

/// The last `last-prompt` line dropped: the one before it names the first answer, which the
/// second turn follows (a CLI killed before it wrote its `last-prompt`).
const STALE_LAST_PROMPT: Mutation = Mutation {
    name: "stale-last-prompt",
    apply: |b| {
        let mut r = records(b);
        let at = r.iter().rposition(|x| x["type"] == "last-prompt").unwrap();
        r.remove(at);
        to_bytes(&r)
    },
};

/// No `last-prompt` records, and the last two message records swapped.
const NO_LAST_PROMPT_SWAPPED: Mutation = Mutation {
    name: "no-last-prompt-swapped",
    apply: |b| (SWAP_LAST_TWO_RECORDS.apply)(&without_last_prompt(b)),
};

/// No `last-prompt` records, and a newer branch from the first answer at the end.
const NO_LAST_PROMPT_NEWER_BRANCH: Mutation = Mutation {
    name: "no-last-prompt-newer-branch",
    apply: |b| (NEWER_BRANCH_NO_LAST_PROMPT.apply)(&without_last_prompt(b)),
};

/// No `last-prompt` records, and an older branch at the end.
const NO_LAST_PROMPT_OLDER_BRANCH: Mutation = Mutation {
    name: "no-last-prompt-older-branch",
    apply: |b| (OLDER_BRANCH_AT_END.apply)(&without_last_prompt(b)),
};

/// `r` with its timestamp moved `minutes` later.
fn later(mut r: Value, minutes: u32) -> Value {
    let ts = r["timestamp"].as_str().unwrap().to_owned();
    // 2026-11-30T00:41:45.123Z: bump the minutes field.
    let minute: u32 = ts[14..16].parse().unwrap();
    r["timestamp"] = json!(format!("{}{:02}{}", &ts[..14], minute + minutes, &ts[16..]));
    r
}

/// A newer branch from the first answer, written later than the second turn, with no
/// `last-prompt` after it.
const NEWER_BRANCH_NO_LAST_PROMPT: Mutation = Mutation {
    name: "newer-branch-no-last-prompt",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (asst1, user2, asst2) = (msgs[1], msgs[2], msgs[3]);
        let u = later(
            fork(&r[user2], "bbb1", &r[asst1]["uuid"], "a newer question"),
            5,
        );
        let a = later(fork(&r[asst2], "bbb2", &u["uuid"], "a newer answer"), 5);
        let mut out = r.clone();
        out.push(u);
        out.push(a);
        to_bytes(&out)
    },
};

/// An older branch (written earlier in time than the second turn) at the end of the file.
const OLDER_BRANCH_AT_END: Mutation = Mutation {
    name: "older-branch-at-end",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (asst1, user2, asst2) = (msgs[1], msgs[2], msgs[3]);
        let mut u = fork(&r[user2], "bbb1", &r[asst1]["uuid"], "an older question");
        u["timestamp"] = r[asst1]["timestamp"].clone();
        let mut a = fork(&r[asst2], "bbb2", &u["uuid"], "an older answer");
        a["timestamp"] = r[asst1]["timestamp"].clone();
        let mut out = r.clone();
        out.push(u);
        out.push(a);
        to_bytes(&out)
    },
};

/// Subagent records (isSidechain) at the end of the file.
const SIDECHAIN_AT_END: Mutation = Mutation {
    name: "sidechain-at-end",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let mut u = fork(&r[msgs[0]], "ccc1", &Value::Null, "a subagent task");
        u["isSidechain"] = json!(true);
        let mut a = fork(
            &r[msgs[msgs.len() - 1]],
            "ccc2",
            &u["uuid"],
            "a subagent answer",
        );
        a["isSidechain"] = json!(true);
        let mut out = r.clone();
        out.push(u);
        out.push(a);
        to_bytes(&out)
    },
};

/// Records of kinds no reader models, in the middle and at the end.
const UNKNOWN_KINDS: Mutation = Mutation {
    name: "unknown-kinds",
    apply: |b| {
        let mut r = records(b);
        let session = r
            .iter()
            .find_map(|x| x["sessionId"].as_str())
            .unwrap()
            .to_owned();
        let at = r.len() / 2;
        r.insert(
            at,
            json!({"type": "x-future-kind", "sessionId": session, "data": {"n": 1}}),
        );
        r.push(json!({"type": "agent-name", "agentName": "helper", "sessionId": session}));
        to_bytes(&r)
    },
};

/// A record of a kind Claude Code keeps no message of, on the chain (as VibeCodingTracker's
/// fixture has a `file-history-delta` after a local command): after the first answer, a local
/// command's output written at the answer's millisecond, then the unknown record, on which the
/// second prompt hangs. Claude Code finds no parent for the prompt and goes on by time to the
/// first record written at that millisecond, the answer: the command's output is not sent.
const UNKNOWN_KIND_ON_CHAIN: Mutation = Mutation {
    name: "unknown-kind-on-chain",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (asst1, user2) = (msgs[1], msgs[2]);
        let mut output = fork(&r[user2], "ggg1", &r[asst1]["uuid"], "");
        output["message"]["content"] =
            json!("<local-command-stdout>(no content)</local-command-stdout>");
        output["timestamp"] = r[asst1]["timestamp"].clone();
        let mut delta = output.clone();
        delta.as_object_mut().unwrap().remove("message");
        delta["type"] = json!("file-history-delta");
        let uuid = r[user2]["uuid"].as_str().unwrap();
        delta["uuid"] = json!(format!("{}ggg2", &uuid[..uuid.len() - 4]));
        delta["parentUuid"] = output["uuid"].clone();
        let mut out = r.clone();
        out[user2]["parentUuid"] = delta["uuid"].clone();
        out.insert(user2, delta);
        out.insert(user2, output);
        to_bytes(&out)
    },
};

/// The first queue-operation record's timestamp an object: a record off the conversation with a
/// member of the wrong type (issue 24).
const QUEUE_TIMESTAMP_OBJECT: Mutation = Mutation {
    name: "queue-timestamp-object",
    apply: |b| {
        let mut r = records(b);
        let queued = r
            .iter()
            .position(|x| x["type"] == "queue-operation")
            .expect("a queue-operation record");
        r[queued]["timestamp"] = json!({"seconds": 1_796_000_000, "nanos": 0});
        to_bytes(&r)
    },
};

/// The tool call renamed to `$name` with input `$input` (as an older Claude Code wrote it).
macro_rules! renamed_tool {
    ($mutation:literal, $name:literal, $input:tt) => {
        Mutation {
            name: $mutation,
            apply: |b| {
                let mut r = records(b);
                for x in &mut r {
                    let Some(content) = x["message"]["content"].as_array_mut() else {
                        continue;
                    };
                    for block in content {
                        if block["type"] == "tool_use" {
                            block["name"] = json!($name);
                            block["input"] = json!($input);
                        }
                    }
                }
                to_bytes(&r)
            },
        }
    };
}

/// Tool names Claude Code once used, each an alias of a tool 2.1.197 has.
const LEGACY_TASK: Mutation = renamed_tool!("legacy-tool-Task", "Task",
    {"description": "echo", "prompt": "echo hi-from-tool", "subagent_type": "general-purpose",
     "name": "helper", "mode": "plan"});
const LEGACY_KILL_SHELL: Mutation =
    renamed_tool!("legacy-tool-KillShell", "KillShell", {"shell_id": "bash_1"});
const LEGACY_KILL_BASH: Mutation =
    renamed_tool!("legacy-tool-KillBash", "KillBash", {"shell_id": "bash_1"});
const LEGACY_BASH_OUTPUT: Mutation =
    renamed_tool!("legacy-tool-BashOutput", "BashOutput", {"bash_id": "bash_1"});
const LEGACY_BRIEF: Mutation = renamed_tool!("legacy-tool-Brief", "Brief", {"message": "hi"});
const LEGACY_RUN_WORKFLOW: Mutation =
    renamed_tool!("legacy-tool-RunWorkflow", "RunWorkflow", {"name": "w"});
const LEGACY_LIST_MCP: Mutation =
    renamed_tool!("legacy-tool-ListMcpResources", "ListMcpResources", {});
const LEGACY_EXIT_PLAN: Mutation =
    renamed_tool!("legacy-tool-ExitPlanMode", "ExitPlanMode", {"plan": "1. echo"});
const LEGACY_EDIT_EDITS: Mutation = renamed_tool!("legacy-tool-Edit-edits", "Edit",
    {"file_path": "/tmp/a", "old_string": "a", "new_string": "b", "edits": []});

/// An interrupted turn: the session ends on the assistant's tool call, without its result.
const INTERRUPTED_CALL: Mutation = Mutation {
    name: "interrupted-call",
    apply: |b| {
        let r = records(b);
        let call = r
            .iter()
            .rposition(|x| {
                x["type"] == "assistant" && x["message"]["content"][0]["type"] == "tool_use"
            })
            .expect("a tool call");
        to_bytes(&r[..=call])
    },
};

/// A compaction after the first turn, as Claude Code's `/compact` writes it: a `compact_boundary`
/// system record (no parent; `logicalParentUuid` the first answer) and the summary as a user
/// record (`isCompactSummary`), which the second turn then hangs on.
const COMPACTION: Mutation = Mutation {
    name: "compaction",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (asst1, user2) = (msgs[1], msgs[2]);
        let mut boundary = r[asst1].clone();
        let object = boundary.as_object_mut().unwrap();
        for key in ["message", "requestId", "promptId"] {
            object.remove(key);
        }
        boundary["type"] = json!("system");
        boundary["subtype"] = json!("compact_boundary");
        boundary["content"] = json!("Conversation compacted");
        boundary["level"] = json!("info");
        boundary["isMeta"] = json!(false);
        boundary["compactMetadata"] = json!({"trigger": "manual", "preTokens": 42});
        boundary["parentUuid"] = Value::Null;
        boundary["logicalParentUuid"] = r[asst1]["uuid"].clone();
        let uuid = r[asst1]["uuid"].as_str().unwrap();
        boundary["uuid"] = json!(format!("{}ddd1", &uuid[..uuid.len() - 4]));
        let mut summary = fork(&r[user2], "ddd2", &boundary["uuid"], "");
        summary["message"]["content"] = json!(
            "This session is being continued from a previous conversation that ran out of \
             context. The conversation is summarized below:\nThe user said hi; the assistant \
             said ok."
        );
        summary["isCompactSummary"] = json!(true);
        summary["isVisibleInTranscriptOnly"] = json!(true);
        let mut out = r.clone();
        out[user2]["parentUuid"] = summary["uuid"].clone();
        out.insert(user2, summary);
        out.insert(user2, boundary);
        to_bytes(&out)
    },
};

/// Two compactions: the one above, then a second after the second turn, a new turn on its
/// summary, and the `last-prompt` naming that turn's answer (the last boundary governs).
const TWO_COMPACTIONS: Mutation = Mutation {
    name: "two-compactions",
    apply: |b| {
        let r = records(&(COMPACTION.apply)(b));
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let (user2, asst2) = (msgs[msgs.len() - 2], msgs[msgs.len() - 1]);
        let boundary_at = r
            .iter()
            .position(|x| x["subtype"] == "compact_boundary")
            .unwrap();
        let mut boundary = r[boundary_at].clone();
        boundary["logicalParentUuid"] = r[asst2]["uuid"].clone();
        let uuid = r[asst2]["uuid"].as_str().unwrap();
        boundary["uuid"] = json!(format!("{}fff1", &uuid[..uuid.len() - 4]));
        let mut summary = r[boundary_at + 1].clone();
        summary["uuid"] = json!(format!("{}fff2", &uuid[..uuid.len() - 4]));
        summary["parentUuid"] = boundary["uuid"].clone();
        summary["message"]["content"] = json!("Both turns, summarised again.");
        let u = later(
            fork(&r[user2], "fff3", &summary["uuid"], "a third question"),
            5,
        );
        let a = later(fork(&r[asst2], "fff4", &u["uuid"], "a third answer"), 5);
        let prompt = json!({"type": "last-prompt", "lastPrompt": "a third question",
            "leafUuid": a["uuid"], "sessionId": r[asst2]["sessionId"]});
        let mut out = r.clone();
        out.extend([boundary, summary, u, a, prompt]);
        to_bytes(&out)
    },
};

/// The genuine session read by our reader, given a compaction in Codex's order (the user messages
/// it keeps, restated, then the compaction replacing through the last answer, as the Codex reader
/// reads a `compacted` record) and, when `then_turn`, a new turn on it, then written by our writer
/// (boundary, kept messages, summary) under the genuine session's id.
fn written_with_kept_compaction(b: &[u8], then_turn: bool) -> Vec<u8> {
    use handoff_host::{Body, CreateOptions, Event, Part, StoreRoot};
    let scratch = tempfile::tempdir().unwrap();
    let genuine = scratch.path().join("genuine.jsonl");
    std::fs::write(&genuine, b).unwrap();
    let claude = handoff_claude::ClaudePlugin;
    let mut t = claude
        .reader()
        .read(ReadFrom::File("claude-code", &genuine))
        .expect("the genuine session reads");
    let users: Vec<Event> = t
        .events
        .iter()
        .filter(|e| matches!(e.body, Body::User { .. }))
        .cloned()
        .collect();
    let last = t.events.last().unwrap().clone();
    for (n, mut kept) in users.into_iter().enumerate() {
        kept.id = format!("kept-{n}");
        kept.timestamp = last.timestamp;
        t.events.push(kept);
    }
    let mut compaction = last.clone();
    compaction.id = "compaction".into();
    compaction.author = None;
    compaction.body = Body::Compaction {
        summary: "The user said hi and asked again; the assistant answered both.".into(),
        replaces_through: last.id.clone(),
    };
    t.events.push(compaction);
    if then_turn {
        let mut question = last.clone();
        question.id = "after".into();
        question.author = None;
        question.body = Body::User {
            content: vec![Part::text("and after the summary?")],
        };
        t.events.push(question);
        let mut answer = last.clone();
        answer.id = "after-answer".into();
        t.events.push(answer);
    }
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    let session = claude
        .writer()
        .create(
            &root,
            "claude-code",
            &t,
            &CreateOptions {
                cwd: Some(RECORDED_CWD.into()),
                locator: None,
            },
        )
        .expect("our writer carries a compaction that keeps user messages");
    // Under the genuine session's id, where the case places the file.
    let genuine_id = records(b)
        .iter()
        .find_map(|r| r["sessionId"].as_str().map(str::to_owned))
        .unwrap();
    let written = records(&std::fs::read(&session.path).unwrap())
        .into_iter()
        .map(|mut r| {
            if r.get("sessionId").is_some() {
                r["sessionId"] = json!(genuine_id);
            }
            r
        })
        .collect::<Vec<_>>();
    to_bytes(&written)
}

/// The session read by our reader and written again by our writer, under its own id: Claude
/// Code → Claude Code. The viewer session's `isMeta` prompt is written back as meta, its parallel
/// calls in 2.1.197's layout (results on their calls, chained where their timestamps go back).
const WRITTEN_BY_US: Mutation = Mutation {
    name: "written-by-our-writer",
    apply: |b| {
        use handoff_host::{CreateOptions, StoreRoot};
        let scratch = tempfile::tempdir().unwrap();
        let genuine = scratch.path().join("genuine.jsonl");
        std::fs::write(&genuine, b).unwrap();
        let claude = handoff_claude::ClaudePlugin;
        let t = claude
            .reader()
            .read(ReadFrom::File("claude-code", &genuine))
            .expect("the session reads");
        let cwd = records(b)
            .iter()
            .find_map(|r| r["cwd"].as_str().map(str::to_owned))
            .unwrap();
        let root = StoreRoot::new(scratch.path().join("store")).unwrap();
        let session = claude
            .writer()
            .create(
                &root,
                "claude-code",
                &t,
                &CreateOptions {
                    cwd: Some(cwd),
                    locator: None,
                },
            )
            .expect("our writer writes what our reader read");
        let id = records(b)
            .iter()
            .find_map(|r| r["sessionId"].as_str().map(str::to_owned))
            .unwrap();
        let written = records(&std::fs::read(&session.path).unwrap())
            .into_iter()
            .map(|mut r| {
                if r.get("sessionId").is_some() {
                    r["sessionId"] = json!(id);
                }
                r
            })
            .collect::<Vec<_>>();
        assert!(
            written.iter().any(|r| r["isMeta"] == true)
                == records(b).iter().any(|r| r["isMeta"] == true),
            "an isMeta record is written back as one"
        );
        to_bytes(&written)
    },
};

/// Our writer's compaction that keeps the user messages (Codex's order), then a new turn.
const WRITTEN_KEEPING_COMPACTION: Mutation = Mutation {
    name: "written-compaction-keeps-users",
    apply: |b| written_with_kept_compaction(b, true),
};

/// The same, ending on the compaction's summary.
const WRITTEN_KEEPING_COMPACTION_AT_END: Mutation = Mutation {
    name: "written-compaction-keeps-users-at-end",
    apply: |b| written_with_kept_compaction(b, false),
};

/// An interrupted turn whose assistant message said something before its call: Claude Code
/// writes the text and the `tool_use` as two records of one message; the session ends on the
/// call.
const INTERRUPTED_CALL_AFTER_TEXT: Mutation = Mutation {
    name: "interrupted-call-after-text",
    apply: |b| {
        let r = records(b);
        let call = r
            .iter()
            .rposition(|x| {
                x["type"] == "assistant" && x["message"]["content"][0]["type"] == "tool_use"
            })
            .expect("a tool call");
        let mut text = r[call].clone();
        let uuid = r[call]["uuid"].as_str().unwrap();
        text["uuid"] = json!(format!("{}eee1", &uuid[..uuid.len() - 4]));
        text["message"]["content"] = json!([{"type": "text", "text": "Let me run it."}]);
        let mut out = r[..call].to_vec();
        let mut call_record = r[call].clone();
        call_record["parentUuid"] = text["uuid"].clone();
        out.push(text);
        out.push(call_record);
        to_bytes(&out)
    },
};

/// A public session Claude Code 1.0.98 wrote (claude-code-viewer's mock project): a `/init`
/// command, its expanded prompt as an `isMeta` user record, and assistant turns streamed as
/// several records sharing `message.id` (text then call, five parallel calls), results chained
/// one after another.
const CLAUDE_VIEWER: &str = "claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const CLAUDE_VIEWER_ID: &str = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
const CLAUDE_VIEWER_CWD: &str = "/path/to/Demo";

/// claude-code-log's `test/test_data/edge_cases.jsonl` (MIT, Daniel Demmel): hand-made records
/// that all start a chain of their own (`parentUuid: null`), malformed lines among them (a
/// `message.contenst`, a `timesstamp`, lines that are not records) and a `summary` naming the
/// leaf. Its session id is `edge_cases`, which Claude Code would not take for `--resume`: the
/// case gives it a uuid ([`edge_cases_bytes`]).
const CLAUDE_EDGE: &str = "claude-code/edge_cases.jsonl";
const CLAUDE_EDGE_ID: &str = "e0ca5e5e-0000-4000-8000-000000000027";

fn edge_cases_bytes() -> Vec<u8> {
    handoff_live::differential::replace_all(
        &sample(CLAUDE_EDGE),
        b"\"edge_cases\"",
        format!("\"{CLAUDE_EDGE_ID}\"").as_bytes(),
    )
}

/// A user record with its `message.content` misspelt `contenst` (as in claude-code-log's
/// edge cases), on a branch off the conversation: an earlier attempt at the second prompt,
/// written before it.
const MALFORMED_OFF_CONVERSATION: Mutation = Mutation {
    name: "malformed-off-conversation",
    apply: |b| {
        let r = records(b);
        let msgs: Vec<usize> = (0..r.len()).filter(|&i| is_message(&r[i])).collect();
        let first_answer = msgs
            .iter()
            .copied()
            .find(|&i| r[i]["type"] == "assistant")
            .expect("an answer");
        let mut branch = fork(&r[msgs[0]], "aaa3", &r[first_answer]["uuid"], "");
        let message = branch["message"].as_object_mut().unwrap();
        let content = message.remove("content").unwrap();
        message.insert("contenst".into(), content);
        let mut out = r.clone();
        out.insert(first_answer + 1, branch);
        to_bytes(&out)
    },
};

/// The same misspelling on a record of the conversation: the first assistant answer's.
const MALFORMED_ON_CONVERSATION: Mutation = Mutation {
    name: "malformed-on-conversation",
    apply: |b| {
        let mut r = records(b);
        let first_answer = r
            .iter()
            .position(|x| x["type"] == "assistant")
            .expect("an answer");
        let message = r[first_answer]["message"].as_object_mut().unwrap();
        let content = message.remove("content").unwrap();
        message.insert("contenst".into(), content);
        to_bytes(&r)
    },
};

/// The Claude Code samples: the two genuine 2.1.197 sessions, then the public ones.
struct ClaudeSamples<'a> {
    tool: &'a [u8],
    two: &'a [u8],
    viewer: &'a [u8],
    edge: &'a [u8],
    tool_place: &'a dyn Fn(&str) -> PathBuf,
    two_place: &'a dyn Fn(&str) -> PathBuf,
    viewer_place: &'a dyn Fn(&str) -> PathBuf,
    edge_place: &'a dyn Fn(&str) -> PathBuf,
}

/// The Claude Code the differential runs: the end of the verified range `HANDOFF_LIVE_END`
/// names (a candidate release reads as the newest end). The reader reads as that version sends
/// (`handoff_claude::ReadRules`).
fn claude_code_at_end() -> &'static str {
    match handoff_live::CliEnd::from_env() {
        handoff_live::CliEnd::Oldest => handoff_claude::CLAUDE_CODE_VERSION,
        handoff_live::CliEnd::Newest | handoff_live::CliEnd::Candidate => {
            handoff_claude::CLAUDE_CODE_NEWEST
        }
    }
}

/// What a case must come to at the oldest end of the range, and at the newest.
fn at_ends(oldest: Expect, newest: Expect) -> Expect {
    match handoff_live::CliEnd::from_env() {
        handoff_live::CliEnd::Oldest => oldest,
        handoff_live::CliEnd::Newest | handoff_live::CliEnd::Candidate => newest,
    }
}

fn claude_cases<'a>(s: &ClaudeSamples<'a>) -> Vec<(Case<'a>, Expect)> {
    let (tool, two, tool_place, two_place) = (s.tool, s.two, s.tool_place, s.two_place);
    const TORN: &str = "a torn last line is what a killed writer leaves; Claude Code drops it \
                        silently, our reader names it rather than guess that nothing was lost";
    const INTERRUPTED: &str = "deliberate: both drop the unresolved tool call (and the turn it \
                               leaves empty), but Claude Code then sends turns of its own (the \
                               resume prompt 'Continue from where you left off.', which \
                               CLAUDE_CODE_RESUME_PROMPT sets, and 'No response requested.'), \
                               which depend on its environment and launch mode, not on the file; \
                               our reader does not add them";
    const CHILD_FIRST: &str =
        "deliberate: with no last-prompt record Claude Code resumes from the \
                               last message in file order, so a final answer written before its \
                               parent is lost; our reader keeps it";
    let on_tool = [
        (GENUINE, Expect::Agree),
        (WRITTEN_BY_US, Expect::Agree),
        (SWAP_LAST_TWO_RECORDS, Expect::Agree),
        (REVERSED, Expect::Agree),
        (REPEAT_ASSISTANT, Expect::Agree),
        (SIDECHAIN_AT_END, Expect::Agree),
        (UNKNOWN_KINDS, Expect::Agree),
        (QUEUE_TIMESTAMP_OBJECT, Expect::Agree),
        // Claude Code 2.1.332 keeps the call the session ended on and answers it with its own
        // error result, and so does the reader reading as it (`ReadRules`): no resume prompt.
        (
            INTERRUPTED_CALL,
            at_ends(Expect::Differs(INTERRUPTED), Expect::Agree),
        ),
        (INTERRUPTED_CALL_AFTER_TEXT, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (generic::SWAP_EVERY_PAIR, Expect::Agree),
        (MALFORMED_OFF_CONVERSATION, Expect::Agree),
        // 2.1.332 passes over a tool result whose content is a number and drops the call it
        // leaves unanswered mid-conversation; 2.1.197 fails.
        (
            claude_rules::RESULT_CONTENT_A_NUMBER,
            at_ends(Expect::BothFail, Expect::Agree),
        ),
        (
            MALFORMED_ON_CONVERSATION,
            at_ends(Expect::BothFail, Expect::Agree),
        ),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::BOM, Expect::Agree),
        (LEGACY_TASK, Expect::Agree),
        (LEGACY_KILL_SHELL, Expect::Agree),
        (LEGACY_KILL_BASH, Expect::Agree),
        (LEGACY_BASH_OUTPUT, Expect::Agree),
        (LEGACY_BRIEF, Expect::Agree),
        (LEGACY_RUN_WORKFLOW, Expect::Agree),
        (LEGACY_LIST_MCP, Expect::Agree),
        (LEGACY_EXIT_PLAN, Expect::Agree),
        (LEGACY_EDIT_EDITS, Expect::Agree),
        // Both ends send a call without `input` as it is, which the API refuses (the provider's
        // refusal), and the reader names the field.
        (claude_rules::TOOL_USE_WITHOUT_INPUT, Expect::BothFail),
    ];
    const LOCAL_COMMAND_AT_END: &str =
        "deliberate, as for the interrupted turn: both read the same conversation, ending on the \
         local command's two user texts; Claude Code adds its resume turn ('No response \
         requested.') only after a user message it loaded, and to it a local command is a system \
         record, so it merges the prompt into that user message instead; the expectation adds \
         the resume turn the recipe declares after a user turn";
    const EMPTY_USER_CONTENT: &str =
        "2.1.197 sends the empty user message, which the provider refuses as empty (rule A8); \
         2.1.332 leaves it out, and the provider refuses the two answers then in a row (A10); \
         the reader reads as each (an empty user event, which the wire view leaves out, or \
         none), so the histories are the same";
    const BARE_STRING_AT_OLDEST: &str =
        "2.1.197 sends the bare string as it is, which the provider refuses (no block object); \
         the reader reads it as text, the same history";
    let on_two = [
        (GENUINE, Expect::Agree),
        (SWAP_LAST_TWO_RECORDS, Expect::Agree),
        (REPEAT_EARLY_ASSISTANT_AT_END, Expect::Agree),
        (ABANDONED_BRANCH, Expect::Agree),
        (RESUMED_OLDER_BRANCH, Expect::Agree),
        (NEWER_BRANCH_NO_LAST_PROMPT, Expect::Agree),
        (OLDER_BRANCH_AT_END, Expect::Agree),
        // Claude Code 2.1.332 resumes the conversation's last leaf, as the reader does.
        (
            NO_LAST_PROMPT_SWAPPED,
            at_ends(Expect::Differs(CHILD_FIRST), Expect::Agree),
        ),
        (STALE_LAST_PROMPT, Expect::Agree),
        (UNKNOWN_KIND_ON_CHAIN, Expect::Agree),
        (COMPACTION, Expect::Agree),
        (TWO_COMPACTIONS, Expect::Agree),
        (WRITTEN_KEEPING_COMPACTION, Expect::Agree),
        (
            WRITTEN_KEEPING_COMPACTION_AT_END,
            // Claude Code sends the kept user messages, then the summary, in our order, and its
            // own "No response requested." after it: the recipe's resume turn, which the
            // harness expects as the live tier does.
            Expect::Agree,
        ),
        (NO_LAST_PROMPT_NEWER_BRANCH, Expect::Agree),
        (NO_LAST_PROMPT_OLDER_BRANCH, Expect::Agree),
        (generic::CRLF, Expect::Agree),
        // 2.1.332 passes over a file snapshot going on by time, 2.1.197 does not (`ReadRules`).
        (claude_rules::BY_TIME_SKIPS_FILE_SNAPSHOT, Expect::Agree),
        // A loop of parents: both ends go on by time from the record whose parent is on the path.
        (claude_rules::LOOP_SELF, Expect::Agree),
        (claude_rules::LOOP_PAIR, Expect::Agree),
        (claude_rules::LOOP_ROUND, Expect::Agree),
        // 2.1.332 passes over a record whose message is no object; 2.1.197 fails.
        (
            claude_rules::MESSAGE_NOT_AN_OBJECT,
            at_ends(Expect::BothFail, Expect::Agree),
        ),
        // Both ends send a local command's records as user texts, merged with the user message
        // before them.
        (claude_rules::LOCAL_COMMAND, Expect::Agree),
        (
            claude_rules::LOCAL_COMMAND_AT_END,
            Expect::Differs(LOCAL_COMMAND_AT_END),
        ),
        // Both ends keep records without a timestamp.
        (claude_rules::WITHOUT_TIMESTAMP, Expect::Agree),
        // A root prompt of a bare string written last, no `last-prompt`: 2.1.332 resumes the
        // conversation before it, 2.1.197 the prompt, sending the string (the provider refuses
        // it); the reader reads as each (`ReadRules::bare_string_prompt_no_leaf`).
        (
            claude_rules::BARE_STRING_ROOT_PROMPT_AT_END,
            at_ends(
                Expect::ProviderRefuses {
                    same: true,
                    why: BARE_STRING_AT_OLDEST,
                },
                Expect::Agree,
            ),
        ),
        // Both ends send a block of a kind the transcript has no form for as it is, and the
        // reader refuses it (naming file, line and field): one no API takes (the provider
        // refuses it), and a `document` the provider takes (the CLI resumes, exit 0), which the
        // harness's own parse of the request cannot hold either, so it counts as both failing.
        (claude_rules::UNKNOWN_BLOCK_TYPE, Expect::BothFail),
        (claude_rules::DOCUMENT_BLOCK, Expect::BothFail),
        // A prompt of an empty array: 2.1.197 sends it empty, 2.1.332 not at all (the reader
        // reads as each: `ReadRules`); the provider refuses either history.
        (
            claude_rules::EMPTY_USER_CONTENT,
            Expect::ProviderRefuses {
                same: true,
                why: EMPTY_USER_CONTENT,
            },
        ),
        // A bare string block: 2.1.197 sends it (the provider refuses it), 2.1.332 leaves it out;
        // the reader reads as each (`ReadRules`).
        (
            claude_rules::BARE_STRING_BLOCK,
            at_ends(
                Expect::ProviderRefuses {
                    same: true,
                    why: BARE_STRING_AT_OLDEST,
                },
                Expect::Agree,
            ),
        ),
    ];
    let mut cases = cases_of_samples(
        "claude-code",
        &no_side_files,
        vec![
            (
                "tool-call",
                CLAUDE_TOOL_ID,
                tool,
                tool_place,
                on_tool.into(),
            ),
            ("two-turns", CLAUDE_TWO_ID, two, two_place, on_two.into()),
        ],
    );
    const REVERSED_NO_LAST_PROMPT: &str =
        "deliberate, as no-last-prompt-swapped: this 1.0.98 session has no last-prompt record, so \
         Claude Code resumes from the last message in file order, here the first prompt (it \
         sends that alone); our reader keeps the conversation's last leaf";
    let viewer = Sample {
        target: "claude-code",
        short: "viewer-1.0.98",
        id: CLAUDE_VIEWER_ID,
        bytes: s.viewer,
        place: s.viewer_place,
        side_files: &no_side_files,
        recorded_cwd: CLAUDE_VIEWER_CWD,
    };
    cases.extend(cases_of(
        &viewer,
        [
            (GENUINE, Expect::Agree),
            (generic::SWAP_EVERY_PAIR, Expect::Agree),
            (
                REVERSED,
                at_ends(Expect::Differs(REVERSED_NO_LAST_PROMPT), Expect::Agree),
            ),
            (MALFORMED_OFF_CONVERSATION, Expect::Agree),
            (
                MALFORMED_ON_CONVERSATION,
                at_ends(Expect::BothFail, Expect::Agree),
            ),
            (WRITTEN_BY_US, Expect::Agree),
        ],
    ));
    let edge = Sample {
        target: "claude-code",
        short: "claude-code-log-edge-cases",
        id: CLAUDE_EDGE_ID,
        bytes: s.edge,
        place: s.edge_place,
        side_files: &no_side_files,
        recorded_cwd: "/tmp",
    };
    const EDGE: &str = "Claude Code resumes from the last message line, the record repeated from \
                        line 10 at line 18, and so does our reader (it skips the lines Claude Code \
                        keeps no record of, and the malformed records off the conversation: line \
                        10's `contenst`, line 11's string message, replaced by line 12); that \
                        record's content holds a bare string, which Claude Code sends as is and \
                        the API refuses. The histories differ only by Claude Code's own resume \
                        prompt after a history that ends on a user message (deliberate, as for \
                        the interrupted turn)";
    // At 2.1.332 line 18 (bare strings only) is no leaf: Claude Code resumes line 17, an
    // assistant call whose parent is not in the file, sending it first (the provider refuses a
    // history that starts with an answer); the reader takes line 17 too and refuses its missing
    // parent, naming the line (it does not drop the beginning of a conversation unasked).
    cases.extend(cases_of(
        &edge,
        [(
            GENUINE,
            at_ends(
                Expect::ProviderRefuses {
                    same: false,
                    why: EDGE,
                },
                Expect::BothFail,
            ),
        )],
    ));
    cases
}

#[test]
fn claude_code_reader_agrees_with_claude_code() {
    let (tool, two) = (sample(CLAUDE_TOOL), sample(CLAUDE_TWO));
    let (viewer, edge) = (sample(CLAUDE_VIEWER), edge_cases_bytes());
    let samples = ClaudeSamples {
        tool: &tool,
        two: &two,
        viewer: &viewer,
        edge: &edge,
        tool_place: &claude_place(CLAUDE_TOOL_ID),
        two_place: &claude_place(CLAUDE_TWO_ID),
        viewer_place: &claude_place(CLAUDE_VIEWER_ID),
        edge_place: &claude_place(CLAUDE_EDGE_ID),
    };
    check(
        &handoff_claude::ClaudePluginReadingAs::version(claude_code_at_end()),
        claude_cases(&samples),
    );
}

// ---------------------------------------------------------------------------------------------
// Codex

const CODEX_TWO: &str =
    "codex/rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl";
const CODEX_TWO_ID: &str = "01a229e6-854b-7501-91aa-ee582218765e";
const CODEX_TOOL: &str =
    "codex/rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl";
const CODEX_TOOL_ID: &str = "01a229e6-93f2-7540-95e0-5ee20bf368fe";

fn codex_place(file: &'static str) -> impl Fn(&str) -> PathBuf {
    move |_cwd: &str| {
        let name = file.rsplit('/').next().unwrap();
        PathBuf::from("sessions/2026/11/30").join(name)
    }
}

fn payload_type(r: &Value) -> (&str, &str) {
    (
        r["type"].as_str().unwrap_or(""),
        r["payload"]["type"].as_str().unwrap_or(""),
    )
}

/// The last assistant message item written again right after itself.
const CODEX_REPEAT_ASSISTANT: Mutation = Mutation {
    name: "repeat-assistant",
    apply: |b| {
        let mut r = records(b);
        let at = r
            .iter()
            .rposition(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "assistant"
            })
            .unwrap();
        r.insert(at + 1, r[at].clone());
        to_bytes(&r)
    },
};

/// The tool call's output moved after the assistant's answer (items out of order).
const CODEX_OUTPUT_AFTER_ANSWER: Mutation = Mutation {
    name: "output-after-answer",
    apply: |b| {
        let mut r = records(b);
        let output = r
            .iter()
            .position(|x| payload_type(x) == ("response_item", "function_call_output"))
            .unwrap();
        let answer = r
            .iter()
            .rposition(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "assistant"
            })
            .unwrap();
        let moved = r.remove(output);
        r.insert(answer, moved);
        to_bytes(&r)
    },
};

/// The session ends on the tool call: its output and everything after are gone.
const CODEX_INTERRUPTED_CALL: Mutation = Mutation {
    name: "interrupted-call",
    apply: |b| {
        let r = records(b);
        let output = r
            .iter()
            .position(|x| payload_type(x) == ("response_item", "function_call_output"))
            .unwrap();
        to_bytes(&r[..output])
    },
};

/// The tool call's output is gone but the turn went on: the answer follows the call.
const CODEX_OUTPUT_DROPPED: Mutation = Mutation {
    name: "output-dropped",
    apply: |b| {
        map_records(b, |_, r| {
            (payload_type(&r) != ("response_item", "function_call_output")).then_some(r)
        })
    },
};

/// Records of kinds no reader models: a line type and a response item type.
const CODEX_UNKNOWN_KINDS: Mutation = Mutation {
    name: "unknown-kinds",
    apply: |b| {
        let mut r = records(b);
        let ts = r[1]["timestamp"].clone();
        let at = r.len() / 2;
        r.insert(
            at,
            json!({"timestamp": ts, "type": "x_future_kind", "payload": {"n": 1}}),
        );
        to_bytes(&r)
    },
};

/// The tool call as a freeform one, as Codex records `apply_patch` (issue 27): the
/// `function_call` becomes a `custom_tool_call` with the raw patch as its `input`, its output a
/// `custom_tool_call_output`. Codex sends both back as they are.
const CODEX_CUSTOM_TOOL_CALL: Mutation = Mutation {
    name: "custom-tool-call",
    apply: |b| {
        map_records(b, |_, mut r| {
            match payload_type(&r) {
                ("response_item", "function_call") => {
                    r["payload"] = json!({"type": "custom_tool_call", "status": "completed",
                        "call_id": r["payload"]["call_id"], "name": "apply_patch",
                        "input": "*** Begin Patch\n*** Add File: hello.txt\n+hi \"there\"\n*** End Patch\n"});
                }
                ("response_item", "function_call_output") => {
                    r["payload"]["type"] = json!("custom_tool_call_output");
                }
                _ => {}
            }
            Some(r)
        })
    },
};

/// The freeform call interrupted: the session ends on the `custom_tool_call` (Codex answers it
/// `aborted` with a `custom_tool_call_output` when it resumes).
const CODEX_CUSTOM_TOOL_CALL_INTERRUPTED: Mutation = Mutation {
    name: "custom-tool-call-interrupted",
    apply: |b| {
        let r = records(&(CODEX_CUSTOM_TOOL_CALL.apply)(b));
        let output = r
            .iter()
            .position(|x| payload_type(x) == ("response_item", "custom_tool_call_output"))
            .unwrap();
        to_bytes(&r[..output])
    },
};

/// The freeform call's output as items of a message's kind (`output_text`), as
/// claude-code-log's hand-written rollout has it: Codex reads a call's output items as
/// `input_text` and `input_image` only, so the line does not parse, and Codex passes it over and
/// answers the call "aborted"; the reader does the same.
const CODEX_CUSTOM_OUTPUT_OF_OUTPUT_TEXT: Mutation = Mutation {
    name: "custom-tool-call-output-of-output-text",
    apply: |b| {
        map_records(&(CODEX_CUSTOM_TOOL_CALL.apply)(b), |_, mut r| {
            if payload_type(&r) == ("response_item", "custom_tool_call_output") {
                let text = r["payload"]["output"].clone();
                r["payload"]["output"] = json!([{"type": "output_text", "text": text}]);
            }
            Some(r)
        })
    },
};

/// The same for a `function_call_output` (measured too: Codex answers the call "aborted").
const CODEX_OUTPUT_OF_OUTPUT_TEXT: Mutation = Mutation {
    name: "function-call-output-of-output-text",
    apply: |b| {
        map_records(b, |_, mut r| {
            if payload_type(&r) == ("response_item", "function_call_output") {
                let text = r["payload"]["output"].clone();
                r["payload"]["output"] = json!([{"type": "output_text", "text": text}]);
            }
            Some(r)
        })
    },
};

/// A `web_search_call` before the answer, as Codex records a hosted web search (issue 27): no
/// output item follows; Codex sends it back with its id, status and action.
const CODEX_WEB_SEARCH: Mutation = Mutation {
    name: "web-search-call",
    apply: |b| {
        let mut r = records(b);
        let answer = r
            .iter()
            .rposition(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "assistant"
            })
            .unwrap();
        let search = json!({"timestamp": r[answer]["timestamp"], "type": "response_item",
            "payload": {"type": "web_search_call", "id": "ws_0a1b2c", "status": "completed",
                "action": {"type": "search", "query": "rust serde flatten",
                    "queries": ["rust serde flatten", "serde flatten enum"]}}});
        r.insert(answer, search);
        to_bytes(&r)
    },
};

/// Every `event_msg` line dropped (the model's history is the response items).
const CODEX_NO_EVENT_MSGS: Mutation = Mutation {
    name: "no-event-msgs",
    apply: |b| map_records(b, |_, r| (r["type"] != "event_msg").then_some(r)),
};

/// A `compacted` line after the first turn, as Codex 0.171's local compaction writes it: the
/// summary `message` and the `replacement_history` (the user messages kept, then the summary
/// as a user message), which is the history from then on.
const CODEX_COMPACTED: Mutation = Mutation {
    name: "compacted",
    apply: |b| {
        let mut r = records(b);
        let answer = r
            .iter()
            .position(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "assistant"
            })
            .unwrap();
        let first_user = r
            .iter()
            .position(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "user"
                    && x["payload"]["content"][0]["text"] == "hi"
            })
            .unwrap();
        let summary = "The user said hi; the assistant said ok.";
        let summary_item = json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": summary}]});
        let compacted = json!({"timestamp": r[answer]["timestamp"], "type": "compacted",
            "payload": {"message": summary,
                "replacement_history": [r[first_user]["payload"], summary_item]}});
        r.insert(answer + 1, compacted);
        to_bytes(&r)
    },
};

/// The same `compacted` line without `replacement_history` (older Codex): Codex rebuilds the
/// history from the user messages before it (within its token budget) and the summary.
const CODEX_COMPACTED_NO_REPLACEMENT: Mutation = Mutation {
    name: "compacted-no-replacement",
    apply: |b| {
        map_records(&(CODEX_COMPACTED.apply)(b), |_, mut r| {
            if r["type"] == "compacted" {
                r["payload"]
                    .as_object_mut()
                    .unwrap()
                    .remove("replacement_history");
            }
            Some(r)
        })
    },
};

/// [`CODEX_COMPACTED_NO_REPLACEMENT`] after a first message of a text, an image and a text
/// (issue 27): Codex 0.171.0 rebuilds it as its two texts, the image left out.
const CODEX_COMPACTED_NO_REPLACEMENT_IMAGE: Mutation = Mutation {
    name: "compacted-no-replacement-image",
    apply: |b| {
        const PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
        map_records(&(CODEX_COMPACTED_NO_REPLACEMENT.apply)(b), |_, mut r| {
            if payload_type(&r) == ("response_item", "message")
                && r["payload"]["role"] == "user"
                && r["payload"]["content"][0]["text"] == "hi"
            {
                r["payload"]["content"] = json!([{"type": "input_text", "text": "hi"},
                    {"type": "input_image", "image_url": PNG},
                    {"type": "input_text", "text": "what is this?"}]);
            }
            Some(r)
        })
    },
};

/// A `compacted` line without `replacement_history` after the second turn: Codex rebuilds the
/// history from both user messages, in order, then the summary.
const CODEX_COMPACTED_LATE_NO_REPLACEMENT: Mutation = Mutation {
    name: "compacted-late-no-replacement",
    apply: |b| {
        let mut r = records(b);
        let answer = r
            .iter()
            .rposition(|x| {
                payload_type(x) == ("response_item", "message")
                    && x["payload"]["role"] == "assistant"
            })
            .unwrap();
        let compacted = json!({"timestamp": r[answer]["timestamp"], "type": "compacted",
            "payload": {"message": "The user said hi, then continue; the assistant said ok twice."}});
        r.insert(answer + 1, compacted);
        to_bytes(&r)
    },
};

/// [`CODEX_COMPACTED_LATE_NO_REPLACEMENT`] with the first message an image only: Codex 0.171.0
/// rebuilds it as one empty text.
const CODEX_COMPACTED_LATE_NO_REPLACEMENT_IMAGE_ONLY: Mutation = Mutation {
    name: "compacted-late-no-replacement-image-only",
    apply: |b| {
        const PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
        map_records(
            &(CODEX_COMPACTED_LATE_NO_REPLACEMENT.apply)(b),
            |_, mut r| {
                if payload_type(&r) == ("response_item", "message")
                    && r["payload"]["role"] == "user"
                    && r["payload"]["content"][0]["text"] == "hi"
                {
                    r["payload"]["content"] = json!([{"type": "input_image", "image_url": PNG}]);
                }
                Some(r)
            },
        )
    },
};

/// The `compacted` line with `replacement_history` after the first turn, then one without it
/// after the second: the second rebuilds from what the first left (its kept message and its
/// summary, a user message without Codex's summary prefix) and the second turn's message.
const CODEX_COMPACTED_TWICE_NO_REPLACEMENT: Mutation = Mutation {
    name: "compacted-twice-no-replacement",
    apply: |b| (CODEX_COMPACTED_LATE_NO_REPLACEMENT.apply)(&(CODEX_COMPACTED.apply)(b)),
};

fn codex_cases<'a>(
    tool: &'a [u8],
    two: &'a [u8],
    tool_place: &'a dyn Fn(&str) -> PathBuf,
    two_place: &'a dyn Fn(&str) -> PathBuf,
) -> Vec<(Case<'a>, Expect)> {
    const TORN: &str = "a torn last line is what a killed writer leaves; Codex skips it \
                        silently, our reader names it rather than guess that nothing was lost";
    let on_tool = [
        (GENUINE, Expect::Agree),
        (CODEX_OUTPUT_AFTER_ANSWER, Expect::Agree),
        (CODEX_INTERRUPTED_CALL, Expect::Agree),
        (CODEX_OUTPUT_DROPPED, Expect::Agree),
        (CODEX_UNKNOWN_KINDS, Expect::Agree),
        (CODEX_CUSTOM_TOOL_CALL, Expect::Agree),
        (CODEX_CUSTOM_TOOL_CALL_INTERRUPTED, Expect::Agree),
        (CODEX_CUSTOM_OUTPUT_OF_OUTPUT_TEXT, Expect::Agree),
        (CODEX_OUTPUT_OF_OUTPUT_TEXT, Expect::Agree),
        (CODEX_WEB_SEARCH, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::BOM, Expect::BothFail),
    ];
    let on_two = [
        (GENUINE, Expect::Agree),
        (CODEX_REPEAT_ASSISTANT, Expect::Agree),
        (CODEX_NO_EVENT_MSGS, Expect::Agree),
        (CODEX_COMPACTED, Expect::Agree),
        (CODEX_COMPACTED_NO_REPLACEMENT, Expect::Agree),
        (CODEX_COMPACTED_NO_REPLACEMENT_IMAGE, Expect::Agree),
        (CODEX_COMPACTED_LATE_NO_REPLACEMENT, Expect::Agree),
        (
            CODEX_COMPACTED_LATE_NO_REPLACEMENT_IMAGE_ONLY,
            Expect::Agree,
        ),
        (CODEX_COMPACTED_TWICE_NO_REPLACEMENT, Expect::Agree),
        (generic::CRLF, Expect::Agree),
    ];
    cases_of_samples(
        "codex",
        &no_side_files,
        vec![
            ("tool-call", CODEX_TOOL_ID, tool, tool_place, on_tool.into()),
            ("two-turns", CODEX_TWO_ID, two, two_place, on_two.into()),
        ],
    )
}

#[test]
fn codex_reader_agrees_with_codex() {
    let tool = sample(CODEX_TOOL);
    let two = sample(CODEX_TWO);
    let tool_place = codex_place(CODEX_TOOL);
    let two_place = codex_place(CODEX_TWO);
    check(
        &handoff_codex::CodexPlugin,
        codex_cases(&tool, &two, &tool_place, &two_place),
    );
}
