//! Assembling: the conversation's path walked from the root to the leaf, each record turned into
//! its events and handed on as soon as it is made.

use std::path::Path;

use handoff_sdk::dialect::anthropic::ParsedBlock;
use handoff_sdk::held::call_ids;
use handoff_sdk::{AssistantPart, Body, Event, IdSet, PluginError, Timestamp};

use super::events::{assistant_event, user_events};
use super::link::{conversation_path, link, Bits, Groups, Links, ResultChildren};
use super::link::{Link, PackedLink, PARENT_BY_TIME_WITHIN_MS};
use super::load::Loaded;
use super::node_store::NodeStore;
use super::nodes::{take_uuid, IndexKind, Kind, Node, Records, UserContent};
use super::reread::RecordLines;
use super::rules::ReadRules;
use crate::claude_code::records::{is_bare_string_block, BARE_STRING_BLOCK};
use crate::claude_code::write::{calls_are_the_tail, ChainState};
use handoff_sdk::serde_json::Value;

/// Hands assembled events on, remembering what an append needs to continue the chain.
pub(super) struct Emitter<'s> {
    sink: &'s mut dyn FnMut(Event) -> bool,
    /// The id of the last event handed on (its buffer reused), once `emitted`.
    last_id: String,
    emitted: bool,
    /// The calls of the last assistant turn (when they end it), while only results followed it;
    /// kept only when `track_calls` (an append needs them, a plain read does not).
    open_calls: Vec<String>,
    /// When the last result since the last assistant turn happened (tracked with the calls).
    last_result_at: Option<handoff_sdk::Timestamp>,
    track_calls: bool,
    stopped: bool,
    /// Whether a record of the conversation was passed over
    /// ([`ReadRules::malformed_message_passed_over`]): from then on a result answering no open
    /// call handed on before it is not handed on (Claude Code sends no result without its
    /// call).
    passed_over: bool,
    /// The ids of the calls handed on and not answered yet, kept while records may be passed
    /// over (the open ones only, so a long session's calls are not all held).
    open_calls_handed_on: Option<IdSet<String>>,
    /// The time of the last event handed on: what a record without a `timestamp` takes.
    last_time: Option<Timestamp>,
}

impl Emitter<'_> {
    /// The time of an event of a record whose `timestamp` is `recorded`: that one, else (Claude
    /// Code keeps a record without one) the time of the event handed on before it, else, for the
    /// conversation's first, the Unix epoch (as a request history without times reads).
    pub(super) fn time_of(&self, recorded: Option<Timestamp>) -> Timestamp {
        recorded
            .or(self.last_time)
            .unwrap_or(Timestamp::from_millis(0))
    }

    pub(super) fn emit(&mut self, event: Event) {
        if self.stopped {
            return;
        }
        if let Some(open) = &mut self.open_calls_handed_on {
            let answers_no_open_call = match &event.body {
                Body::Assistant { content, .. } => {
                    open.extend(call_ids(content));
                    false
                }
                Body::ToolResult { call_id, .. } => !open.remove(call_id),
                _ => false,
            };
            if answers_no_open_call && self.passed_over {
                return;
            }
        }
        self.last_id.clear();
        self.last_id.push_str(&event.id);
        self.last_time = Some(event.timestamp);
        self.emitted = true;
        if !self.track_calls {
            self.stopped = !(self.sink)(event);
            return;
        }
        match &event.body {
            Body::Assistant { content, .. } => {
                self.open_calls.clear();
                self.last_result_at = None;
                if calls_are_the_tail(
                    content
                        .iter()
                        .map(|p| matches!(p, AssistantPart::ToolCall(_))),
                ) {
                    self.open_calls
                        .extend(content.iter().filter_map(|p| match p {
                            AssistantPart::ToolCall(c) => Some(c.id.clone()),
                            _ => None,
                        }));
                }
            }
            Body::ToolResult { .. } => self.last_result_at = Some(event.timestamp),
            _ => {
                self.open_calls.clear();
                self.last_result_at = None;
            }
        }
        self.stopped = !(self.sink)(event);
    }
}

