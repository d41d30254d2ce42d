//! Crash safety of `handoff continue`, tried as a user would: SIGKILL at many points of a create
//! and an append of a large session, a crash at each exact point of the engine, a full disk, a
//! read-only store root, and many runs at once on a fresh certificate folder. After each, the next
//! command leaves every session with exactly its old bytes or its complete new ones and nothing else
//! behind (no journal, backup, temp file or scratch folder), and a rerun succeeds on the same id.
//!
//! Sizes (defaults fit CI on two cores): `HANDOFF_KILL_TURNS` turns in the large session (4 events
//! each), `HANDOFF_KILLS` kills per kind of write.

mod first_use;
mod fuzz_found;
mod inputs;
mod kills;
mod limits;
mod planted;
mod points;
mod support;
