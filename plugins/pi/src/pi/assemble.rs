//! The conversation's events in path order: each path entry converted (or carried on the next
//! event), what the canonical model requires checked in order (every tool result answers one
//! call pi sends, once; call ids are not reused), and what the writer needs to continue the file.
//!
//! [`stream`]: the first pass keeps only the tree, then the path's lines are parsed one at a time
//! and each event goes out as soon as it is made (the next event decides only what is carried
//! on it). A one-pass variant that converted every line on the spot and then picked the path was
//! ~5 % faster but peaked at 2.0x the file instead of 1.7x (benches/memory.rs), so there is one
//! way.

use std::path::Path;

use foldhash::HashMap;
use handoff_sdk::serde_json::Value;
use handoff_sdk::spill::SpillSet;
use handoff_sdk::IdSeeds;
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Timestamp};

use super::accepted;
use super::context::{conversation, Role};
use super::convert::{carried, pi_map, Converted, Converter, Node};
use super::read::{self, Lines, Scan};

/// The text of the result pi sends for a tool call the file holds no result for.
pub const NO_RESULT_TEXT: &str = "No result provided";
/// The event id of such a result: the call's id and this.
const NO_RESULT_ID_SUFFIX: &str = ":no-result";

/// What a read finds besides the events.
#[derive(Debug, Default)]
pub struct Found {
    /// The session id the header names.
    pub id: String,
    /// The working directory the header names.
    pub cwd: Option<String>,
    /// The id of the last entry in file order (pi's leaf, which an append continues from).
    pub leaf: Option<String>,
    /// The model pi resumes with: the last `model_change` or assistant message on the path that
    /// names one (by a read that reached it: every read to the end).
    pub model: Option<(String, String)>,
    /// Every entry id in the file (only when asked for).
    pub ids: Vec<String>,
}

/// What a read finds besides the events, the header and the model, at a cost to the plain read.
#[derive(Clone, Copy, Debug)]
pub struct Wanted {
    /// [`Found::ids`] (an append): every entry's id, kept.
    pub ids: bool,
}

impl Wanted {
    /// The events alone.
    pub const EVENTS: Wanted = Wanted { ids: false };
}

/// The tool calls of the path so far: every call id as a digest (a call id is not used twice),
/// in a [`SpillSet`] (~1.3–2.5 B a call past its threshold), and the calls not answered yet with
/// their tool names (a result carries its `toolName` only when it is not its call's). A call is
/// answered nearly always right after it is made, so what is kept whole stays small however
/// long the session (each call's two strings, kept for the whole read, were ~100 B a call).
#[derive(Default)]
struct Calls {
    seen: SpillSet,
    seeds: IdSeeds,
    unanswered: HashMap<String, String>,
}

impl Calls {
    /// Adds a call; `false` when its id was used before.
    fn add(&mut self, id: &str, name: &str) -> bool {
        if !self.seen.insert_new(self.seeds.digest(id)) {
            return false;
        }
        self.unanswered.insert(id.to_owned(), name.to_owned());
        true
    }

    /// Whether a call of this id was made.
    fn seen(&self, id: &str) -> bool {
        self.seen.contains(&self.seeds.digest(id))
    }
}

/// Puts converted events in order: checks them, carries what comes between them, and hands
/// each on once the next one is known (the last gets what follows it).
struct Assembly<'a> {
    file: &'a Path,
    /// Call id → (tool name, answered yet).
    calls: Calls,
    /// Whether calls without result get the result pi sends.
    answer: bool,
    /// The calls of the last assistant message pi sends, in order, with that message's time.
    open_calls: Vec<String>,
    open_calls_at: Timestamp,
    before: Vec<Value>,
    held: Option<Event>,
    sink: &'a mut dyn FnMut(Event) -> bool,
    stopped: bool,
}

impl<'a> Assembly<'a> {
    fn new(file: &'a Path, open_calls: OpenCalls, sink: &'a mut dyn FnMut(Event) -> bool) -> Self {
        Assembly {
            file,
            answer: open_calls == OpenCalls::Answered,
            calls: Calls::default(),
            open_calls: Vec::new(),
            open_calls_at: Timestamp::from_millis(0),
            before: Vec::new(),
            held: None,
            sink,
            stopped: false,
        }
    }

    fn carry(&mut self, entry: Value) {
        self.before.push(entry);
    }