impl<'s> Emitter<'s> {
    /// An emitter to `sink` for the Claude Code of `rules`; it remembers the calls an append
    /// needs when `track_calls`.
    pub(super) fn new(
        sink: &'s mut dyn FnMut(Event) -> bool,
        track_calls: bool,
        rules: ReadRules,
    ) -> Self {
        Emitter {
            sink,
            last_id: String::new(),
            emitted: false,
            open_calls: Vec::new(),
            last_result_at: None,
            track_calls,
            stopped: false,
            passed_over: false,
            open_calls_handed_on: rules.malformed_message_passed_over.then(IdSet::default),
            last_time: None,
        }
    }
}

/// The conversation's path and what walking it needs, all from the index.
struct Walk<'a> {
    path_nodes: Vec<u32>,
    turns: Turns<'a>,
    leaf: usize,
}

/// Links the records, chooses the leaf as the Claude Code of `rules` does and finds the path to
/// it: nothing is decoded here but the timestamps a missing parent may need.
fn walk<'a>(path: &'a Path, mut loaded: Loaded, rules: ReadRules) -> Result<Walk<'a>, PluginError> {
    let mut records = std::mem::take(&mut loaded.records);
    let last_prompt_leaf = loaded.last_prompt_leaf.take();
    let nodes = &records.nodes;
    // The thread: the main one; a file of sidechain records only is a subagent's.
    if nodes.is_empty() {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the file holds no conversation records".into(),
        });
    }
    let sidechain = (0..nodes.len()).all(|i| nodes.sidechain(i));
    let Links { up, groups } = link(&mut records, sidechain);
    let named = last_prompt_leaf
        .as_ref()
        .and_then(|id| records.index.get(id).map(|i| i as usize));
    // The uuids are done with: every link is resolved.
    drop(std::mem::take(&mut records.index));
    let leaf = choose_leaf(
        &records.nodes,
        &up,
        sidechain,
        named,
        rules.bare_string_prompt_no_leaf,
    );
    let mut by_time = ParentByTime {
        path,
        reread: loaded.reread.as_ref(),
        times: None,
        skips_file_snapshots: rules.by_time_skips_file_snapshots,
    };
    let (path_nodes, on_path) =
        conversation_path(path, &records, &up, leaf, &mut |child, on_path| {
            by_time.parent_of(&records.nodes, child, on_path)
        })?;
    let result_children = ResultChildren::new(&records.nodes, &up, sidechain);
    // What only linking needed goes before the events are made.
    drop(up);
    let Records {
        nodes, unresolved, ..
    } = records;
    drop(unresolved);

    let mut group_places = Vec::new();
    for (place, &i) in path_nodes.iter().enumerate() {
        if groups.group_of(i).is_some() {
            group_places.push((i, place as u32));
        }
    }
    group_places.sort_unstable();
    let turns = Turns {
        path,
        lines: None,
        loaded,
        consumed: Bits::new(nodes.len()),
        on_path,
        group_places,
        recovered_results: Vec::new(),
        nodes,
        groups,
        result_children,
        boundary: None,
        passes_over_malformed_messages: rules.malformed_message_passed_over,
        drops_empty_user_content: rules.empty_user_content_dropped,
        drops_bare_string_blocks: rules.bare_string_blocks_dropped,
    };
    Ok(Walk {
        path_nodes,
        turns,
        leaf,
    })
}

