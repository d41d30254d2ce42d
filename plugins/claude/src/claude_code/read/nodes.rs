//! What the loader keeps of each chain record: a small index node (a long session has tens of
//! thousands) and, in a one-pass read, the record's body beside it; a two-pass read decodes the
//! records the conversation needs again when their events are made. Either way the content is in
//! canonical form then, so assembling events moves it out.

use handoff_sdk::dialect::anthropic::ParsedBlock;
use handoff_sdk::{Part, Timestamp};

use super::index_record::Spans;
use super::link::{GroupMembers, PackedLink};
use super::node_store::NodeStore;
use super::record_id::RecordId;
use super::uuid_index::UuidIndex;
use crate::extras::Extras;

/// A user record's content, in its events' form already where that is plain (most records), so
/// assembling moves it and frees nothing.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) enum UserContent {
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
    pub(super) fn new(mut blocks: Vec<ParsedBlock>, compact_summary: bool) -> Self {
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
                    };
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
    pub(super) fn into_blocks(self) -> Vec<ParsedBlock> {
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
pub(super) enum Kind {
    User {
        content: UserContent,
        meta: bool,
        compact_summary: bool,
        has_results: bool,
        /// Its content an array of bare strings only (see [`IndexKind::User`]).
        bare_strings_only: bool,
    },
    Assistant {
        /// An index into [`Loaded::models`](super::load::Loaded::models): a session names a model
        /// or two, on every record.
        model: Option<u32>,
        blocks: Vec<ParsedBlock>,
    },
    CompactBoundary {
        logical_parent: Option<RecordId>,
    },
    /// A record that does not decode, known by its uuid only (see `load::keyed_record`): an error
    /// if the conversation needs it, nothing if a later record replaces it or it is off the path.
    Malformed,
    Other,
}

/// A record as `node_of` reads it: the node, and what only linking needs (kept apart from the
/// nodes, so it can be freed before the events are made).
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) struct ReadRecord {
    pub(super) node: Node,
    pub(super) parent: Option<RecordId>,
    pub(super) message_id: Option<Box<str>>,
    /// Where the members the events' pass decodes begin (none known: it decodes the line).
    pub(super) spans: Spans,
}

/// The chain records of a file, as the chain walk takes them.
#[derive(Default)]
pub(super) struct Records {
    pub(super) nodes: NodeStore,
    /// Each node's link to its `parentUuid` (a compact boundary's `logicalParentUuid` when it
    /// has none: see [`IndexKind::CompactBoundary`]).
    pub(super) up: Vec<PackedLink>,
    /// The parents links name that were not indexed when they were made (see
    /// [`super::link::link_to`]), and whether each is a logical parent.
    pub(super) unresolved: Vec<(RecordId, bool)>,
    /// Streamed assistant turns: records sharing a message id (of either thread), as
    /// (group, record) pairs.
    pub(super) groups: GroupMembers,
    /// Each uuid's node: built while loading (a uuid seen again replaces its record), and the
    /// one index linking looks parents up in.
    pub(super) index: UuidIndex,
}

/// What the index keeps of a record, and no more (a long session has tens of thousands): where
/// its line is, its uuid, and what linking and the chain walk ask of it.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) struct IndexNode {
    pub(super) uuid: RecordId,
    /// Where the record's line starts in the file (its BOM included, on the first line), and its
    /// length with its newline (`u32::MAX`: that long or longer, found by reading to the newline).
    pub(super) offset: u64,
    pub(super) len: u32,
    /// The 1-based line number (`u32::MAX` past that many lines).
    pub(super) line: u32,
    pub(super) sidechain: bool,
    pub(super) kind: IndexKind,
    pub(super) spans: Spans,
}

/// A record's [`Kind`], without its content.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum IndexKind {
    User {
        meta: bool,
        compact_summary: bool,
        has_results: bool,
        /// Its content an array of bare strings only, one at least: nothing Claude Code 2.1.332
        /// sends, and no leaf to it (`ReadRules::bare_string_prompt_no_leaf`).
        bare_strings_only: bool,
    },
    Assistant,
    /// `logical`: its parent is the `logicalParentUuid` (it has no `parentUuid`), which when it
    /// is not in the file makes the boundary a root rather than an error.
    CompactBoundary {
        logical: bool,
    },
    Malformed,
    Other,
}

impl IndexNode {
    /// The index's node of a record read whole, and its parent as linking takes it.
    pub(super) fn of(
        node: &Node,
        parent: Option<RecordId>,
        spans: Spans,
        (offset, len): (u64, usize),
    ) -> (IndexNode, Option<RecordId>) {
        let (kind, parent) = match &node.kind {
            Kind::User {
                meta,
                compact_summary,
                has_results,
                bare_strings_only,
                ..
            } => (
                IndexKind::User {
                    meta: *meta,
                    compact_summary: *compact_summary,
                    has_results: *has_results,
                    bare_strings_only: *bare_strings_only,
                },
                parent,
            ),
            Kind::Assistant { .. } => (IndexKind::Assistant, parent),
            Kind::CompactBoundary { logical_parent } => match parent {
                Some(p) => (IndexKind::CompactBoundary { logical: false }, Some(p)),
                None => (
                    IndexKind::CompactBoundary { logical: true },
                    logical_parent.clone(),
                ),
            },
            Kind::Malformed => (IndexKind::Malformed, parent),
            Kind::Other => (IndexKind::Other, parent),
        };
        let index_node = IndexNode {
            uuid: node.uuid.clone(),
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            line: u32::try_from(node.line).unwrap_or(u32::MAX),
            sidechain: node.sidechain,
            kind,
            spans,
        };
        (index_node, parent)
    }

    pub(super) fn line(&self) -> usize {
        self.line as usize
    }
}

/// What a record read whole holds beyond its [`IndexNode`] (so a record kept whole is not kept
/// twice).
pub(super) struct RecordBody {
    kind: Kind,
    timestamp: Option<Timestamp>,
    extras: Option<Box<Extras>>,
}

impl RecordBody {
    pub(super) fn of(node: Node) -> Self {
        RecordBody {
            kind: node.kind,
            timestamp: node.timestamp,
            extras: node.extras,
        }
    }

    /// The record whole again, with what its index node holds.
    pub(super) fn into_node(self, index: &IndexNode) -> Node {
        Node {
            uuid: index.uuid.clone(),
            line: index.line(),
            sidechain: index.sidechain,
            kind: self.kind,
            timestamp: self.timestamp,
            extras: self.extras,
        }
    }
}

/// One chain record, kept small: a long session has tens of thousands of them.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) struct Node {
    pub(super) uuid: RecordId,
    pub(super) line: usize,
    pub(super) sidechain: bool,
    pub(super) kind: Kind,
    pub(super) timestamp: Option<Timestamp>,
    /// Boxed: most records have none.
    pub(super) extras: Option<Box<Extras>>,
}

impl Node {
    pub(super) fn take_author(&mut self) -> Option<handoff_sdk::Author> {
        self.extras.as_mut().and_then(|e| e.author.take())
    }
}

/// The uuid of a record whose event is being made, as the event's id (nothing reads it
/// afterwards, so a text id is moved, not copied).
pub(super) fn take_uuid(node: &mut Node) -> String {
    match &mut node.uuid {
        RecordId::Uuid(_) => node.uuid.to_text(),
        RecordId::Text(text) => std::mem::take(text).into_string(),
    }
}
