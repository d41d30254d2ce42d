//! Claude Code records → canonical transcript.
//!
//! The file is streamed line by line. Each line is decoded typed and borrowed
//! ([`super::record_in`]): content blocks become canonical blocks as they are parsed, members
//! nobody reads are skipped unbuilt, and the members every record repeats (`cwd`, `sessionId`)
//! are kept once; a line the typed path does not cover is read again with `Value` content and
//! `parse_block`, which decides and names any fault. So the file is held once, in canonical form,
//! beside small chain nodes (UUIDs as 128 bits), and events are assembled by moving their content
//! out of the nodes.
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
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::dialect::anthropic::{parse_block, ParsedBlock};
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Timestamp, Transcript};

use super::record_in::{FastContent, Record, Text};
use super::write::{calls_are_the_tail, ChainState};
use crate::record::{default_origin, Extras};

/// A user record's content, in its events' form already where that is plain (most records), so
/// assembling moves it and frees nothing.
#[cfg_attr(test, derive(Debug, PartialEq))]
enum UserContent {
    /// Text and image blocks only (possibly none): one user event.
    Parts(Vec<Part>),
    /// One `tool_result` block: one result event.
    Result {
        call_id: String,
        content: Vec<Part>,
        is_error: bool,
    },
    /// Anything else (several results, results and text, blocks with no user form, a compact
    /// summary), split when assembled.
    Blocks(Vec<ParsedBlock>),
}

impl Default for UserContent {
    fn default() -> Self {
        UserContent::Parts(Vec::new())
    }
}

impl UserContent {
    fn new(mut blocks: Vec<ParsedBlock>, compact_summary: bool) -> Self {
        if compact_summary {
            return UserContent::Blocks(blocks);
        }
        if blocks.len() == 1 {
            match blocks.pop() {
                Some(ParsedBlock::ToolResult {
                    call_id,
                    content,
                    is_error,
                }) => {
                    return UserContent::Result {
                        call_id,
                        content,
                        is_error,
                    }
                }
                Some(other) => blocks.push(other),
                None => {}
            }
        }
        if blocks
            .iter()
            .all(|b| matches!(b, ParsedBlock::Text(_) | ParsedBlock::Image(_)))
        {
            let mut parts = Vec::with_capacity(blocks.len());
            parts.extend(blocks.into_iter().filter_map(|b| b.into_part().ok()));
            return UserContent::Parts(parts);
        }
        UserContent::Blocks(blocks)
    }

    /// The content as blocks again, for the general assembly.
    fn into_blocks(self) -> Vec<ParsedBlock> {
        match self {
            UserContent::Parts(parts) => parts
                .into_iter()
                .map(|p| match p {
                    Part::Text { text } => ParsedBlock::Text(text),
                    image => ParsedBlock::Image(image),
                })
                .collect(),
            UserContent::Result {
                call_id,
                content,
                is_error,
            } => vec![ParsedBlock::ToolResult {
                call_id,
                content,
                is_error,
            }],
            UserContent::Blocks(blocks) => blocks,
        }
    }
}

#[cfg_attr(test, derive(Debug, PartialEq))]
enum Kind {
    User {
        content: UserContent,
        meta: bool,
        compact_summary: bool,
        has_results: bool,
    },
    Assistant {
        /// An index into [`Loaded::models`]: a session names a model or two, on every record.
        model: Option<u32>,
        blocks: Vec<ParsedBlock>,
    },
    CompactBoundary {
        logical_parent: Option<RecordId>,
    },
    Other,
}

/// A record's `uuid` (or a `parentUuid`): Claude Code's are UUIDs, kept as their 128 bits (no
/// allocation, cheap to hash and compare); anything else as its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum RecordId {
    /// The 128 bits as two halves (a `u128` would align every record to 16 bytes).
    Uuid([u64; 2]),
    Text(Box<str>),
}

impl RecordId {
    fn new(text: &str) -> Self {
        parse_uuid(text).map_or_else(
            || RecordId::Text(text.into()),
            |bits| RecordId::Uuid([(bits >> 64) as u64, bits as u64]),
        )
    }
}

impl RecordId {
    /// The id as text (a UUID formatted directly, without the formatting machinery).
    fn to_text(&self) -> String {
        match self {
            RecordId::Uuid(halves) => {
                let text = uuid_text(halves);
                std::str::from_utf8(&text).map_or_else(|_| String::new(), str::to_owned)
            }
            RecordId::Text(text) => text.to_string(),
        }
    }
}

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Where the 32 hex digits of a hyphenated UUID are.
const UUID_DIGITS: [usize; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29,
    30, 31, 32, 33, 34, 35,
];