/// Walks the chain and turns its records into events, each record decoded whole as its events
/// are made; the chain state (call records, open calls) is gathered only when `want_chain`.
/// The walk follows the chain as the Claude Code of `rules` does.
pub(super) fn assemble(
    path: &Path,
    loaded: Loaded,
    want_chain: bool,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<ChainState, PluginError> {
    let Walk {
        path_nodes,
        mut turns,
        leaf,
    } = walk(path, loaded, rules)?;
    let mut out = Emitter::new(sink, want_chain, rules);
    let mut chain = ChainState {
        prev: Some(turns.nodes.get(leaf).uuid.to_text()),
        ..ChainState::default()
    };
    for i in path_nodes.into_iter().map(|i| i as usize) {
        if out.stopped {
            return Ok(chain);
        }
        turns.record(i, want_chain.then_some(&mut chain), &mut out)?;
    }
    // The calls still open at the end: those of the last assistant turn, if only results follow.
    chain.open_calls = out.open_calls.into_iter().collect();
    chain.last_result_at = out.last_result_at;
    Ok(chain)
}

/// The leaf Claude Code resumes from (measured on 2.1.197, `live/tests/differential.rs`): the
/// records of the thread are linked by uuid whatever their order in the file, and the leaves are
/// the records no other record of the thread names as its parent. The last `last-prompt`
/// record's `leafUuid` picks the leaf when it is one (or an ancestor of some: then the last of
/// those); otherwise the last leaf in file order (a record written twice is where it was last
/// written: claude-code-log's `edge_cases.jsonl` ends on a record repeated from line 10, which
/// Claude Code resumes). (Not simply the last record: a child written
/// before its parent, by concurrent writers, would cut the conversation short.) A record on a
/// loop of parents counts as a leaf: no record below it ends the chain, and Claude Code resumes
/// the record the `last-prompt` names, or the last one written, whatever its children (measured
/// at both ends: two records naming each other, the first prompt naming the last answer).
fn choose_leaf(
    nodes: &NodeStore,
    up: &[PackedLink],
    sidechain: bool,
    named: Option<usize>,
    bare_string_prompt_no_leaf: bool,
) -> usize {
    let in_thread = |i: usize| nodes.sidechain(i) == sidechain;
    let mut has_child = Bits::new(nodes.len());
    for (i, link) in up.iter().enumerate() {
        if let (Link::To(p), true) = (link.get(), in_thread(i)) {
            has_child.set(p as usize);
        }
    }
    for i in on_a_loop(up) {
        has_child.clear(i);
    }
    // Last in file order first: by the line each record was last written on (a record written
    // again keeps its first place among the nodes; Claude Code's last message is the last line).
    let mut leaves: Vec<(u32, u32)> = (0..nodes.len())
        .filter(|&i| in_thread(i) && !has_child.get(i))
        .filter(|&i| {
            !(bare_string_prompt_no_leaf
                && matches!(
                    nodes.kind(i),
                    IndexKind::User {
                        bare_strings_only: true,
                        ..
                    }
                ))
        })
        .map(|i| (nodes.get(i).line, i as u32))
        .collect();
    leaves.sort_unstable_by_key(|&(line, _)| std::cmp::Reverse(line));
    let mut leaves = leaves.into_iter().map(|(_, i)| i as usize);
    let Some(named) = named.filter(|&n| in_thread(n)) else {
        return leaves.next().unwrap_or(nodes.len() - 1);
    };
    // Whether each record descends from `named` (0 unknown, 1 yes, 2 no), walked up once each.
    let mut below = vec![0u8; nodes.len()];
    below[named] = 1;
    let mut descends = |leaf: usize| {
        let mut walked = Vec::new();
        let mut cursor = Some(leaf);
        let verdict = loop {
            let Some(i) = cursor else { break 2 };
            if below[i] != 0 {
                break below[i];
            }
            if walked.len() > nodes.len() {
                break 2; // a loop: the walk from the leaf reports it
            }
            walked.push(i);
            cursor = match up[i].get() {
                Link::To(p) => Some(p as usize),
                _ => None,
            };
        };
        for i in walked {
            below[i] = verdict;
        }
        verdict == 1
    };
    let last = leaves.clone().next();
    leaves
        .find(|&l| descends(l))
        .or(last)
        .unwrap_or(nodes.len() - 1)
}

/// The records on a loop of parents (a record naming itself, or records naming each other round),
/// each walked up once.
fn on_a_loop(up: &[PackedLink]) -> Vec<usize> {
    // A byte a record: not walked, on the walk under way, or walked.
    const NOT_WALKED: u8 = 0;
    const ON_THIS_WALK: u8 = 1;
    const WALKED: u8 = 2;
    let mut state = vec![NOT_WALKED; up.len()];
    let parent = |i: usize| match up[i].get() {
        Link::To(p) => Some(p as usize),
        _ => None,
    };
    let mut looped = Vec::new();
    for start in 0..up.len() {
        let mut cursor = Some(start);
        while let Some(i) = cursor {
            if state[i] == ON_THIS_WALK {
                // Round again: the loop is the records from here back to here.
                let mut at = i;
                loop {
                    looped.push(at);
                    match up[at].get() {
                        Link::To(p) if p as usize != i => at = p as usize,
                        _ => break,
                    }
                }
                break;
            }
            if state[i] == WALKED {
                break;
            }
            state[i] = ON_THIS_WALK;
            cursor = parent(i);
        }
        // The walk is done: its records (the start's chain up to where it stopped) are walked.
        let mut cursor = Some(start);
        while let Some(i) = cursor.filter(|&i| state[i] == ON_THIS_WALK) {
            state[i] = WALKED;
            cursor = parent(i);
        }
    }
    looped
}

/// Claude Code's step when a record's parent is not among its records (a uuid of no record, or
/// of a record of a kind it does not keep; 2.1.197 and 2.1.332 alike, read from their bundles
/// and measured with `live/tests/differential.rs`, `unknown-kind-on-chain`): it goes on to the
/// record of the same thread not yet on the path that was written at most 5 s before it and
/// closest to it in time, ties to the first in the file; none, and the conversation starts
/// there. The records' timestamps, which the index does not keep, are read only when a walk
/// needs this (a parent missing from a file is rare). 2.1.332 passes over a `system`
/// `file_snapshot` record here ([`ReadRules::by_time_skips_file_snapshots`]).
struct ParentByTime<'a> {
    path: &'a Path,
    /// The file the index was read from, when not `path` (see [`Loaded::reread`]).
    reread: Option<&'a std::fs::File>,
    /// Each record's timestamp in milliseconds, once read (`None` for a record the step passes
    /// over).
    times: Option<Vec<Option<i64>>>,
    skips_file_snapshots: bool,
}

