//! Claude Code records → canonical transcript.
//!
//! The file is streamed line by line; each record's content is converted to canonical parts as it
//! is parsed (strings are moved, not copied), so the file is held once, in canonical form.
//!
//! The conversation is the chain from the leaf (the last main-thread record) back to the root
//! through `parentUuid` (and through a compact boundary's `logicalParentUuid`, so the compacted
//! events stay for display). Streamed assistant records that share `message.id` are one turn, and
//! the results of its calls are gathered from its records' descendants: with parallel calls each
//! result hangs on its own `tool_use` record, so a plain walk from the leaf would miss all but the
//! last. Sidechain (subagent), meta, attachment, queue, snapshot and other bookkeeping records are
//! not conversation; a malformed line is an error naming its line and field.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::dialect::anthropic::{parse_block, ParsedBlock};
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Timestamp, Transcript};
use serde::Deserialize;

use super::write::{calls_are_the_tail, ChainState};
use crate::record::{default_origin, Extras};

#[derive(Deserialize)]
struct RawRecord {
    #[serde(rename = "type")]
    kind: Option<String>,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<String>,
    #[serde(rename = "logicalParentUuid")]
    logical_parent_uuid: Option<String>,
    #[serde(rename = "isSidechain")]
    is_sidechain: Option<bool>,
    #[serde(rename = "isMeta")]
    is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    is_compact_summary: Option<bool>,
    subtype: Option<String>,
    timestamp: Option<String>,
    message: Option<RawMessage>,
    cwd: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    handoff: Option<Extras>,
}

#[derive(Deserialize)]
struct RawMessage {
    id: Option<String>,
    model: Option<String>,
    content: Option<Value>,
}

enum Kind {
    User {
        blocks: Vec<ParsedBlock>,
        meta: bool,
        compact_summary: bool,
        has_results: bool,
    },
    Assistant {
        message_id: Option<String>,
        model: Option<String>,
        blocks: Vec<ParsedBlock>,
    },
    CompactBoundary {
        logical_parent: Option<String>,
    },
    Other,
}

/// One chain record, kept small: a long session has tens of thousands of them.
struct Node {
    uuid: String,
    parent: Option<String>,
    line: usize,
    sidechain: bool,
    kind: Kind,
    timestamp: Option<Timestamp>,
    /// Boxed: most records have none.
    extras: Option<Box<Extras>>,
}

impl Node {
    fn take_author(&mut self) -> Option<handoff_sdk::Author> {
        self.extras.as_mut().and_then(|e| e.author.take())
    }
}

/// A session read back, with what an append needs to continue its chain.
pub(crate) struct Session {
    pub transcript: Transcript,
    pub session_id: Option<String>,
    pub chain: ChainState,
}

fn malformed(
    path: &Path,
    line: usize,
    field: Option<&str>,
    message: impl Into<String>,
) -> PluginError {
    PluginError::malformed_line(path, line, field, message)
}

/// Reads the transcript of the session file at `path`.
pub(crate) fn read(path: &Path) -> Result<Transcript, PluginError> {
    read_session(path).map(|s| s.transcript)
}

