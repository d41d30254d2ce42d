//! Hash maps and sets for the ids met in one session or transcript (record uuids, message ids,
//! call ids, event ids): the readers' indexes, the transcript's validation, the verifier.
//!
//! A reader inserts one id per record or event, so on a long session the hasher shows in profiles:
//! std's SipHash was a fifth of Claude Code's chain walk. These use foldhash's fast variant, which
//! is what `hashbrown` (std's map underneath) itself defaults to: randomly seeded per map, so a
//! crafted file still cannot pick its collisions ahead of time, and several times cheaper than
//! SipHash on short keys. Its output is not stable across versions or runs; never persist it.
//!
//! ```
//! use handoff_transcript::ids::{HashMapExt, HashSetExt, IdMap, IdSet};
//!
//! let mut seen: IdSet<String> = IdSet::with_capacity(2);
//! assert!(seen.insert("call_1".to_owned()));
//! assert!(!seen.insert("call_1".to_owned()));
//! let mut line_of: IdMap<&str, usize> = IdMap::new();
//! line_of.insert("toolu_1", 3);
//! assert_eq!(line_of["toolu_1"], 3);
//! ```

/// The hasher builder of [`IdMap`] and [`IdSet`] (seeded at random, per map).
pub type IdHasher = foldhash::fast::RandomState;

/// A `HashMap` keyed by ids from a session file, with a fast seeded hash.
pub type IdMap<K, V> = std::collections::HashMap<K, V, IdHasher>;

/// A `HashSet` of ids from a session file, with a fast seeded hash.
pub type IdSet<K> = std::collections::HashSet<K, IdHasher>;

/// `IdMap::new()` and `IdMap::with_capacity(n)`, which std offers for SipHash maps only.
pub use foldhash::HashMapExt;
/// `IdSet::new()` and `IdSet::with_capacity(n)`, which std offers for SipHash sets only.
pub use foldhash::HashSetExt;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_and_sets_keep_ids_apart() {
        let mut set: IdSet<[u64; 2]> = IdSet::with_capacity(1000);
        for i in 0..1000u64 {
            assert!(set.insert([i, !i]));
        }
        assert!(!set.insert([7, !7]));
        assert_eq!(set.len(), 1000);
        let mut map: IdMap<Box<str>, u32> = IdMap::default();
        map.insert("msg_1".into(), 1);
        map.insert("msg_2".into(), 2);
        assert_eq!(map.get("msg_2"), Some(&2));
        assert_eq!(map.get("msg_3"), None);
    }

    #[test]
    fn each_map_gets_its_own_seed() {
        use std::hash::BuildHasher;
        let (a, b) = (IdHasher::default(), IdHasher::default());
        let key = "31c027dc-f6fd-435e-b40a-e98d9514124a";
        // Equal for one builder, and (with overwhelming likelihood) different across two.
        assert_eq!(a.hash_one(key), a.hash_one(key));
        assert_ne!(a.hash_one(key), b.hash_one(key));
    }
}
