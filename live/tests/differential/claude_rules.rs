//! Claude Code cases of the reader's rules per version (issue 27: `handoff_claude::ReadRules`),
//! each measured at both ends of the verified range (2.1.197 and 2.1.332).

use handoff_live::differential::Mutation;
use serde_json::{json, Value};

use super::{records, to_bytes};

/// A uuid no record of the genuine sessions has.
const LOST_PARENT: &str = "00000000-0000-4000-8000-00000000dead";

/// The indexes of the message records (user and assistant).
fn messages(r: &[Value]) -> Vec<usize> {
    (0..r.len()).filter(|&i| super::is_message(&r[i])).collect()
}

/// The second prompt's parent lost, and a `system` `file_snapshot` record (a root, as 2.1.332's
/// plan snapshot writes one) written 75 ms before that prompt: Claude Code goes on by time from
/// the prompt; 2.1.197 to the snapshot (the first turn is not sent), 2.1.332 passes over it to
/// the first answer, 3.7 s before (the whole conversation is sent).
pub(super) const BY_TIME_SKIPS_FILE_SNAPSHOT: Mutation = Mutation {
    name: "by-time-skips-file-snapshot",
    apply: |b| {
        let mut r = records(b);
        let user2 = messages(&r)[2];
        r[user2]["parentUuid"] = json!(LOST_PARENT);
        let at = handoff_sdk::Timestamp::parse(r[user2]["timestamp"].as_str().unwrap()).unwrap();
        let mut snapshot = json!({"parentUuid": null, "isSidechain": false, "type": "system",
            "subtype": "file_snapshot", "content": "File snapshot", "level": "info",
            "isMeta": true, "uuid": "11111111-2222-4333-8444-555555555555",
            "userType": "external",
            "timestamp": handoff_sdk::Timestamp::from_millis(at.millis() - 75).to_rfc3339()});
        snapshot["cwd"] = r[user2]["cwd"].clone();
        snapshot["sessionId"] = r[user2]["sessionId"].clone();
        r.insert(user2, snapshot);
        to_bytes(&r)
    },
};