/// Lowercase hex digit values; 0xff for anything else.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The lowercase, hyphenated text of a UUID.
fn uuid_text([high, low]: &[u64; 2]) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = (u128::from(*high) << 64) | u128::from(*low);
    let mut text = [b'-'; 36];
    for (n, &at) in UUID_DIGITS.iter().enumerate() {
        text[at] = HEX[((bits >> (124 - 4 * n)) & 0xf) as usize];
    }
    text
}

/// The bits of a UUID in the one form [`uuid_text`] gives back: lowercase, hyphenated.
fn parse_uuid(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 || [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
        return None;
    }
    let mut bits = 0u128;
    for &at in &UUID_DIGITS {
        let digit = HEX_VALUE[bytes[at] as usize];
        if digit > 15 {
            return None;
        }
        bits = (bits << 4) | u128::from(digit);
    }
    Some(bits)
}

/// A record as `node_of` reads it: the node, and what only linking needs (kept apart from the
/// nodes, so it can be freed before the events are made).
#[cfg_attr(test, derive(Debug, PartialEq))]
struct ReadRecord {
    node: Node,
    parent: Option<RecordId>,
    message_id: Option<Box<str>>,
}

/// Assistant records that share a message id (streamed parts of one turn), gathered while
/// loading: an id's first record, and its group once a second record shares it.
#[derive(Default)]
struct MessageGroups {
    first: FastMap<Box<str>, (u32, u32)>,
    groups: Vec<Vec<u32>>,
}

impl MessageGroups {
    fn add(&mut self, id: Box<str>, record: u32) {
        let (first, group) = self.first.entry(id).or_insert((record, u32::MAX));
        if *first == record {
            return;
        }
        if *group == u32::MAX {
            *group = self.groups.len() as u32;
            self.groups.push(vec![*first]);
        }
        self.groups[*group as usize].push(record);
    }
}

/// The chain records of a file, as the chain walk takes them.
struct Records {
    nodes: Vec<Node>,
    /// Each node's `parentUuid`.
    parents: Vec<Option<RecordId>>,
    /// Streamed assistant turns: records sharing a message id (of either thread).
    groups: Vec<Vec<u32>>,
}