/// Reads a session file and where its chain stands.
pub(crate) fn read_session(path: &Path) -> Result<Session, PluginError> {
    let loaded = load(path)?;
    let mut events = Vec::with_capacity(loaded.nodes.len());
    let chain = assemble(path, loaded.nodes, &mut |e| {
        events.push(e);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = loaded.cwd;
    Ok(Session {
        transcript,
        session_id: loaded.session_id,
        chain,
    })
}

/// Reads a session file event by event, handing each to `sink` as soon as it is assembled (its
/// content moves out of the parsed records then, so the session is never held twice).
pub(crate) fn read_each(
    path: &Path,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let loaded = load(path)?;
    assemble(path, loaded.nodes, sink).map(drop)
}

struct Loaded {
    nodes: Vec<Node>,
    cwd: Option<String>,
    session_id: Option<String>,
}

/// Streams the file into chain records.
fn load(path: &Path) -> Result<Loaded, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut nodes: Vec<Node> = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    let mut cwd: Option<String> = None;
    let mut session_id: Option<String> = None;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| PluginError::io(path, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let complete = buf.last() == Some(&b'\n');
        let text = if complete {
            &buf[..buf.len() - 1]
        } else {
            &buf[..]
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(malformed(path, line_no, None, "empty line"));
        }
        let raw: RawRecord = serde_json::from_slice(text).map_err(|e| {
            let torn = if complete {
                ""
            } else {
                " (the last line is torn: no final newline)"
            };
            malformed(
                path,
                line_no,
                diagnose(text).as_deref(),
                format!("{e}{torn}"),
            )
        })?;
        if let Some(node) = node_of(path, line_no, raw, &mut cwd, &mut session_id)? {
            nodes.push(node);
        }
    }
    if line_no == 0 {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the session file is empty".into(),
        });
    }
    Ok(Loaded {
        nodes,
        cwd,
        session_id,
    })
}

/// Hands assembled events on, remembering what an append needs to continue the chain.
struct Emitter<'s> {
    sink: &'s mut dyn FnMut(Event) -> bool,
    last_id: Option<String>,
    /// The calls of the last assistant turn (when they end it), while only results followed it.
    open_calls: Vec<String>,
    stopped: bool,
}

impl Emitter<'_> {
    fn emit(&mut self, event: Event) {
        if self.stopped {
            return;
        }
        self.last_id = Some(event.id.clone());
        match &event.body {
            Body::Assistant { content, .. } => {
                self.open_calls.clear();
                if calls_are_the_tail(
                    content
                        .iter()
                        .map(|p| matches!(p, AssistantPart::ToolCall(_))),
                ) {
                    self.open_calls
                        .extend(content.iter().filter_map(|p| match p {
                            AssistantPart::ToolCall(c) => Some(c.id.clone()),
                            _ => None,
                        }));
                }
            }
            Body::ToolResult { .. } => {}
            _ => self.open_calls.clear(),
        }
        self.stopped = !(self.sink)(event);
    }
}

/// Names the field at fault in a line that parsed as JSON but not as a record.
fn diagnose(text: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let obj = value.as_object()?;
    let strings = [
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "subtype",
        "timestamp",
        "cwd",
        "sessionId",
    ];
    for key in strings {
        if obj.get(key).is_some_and(|v| !v.is_string() && !v.is_null()) {
            return Some(key.to_owned());
        }
    }
    for key in ["isSidechain", "isMeta", "isCompactSummary"] {
        if obj
            .get(key)
            .is_some_and(|v| !v.is_boolean() && !v.is_null())
        {
            return Some(key.to_owned());
        }
    }
    if let Some(m) = obj.get("message") {
        let Some(m) = m.as_object() else {
            return Some("message".into());
        };
        for key in ["id", "model"] {
            if m.get(key).is_some_and(|v| !v.is_string() && !v.is_null()) {
                return Some(format!("message.{key}"));
            }
        }
    }
    if obj.get("handoff").is_some() {
        return Some("handoff".into());
    }
    None
}

