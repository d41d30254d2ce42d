//! A map from id digests to small values whose resident size stays bounded however many ids
//! it holds (issue 30: a session of any size in bounded memory): the streamed validator's ids,
//! the Codex reader's, the fingerprinters' positions, the Claude Code reader's uuid index and
//! message ids.
//!
//! Their only questions are "seen before?" and "where was it?", and nearly every one is about an
//! id a few events back (a call and its result) or about an id never seen (each new event's id).
//! So the recent entries stay in a hash table of at most [`spill_ids`] entries; when it is full,
//! its entries are sorted and written as one run of 16-byte digests (and their values) to an
//! anonymous temporary file (`tempfile::tempfile()`: unlinked at once, removed by the system when
//! closed), and the table starts again. On the heap stay one Bloom filter of every digest written
//! out (10 bits a digest, about 2 % false positives; rebuilt from the runs, twice the size, when
//! it is full) and each run's first digest of each block of `BLOCK` entries: a question about an
//! id never seen (each new event's id) is answered by the table and the filter, one cache miss,
//! and the runs are read (a block each, newest first) only on the filter's hit. Runs are merged
//! by tiers: four (`FAN_IN`) runs of one level become one run of the next (through a heap of
//! their heads), so an entry is written about log₄(n / threshold) times and a map of `n` entries
//! has at most three runs a level. (Two runs merged whenever the newer was half the older's size,
//! as first built, wrote each entry log₂ times; a filter a run cost a cache miss a run for every
//! new id. Eight runs a tier wrote less but left more runs to read on a filter's hit: 47 % more
//! block reads at 2 GB, which cost more time than the merges saved.) A merged run's file is
//! kept and a later run written over it from its start (`RunFile`): overwritten pages are
//! already the page cache's, where each new file took new pages (1,211 files for the 1,211 runs
//! and merges of ten thousand entries at ten a run; 50 now).
//!
//! Resident: the table (at most 136 KiB of digests at the default threshold, 200 KiB with
//! 8-byte values) and ~1.3–2.5 bytes an entry spilled (the filter's 10–20 bits, the blocks'
//! first digests).
//! A session below the threshold (nearly all) never touches a file.
//!
//! An insert of a digest already present replaces its value: the newest is found first (the
//! table, then the runs from the newest), and a merge keeps the newer run's entry.
//!
//! A run that cannot be written (a full disk, no temporary folder) is not written: the map keeps
//! its entries in the table from then on, as a map below the threshold does. The answers stay
//! right and only the bound on memory is lost; the engine's validator and fingerprinters run in
//! the host, where a panic would end the process. A run already written that cannot be read back
//! (an I/O error of a file the process holds open) panics, naming the file's purpose: no answer
//! is right then (a reader's panic reaches the host as that reader's error,
//! `PluginError::panicked`).

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::ids::IdMap;
use crate::IdDigest;

mod rarely_asked;

pub use rarely_asked::RarelyAskedMap;

/// Entries the in-memory table holds before they are written out as a run: a table of 8,192
/// buckets is full at 7,168 (7/8), 136 KiB of digests (200 KiB with 8-byte values). Measured on
/// a 107 MB session (52,005 events), the continuation's peak was 23.8 MiB at 8,192 against 30.2
/// at 57,344, with the same CPU time; fewer costs more runs for little less peak.
/// `HANDOFF_SPILL_IDS` sets another (read once: the tests set 0 to put every entry in a file).
const SPILL_IDS_DEFAULT: usize = 7_168;

/// Entries in a block of a run: the unit read back on a filter's hit (4 KiB of digests).
const BLOCK: usize = 256;

/// Runs of one level merged into one run of the next.
const FAN_IN: usize = 4;

/// Bits of the Bloom filter per entry, and the filter's probes. The filter is blocked: an
/// entry's probes all fall in one 64-bit word, so a question costs one cache miss a run (≈ 2 %
/// false positives at these numbers, against ≈ 1 % unblocked).
const BLOOM_BITS_AN_ENTRY: u64 = 10;
const BLOOM_PROBES: u32 = 6;

/// The threshold of the process: `HANDOFF_SPILL_IDS`, else `SPILL_IDS_DEFAULT`.
pub fn spill_ids() -> usize {
    static AFTER: OnceLock<usize> = OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var("HANDOFF_SPILL_IDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SPILL_IDS_DEFAULT)
    })
}

