//! Across providers, through the engine, judged by the real CLIs: a genuine session of one CLI is
//! read by its plugin, continued into another CLI's store by the continuation engine (written, read
//! back, verified), and the same transcript is then resumed by the real target CLI in the live
//! tier, whose first model request must carry the whole history (the live check's comparison).
//!
//! Every CLI target is a target here, and every CLI's genuine samples are a source: pi, Gemini
//! CLI, OpenCode and Copilot CLI both ways, Claude Code and Codex into them.

use std::path::PathBuf;
use std::time::Duration;

use handoff_conformance::corpus::Entry;
use handoff_conformance::report::CheckResult;
use handoff_host::continuation::{
    continue_conversation, Action, ContinueRequest, Source, SourceFile,
};
use handoff_host::{Plugin, ReadFrom, StoreRoot, Transcript};
use handoff_live::harness::judge_live;
use handoff_live::{run_live, LiveOptions};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

struct Sample {
    name: &'static str,
    target: &'static str,
    file: &'static str,
}

const CLAUDE: Sample = Sample {
    name: "claude-code-genuine",
    target: "claude-code",
    file: "plugins/claude/tests/samples/genuine-2.1.197/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl",
};
/// Claude Code 1.0.98's `/init` session from claude-code-viewer: an `isMeta` prompt, turns of
/// several records, five parallel calls whose results' timestamps go back and forth.
const CLAUDE_VIEWER: Sample = Sample {
    name: "claude-code-viewer-1.0.98",
    target: "claude-code",
    file:
        "plugins/claude/tests/samples/claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
};
const CODEX: Sample = Sample {
    name: "codex-genuine",
    target: "codex",
    file: "plugins/codex/tests/fixtures/rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
};
const PI: Sample = Sample {
    name: "pi-genuine",
    target: "pi",
    file: "plugins/pi/tests/samples/genuine-pi-0.73.1/2026-11-30T00-41-56-911Z_01a229e6-bba6-74e0-b59d-5af60023ff26.jsonl",
};
const GEMINI: Sample = Sample {
    name: "gemini-cli-genuine",
    target: "gemini-cli",
    file: "plugins/gemini/tests/samples/session-2026-11-30T00-42-d0a744dc.jsonl",
};

/// Qwen Code 0.24.4's own session: a shell call, its result, an answer, then a resumed turn.
const QWEN: Sample = Sample {
    name: "qwen-code-genuine",
    target: "qwen-code",
    file: "plugins/qwen/tests/samples/7da3d710-5632-46df-bb43-bead8f22b422.jsonl",
};

/// A genuine Copilot CLI 1.0.102 session: a turn with two bash calls (one exits 3), resumed once.
const COPILOT: Sample = Sample {
    name: "copilot-cli-genuine",
    target: "copilot-cli",
    file:
        "live/tests/differential/copilot-cli/tool-call-47b96759-ac88-45c7-9a85-535ffc1687d5.jsonl",
};

fn plugin_of(target: &str) -> Box<dyn Plugin> {
    match target {
        "copilot-cli" => Box::new(handoff_copilot::CopilotPlugin),
        "claude-code" => Box::new(handoff_claude::ClaudePlugin),
        "codex" => Box::new(handoff_codex::CodexPlugin),
        "pi" => Box::new(handoff_pi::PiPlugin),
        "gemini-cli" => Box::new(handoff_gemini::GeminiPlugin),
        "qwen-code" => Box::new(handoff_qwen::QwenPlugin),
        "opencode" => Box::new(handoff_opencode::OpencodePlugin),
        other => panic!("no plugin for {other}"),
    }
}

fn read(source: &Sample) -> Transcript {
    read_path(source.target, &repo().join(source.file))
}