/// One chain record, kept small: a long session has tens of thousands of them.
#[cfg_attr(test, derive(Debug, PartialEq))]
struct Node {
    uuid: RecordId,
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
    let loaded = load(path)?;
    let mut events = Vec::with_capacity(loaded.records.nodes.len());
    assemble(path, loaded.records, &loaded.models, false, &mut |e| {
        events.push(e);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = loaded.cwd;
    Ok(transcript)
}

/// Reads a session file and where its chain stands.
pub(crate) fn read_session(path: &Path) -> Result<Session, PluginError> {
    let loaded = load(path)?;
    let mut events = Vec::with_capacity(loaded.records.nodes.len());
    let chain = assemble(path, loaded.records, &loaded.models, true, &mut |e| {
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
    assemble(path, loaded.records, &loaded.models, false, sink).map(drop)
}

struct Loaded {
    records: Records,
    messages: MessageGroups,
    cwd: Option<String>,
    session_id: Option<String>,
    /// The distinct `message.model`s of assistant records.
    models: Vec<Box<str>>,
    model_index: FastMap<Box<str>, u32>,
}

/// Streams the file into chain records.
fn load(path: &Path) -> Result<Loaded, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut loaded = Loaded {
        records: Records {
            nodes: Vec::new(),
            parents: Vec::new(),
            groups: Vec::new(),
        },
        messages: MessageGroups::default(),
        cwd: None,
        session_id: None,
        models: Vec::new(),
        model_index: FastMap::default(),
    };
    let mut buf = Vec::new();
    let mut line_no = 0;
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
        let node = match typed_record(text) {
            Some(record) => node_of(path, line_no, record, &mut loaded)?,
            // Not a record the typed path decodes (or not one at all): the general path decides,
            // and names the field at fault.
            None => {
                let record: Record<'_, Value> = serde_json::from_slice(text).map_err(|e| {
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
                node_of(path, line_no, record, &mut loaded)?
            }
        };
        if let Some(record) = node {
            let records = &mut loaded.records;
            if let Some(id) = record.message_id {
                loaded.messages.add(id, records.nodes.len() as u32);
            }
            records.parents.push(record.parent);
            records.nodes.push(record.node);
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
    // The message ids are done with: freed now, their memory is reused by the events.
    loaded.records.groups = std::mem::take(&mut loaded.messages).groups;
    Ok(loaded)
}

/// The line decoded on the typed path, if it can be (see [`super::record_in`]).
fn typed_record(text: &[u8]) -> Option<Record<'_, FastContent>> {
    // UTF-8 is checked once for the line, not once per string.
    let text = std::str::from_utf8(text).ok()?;
    serde_json::from_str(text).ok()
}

/// Hands assembled events on, remembering what an append needs to continue the chain.
struct Emitter<'s> {
    sink: &'s mut dyn FnMut(Event) -> bool,
    /// The id of the last event handed on (its buffer reused), once `emitted`.
    last_id: String,
    emitted: bool,
    /// The calls of the last assistant turn (when they end it), while only results followed it;
    /// kept only when `track_calls` (an append needs them, a plain read does not).
    open_calls: Vec<String>,
    track_calls: bool,
    stopped: bool,
}

impl Emitter<'_> {
    fn emit(&mut self, event: Event) {
        if self.stopped {
            return;
        }
        self.last_id.clear();
        self.last_id.push_str(&event.id);
        self.emitted = true;
        if !self.track_calls {
            self.stopped = !(self.sink)(event);
            return;
        }
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

/// Message content as either path decodes it.
trait Content {
    /// The canonical blocks; thinking signatures name `signature_model`.
    fn into_blocks(
        self,
        signature_model: Option<&str>,
        path: &Path,
        line: usize,
    ) -> Result<Vec<ParsedBlock>, PluginError>;
}

impl Content for FastContent {
    fn into_blocks(
        self,
        signature_model: Option<&str>,
        _: &Path,
        _: usize,
    ) -> Result<Vec<ParsedBlock>, PluginError> {
        let mut blocks = self.0;
        if let Some(model) = signature_model {
            for block in &mut blocks {
                if let ParsedBlock::Thinking(t) = block {
                    if let Some(sig) = &mut t.signature {
                        sig.model = Some(model.to_owned());
                    }
                }
            }
        }
        Ok(blocks)
    }
}

impl Content for Value {
    fn into_blocks(
        self,
        signature_model: Option<&str>,
        path: &Path,
        line: usize,
    ) -> Result<Vec<ParsedBlock>, PluginError> {
        match self {
            Value::String(text) => Ok(vec![ParsedBlock::Text(text)]),
            Value::Array(items) => {
                let mut blocks = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    blocks.push(parse_block(item, signature_model).map_err(|e| {
                        let field = if e.field.is_empty() {
                            format!("message.content[{i}]")
                        } else {
                            format!("message.content[{i}].{}", e.field)
                        };
                        malformed(path, line, Some(&field), e.message)
                    })?);
                }
                Ok(blocks)
            }
            _ => Err(malformed(
                path,
                line,
                Some("message.content"),
                "expected a string or an array",
            )),
        }
    }
}

fn boxed(text: Option<Text<'_>>) -> Option<Box<str>> {
    text.map(|t| t.0.into_owned().into_boxed_str())
}

fn record_id(text: Option<Text<'_>>) -> Option<RecordId> {
    text.map(|t| RecordId::new(t.as_str()))
}

fn node_of<C: Content>(
    path: &Path,
    line: usize,
    raw: Record<'_, C>,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    let kind = raw.kind.as_ref().map_or("", Text::as_str);
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
        // Every record repeats them; only the first is kept.
        if loaded.cwd.is_none() {
            loaded.cwd = raw.cwd.map(|t| t.0.into_owned());
        }
        if loaded.session_id.is_none() {
            loaded.session_id = raw.session_id.map(|t| t.0.into_owned());
        }
    }
    let timestamp = match (&raw.timestamp, conversational) {
        (Some(t), _) => Some(
            Timestamp::parse(t.as_str())
                .map_err(|e| malformed(path, line, Some("timestamp"), e))?,
        ),
        (None, true) => return Err(malformed(path, line, Some("timestamp"), "missing")),
        (None, false) => None,
    };
    let extras = raw.handoff.filter(|e| !e.is_empty()).map(Box::new);
    let mut message_id = None;
    let node_kind = match kind {
        "user" | "assistant" => {
            let Some(message) = raw.message else {
                return Err(malformed(path, line, Some("message"), "missing"));
            };
            message_id = message.id;
            let model = message.model;
            let signature_model = match extras.as_ref().and_then(|e| e.signature_model.as_ref()) {
                Some(m) => m.as_deref(),
                None => model.as_ref().map(Text::as_str),
            };
            let Some(content) = message.content else {
                return Err(malformed(path, line, Some("message.content"), "missing"));
            };
            let blocks = content.into_blocks(signature_model, path, line)?;
            if kind == "user" {
                let has_results = blocks
                    .iter()
                    .any(|b| matches!(b, ParsedBlock::ToolResult { .. }));
                let compact_summary = raw.is_compact_summary.unwrap_or(false);
                Kind::User {
                    content: UserContent::new(blocks, compact_summary),
                    meta: raw.is_meta.unwrap_or(false),
                    compact_summary,
                    has_results,
                }
            } else {
                let model = model.map(|m| intern(loaded, m.as_str()));
                Kind::Assistant { model, blocks }
            }
        }
        "system" if raw.subtype.as_ref().map(Text::as_str) == Some("compact_boundary") => {
            Kind::CompactBoundary {
                logical_parent: record_id(raw.logical_parent_uuid),
            }
        }
        _ => Kind::Other,
    };
    Ok(Some(ReadRecord {
        node: Node {
            uuid: RecordId::new(uuid.as_str()),
            line,
            sidechain,
            kind: node_kind,
            timestamp,
            extras,
        },
        parent: record_id(raw.parent_uuid),
        message_id: (kind == "assistant").then(|| boxed(message_id)).flatten(),
    }))
}

/// The index of `model` in `loaded.models`, added if new.
fn intern(loaded: &mut Loaded, model: &str) -> u32 {
    if let Some(&i) = loaded.model_index.get(model) {
        return i;
    }
    let i = loaded.models.len() as u32;
    loaded.models.push(model.into());
    loaded.model_index.insert(model.into(), i);
    i
}

/// FxHash-style hashing for the reader's maps, keyed by one file's record uuids and message ids:
/// SipHash's resistance to chosen keys buys little for a local file and was a fifth of the chain
/// walk. Each map still gets its own random seed.
#[derive(Clone, Copy)]
struct FastHasher(u64);

impl Default for FastHasher {
    fn default() -> Self {
        thread_local! {
            static SEED: u64 = {
                use std::hash::BuildHasher;
                std::collections::hash_map::RandomState::new().hash_one(0u8)
            };
        }
        FastHasher(SEED.with(|s| *s))
    }
}

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.add(u64::from_le_bytes(word));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Where a record's chain goes next.
#[derive(Clone, Copy)]
enum Link {
    /// Nowhere: the root (or a compact boundary whose logical parent is not in the file).
    Root,
    /// To the record at this index.
    To(u32),
    /// To a `parentUuid` that is not in the file (an error if the conversation passes here).
    Missing,
}

/// The file's records linked by index: the uuid strings are looked up once, here.
struct Links {
    /// Each record's next step towards the root.
    up: Vec<Link>,
    /// Streamed assistant turns of several records (by message id), in file order.
    groups: Vec<Vec<u32>>,
    /// Each record's index in `groups`, or `u32::MAX`.
    group_of: Vec<u32>,
}

/// Links the records of the conversation's thread (`sidechain` or not).
fn link(path: &Path, records: &mut Records, sidechain: bool) -> Result<Links, PluginError> {
    let up = link_up(path, &records.nodes, &records.parents)?;
    let nodes = &records.nodes;
    let mut groups = std::mem::take(&mut records.groups);
    groups.retain_mut(|g| {
        g.retain(|&r| nodes[r as usize].sidechain == sidechain);
        g.len() > 1
    });
    let mut group_of = vec![u32::MAX; nodes.len()];
    for (n, g) in groups.iter().enumerate() {
        for &r in g {
            group_of[r as usize] = n as u32;
        }
    }
    Ok(Links {
        up,
        groups,
        group_of,
    })
}

/// Each record's next step towards the root; a repeated uuid is an error.
fn link_up(
    path: &Path,
    nodes: &[Node],
    parents: &[Option<RecordId>],
) -> Result<Vec<Link>, PluginError> {
    let mut index: FastMap<&RecordId, u32> = FastMap::default();
    index.reserve(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if let Some(first) = index.insert(&n.uuid, i as u32) {
            return Err(malformed(
                path,
                n.line,
                Some("uuid"),
                format!(
                    "uuid {} repeats the record on line {}",
                    n.uuid, nodes[first as usize].line
                ),
            ));
        }
    }
    let up = nodes
        .iter()
        .zip(parents)
        .map(|(n, parent)| match (parent, &n.kind) {
            (Some(p), _) => index.get(p).map_or(Link::Missing, |&i| Link::To(i)),
            (None, Kind::CompactBoundary { logical_parent }) => logical_parent
                .as_ref()
                .and_then(|p| index.get(p))
                .map_or(Link::Root, |&i| Link::To(i)),
            (None, _) => Link::Root,
        })
        .collect();
    Ok(up)
}

/// The tool-result records of the conversation's thread, by parent: every parent's children in
/// one array, in file order (no map, no list per parent).
struct ResultChildren {
    /// `children[start[p]..start[p + 1]]` are record `p`'s.
    start: Vec<u32>,
    children: Vec<u32>,
}

impl ResultChildren {
    fn new(nodes: &[Node], up: &[Link], sidechain: bool) -> Self {
        let parent_of = |(i, n): (usize, &Node)| match (&n.kind, up[i]) {
            (
                Kind::User {
                    has_results: true,
                    meta: false,
                    ..
                },
                Link::To(p),
            ) if n.sidechain == sidechain => Some(p as usize),
            _ => None,
        };
        let mut start = vec![0u32; nodes.len() + 1];
        for p in nodes.iter().enumerate().filter_map(parent_of) {
            start[p + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut next = start.clone();
        let mut children = vec![0u32; start[nodes.len()] as usize];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = parent_of((i, n)) {
                children[next[p] as usize] = i as u32;
                next[p] += 1;
            }
        }
        ResultChildren { start, children }
    }

    fn of(&self, parent: u32) -> &[u32] {
        let p = parent as usize;
        &self.children[self.start[p] as usize..self.start[p + 1] as usize]
    }
}

/// Walks the chain and turns its records into events; the chain state (call records, open calls)
/// is gathered only when `want_chain`.
fn assemble(
    path: &Path,
    mut records: Records,
    models: &[Box<str>],
    want_chain: bool,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<ChainState, PluginError> {
    let nodes = &records.nodes;
    // The leaf: the last main-thread record; a file of sidechain records only is a subagent's.
    // (Checked before the links, as a uuid error needs records, and there are some.)
    let leaf = nodes
        .iter()
        .rposition(|n| !n.sidechain)
        .or(nodes.len().checked_sub(1));
    let sidechain = leaf.is_some_and(|l| nodes[l].sidechain);
    let Links {
        up,
        groups,
        group_of,
    } = link(path, &mut records, sidechain)?;
    let nodes = &records.nodes;
    let Some(leaf) = leaf else {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the file holds no conversation records".into(),
        });
    };

