//! Fast seeded maps and sets for the ids of one session file: core's (`handoff_transcript::ids`), so a
//! plugin and the host hash ids the same way.

pub use handoff_transcript::ids::{HashMapExt, HashSetExt, IdHasher, IdMap, IdSet};
