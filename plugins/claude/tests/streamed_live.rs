//! The real Claude Code 2.1.197 resumes sessions written event by event: the live tier (every
//! corpus entry the target carries, docs/live.md) run on a plugin whose `create` is the Claude
//! plugin's `create_streamed` over the held transcript.

use handoff_claude::{ClaudePlugin, CLAUDE_CODE};
use handoff_live::harness::judge_live;
use handoff_live::{run_live_target, LiveOptions};
use handoff_sdk::{
    CreateOptions, Event, HeldEvents, Manifest, Plugin, PluginError, Reader, Resumer, SessionRef,
    StoreRoot, Transcript, Writer,
};

/// The Claude plugin, creating with `create_streamed`.
struct Streamed;

impl Plugin for Streamed {
    fn manifest(&self) -> Manifest {
        ClaudePlugin.manifest()
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        &ClaudePlugin
    }
    fn resumer(&self) -> &dyn Resumer {
        &ClaudePlugin
    }
}

impl Writer for Streamed {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let mut events = HeldEvents::new(transcript);
        ClaudePlugin.create_streamed(root, target, &mut events, options)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        ClaudePlugin.append(root, session, events)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        ClaudePlugin.remove(root, session)
    }
}

#[test]
fn claude_code_resumes_what_create_streamed_wrote() {
    judge_live(&run_live_target(
        &Streamed,
        CLAUDE_CODE,
        &LiveOptions::default(),
    ));
}
