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
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) enum Link {
    /// Nowhere: the root (or a compact boundary whose logical parent is not in the file).
    Root,
    /// To the record at this index.
    To(u32),
    /// To a `parentUuid` not in the file, `Records::unresolved[k]` (an error if the
    /// conversation passes here); while loading, one not seen yet.
    Missing(u32),
}

/// A [`Link`] in four bytes, as the index keeps one for every record: the index of the record
/// linked to, or [`MISSING`] with the unresolved parent's place, or [`ROOT`]. (A session's
/// records and unresolved parents are far fewer than 2³¹.)
#[derive(Clone, Copy)]
pub(super) struct PackedLink(u32);

const ROOT: u32 = u32::MAX;
const MISSING: u32 = 1 << 31;

impl From<Link> for PackedLink {
    fn from(link: Link) -> Self {
        PackedLink(match link {
            Link::Root => ROOT,
            Link::To(i) => {
                assert!(i < MISSING, "record {i}: more records than an index holds");
                i
            }
            Link::Missing(k) => {
                assert!(
                    k < ROOT - MISSING,
                    "parent {k}: more parents than an index holds"
                );
                MISSING | k
            }
        })
    }
}

impl PackedLink {
    pub(super) fn get(self) -> Link {
        match self.0 {
            ROOT => Link::Root,
            i if i < MISSING => Link::To(i),
            k => Link::Missing(k & !MISSING),
        }
    }
}

/// The file's records linked by index: the uuid strings are looked up once, here.
pub(super) struct Links {
    /// Each record's next step towards the root.
    pub(super) up: Vec<PackedLink>,
    /// Streamed assistant turns of several records (by message id), in file order.
    pub(super) groups: Vec<Vec<u32>>,
    /// Each grouped record's index in `groups`.
    pub(super) group_of: GroupOf,
}

/// Which group each record of a streamed turn is in: (record, group) pairs of the grouped
/// records only, by record (8 bytes a grouped record, none for the others).
pub(super) struct GroupOf(Vec<(u32, u32)>);

impl GroupOf {
    pub(super) fn of(&self, record: u32) -> Option<u32> {
        let at = self.0.binary_search_by_key(&record, |&(r, _)| r).ok()?;
        Some(self.0[at].1)
    }
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
    let mut group_of: Vec<(u32, u32)> = groups
        .iter()
        .enumerate()
        .flat_map(|(n, g)| g.iter().map(move |&r| (r, n as u32)))
        .collect();
    group_of.sort_unstable();
    Links {
        up,
        groups,
        group_of: GroupOf(group_of),
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
    if let Some(i) = records.index.get(&parent) {
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
        up,
        unresolved,
        index,
        ..
    } = records;
    for link in up.iter_mut() {
        if let Link::Missing(k) = link.get() {
            let (parent, logical) = &unresolved[k as usize];
            *link = match index.get(parent) {
                Some(i) => Link::To(i),
                None if *logical => Link::Root,
                None => Link::Missing(k),
            }
            .into();
        }
    }
}

/// The tool-result records of the conversation's thread, by parent: (parent, child) pairs of
/// the result records only, by parent and then file order (8 bytes a result record, none for
/// the others; no map, no list per parent).
pub(super) struct ResultChildren(Vec<(u32, u32)>);

impl ResultChildren {
    pub(super) fn new(nodes: &NodeStore, up: &[PackedLink], sidechain: bool) -> Self {
        let parent_of = |i: usize| match (nodes.kind(i), up[i].get()) {
            (
                IndexKind::User {
                    has_results: true, ..
                },
                Link::To(p),
            ) if nodes.sidechain(i) == sidechain => Some(p),
            _ => None,
        };
        let mut pairs: Vec<(u32, u32)> = (0..nodes.len())
            .filter_map(|i| Some((parent_of(i)?, i as u32)))
            .collect();
        pairs.sort_unstable();
        ResultChildren(pairs)
    }

    /// Record `parent`'s result records, in file order.
    pub(super) fn of(&self, parent: u32) -> impl Iterator<Item = u32> + '_ {
        let start = self.0.partition_point(|&(p, _)| p < parent);
        self.0[start..]
            .iter()
            .take_while(move |&&(p, _)| p == parent)
            .map(|&(_, c)| c)
    }
}

/// What the walk asks when a record's parent is not in the file: the record Claude Code goes on
/// to instead (see `assemble::ParentByTime`), given the record and which records are on the path
/// so far; `None` when there is none.
pub(super) type ParentNotInFile<'a> =
    dyn FnMut(usize, &[bool]) -> Result<Option<usize>, PluginError> + 'a;

/// How far back in time Claude Code looks for a record to go on to when a parent is missing
/// (2.1.197's `Ysm`, 2.1.332's `eTr`).
pub(super) const PARENT_BY_TIME_WITHIN_MS: i64 = 5000;

/// The conversation: the records from the root to `leaf`, following each record's link up. A
/// parent that is not in the file is followed as Claude Code follows it (`parent_not_in_file`);
/// one with nothing to go on to is an error naming the line (Claude Code would resume the
/// conversation from that record on; handoff does not drop its beginning unasked). A parent
/// already on the path (a loop: a record naming itself, or one below it) is, to Claude Code
/// (2.1.197 and 2.1.332, `buildConversationChain`), a parent it does not find: it goes on by
/// time the same way, and with nothing to go on to the conversation starts at that record —
/// which loses nothing, since every record the loop names is on the conversation already.
pub(super) fn conversation_path(
    path: &Path,
    records: &Records,
    up: &[PackedLink],
    leaf: usize,
    parent_not_in_file: &mut ParentNotInFile<'_>,
) -> Result<Vec<u32>, PluginError> {
    let nodes = &records.nodes;
    let mut on_path = vec![false; nodes.len()];
    let mut path_nodes: Vec<u32> = Vec::new();
    let mut cursor = Some(leaf);
    while let Some(i) = cursor {
        on_path[i] = true;
        path_nodes.push(i as u32);
        cursor = match up[i].get() {
            Link::To(p) if on_path[p as usize] => parent_not_in_file(i, &on_path)?,
            Link::To(p) => Some(p as usize),
            Link::Root => None,
            Link::Missing(k) => match parent_not_in_file(i, &on_path)? {
                Some(p) => Some(p),
                None => {
                    let n = nodes.get(i);
                    return Err(malformed(
                        path,
                        n.line(),
                        Some("parentUuid"),
                        format!(
                            "{} is not a record of this file, and no record of this one's \
                             thread was written in the {} ms before it",
                            records.unresolved[k as usize].0, PARENT_BY_TIME_WITHIN_MS
                        ),
                    ));
                }
            },
        };
    }
    path_nodes.reverse();
    Ok(path_nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_link_is_the_link_it_packs() {
        let links = [
            Link::Root,
            Link::To(0),
            Link::To(7),
            Link::To(MISSING - 1),
            Link::Missing(0),
            Link::Missing(9),
            Link::Missing(ROOT - MISSING - 1),
        ];
        for link in links {
            assert_eq!(PackedLink::from(link).get(), link);
        }
    }
}
