//! Which entries are the conversation, with pi's own semantics (`buildSessionContext` and
//! `convertToLlm` of pi 0.73.1).
//!
//! - The leaf is the last entry in file order; the conversation is the path from it to the root
//!   by `parentId`. Entries off that path (abandoned branches) are not part of it.
//! - On the path, what pi sends to a model becomes an event: user, assistant and tool result
//!   messages; `custom_message`, a non-empty `branch_summary`, `bashExecution` (unless
//!   `excludeFromContext`), and the `custom` / `branchSummary` / `compactionSummary` roles, all
//!   sent as user text; compactions (below). Everything else on the path is carried opaquely
//!   (settings, labels, names, extension data, and assistant messages that stopped with `error`
//!   or `aborted`, which pi never sends).
//! - The last compaction on the path governs: pi sends its summary, then the path from its
//!   `firstKeptEntryId` (when found before it), then what follows it. An earlier compaction pi
//!   never shows; it is an event only where the governing one hides it anyway (before the first
//!   kept entry), so the canonical model, which shows an earlier compaction's summary when it is
//!   still in view, means the same. A governing compaction that replaces no event (its summary
//!   goes before the whole path) has no canonical form: it is carried, with every earlier one.

use foldhash::{HashMap, HashMapExt};
use handoff_sdk::PluginError;

use super::read::{malformed, Facts, Scan};

/// What a path entry becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A user, assistant or tool result event.
    Message,
    /// A user event made from what pi sends as user text (custom messages, summaries, bash runs).
    AsUser,
    /// A compaction event replacing everything up to the path position given.
    Compaction {
        /// Path position of the last replaced event.
        through: usize,
    },
    /// Not sent to a model: carried opaquely on the next event.
    Carried,
}

impl Role {
    /// Whether the entry becomes an event.
    pub fn is_event(self) -> bool {
        !matches!(self, Role::Carried)
    }
}

/// The conversation of a scanned file: the path (slot indices, root first) and each one's role.
#[derive(Debug)]
pub struct Conversation {
    /// Slot indices from the root to the leaf.
    pub path: Vec<usize>,
    /// The role of each path position.
    pub roles: Vec<Role>,
}

/// pi's path from the leaf (the last entry in file order) to the root: slot indices, root first.
pub fn path(scan: &Scan) -> Result<Vec<usize>, PluginError> {
    let slots = &scan.slots;
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(slots.len());
    let mut leaf = None;
    for (i, slot) in slots.iter().enumerate() {
        if slot.is_header {
            continue;
        }
        by_id.insert(&slot.id, i);
        leaf = Some(i);
    }
    let mut path = Vec::new();
    let mut current = leaf;
    while let Some(i) = current {
        if path.len() > slots.len() {
            let slot = &slots[i];
            return Err(malformed(
                &scan.path,
                slot.line,
                Some("parentId"),
                format!("the parent chain loops through entry {:?}", slot.id),
            ));
        }
        path.push(i);
        current = slots[i]
            .parent
            .as_deref()
            .and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    Ok(path)
}

/// What an entry is, before compactions are looked at.
pub fn base_role(kind: &str, facts: &Facts<'_>, version: u64) -> Role {
    match kind {
        "message" => match facts.role {
            None => Role::Carried,
            Some("user" | "toolResult") => Role::Message,
            Some("assistant") => match facts.stop_reason {
                Some("error" | "aborted") => Role::Carried,
                _ => Role::Message,
            },
            Some("bashExecution") if facts.exclude => Role::Carried,
            Some("bashExecution" | "custom" | "branchSummary" | "compactionSummary") => {
                Role::AsUser
            }
            // v2 files call the custom role hookMessage; pi renames it when it migrates.
            Some("hookMessage") if version < 3 => Role::AsUser,
            Some(_) => Role::Carried,
        },
        "custom_message" => Role::AsUser,
        "branch_summary" if facts.summary => Role::AsUser,
        "compaction" => Role::Compaction { through: 0 },
        _ => Role::Carried,
    }
}

/// JavaScript truthiness of a JSON value.
pub fn truthy(value: &handoff_sdk::serde_json::Value) -> bool {
    use handoff_sdk::serde_json::Value;
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The path and the role of each entry on it.
pub fn conversation(scan: &Scan) -> Result<Conversation, PluginError> {
    let mut path = path(scan)?;
    let slots = &scan.slots;
    let mut roles: Vec<Role> = path.iter().map(|&i| slots[i].role).collect();
    let compactions: Vec<usize> = (0..path.len())
        .filter(|&p| matches!(roles[p], Role::Compaction { .. }))
        .collect();
    let Some(&governing) = compactions.last() else {
        return Ok(Conversation { path, roles });
    };
    // Path position of the first entry a compaction keeps: its firstKeptEntryId, searched before
    // it; not found means nothing before the compaction is kept.
    let first_kept = |c: usize| {
        let wanted = slots[path[c]].first_kept.as_deref();
        wanted
            .and_then(|id| (0..c).find(|&p| &*slots[path[p]].id == id))
            .unwrap_or(c)
    };
    let kept_from = first_kept(governing);
    for &c in &compactions {
        let through =
            |roles: &[Role], before: usize| (0..before).rev().find(|&p| roles[p].is_event());
        // A compaction that keeps everything before it in view (pi's own auto-compaction writes
        // one when the recent turn is all there is) puts its summary *before* the whole path,
        // which no canonical compaction says; it is carried, and so are the earlier ones, which
        // pi then does not apply either.
        roles[c] = if c < kept_from || c == governing {
            let before = if c == governing {
                kept_from
            } else {
                first_kept(c)
            };
            match through(&roles, before) {
                Some(through) => Role::Compaction { through },
                None => Role::Carried,
            }
        } else {
            Role::Carried
        };
    }
    // pi shows the governing compaction's summary first, then the entries it keeps: the event
    // goes right after what it replaces (a canonical summary is seen at the event's place).
    if kept_from < governing && matches!(roles[governing], Role::Compaction { .. }) {
        let entry = path.remove(governing);
        let role = roles.remove(governing);
        path.insert(kept_from, entry);
        roles.insert(kept_from, role);
    }
    Ok(Conversation { path, roles })
}
