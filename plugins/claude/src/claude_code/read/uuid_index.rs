//! The index from a record's uuid to its node: a hash table of node positions only, the uuid
//! itself read from the node. Four bytes a slot where a map of `RecordId → u32` takes 32, so a
//! long session's table stays in cache: measured, the map's stores and probes (cache misses on
//! an 8 MB table for 125,000 records) were a tenth of the index pass.

use std::hash::BuildHasher;

use handoff_sdk::ids::IdHasher;
use hashbrown::hash_table::{Entry, HashTable};

use super::nodes::IndexNode;
use super::record_id::RecordId;

#[derive(Default)]
pub(super) struct UuidIndex {
    positions: HashTable<u32>,
    hasher: IdHasher,
}

impl UuidIndex {
    pub(super) fn with_capacity(records: usize) -> Self {
        UuidIndex {
            positions: HashTable::with_capacity(records),
            hasher: IdHasher::default(),
        }
    }

    /// The position of the node with this uuid in `nodes`.
    pub(super) fn get(&self, nodes: &[IndexNode], uuid: &RecordId) -> Option<u32> {
        let hash = self.hasher.hash_one(uuid);
        self.positions
            .find(hash, |&at| nodes[at as usize].uuid == *uuid)
            .copied()
    }

    /// The position of the node with this uuid: the one already indexed, or `next` (the node
    /// about to be pushed onto `nodes`), indexed now.
    pub(super) fn get_or_insert(&mut self, nodes: &[IndexNode], uuid: &RecordId, next: u32) -> u32 {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(uuid);
        match self.positions.entry(
            hash,
            |&at| nodes[at as usize].uuid == *uuid,
            |&at| hasher.hash_one(&nodes[at as usize].uuid),
        ) {
            Entry::Occupied(at) => *at.get(),
            Entry::Vacant(slot) => {
                slot.insert(next);
                next
            }
        }
    }
}
