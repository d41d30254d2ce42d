//! One record → its chain node: the typed path's or the general path's decoding of a line (see
//! [`super::super::records`]) turned into what the chain walk and the assembly need.

use std::path::Path;

use handoff_sdk::dialect::anthropic::{parse_block, ParsedBlock};
use handoff_sdk::dialect::kind_of;
use handoff_sdk::serde_json::Value;
use handoff_sdk::{Part, PluginError, Timestamp, ToolInput};

use super::index_record::{IndexRecord, Spans};
use super::load::{intern, Loaded};
use super::nodes::{Kind, Node, ReadRecord, UserContent};
use super::record_id::RecordId;
use crate::claude_code::records::{
    bare_string_block, is_bare_string_block, FastContent, Message, Record, Text,
};
use crate::extras::Extras;

/// Message content as a path decodes it.
pub(super) trait Content {
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
                    if let Value::String(text) = item {
                        blocks.push(bare_string_block(text));
                        continue;
                    }
                    blocks.push(parse_block(item, signature_model).map_err(|e| {
                        let field = if e.field.is_empty() {
                            format!("message.content[{i}]")
                        } else {
                            format!("message.content[{i}].{}", e.field)
                        };
                        let message = if e.field == "input" && e.message == "missing" {
                            // Measured at both ends: differential case `tool-use-without-input`.
                            "missing (Claude Code 2.1.197 and 2.1.332 send the call without \
                             input, which the API refuses: no request of this conversation can \
                             be sent)"
                                .to_owned()
                        } else {
                            e.message
                        };
                        PluginError::malformed_line(path, line, Some(&field), message)
                    })?);
                }
                Ok(blocks)
            }
            _ => Err(PluginError::malformed_line(
                path,
                line,
                Some("message.content"),
                "expected a string or an array",
            )),
        }
    }
}

/// The index's record of a line [`IndexRecord`] decodes: as [`node_of`] makes it but without
/// content, extras or timestamp (a conversational record without a uuid is the one error here:
/// it cannot be indexed).
pub(super) fn index_node_of(
    path: &Path,
    line: usize,
    raw: IndexRecord<'_>,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    let kind = raw.kind.as_ref().map_or("", Text::as_str);
    let ids = (raw.uuid, raw.leaf_uuid);
    let session = (raw.cwd, raw.session_id);
    let Some((uuid, sidechain)) =
        in_the_chain(path, line, kind, ids, raw.is_sidechain, session, loaded)?
    else {
        return Ok(None);
    };
    let mut message_id = None;
    let (message_id_of, shape) = match raw.message {
        Some(m) => (m.id, m.content),
        None => (None, None),
    };
    let node_kind = match kind {
        "user" => Kind::User {
            content: UserContent::default(),
            meta: raw.is_meta.unwrap_or(false),
            compact_summary: raw.is_compact_summary.unwrap_or(false),
            has_results: shape.as_ref().is_some_and(|c| c.holds_results),
            bare_strings_only: shape.as_ref().is_some_and(|c| c.bare_strings_only),
        },
        "assistant" => {
            message_id = message_id_of;
            Kind::Assistant {
                model: None,
                blocks: Vec::new(),
            }
        }
        "system" if raw.subtype.as_ref().map(Text::as_str) == Some("compact_boundary") => {
            Kind::CompactBoundary {
                logical_parent: record_id(raw.logical_parent_uuid),
            }
        }
        "system" if is_local_command(raw.subtype.as_ref()) => Kind::User {
            content: UserContent::default(),
            meta: false,
            compact_summary: false,
            has_results: false,
            bare_strings_only: false,
        },
        _ => Kind::Other,
    };
    Ok(Some(ReadRecord {
        node: Node {
            uuid: RecordId::new(uuid.as_str()),
            line,
            sidechain,
            kind: node_kind,
            timestamp: None,
            extras: None,
        },
        parent: record_id(raw.parent_uuid),
        message_id: boxed(message_id),
        spans: raw.spans,
    }))
}

pub(super) fn boxed(text: Option<Text<'_>>) -> Option<Box<str>> {
    text.map(|t| t.0.into_owned().into_boxed_str())
}

pub(super) fn record_id(text: Option<Text<'_>>) -> Option<RecordId> {
    text.map(|t| RecordId::new(t.as_str()))
}