/// A value a [`SpillMap`] holds: fixed-size, copied in and out of its file.
pub trait SpillValue: Copy {
    /// Its size in the file.
    const BYTES: usize;
    /// Appends its bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads it from its [`Self::BYTES`] bytes.
    fn take(bytes: &[u8]) -> Self;
}

impl SpillValue for () {
    const BYTES: usize = 0;
    fn put(self, _: &mut Vec<u8>) {}
    fn take(_: &[u8]) -> Self {}
}

impl SpillValue for u64 {
    const BYTES: usize = 8;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(bytes: &[u8]) -> Self {
        u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
    }
}

/// Id digests → values, the older ones in a temporary file (see the module's doc).
pub struct SpillMap<V: SpillValue> {
    hot: IdMap<IdDigest, V>,
    /// Entries the table holds before it is written out.
    threshold: usize,
    /// Oldest first.
    runs: Vec<Run>,
    /// A Bloom filter of the digests in the runs, and how many it is sized for.
    filter: Vec<u64>,
    filter_capacity: u64,
    /// Entries written to the runs (a digest written twice counts twice).
    spilled: u64,
    /// The block a lookup reads from a run, kept between lookups.
    block: RefCell<Vec<u8>>,
    /// The files of runs merged away, to write later runs over (see [`RunFile`]).
    spare: Vec<RunFile>,
    /// Temporary files made.
    files_made: u64,
    /// Not `Sync`: a lookup reads a run's block into the map's one buffer, so two threads asking
    /// at once through shared references would read into each other's. (`Send` it is.)
    not_sync: PhantomData<Cell<()>>,
}

/// A set of id digests: a [`SpillMap`] without values.
pub type SpillSet = SpillMap<()>;

/// One sorted run in its own temporary file.
struct Run {
    file: RunFile,
    entries: u64,
    /// The first digest of each block.
    fences: Vec<IdDigest>,
    /// 0 for a table written out, one more than its runs' for a merge.
    level: u32,
}

impl<V: SpillValue> Default for SpillMap<V> {
    fn default() -> Self {
        SpillMap::with_threshold(spill_ids())
    }
}

impl<V: SpillValue> SpillMap<V> {
    /// An empty map that writes its table out past `threshold` entries (0: at every insert).
    pub fn with_threshold(threshold: usize) -> Self {
        SpillMap {
            hot: IdMap::default(),
            threshold,
            runs: Vec::new(),
            filter: Vec::new(),
            filter_capacity: 0,
            spilled: 0,
            block: RefCell::default(),
            spare: Vec::new(),
            files_made: 0,
            not_sync: PhantomData,
        }
    }

    /// The value of `key`'s newest insert, if any.
    pub fn get(&self, key: &IdDigest) -> Option<V> {
        if let Some(v) = self.hot.get(key) {
            return Some(*v);
        }
        if self.runs.is_empty() || !bloom_may_hold(&self.filter, key) {
            return None;
        }
        let mut block = self.block.borrow_mut();
        self.runs
            .iter()
            .rev()
            .find_map(|run| run.get(key, &mut block))
    }

    /// Whether `key` was inserted.
    pub fn contains(&self, key: &IdDigest) -> bool {
        self.get(key).is_some()
    }

    /// Inserts `key` with `value`, replacing an earlier value.
    pub fn insert(&mut self, key: IdDigest, value: V) {
        self.hot.insert(key, value);
        if self.hot.len() > self.threshold {
            self.spill();
        }
    }

