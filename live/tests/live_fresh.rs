//! The real CLIs, fresh (no resume), against our fake provider: proves the fake's SSE is what
//! they expect. Each CLI must exit 0 and print the fake's answer ("ok").
//!
//! Skips (with the reason printed) when a CLI is not installed, unless HANDOFF_LIVE_REQUIRED=1,
//! where an absent CLI fails the test. Install with `scripts/install-clis.sh`.

use std::path::PathBuf;
use std::time::Duration;

use handoff_live::cli::{find_cli, pinned_clis, run, FoundCli, Invocation, RunOutcome};
use handoff_live::fake_provider::{Endpoint, FakeProvider, LoggedRequest};
use handoff_live::skips_are_failures;

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

/// A fresh HOME with a project folder, and the fake provider the CLI is pointed at.
struct Fresh {
    fake: FakeProvider,
    home: tempfile::TempDir,
}

impl Fresh {
    fn start() -> Fresh {
        Fresh {
            fake: FakeProvider::start().unwrap(),
            home: tempfile::Builder::new()
                .prefix("handoff-live-home-")
                .tempdir()
                .unwrap(),
        }
    }

    fn base_url(&self) -> String {
        self.fake.base_url()
    }

    /// Writes a configuration file at `relative` in the HOME; its full path.
    fn write(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.home.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Runs `cli` with `args` and `env` in the project folder: what it printed, once it exited
    /// 0 with "ok" on stdout (else the message shows the requests the fake saw), and its model
    /// requests.
    fn run(
        &self,
        cli: &FoundCli,
        args: &[&str],
        env: &[(&str, String)],
    ) -> (RunOutcome, Vec<LoggedRequest>) {
        let cwd = self.home.path().join("proj");
        std::fs::create_dir_all(&cwd).unwrap();
        let outcome = run(&Invocation {
            program: cli.path.clone(),
            args: args.iter().map(|a| a.to_string()).collect(),
            home: self.home.path().to_owned(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            cwd,
            close_stdin: true,
            timeout: Duration::from_secs(120),
        })
        .unwrap();
        let requests = self.fake.requests();
        eprintln!("fresh run: {}", outcome.summary());
        assert!(
            outcome.succeeded(),
            "{}\nrequests: {requests:#?}",
            outcome.summary()
        );
        let turns: Vec<LoggedRequest> =
            requests.into_iter().filter(|r| r.is_model_turn()).collect();
        assert!(!turns.is_empty(), "no model request reached the fake");
        (outcome, turns)
    }
}

/// Every model request went to `endpoint`, streamed.
fn all_streamed_to(turns: &[LoggedRequest], endpoint: Endpoint) {
    assert!(
        turns.iter().all(|r| r.endpoint == endpoint && r.streamed),
        "{turns:#?}"
    );
}

/// What the CLI printed is the fake's answer.
fn printed_ok(outcome: &RunOutcome) {
    assert_eq!(outcome.stdout.trim(), "ok", "{}", outcome.summary());
}

#[test]
fn claude_code_answers_from_the_fake_anthropic_stream() {
    let Some(claude) = cli("claude") else { return };
    let fresh = Fresh::start();
    let (outcome, turns) = fresh.run(
        &claude,
        &[
            "-p",
            "hi",
            "--output-format",
            "json",
            "--model",
            "claude-sonnet-4-5",
        ],
        &[
            ("ANTHROPIC_BASE_URL", fresh.base_url()),
            ("ANTHROPIC_API_KEY", "dummy".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
        ],
    );
    let result: serde_json::Value = serde_json::from_str(outcome.stdout.trim())
        .unwrap_or_else(|e| panic!("claude printed no JSON ({e}): {}", outcome.stdout));
    assert_eq!(result["result"], "ok", "{result}");
    assert_eq!(result["is_error"], false, "{result}");
    assert!(turns
        .iter()
        .all(|r| r.endpoint == Endpoint::AnthropicMessages));
    assert!(turns.iter().any(|r| r.streamed), "Claude Code streams");
}

#[test]
fn codex_answers_from_the_fake_responses_stream() {
    let Some(codex) = cli("codex") else { return };
    let fresh = Fresh::start();
    let config = fresh.write(
        ".codex/config.toml",
        &format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\n[analytics]\nenabled = false\n",
            fresh.base_url()
        ),
    );
    let (outcome, turns) = fresh.run(
        &codex,
        &["exec", "--skip-git-repo-check", "hi"],
        &[
            ("CODEX_HOME", config.parent().unwrap().display().to_string()),
            ("FAKE_API_KEY", "dummy".into()),
        ],
    );
    printed_ok(&outcome);
    assert!(
        outcome.stderr.contains("session id: "),
        "codex names its session: {}",
        outcome.summary()
    );
    all_streamed_to(&turns, Endpoint::OpenaiResponses);
}

#[test]
fn pi_answers_from_the_fake_chat_completions_stream() {
    let Some(pi) = cli("pi") else { return };
    let fresh = Fresh::start();
    fresh.write(
        ".pi/agent/models.json",
        &serde_json::json!({"providers": {"fake": {
            "baseUrl": format!("{}/v1", fresh.base_url()),
            "api": "openai-completions",
            "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "fake-model", "reasoning": false}]
        }}})
        .to_string(),
    );
    let (outcome, turns) = fresh.run(
        &pi,
        &[
            "--offline",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "-p",
            "hi",
        ],
        &[("PI_OFFLINE", "1".into())],
    );
    printed_ok(&outcome);
    all_streamed_to(&turns, Endpoint::OpenaiChatCompletions);
}

#[test]
fn gemini_cli_answers_from_the_fake_gemini_stream() {
    let Some(gemini) = cli("gemini") else { return };
    let fresh = Fresh::start();
    // Retention off: its startup cleanup deletes session files it cannot parse (live-oracles.md).
    fresh.write(
        ".gemini/settings.json",
        &serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true,
                        "sessionRetention": {"enabled": false}}
        })
        .to_string(),
    );
    let (outcome, turns) = fresh.run(
        &gemini,
        &["-m", "gemini-2.5-flash", "-p", "hi"],
        &[
            ("GEMINI_API_KEY", "dummy".into()),
            ("GOOGLE_GEMINI_BASE_URL", fresh.base_url()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
        ],
    );
    printed_ok(&outcome);
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
    let fresh = Fresh::start();
    let settings = fresh.write(
        ".qwen/settings.json",
        &serde_json::json!({
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"disableAutoUpdate": true},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false}
        })
        .to_string(),
    );
    let (outcome, turns) = fresh.run(
        &qwen,
        &["-p", "hi"],
        &[
            ("OPENAI_BASE_URL", format!("{}/v1", fresh.base_url())),
            ("OPENAI_API_KEY", "dummy".into()),
            ("OPENAI_MODEL", "fake-model".into()),
        ],
    );
    printed_ok(&outcome);
    all_streamed_to(&turns, Endpoint::OpenaiChatCompletions);
    let chats = settings.parent().unwrap().join("projects");
    assert!(
        chats.is_dir(),
        "Qwen Code recorded no session under ~/.qwen/projects"
    );
}
