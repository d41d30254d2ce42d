//! The live tier's own checks can fail and never pass by default, shown on variants of the claude
//! plugin: a writer that changes one text fails with the diff; a CLI that is absent or at another
//! version is a skip with the reason. (Each plugin's live run itself is in its own
//! `tests/conformance.rs`.)

mod live_common;

use handoff_claude::ClaudePlugin;
use handoff_conformance::Status;
use handoff_host::{
    Body, CreateOptions, Manifest, Part, Plugin, PluginError, Reader, Resumer, SessionRef,
    StoreRoot, Transcript, Writer,
};
use handoff_live::{run_live_target, LiveOptions};

/// The claude plugin with its live recipe changed, and optionally a writer that alters the first
/// user text before writing (a writer whose session is not the transcript).
struct Variant {
    program: Option<&'static str>,
    version: Option<&'static str>,
    lying_writer: bool,
}

impl Plugin for Variant {
    fn manifest(&self) -> Manifest {
        let mut manifest = ClaudePlugin.manifest();
        for target in &mut manifest.targets {
            if let Some(recipe) = &mut target.live {
                if let Some(p) = self.program {
                    recipe.program = p.to_owned();
                }
                if let Some(v) = self.version {
                    recipe.version = v.to_owned();
                }
            }
        }
        manifest
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        ClaudePlugin.reader()
    }
    fn resumer(&self) -> &dyn Resumer {
        ClaudePlugin.resumer()
    }
}

impl Writer for Variant {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let mut transcript = transcript.clone();
        if self.lying_writer {
            if let Some(Body::User { content }) = transcript.events.first_mut().map(|e| &mut e.body)
            {
                if let Some(Part::Text { text }) = content.first_mut() {
                    text.push_str(" (changed by the writer)");
                }
            }
        }
        ClaudePlugin
            .writer()
            .create(root, target, &transcript, options)
    }
    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[handoff_host::Event],
    ) -> Result<SessionRef, PluginError> {
        ClaudePlugin.writer().append(root, session, events)
    }
    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        ClaudePlugin.writer().remove(root, session)
    }
}

fn only_plain_chat() -> LiveOptions {
    LiveOptions {
        only: vec!["plain-chat".into()],
        ..LiveOptions::default()
    }
}

#[test]
fn an_absent_cli_is_a_skip_with_the_reason_never_a_pass() {
    let variant = Variant {
        program: Some("handoff-no-such-cli"),
        version: None,
        lying_writer: false,
    };
    let results = run_live_target(&variant, "claude-code", &only_plain_chat());
    let ids: Vec<_> = results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["live/claude-code/plain-chat", "live/claude-code/missing-id"]
    );
    for r in &results {
        assert_eq!(r.status, Status::Skip, "{r:?}");
        assert!(
            r.evidence[0].contains("handoff-no-such-cli")
                && r.evidence[0].contains("install-clis.sh"),
            "{r:?}"
        );
    }
}

#[test]
fn a_cli_at_another_version_is_a_skip_naming_the_pin() {
    let variant = Variant {
        program: None,
        version: Some("0.0.1"),
        lying_writer: false,
    };
    let results = run_live_target(&variant, "claude-code", &only_plain_chat());
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r.status, Status::Skip, "{r:?}");
        // Installed: "… is version 2.1.197, the recipe pins 0.0.1"; absent: "not installed".
        assert!(
            r.evidence[0].contains("pins 0.0.1") || r.evidence[0].contains("not installed"),
            "{r:?}"
        );
    }
}

#[test]
fn a_writer_whose_session_differs_from_the_transcript_fails_with_the_diff() {
    let variant = Variant {
        program: None,
        version: None,
        lying_writer: true,
    };
    let results = run_live_target(&variant, "claude-code", &only_plain_chat());
    if live_common::cli_absent(&results) {
        return;
    }
    let check = &results[0];
    assert_eq!(check.id, "live/claude-code/plain-chat");
    assert_eq!(check.status, Status::Fail, "{check:?}");
    let diff = check
        .evidence
        .iter()
        .find(|l| l.contains("differs"))
        .unwrap_or_else(|| panic!("no diff in {check:?}"));
    assert!(
        diff.contains("event 0") && diff.contains("(changed by the writer)"),
        "{diff}"
    );
    assert_eq!(results[1].status, Status::Pass, "{:?}", results[1]);
}

#[test]
fn one_live_check_runs_by_id_and_an_unknown_id_names_the_known_ones() {
    use handoff_conformance::corpus::entries;
    use handoff_live::{live_check_ids, run_live_check};
    let ids = live_check_ids(&ClaudePlugin, entries());
    assert!(
        ids.contains(&"live/claude-code/plain-chat".to_owned()),
        "{ids:?}"
    );
    assert_eq!(ids.last().unwrap(), "live/claude-code/missing-id");
    assert!(
        ids.iter().all(|id| id.starts_with("live/claude-code/")),
        "{ids:?}"
    );

    let unknown = run_live_check(
        &ClaudePlugin,
        "live/claude-code/no-such-entry",
        entries(),
        &LiveOptions::default(),
    );
    assert_eq!(unknown.status, Status::Fail);
    assert!(
        unknown.evidence[0].contains("live/claude-code/plain-chat"),
        "{unknown:?}"
    );

    let one = run_live_check(
        &ClaudePlugin,
        "live/claude-code/missing-id",
        entries(),
        &LiveOptions::default(),
    );
    assert_eq!(one.id, "live/claude-code/missing-id");
    if live_common::cli_absent(std::slice::from_ref(&one)) {
        return;
    }
    assert_eq!(one.status, Status::Pass, "{one:?}");
}