impl ParentByTime<'_> {
    fn parent_of(
        &mut self,
        nodes: &NodeStore,
        child: usize,
        on_path: &Bits,
    ) -> Result<Option<usize>, PluginError> {
        if self.times.is_none() {
            self.times = Some(self.read_times(nodes)?);
        }
        let times = self.times.as_deref().unwrap_or_default();
        let Some(at) = times[child] else {
            return Ok(None);
        };
        let thread = nodes.sidechain(child);
        let mut best: Option<(i64, usize)> = None;
        for (i, time) in times.iter().enumerate() {
            let Some(time) = *time else { continue };
            let before = at - time;
            if on_path.get(i) || nodes.sidechain(i) != thread {
                continue;
            }
            if (0..=PARENT_BY_TIME_WITHIN_MS).contains(&before)
                && best.is_none_or(|(b, _)| before < b)
            {
                best = Some((before, i));
            }
        }
        Ok(best.map(|(_, i)| i))
    }

    /// Every record's `timestamp`, from its line (`None` where it has none or none that parses:
    /// Claude Code passes over such a record here too; and for a `file_snapshot` system record
    /// when the step skips those).
    fn read_times(&self, nodes: &NodeStore) -> Result<Vec<Option<i64>>, PluginError> {
        use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
        #[derive(serde::Deserialize)]
        struct Stamp {
            timestamp: Option<handoff_sdk::serde_json::Value>,
            #[serde(rename = "type")]
            kind: Option<handoff_sdk::serde_json::Value>,
            subtype: Option<handoff_sdk::serde_json::Value>,
        }
        let io = |e: std::io::Error| PluginError::io(self.path, &e);
        let file = match self.reread {
            Some(file) => file.try_clone().map_err(io)?,
            None => std::fs::File::open(self.path).map_err(io)?,
        };
        let mut reader = BufReader::new(file);
        let mut times = Vec::with_capacity(nodes.len());
        let mut line = Vec::new();
        for i in 0..nodes.len() {
            let node = nodes.get(i);
            reader.seek(SeekFrom::Start(node.offset)).map_err(io)?;
            line.clear();
            if node.len == u32::MAX {
                reader.read_until(b'\n', &mut line).map_err(io)?;
            } else {
                line.resize(node.len as usize, 0);
                reader.read_exact(&mut line).map_err(io)?;
            }
            let (text, _) = super::load::record_text(&line, node.offset == 0);
            let stamp = handoff_sdk::serde_json::from_slice::<Stamp>(text).ok();
            let passed_over = self.skips_file_snapshots
                && stamp.as_ref().is_some_and(|s| {
                    s.kind.as_ref().and_then(|k| k.as_str()) == Some("system")
                        && s.subtype.as_ref().and_then(|k| k.as_str()) == Some("file_snapshot")
                });
            let time = stamp
                .filter(|_| !passed_over)
                .and_then(|s| s.timestamp)
                .and_then(|t| t.as_str().and_then(|t| Timestamp::parse(t).ok()))
                .map(Timestamp::millis);
            times.push(time);
        }
        // A file shared with the events' pass is read from its start there.
        reader.seek(SeekFrom::Start(0)).map_err(io)?;
        Ok(times)
    }
}

