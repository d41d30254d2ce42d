//! Issue 26's "done when", judged by the real CLIs: one conversation hops Claude Code → Codex →
//! Claude Code → pi → Gemini CLI → Codex → Claude Code in one HOME, each hop a `continue` of the
//! session the last CLI answered in (the engine finds the source's conversation itself), and
//! the real CLI of each episode answers one turn in it before the next hop. At the end each store
//! holds the origin (Claude Code's) plus exactly one episode per target; every hop back to a
//! target appended to its episode under the same id; every episode's resume carried the whole
//! conversation so far (the turn's judge: its first model request is the session plus the
//! prompt, and the session is the whole source, verified by the engine).
//!
//! Skips (printing why) when a CLI is absent, unless HANDOFF_LIVE_REQUIRED=1.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_host::continuation::{
    continue_conversation, Action, ContinueRequest, Continued, Source, SourceFile,
};
use handoff_host::episodes::Witness;
use handoff_host::{Plugin, ReadFrom, SessionRef};
use handoff_live::hop::{Agent, AgentError, SharedHome};
use handoff_live::{skips_are_failures, LiveOptions};

const GENUINE: &str =
    "plugins/claude/tests/samples/genuine-2.1.197/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl";
/// A Claude Code session with a failed tool call (its result's `is_error`), in the same folder.
const WITH_A_FAILED_CALL: &str =
    "examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl";
const GENUINE_CWD: &str = "/home/dev/proj";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn plugin_of(target: &str) -> Box<dyn Plugin> {
    match target {
        "claude-code" => Box::new(handoff_claude::ClaudePlugin),
        "codex" => Box::new(handoff_codex::CodexPlugin),
        "pi" => Box::new(handoff_pi::PiPlugin),
        "gemini-cli" => Box::new(handoff_gemini::GeminiPlugin),
        other => panic!("no plugin for {other}"),
    }
}

/// Claude Code's project folder name for a cwd (every non-alphanumeric character a dash).
fn claude_slug(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The conversation in one shared HOME: each target's plugin, agent and the sessions so far.
struct Chain<'p> {
    home: &'p SharedHome,
    agents: Vec<(&'static str, Agent<'p>)>,
}

impl Chain<'_> {
    fn agent(&self, target: &str) -> &Agent<'_> {
        &self.agents.iter().find(|(t, _)| *t == target).unwrap().1
    }

    /// `continue` from `source` (a session file of `from`) to `to`, as `handoff continue` does:
    /// no locator, the engine finds the conversation.
    fn hop(&self, plugins: &Plugins, from: &str, source: &Path, to: &str) -> Continued {
        let reader = plugins.of(from);
        let agent = self.agent(to);
        continue_conversation(
            plugins.of(to),
            &ContinueRequest {
                source: Source::File(SourceFile {
                    reader: reader.reader(),
                    target: from,
                    path: source,
                    cli_version: None,
                }),
                locator: None,
                target: to,
                root: agent.root(),
                seal: handoff_host::seal::Seal::of_this_process(),
                cwd: Some(self.home.cwd().display().to_string()),
                prompt: "go on",
                drop: &[],
                lock_wait: Duration::from_secs(10),
                into: None,
            },
        )
        .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"))
    }

    /// The real CLI of `target` answers one turn in `session`.
    fn turn(&self, target: &str, session: &SessionRef) {
        match self.home.turn(self.agent(target), session) {
            Ok(evidence) => eprintln!("{target}: {}", evidence.join("\n  ")),
            Err(evidence) => panic!(
                "{target} resuming {}:\n  {}\n(HOME {})",
                session.id,
                evidence.join("\n  "),
                self.home.path().display()
            ),
        }
    }

    /// Runs `target`'s CLI with `args` (a fork of a session, made by the CLI itself): it must
    /// succeed and leave exactly one new session in the store, which is returned.
    fn forked(&self, plugins: &Plugins, target: &str, args: &[&str]) -> SessionRef {
        let before = self.sessions(plugins, target);
        let fork = self.home.run(self.agent(target), args).unwrap();
        assert!(fork.succeeded(), "{}", fork.summary());
        let forked: Vec<String> = self
            .sessions(plugins, target)
            .into_iter()
            .filter(|id| !before.contains(id))
            .collect();
        assert_eq!(
            forked.len(),
            1,
            "one new session: {forked:?}; {}",
            fork.summary()
        );
        plugins
            .of(target)
            .resumer()
            .resolve(self.agent(target).root(), target, &forked[0])
            .unwrap()
    }

    fn sessions(&self, plugins: &Plugins, target: &str) -> Vec<String> {
        plugins
            .of(target)
            .reader()
            .list(self.agent(target).root(), target)
            .unwrap()
            .into_iter()
            .map(|s| s.session.id)
            .collect()
    }

    fn events(&self, plugins: &Plugins, target: &str, session: &SessionRef) -> usize {
        plugins
            .of(target)
            .reader()
            .read(ReadFrom::Session(self.agent(target).root(), session))
            .unwrap()
            .events
            .len()
    }
}