fn node_of(
    path: &Path,
    line: usize,
    raw: RawRecord,
    cwd: &mut Option<String>,
    session_id: &mut Option<String>,
) -> Result<Option<Node>, PluginError> {
    let kind = raw.kind.as_deref().unwrap_or("");
    let conversational = matches!(kind, "user" | "assistant" | "system");
    let Some(uuid) = raw.uuid else {
        if conversational {
            return Err(malformed(
                path,
                line,
                Some("uuid"),
                format!("a {kind} record needs a uuid"),
            ));
        }
        return Ok(None); // queue-operation, last-prompt, summary, file-history-snapshot, mode, …
    };
    let sidechain = raw.is_sidechain.unwrap_or(false);
    if !sidechain && conversational {
        if cwd.is_none() {
            cwd.clone_from(&raw.cwd);
        }
        if session_id.is_none() {
            session_id.clone_from(&raw.session_id);
        }
    }
    let timestamp = match (&raw.timestamp, conversational) {
        (Some(t), _) => {
            Some(Timestamp::parse(t).map_err(|e| malformed(path, line, Some("timestamp"), e))?)
        }
        (None, true) => return Err(malformed(path, line, Some("timestamp"), "missing")),
        (None, false) => None,
    };
    let extras = raw.handoff.filter(|e| !e.is_empty()).map(Box::new);
    let node_kind = match kind {
        "user" | "assistant" => {
            let Some(message) = raw.message else {
                return Err(malformed(path, line, Some("message"), "missing"));
            };
            let model = message.model;
            let signature_model = match extras.as_ref().and_then(|e| e.signature_model.as_ref()) {
                Some(m) => m.clone(),
                None => model.clone(),
            };
            let blocks = match message.content {
                Some(Value::String(text)) => vec![ParsedBlock::Text(text)],
                Some(Value::Array(items)) => {
                    let mut blocks = Vec::with_capacity(items.len());
                    for (i, item) in items.into_iter().enumerate() {
                        blocks.push(parse_block(item, signature_model.as_deref()).map_err(
                            |e| {
                                let field = if e.field.is_empty() {
                                    format!("message.content[{i}]")
                                } else {
                                    format!("message.content[{i}].{}", e.field)
                                };
                                malformed(path, line, Some(&field), e.message)
                            },
                        )?);
                    }
                    blocks
                }
                Some(_) => {
                    return Err(malformed(
                        path,
                        line,
                        Some("message.content"),
                        "expected a string or an array",
                    ))
                }
                None => return Err(malformed(path, line, Some("message.content"), "missing")),
            };
            if kind == "user" {
                let has_results = blocks
                    .iter()
                    .any(|b| matches!(b, ParsedBlock::ToolResult { .. }));
                Kind::User {
                    blocks,
                    meta: raw.is_meta.unwrap_or(false),
                    compact_summary: raw.is_compact_summary.unwrap_or(false),
                    has_results,
                }
            } else {
                Kind::Assistant {
                    message_id: message.id,
                    model,
                    blocks,
                }
            }
        }
        "system" if raw.subtype.as_deref() == Some("compact_boundary") => Kind::CompactBoundary {
            logical_parent: raw.logical_parent_uuid,
        },
        _ => Kind::Other,
    };
    Ok(Some(Node {
        uuid,
        parent: raw.parent_uuid,
        line,
        sidechain,
        kind: node_kind,
        timestamp,
        extras,
    }))
}