/// Records in Claude Code's order for those it recovers off the path: by timestamp, ties kept in
/// their order (a stable sort, as its `Array.prototype.sort`).
fn by_timestamp(records: &mut [Node]) {
    if records.len() > 1 {
        records.sort_by_key(|r| r.timestamp);
    }
}

/// The walk's state: the nodes (their content moves out into events), which are done, and the
/// compact boundary waiting for its summary.
struct Turns<'a> {
    path: &'a Path,
    /// Where the records' content is read from (opened when first needed: a one-pass read keeps
    /// it), and what decoding it needs (the models seen).
    lines: Option<RecordLines>,
    loaded: Loaded,
    /// The index: the records without their content.
    nodes: NodeStore,
    /// Streamed assistant turns of several records, and each record's index in them.
    groups: Groups,
    result_children: ResultChildren,
    /// Records already turned into events (or skipped).
    consumed: Bits,
    /// Which records are on the conversation's path.
    on_path: Bits,
    /// The place on the path of each grouped record on it (record, place), by record: what
    /// orders a streamed turn's records.
    group_places: Vec<(u32, u32)>,
    /// The results of an assistant turn that are off the path (see [`Turns::assistant_turn`]),
    /// read whole and in order, waiting for the walk to pass the turn's last record on the path.
    recovered_results: Vec<(usize, Vec<Node>)>,
    /// The compact boundary before the next compact summary, read whole, with the id of the
    /// event handed on before it (what the compaction replaces through: the events between the
    /// boundary and the summary are the ones it keeps).
    boundary: Option<(Node, Option<String>)>,
    /// See [`ReadRules::malformed_message_passed_over`].
    passes_over_malformed_messages: bool,
    /// See [`ReadRules::empty_user_content_dropped`].
    drops_empty_user_content: bool,
    /// See [`ReadRules::bare_string_blocks_dropped`].
    drops_bare_string_blocks: bool,
}

/// A record's bare string blocks (kept apart as [`BARE_STRING_BLOCK`] when decoded) left out, as
/// Claude Code 2.1.332 sends them (`drop`), or read as text, as 2.1.197 does.
pub(super) fn bare_strings_as_sent(node: &mut Node, drop: bool) {
    let is_bare = is_bare_string_block;
    let as_sent = |blocks: &mut Vec<ParsedBlock>| {
        if drop {
            blocks.retain(|b| !is_bare(b));
            return;
        }
        for b in blocks.iter_mut() {
            if let ParsedBlock::Other { kind, block } = b {
                if kind == BARE_STRING_BLOCK {
                    let text = match std::mem::take(block) {
                        Value::String(text) => text,
                        _ => String::new(),
                    };
                    *b = ParsedBlock::Text(text);
                }
            }
        }
    };
    match &mut node.kind {
        Kind::Assistant { blocks, .. } if blocks.iter().any(is_bare) => as_sent(blocks),
        Kind::User {
            content,
            compact_summary,
            ..
        } => {
            let UserContent::Blocks(blocks) = content else {
                return;
            };
            if !blocks.iter().any(is_bare) {
                return;
            }
            let mut blocks = std::mem::take(blocks);
            as_sent(&mut blocks);
            // Plain again (a prompt of text only, or none: an empty array, which the rules
            // above take as such).
            *content = UserContent::new(blocks, *compact_summary);
        }
        _ => {}
    }
}

/// Whether `error` is a record's `message` missing or no object, or its `message.content`
/// missing or neither a string nor an array: what Claude Code 2.1.332 passes over.
fn is_malformed_message(error: &PluginError) -> bool {
    matches!(error, PluginError::Malformed { field: Some(f), .. }
        if f == "message" || f == "message.content")
}

