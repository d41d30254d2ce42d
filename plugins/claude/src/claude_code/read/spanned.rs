//! The events' pass's decoding of a user or assistant record from the members the index pass
//! located ([`Spans`]): its uuid (to see the line still holds it), timestamp, extras and message,
//! and nothing else of the line, which the index pass judged already. Anything short of a plain
//! success (a member not located, one the typed path does not cover, an error) sends the line
//! to the whole-line decoding, which decides and names any fault; so this decoding changes what
//! a read costs, never what it returns.

use std::path::Path;

use handoff_sdk::Timestamp;
use serde::Deserialize;

use super::decode::{message_kind, Speaker};
use super::index_record::Spans;
use super::load::Loaded;
use super::nodes::{IndexKind, IndexNode, Node};
use super::record_id::RecordId;
use crate::claude_code::records::{FastContent, Message, Text};
use crate::extras::Extras;

/// The record `index` indexes, from its located members of `text` (its line); `None` when the
/// whole line must be decoded instead.
pub(super) fn node_from_spans(
    path: &Path,
    index: &IndexNode,
    text: &[u8],
    loaded: &mut Loaded,
) -> Option<Node> {
    let speaker = match index.kind {
        IndexKind::User {
            meta,
            compact_summary,
            ..
        } => Speaker::User {
            meta,
            compact_summary,
        },
        IndexKind::Assistant => Speaker::Assistant,
        _ => return None,
    };
    let spans = index.spans;
    let text = handoff_sdk::lines::text_of(text)?;
    let uuid: Text<'_> = member(text, spans.uuid)?;
    if RecordId::new(uuid.as_str()) != index.uuid {
        return None;
    }
    // No `timestamp` member: a record Claude Code keeps (its event takes the time before it).
    let timestamp = match spans.timestamp {
        Spans::ABSENT => None,
        at => {
            let timestamp: Option<Text<'_>> = member(text, at)?;
            Some(Timestamp::parse(timestamp?.as_str()).ok()?)
        }
    };
    let extras: Option<Extras> = match spans.handoff {
        Spans::ABSENT => None,
        at => member(text, at)?,
    };
    let extras = extras.filter(|e| !e.is_empty()).map(Box::new);
    let message: Option<Message<'_, FastContent>> = member(text, spans.message)?;
    let line = index.line();
    let (kind, _) = message_kind(path, line, speaker, message?, &extras, loaded).ok()?;
    Some(Node {
        uuid: index.uuid.clone(),
        line,
        sidechain: index.sidechain,
        kind,
        timestamp,
        extras,
    })
}

/// The value of the member whose name ends at `at` (after its closing quote) in `text`.
fn member<'a, T: Deserialize<'a>>(text: &'a str, at: u32) -> Option<T> {
    if at == Spans::ABSENT || at == Spans::UNKNOWN {
        return None;
    }
    let json_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let rest = text.get(at as usize..)?.trim_start_matches(json_space);
    let rest = rest.strip_prefix(':')?.trim_start_matches(json_space);
    // One value, read from where it begins; what follows it was judged by the index pass.
    T::deserialize(&mut serde_json::Deserializer::from_str(rest)).ok()
}