/// Walks the chain and turns its records into events.
fn assemble(
    path: &Path,
    mut nodes: Vec<Node>,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<ChainState, PluginError> {
    let mut index: HashMap<String, usize> = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if let Some(first) = index.insert(n.uuid.clone(), i) {
            return Err(malformed(
                path,
                n.line,
                Some("uuid"),
                format!(
                    "uuid {} repeats the record on line {}",
                    n.uuid, nodes[first].line
                ),
            ));
        }
    }
    // The leaf: the last main-thread record; a file of sidechain records only is a subagent's.
    let Some(leaf) = nodes
        .iter()
        .rposition(|n| !n.sidechain)
        .or(nodes.len().checked_sub(1))
    else {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the file holds no conversation records".into(),
        });
    };
    let sidechain = nodes[leaf].sidechain;

    let mut on_path = vec![false; nodes.len()];
    let mut path_nodes = Vec::new();
    let mut cursor = Some(leaf);
    while let Some(i) = cursor {
        if on_path[i] {
            return Err(malformed(
                path,
                nodes[i].line,
                Some("parentUuid"),
                "the chain loops back on itself",
            ));
        }
        on_path[i] = true;
        path_nodes.push(i);
        let n = &nodes[i];
        cursor = match (&n.parent, &n.kind) {
            (Some(p), _) => Some(*index.get(p).ok_or_else(|| {
                malformed(
                    path,
                    n.line,
                    Some("parentUuid"),
                    format!("{p} is not a record of this file"),
                )
            })?),
            (None, Kind::CompactBoundary { logical_parent }) => {
                logical_parent.as_ref().and_then(|p| index.get(p).copied())
            }
            (None, _) => None,
        };
    }
    path_nodes.reverse();

    // Streamed assistant records by message id; result records by parent.
    let mut by_message: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut result_children: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.sidechain != sidechain {
            continue;
        }
        match &n.kind {
            Kind::Assistant {
                message_id: Some(id),
                ..
            } => by_message.entry(id.as_str()).or_default().push(i),
            Kind::User {
                has_results: true,
                meta: false,
                ..
            } => {
                if let Some(p) = n.parent.as_ref().and_then(|p| index.get(p)) {
                    result_children.entry(*p).or_default().push(i);
                }
            }
            _ => {}
        }
    }
    // Streamed turns of several records, and which turn each of their records belongs to.
    let groups: Vec<Vec<usize>> = by_message.into_values().filter(|g| g.len() > 1).collect();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (n, g) in groups.iter().enumerate() {
        for &r in g {
            group_of.insert(r, n);
        }
    }

    let mut consumed = vec![false; nodes.len()];
    let mut out = Emitter {
        sink,
        last_id: None,
        open_calls: Vec::new(),
        stopped: false,
    };
    let mut chain = ChainState {
        prev: Some(nodes[leaf].uuid.clone()),
        ..ChainState::default()
    };
    let mut boundary: Option<usize> = None;
    for &i in &path_nodes {
        if out.stopped {
            return Ok(chain);
        }
        if consumed[i] {
            continue;
        }
        match nodes[i].kind {
            Kind::Assistant { .. } => {
                let single = [i];
                let group = group_of.get(&i).map_or(&single[..], |&n| &groups[n][..]);
                for &g in group {
                    consumed[g] = true;
                }
                out.emit(assistant_event(path, &mut nodes, group, &mut chain)?);
                // Gather the results hanging below the turn's records, in file order.
                let mut results = Vec::new();
                let mut queue: Vec<usize> = group.to_vec();
                while let Some(g) = queue.pop() {
                    for &c in result_children.get(&g).map(Vec::as_slice).unwrap_or(&[]) {
                        if !consumed[c] {
                            consumed[c] = true;
                            results.push(c);
                            queue.push(c);
                        }
                    }
                }
                results.sort_unstable();
                for r in results {
                    user_events(path, &mut nodes[r], &mut out)?;
                }
            }
            Kind::User { meta: true, .. } => consumed[i] = true,
            Kind::User {
                compact_summary: true,
                ..
            } => {
                consumed[i] = true;
                let Some(replaces) = out.last_id.clone() else {
                    return Err(malformed(
                        path,
                        nodes[i].line,
                        Some("isCompactSummary"),
                        "a compaction with nothing before it",
                    ));
                };
                let (id, timestamp) = match boundary.take() {
                    Some(b) => (nodes[b].uuid.clone(), nodes[b].timestamp),
                    None => (nodes[i].uuid.clone(), nodes[i].timestamp),
                };
                let node = &mut nodes[i];
                let Kind::User { blocks, .. } = &mut node.kind else {
                    unreachable!()
                };
                let mut summary = String::new();
                for (k, b) in std::mem::take(blocks).into_iter().enumerate() {
                    match b {
                        ParsedBlock::Text(t) if summary.is_empty() => summary = t,
                        ParsedBlock::Text(t) => {
                            summary.push('\n');
                            summary.push_str(&t);
                        }
                        _ => {
                            return Err(malformed(
                                path,
                                node.line,
                                Some(&format!("message.content[{k}]")),
                                "a compact summary holds text only",
                            ))
                        }
                    }
                }
                let mut event = Event::new(
                    id,
                    timestamp.expect("user records have timestamps"),
                    Body::Compaction {
                        summary,
                        replaces_through: replaces,
                    },
                );
                event.author = node.take_author();
                out.emit(event);
            }
            Kind::User { .. } => {
                consumed[i] = true;
                user_events(path, &mut nodes[i], &mut out)?;
            }
            Kind::CompactBoundary { .. } => {
                consumed[i] = true;
                boundary = Some(i);
            }
            Kind::Other => consumed[i] = true,
        }
    }
    // The calls still open at the end: those of the last assistant turn, if only results follow.
    chain.open_calls = out.open_calls.into_iter().collect();
    Ok(chain)
}