    /// Whether any entry went to a file.
    pub fn spilled(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Writes the table out as a run, then merges runs of like sizes. Where the run cannot be
    /// written, the table keeps its entries and stops spilling (the module's doc).
    fn spill(&mut self) {
        let entries = sorted_by_digest(self.hot.iter().map(|(k, v)| (*k, *v)).collect());
        let file = self.take_spare(entries.len() * record_bytes::<V>());
        let run = match RunWriter::<V>::write(file, &entries) {
            Ok(run) => run,
            Err(_) => {
                self.threshold = usize::MAX;
                return;
            }
        };
        self.hot.clear();
        let count = entries.len() as u64;
        self.spilled += count;
        if self.spilled > self.filter_capacity {
            // Sized anew for twice the entries, from the runs already written and these.
            self.filter_capacity = (self.spilled * 2).max(1024);
            self.filter = Vec::new();
            self.filter =
                vec![0; (self.filter_capacity * BLOOM_BITS_AN_ENTRY).div_ceil(64) as usize];
            for run in &self.runs {
                let mut reader = RunReader::<V>::new(run);
                while let Some((k, _)) = reader.next() {
                    bloom_add(&mut self.filter, &k);
                }
            }
        }
        for (k, _) in &entries {
            bloom_add(&mut self.filter, k);
        }
        self.runs.push(run);
        while let Some(newest) = self
            .runs
            .len()
            .checked_sub(FAN_IN)
            .map(|at| &self.runs[at..])
        {
            if newest.iter().any(|run| run.level != newest[0].level) {
                break;
            }
            let bytes =
                newest.iter().map(|run| run.entries as usize).sum::<usize>() * record_bytes::<V>();
            let file = self.take_spare(bytes);
            match merge::<V>(file, &self.runs[self.runs.len() - FAN_IN..]) {
                Ok(merged) => {
                    let merged_away = self.runs.split_off(self.runs.len() - FAN_IN);
                    self.runs.push(merged);
                    self.keep_spare(merged_away.into_iter().map(|run| run.file));
                }
                // Unmerged runs answer the same, more block reads a question on a hit.
                Err(_) => break,
            }
        }
    }

    /// The spare file that holds `bytes` with the fewest bytes to spare, else the largest (it
    /// grows), else none (a new file is made).
    fn take_spare(&mut self, bytes: usize) -> Option<RunFile> {
        let spares = || self.spare.iter().enumerate();
        let fitting = spares()
            .filter(|(_, s)| s.len >= bytes as u64)
            .min_by_key(|(_, s)| s.len);
        match fitting.or_else(|| spares().max_by_key(|(_, s)| s.len)) {
            Some((at, _)) => Some(self.spare.swap_remove(at)),
            None => {
                self.files_made += 1;
                None
            }
        }
    }

    /// Keeps `files` as spares, dropping the smallest past [`SPARE_FILES`].
    fn keep_spare(&mut self, files: impl IntoIterator<Item = RunFile>) {
        self.spare.extend(files);
        if self.spare.len() > SPARE_FILES {
            self.spare.sort_unstable_by_key(|s| Reverse(s.len));
            self.spare.truncate(SPARE_FILES);
        }
    }
}

impl SpillSet {
    /// Inserts `key`; whether it was not there before.
    pub fn insert_new(&mut self, key: IdDigest) -> bool {
        if self.contains(&key) {
            return false;
        }
        self.insert(key, ());
        true
    }
}

/// `entries` in ascending order of digest. Digests are uniformly random (seeded hashes), so one
/// counting pass on the first byte spreads them over 256 buckets of about 28, each then sorted
/// on its own: sorting the whole table by comparison was a third of spilling it.
fn sorted_by_digest<V: Copy>(entries: Vec<(IdDigest, V)>) -> Vec<(IdDigest, V)> {
    let bucket = |key: &IdDigest| (key.words()[0] >> 56) as usize;
    let mut starts = [0usize; 257];
    for (key, _) in &entries {
        starts[bucket(key) + 1] += 1;
    }
    for b in 0..256 {
        starts[b + 1] += starts[b];
    }
    let mut next = starts;
    let mut sorted = entries.clone();
    for &(key, value) in &entries {
        let b = bucket(&key);
        sorted[next[b]] = (key, value);
        next[b] += 1;
    }
    for b in 0..256 {
        sorted[starts[b]..starts[b + 1]].sort_unstable_by_key(|(key, _)| *key);
    }
    sorted
}

fn record_bytes<V: SpillValue>() -> usize {
    16 + V::BYTES
}

fn io_failed(what: &str, e: std::io::Error) -> ! {
    panic!("the ids' temporary file (issue 30's spill of id digests) could not be {what}: {e}")
}

fn put_key(key: IdDigest, out: &mut Vec<u8>) {
    let [a, b] = key.words();
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&b.to_le_bytes());
}

fn take_key(bytes: &[u8]) -> IdDigest {
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    IdDigest::from_words([word(0), word(8)])
}

/// The filter's word for `key` among `words` (multiply-shift of the digest's first word, which
/// is already random) and the word's bits (six 6-bit fields of the second).
fn bloom_probe(key: &IdDigest, words: usize) -> (usize, u64) {
    let [a, b] = key.words();
    let word = ((u128::from(a) * words as u128) >> 64) as usize;
    let bits = (0..BLOOM_PROBES).fold(0u64, |bits, i| bits | 1 << ((b >> (6 * i)) & 63));
    (word, bits)
}

