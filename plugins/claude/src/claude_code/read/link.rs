//! Linking: the records joined by index (each uuid looked up once), the conversation's path from
//! the leaf back to the root, and the tool results hanging below each record.

use std::path::Path;

use handoff_sdk::PluginError;

use super::errors::malformed;
use super::node_store::NodeStore;
use super::nodes::{IndexKind, Records};
use super::record_id::RecordId;

/// Where a record's chain goes next.
#[derive(Clone, Copy)]
pub(super) enum Link {
    /// Nowhere: the root (or a compact boundary whose logical parent is not in the file).
    Root,
    /// To the record at this index.
    To(u32),
    /// To a `parentUuid` not in the file, `Records::unresolved[k]` (an error if the
    /// conversation passes here); while loading, one not seen yet.
    Missing(u32),
}

/// The file's records linked by index: the uuid strings are looked up once, here.
pub(super) struct Links {
    /// Each record's next step towards the root.
    pub(super) up: Vec<Link>,
    /// Streamed assistant turns of several records (by message id), in file order.
    pub(super) groups: Vec<Vec<u32>>,
    /// Each record's index in `groups`, or `u32::MAX`.
    pub(super) group_of: Vec<u32>,
}

/// Links the records of the conversation's thread (`sidechain` or not).
pub(super) fn link(records: &mut Records, sidechain: bool) -> Links {
    let up = std::mem::take(&mut records.up);
    let nodes = &records.nodes;
    let mut groups = std::mem::take(&mut records.groups);
    groups.retain_mut(|g| {
        g.retain(|&r| nodes.sidechain(r as usize) == sidechain);
        g.len() > 1
    });
    let mut group_of = vec![u32::MAX; nodes.len()];
    for (n, g) in groups.iter().enumerate() {
        for &r in g {
            group_of[r as usize] = n as u32;
        }
    }
    Links {
        up,
        groups,
        group_of,
    }
}

/// Each record's next step towards the root, as the loader links it: to a parent already
/// indexed at once (a record written again replaces the first in place, so its index holds);
/// to one not yet seen (a child before its parent, a dangling parent) through
/// [`Records::unresolved`], looked up once the file is read.
pub(super) fn link_to(records: &mut Records, parent: Option<RecordId>, logical: bool) -> Link {
    let Some(parent) = parent else {
        return Link::Root;
    };
    // Most records follow their parent: the last node is it (a node's uuid is indexed at its
    // own position, so this is what the index would answer), without a probe.
    if let Some(last) = records.nodes.len().checked_sub(1) {
        if records.nodes.uuid_is(last, &parent) {
            return Link::To(last as u32);
        }
    }
    if let Some(i) = records.index.get(&records.nodes, &parent) {
        return Link::To(i);
    }
    let k = records.unresolved.len() as u32;
    records.unresolved.push((parent, logical));
    Link::Missing(k)
}

/// The links to parents not yet seen when their children were read, looked up now the file is
/// read; a parent still missing is an error when the conversation passes there, but for a
/// compact boundary's logical parent, which makes it a root.
pub(super) fn resolve_later_parents(records: &mut Records) {
    let Records {
        nodes,
        up,
        unresolved,
        index,
        ..
    } = records;
    for link in up.iter_mut() {
        if let Link::Missing(k) = *link {
            let (parent, logical) = &unresolved[k as usize];
            *link = match index.get(nodes, parent) {
                Some(i) => Link::To(i),
                None if *logical => Link::Root,
                None => Link::Missing(k),
            };
        }
    }
}

/// The tool-result records of the conversation's thread, by parent: every parent's children in
/// one array, in file order (no map, no list per parent).
pub(super) struct ResultChildren {
    /// `children[start[p]..start[p + 1]]` are record `p`'s.
    pub(super) start: Vec<u32>,
    pub(super) children: Vec<u32>,
}

impl ResultChildren {
    pub(super) fn new(nodes: &NodeStore, up: &[Link], sidechain: bool) -> Self {
        let parent_of = |i: usize| match (nodes.kind(i), up[i]) {
            (
                IndexKind::User {
                    has_results: true, ..
                },
                Link::To(p),
            ) if nodes.sidechain(i) == sidechain => Some(p as usize),
            _ => None,
        };
        let mut start = vec![0u32; nodes.len() + 1];
        for p in (0..nodes.len()).filter_map(parent_of) {
            start[p + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut next = start.clone();
        let mut children = vec![0u32; start[nodes.len()] as usize];
        for i in 0..nodes.len() {
            if let Some(p) = parent_of(i) {
                children[next[p] as usize] = i as u32;
                next[p] += 1;
            }
        }
        ResultChildren { start, children }
    }

    pub(super) fn of(&self, parent: u32) -> &[u32] {
        let p = parent as usize;
        &self.children[self.start[p] as usize..self.start[p + 1] as usize]
    }
}

/// The conversation: the records from the root to `leaf`, following each record's link up; a
/// loop or a parent that is not in the file is an error naming the line.
pub(super) fn conversation_path(
    path: &Path,
    records: &Records,
    up: &[Link],
    leaf: usize,
) -> Result<Vec<u32>, PluginError> {
    let nodes = &records.nodes;
    let mut on_path = vec![false; nodes.len()];
    let mut path_nodes: Vec<u32> = Vec::new();
    let mut cursor = Some(leaf);
    while let Some(i) = cursor {
        if on_path[i] {
            return Err(malformed(
                path,
                nodes.get(i).line(),
                Some("parentUuid"),
                "the chain loops back on itself",
            ));
        }
        on_path[i] = true;
        path_nodes.push(i as u32);
        cursor = match up[i] {
            Link::To(p) => Some(p as usize),
            Link::Root => None,
            Link::Missing(k) => {
                let n = nodes.get(i);
                return Err(malformed(
                    path,
                    n.line(),
                    Some("parentUuid"),
                    format!(
                        "{} is not a record of this file",
                        records.unresolved[k as usize].0
                    ),
                ));
            }
        };
    }
    path_nodes.reverse();
    Ok(path_nodes)
}
