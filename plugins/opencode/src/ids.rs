//! OpenCode's ids: `<prefix>_` + 12 hex digits of (milliseconds × 4096 + a counter) + 14 random
//! base62 characters. Messages and parts are read back ordered by id (parts) or by time and id
//! (messages), so the writer makes them strictly ascending; a session id is descending (its hex
//! digits inverted), as OpenCode makes them, so newer sessions sort first.

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Makes ascending ids for one write.
pub struct Ids {
    last: u64,
}

impl Ids {
    /// A generator that starts at the current time.
    pub fn new() -> Self {
        Ids { last: 0 }
    }

    fn next_value(&mut self) -> u64 {
        let now = now_ms().max(0) as u64 * 0x1000;
        self.last = now.max(self.last + 1);
        self.last & 0xffff_ffff_ffff
    }

    /// The next ascending id with this prefix (`msg`, `prt`).
    pub fn ascending(&mut self, prefix: &str) -> String {
        let value = self.next_value();
        format!("{prefix}_{value:012x}{}", random14())
    }

    /// A descending id (a session's).
    pub fn descending(&mut self, prefix: &str) -> String {
        let value = !self.next_value() & 0xffff_ffff_ffff;
        format!("{prefix}_{value:012x}{}", random14())
    }
}

fn random14() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes[..14]
        .iter()
        .map(|b| BASE62[(*b as usize) % BASE62.len()] as char)
        .collect()
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_ids_sort_in_the_order_they_are_made() {
        let mut ids = Ids::new();
        let made: Vec<String> = (0..2000).map(|_| ids.ascending("prt")).collect();
        let mut sorted = made.clone();
        sorted.sort();
        assert_eq!(made, sorted);
        assert!(made.iter().all(|id| id.len() == "prt_".len() + 26));
    }

    #[test]
    fn descending_ids_sort_newest_first() {
        let mut ids = Ids::new();
        let older = ids.descending("ses");
        let newer = ids.descending("ses");
        assert!(newer < older);
    }
}
