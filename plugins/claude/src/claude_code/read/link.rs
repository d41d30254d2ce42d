//! Linking: the records joined by index (each uuid looked up once), the conversation's path from
//! the leaf back to the root, and the tool results hanging below each record.

use std::path::Path;

use handoff_sdk::PluginError;

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
    pub(super) groups: Groups,
}

/// Streamed assistant turns as the loader gathers them: (group, record) pairs, in the order the
/// records were read (8 bytes a record of a turn of several records, none for the others).
pub(super) type GroupMembers = Vec<(u32, u32)>;

/// The streamed assistant turns of the conversation's thread: each group's records in file
/// order, one list for all the groups (4 bytes a grouped record and 4 a group), and which group
/// each grouped record is in, (record, group) pairs by record (8 bytes a grouped record). No
/// list a group: its header and allocation would cost ~40 bytes a group.
pub(super) struct Groups {
    /// The groups' records, group after group.
    records: Vec<u32>,
    /// Where each group starts in `records`, and its end after the last.
    starts: Vec<u32>,
    of_record: Vec<(u32, u32)>,
}

impl Groups {
    /// The groups of `members` (as the loader gathered them) that keep more than one record of
    /// `in_thread`; numbered in the order they were made.
    fn of(mut members: GroupMembers, in_thread: impl Fn(u32) -> bool) -> Self {
        members.retain(|&(_, r)| in_thread(r));
        // Group by group, each in file order (a group's records were read in file order, but
        // groups interleave).
        members.sort_unstable();
        let mut records = Vec::new();
        let mut starts = Vec::new();
        // The pairs become (record, group) in place, the groups left with one record dropped.
        let mut kept = 0;
        let mut at = 0;
        while at < members.len() {
            let group = members[at].0;
            let end = at + members[at..].partition_point(|&(g, _)| g == group);
            if end - at > 1 {
                let n = starts.len() as u32;
                starts.push(records.len() as u32);
                for k in at..end {
                    let record = members[k].1;
                    records.push(record);
                    members[kept] = (record, n);
                    kept += 1;
                }
            }
            at = end;
        }
        starts.push(records.len() as u32);
        members.truncate(kept);
        members.sort_unstable();
        Groups {
            records,
            starts,
            of_record: members,
        }
    }

    /// The group `record` is in, if any.
    pub(super) fn group_of(&self, record: u32) -> Option<u32> {
        let at = self
            .of_record
            .binary_search_by_key(&record, |&(r, _)| r)
            .ok()?;
        Some(self.of_record[at].1)
    }

    /// Group `n`'s records, in file order.
    pub(super) fn records(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.records[self.starts[n] as usize..self.starts[n + 1] as usize]
    }
}

/// Links the records of the conversation's thread (`sidechain` or not).
pub(super) fn link(records: &mut Records, sidechain: bool) -> Links {
    let up = std::mem::take(&mut records.up);
    let nodes = &records.nodes;
    let groups = Groups::of(std::mem::take(&mut records.groups), |r| {
        nodes.sidechain(r as usize) == sidechain
    });
    Links { up, groups }
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
    dyn FnMut(usize, &Bits) -> Result<Option<usize>, PluginError> + 'a;

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
/// With the path, which records are on it (a bit a record).
pub(super) fn conversation_path(
    path: &Path,
    records: &Records,
    up: &[PackedLink],
    leaf: usize,
    parent_not_in_file: &mut ParentNotInFile<'_>,
) -> Result<(Vec<u32>, Bits), PluginError> {
    let nodes = &records.nodes;
    let mut on_path = Bits::new(nodes.len());
    // Room for every record: the pages the path does not reach are never touched (never
    // resident), and the list never doubles (a copy, and up to half of it unused).
    let mut path_nodes: Vec<u32> = Vec::with_capacity(nodes.len());
    let mut cursor = Some(leaf);
    while let Some(i) = cursor {
        on_path.set(i);
        path_nodes.push(i as u32);
        cursor = match up[i].get() {
            Link::To(p) if on_path.get(p as usize) => parent_not_in_file(i, &on_path)?,
            Link::To(p) => Some(p as usize),
            Link::Root => None,
            Link::Missing(k) => match parent_not_in_file(i, &on_path)? {
                Some(p) => Some(p),
                None => {
                    let n = nodes.get(i);
                    return Err(PluginError::malformed_line(
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
    Ok((path_nodes, on_path))
}

/// One bit a record.
pub(super) struct Bits(Vec<u64>);

impl Bits {
    pub(super) fn new(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }

    pub(super) fn get(&self, i: usize) -> bool {
        self.0[i / 64] & 1 << (i % 64) != 0
    }

    pub(super) fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub(super) fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interleaved groups come out each in file order, numbered as they were made; a group left
    /// with one record of the thread is none, and the records of the other thread are in none.
    #[test]
    fn groups_keep_their_records_in_file_order_and_drop_the_other_thread() {
        // (group, record) as the loader adds them: group 0 is records 1, 3, 8; group 1 is 2, 5
        // (5 of the other thread); group 2 is 4, 6, 9 (9 of the other thread).
        let members = vec![
            (0, 1),
            (0, 3),
            (1, 2),
            (2, 4),
            (1, 5),
            (2, 6),
            (0, 8),
            (2, 9),
        ];
        let other_thread = [5, 9];
        let groups = Groups::of(members, |r| !other_thread.contains(&r));
        assert_eq!(groups.records(0), [1, 3, 8]);
        assert_eq!(groups.records(1), [4, 6]);
        for (record, group) in [(1, Some(0)), (3, Some(0)), (8, Some(0)), (4, Some(1))] {
            assert_eq!(groups.group_of(record), group, "record {record}");
        }
        for record in [0, 2, 5, 6 + 1, 9, 10] {
            assert_eq!(groups.group_of(record), None, "record {record}");
        }
        assert_eq!(groups.group_of(6), Some(1));
    }

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
