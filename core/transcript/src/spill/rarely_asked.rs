//! A [`SpillMap`] for a map that is written for every event and asked only now and then: the
//! fingerprinters' event id → position, asked only by a compaction (for the event it replaces
//! through). Sorting, merging and filtering every spilled entry, as a map asked about every
//! event must, would be work for questions that mostly never come: at 2 GB, each fingerprinter
//! wrote 96.5 MB of runs (4.0 million entries) and read none of them.
//!
//! So until a question misses its table, each full table is appended as it is to one temporary
//! file (24 bytes an entry, written once, never read), and nothing more is kept. The first
//! question its table cannot answer reads the file back, table by table, into a [`SpillMap`]
//! (which sorts, merges and filters them as if it had held them from the start) and the map is
//! that map from then on: a session that asks pays what it always paid, and one more pass over
//! the file.

use std::fs::File;
use std::io::Write;

use crate::ids::IdMap;
use crate::IdDigest;

use super::{put_key, RunReader, SpillMap, SpillValue};

/// Id digests → values, asked rarely (see the module's doc).
pub struct RarelyAskedMap<V: SpillValue> {
    state: State<V>,
}

enum State<V: SpillValue> {
    /// Never asked past its table yet.
    Logging {
        recent: IdMap<IdDigest, V>,
        threshold: usize,
        log: Option<TableLog>,
    },
    /// Asked past its table once: a map asked about any entry.
    Sorted(SpillMap<V>),
}

/// Full tables, oldest first, in one temporary file.
struct TableLog {
    file: File,
    /// The entries of each table written whole.
    tables: Vec<usize>,
    /// A table's bytes before they are written.
    bytes: Vec<u8>,
}

impl<V: SpillValue> RarelyAskedMap<V> {
    /// An empty map that writes its table out past `threshold` entries (0: at every insert).
    pub fn with_threshold(threshold: usize) -> Self {
        RarelyAskedMap {
            state: State::Logging {
                recent: IdMap::default(),
                threshold,
                log: None,
            },
        }
    }

    /// Inserts `key` with `value`, replacing an earlier value.
    pub fn insert(&mut self, key: IdDigest, value: V) {
        let (recent, threshold, log) = match &mut self.state {
            State::Sorted(map) => return map.insert(key, value),
            State::Logging {
                recent,
                threshold,
                log,
            } => (recent, threshold, log),
        };
        recent.insert(key, value);
        if recent.len() > *threshold {
            // A table that cannot be written stays: the map keeps its entries in memory from
            // then on, as `SpillMap` does, and answers the same.
            match append(log, recent) {
                Ok(()) => recent.clear(),
                Err(_) => *threshold = usize::MAX,
            }
        }
    }

    /// The value of `key`'s newest insert, if any. The first question the table cannot answer
    /// sorts what went to the file into a [`SpillMap`].
    pub fn get(&mut self, key: &IdDigest) -> Option<V> {
        let (recent, threshold, log) = match &mut self.state {
            State::Sorted(map) => return map.get(key),
            State::Logging {
                recent,
                threshold,
                log,
            } => (recent, *threshold, log),
        };
        if let Some(value) = recent.get(key) {
            return Some(*value);
        }
        let log = log.take()?;
        let mut map = SpillMap::with_threshold(threshold);
        log.replay(|key, value| map.insert(key, value));
        for (key, value) in recent.drain() {
            map.insert(key, value);
        }
        let value = map.get(key);
        self.state = State::Sorted(map);
        value
    }

    /// Whether any entry went to a file.
    pub fn spilled(&self) -> bool {
        match &self.state {
            State::Sorted(map) => map.spilled(),
            State::Logging { log, .. } => log.is_some(),
        }
    }
}

/// Appends `table` to `log`, making the file at the first table.
fn append<V: SpillValue>(
    log: &mut Option<TableLog>,
    table: &IdMap<IdDigest, V>,
) -> std::io::Result<()> {
    if log.is_none() {
        *log = Some(TableLog {
            file: tempfile::tempfile()?,
            tables: Vec::new(),
            bytes: Vec::new(),
        });
    }
    let log = log.as_mut().expect("made above");
    log.bytes.clear();
    for (key, value) in table {
        put_key(*key, &mut log.bytes);
        value.put(&mut log.bytes);
    }
    log.file.write_all(&log.bytes)?;
    log.tables.push(table.len());
    Ok(())
}

impl TableLog {
    /// Each entry of each table whole, oldest table first. What a failed write left past the
    /// last whole table is not read.
    fn replay<V: SpillValue>(self, mut each: impl FnMut(IdDigest, V)) {
        let entries = self.tables.iter().sum::<usize>() as u64;
        let mut records = RunReader::<V>::over(&self.file, entries);
        while let Some((key, value)) = records.next() {
            each(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_against_model, CheckedMap};
    use super::*;
    use crate::IdSeeds;

    impl CheckedMap for RarelyAskedMap<u64> {
        fn insert(&mut self, key: IdDigest, value: u64) {
            RarelyAskedMap::insert(self, key, value);
        }
        fn get(&mut self, key: &IdDigest) -> Option<u64> {
            RarelyAskedMap::get(self, key)
        }
        fn spilled(&self) -> bool {
            RarelyAskedMap::spilled(self)
        }
    }

    /// Asked at every insert, once in a thousand, and first at the end, long after its tables
    /// went to the file.
    #[test]
    fn a_map_asked_rarely_answers_as_a_plain_map_does() {
        for (threshold, inserts, distinct, ask_every) in [
            (usize::MAX, 3000, 2000, 1),
            (0, 3000, 2000, 1),
            (3, 3000, 2000, 1000),
            (100, 5000, 700, 2500),
            (1000, 20_000, 5000, 1_000_000),
        ] {
            let map = RarelyAskedMap::<u64>::with_threshold(threshold);
            check_against_model(map, threshold, inserts, distinct, ask_every);
        }
    }

    /// Unasked, the tables are only appended: no sorted run, no filter.
    #[test]
    fn an_unasked_map_only_appends_its_tables() {
        let seeds = IdSeeds::default();
        let mut map = RarelyAskedMap::<u64>::with_threshold(10);
        for i in 0..1000u64 {
            map.insert(seeds.digest(&format!("e{i}")), i);
        }
        let State::Logging {
            log: Some(log),
            recent,
            ..
        } = &map.state
        else {
            panic!("sorted before any question");
        };
        assert_eq!(log.tables.iter().sum::<usize>() + recent.len(), 1000);
        assert_eq!(
            log.file.metadata().unwrap().len(),
            (log.tables.iter().sum::<usize>() * 24) as u64
        );
        // A question the table answers leaves it so; one it cannot sorts the file into runs.
        assert_eq!(map.get(&seeds.digest("e999")), Some(999));
        assert!(matches!(map.state, State::Logging { .. }));
        assert_eq!(map.get(&seeds.digest("e0")), Some(0));
        assert!(matches!(&map.state, State::Sorted(m) if m.spilled()));
        assert_eq!(map.get(&seeds.digest("e500")), Some(500));
    }
}