    /// Adds an event; `false` once the sink wants no more.
    fn push(&mut self, converted: Converted) -> Result<bool, PluginError> {
        if matches!(
            converted.event.body,
            Body::User { .. } | Body::Assistant { .. }
        ) && !self.answer_open_calls()
        {
            return Ok(false);
        }
        let event = self.check(converted)?;
        if let (true, Body::Assistant { content, .. }) = (self.answer, &event.body) {
            let calls = content.iter().filter_map(|part| match part {
                AssistantPart::ToolCall(call) => Some(call.id.clone()),
                _ => None,
            });
            self.open_calls = calls.collect();
            self.open_calls_at = event.timestamp;
        }
        Ok(self.hand_on(event))
    }

    /// Answers the last assistant message's calls that have no result as pi does when it sends
    /// the conversation (pi-ai's `transformMessages`: before the next user or assistant message,
    /// or at the end, a result "No result provided" flagged as an error); `false` once the sink
    /// wants no more.
    fn answer_open_calls(&mut self) -> bool {
        // What was carried belongs before the next entry of the file, not before pi's answers.
        let carried = std::mem::take(&mut self.before);
        for call_id in std::mem::take(&mut self.open_calls) {
            if self.calls.unanswered.remove(&call_id).is_none() {
                continue; // answered, or no call pi sends
            }
            let event = Event::new(
                format!("{call_id}{NO_RESULT_ID_SUFFIX}"),
                self.open_calls_at,
                Body::ToolResult {
                    call_id,
                    content: vec![Part::text(NO_RESULT_TEXT)],
                    is_error: true,
                },
            );
            if !self.hand_on(event) {
                return false;
            }
        }
        self.before = carried;
        true
    }

    /// Hands the held event on and holds `event` (with what was carried before it).
    fn hand_on(&mut self, mut event: Event) -> bool {
        if !self.before.is_empty() {
            let before = std::mem::take(&mut self.before);
            pi_map(&mut event).insert("before".into(), Value::Array(before));
        }
        if let Some(previous) = self.held.replace(event) {
            if !(self.sink)(previous) {
                self.stopped = true;
            }
        }
        !self.stopped
    }

    fn finish(mut self) {
        if self.stopped || !self.answer_open_calls() {
            return;
        }
        if let Some(mut last) = self.held.take() {
            if !self.before.is_empty() {
                let after = std::mem::take(&mut self.before);
                pi_map(&mut last).insert("after".into(), Value::Array(after));
            }
            (self.sink)(last);
        }
    }

    /// Call ids are not reused; every result answers one call pi sends, once; a result's
    /// `toolName` is carried only when it is not its call's.
    fn check(&mut self, converted: Converted) -> Result<Event, PluginError> {
        let Converted {
            mut event,
            line,
            tool_name,
        } = converted;
        let fail = |field: &str, message: String| {
            PluginError::malformed_line(self.file, line, Some(field), message)
        };
        match &event.body {
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    let AssistantPart::ToolCall(call) = part else {
                        continue;
                    };
                    if !self.calls.add(&call.id, &call.name) {
                        return Err(fail(
                            &format!("message.content[{i}].id"),
                            format!(
                                "tool call id {:?} is used twice on the conversation path",
                                call.id
                            ),
                        ));
                    }
                }
            }
            Body::ToolResult { call_id, .. } => {
                let Some(name) = self.calls.unanswered.remove(call_id) else {
                    return Err(fail(
                        "message.toolCallId",
                        if self.calls.seen(call_id) {
                            format!("tool call {call_id:?} already has a result")
                        } else {
                            format!(
                                "{call_id:?} answers no tool call pi sends on the conversation \
                                 path (none, or one of an assistant message that stopped with \
                                 error/aborted)"
                            )
                        },
                    ));
                };
                if let Some(tool_name) = tool_name.filter(|t| *t != name) {
                    let message = pi_map(&mut event)
                        .entry("message")
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Some(members) = message.as_object_mut() {
                        members.insert("toolName".into(), Value::String(tool_name));
                    }
                }
            }
            _ => {}
        }
        Ok(event)
    }
}

/// Converts one path entry by its role.
fn convert(
    converter: &Converter<'_>,
    node: Node,
    role: Role,
    through: impl FnOnce(usize) -> String,
) -> Result<Result<Converted, Value>, PluginError> {
    Ok(Ok(match role {
        Role::Carried => return Ok(Err(carried(node))),
        Role::Message => converter.message(node)?,
        Role::AsUser => converter.as_user(node)?,
        Role::Compaction { through: at } => converter.compaction(node, through(at))?,
    }))
}

