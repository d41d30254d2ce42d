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

use foldhash::{HashMap, HashMapExt};
use handoff_sdk::serde_json::Value;
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Timestamp};

use super::context::{conversation, Role};
use super::convert::{carried, pi_map, Converted, Converter, Node};
use super::read::{self, malformed, Lines, Scan, Slot};
use super::records::Entry;

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
    /// The model pi resumes with: the last `model_change` or assistant message on the path.
    pub model: Option<(String, String)>,
    /// Every entry id in the file (only when asked for).
    pub ids: Vec<String>,
}

fn found(scan: &Scan, path: &[usize], want_ids: bool) -> Found {
    let slots = &scan.slots;
    Found {
        id: scan.header.id.clone(),
        cwd: scan.header.cwd.clone(),
        leaf: slots
            .iter()
            .rev()
            .find(|s| !s.is_header)
            .map(|s| s.id.to_string()),
        model: path
            .iter()
            .rev()
            .find_map(|&i| slots[i].model)
            .map(|m| scan.models[m as usize].clone()),
        ids: if want_ids {
            slots.iter().map(|s| s.id.to_string()).collect()
        } else {
            Vec::new()
        },
    }
}

/// Puts converted events in order: checks them, carries what comes between them, and hands
/// each on once the next one is known (the last gets what follows it).
struct Assembly<'a> {
    file: &'a Path,
    /// Call id → (tool name, answered yet).
    calls: HashMap<String, (String, bool)>,
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
            calls: HashMap::new(),
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
            let Some((_, answered)) = self.calls.get_mut(&call_id) else {
                continue;
            };
            if *answered {
                continue;
            }
            *answered = true;
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
        let fail = |field: &str, message: String| malformed(self.file, line, Some(field), message);
        match &event.body {
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    let AssistantPart::ToolCall(call) = part else {
                        continue;
                    };
                    let entry = (call.name.clone(), false);
                    if self.calls.insert(call.id.clone(), entry).is_some() {
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
                let (name, answered) = self.calls.get_mut(call_id).ok_or_else(|| {
                    fail(
                        "message.toolCallId",
                        format!(
                            "{call_id:?} answers no tool call pi sends on the conversation path \
                             (none, or one of an assistant message that stopped with error/aborted)"
                        ),
                    )
                })?;
                if *answered {
                    return Err(fail(
                        "message.toolCallId",
                        format!("tool call {call_id:?} already has a result"),
                    ));
                }
                *answered = true;
                if let Some(tool_name) = tool_name.filter(|t| t != name) {
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

/// The path entry of `slot`; its parent only when it is carried whole (nothing else needs it).
fn node(slot: &Slot, entry: Entry, role: Role) -> Node {
    Node {
        line: slot.line,
        id: slot.id.to_string(),
        parent: (role == Role::Carried)
            .then(|| slot.parent.as_deref().map(str::to_owned))
            .flatten(),
        entry,
    }
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
/// it returns `false`.
pub fn stream(
    path: &Path,
    want_ids: bool,
    open_calls: OpenCalls,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Found, PluginError> {
    let scan = read::scan(path)?;
    let conv = conversation(&scan)?;
    let found = found(&scan, &conv.path, want_ids);
    let converter = Converter {
        file: path,
        version: scan.header.version,
    };
    let mut lines = Lines::open(path, scan.header.version)?;
    let mut assembly = Assembly::new(path, open_calls, sink);
    for (&index, &role) in conv.path.iter().zip(&conv.roles) {
        let slot = &scan.slots[index];
        let node = node(slot, lines.entry(slot)?, role);
        let through = |at: usize| scan.slots[conv.path[at]].id.to_string();
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
