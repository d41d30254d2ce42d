//! Closing the loop: a conversation held in an `openai-responses` session, read back by this
//! plugin and continued into Codex, is resumed by the real Codex CLI (the live tier: Codex runs
//! against the loopback fake provider, and the history it sends must be the transcript plus the
//! prompt). A skip (Codex not installed at the pinned version) fails under
//! `HANDOFF_LIVE_REQUIRED=1`, as every live test does.

mod common;

use common::*;
use handoff_conformance::corpus::Entry;
use handoff_host::Plugin;
use handoff_host::ReadFrom;
use handoff_live::harness::judge_live;
use handoff_live::{run_live, LiveOptions};
use handoff_openai::OpenaiPlugin;

#[test]
fn an_openai_responses_session_continued_into_codex_is_resumed_by_codex() {
    let codex_sample = samples()
        .into_iter()
        .find(|(what, _)| what.starts_with("codex/"))
        .expect("a Codex sample")
        .1;
    let sources = [
        (
            "responses-parallel-tool-calls",
            corpus("parallel-tool-calls"),
        ),
        (
            "responses-thinking-signed-openai",
            corpus("thinking-signed-openai"),
        ),
        ("responses-codex-sample", codex_sample),
    ];
    let (_dir, root) = root();
    let entries: Vec<Entry> = sources
        .into_iter()
        .map(|(name, t)| {
            let session = create(&root, "openai-responses", &t);
            let held = OpenaiPlugin
                .reader()
                .read(ReadFrom::Session(&root, &session))
                .unwrap();
            Entry {
                name,
                transcript: held,
            }
        })
        .collect();
    let results = run_live(
        &handoff_codex::CodexPlugin,
        "codex",
        &entries,
        &LiveOptions {
            only: entries.iter().map(|e| e.name.to_owned()).collect(),
            ..LiveOptions::default()
        },
    );
    // The missing-id check is Codex's own, not this loop's.
    let ours: Vec<_> = results
        .into_iter()
        .filter(|r| entries.iter().any(|e| r.id.ends_with(e.name)))
        .collect();
    assert_eq!(ours.len(), entries.len(), "not every session was resumed");
    judge_live(&ours);
}