/// Whether `bloom` may hold `key` (false: it certainly does not).
fn bloom_may_hold(bloom: &[u64], key: &IdDigest) -> bool {
    let (word, bits) = bloom_probe(key, bloom.len());
    bloom[word] & bits == bits
}

/// Adds `key` to `bloom`.
fn bloom_add(bloom: &mut [u64], key: &IdDigest) {
    let (word, bits) = bloom_probe(key, bloom.len());
    bloom[word] |= bits;
}

impl Run {
    /// `key`'s value in this run, reading the one block that may hold it into `block`.
    fn get<V: SpillValue>(&self, key: &IdDigest, block: &mut Vec<u8>) -> Option<V> {
        // The block whose first digest is the last at or before `key`.
        let index = self.fences.partition_point(|f| f <= key).checked_sub(1)?;
        let size = record_bytes::<V>();
        let first = index * BLOCK;
        let count = (self.entries as usize - first).min(BLOCK);
        block.resize(count * size, 0);
        read_at(&self.file.file, block, (first * size) as u64)
            .unwrap_or_else(|e| io_failed("read", e));
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = (low + high) / 2;
            let record = &block[middle * size..(middle + 1) * size];
            match take_key(record).cmp(key) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(V::take(&record[16..])),
            }
        }
        None
    }
}

/// A run's temporary file and how many bytes it holds. A run merged away leaves its file to a
/// later run of its map, which writes over it from its start: pages the page cache already holds
/// are written over, where a new file takes new pages of memory for each (on a virtual machine
/// whose free pages go back to the host, a fault on the host each) and gives them back when
/// deleted. What lies past a run's records is an older run's, never read.
struct RunFile {
    file: File,
    len: u64,
}

/// Spare files a map keeps: a merge leaves [`FAN_IN`], and each later run takes one.
const SPARE_FILES: usize = 2 * FAN_IN;

/// Fills `buf` from `file` at `offset`: one `pread` where there is one.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// How many bytes of records a run's writer gathers before it writes them to the file.
const WRITE_AT: usize = 64 << 10;

/// Writes a run's entries in ascending order, noting its fences as it goes.
struct RunWriter<V> {
    file: RunFile,
    entries: u64,
    fences: Vec<IdDigest>,
    /// Records not written to the file yet (at most [`WRITE_AT`] bytes and one record).
    pending: Vec<u8>,
    _value: std::marker::PhantomData<V>,
}

impl<V: SpillValue> RunWriter<V> {
    /// A writer into `spare` from its start, or into a new temporary file.
    fn new(spare: Option<RunFile>) -> std::io::Result<Self> {
        let file = match spare {
            Some(mut spare) => {
                spare.file.seek(SeekFrom::Start(0))?;
                spare
            }
            None => RunFile {
                file: tempfile::tempfile()?,
                len: 0,
            },
        };
        Ok(RunWriter {
            file,
            entries: 0,
            fences: Vec::new(),
            pending: Vec::with_capacity(WRITE_AT + record_bytes::<V>()),
            _value: std::marker::PhantomData,
        })
    }

    /// A run of `entries`, sorted.
    fn write(spare: Option<RunFile>, entries: &[(IdDigest, V)]) -> std::io::Result<Run> {
        let mut writer = RunWriter::new(spare)?;
        for &(k, v) in entries {
            writer.push(k, v)?;
        }
        writer.finish()
    }

    fn push(&mut self, key: IdDigest, value: V) -> std::io::Result<()> {
        if self.entries.is_multiple_of(BLOCK as u64) {
            self.fences.push(key);
        }
        put_key(key, &mut self.pending);
        value.put(&mut self.pending);
        self.entries += 1;
        if self.pending.len() >= WRITE_AT {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.file.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<Run> {
        self.flush()?;
        let bytes = self.entries * record_bytes::<V>() as u64;
        self.file.len = self.file.len.max(bytes);
        let mut fences = self.fences;
        fences.shrink_to_fit();
        Ok(Run {
            file: self.file,
            entries: self.entries,
            fences,
            level: 0,
        })
    }
}

/// Reads a run's entries in order.
struct RunReader<'r, V> {
    input: BufReader<&'r File>,
    left: u64,
    buf: Vec<u8>,
    _value: std::marker::PhantomData<V>,
}

impl<'r, V: SpillValue> RunReader<'r, V> {
    fn new(run: &'r Run) -> Self {
        RunReader::over(&run.file.file, run.entries)
    }