fn assistant_event(
    path: &Path,
    nodes: &mut [Node],
    group: &[usize],
    chain: &mut ChainState,
) -> Result<Event, PluginError> {
    let first = group[0];
    let mut content = Vec::new();
    for &g in group {
        let node = &mut nodes[g];
        let Kind::Assistant { blocks, .. } = &mut node.kind else {
            unreachable!("groups hold assistant records")
        };
        for (k, block) in std::mem::take(blocks).into_iter().enumerate() {
            let part = block.into_assistant_part().map_err(|b| {
                malformed(
                    path,
                    node.line,
                    Some(&format!("message.content[{k}]")),
                    unsupported(&b),
                )
            })?;
            if let AssistantPart::ToolCall(call) = &part {
                chain
                    .call_records
                    .insert(call.id.clone(), node.uuid.clone());
            }
            content.push(part);
        }
    }
    let node = &mut nodes[first];
    let Kind::Assistant { model, .. } = &node.kind else {
        unreachable!()
    };
    let origin = match node.extras.as_mut().and_then(|e| e.origin.take()) {
        Some(origin) => origin,
        None => Some(default_origin(model.as_deref())),
    };
    let mut event = Event::new(
        node.uuid.clone(),
        node.timestamp.expect("assistant records have timestamps"),
        Body::Assistant { content, origin },
    );
    event.author = node.take_author();
    Ok(event)
}

fn unsupported(b: &ParsedBlock) -> String {
    match b {
        ParsedBlock::Other { kind, .. } => format!("a {kind:?} block has no canonical form"),
        ParsedBlock::ToolResult { .. } => "a tool_result block in an assistant record".into(),
        ParsedBlock::Image(_) => "an image block in an assistant record".into(),
        ParsedBlock::ToolCall(_) => "a tool_use block in a user record".into(),
        ParsedBlock::Thinking(_) => "a thinking block in a user record".into(),
        ParsedBlock::Text(_) => "a text block where none can be".into(),
    }
}

/// The events of one user record: each `tool_result` block its own event, each run of other
/// blocks one user turn.
fn user_events(path: &Path, node: &mut Node, out: &mut Emitter<'_>) -> Result<(), PluginError> {
    let Kind::User { blocks, .. } = &mut node.kind else {
        unreachable!("only user records hold results")
    };
    let timestamp = node.timestamp.expect("user records have timestamps");
    let mut bodies: Vec<Body> = Vec::new();
    let mut run: Vec<Part> = Vec::new();
    for (k, block) in std::mem::take(blocks).into_iter().enumerate() {
        match block {
            ParsedBlock::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                if !run.is_empty() {
                    bodies.push(Body::User {
                        content: std::mem::take(&mut run),
                    });
                }
                bodies.push(Body::ToolResult {
                    call_id,
                    content,
                    is_error,
                });
            }
            other => run.push(other.into_part().map_err(|b| {
                malformed(
                    path,
                    node.line,
                    Some(&format!("message.content[{k}]")),
                    unsupported(&b),
                )
            })?),
        }
    }
    if !run.is_empty() || bodies.is_empty() {
        bodies.push(Body::User { content: run });
    }
    let several = bodies.len() > 1;
    for (k, body) in bodies.into_iter().enumerate() {
        let id = if several && k > 0 {
            format!("{}:{k}", node.uuid)
        } else {
            node.uuid.clone()
        };
        let mut event = Event::new(id, timestamp, body);
        event.author = node.extras.as_ref().and_then(|e| e.author.clone());
        out.emit(event);
    }
    Ok(())
}