impl Turns<'_> {
    /// The record at `i` read whole, or `None` when the Claude Code read for passes over it (see
    /// [`ReadRules::malformed_message_passed_over`]): no event, and `out` then drops the results
    /// answering no call.
    fn read_or_pass_over(
        &mut self,
        i: usize,
        out: &mut Emitter<'_>,
    ) -> Result<Option<Node>, PluginError> {
        match self.read_whole(i) {
            Err(e) if self.passes_over_malformed_messages && is_malformed_message(&e) => {
                // Not an event (the CLI sends nothing of it), but never passed over unsaid.
                tracing::warn!("{e}: passed over, as Claude Code from 2.1.332 passes it over");
                out.passed_over = true;
                Ok(None)
            }
            read => read.map(Some),
        }
    }

    /// The record at `i` read whole (content and extras): kept from the load, or read again
    /// from its line; its bare string blocks as the Claude Code read for sends them.
    fn read_whole(&mut self, i: usize) -> Result<Node, PluginError> {
        let mut node = self.read_decoded(i)?;
        bare_strings_as_sent(&mut node, self.drops_bare_string_blocks);
        Ok(node)
    }

    /// The record at `i` as decoded: kept from the load, or read again from its line.
    fn read_decoded(&mut self, i: usize) -> Result<Node, PluginError> {
        let node = self.nodes.get(i);
        if let Some(body) = self.loaded.whole.get_mut(i).and_then(Option::take) {
            return Ok(body.into_node(&node));
        }
        let lines = match &mut self.lines {
            Some(lines) => lines,
            None => self.lines.insert(match self.loaded.reread.take() {
                Some(file) => RecordLines::of(file),
                None => RecordLines::open(self.path)?,
            }),
        };
        lines.record(self.path, &node, &mut self.loaded)
    }

    /// The events of the record at `i` on the conversation's path (none if it was consumed with
    /// an earlier one).
    fn record(
        &mut self,
        i: usize,
        chain: Option<&mut ChainState>,
        out: &mut Emitter<'_>,
    ) -> Result<(), PluginError> {
        if !self.consumed.get(i) {
            self.consumed.set(i);
            self.events_of(i, chain, out)?;
        }
        while let Some(k) = self
            .recovered_results
            .iter()
            .position(|(after, _)| *after == i)
        {
            let (_, results) = self.recovered_results.swap_remove(k);
            for mut result in results {
                user_events(self.path, &mut result, out)?;
            }
        }
        Ok(())
    }

    /// The events of the record at `i`, not consumed before.
    fn events_of(
        &mut self,
        i: usize,
        chain: Option<&mut ChainState>,
        out: &mut Emitter<'_>,
    ) -> Result<(), PluginError> {
        match self.nodes.kind(i) {
            IndexKind::Assistant => self.assistant_turn(i, chain, out)?,
            IndexKind::User {
                compact_summary: true,
                ..
            } => {
                let summary = self.read_whole(i)?;
                compaction(self.path, self.boundary.take(), summary, out)?;
            }
            IndexKind::User { .. } => {
                if let Some(record) = self.read_or_pass_over(i, out)? {
                    user_record(self.path, record, self.drops_empty_user_content, out)?;
                }
            }
            IndexKind::CompactBoundary { .. } => {
                self.boundary = Some(boundary_at(self.read_whole(i)?, out));
            }
            IndexKind::Malformed => {
                // Read again from its line, which names the fault.
                if self.read_or_pass_over(i, out)?.is_none() {
                    return Ok(());
                }
                return Err(PluginError::malformed_line(
                    self.path,
                    self.nodes.get(i).line(),
                    None,
                    "the record does not decode",
                ));
            }
            IndexKind::Other => {}
        }
        Ok(())
    }

    /// Which records make the assistant turn of the record at `i` (marked consumed), as Claude
    /// Code 2.1.197 orders them when it resumes (read from its bundle, checked with
    /// `live/tests/differential.rs`, `swap-every-pair`): all records sharing its message id,
    /// those on the conversation's path in path order, whatever their order in the file, then
    /// those off it (to be ordered by timestamp, ties in file order). Its results on the path
    /// come as the walk reaches them; those off it — the results hanging directly on one of the
    /// turn's records, as parallel calls leave all but the last — are sent after the turn's last
    /// record on the path, by timestamp (ties by record, then file order).
    fn turn_records(&mut self, i: usize) -> TurnRecords {
        let group = match self.groups.group_of(i as u32) {
            None => vec![i as u32],
            Some(n) => self.groups.records(n).to_vec(),
        };
        // (A turn of one record, the most common, is on the path: `i` is.)
        let (on_path, mut off_path) = if group.len() == 1 {
            (group.clone(), Vec::new())
        } else {
            let (mut on, off): (Vec<u32>, Vec<u32>) =
                group.iter().partition(|&&g| self.on_path.get(g as usize));
            let place = |g: u32| {
                let at = self.group_places.binary_search_by_key(&g, |&(r, _)| r);
                at.map_or(u32::MAX, |at| self.group_places[at].1)
            };
            on.sort_unstable_by_key(|&g| place(g));
            (on, off)
        };
        for &g in &on_path {
            self.consumed.set(g as usize);
        }
        off_path.retain(|&g| !self.consumed.get(g as usize));
        for &g in &off_path {
            self.consumed.set(g as usize);
        }
        let mut results = Vec::new();
        for &g in &group {
            for c in self.result_children.of(g) {
                let c = c as usize;
                if !self.on_path.get(c) && !self.consumed.get(c) {
                    self.consumed.set(c);
                    results.push(c);
                }
            }
        }
        TurnRecords {
            last_on_path: on_path.last().map_or(i, |&g| g as usize),
            on_path,
            off_path,
            results,
        }
    }

    /// An assistant turn (see [`Turns::turn_records`]): its records read whole into one event
    /// (or one a run the writer joined), its results off the path read and held until the walk
    /// passes the turn's last record on the path.
    fn assistant_turn(
        &mut self,
        i: usize,
        chain: Option<&mut ChainState>,
        out: &mut Emitter<'_>,
    ) -> Result<(), PluginError> {
        let turn = self.turn_records(i);
        let mut records = Vec::with_capacity(turn.on_path.len() + turn.off_path.len());
        for &g in &turn.on_path {
            records.extend(self.read_or_pass_over(g as usize, out)?);
        }
        let mut off = Vec::with_capacity(turn.off_path.len());
        for &g in &turn.off_path {
            off.extend(self.read_or_pass_over(g as usize, out)?);
        }
        by_timestamp(&mut off);
        records.extend(off);
        emit_assistant_turn(self.path, records, &self.loaded.models, chain, out)?;
        if turn.results.is_empty() {
            return Ok(());
        }
        let mut nodes = Vec::with_capacity(turn.results.len());
        for r in turn.results {
            nodes.extend(self.read_or_pass_over(r, out)?);
        }
        by_timestamp(&mut nodes);
        self.recovered_results.push((turn.last_on_path, nodes));
        Ok(())
    }

    /// The records of `list` in the order [`by_timestamp`] gives them once read whole (their
    /// timestamps are read only when there is an order to find).
    fn by_timestamp_of(&mut self, mut list: Vec<u32>) -> Result<Vec<u32>, PluginError> {
        if list.len() > 1 {
            let mut keyed = Vec::with_capacity(list.len());
            for g in list {
                keyed.push((self.read_decoded(g as usize)?.timestamp, g));
            }
            keyed.sort_by_key(|&(at, _)| at);
            list = keyed.into_iter().map(|(_, g)| g).collect();
        }
        Ok(list)
    }
}