    /// The first `entries` records of `file`, from its start.
    fn over(mut file: &'r File, entries: u64) -> Self {
        file.seek(SeekFrom::Start(0))
            .unwrap_or_else(|e| io_failed("read", e));
        RunReader {
            input: BufReader::with_capacity(64 << 10, file),
            left: entries,
            buf: vec![0; record_bytes::<V>()],
            _value: std::marker::PhantomData,
        }
    }

    fn next(&mut self) -> Option<(IdDigest, V)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.input
            .read_exact(&mut self.buf)
            .unwrap_or_else(|e| io_failed("read", e));
        Some((take_key(&self.buf), V::take(&self.buf[16..])))
    }
}

/// One run of `runs` (oldest first), a level above theirs; where several hold a digest, the
/// newest's value is kept.
fn merge<V: SpillValue>(spare: Option<RunFile>, runs: &[Run]) -> std::io::Result<Run> {
    let mut writer = RunWriter::<V>::new(spare)?;
    let mut readers: Vec<RunReader<V>> = runs.iter().map(RunReader::new).collect();
    // Each run's head in a min-heap by digest, and for one digest the newest run first; the
    // heads' values beside it, by run.
    let mut values: Vec<Option<V>> = vec![None; readers.len()];
    let mut heads = BinaryHeap::with_capacity(readers.len());
    for (run, reader) in readers.iter_mut().enumerate() {
        if let Some((key, value)) = reader.next() {
            values[run] = Some(value);
            heads.push(Reverse((key, Reverse(run))));
        }
    }
    let mut last = None;
    while let Some(Reverse((key, Reverse(run)))) = heads.pop() {
        let value = values[run].take().expect("a head's value");
        if let Some((next, next_value)) = readers[run].next() {
            values[run] = Some(next_value);
            heads.push(Reverse((next, Reverse(run))));
        }
        // An older run's entry for a digest already written is left out.
        if last != Some(key) {
            last = Some(key);
            writer.push(key, value)?;
        }
    }
    let mut merged = writer.finish()?;
    merged.level = runs[0].level + 1;
    Ok(merged)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::IdSeeds;

    /// A map the model checks: a [`SpillMap`] or a [`RarelyAskedMap`].
    pub(super) trait CheckedMap {
        fn insert(&mut self, key: IdDigest, value: u64);
        fn get(&mut self, key: &IdDigest) -> Option<u64>;
        fn spilled(&self) -> bool;
    }

    impl CheckedMap for SpillMap<u64> {
        fn insert(&mut self, key: IdDigest, value: u64) {
            SpillMap::insert(self, key, value);
        }
        fn get(&mut self, key: &IdDigest) -> Option<u64> {
            SpillMap::get(self, key)
        }
        fn spilled(&self) -> bool {
            SpillMap::spilled(self)
        }
    }

    /// The model: a plain map, newest insert wins. `map` (of `threshold`) is asked before one
    /// insert in `ask_every` and about every id at the end.
    pub(super) fn check_against_model(
        mut map: impl CheckedMap,
        threshold: usize,
        inserts: u64,
        distinct: u64,
        ask_every: u64,
    ) {
        let seeds = IdSeeds::default();
        let mut model = std::collections::HashMap::new();
        // A deterministic walk over `distinct` ids, revisiting some (a later value replaces).
        for i in 0..inserts {
            let id = format!("id-{}", (i * 7919) % distinct);
            let key = seeds.digest(&id);
            if i % ask_every == ask_every - 1 {
                assert_eq!(map.get(&key), model.get(&id).copied(), "before insert {i}");
            }
            map.insert(key, i);
            model.insert(id, i);
        }
        for n in 0..distinct + 50 {
            let id = format!("id-{n}");
            assert_eq!(map.get(&seeds.digest(&id)), model.get(&id).copied(), "{id}");
        }
        assert_eq!(map.spilled(), inserts > threshold as u64);
    }

    #[test]
    fn a_map_in_memory_and_in_files_answers_as_a_plain_map_does() {
        for (threshold, inserts, distinct) in [
            (usize::MAX, 3000, 2000),
            (0, 3000, 2000),
            (3, 3000, 2000),
            (100, 5000, 700),
            (1000, 2000, 5000),
        ] {
            let map = SpillMap::<u64>::with_threshold(threshold);
            check_against_model(map, threshold, inserts, distinct, 1);
        }
    }

    #[test]
    fn runs_are_merged_so_few_remain() {
        let seeds = IdSeeds::default();
        let mut set = SpillSet::with_threshold(10);
        for i in 0..10_000 {
            assert!(set.insert_new(seeds.digest(&format!("e{i}"))));
        }
        // At most three runs a level of log₄(10,000 / 11) levels, not 909 (909 is 32031 in base
        // four: 9 runs); each merge of four runs of one level made a run of the next.
        assert!(set.runs.len() <= 9, "{} runs", set.runs.len());
        for level in 0..=set.runs.iter().map(|r| r.level).max().unwrap_or(0) {
            let at_level = set.runs.iter().filter(|r| r.level == level).count();
            assert!(at_level < FAN_IN, "{at_level} runs at level {level}");
        }
        assert!(set.runs.windows(2).all(|w| w[0].level >= w[1].level));
        assert!(!set.insert_new(seeds.digest("e0")));
        assert!(!set.insert_new(seeds.digest("e9999")));
        assert!(set.insert_new(seeds.digest("e10000")));
    }

    /// Runs are written over the files of runs merged away: ten thousand entries at ten a run
    /// write 909 runs and 302 merges (1,211 files without reuse) into a few dozen files (50).
    #[test]
    fn later_runs_are_written_over_the_files_of_merged_runs() {
        let seeds = IdSeeds::default();
        let mut map = SpillMap::<u64>::with_threshold(10);
        for i in 0..10_000u64 {
            map.insert(seeds.digest(&format!("e{i}")), i);
        }
        assert!(map.files_made <= 64, "{} files made", map.files_made);
        assert!(map.spare.len() <= SPARE_FILES);
        // What a reused file holds past its run's records (an older run's) is never read.
        for i in (0..10_000u64).step_by(7) {
            assert_eq!(map.get(&seeds.digest(&format!("e{i}"))), Some(i), "e{i}");
        }
        assert_eq!(map.get(&seeds.digest("e10000")), None);
    }

    /// The bucketed sort gives what a comparison sort gives, digests skewed into one bucket too.
    #[test]
    fn entries_are_sorted_by_digest() {
        let seeds = IdSeeds::default();
        for n in [0, 1, 2, 300, 7_168] {
            let entries: Vec<(IdDigest, u64)> = (0..n)
                .map(|i| (seeds.digest(&format!("id-{i}")), i as u64))
                .collect();
            let mut want = entries.clone();
            want.sort_unstable_by_key(|(k, _)| *k);
            assert_eq!(sorted_by_digest(entries), want, "{n}");
        }
        let skewed: Vec<(IdDigest, ())> = (0..500u64)
            .map(|i| {
                (
                    IdDigest::from_words([i.wrapping_mul(0x9e37_79b9) & 0xffff, !i]),
                    (),
                )
            })
            .collect();
        let mut want = skewed.clone();
        want.sort_unstable_by_key(|(k, _)| *k);
        assert_eq!(sorted_by_digest(skewed), want);
    }

    #[test]
    fn a_small_map_never_makes_a_file() {
        let seeds = IdSeeds::default();
        let mut set = SpillSet::with_threshold(SPILL_IDS_DEFAULT);
        for i in 0..1000 {
            set.insert(seeds.digest(&format!("e{i}")), ());
        }
        assert!(!set.spilled());
        assert!(set.contains(&seeds.digest("e999")));
    }

    #[test]
    fn the_filter_rules_out_nearly_every_absent_digest() {
        let seeds = IdSeeds::default();
        let mut set = SpillSet::with_threshold(100);
        for i in 0..10_000 {
            set.insert(seeds.digest(&format!("in{i}")), ());
        }
        assert!((0..10_000).all(|i| set.contains(&seeds.digest(&format!("in{i}")))));
        let passed = (0..10_000)
            .filter(|i| bloom_may_hold(&set.filter, &seeds.digest(&format!("out{i}"))))
            .count();
        // ≈ 2 % expected; 4 % leaves room for chance.
        assert!(
            passed < 400,
            "{passed} of 10,000 absent digests passed the filter"
        );
    }
}
