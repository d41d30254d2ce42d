//! The events of one turn: an assistant turn's records become one event, a user record one
//! event per result and per run of other blocks.

use std::path::Path;

use handoff_sdk::dialect::anthropic::ParsedBlock;
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Timestamp};

use super::assemble::Emitter;
use super::errors::unsupported;
use super::nodes::{take_uuid, Kind, Node, UserContent};
use crate::claude_code::write::ChainState;
use crate::extras::{default_origin, mark_meta};

/// The event of an assistant turn's records (read whole, in file order), at `timestamp`; with
/// `chain`, where each of its calls is recorded.
pub(super) fn assistant_event(
    path: &Path,
    records: &mut [Node],
    models: &[Box<str>],
    timestamp: Timestamp,
    mut chain: Option<&mut ChainState>,
) -> Result<Event, PluginError> {
    let mut content = Vec::new();
    for node in records.iter_mut() {
        let Kind::Assistant { blocks, .. } = &mut node.kind else {
            let why = "it replaces a record of an assistant turn (same uuid) but is not one";
            return Err(PluginError::malformed_line(
                path,
                node.line,
                Some("uuid"),
                why,
            ));
        };
        let unsupported_block = blocks.iter().position(|b| {
            !matches!(
                b,
                ParsedBlock::Text(_) | ParsedBlock::Thinking(_) | ParsedBlock::ToolCall(_)
            )
        });
        if let Some(k) = unsupported_block {
            return Err(PluginError::malformed_line(
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
    let node = &mut records[0];
    let Kind::Assistant { model, .. } = &node.kind else {
        unreachable!()
    };
    let origin = match node.extras.as_mut().and_then(|e| e.origin.take()) {
        Some(origin) => origin,
        None => Some(default_origin(model.map(|m| &*models[m as usize]))),
    };
    let mut event = Event::new(
        take_uuid(node),
        timestamp,
        Body::Assistant { content, origin },
    );
    event.author = node.take_author();
    Ok(event)
}

/// The one event of a user record with one.
pub(super) fn single_user_event(node: &mut Node, body: Body, meta: bool, out: &mut Emitter<'_>) {
    let timestamp = out.time_of(node.timestamp);
    let mut event = Event::new(take_uuid(node), timestamp, body);
    event.author = node.extras.as_ref().and_then(|e| e.author.clone());
    if meta {
        mark_meta(&mut event);
    }
    out.emit(event);
}

/// The events of one user record: each `tool_result` block its own event, each run of other
/// blocks one user turn.
pub(super) fn user_events(
    path: &Path,
    node: &mut Node,
    out: &mut Emitter<'_>,
) -> Result<(), PluginError> {
    let Kind::User { content, meta, .. } = &mut node.kind else {
        unreachable!("only user records hold results")
    };
    let meta = *meta;
    let blocks = match std::mem::take(content) {
        // The plain cases: one event, its content moved.
        UserContent::Parts(content) => {
            single_user_event(node, Body::User { content }, meta, out);
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
            single_user_event(node, body, meta, out);
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
        return Err(PluginError::malformed_line(
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
    let timestamp = out.time_of(node.timestamp);
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
        if meta {
            mark_meta(&mut event);
        }
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
