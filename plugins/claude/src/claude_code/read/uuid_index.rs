//! The index from a record's uuid to its node: a hash table of node positions, each beside 32
//! bits of its uuid's hash, the uuid itself read from the node only when those bits match. Eight
//! bytes a slot where a map of `RecordId → u32` takes 32, so a long session's table stays in
//! cache (measured: the map's stores and probes were a tenth of the index pass), and neither a
//! probe nor the table's growth reads nodes, which a large session keeps in a file
//! ([`super::node_store`]).

use std::hash::BuildHasher;

use handoff_sdk::ids::IdHasher;
use hashbrown::hash_table::{Entry, HashTable};

use super::node_store::NodeStore;
use super::record_id::RecordId;

#[derive(Default)]
pub(super) struct UuidIndex {
    /// (the high 32 bits of the uuid's hash, the node's position).
    positions: HashTable<(u32, u32)>,
    hasher: IdHasher,
}

/// The table's hash of a uuid's 32 kept bits, spread over the 64 (the table takes its buckets
/// from the low bits and its tags from the top ones).
fn spread(bits: u32) -> u64 {
    u64::from(bits).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl UuidIndex {
    pub(super) fn with_capacity(records: usize) -> Self {
        UuidIndex {
            positions: HashTable::with_capacity(records),
            hasher: IdHasher::default(),
        }
    }

    fn bits(&self, uuid: &RecordId) -> u32 {
        (self.hasher.hash_one(uuid) >> 32) as u32
    }

    /// The position of the node with this uuid in `nodes`.
    pub(super) fn get(&self, nodes: &NodeStore, uuid: &RecordId) -> Option<u32> {
        let bits = self.bits(uuid);
        self.positions
            .find(spread(bits), |&(b, at)| {
                b == bits && nodes.uuid_is(at as usize, uuid)
            })
            .map(|&(_, at)| at)
    }

    /// The position of the node with this uuid: the one already indexed, or `next` (the node
    /// about to be pushed onto `nodes`), indexed now.
    pub(super) fn get_or_insert(&mut self, nodes: &NodeStore, uuid: &RecordId, next: u32) -> u32 {
        let bits = self.bits(uuid);
        match self.positions.entry(
            spread(bits),
            |&(b, at)| b == bits && nodes.uuid_is(at as usize, uuid),
            |&(b, _)| spread(b),
        ) {
            Entry::Occupied(at) => at.get().1,
            Entry::Vacant(slot) => {
                slot.insert((bits, next));
                next
            }
        }
    }
}
