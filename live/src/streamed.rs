//! What every streaming writer's tests check (issue 30): `create_streamed` writes the bytes
//! `create` writes (but for the ids each write draws at random), asks the stream for the whole
//! transcript only where the format needs look-ahead, and a refused event or a source that
//! breaks off leaves nothing behind. A plugin's `tests/streamed.rs` names its target and the
//! members that hold random ids; the checks are here once.

use std::path::Path;

use handoff_capability::{CreateOptions, EventStream, HeldEvents, Plugin, PluginError, ReadFrom};
use handoff_store::StoreRoot;
use handoff_transcript::{
    AssistantPart, Body, Event, Feature, Origin, Part, Timestamp, ToolCall, Transcript,
};
use serde_json::Value;

/// A held transcript handed out as a stream that counts its `whole` calls and can break off
/// before the event numbered `fail_after`.
pub struct Probe<'a> {
    held: HeldEvents<'a>,
    taken: usize,
    fail_after: Option<usize>,
    wholes: usize,
}

impl<'a> Probe<'a> {
    /// Every event of `t`, then the end.
    pub fn new(t: &'a Transcript) -> Self {
        Probe {
            held: HeldEvents::new(t),
            taken: 0,
            fail_after: None,
            wholes: 0,
        }
    }

    /// The first `n` events of `t`, then an error ("the source broke off").
    pub fn failing_after(t: &'a Transcript, n: usize) -> Self {
        Probe {
            fail_after: Some(n),
            ..Probe::new(t)
        }
    }

    /// How many events the writer took (the one that broke off not counted).
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// How often the writer asked for the whole transcript.
    pub fn wholes(&self) -> usize {
        self.wholes
    }
}

impl EventStream for Probe<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        if self.fail_after == Some(self.taken) {
            return Err(PluginError::Other("the source broke off".into()));
        }
        self.taken += 1;
        self.held.next_event()
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        self.wholes += 1;
        self.held.whole()
    }
}

/// Every file and folder under `dir`, relative to it, sorted (none when `dir` is gone).
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.expect("a folder entry").path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A JSONL file's text with each id found at `pointers` (JSON pointers into each line, `/id`,
/// `/data/sessionId`) replaced everywhere in its line by its number in order of first
/// appearance: two writes of one transcript give the same text exactly when they wrote the same
/// bytes but for fresh ids.
pub fn text_with_ids_numbered(path: &Path, pointers: &[&str]) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON line");
        let mut line = line.to_owned();
        for pointer in pointers {
            let Some(id) = record.pointer(pointer).and_then(Value::as_str) else {
                continue;
            };
            if !seen.iter().any(|s| s == id) {
                seen.push(id.to_owned());
            }
        }
        for (n, id) in seen.iter().enumerate() {
            line = line.replace(&format!("\"{id}\""), &format!("\"id#{n}\""));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One target's streamed write, checked against its own `create`.
pub struct StreamedWrite<'p> {
    /// The plugin that writes the target.
    pub plugin: &'p dyn Plugin,
    /// The target's name.
    pub target: &'p str,
    /// What both writes are handed.
    pub options: CreateOptions,
    /// Where each line holds an id drawn at random ([`text_with_ids_numbered`]).
    pub ids: &'p [&'p str],
}

/// What [`StreamedWrite::same_as_create`] found.
pub struct Compared {
    /// Both writes refused the transcript with this error.
    pub refused: Option<String>,
    /// The streamed write's file read back (when both wrote).
    pub read_back: Option<Transcript>,
    /// How often the stream was asked for the whole transcript.
    pub wholes: usize,
}

impl<'p> StreamedWrite<'p> {
    /// `target` of `plugin`, both writes handed the cwd `/home/dev/streamed` and the locator
    /// `conv-s`; `ids` as in [`StreamedWrite::ids`].
    pub fn new(plugin: &'p dyn Plugin, target: &'p str, ids: &'p [&'p str]) -> Self {
        StreamedWrite {
            plugin,
            target,
            options: CreateOptions {
                cwd: Some("/home/dev/streamed".into()),
                locator: Some("conv-s".into()),
            },
            ids,
        }
    }
}