struct Plugins(Vec<(&'static str, Box<dyn Plugin>)>);

impl Plugins {
    fn new() -> Plugins {
        Plugins(
            ["claude-code", "codex", "pi", "gemini-cli"]
                .into_iter()
                .map(|t| (t, plugin_of(t)))
                .collect(),
        )
    }

    fn of(&self, target: &str) -> &dyn Plugin {
        self.0
            .iter()
            .find(|(t, _)| *t == target)
            .unwrap()
            .1
            .as_ref()
    }
}

/// The shared HOME with every CLI configured, or `None` (printing why) when one is absent and
/// skips are allowed.
fn chain<'p>(home: &'p SharedHome, plugins: &'p Plugins) -> Option<Chain<'p>> {
    let mut agents = Vec::new();
    for (target, plugin) in &plugins.0 {
        match home.agent(plugin.as_ref(), target) {
            Ok(agent) => agents.push((*target, agent)),
            Err(AgentError::NotInstalled(why)) if !skips_are_failures() => {
                eprintln!("SKIP: {why}");
                return None;
            }
            Err(e) => panic!("{target}: {e:?}"),
        }
    }
    Some(Chain { home, agents })
}

/// The genuine Claude Code session, moved to the shared HOME's project folder, in Claude Code's
/// store as the user's own session (the origin: handoff did not write it).
fn place_origin(chain: &Chain<'_>, origin: &str) -> PathBuf {
    let cwd = chain.home.cwd().display().to_string();
    let text = std::fs::read_to_string(repo().join(origin))
        .unwrap()
        .replace(GENUINE_CWD, &cwd);
    let folder = chain
        .agent("claude-code")
        .root()
        .path()
        .join("projects")
        .join(claude_slug(&cwd));
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(Path::new(origin).file_name().unwrap());
    std::fs::write(&path, text).unwrap();
    path
}

/// The genuine Claude Code session continued on Codex (the conversation's first episode), whose
/// real CLI has answered a turn in it; then `test`. Nothing when a CLI is absent and skips are
/// allowed.
fn with_a_codex_episode(test: impl FnOnce(&Chain<'_>, &Plugins, &Continued)) {
    let plugins = Plugins::new();
    let home = SharedHome::new(LiveOptions::default()).unwrap();
    let Some(chain) = chain(&home, &plugins) else {
        return;
    };
    let origin = place_origin(&chain, GENUINE);
    let a = chain.hop(&plugins, "claude-code", &origin, "codex");
    chain.turn("codex", &a.session);
    test(&chain, &plugins, &a);
}

/// What one hop must have done.
fn expect(continued: &Continued, action: &str, hop: u32, conversation: &str) {
    let kind = match continued.action {
        Action::Created => "created",
        Action::Appended { .. } => "appended",
        Action::Unchanged => "unchanged",
    };
    assert_eq!(
        (kind, continued.hop, continued.locator.as_str()),
        (action, hop, conversation),
        "{continued:#?}"
    );
}

/// Whether `transcript` has a failed tool result.
fn has_a_failed_call(transcript: &handoff_host::Transcript) -> bool {
    transcript.events.iter().any(|e| {
        matches!(
            e.body,
            handoff_host::Body::ToolResult { is_error: true, .. }
        )
    })
}

/// Runs the chain from `origin`; `between` runs after the hop of the given number (after the
/// CLI's turn).
fn run_chain(origin: &str, between: &dyn Fn(u32, &Chain<'_>, &SessionRef)) {
    let plugins = Plugins::new();
    let home = SharedHome::new(LiveOptions::default()).unwrap();
    let Some(chain) = chain(&home, &plugins) else {
        return;
    };
    let origin = place_origin(&chain, origin);
    let origin_bytes = std::fs::read(&origin).unwrap();

    // Claude Code → Codex: the origin starts the conversation.
    let a = chain.hop(&plugins, "claude-code", &origin, "codex");
    assert_eq!(a.witness, Some(Witness::Origin));
    let conversation = a.locator.clone();
    expect(&a, "created", 1, &conversation);
    let genuine = plugins
        .of("claude-code")
        .reader()
        .read(ReadFrom::File("claude-code", &origin))
        .unwrap();
    assert_eq!(a.events, genuine.events.len(), "the origin's events");
    let failed_call = has_a_failed_call(&genuine);
    chain.turn("codex", &a.session);
    between(1, &chain, &a.session);

    // Codex → Claude Code: a new episode (the user's own session is never modified).
    let b = chain.hop(&plugins, "codex", &a.session.path, "claude-code");
    expect(&b, "created", 2, &conversation);
    assert_eq!(b.witness, Some(Witness::Ledger));
    assert_eq!(b.events, chain.events(&plugins, "codex", &a.session));
    let on_claude = plugins
        .of("claude-code")
        .reader()
        .read(ReadFrom::Session(
            chain.agent("claude-code").root(),
            &b.session,
        ))
        .unwrap();
    assert_eq!(
        has_a_failed_call(&on_claude),
        failed_call,
        "the failed call is still failed after the hop"
    );
    chain.turn("claude-code", &b.session);
    between(2, &chain, &b.session);

    // Claude Code → pi → Gemini CLI: new episodes.
    let p = chain.hop(&plugins, "claude-code", &b.session.path, "pi");
    expect(&p, "created", 3, &conversation);
    chain.turn("pi", &p.session);
    let g = chain.hop(&plugins, "pi", &p.session.path, "gemini-cli");
    expect(&g, "created", 4, &conversation);
    chain.turn("gemini-cli", &g.session);
    let whole = chain.events(&plugins, "gemini-cli", &g.session);

    // Gemini CLI → Codex: Codex's episode is an exact prefix of the conversation (by content,
    // its ids its own), so it gets the rest under the same id.
    let a2 = chain.hop(&plugins, "gemini-cli", &g.session.path, "codex");
    expect(&a2, "appended", 5, &conversation);
    assert_eq!(a2.session.id, a.session.id, "the append kept Codex's id");
    assert_eq!(a2.events, whole);
    chain.turn("codex", &a2.session);

    // Codex → Claude Code: the episode there gets the rest, the origin still untouched.
    let b2 = chain.hop(&plugins, "codex", &a2.session.path, "claude-code");
    expect(&b2, "appended", 6, &conversation);
    assert_eq!(
        b2.session.id, b.session.id,
        "the append kept Claude Code's id"
    );
    assert_eq!(b2.events, chain.events(&plugins, "codex", &a2.session));
    chain.turn("claude-code", &b2.session);

    // Each store: the origin plus exactly one episode per target.
    assert_eq!(std::fs::read(&origin).unwrap(), origin_bytes, "the origin");
    let origin_id = origin.file_stem().unwrap().to_str().unwrap();
    let mut claude = chain.sessions(&plugins, "claude-code");
    claude.sort();
    let mut expected = vec![origin_id.to_owned(), b.session.id.clone()];
    expected.sort();
    assert_eq!(claude, expected);
    assert_eq!(chain.sessions(&plugins, "codex"), [a.session.id.as_str()]);
    assert_eq!(chain.sessions(&plugins, "pi"), [p.session.id.as_str()]);
    assert_eq!(
        chain.sessions(&plugins, "gemini-cli"),
        [g.session.id.as_str()]
    );
    // The last episode holds the whole conversation: every turn of every CLI.
    assert_eq!(
        chain.events(&plugins, "claude-code", &b2.session),
        b2.events + 2,
        "the last turn's prompt and answer after the whole conversation"
    );
}

#[test]
fn one_conversation_hops_through_every_cli_and_each_target_keeps_one_episode() {
    run_chain(GENUINE, &|_, _, _| {});
}

/// The same chain with Codex 0.171's `codex migrate-rollouts --apply` after Codex's first turn:
/// it rewrites the rollout in place (paginated thread history: an `ordinal` on every record,
/// `history_mode` in `session_meta`, `item_completed` events) and drops every member it does not
/// know, handoff's marker and its event extras (ids, error flags) with them. handoff still knows
/// the episode (the sealed ledger names it by id and path), keeps the error flags it recorded,
/// and appends to it later with the same id; the real Codex resumes it with the whole
/// conversation.
#[test]
fn a_codex_migrate_rollouts_between_hops_keeps_the_episode() {
    run_chain(WITH_A_FAILED_CALL, &|hop, chain, session| {
        if hop != 1 {
            return;
        }
        let before = std::fs::read_to_string(&session.path).unwrap();
        assert!(
            before.contains("x-handoff"),
            "handoff's marker is there before"
        );
        let outcome = chain
            .home
            .run(chain.agent("codex"), &["migrate-rollouts", "--apply"])
            .unwrap();
        assert!(outcome.succeeded(), "{}", outcome.summary());
        let after = std::fs::read_to_string(&session.path).unwrap();
        assert!(
            after.contains("\"history_mode\":\"paginated\"") && !after.contains("x-handoff"),
            "the migration rewrote the rollout and dropped handoff's members: {}",
            outcome.summary()
        );
    });
}

/// An append to a rollout that Codex rewrote (`codex migrate-rollouts --apply`, Codex 0.171)
/// numbers every record it writes, as Codex numbers its own: a tool result of text too (it has
/// a writing path of its own, which once left the `ordinal` out; Codex 0.171.0 resumed such a
/// rollout all the same, with the record or without), and the real Codex resumes the rollout
/// with the whole conversation: the append's prompt, call, result and answer among it.
#[test]
fn an_append_to_a_rollout_codex_rewrote_is_resumed_by_codex() {
    use handoff_host::{AssistantPart, Body, ById, Event, Part, Timestamp, ToolCall};
    with_a_codex_episode(|chain, plugins, a| {
        let codex = chain.agent("codex");
        let migrated = chain
            .home
            .run(codex, &["migrate-rollouts", "--apply"])
            .unwrap();
        assert!(migrated.succeeded(), "{}", migrated.summary());
        let at = |later: i64| Timestamp::from_millis(Timestamp::now().millis() + later);
        let events = [
            Event::new("appended-1", at(1), Body::user_text("what is here?")),
            Event::new(
                "appended-2",
                at(2),
                Body::Assistant {
                    content: vec![AssistantPart::ToolCall(ToolCall::new(
                        "call_appended",
                        "exec_command",
                        serde_json::json!({"cmd": "ls"}),
                    ))],
                    origin: None,
                },
            ),
            Event::new(
                "appended-3",
                at(3),
                Body::ToolResult {
                    call_id: "call_appended".into(),
                    content: vec![Part::text("README.md")],
                    is_error: false,
                },
            ),
            Event::new(
                "appended-4",
                at(4),
                Body::Assistant {
                    content: vec![AssistantPart::text("A README.")],
                    origin: None,
                },
            ),
        ];
        plugins
            .of("codex")
            .append_id(codex.root(), "codex", &a.session.id, &events)
            .unwrap();
        let rollout = std::fs::read_to_string(&a.session.path).unwrap();
        let unnumbered: Vec<&str> = rollout
            .lines()
            .filter(|line| !line.contains("\"ordinal\":"))
            .collect();
        assert!(
            unnumbered.is_empty(),
            "records without an ordinal: {unnumbered:#?}"
        );
        chain.turn("codex", &a.session);
    });
}

/// A session that continued an episode natively: Claude Code's `--resume ID --fork-session`
/// writes a new session with the episode's history. Continued to Codex, it is known as the same
/// conversation, and Codex's episode (a prefix of it) is extended under its id.
#[test]
fn a_claude_code_fork_of_an_episode_extends_the_codex_episode() {
    with_a_codex_episode(|chain, plugins, a| {
        let conversation = a.locator.clone();
        let b = chain.hop(plugins, "codex", &a.session.path, "claude-code");
        expect(&b, "created", 2, &conversation);

        let fork_session = chain.forked(
            plugins,
            "claude-code",
            &[
                "-p",
                "--resume",
                &b.session.id,
                "--fork-session",
                "--model",
                "claude-sonnet-4-5",
                "--output-format",
                "json",
                "handoff live check: reply with ok",
            ],
        );

        let a2 = chain.hop(plugins, "claude-code", &fork_session.path, "codex");
        // Claude Code 2.1.197 copies the episode's records, the marker with them.
        assert_eq!(a2.witness, Some(Witness::Marker));
        expect(&a2, "appended", 3, &conversation);
        assert_eq!(a2.session.id, a.session.id);
        chain.turn("codex", &a2.session);
        assert_eq!(chain.sessions(plugins, "codex"), [a.session.id.as_str()]);
    });
}

/// Codex compacting its episode by itself (its automatic compaction, made to trigger at once with
/// `-c model_auto_compact_token_limit=1`; Codex 0.171.0 appends a `compacted` record whose
/// replacement history keeps the user messages and ends on its summary, marked as the
/// harness's): the events before it stay, so Claude Code's episode is still a prefix and the
/// next hop extends it with the compaction (Claude Code's compact boundary and summary), which
/// the real Claude Code then resumes with the summary in place of what it replaces.
#[test]
fn a_codex_compaction_of_its_episode_is_carried_to_the_next_episode() {
    with_a_codex_episode(|chain, plugins, a| {
        let conversation = a.locator.clone();
        let b = chain.hop(plugins, "codex", &a.session.path, "claude-code");
        expect(&b, "created", 2, &conversation);
        chain.turn("claude-code", &b.session);
        let a2 = chain.hop(plugins, "claude-code", &b.session.path, "codex");
        expect(&a2, "appended", 3, &conversation);

        let compacted = chain
            .home
            .run(
                chain.agent("codex"),
                &[
                    "exec",
                    "--skip-git-repo-check",
                    "-c",
                    "model_auto_compact_token_limit=1",
                    "resume",
                    &a.session.id,
                    "handoff live check: reply with ok",
                ],
            )
            .unwrap();
        assert!(compacted.succeeded(), "{}", compacted.summary());
        let rollout = std::fs::read_to_string(&a.session.path).unwrap();
        assert_eq!(
            rollout.matches("\"type\":\"compacted\"").count(),
            1,
            "Codex compacted: {}",
            compacted.summary()
        );
        let b2 = chain.hop(plugins, "codex", &a.session.path, "claude-code");
        expect(&b2, "appended", 4, &conversation);
        assert_eq!(b2.session.id, b.session.id);
        let on_claude = plugins
            .of("claude-code")
            .reader()
            .read(ReadFrom::Session(
                chain.agent("claude-code").root(),
                &b2.session,
            ))
            .unwrap();
        assert!(
            on_claude
                .events
                .iter()
                .any(|e| matches!(e.body, handoff_host::Body::Compaction { .. })),
            "the compaction is in Claude Code's episode"
        );
        chain.turn("claude-code", &b2.session);
    });
}

/// pi's `--fork <path>` of an episode (a new session with the episode's entries): known as the
/// same conversation by its first event, it extends Codex's episode, a prefix of it.
#[test]
fn a_pi_fork_of_an_episode_extends_the_codex_episode() {
    with_a_codex_episode(|chain, plugins, a| {
        let conversation = a.locator.clone();
        let p = chain.hop(plugins, "codex", &a.session.path, "pi");
        expect(&p, "created", 2, &conversation);

        let path = p.session.path.display().to_string();
        let fork_session = chain.forked(
            plugins,
            "pi",
            &[
                "--fork",
                &path,
                "--provider",
                "fake",
                "--model",
                "fake-model",
                "-p",
                "handoff live check: reply with ok",
            ],
        );
        let a2 = chain.hop(plugins, "pi", &fork_session.path, "codex");
        // pi 0.73.1 writes the fork a header of its own (no marker) and copies the entries with
        // their ids: the fork is known by its first event, the episode's.
        assert_eq!(a2.witness, Some(Witness::FirstEvent));
        expect(&a2, "appended", 3, &conversation);
        assert_eq!(a2.session.id, a.session.id);
        chain.turn("codex", &a2.session);
    });
}