/// The records of one assistant turn and its results off the path (see
/// [`Turns::turn_records`]).
struct TurnRecords {
    on_path: Vec<u32>,
    /// Not ordered yet: by timestamp once read.
    off_path: Vec<u32>,
    /// Not ordered yet: by timestamp once read.
    results: Vec<usize>,
    last_on_path: usize,
}

/// Whether the conversation [`assemble`] would make of `loaded` is made of its records in file
/// order, `records` of them, each a turn of its own but for assistant records that follow one
/// another with one message id: then a read that made the events in file order (as
/// `speculate` does while the file is written) made exactly [`assemble`]'s. Walks the path as
/// [`assemble`] does, decoding nothing but the timestamps that order records off it.
pub(super) fn made_in_file_order(
    path: &Path,
    loaded: Loaded,
    rules: ReadRules,
    records: usize,
) -> Result<bool, PluginError> {
    let Walk {
        path_nodes,
        mut turns,
        ..
    } = walk(path, loaded, rules)?;
    let mut order = FileOrder::default();
    let mut recovered: Vec<(usize, Vec<u32>)> = Vec::new();
    for i in path_nodes.into_iter().map(|i| i as usize) {
        if !turns.consumed.get(i) {
            turns.consumed.set(i);
            let in_order = match turns.nodes.kind(i) {
                IndexKind::Assistant => {
                    let turn = turns.turn_records(i);
                    let off = turns.by_timestamp_of(turn.off_path)?;
                    let results = turn.results.into_iter().map(|r| r as u32).collect();
                    let results = turns.by_timestamp_of(results)?;
                    if !results.is_empty() {
                        recovered.push((turn.last_on_path, results));
                    }
                    turn.on_path.iter().chain(&off).all(|&g| order.next(g))
                }
                IndexKind::User { .. } | IndexKind::CompactBoundary { .. } => order.next(i as u32),
                IndexKind::Malformed => false,
                IndexKind::Other => true,
            };
            if !in_order {
                return Ok(false);
            }
        }
        while let Some(k) = recovered.iter().position(|(after, _)| *after == i) {
            let (_, results) = recovered.swap_remove(k);
            if !results.into_iter().all(|r| order.next(r)) {
                return Ok(false);
            }
        }
    }
    Ok(order.count == records)
}