fn read_path(target: &str, path: &std::path::Path) -> Transcript {
    plugin_of(target)
        .reader()
        .read(ReadFrom::File(target, path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The engine continues `source` into `target` (created, verified), then again (unchanged); then
/// the real CLI of `target` resumes the transcript in the live tier.
fn across(source: &Sample, target: &str) {
    let path = repo().join(source.file);
    let file = (source.target, path.as_path());
    judge_live(&across_transcript(
        source.name,
        read(source),
        Some(file),
        target,
    ));
}

/// [`across`] for a transcript already read; the live checks' results are returned unjudged.
/// With its source `file`, the first continuation streams from the file (as `handoff continue`
/// does) and the second, from the held transcript, must find that session whole.
fn across_transcript(
    name: &'static str,
    transcript: Transcript,
    file: Option<(&str, &std::path::Path)>,
    target: &str,
) -> Vec<CheckResult> {
    across_transcript_with(name, transcript, file, target, &LiveOptions::default())
}

/// [`across_transcript`] with the live tier run with `options`.
fn across_transcript_with(
    name: &'static str,
    mut transcript: Transcript,
    file: Option<(&str, &std::path::Path)>,
    target: &str,
    options: &LiveOptions,
) -> Vec<CheckResult> {
    let plugin = plugin_of(target);
    let scratch = tempfile::tempdir().unwrap();
    let cwd = scratch.path().join("proj");
    std::fs::create_dir(&cwd).unwrap();
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    let source_plugin = file.map(|(source_target, _)| plugin_of(source_target));
    for expected in [Action::Created, Action::Unchanged] {
        let source = match (expected.clone(), file, &source_plugin) {
            (Action::Created, Some((source_target, path)), Some(reader)) => {
                Source::File(SourceFile {
                    reader: reader.reader(),
                    target: source_target,
                    path,
                    cli_version: None,
                })
            }
            _ => (&transcript).into(),
        };
        let continued = continue_conversation(
            plugin.as_ref(),
            &ContinueRequest {
                source,
                locator: Some(name),
                target,
                root: &root,
                seal: handoff_host::seal::Seal::of_this_process(),
                cwd: Some(cwd.display().to_string()),
                prompt: "go on",
                drop: &[],
                lock_wait: Duration::from_secs(10),
                into: None,
            },
        )
        .unwrap_or_else(|e| panic!("{} -> {target}: {e}", name));
        assert_eq!(continued.action, expected, "{} -> {target}", name);
    }
    // The live tier writes into its own scratch HOME, in its own project folder.
    transcript.cwd = None;
    let entry = Entry { name, transcript };
    let results = run_live(plugin.as_ref(), target, &[entry], options);
    results
        .into_iter()
        .filter(|r| !r.id.ends_with("/missing-id"))
        .collect()
}

#[test]
fn claude_code_and_codex_sessions_continue_in_pi() {
    across(&CLAUDE, "pi");
    across(&CODEX, "pi");
}

#[test]
fn a_pi_session_continues_in_claude_code_and_codex() {
    across(&PI, "claude-code");
    across(&PI, "codex");
}

#[test]
fn claude_code_and_codex_sessions_continue_in_gemini_cli() {
    across(&CLAUDE, "gemini-cli");
    across(&CODEX, "gemini-cli");
}

#[test]
fn a_gemini_cli_session_continues_in_claude_code_and_codex() {
    across(&GEMINI, "claude-code");
    across(&GEMINI, "codex");
}

#[test]
fn claude_code_codex_pi_and_gemini_cli_sessions_continue_in_qwen_code() {
    for source in [&CLAUDE, &CODEX, &PI, &GEMINI] {
        across(source, "qwen-code");
    }
}

#[test]
fn a_qwen_code_session_continues_in_claude_code_codex_pi_and_gemini_cli() {
    for target in ["claude-code", "codex", "pi", "gemini-cli"] {
        across(&QWEN, target);
    }
}

#[test]
fn claude_code_codex_pi_and_gemini_cli_sessions_continue_in_opencode() {
    across(&CLAUDE, "opencode");
    across(&CODEX, "opencode");
    across(&PI, "opencode");
    across(&GEMINI, "opencode");
}

/// The genuine OpenCode 1.18.33 session of the differential samples (a SQL dump: two turns of
/// parallel `bash` calls), loaded into `<dir>/opencode.db`, the only session there.
fn opencode_database(dir: &std::path::Path) -> PathBuf {
    let dump = std::fs::read_to_string(
        repo().join("live/tests/differential/opencode/ses_dca8eb152ffee0Ft97U5ceGAFI.sql"),
    )
    .unwrap();
    let db = dir.join("opencode.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&dump)
        .unwrap();
    db
}

#[test]
fn an_opencode_session_continues_in_claude_code_codex_pi_and_gemini_cli() {
    let scratch = tempfile::tempdir().unwrap();
    let db = opencode_database(scratch.path());
    for target in ["claude-code", "codex", "pi", "gemini-cli"] {
        judge_live(&across_transcript(
            "opencode-genuine",
            read_path("opencode", &db),
            Some(("opencode", db.as_path())),
            target,
        ));
    }
}

#[test]
fn claude_code_codex_pi_and_gemini_cli_sessions_continue_in_copilot_cli() {
    across(&CLAUDE, "copilot-cli");
    across(&CODEX, "copilot-cli");
    across(&PI, "copilot-cli");
    across(&GEMINI, "copilot-cli");
}

#[test]
fn a_copilot_cli_session_continues_in_every_cli() {
    for target in ["claude-code", "codex", "pi", "gemini-cli"] {
        across(&COPILOT, target);
    }
}

/// The genuine Codex rollout's records, one JSON value a line.
fn codex_records() -> Vec<serde_json::Value> {
    std::fs::read_to_string(repo().join(CODEX.file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Whether a rollout record is a message of `role`.
fn is_message(record: &serde_json::Value, role: &str) -> bool {
    record["type"] == "response_item"
        && record["payload"]["type"] == "message"
        && record["payload"]["role"] == role
}

/// The genuine Codex rollout with a `compacted` record after its first turn, as Codex 0.171's
/// local compaction writes it (the summary, and the `replacement_history`: the first user
/// message kept, then the summary): the Codex reader reads the kept message before the
/// compaction (Codex's order), and Claude Code's writer carries that order.
#[test]
fn a_compacted_codex_session_continues_in_claude_code() {
    let mut lines = codex_records();
    let answer = lines
        .iter()
        .position(|x| is_message(x, "assistant"))
        .unwrap();
    let first_user = lines
        .iter()
        .position(|x| {
            is_message(x, "user")
                && !x["payload"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with('<')
        })
        .unwrap();
    let summary = "The user asked for a tool run; it ran.";
    let compacted = serde_json::json!({"timestamp": lines[answer]["timestamp"], "type": "compacted",
        "payload": {"message": summary, "replacement_history": [lines[first_user]["payload"],
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": summary}]}]}});
    // A turn after the compaction: Claude Code adds its own "No response requested." after a
    // history that ends on the summary (docs/live.md), which is not what this test is about.
    let mut next_user = lines[first_user].clone();
    next_user["timestamp"] = lines[answer]["timestamp"].clone();
    next_user["payload"]["content"][0]["text"] = "And after the compaction?".into();
    let mut next_answer = lines[answer].clone();
    next_answer["payload"]["content"] =
        serde_json::json!([{"type": "output_text", "text": "It went on."}]);
    lines.splice(answer + 1..answer + 1, [compacted, next_user, next_answer]);
    let scratch = tempfile::tempdir().unwrap();
    let rollout = scratch.path().join(CODEX.file.rsplit('/').next().unwrap());
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&rollout, text.join("\n") + "\n").unwrap();
    let transcript = read_path("codex", &rollout);
    let at = transcript
        .events
        .iter()
        .position(|e| matches!(e.body, handoff_host::Body::Compaction { .. }))
        .expect("the Codex reader reads the compaction");
    assert!(
        matches!(
            transcript.events[at - 1].body,
            handoff_host::Body::User { .. }
        ),
        "the kept user message comes before the compaction"
    );
    let results = across_transcript(
        "codex-compacted",
        transcript,
        Some(("codex", rollout.as_path())),
        "claude-code",
    );
    // Claude Code 2.1.197 sends the kept message, then the summary: our order (its newline where
    // it joins user messages is declared in its recipe).
    judge_live(&results);
}

/// A source that names no model (the genuine Codex rollout without its `turn_context` records, so
/// its assistant turns have none), resumed as the resume plan runs it, without the recipe's
/// `--model`: Claude Code 2.1.197 then restores the model from the file's last assistant message,
/// and hung there (no request; killed after 180 s) when the writer left `message.model` out. With
/// Claude Code's own name for a turn no model wrote (`<synthetic>`) it resumes and sends the
/// whole history.
#[test]
fn a_model_less_codex_session_continues_in_claude_code() {
    let fixture = std::fs::read_to_string(repo().join(CODEX.file)).unwrap();
    let kept: Vec<&str> = fixture
        .lines()
        .filter(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"] != "turn_context")
        .collect();
    assert!(
        kept.len() < fixture.lines().count(),
        "the fixture has turn_context records"
    );
    let scratch = tempfile::tempdir().unwrap();
    let rollout = scratch.path().join(CODEX.file.rsplit('/').next().unwrap());
    std::fs::write(&rollout, kept.join("\n") + "\n").unwrap();
    let transcript = read_path("codex", &rollout);
    let models: Vec<_> = transcript
        .events
        .iter()
        .filter_map(|e| match &e.body {
            handoff_host::Body::Assistant { origin, .. } => {
                Some(origin.as_ref().and_then(|o| o.model.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        !models.is_empty() && models.iter().all(Option::is_none),
        "{models:?}"
    );
    let results = across_transcript_with(
        "codex-model-less",
        transcript,
        Some(("codex", rollout.as_path())),
        "claude-code",
        &LiveOptions {
            omitted_options: vec!["--model".into()],
            ..LiveOptions::default()
        },
    );
    judge_live(&results);
}

/// Claude Code → Claude Code for an older session: the `isMeta` prompt is written back as meta,
/// and the parallel calls' results, whose timestamps go back, are chained where they do (Claude
/// Code sends results off its chain by timestamp), so the real CLI sends the history in the
/// transcript's order.
#[test]
fn an_older_claude_code_session_continues_in_claude_code() {
    across(&CLAUDE_VIEWER, "claude-code");
}

/// The genuine Codex rollout with its tool call made freeform, as Codex records `apply_patch`
/// (issue 27): a `custom_tool_call` whose `input` is the raw patch, answered by a
/// `custom_tool_call_output`.
fn custom_tool_rollout(dir: &std::path::Path) -> PathBuf {
    let fixture = std::fs::read_to_string(repo().join(CODEX.file)).unwrap();
    let text: Vec<String> = fixture
        .lines()
        .map(|l| {
            let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
            match r["payload"]["type"].as_str() {
                Some("function_call") if r["type"] == "response_item" => {
                    r["payload"] = serde_json::json!({"type": "custom_tool_call",
                        "status": "completed", "call_id": r["payload"]["call_id"],
                        "name": "apply_patch",
                        "input": "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"});
                }
                Some("function_call_output") if r["type"] == "response_item" => {
                    r["payload"]["type"] = "custom_tool_call_output".into();
                }
                _ => {}
            }
            r.to_string()
        })
        .collect();
    let rollout = dir.join(CODEX.file.rsplit('/').next().unwrap());
    std::fs::write(&rollout, text.join("\n") + "\n").unwrap();
    rollout
}

/// A Codex rollout with a freeform call continues natively in Codex (the resumed request holds
/// the `custom_tool_call` and its `custom_tool_call_output`: the Responses parse of the request
/// reads them back as the freeform call, which a `function_call` would not be), and in Claude
/// Code, pi and Gemini CLI as each one's own structured call (`{"input": <patch>}`), which each
/// real CLI resumes and sends.
#[test]
fn a_codex_session_with_a_freeform_call_continues_in_every_cli() {
    let scratch = tempfile::tempdir().unwrap();
    let rollout = custom_tool_rollout(scratch.path());
    let transcript = read_path("codex", &rollout);
    assert!(
        transcript.events.iter().any(|e| matches!(&e.body,
            handoff_host::Body::Assistant { content, .. } if content.iter().any(|p| matches!(p,
                handoff_host::AssistantPart::ToolCall(c)
                    if matches!(c.input, handoff_host::ToolInput::Freeform(_)))))),
        "the Codex reader reads the freeform call"
    );
    for target in ["codex", "claude-code", "pi", "gemini-cli", "opencode"] {
        let results = across_transcript(
            "codex-custom-tool",
            transcript.clone(),
            Some(("codex", rollout.as_path())),
            target,
        );
        judge_live(&results);
    }
}

/// A Codex rollout with a web search continues natively in Codex (the search is sent back as a
/// `web_search_call`), and is refused by a CLI that has no form of it, naming the event.
#[test]
fn a_codex_session_with_a_web_search_continues_in_codex_and_is_refused_elsewhere() {
    let mut lines = codex_records();
    let answer = lines
        .iter()
        .rposition(|x| {
            x["type"] == "response_item"
                && x["payload"]["type"] == "message"
                && x["payload"]["role"] == "assistant"
        })
        .unwrap();
    let search = serde_json::json!({"timestamp": lines[answer]["timestamp"],
        "type": "response_item", "payload": {"type": "web_search_call", "id": "ws_0a1b2c",
            "status": "completed", "action": {"type": "search", "query": "rust serde",
                "queries": ["rust serde", "serde flatten"]}}});
    lines.insert(answer, search);
    let scratch = tempfile::tempdir().unwrap();
    let rollout = scratch.path().join(CODEX.file.rsplit('/').next().unwrap());
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&rollout, text.join("\n") + "\n").unwrap();
    let transcript = read_path("codex", &rollout);
    let results = across_transcript(
        "codex-web-search",
        transcript.clone(),
        Some(("codex", rollout.as_path())),
        "codex",
    );
    judge_live(&results);
    for target in ["claude-code", "pi", "gemini-cli", "opencode"] {
        let root = StoreRoot::new(scratch.path().join(target)).unwrap();
        let err = plugin_of(target)
            .writer()
            .create(&root, target, &transcript, &Default::default())
            .unwrap_err();
        match err {
            handoff_host::PluginError::NotCarried {
                feature, event_id, ..
            } => {
                assert_eq!(feature, handoff_host::Feature::WebSearch, "{target}");
                assert!(transcript.events.iter().any(|e| e.id == event_id && matches!(&e.body,
                    handoff_host::Body::Assistant { content, .. }
                        if content.iter().any(|p| matches!(p, handoff_host::AssistantPart::WebSearch(_))))));
            }
            other => panic!("{target}: expected NotCarried, got {other:?}"),
        }
        assert!(!root.path().exists() || std::fs::read_dir(root.path()).unwrap().next().is_none());
    }
}

/// `--drop` judged by a real CLI: the genuine Codex rollout with a user turn that sends an image
/// by URL, which Claude Code does not carry. Without a drop the engine refuses it, naming the
/// event; with `image_url` dropped it streams the rollout into Claude Code's store, lists the one
/// URL it left out, and verifies the rest; then Claude Code 2.1.197 resumes what was written, and
/// its first model request must carry that history (the URL's turn with its text only).
#[test]
fn a_codex_session_with_an_image_url_continues_in_claude_code_with_it_dropped() {
    use handoff_host::{Body, Feature, PluginError};
    let mut lines = codex_records();
    let answer = lines
        .iter()
        .rposition(|x| is_message(x, "assistant"))
        .unwrap();
    let question = "What is in this picture?";
    let mut asks = lines[answer].clone();
    asks["payload"]["role"] = "user".into();
    asks["payload"]["content"] = serde_json::json!([
        {"type": "input_text", "text": question},
        {"type": "input_image", "image_url": "https://example.com/cat.png"}
    ]);
    let mut answers = lines[answer].clone();
    answers["payload"]["content"] =
        serde_json::json!([{"type": "output_text", "text": "A cat on a keyboard."}]);
    lines.splice(answer + 1..answer + 1, [asks, answers]);
    let scratch = tempfile::tempdir().unwrap();
    let rollout = scratch.path().join(CODEX.file.rsplit('/').next().unwrap());
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&rollout, text.join("\n") + "\n").unwrap();
    let source = read_path("codex", &rollout);
    let with_url = source
        .events
        .iter()
        .position(|e| e.features().contains(&Feature::ImageUrl))
        .expect("the Codex reader reads the image URL");

    let cwd = scratch.path().join("proj");
    std::fs::create_dir(&cwd).unwrap();
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    let codex = handoff_codex::CodexPlugin;
    let claude = handoff_claude::ClaudePlugin;
    let continue_dropping = |drop: &[Feature]| {
        continue_conversation(
            &claude,
            &ContinueRequest {
                source: Source::File(SourceFile {
                    reader: codex.reader(),
                    target: "codex",
                    path: &rollout,
                    cli_version: None,
                }),
                locator: Some("codex-image-url"),
                target: "claude-code",
                root: &root,
                seal: handoff_host::seal::Seal::of_this_process(),
                cwd: Some(cwd.display().to_string()),
                prompt: "go on",
                drop,
                lock_wait: Duration::from_secs(10),
                into: None,
            },
        )
    };
    match continue_dropping(&[]) {
        Err(handoff_host::continuation::ContinueError::Plugin(PluginError::NotCarried {
            index,
            feature: Feature::ImageUrl,
            ..
        })) => assert_eq!(index, with_url),
        other => panic!("expected a refusal of the image URL, got {other:?}"),
    }
    let continued = continue_dropping(&[Feature::ImageUrl]).expect("continued without the URL");
    assert_eq!(continued.action, Action::Created);
    assert_eq!(continued.dropped.len(), 1, "{:?}", continued.dropped);
    let dropped = &continued.dropped[0];
    assert_eq!(
        (dropped.index, dropped.event_id.as_str(), dropped.kind),
        (
            with_url,
            source.events[with_url].id.as_str(),
            Feature::ImageUrl
        )
    );
    let written = claude
        .reader()
        .read(ReadFrom::Session(&root, &continued.session))
        .expect("Claude Code's reader reads what was written");
    assert_eq!(written.events.len(), source.events.len());
    // Claude Code's writer gives events ids of its own; the turn keeps its place.
    assert_eq!(written.events[with_url].body, Body::user_text(question));

    // The real CLI resumes what was written.
    let mut transcript = written;
    transcript.cwd = None;
    let entry = Entry {
        name: "codex-image-url-dropped",
        transcript,
    };
    let results = run_live(&claude, "claude-code", &[entry], &LiveOptions::default());
    let results: Vec<CheckResult> = results
        .into_iter()
        .filter(|r| !r.id.ends_with("/missing-id"))
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    judge_live(&results);
}

/// A history that ends on a user turn (a prompt never answered, or tool results the model never
/// saw): Claude Code and Gemini CLI each add turns of their own before the new prompt (the
/// recipes' `resume_turn` rules, docs/live.md). The live check expects exactly those turns, so the
/// CLI judges the writer's session whole; each CLI's rule is checked on both endings.
#[test]
fn a_history_that_ends_on_a_user_turn_continues_in_claude_code_and_gemini_cli() {
    use handoff_host::Body;
    let genuine = read(&CODEX);
    let last = |kind: &str| {
        genuine
            .events
            .iter()
            .rposition(|e| e.body.kind() == kind)
            .unwrap_or_else(|| panic!("the genuine session has a {kind} event"))
    };
    let ending_on = |at: usize| {
        let mut cut = genuine.clone();
        cut.events.truncate(at + 1);
        cut
    };
    let on_result = ending_on(last("tool_result"));
    let first_user = genuine
        .events
        .iter()
        .position(|e| matches!(e.body, Body::User { .. }))
        .unwrap();
    let on_prompt = ending_on(first_user);
    for target in ["claude-code", "gemini-cli"] {
        for (name, transcript) in [
            ("ends-on-a-tool-result", on_result.clone()),
            ("ends-on-a-user-message", on_prompt.clone()),
        ] {
            let results = across_transcript(name, transcript, None, target);
            judge_live(&results);
            let evidence = results
                .iter()
                .flat_map(|r| r.evidence.iter())
                .any(|line| line.contains("resume turns"));
            // Gemini CLI adds nothing after a user message; every other ending gets its turns.
            let expects_turns = !(target == "gemini-cli" && name == "ends-on-a-user-message");
            assert_eq!(evidence, expects_turns, "{name} -> {target}: {results:?}");
        }
    }
}

/// Claude Code sends an assistant turn's signed thinking only in a request for the model that
/// made it (2.1.197 strips the rest before sending). The corpus entry's turns are the recipe's
/// model, and its live check carries the thinking; here the same turns are another model's, and
/// the live check must find them sent without it, as the recipe's rule expects.
#[test]
fn signed_thinking_of_another_model_is_not_sent_by_claude_code() {
    use handoff_host::Body;
    let mut transcript = handoff_conformance::corpus::entry("thinking-signed-anthropic")
        .expect("the corpus has signed Anthropic thinking")
        .transcript
        .clone();
    let mut changed = 0;
    for event in &mut transcript.events {
        if let Body::Assistant {
            origin: Some(origin),
            content,
        } = &mut event.body
        {
            origin.model = Some("claude-opus-4-5".into());
            for part in content.iter_mut() {
                if let handoff_host::AssistantPart::Thinking(t) = part {
                    if let Some(signature) = &mut t.signature {
                        signature.model = Some("claude-opus-4-5".into());
                        changed += 1;
                    }
                }
            }
        }
    }
    assert!(changed > 0, "the entry has signed thinking");
    let results = across_transcript("thinking-of-another-model", transcript, None, "claude-code");
    judge_live(&results);
    assert!(
        results
            .iter()
            .flat_map(|r| r.evidence.iter())
            .any(|line| line.contains("signed thinking parts of turns made by another model")),
        "{results:?}"
    );
}
