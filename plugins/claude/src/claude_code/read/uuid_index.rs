//! The index from a record's uuid to its node's position: the uuid's 128-bit digest (two
//! randomly seeded hashes: a file cannot choose colliding uuids) → the position, in a
//! [`SpillMap`]. Its recent entries are a small hash table and the older ones sorted runs in a
//! temporary file past a threshold (issue 30): a long session's index keeps ~1.3 bytes a record
//! resident (was an 8-byte slot a record, and the table's slack), and a question never reads a
//! node, which a large session keeps in a file ([`super::node_store`]). Nearly every question is
//! about a record a few lines back (a parent) or a new one (each record's own uuid), which the
//! table and the runs' filters answer without reading the file.

use handoff_sdk::spill::SpillMap;
use handoff_sdk::{IdDigest, IdSeeds};

use super::record_id::RecordId;

#[derive(Default)]
pub(super) struct UuidIndex {
    positions: SpillMap<u64>,
    seeds: IdSeeds,
}

impl UuidIndex {
    /// An index whose older entries go to a temporary file past `threshold` records.
    pub(super) fn spilling_past(threshold: usize) -> Self {
        UuidIndex {
            positions: SpillMap::with_threshold(threshold),
            seeds: IdSeeds::default(),
        }
    }

    fn key(&self, uuid: &RecordId) -> IdDigest {
        match uuid {
            RecordId::Uuid(halves) => self.seeds.digest_words(*halves),
            RecordId::Text(text) => self.seeds.digest(text),
        }
    }

    /// The position of the node with this uuid.
    pub(super) fn get(&self, uuid: &RecordId) -> Option<u32> {
        self.positions.get(&self.key(uuid)).map(|at| at as u32)
    }

    /// The position of the node with this uuid: the one already indexed, or `next` (the node
    /// about to be pushed), indexed now.
    pub(super) fn get_or_insert(&mut self, uuid: &RecordId, next: u32) -> u32 {
        let key = self.key(uuid);
        match self.positions.get(&key) {
            Some(at) => at as u32,
            None => {
                self.positions.insert(key, u64::from(next));
                next
            }
        }
    }
}