/// Records as a walk hands them on, checked to come in file order (the nodes are numbered in
/// file order).
#[derive(Default)]
struct FileOrder {
    last: Option<u32>,
    count: usize,
}

impl FileOrder {
    fn next(&mut self, record: u32) -> bool {
        if self.last.is_some_and(|last| record <= last) {
            return false;
        }
        self.last = Some(record);
        self.count += 1;
        true
    }
}

/// The events of an assistant turn's records (read whole, in Claude Code's order): one event, or
/// one for each run the writer joined into the message, where each started.
pub(super) fn emit_assistant_turn(
    path: &Path,
    mut records: Vec<Node>,
    models: &[Box<str>],
    mut chain: Option<&mut ChainState>,
    out: &mut Emitter<'_>,
) -> Result<(), PluginError> {
    let starts: Vec<usize> = (0..records.len())
        .filter(|&k| k == 0 || records[k].extras.as_ref().is_some_and(|e| e.joined))
        .collect();
    let mut runs = Vec::with_capacity(starts.len());
    for &start in starts.iter().rev() {
        runs.push(records.split_off(start));
    }
    for mut run in runs.into_iter().rev() {
        let at = out.time_of(run.first().and_then(|r| r.timestamp));
        out.emit(assistant_event(
            path,
            &mut run,
            models,
            at,
            chain.as_deref_mut(),
        )?);
    }
    Ok(())
}

/// The events of a user record read whole (none for an empty one the Claude Code read for drops:
/// `drops_empty`).
pub(super) fn user_record(
    path: &Path,
    mut record: Node,
    drops_empty: bool,
    out: &mut Emitter<'_>,
) -> Result<(), PluginError> {
    let empty = matches!(&record.kind,
        Kind::User { content: UserContent::Parts(parts), .. } if parts.is_empty());
    if empty && drops_empty {
        return Ok(());
    }
    user_events(path, &mut record, out)
}

/// A compact boundary read whole, with the id of the event handed on before it (what a
/// compaction replaces through: the events between the boundary and the summary are the ones it
/// keeps).
pub(super) fn boundary_at(node: Node, out: &Emitter<'_>) -> (Node, Option<String>) {
    let before = out.emitted.then(|| out.last_id.clone());
    (node, before)
}

/// A compact summary: with the boundary before it, one compaction replacing everything handed on
/// before the boundary (the records between the boundary and the summary are the events it
/// keeps, which Claude Code sends before the summary); without one, everything handed on so far.
pub(super) fn compaction(
    path: &Path,
    boundary: Option<(Node, Option<String>)>,
    mut node: Node,
    out: &mut Emitter<'_>,
) -> Result<(), PluginError> {
    let (replaces, id, timestamp) = match boundary {
        Some((mut b, before)) => (before, take_uuid(&mut b), b.timestamp),
        None => (
            out.emitted.then(|| out.last_id.clone()),
            take_uuid(&mut node),
            node.timestamp,
        ),
    };
    let Some(replaces) = replaces else {
        return Err(PluginError::malformed_line(
            path,
            node.line,
            Some("isCompactSummary"),
            "a compaction with nothing before it",
        ));
    };
    let node = &mut node;
    let Kind::User { content, .. } = &mut node.kind else {
        unreachable!()
    };
    let mut summary = String::new();
    for (k, b) in std::mem::take(content)
        .into_blocks()
        .into_iter()
        .enumerate()
    {
        match b {
            ParsedBlock::Text(t) if summary.is_empty() => summary = t,
            ParsedBlock::Text(t) => {
                summary.push('\n');
                summary.push_str(&t);
            }
            _ => {
                return Err(PluginError::malformed_line(
                    path,
                    node.line,
                    Some(&format!("message.content[{k}]")),
                    "a compact summary holds text only",
                ));
            }
        }
    }
    let mut event = Event::new(
        id,
        out.time_of(timestamp),
        Body::Compaction {
            summary,
            replaces_through: replaces,
        },
    );
    event.author = node.take_author();
    out.emit(event);
    Ok(())
}
