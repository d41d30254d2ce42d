//! The index's nodes, on the heap while a session is small and in an anonymous temporary file
//! once it is large (issue 30: a session of any size in bounded memory). Spilled, a record costs
//! one resident byte (its thread and kind, which the chain's scans read for every record); the
//! rest of its node (uuid, where its line is, its members' spans: [`NODE_BYTES`] bytes) is read
//! back by index through a small cache of blocks. The walks read forwards (scans, the events'
//! pass) or backwards from the leaf by `parentUuid`, close to where they last read, so a
//! direct-mapped cache of recent blocks serves nearly every read.
//!
//! The file is made by `tempfile::tempfile()`: unlinked at once, the system removes it when it
//! is closed (or the process ends). Its pages live in the page cache, which the system reclaims,
//! not in the process's resident set.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::OnceLock;

use super::index_record::Spans;
use super::nodes::{IndexKind, IndexNode};
use super::record_id::RecordId;

/// How many records a session holds before its nodes go to a temporary file: 65,536 nodes are
/// 4 MiB on the heap; nearly every session is far smaller and never touches a file.
/// `HANDOFF_CLAUDE_SPILL_RECORDS` sets another (read once: the tests force a low one to run
/// every read through the file).
const SPILL_AFTER_DEFAULT: usize = 1 << 16;

/// Records a block holds: the unit read back from the file and cached.
const BLOCK: usize = 512;
/// Blocks the cache holds (direct-mapped): 32 × 512 × 56 B = 896 KiB.
const SLOTS: usize = 32;
/// A node as the file holds it.
const NODE_BYTES: usize = 56;

/// The threshold of the process: the environment's, else [`SPILL_AFTER_DEFAULT`].
pub(super) fn spill_after() -> usize {
    static AFTER: OnceLock<usize> = OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var("HANDOFF_CLAUDE_SPILL_RECORDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SPILL_AFTER_DEFAULT)
    })
}

pub(super) struct NodeStore {
    /// Each record's thread and kind ([`kind_byte`]), resident in either place.
    kinds: Vec<u8>,
    place: Place,
    /// Past how many records the nodes go to a file.
    spill_after: usize,
}

enum Place {
    Heap(Vec<IndexNode>),
    File(Box<Spilled>),
}

struct Spilled {
    file: File,
    /// Records written to the file: whole blocks only (the rest are in `tail`).
    written: usize,
    /// The encoded nodes past `written`, fewer than a block.
    tail: Vec<u8>,
    /// The ids that are no UUIDs (rare: none in a session Claude Code wrote), which a node
    /// names by their place here.
    texts: Vec<Box<str>>,
    cache: RefCell<Cache>,
}

struct Cache {
    /// Which block each slot holds (`usize::MAX`: none).
    tags: [usize; SLOTS],
    blocks: Vec<u8>,
}

impl Default for NodeStore {
    fn default() -> Self {
        NodeStore::new(0, spill_after())
    }
}

