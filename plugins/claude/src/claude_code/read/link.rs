//! Linking: the records joined by index (each uuid looked up once), the conversation's path from
//! the leaf back to the root, and the tool results hanging below each record.

use std::path::Path;

use handoff_sdk::{IdMap, PluginError};

use super::errors::malformed;
use super::nodes::{IndexKind, IndexNode, Records};
use super::record_id::RecordId;

/// Where a record's chain goes next.
#[derive(Clone, Copy)]
pub(super) enum Link {
    /// Nowhere: the root (or a compact boundary whose logical parent is not in the file).
    Root,
    /// To the record at this index.
    To(u32),
    /// To a `parentUuid` that is not in the file (an error if the conversation passes here).
    Missing,
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
    let up = link_up(&records.nodes, &records.parents, &records.index);
    let nodes = &records.nodes;
    let mut groups = std::mem::take(&mut records.groups);
    groups.retain_mut(|g| {
        g.retain(|&r| nodes[r as usize].sidechain == sidechain);
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

/// Each record's next step towards the root, looked up in the loader's uuid index (no uuid
/// repeats there: a record written again replaced the first).
fn link_up(
    nodes: &[IndexNode],
    parents: &[Option<RecordId>],
    index: &IdMap<RecordId, u32>,
) -> Vec<Link> {
    nodes
        .iter()
        .zip(parents)
        .map(|(n, parent)| match (parent, n.kind) {
            (Some(p), IndexKind::CompactBoundary { logical: true }) => {
                index.get(p).map_or(Link::Root, |&i| Link::To(i))
            }
            (Some(p), _) => index.get(p).map_or(Link::Missing, |&i| Link::To(i)),
            (None, _) => Link::Root,
        })
        .collect()
}

/// The tool-result records of the conversation's thread, by parent: every parent's children in
/// one array, in file order (no map, no list per parent).
pub(super) struct ResultChildren {
    /// `children[start[p]..start[p + 1]]` are record `p`'s.
    pub(super) start: Vec<u32>,
    pub(super) children: Vec<u32>,
}

impl ResultChildren {
    pub(super) fn new(nodes: &[IndexNode], up: &[Link], sidechain: bool) -> Self {
        let parent_of = |(i, n): (usize, &IndexNode)| match (n.kind, up[i]) {
            (
                IndexKind::User {
                    has_results: true,
                    meta: false,
                    ..
                },
                Link::To(p),
            ) if n.sidechain == sidechain => Some(p as usize),
            _ => None,
        };
        let mut start = vec![0u32; nodes.len() + 1];
        for p in nodes.iter().enumerate().filter_map(parent_of) {
            start[p + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut next = start.clone();
        let mut children = vec![0u32; start[nodes.len()] as usize];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = parent_of((i, n)) {
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
                nodes[i].line(),
                Some("parentUuid"),
                "the chain loops back on itself",
            ));
        }
        on_path[i] = true;
        path_nodes.push(i as u32);
        cursor = match up[i] {
            Link::To(p) => Some(p as usize),
            Link::Root => None,
            Link::Missing => {
                let n = &nodes[i];
                return Err(malformed(
                    path,
                    n.line(),
                    Some("parentUuid"),
                    format!(
                        "{} is not a record of this file",
                        records.parents[i]
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                ));
            }
        };
    }
    path_nodes.reverse();
    Ok(path_nodes)
}