/// Where every record's decoding starts: its uuid and whether it is a sidechain's, for a record
/// the chain keeps (`None` for any other); the session's cwd and id noted from the first
/// main-thread conversation record.
fn in_the_chain<'a>(
    path: &Path,
    line: usize,
    kind: &str,
    (uuid, leaf_uuid): (Option<Text<'a>>, Option<Text<'_>>),
    is_sidechain: Option<bool>,
    (cwd, session_id): (Option<Text<'_>>, Option<Text<'_>>),
    loaded: &mut Loaded,
) -> Result<Option<(Text<'a>, bool)>, PluginError> {
    let Some(uuid) = indexed_uuid(path, line, kind, uuid, leaf_uuid, loaded)? else {
        return Ok(None);
    };
    if !kept_in_the_chain(kind) {
        return Ok(None);
    }
    let sidechain = is_sidechain.unwrap_or(false);
    if !sidechain && matches!(kind, "user" | "assistant" | "system") {
        note_session(loaded, cwd, session_id);
    }
    Ok(Some((uuid, sidechain)))
}

/// A record's uuid, or none for a record that is not indexed (queue-operation, last-prompt,
/// summary, file-history-snapshot, mode, …; a `last-prompt` notes its leaf on the way). A
/// conversational record without a uuid is an error naming its line.
fn indexed_uuid<'a>(
    path: &Path,
    line: usize,
    kind: &str,
    uuid: Option<Text<'a>>,
    leaf_uuid: Option<Text<'_>>,
    loaded: &mut Loaded,
) -> Result<Option<Text<'a>>, PluginError> {
    if uuid.is_some() {
        return Ok(uuid);
    }
    if matches!(kind, "user" | "assistant" | "system") {
        return Err(PluginError::malformed_line(
            path,
            line,
            Some("uuid"),
            format!("a {kind} record needs a uuid"),
        ));
    }
    if kind == "last-prompt" {
        if let Some(leaf) = record_id(leaf_uuid) {
            loaded.last_prompt_leaf = Some(leaf);
        }
    }
    Ok(None)
}

/// Whether Claude Code keeps a record of this kind among the messages its chain walk follows
/// (2.1.197 and 2.1.332: user, assistant, attachment and system records, and progress records,
/// which it bridges). A record of any other kind with a uuid (measured: a `file-history-delta`
/// in VibeCodingTracker's fixture) is not there: a record naming it as its parent has a parent
/// the walk does not find, and goes on by timestamp (`link::conversation_path`).
fn kept_in_the_chain(kind: &str) -> bool {
    matches!(
        kind,
        "user" | "assistant" | "system" | "attachment" | "progress"
    )
}

/// The session's cwd and id, from the first main-thread conversation record that says them
/// (every record repeats them).
fn note_session(loaded: &mut Loaded, cwd: Option<Text<'_>>, session_id: Option<Text<'_>>) {
    if loaded.cwd.is_none() {
        loaded.cwd = cwd.map(|t| t.0.into_owned());
    }
    if loaded.session_id.is_none() {
        loaded.session_id = session_id.map(|t| t.0.into_owned());
    }
}

pub(super) fn node_of<C: Content>(
    path: &Path,
    line: usize,
    raw: Record<'_, C>,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    let kind = raw.kind.as_ref().map_or("", Text::as_str);
    let ids = (raw.uuid, raw.leaf_uuid);
    let session = (raw.cwd, raw.session_id);
    let Some((uuid, sidechain)) =
        in_the_chain(path, line, kind, ids, raw.is_sidechain, session, loaded)?
    else {
        return Ok(None);
    };
    // A record without a `timestamp` is kept: Claude Code 2.1.197 and 2.1.332 send it (measured:
    // differential case `records-without-timestamp`); its event takes the time of the one before
    // it (`Emitter::time_of`). One that does not parse is an error.
    let timestamp = match &raw.timestamp {
        Some(t) => Some(
            Timestamp::parse(t.as_str())
                .map_err(|e| PluginError::malformed_line(path, line, Some("timestamp"), e))?,
        ),
        None => None,
    };
    let extras = raw.handoff.filter(|e| !e.is_empty()).map(Box::new);
    let mut message_id = None;
    let node_kind = match kind {
        "user" | "assistant" => {
            let Some(message) = raw.message else {
                return Err(PluginError::malformed_line(
                    path,
                    line,
                    Some("message"),
                    "missing",
                ));
            };
            let speaker = match kind {
                "user" => Speaker::User {
                    meta: raw.is_meta.unwrap_or(false),
                    compact_summary: raw.is_compact_summary.unwrap_or(false),
                },
                _ => Speaker::Assistant,
            };
            let (node_kind, id) = message_kind(path, line, speaker, message, &extras, loaded)?;
            message_id = id;
            node_kind
        }
        "system" if raw.subtype.as_ref().map(Text::as_str) == Some("compact_boundary") => {
            Kind::CompactBoundary {
                logical_parent: record_id(raw.logical_parent_uuid),
            }
        }
        "system" if is_local_command(raw.subtype.as_ref()) => Kind::User {
            content: UserContent::Parts(vec![Part::Text {
                text: local_command_text(path, line, raw.content)?,
            }]),
            meta: false,
            compact_summary: false,
            has_results: false,
            bare_strings_only: false,
        },
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
        spans: Spans::default(),
    }))
}