impl NodeStore {
    /// A store for about `expected` records (the heap reserved up to the threshold only), which
    /// goes to a file past `spill_after` records.
    pub(super) fn new(expected: usize, spill_after: usize) -> Self {
        NodeStore {
            kinds: Vec::with_capacity(expected),
            place: Place::Heap(Vec::with_capacity(expected.min(spill_after))),
            spill_after,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.kinds.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Whether the nodes are in a file (for the tests).
    #[cfg(test)]
    pub(super) fn spilled(&self) -> bool {
        matches!(self.place, Place::File(_))
    }

    /// Adds a node at the end; an error only if the temporary file cannot be made or written.
    pub(super) fn push(&mut self, node: IndexNode) -> io::Result<()> {
        self.kinds.push(kind_byte(node.sidechain, node.kind));
        match &mut self.place {
            Place::Heap(nodes) => {
                nodes.push(node);
                if nodes.len() > self.spill_after {
                    let nodes = std::mem::take(nodes);
                    self.place = Place::File(Box::new(Spilled::of(nodes)?));
                }
                Ok(())
            }
            Place::File(spilled) => spilled.push(&node),
        }
    }

    /// Replaces the node at `i` (a record written again).
    pub(super) fn set(&mut self, i: usize, node: IndexNode) -> io::Result<()> {
        self.kinds[i] = kind_byte(node.sidechain, node.kind);
        match &mut self.place {
            Place::Heap(nodes) => {
                nodes[i] = node;
                Ok(())
            }
            Place::File(spilled) => spilled.set(i, &node),
        }
    }

    /// The node at `i`.
    pub(super) fn get(&self, i: usize) -> IndexNode {
        match &self.place {
            Place::Heap(nodes) => nodes[i].clone(),
            Place::File(spilled) => spilled.get(i),
        }
    }

    /// Whether the node at `i` has this uuid (without building the node when it is on the heap).
    pub(super) fn uuid_is(&self, i: usize, uuid: &RecordId) -> bool {
        match &self.place {
            Place::Heap(nodes) => nodes[i].uuid == *uuid,
            Place::File(spilled) => spilled.get(i).uuid == *uuid,
        }
    }

    /// Whether the record at `i` is a sidechain's.
    pub(super) fn sidechain(&self, i: usize) -> bool {
        self.kinds[i] & SIDECHAIN != 0
    }

    /// The kind of the record at `i`.
    pub(super) fn kind(&self, i: usize) -> IndexKind {
        kind_of(self.kinds[i])
    }
}

impl Spilled {
    /// The nodes so far, written to a new temporary file.
    fn of(nodes: Vec<IndexNode>) -> io::Result<Self> {
        let mut spilled = Spilled {
            file: tempfile::tempfile()?,
            written: 0,
            tail: Vec::with_capacity(BLOCK * NODE_BYTES),
            texts: Vec::new(),
            cache: RefCell::new(Cache {
                tags: [usize::MAX; SLOTS],
                blocks: vec![0; SLOTS * BLOCK * NODE_BYTES],
            }),
        };
        for node in &nodes {
            spilled.push(node)?;
        }
        Ok(spilled)
    }

    fn push(&mut self, node: &IndexNode) -> io::Result<()> {
        let bytes = self.encode(node);
        self.tail.extend_from_slice(&bytes);
        if self.tail.len() == BLOCK * NODE_BYTES {
            self.file
                .seek(SeekFrom::Start((self.written * NODE_BYTES) as u64))?;
            self.file.write_all(&self.tail)?;
            self.written += BLOCK;
            self.tail.clear();
        }
        Ok(())
    }

    fn set(&mut self, i: usize, node: &IndexNode) -> io::Result<()> {
        let bytes = self.encode(node);
        if i >= self.written {
            let at = (i - self.written) * NODE_BYTES;
            self.tail[at..at + NODE_BYTES].copy_from_slice(&bytes);
            return Ok(());
        }
        self.file.seek(SeekFrom::Start((i * NODE_BYTES) as u64))?;
        self.file.write_all(&bytes)?;
        // The cached block, if any, must say the same.
        let cache = self.cache.get_mut();
        let (block, slot) = (i / BLOCK, (i / BLOCK) % SLOTS);
        if cache.tags[slot] == block {
            let at = (slot * BLOCK + i % BLOCK) * NODE_BYTES;
            cache.blocks[at..at + NODE_BYTES].copy_from_slice(&bytes);
        }
        Ok(())
    }

    fn get(&self, i: usize) -> IndexNode {
        if i >= self.written {
            let at = (i - self.written) * NODE_BYTES;
            return self.decode(&self.tail[at..at + NODE_BYTES]);
        }
        let mut cache = self.cache.borrow_mut();
        let (block, slot) = (i / BLOCK, (i / BLOCK) % SLOTS);
        let start = slot * BLOCK * NODE_BYTES;
        if cache.tags[slot] != block {
            let bytes = &mut cache.blocks[start..start + BLOCK * NODE_BYTES];
            // What was written to the file reads back from the page cache: a failure here is
            // the system's (an I/O error on the temporary file), which the reader cannot mend.
            read_block(&self.file, block, bytes).unwrap_or_else(|e| {
                panic!("the Claude Code reader's index could not be read back from its temporary file: {e}")
            });
            cache.tags[slot] = block;
        }
        let at = start + (i % BLOCK) * NODE_BYTES;
        self.decode(&cache.blocks[at..at + NODE_BYTES])
    }

    fn encode(&mut self, node: &IndexNode) -> [u8; NODE_BYTES] {
        let mut b = [0u8; NODE_BYTES];
        match &node.uuid {
            RecordId::Uuid([high, low]) => {
                b[0..8].copy_from_slice(&high.to_le_bytes());
                b[8..16].copy_from_slice(&low.to_le_bytes());
            }
            RecordId::Text(text) => {
                b[0..8].copy_from_slice(&(self.texts.len() as u64).to_le_bytes());
                b[49] = 1;
                self.texts.push(text.clone());
            }
        }
        b[16..24].copy_from_slice(&node.offset.to_le_bytes());
        b[24..28].copy_from_slice(&node.len.to_le_bytes());
        b[28..32].copy_from_slice(&node.line.to_le_bytes());
        let s = node.spans;
        for (k, span) in [s.uuid, s.timestamp, s.message, s.handoff]
            .into_iter()
            .enumerate()
        {
            b[32 + 4 * k..36 + 4 * k].copy_from_slice(&span.to_le_bytes());
        }
        b[48] = kind_byte(node.sidechain, node.kind);
        b
    }

    fn decode(&self, b: &[u8]) -> IndexNode {
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let uuid = match b[49] {
            0 => RecordId::Uuid([u64_at(0), u64_at(8)]),
            _ => RecordId::Text(self.texts[u64_at(0) as usize].clone()),
        };
        IndexNode {
            uuid,
            offset: u64_at(16),
            len: u32_at(24),
            line: u32_at(28),
            sidechain: b[48] & SIDECHAIN != 0,
            kind: kind_of(b[48]),
            spans: Spans {
                uuid: u32_at(32),
                timestamp: u32_at(36),
                message: u32_at(40),
                handoff: u32_at(44),
            },
        }
    }
}

fn read_block(mut file: &File, block: usize, bytes: &mut [u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start((block * BLOCK * NODE_BYTES) as u64))?;
    file.read_exact(bytes)
}

const SIDECHAIN: u8 = 0x80;

/// A record's thread and kind in a byte: the variant in the low three bits, its flags above.
fn kind_byte(sidechain: bool, kind: IndexKind) -> u8 {
    let kind = match kind {
        IndexKind::User {
            meta,
            compact_summary,
            has_results,
            bare_strings_only,
        } => {
            u8::from(meta) << 3
                | u8::from(compact_summary) << 4
                | u8::from(has_results) << 5
                | u8::from(bare_strings_only) << 6
        }
        IndexKind::Assistant => 1,
        IndexKind::CompactBoundary { logical } => 2 | u8::from(logical) << 3,
        IndexKind::Malformed => 3,
        IndexKind::Other => 4,
    };
    kind | if sidechain { SIDECHAIN } else { 0 }
}

fn kind_of(byte: u8) -> IndexKind {
    let flag = |bit: u8| byte & 1 << bit != 0;
    match byte & 7 {
        0 => IndexKind::User {
            meta: flag(3),
            compact_summary: flag(4),
            has_results: flag(5),
            bare_strings_only: flag(6),
        },
        1 => IndexKind::Assistant,
        2 => IndexKind::CompactBoundary { logical: flag(3) },
        3 => IndexKind::Malformed,
        _ => IndexKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(n: u64, text: bool) -> IndexNode {
        let kinds = [
            IndexKind::User {
                meta: n.is_multiple_of(3),
                compact_summary: n.is_multiple_of(5),
                has_results: n.is_multiple_of(7),
                bare_strings_only: n.is_multiple_of(11),
            },
            IndexKind::Assistant,
            IndexKind::CompactBoundary {
                logical: n.is_multiple_of(2),
            },
            IndexKind::Malformed,
            IndexKind::Other,
        ];
        IndexNode {
            uuid: if text {
                RecordId::Text(format!("id-{n}").into())
            } else {
                RecordId::Uuid([n.wrapping_mul(0x9E37_79B9_7F4A_7C15), !n])
            },
            offset: n * 1000 + 7,
            len: if n.is_multiple_of(11) {
                u32::MAX
            } else {
                n as u32 + 1
            },
            line: n as u32 + 1,
            sidechain: n % 4 == 1,
            kind: kinds[n as usize % kinds.len()],
            spans: Spans {
                uuid: n as u32,
                timestamp: Spans::UNKNOWN,
                message: Spans::ABSENT,
                handoff: 3,
            },
        }
    }

    /// A store past its threshold gives back every node as it was pushed or last set, read in
    /// any order (forwards, backwards, across the cache's slots), as the heap does.
    #[test]
    fn a_spilled_store_gives_back_what_the_heap_holds() {
        let count = (BLOCK * (SLOTS + 3) + 17) as u64;
        let mut heap = NodeStore::new(0, usize::MAX);
        let mut spilled = NodeStore::new(0, 100);
        for n in 0..count {
            heap.push(node(n, n % 13 == 0)).unwrap();
            spilled.push(node(n, n % 13 == 0)).unwrap();
        }
        assert!(spilled.spilled() && !heap.spilled());
        // Written again: in the file, in a cached block, and in the tail.
        for i in [5, BLOCK + 1, count as usize - 2] {
            let again = node(i as u64 * 31 + 1, false);
            spilled.get(i);
            heap.set(i, again.clone()).unwrap();
            spilled.set(i, again).unwrap();
        }
        assert_eq!(spilled.len(), heap.len());
        let len = heap.len();
        let order = (0..len)
            .rev()
            .chain(0..len)
            .chain((0..len).step_by(BLOCK + 1));
        for i in order {
            assert_eq!(spilled.get(i), heap.get(i), "node {i}");
            assert_eq!(spilled.kind(i), heap.get(i).kind);
            assert_eq!(spilled.sidechain(i), heap.get(i).sidechain);
            assert!(spilled.uuid_is(i, &heap.get(i).uuid));
        }
    }

    #[test]
    fn every_kind_survives_its_byte() {
        for n in 0..40 {
            let node = node(n, false);
            let byte = kind_byte(node.sidechain, node.kind);
            assert_eq!(kind_of(byte), node.kind);
            assert_eq!(byte & SIDECHAIN != 0, node.sidechain);
        }
    }
}