    let mut on_path = vec![false; nodes.len()];
    let mut path_nodes: Vec<u32> = Vec::new();
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
        path_nodes.push(i as u32);
        cursor = match up[i] {
            Link::To(p) => Some(p as usize),
            Link::Root => None,
            Link::Missing => {
                let n = &nodes[i];
                return Err(malformed(
                    path,
                    n.line,
                    Some("parentUuid"),
                    format!(
                        "{} is not a record of this file",
                        records.parents[i]
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                ));
            }
        };
    }
    path_nodes.reverse();
    let result_children = ResultChildren::new(nodes, &up, sidechain);
    // What only linking needed goes before the events are made.
    drop((up, on_path));
    let Records {
        mut nodes, parents, ..
    } = records;
    drop(parents);

    let mut consumed = vec![false; nodes.len()];
    let mut out = Emitter {
        sink,
        last_id: String::new(),
        emitted: false,
        open_calls: Vec::new(),
        track_calls: want_chain,
        stopped: false,
    };
    let mut chain = ChainState {
        prev: Some(nodes[leaf].uuid.to_text()),
        ..ChainState::default()
    };
    let mut boundary: Option<usize> = None;
    for i in path_nodes.into_iter().map(|i| i as usize) {
        if out.stopped {
            return Ok(chain);
        }
        if consumed[i] {
            continue;
        }
        match nodes[i].kind {
            Kind::Assistant { .. } => {
                let single = [i as u32];
                let group = match group_of[i] {
                    u32::MAX => &single[..],
                    n => &groups[n as usize][..],
                };
                for &g in group {
                    consumed[g as usize] = true;
                }
                let calls = want_chain.then_some(&mut chain);
                out.emit(assistant_event(path, &mut nodes, models, group, calls)?);
                // Gather the results hanging below the turn's records, in file order.
                let mut results = Vec::new();
                let mut queue: Vec<u32> = group.to_vec();
                while let Some(g) = queue.pop() {
                    for &c in result_children.of(g) {
                        if !consumed[c as usize] {
                            consumed[c as usize] = true;
                            results.push(c);
                            queue.push(c);
                        }
                    }
                }
                results.sort_unstable();
                for r in results {
                    user_events(path, &mut nodes[r as usize], &mut out)?;
                }
            }
            Kind::User { meta: true, .. } => consumed[i] = true,
            Kind::User {
                compact_summary: true,
                ..
            } => {
                consumed[i] = true;
                let Some(replaces) = out.emitted.then(|| out.last_id.clone()) else {
                    return Err(malformed(
                        path,
                        nodes[i].line,
                        Some("isCompactSummary"),
                        "a compaction with nothing before it",
                    ));
                };
                let (id, timestamp) = match boundary.take() {
                    Some(b) => (take_uuid(&mut nodes[b]), nodes[b].timestamp),
                    None => (take_uuid(&mut nodes[i]), nodes[i].timestamp),
                };
                let node = &mut nodes[i];
                let Kind::User { content, .. } = &mut node.kind else {
                    unreachable!()
                };
                let mut summary = String::new();
                for (k, b) in std::mem::take(content)
                    .into_blocks()
                    .into_iter()
                    .enumerate()
                {
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

/// The uuid of a record whose event is being made, as the event's id (nothing reads it
/// afterwards, so a text id is moved, not copied).
fn take_uuid(node: &mut Node) -> String {
    match &mut node.uuid {
        RecordId::Uuid(_) => node.uuid.to_text(),
        RecordId::Text(text) => std::mem::take(text).into_string(),
    }
}

/// The event of an assistant turn's records; with `chain`, where each of its calls is recorded.
fn assistant_event(
    path: &Path,
    nodes: &mut [Node],
    models: &[Box<str>],
    group: &[u32],
    mut chain: Option<&mut ChainState>,
) -> Result<Event, PluginError> {
    let first = group[0] as usize;
    let mut content = Vec::new();
    for &g in group {
        let node = &mut nodes[g as usize];
        let Kind::Assistant { blocks, .. } = &mut node.kind else {
            unreachable!("groups hold assistant records")
        };
        let unsupported_block = blocks.iter().position(|b| {
            !matches!(
                b,
                ParsedBlock::Text(_) | ParsedBlock::Thinking(_) | ParsedBlock::ToolCall(_)
            )
        });
        if let Some(k) = unsupported_block {
            return Err(malformed(
                path,
                node.line,
                Some(&format!("message.content[{k}]")),
                unsupported(&blocks[k]),
            ));
        }
        // Every block converts; collected into an empty `content`, the parts reuse the blocks'
        // allocation (same size and alignment), so a one-record turn allocates nothing here.
        let start = content.len();
        let parts = std::mem::take(blocks)
            .into_iter()
            .filter_map(|b| b.into_assistant_part().ok());
        if content.is_empty() {
            content = parts.collect();
        } else {
            content.extend(parts);
        }
        if let Some(chain) = chain.as_deref_mut() {
            for part in &content[start..] {
                if let AssistantPart::ToolCall(call) = part {
                    chain
                        .call_records
                        .insert(call.id.clone(), node.uuid.to_text());
                }
            }
        }
    }
    let node = &mut nodes[first];
    let Kind::Assistant { model, .. } = &node.kind else {
        unreachable!()
    };
    let origin = match node.extras.as_mut().and_then(|e| e.origin.take()) {
        Some(origin) => origin,
        None => Some(default_origin(model.map(|m| &*models[m as usize]))),
    };
    let mut event = Event::new(
        take_uuid(node),
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
/// The one event of a user record with one.
fn single_user_event(node: &mut Node, body: Body, out: &mut Emitter<'_>) {
    let timestamp = node.timestamp.expect("user records have timestamps");
    let mut event = Event::new(take_uuid(node), timestamp, body);
    event.author = node.extras.as_ref().and_then(|e| e.author.clone());
    out.emit(event);
}

fn user_events(path: &Path, node: &mut Node, out: &mut Emitter<'_>) -> Result<(), PluginError> {
    let Kind::User { content, .. } = &mut node.kind else {
        unreachable!("only user records hold results")
    };
    let blocks = match std::mem::take(content) {
        // The plain cases: one event, its content moved.
        UserContent::Parts(content) => {
            single_user_event(node, Body::User { content }, out);
            return Ok(());
        }
        UserContent::Result {
            call_id,
            content,
            is_error,
        } => {
            let body = Body::ToolResult {
                call_id,
                content,
                is_error,
            };
            single_user_event(node, body, out);
            return Ok(());
        }
        UserContent::Blocks(blocks) => blocks,
    };
    let unsupported_block = blocks.iter().position(|b| {
        !matches!(
            b,
            ParsedBlock::ToolResult { .. } | ParsedBlock::Text(_) | ParsedBlock::Image(_)
        )
    });
    if let Some(k) = unsupported_block {
        return Err(malformed(
            path,
            node.line,
            Some(&format!("message.content[{k}]")),
            unsupported(&blocks[k]),
        ));
    }
    // One event per result, one per run of other blocks (at least one event).
    let mut count = 0;
    let mut in_run = false;
    let mut has_results = false;
    for b in &blocks {
        let result = matches!(b, ParsedBlock::ToolResult { .. });
        count += usize::from(result || !in_run);
        in_run = !result;
        has_results |= result;
    }
    let timestamp = node.timestamp.expect("user records have timestamps");
    let mut base = Some(take_uuid(node));
    let author = node.extras.as_ref().and_then(|e| e.author.as_ref());
    let mut k = 0;
    let mut emit = |body: Body, base: &mut Option<String>| {
        let id = match (k, count > 1) {
            (0, false) => base.take().unwrap_or_default(),
            (0, true) => base.clone().unwrap_or_default(),
            _ => format!("{}:{k}", base.as_deref().unwrap_or_default()),
        };
        k += 1;
        let mut event = Event::new(id, timestamp, body);
        event.author = author.cloned();
        out.emit(event);
    };
    // Sized to the blocks: most user records are one text block.
    let mut run: Vec<Part> = Vec::new();
    let runs = blocks.len();
    for block in blocks {
        match block {
            ParsedBlock::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                if !run.is_empty() {
                    let content = std::mem::take(&mut run);
                    emit(Body::User { content }, &mut base);
                }
                let body = Body::ToolResult {
                    call_id,
                    content,
                    is_error,
                };
                emit(body, &mut base);
            }
            other => {
                if let Ok(part) = other.into_part() {
                    run.reserve_exact(runs);
                    run.push(part);
                }
            }
        }
    }
    if !run.is_empty() || !has_results {
        emit(Body::User { content: run }, &mut base);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Loaded {
        Loaded {
            records: Records {
                nodes: Vec::new(),
                parents: Vec::new(),
                groups: Vec::new(),
            },
            messages: MessageGroups::default(),
            cwd: None,
            session_id: None,
            models: Vec::new(),
            model_index: FastMap::default(),
        }
    }

    /// A node with what `node_of` kept beside it, or the error, as text.
    type Outcome = Result<
        (
            Option<ReadRecord>,
            Option<String>,
            Option<String>,
            Vec<Box<str>>,
        ),
        String,
    >;

    fn finish(loaded: Loaded, node: Result<Option<ReadRecord>, PluginError>) -> Outcome {
        node.map(|n| (n, loaded.cwd, loaded.session_id, loaded.models))
            .map_err(|e| e.to_string())
    }

    /// The typed path's outcome (`None` when it hands the line to the general path) and the
    /// general path's.
    fn both(line: &[u8]) -> (Option<Outcome>, Outcome) {
        let path = Path::new("s.jsonl");
        let typed = typed_record(line).map(|r| {
            let mut loaded = empty();
            let node = node_of(path, 1, r, &mut loaded);
            finish(loaded, node)
        });
        let mut loaded = empty();
        let general = match serde_json::from_slice::<Record<'_, Value>>(line) {
            Ok(r) => {
                let node = node_of(path, 1, r, &mut loaded);
                finish(loaded, node)
            }
            Err(e) => Err(e.to_string()),
        };
        (typed, general)
    }

    /// Where the typed path decodes a line, it decodes it as the general path does.
    fn agrees(line: &[u8]) -> bool {
        let (typed, general) = both(line);
        if let Some(typed) = &typed {
            assert_eq!(typed, &general, "{}", String::from_utf8_lossy(line));
        }
        typed.is_some()
    }

    #[test]
    fn a_user_record_gives_an_event_per_result_and_per_run_of_other_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let head = r#""type":"user","isSidechain":false,"timestamp":"2026-01-01T00:00:00.000Z""#;
        let text = format!(
            "{{{head},\"uuid\":\"a\",\"parentUuid\":null,\"message\":{{\"role\":\"user\",\"content\":[\
             {{\"type\":\"text\",\"text\":\"hi\"}},\"there\",\
             {{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"r1\"}},\
             {{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\":[],\"is_error\":true}},\
             {{\"type\":\"text\",\"text\":\"bye\"}}]}}}}\n\
             {{{head},\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{{\"role\":\"user\",\"content\":[]}}}}\n"
        );
        std::fs::write(&file, text).unwrap();
        let t = read(&file).unwrap();
        let ids: Vec<&str> = t.events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a", "a:1", "a:2", "a:3", "b"]);
        let user = |texts: &[&str]| Body::User {
            content: texts.iter().map(|&t| Part::text(t)).collect(),
        };
        assert_eq!(t.events[0].body, user(&["hi", "there"]));
        assert_eq!(
            t.events[1].body,
            Body::ToolResult {
                call_id: "t1".into(),
                content: vec![Part::text("r1")],
                is_error: false
            }
        );
        assert_eq!(
            t.events[2].body,
            Body::ToolResult {
                call_id: "t2".into(),
                content: vec![],
                is_error: true
            }
        );
        assert_eq!(t.events[3].body, user(&["bye"]));
        assert_eq!(t.events[4].body, user(&[]));
    }

    #[test]
    fn record_ids_keep_their_text() {
        for text in [
            "31c027dc-f6fd-435e-b40a-e98d9514124a",
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ] {
            assert!(matches!(RecordId::new(text), RecordId::Uuid(_)), "{text}");
            assert_eq!(RecordId::new(text).to_text(), text);
        }
        // Anything but the lowercase hyphenated form is kept as text, so it reads back as written.
        for text in [
            "31C027DC-F6FD-435E-B40A-E98D9514124A",
            "31c027dcf6fd435eb40ae98d9514124a",
            "31c027dc-f6fd-435e-b40a-e98d9514124g",
            "31c027dc-f6fd-435e-b40ae-98d9514124a",
            "msg-1",
            "",
        ] {
            assert!(matches!(RecordId::new(text), RecordId::Text(_)), "{text}");
            assert_eq!(RecordId::new(text).to_text(), text);
        }
    }

    #[test]
    fn the_typed_path_agrees_with_the_general_one_on_every_sample_line() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        let (mut lines, mut typed) = (0, 0);
        for folder in std::fs::read_dir(root).unwrap() {
            for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
                let text = std::fs::read(file.unwrap().path()).unwrap();
                for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    lines += 1;
                    typed += usize::from(agrees(line));
                }
            }
        }
        // Most lines are plain text, thinking, calls and results: the typed path's.
        assert!(typed * 10 >= lines * 8, "{typed} of {lines} lines typed");
    }

    #[test]
    fn the_typed_path_agrees_on_edge_cases_or_hands_them_over() {
        let head = r#""type":"assistant","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","sessionId":"s""#;
        let typed = [
            r#"{"message":{"id":"m","model":"claude-x","content":"plain"}}"#,
            r#"{"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":"sig"}]},"handoff":{"signatureModel":"other"}}"#,
            r#"{"handoff":{"signatureModel":null},"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":"sig"}]}}"#,
            r#"{"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":""},{"type":"thinking","thinking":"u","signature":null}]}}"#,
            r#"{"message":{"model":"claude-x","content":[{"type":"redacted_thinking","data":"d"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"n":1.50,"big":123456789012345678901234567890}}]}}"#,
            r#"{"message":{"content":[{"type":"text","text":"a\n\"b\" \u00e9","cache_control":{"type":"ephemeral"}},"bare"]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"x"}],"is_error":true}]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":null,"is_error":null}]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}"#,
            r#"{"message":{"content":[]},"usage":{"input_tokens":12,"x":[1,2.5e3]},"version":"2.1.197"}"#,
            // Errors of the record, not of its decoding, are the same on both paths.
            r#"{"message":{"content":null}}"#,
            r#"{"message":{}}"#,
            r#"{"message":{"content":"x"},"handoff":{"author":{"kind":"human","name":"Ann"},"origin":null}}"#,
            r#"{"message":{"id":"m\u0041\n","model":"c\"x","content":"x"},"subtype":"\u0041"}"#,
        ];
        for rest in typed {
            let line = format!("{{{head},{}", &rest[1..]);
            assert!(agrees(line.as_bytes()), "{line}");
        }
        let handed_over = [
            r#"{"message":{"content":[{"type":"text","text":"a","text":"b"}]}}"#,
            r#"{"message":{"content":[{"type":"text","text":null}]}}"#,
            r#"{"message":{"content":[{"type":"text"}]}}"#,
            r#"{"message":{"content":[{"type":"text","text":"a","id":5}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","id":"t","name":"n","input":null}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","id":"t","name":"n"}]}}"#,
            r#"{"message":{"content":[{"type":"thinking","thinking":"t","signature":5}]}}"#,
            r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}}"#,
            r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!"}}]}}"#,
            r#"{"message":{"content":[{"type":"document","source":{}}]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":5}]}}"#,
            r#"{"message":{"content":[5]}}"#,
            r#"{"message":{"content":{"type":"text"}}}"#,
            r#"{"message":"x"}"#,
            r#"{"message":{"content":"x"},"uuid":"again"}"#,
            r#"{"message":{"content":"x"},"isSidechain":"no"}"#,
        ];
        for rest in handed_over {
            let line = format!("{{{head},{}", &rest[1..]);
            assert!(!agrees(line.as_bytes()), "{line}");
        }
        // Not UTF-8: the general path reports it.
        let mut line = format!("{{{head},\"message\":{{\"content\":\"").into_bytes();
        line.extend_from_slice(b"\xff\"}}");
        assert!(!agrees(&line));
    }
}
