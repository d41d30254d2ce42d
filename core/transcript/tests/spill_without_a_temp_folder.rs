//! A spill whose temporary file cannot be made (a full disk, a temporary folder gone) keeps its
//! entries in memory: every answer stays right, only the bound on memory is lost. The engine's
//! validator and fingerprinters spill in the host's own process, where a panic would end it.
//! (Its own test binary: it points `TMPDIR` at nothing for the whole process.)

use handoff_transcript::spill::{RarelyAskedMap, SpillMap, SpillSet};
use handoff_transcript::IdSeeds;

#[test]
fn a_spill_that_cannot_make_its_file_keeps_every_entry_in_memory() {
    let nowhere = std::env::temp_dir().join("handoff-no-such-folder-for-the-spill");
    assert!(!nowhere.exists());
    std::env::set_var("TMPDIR", &nowhere);
    assert!(
        tempfile::tempfile().is_err(),
        "the temporary file must fail here"
    );

    let seeds = IdSeeds::default();
    let mut set = SpillSet::with_threshold(10);
    let mut map = SpillMap::<u64>::with_threshold(0);
    let mut rarely_asked = RarelyAskedMap::<u64>::with_threshold(3);
    for i in 0..5_000u64 {
        rarely_asked.insert(seeds.digest(&format!("e{}", i % 1_000)), i);
        assert!(
            set.insert_new(seeds.digest(&format!("e{i}"))),
            "e{i} is new"
        );
        map.insert(seeds.digest(&format!("e{}", i % 1_000)), i);
    }
    assert!(!set.spilled() && !map.spilled() && !rarely_asked.spilled());
    assert!(!set.insert_new(seeds.digest("e0")));
    assert!(!set.insert_new(seeds.digest("e4999")));
    assert!(set.insert_new(seeds.digest("e5000")));
    assert_eq!(map.get(&seeds.digest("e7")), Some(4_007));
    assert_eq!(map.get(&seeds.digest("e1000")), None);
    assert_eq!(rarely_asked.get(&seeds.digest("e7")), Some(4_007));
    assert_eq!(rarely_asked.get(&seeds.digest("e1000")), None);
}