/// How a read treats a tool call the file holds no result for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OpenCalls {
    /// With the result pi sends for it (a read: what pi sends).
    Answered,
    /// Left open (an append, which may answer it).
    AsWritten,
}

/// Reads the conversation of `path` streaming (two passes), handing each event to `sink` until
/// it returns `false`; and what is `wanted` besides. A read that reaches the end (pi's view of
/// the session: calls answered as pi answers them) remembers what a resume plan needs
/// ([`accepted`]).
pub fn stream(
    path: &Path,
    wanted: Wanted,
    open_calls: OpenCalls,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Found, PluginError> {
    // Taken before the first byte is read: a write during the read makes the version differ.
    let version = accepted::Version::of(path);
    // Whether the sink said `false` to the last event it was given: the read stopped there (or
    // at the very end: then it is not remembered either, which costs only a read again).
    let mut stopped = false;
    let found = stream_scan(read::scan(path, wanted.ids)?, open_calls, &mut |event| {
        let more = sink(event);
        stopped = !more;
        more
    })?;
    if let (false, OpenCalls::Answered, Some(version)) = (stopped, open_calls, version) {
        let plan = accepted::Accepted {
            id: found.id.clone(),
            cwd: found.cwd.clone(),
            model: found.model.clone(),
        };
        accepted::remember(version, plan);
    }
    Ok(found)
}

/// [`stream`] of a file already scanned.
pub fn stream_scan(
    mut scan: Scan,
    open_calls: OpenCalls,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Found, PluginError> {
    let conv = conversation(&scan)?;
    let mut found = Found {
        id: scan.header.id.clone(),
        cwd: scan.header.cwd.clone(),
        leaf: scan.leaf().map(|(_, id)| id.to_owned()),
        model: None,
        ids: std::mem::take(&mut scan.all_ids),
    };
    let path = scan.path.clone();
    let converter = Converter {
        file: &path,
        version: scan.header.version,
    };
    // The ids compactions name as the last they replace, taken as their entries are read
    // (always before the compaction: it replaces what comes before it).
    let mut throughs: HashMap<u32, String> = conv.throughs().map(|e| (e, String::new())).collect();
    // The model is the last path entry's that names one: that line alone is parsed for it.
    let model_entry = conv
        .path
        .iter()
        .rev()
        .copied()
        .find(|&e| scan.kind(e).names_model());
    let mut lines = Lines::open(&scan)?;
    let mut assembly = Assembly::new(&path, open_calls, sink);
    for &number in &conv.path {
        let role = conv.role(&scan, number);
        if Some(number) == model_entry {
            found.model = lines.model(&scan, number)?;
        }
        let read = lines.entry(&scan, number)?;
        if let Some(id) = throughs.get_mut(&number) {
            id.clone_from(&read.id);
        }
        let node = Node {
            line: read.line,
            id: read.id,
            // Only an entry carried whole keeps its parent (nothing else needs it).
            parent: read.parent.filter(|_| role == Role::Carried),
            entry: read.entry,
        };
        let through = |at: usize| {
            let at = u32::try_from(at).expect("an entry number");
            throughs.get(&at).cloned().unwrap_or_default()
        };
        match convert(&converter, node, role, through)? {
            Err(entry) => assembly.carry(entry),
            Ok(converted) => {
                if !assembly.push(converted)? {
                    return Ok(found);
                }
            }
        }
    }
    assembly.finish();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use handoff_live::session_files::{assert_alike_spilled_or_not, has_extension, session_files};
    use handoff_sdk::serde_json::{self, json, Value};

    use super::{read, stream_scan, OpenCalls};

    /// The events of `path`, with what an append finds, its ids spilled past `threshold`.
    fn read_at(path: &Path, threshold: usize) -> Result<String, String> {
        let scan = read::scan_with(path, true, threshold).map_err(|e| e.to_string())?;
        let mut events = Vec::new();
        let found = stream_scan(scan, OpenCalls::Answered, &mut |e| {
            events.push(e);
            true
        })
        .map_err(|e| e.to_string())?;
        Ok(format!(
            "{events:?}\n{:?} {:?} {:?}",
            found.leaf, found.model, found.ids
        ))
    }

    /// With every id digest in a temporary file, each pi session the tests, the live tier and
    /// the corpus hold reads as it does with them in memory: the events, the leaf, the model
    /// and the ids an append continues from.
    #[test]
    fn a_read_with_its_ids_in_files_agrees_with_one_in_memory() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        let files = session_files(&samples, "pi", |p| has_extension(p, "jsonl"));
        assert_alike_spilled_or_not(&files, &[0, 3], read_at);
        assert!(files.len() >= 10, "{} sessions", files.len());
    }

    /// A chain of `turns` tool turns (user, assistant with a call, its result, assistant), a
    /// compaction every 40th turn keeping the turn before it: its entries, root first.
    fn chain(turns: usize) -> Vec<Value> {
        let mut entries: Vec<Value> = Vec::new();
        let mut parent = Value::Null;
        let mut push = |entries: &mut Vec<Value>, mut entry: Value| {
            let id = format!("{:08x}", entries.len() + 1);
            entry["id"] = json!(id);
            entry["parentId"] = std::mem::replace(&mut parent, json!(id));
            entry["timestamp"] = json!("2026-11-30T00:41:45.857Z");
            entries.push(entry);
        };
        let usage = json!({"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0,
            "cacheWrite": 0, "total": 0}});
        let assistant = |content: Value, stop: &str| {
            json!({"type": "message", "message": {"role": "assistant", "content": content,
                "api": "openai-completions", "provider": "fake", "model": "fake-model",
                "usage": usage, "stopReason": stop, "timestamp": 1_795_999_305_825_u64}})
        };
        for turn in 0..turns {
            let call = format!("call_{turn}");
            push(
                &mut entries,
                json!({"type": "message", "message": {"role": "user",
                    "content": format!("question {turn}"), "timestamp": 1_795_999_305_825_u64}}),
            );
            let calls = json!([{"type": "toolCall", "id": call, "name": "bash",
                "arguments": {"command": "ls"}}]);
            push(&mut entries, assistant(calls, "toolUse"));
            push(
                &mut entries,
                json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call,
                    "toolName": "bash", "content": [{"type": "text", "text": "out"}],
                    "isError": false, "timestamp": 1_795_999_305_825_u64}}),
            );
            push(
                &mut entries,
                assistant(
                    json!([{"type": "text", "text": format!("answer {turn}")}]),
                    "stop",
                ),
            );
            if turn % 40 == 39 {
                let kept = entries[entries.len() - 8]["id"].clone();
                push(
                    &mut entries,
                    json!({"type": "compaction", "summary": format!("summary {turn}"),
                        "firstKeptEntryId": kept, "tokensBefore": 100}),
                );
            }
        }
        entries
    }

    fn write(dir: &Path, name: &str, entries: &[&Value]) -> PathBuf {
        let path = dir.join(name);
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"01a229e6-8fb3-71bc-b7eb-e70473137487","timestamp":"2026-11-30T00:41:45.653Z","cwd":"/home/dev/proj"}"#,
        );
        text.push('\n');
        for entry in entries {
            text.push_str(&serde_json::to_string(entry).unwrap());
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    /// pi finds a parent by its id wherever it is in the file: a session whose entries are in
    /// another order (children before parents, shuffled; only the leaf stays last) is the same
    /// conversation. Its second pass then reads back through the file (from the checkpoints:
    /// the chain is longer than two of their stretches), and its first resolves parents named
    /// before they appear; with its ids in files too.
    #[test]
    fn a_session_out_of_file_order_reads_as_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let entries = chain(2_100);
        assert!(entries.len() > 2 * 4096 + 100);
        let (leaf, rest) = entries.split_last().unwrap();
        let in_order: Vec<&Value> = entries.iter().collect();
        let mut reversed: Vec<&Value> = rest.iter().rev().collect();
        reversed.push(leaf);
        // A fixed permutation: every 7th entry, then every 7th from 1, …
        let mut shuffled: Vec<&Value> = (0..7)
            .flat_map(|start| rest.iter().skip(start).step_by(7))
            .collect();
        shuffled.push(leaf);
        let expected = read_at(&write(dir.path(), "in-order.jsonl", &in_order), usize::MAX)
            .expect("the session reads");
        assert!(expected.contains("Compaction"), "the chain has compactions");
        for (name, order) in [("reversed.jsonl", &reversed), ("shuffled.jsonl", &shuffled)] {
            let path = write(dir.path(), name, order);
            for threshold in [usize::MAX, 0] {
                let found = read_at(&path, threshold).expect("the session reads");
                // The ids in file order differ; the conversation does not.
                let events = |s: &str| s.split_once('\n').map(|(e, _)| e.to_owned());
                assert_eq!(events(&found), events(&expected), "{name} ({threshold})");
            }
        }
    }
}
