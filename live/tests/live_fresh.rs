//! The real CLIs, fresh (no resume), against our fake provider: proves the fake's SSE is what
//! they expect. Each CLI must exit 0 and print the fake's answer ("ok").
//!
//! Skips (with the reason printed) when a CLI is not installed, unless HANDOFF_LIVE_REQUIRED=1,
//! where an absent CLI fails the test. Install with `scripts/install-clis.sh`.

use std::path::Path;
use std::time::Duration;

use handoff_live::cli::{find_cli, pinned_clis, run, FoundCli, Invocation, RunOutcome};
use handoff_live::fake_provider::{Endpoint, FakeProvider, LoggedRequest};
use handoff_live::skips_are_failures;

/// The run exited 0 (else the message shows the requests the fake saw); its model requests.
fn model_turns<'a>(outcome: &RunOutcome, requests: &'a [LoggedRequest]) -> Vec<&'a LoggedRequest> {
    eprintln!("fresh run: {}", outcome.summary());
    assert!(
        outcome.succeeded(),
        "{}\nrequests: {requests:#?}",
        outcome.summary()
    );
    requests.iter().filter(|r| r.is_model_turn()).collect()
}

/// The pinned CLI, or `None` (printing why) when it is absent and not required.
fn cli(name: &str) -> Option<FoundCli> {
    let pinned = pinned_clis().into_iter().find(|p| p.name == name).unwrap();
    match find_cli(&pinned.program, &pinned.package, None) {
        Ok(found) => {
            assert_eq!(
                found.version.as_deref(),
                Some(pinned.version.as_str()),
                "{name}: {} is not the pinned version",
                found.how
            );
            Some(found)
        }
        Err(why) if skips_are_failures() => panic!("HANDOFF_LIVE_REQUIRED=1 but {why}"),
        Err(why) => {
            eprintln!("SKIP {name}: {why}");
            None
        }
    }
}

fn home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("handoff-live-home-")
        .tempdir()
        .unwrap()
}

fn project(home: &Path) -> std::path::PathBuf {
    let cwd = home.join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    cwd
}