/// Whether a `system` record is a local command's (its subtype `local_command`): the command a
/// person ran (`/model`, `/exit`, …) or its output. Claude Code 2.1.197 and 2.1.332 send its
/// `content` as is as a user text, merged with the user message before it as any two user
/// messages are (`normalizeMessagesForAPI`, read from both bundles; measured: differential cases
/// `local-command`, `local-command-at-end`); so it reads as a user record of that text, and is
/// indexed as one.
fn is_local_command(subtype: Option<&Text<'_>>) -> bool {
    subtype.map(Text::as_str) == Some("local_command")
}

/// A local command record's text: its `content`, which must be a string.
fn local_command_text(
    path: &Path,
    line: usize,
    content: Option<Value>,
) -> Result<String, PluginError> {
    match content {
        Some(Value::String(text)) => Ok(text),
        other => Err(PluginError::malformed_line(
            path,
            line,
            Some("content"),
            format!(
                "a local_command record's content must be a string (Claude Code sends it as the \
                 user's text), found {}",
                other.as_ref().map_or("none", kind_of)
            ),
        )),
    }
}

/// The calls of a record marked `handoff.freeform` back to freeform calls: each `tool_use`
/// input must be the structured form `{"input": <text>}` the writer wrote.
fn freeform_calls(blocks: &mut [ParsedBlock], path: &Path, line: usize) -> Result<(), PluginError> {
    for (i, block) in blocks.iter_mut().enumerate() {
        if let ParsedBlock::ToolCall(call) = block {
            let ToolInput::Arguments(arguments) = &call.input else {
                continue;
            };
            let Some(text) = ToolInput::freeform_from_structured(arguments) else {
                return Err(PluginError::malformed_line(
                    path,
                    line,
                    Some(&format!("message.content[{i}].input")),
                    "a call marked freeform (handoff.freeform) must have the input {\"input\": <text>}",
                ));
            };
            call.input = ToolInput::Freeform(text);
        }
    }
    Ok(())
}

/// Who a record with a message speaks for: a user record with its flags, or an assistant.
#[derive(Clone, Copy)]
pub(super) enum Speaker {
    User { meta: bool, compact_summary: bool },
    Assistant,
}

/// The [`Kind`] of a user or assistant record from its message, and the message's id.
pub(super) fn message_kind<'a, C: Content>(
    path: &Path,
    line: usize,
    speaker: Speaker,
    message: Message<'a, C>,
    extras: &Option<Box<Extras>>,
    loaded: &mut Loaded,
) -> Result<(Kind, Option<Text<'a>>), PluginError> {
    let model = message.model;
    let signature_model = match extras.as_ref().and_then(|e| e.signature_model.as_ref()) {
        Some(m) => m.as_deref(),
        None => model.as_ref().map(Text::as_str),
    };
    let Some(content) = message.content else {
        return Err(PluginError::malformed_line(
            path,
            line,
            Some("message.content"),
            "missing",
        ));
    };
    let mut blocks = content.into_blocks(signature_model, path, line)?;
    if extras.as_ref().is_some_and(|e| e.freeform) {
        freeform_calls(&mut blocks, path, line)?;
    }
    let node_kind = match speaker {
        Speaker::User {
            meta,
            compact_summary,
        } => {
            let has_results = blocks
                .iter()
                .any(|b| matches!(b, ParsedBlock::ToolResult { .. }));
            let bare_strings_only = !blocks.is_empty() && blocks.iter().all(is_bare_string_block);
            Kind::User {
                content: UserContent::new(blocks, compact_summary),
                meta,
                compact_summary,
                has_results,
                bare_strings_only,
            }
        }
        Speaker::Assistant => {
            let model = model.map(|m| intern(loaded, m.as_str()));
            Kind::Assistant { model, blocks }
        }
    };
    Ok((node_kind, message.id))
}