impl StreamedWrite<'_> {
    /// `create` and `create_streamed` of `t` into two fresh stores: both refuse it with the same
    /// error, the streamed one leaving nothing behind, or both write the same text but for the
    /// ids, and the streamed file reads back.
    pub fn same_as_create(&self, name: &str, t: &Transcript) -> Compared {
        let (held_dir, streamed_dir) = (temp_dir(), temp_dir());
        let held = StoreRoot::new(held_dir.path()).unwrap();
        let streamed = StoreRoot::new(streamed_dir.path()).unwrap();
        let writer = self.plugin.writer();
        let whole = writer.create(&held, self.target, t, &self.options);
        let mut probe = Probe::new(t);
        let each = writer.create_streamed(&streamed, self.target, &mut probe, &self.options);
        let (refused, read_back) = match (whole, each) {
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "{name}");
                assert_eq!(files_under(streamed_dir.path()), [""; 0], "{name}");
                (Some(a.to_string()), None)
            }
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    text_with_ids_numbered(&a.path, self.ids),
                    text_with_ids_numbered(&b.path, self.ids),
                    "{name}: the streamed write differs"
                );
                let read = self.read(&b.path);
                (None, Some(read.unwrap_or_else(|e| panic!("{name}: {e}"))))
            }
            (a, b) => panic!("{name}: create {a:?}, create_streamed {b:?}"),
        };
        Compared {
            refused,
            read_back,
            wholes: probe.wholes,
        }
    }

    /// [`Self::same_as_create`] for a writer that never needs look-ahead: the stream is never
    /// asked for the whole transcript. The refusal, if both refused `t`.
    pub fn same_as_create_without_the_whole(&self, name: &str, t: &Transcript) -> Option<String> {
        let compared = self.same_as_create(name, t);
        assert_eq!(compared.wholes, 0, "{name}");
        compared.refused
    }

    /// A stream of `t` that breaks off after each of `fail_afters` events fails with the
    /// source's error and leaves nothing in the store.
    pub fn assert_broken_streams_leave_nothing(&self, t: &Transcript, fail_afters: &[usize]) {
        for &n in fail_afters {
            let dir = temp_dir();
            let root = StoreRoot::new(dir.path()).unwrap();
            let mut probe = Probe::failing_after(t, n);
            let e = self
                .plugin
                .writer()
                .create_streamed(&root, self.target, &mut probe, &self.options)
                .expect_err("a stream that broke off");
            assert!(e.to_string().contains("broke off"), "after {n}: {e}");
            assert_eq!(files_under(dir.path()), [""; 0], "after {n}");
        }
    }

    /// Every entry of the conformance corpus the target carries (at least `at_least` of them) is
    /// refused alike or written alike by both writes, without the whole transcript; and so is a
    /// long synthetic session of 300 tool turns by `origin`'s model, which must be written.
    pub fn assert_corpus_and_a_long_session_alike(&self, at_least: usize, origin: &Origin) {
        let manifest = self.plugin.manifest();
        let target = manifest.target(self.target).expect("the plugin's target");
        let written = each_corpus_entry_carried(&target.carries, |name, t| {
            self.same_as_create_without_the_whole(name, t);
        });
        assert!(written >= at_least, "only {written} corpus entries carried");
        let t = handoff_transcript::synthetic::tool_turns(300, origin);
        assert_eq!(
            self.same_as_create_without_the_whole("300 tool turns", &t),
            None
        );
    }

    /// `path` read by the target's reader.
    pub fn read(&self, path: &Path) -> Result<Transcript, PluginError> {
        self.plugin.reader().read(ReadFrom::File(self.target, path))
    }
}

/// Each entry of the conformance corpus whose every feature is in `carries`, handed to `check`
/// by name; how many were.
pub fn each_corpus_entry_carried(
    carries: &[Feature],
    mut check: impl FnMut(&str, &Transcript),
) -> usize {
    let mut checked = 0;
    for entry in handoff_conformance::corpus::entries() {
        if entry.transcript.first_uncarried(carries).is_none() {
            check(entry.name, &entry.transcript);
            checked += 1;
        }
    }
    checked
}

/// `n` turns of a prompt, a call of `tool` by `origin`'s model and its result (every other one
/// failed): events `u{i}`, `a{i}`, `r{i}`, calls `call_{i}`, 1 ms apart within a turn.
pub fn call_turns(n: usize, tool: &str, origin: &Origin) -> Transcript {
    let event = |id: String, ms: i64, body: Body| {
        Event::new(id, Timestamp::from_millis(1_795_999_300_000 + ms), body)
    };
    let mut events = Vec::new();
    for i in 0..n {
        let ms = i as i64 * 10;
        events.push(event(
            format!("u{i}"),
            ms,
            Body::user_text(format!("question {i}")),
        ));
        events.push(event(
            format!("a{i}"),
            ms + 1,
            Body::Assistant {
                content: vec![AssistantPart::ToolCall(ToolCall::new(
                    format!("call_{i}"),
                    tool,
                    serde_json::json!({"command": "ls"}),
                ))],
                origin: Some(origin.clone()),
            },
        ));
        events.push(event(
            format!("r{i}"),
            ms + 2,
            Body::ToolResult {
                call_id: format!("call_{i}"),
                content: vec![Part::text("a.txt")],
                is_error: i % 2 == 1,
            },
        ));
    }
    Transcript::new(events)
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}