#[test]
fn claude_code_answers_from_the_fake_anthropic_stream() {
    let Some(claude) = cli("claude") else { return };
    let fake = FakeProvider::start().unwrap();
    let home = home();
    let outcome = run(&Invocation {
        program: claude.path.clone(),
        args: [
            "-p",
            "hi",
            "--output-format",
            "json",
            "--model",
            "claude-sonnet-4-5",
        ]
        .map(String::from)
        .to_vec(),
        home: home.path().to_owned(),
        env: vec![
            ("ANTHROPIC_BASE_URL".into(), fake.base_url()),
            ("ANTHROPIC_API_KEY".into(), "dummy".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ("DISABLE_TELEMETRY".into(), "1".into()),
        ],
        cwd: project(home.path()),
        close_stdin: true,
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    let requests = fake.requests();
    let turns = model_turns(&outcome, &requests);
    let result: serde_json::Value = serde_json::from_str(outcome.stdout.trim())
        .unwrap_or_else(|e| panic!("claude printed no JSON ({e}): {}", outcome.stdout));
    assert_eq!(result["result"], "ok", "{result}");
    assert_eq!(result["is_error"], false, "{result}");
    assert!(!turns.is_empty(), "no model request reached the fake");
    assert!(turns
        .iter()
        .all(|r| r.endpoint == Endpoint::AnthropicMessages));
    assert!(turns.iter().any(|r| r.streamed), "Claude Code streams");
}

#[test]
fn codex_answers_from_the_fake_responses_stream() {
    let Some(codex) = cli("codex") else { return };
    let fake = FakeProvider::start().unwrap();
    let home = home();
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\n[analytics]\nenabled = false\n",
            fake.base_url()
        ),
    )
    .unwrap();
    let outcome = run(&Invocation {
        program: codex.path.clone(),
        args: ["exec", "--skip-git-repo-check", "hi"]
            .map(String::from)
            .to_vec(),
        home: home.path().to_owned(),
        env: vec![
            ("CODEX_HOME".into(), codex_home.display().to_string()),
            ("FAKE_API_KEY".into(), "dummy".into()),
        ],
        cwd: project(home.path()),
        close_stdin: true,
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    let requests = fake.requests();
    let turns = model_turns(&outcome, &requests);
    assert_eq!(outcome.stdout.trim(), "ok", "{}", outcome.summary());
    assert!(
        outcome.stderr.contains("session id: "),
        "codex names its session: {}",
        outcome.summary()
    );
    assert!(!turns.is_empty(), "no model request reached the fake");
    assert!(turns
        .iter()
        .all(|r| r.endpoint == Endpoint::OpenaiResponses && r.streamed));
}

#[test]
fn pi_answers_from_the_fake_chat_completions_stream() {
    let Some(pi) = cli("pi") else { return };
    let fake = FakeProvider::start().unwrap();
    let home = home();
    let agent = home.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("models.json"),
        serde_json::json!({"providers": {"fake": {
            "baseUrl": format!("{}/v1", fake.base_url()),
            "api": "openai-completions",
            "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "fake-model", "reasoning": false}]
        }}})
        .to_string(),
    )
    .unwrap();
    let outcome = run(&Invocation {
        program: pi.path.clone(),
        args: [
            "--offline",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "-p",
            "hi",
        ]
        .map(String::from)
        .to_vec(),
        home: home.path().to_owned(),
        env: vec![("PI_OFFLINE".into(), "1".into())],
        cwd: project(home.path()),
        close_stdin: true,
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    let requests = fake.requests();
    let turns = model_turns(&outcome, &requests);
    assert_eq!(outcome.stdout.trim(), "ok", "{}", outcome.summary());
    assert!(!turns.is_empty(), "no model request reached the fake");
    assert!(turns
        .iter()
        .all(|r| r.endpoint == Endpoint::OpenaiChatCompletions && r.streamed));
}

#[test]
fn gemini_cli_answers_from_the_fake_gemini_stream() {
    let Some(gemini) = cli("gemini") else { return };
    let fake = FakeProvider::start().unwrap();
    let home = home();
    let dot = home.path().join(".gemini");
    std::fs::create_dir_all(&dot).unwrap();
    // Retention off: its startup cleanup deletes session files it cannot parse (live-oracles.md).
    std::fs::write(
        dot.join("settings.json"),
        serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true,
                        "sessionRetention": {"enabled": false}}
        })
        .to_string(),
    )
    .unwrap();
    let outcome = run(&Invocation {
        program: gemini.path.clone(),
        args: ["-m", "gemini-2.5-flash", "-p", "hi"]
            .map(String::from)
            .to_vec(),
        home: home.path().to_owned(),
        env: vec![
            ("GEMINI_API_KEY".into(), "dummy".into()),
            ("GOOGLE_GEMINI_BASE_URL".into(), fake.base_url()),
            ("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into()),
        ],
        cwd: project(home.path()),
        close_stdin: true,
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    let requests = fake.requests();
    let turns = model_turns(&outcome, &requests);
    assert_eq!(outcome.stdout.trim(), "ok", "{}", outcome.summary());
    assert!(
        turns
            .iter()
            .any(|r| r.endpoint == Endpoint::GeminiStreamGenerateContent && r.streamed),
        "{turns:#?}"
    );
}

/// Qwen Code runs on the Node.js runtime the pin asks for (22; `run` puts it first on PATH when
/// the machine's node is older) and speaks Chat Completions to the fake.
#[test]
fn qwen_code_answers_from_the_fake_chat_completions_stream() {
    let Some(qwen) = cli("qwen") else { return };
    let fake = FakeProvider::start().unwrap();
    let home = home();
    let dot = home.path().join(".qwen");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::write(
        dot.join("settings.json"),
        serde_json::json!({
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"disableAutoUpdate": true},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false}
        })
        .to_string(),
    )
    .unwrap();
    let outcome = run(&Invocation {
        program: qwen.path.clone(),
        args: ["-p", "hi"].map(String::from).to_vec(),
        home: home.path().to_owned(),
        env: vec![
            ("OPENAI_BASE_URL".into(), format!("{}/v1", fake.base_url())),
            ("OPENAI_API_KEY".into(), "dummy".into()),
            ("OPENAI_MODEL".into(), "fake-model".into()),
        ],
        cwd: project(home.path()),
        close_stdin: true,
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    let requests = fake.requests();
    let turns = model_turns(&outcome, &requests);
    assert_eq!(outcome.stdout.trim(), "ok", "{}", outcome.summary());
    assert!(!turns.is_empty(), "no model request reached the fake");
    assert!(turns
        .iter()
        .all(|r| r.endpoint == Endpoint::OpenaiChatCompletions && r.streamed));
    let chats = dot.join("projects");
    assert!(
        chats.is_dir(),
        "Qwen Code recorded no session under ~/.qwen/projects"
    );
}
