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

use foldhash::HashMap;
use handoff_sdk::PluginError;

use super::read::{Facts, Scan};

/// What a path entry becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A user, assistant or tool result event.
    Message,
    /// A user event made from what pi sends as user text (custom messages, summaries, bash runs).
    AsUser,
    /// A compaction event replacing everything up to the entry given.
    Compaction {
        /// Entry number of the last replaced event.
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

/// The conversation of a scanned file: the path (entry numbers, in the order their events go
/// out) and the roles that are not the entries' kinds (the compactions').
#[derive(Debug)]
pub struct Conversation {
    /// Entry numbers from the root to the leaf, the governing compaction moved to right after
    /// what it replaces.
    pub path: Vec<u32>,
    /// The compactions on the path, by entry number: each one's role.
    compactions: HashMap<u32, Role>,
}

impl Conversation {
    /// The role of path entry `entry`.
    pub fn role(&self, scan: &Scan, entry: u32) -> Role {
        match self.compactions.get(&entry) {
            Some(role) => *role,
            None => scan.kind(entry).role(),
        }
    }

    /// The entries whose ids a compaction names as the last it replaces.
    pub fn throughs(&self) -> impl Iterator<Item = u32> + '_ {
        self.compactions.values().filter_map(|role| match role {
            Role::Compaction { through } => u32::try_from(*through).ok(),
            _ => None,
        })
    }
}

/// pi's path from the leaf (the last entry in file order) to the root: entry numbers, root
/// first. Walked twice, to count it and to fill it, so it is allocated once at its length (4
/// bytes an entry on it).
pub fn path(scan: &Scan) -> Result<Vec<u32>, PluginError> {
    let Some((leaf, _)) = scan.leaf() else {
        return Ok(Vec::new());
    };
    let mut length = 0usize;
    let mut current = Some(leaf);
    while let Some(entry) = current {
        if length > scan.len() {
            let (line, id) = scan.locate(entry)?;
            return Err(PluginError::malformed_line(
                &scan.path,
                line,
                Some("parentId"),
                format!("the parent chain loops through entry {id:?}"),
            ));
        }
        length += 1;
        current = scan.parent(entry);
    }
    let mut path = vec![0; length];
    let mut current = Some(leaf);
    for at in path.iter_mut().rev() {
        let entry = current.expect("the walk counted these entries");
        *at = entry;
        current = scan.parent(entry);
    }
    Ok(path)
}

/// Where each entry is on the path: found by a binary search when the path is in file order
/// (pi writes a child after its parent), else by a table.
enum Positions {
    InFileOrder,
    Table(HashMap<u32, usize>),
}

impl Positions {
    fn of(path: &[u32]) -> Self {
        if path.windows(2).all(|w| w[0] < w[1]) {
            Positions::InFileOrder
        } else {
            Positions::Table(path.iter().enumerate().map(|(p, &e)| (e, p)).collect())
        }
    }

    fn find(&self, path: &[u32], entry: u32) -> Option<usize> {
        match self {
            Positions::InFileOrder => path.binary_search(&entry).ok(),
            Positions::Table(table) => table.get(&entry).copied(),
        }
    }
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
    let mut roles: HashMap<u32, Role> = HashMap::default();
    let compactions: Vec<usize> = (0..path.len())
        .filter(|&p| matches!(scan.kind(path[p]).role(), Role::Compaction { .. }))
        .collect();
    let Some(&governing) = compactions.last() else {
        return Ok(Conversation {
            path,
            compactions: roles,
        });
    };
    let positions = Positions::of(&path);
    // Path position of the first entry a compaction keeps: its firstKeptEntryId, searched before
    // it; not found means nothing before the compaction is kept.
    let first_kept = |c: usize| {
        scan.first_kept(path[c])
            .and_then(|entry| positions.find(&path, entry))
            .filter(|&p| p < c)
            .unwrap_or(c)
    };
    let kept_from = first_kept(governing);
    for &c in &compactions {
        let role_at = |roles: &HashMap<u32, Role>, p: usize| match roles.get(&path[p]) {
            Some(role) => *role,
            None => scan.kind(path[p]).role(),
        };
        let through = |roles: &HashMap<u32, Role>, before: usize| {
            (0..before).rev().find(|&p| role_at(roles, p).is_event())
        };
        // A compaction that keeps everything before it in view (pi's own auto-compaction writes
        // one when the recent turn is all there is) puts its summary *before* the whole path,
        // which no canonical compaction says; it is carried, and so are the earlier ones, which
        // pi then does not apply either.
        let role = if c < kept_from || c == governing {
            let before = if c == governing {
                kept_from
            } else {
                first_kept(c)
            };
            match through(&roles, before) {
                Some(p) => Role::Compaction {
                    through: path[p] as usize,
                },
                None => Role::Carried,
            }
        } else {
            Role::Carried
        };
        roles.insert(path[c], role);
    }
    // pi shows the governing compaction's summary first, then the entries it keeps: the event
    // goes right after what it replaces (a canonical summary is seen at the event's place).
    let entry = path[governing];
    if kept_from < governing && matches!(roles[&entry], Role::Compaction { .. }) {
        path.remove(governing);
        path.insert(kept_from, entry);
    }
    Ok(Conversation {
        path,
        compactions: roles,
    })
}
