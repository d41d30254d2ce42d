//! The episodes of a conversation: handoff's own record of the sessions it wrote for each
//! conversation, kept where a native rewrite of a session cannot erase it.
//!
//! A conversation hops between agents (Claude Code → Codex → Claude Code → pi …); each target
//! gets one **episode**, a native session handoff wrote and later extends. Every episode carries
//! its conversation in two places:
//!
//! - the **ledger**: `<root>/.handoff/episodes/<sha256 of the conversation>.json`, one file per
//!   conversation per store root, written atomically under the conversation's lock and **sealed**
//!   with this user's key for this store root ([`crate::seal`], as journals are). A ledger file
//!   that does not verify (planted, edited, copied from another root) is ignored with a warning;
//!   a sealed one is acted on only inside its store root (links resolved).
//! - the **marker** in the session file (`x-handoff`'s `locator`), the second witness: a CLI that
//!   rewrites the file (Codex's `migrate-rollouts`, a compaction) may drop it.
//!
//! When the two disagree: a session the sealed ledger names counts as an episode of its
//! conversation when its file carries no marker (a native rewrite dropped it) or a marker naming
//! the same conversation; a marker naming another conversation wins (the file in that place is not
//! the one the ledger recorded), and the ledger's entry is ignored (and dropped at the next write
//! of that conversation). A marker with no ledger entry (the ledger was lost, or the session was
//! written by a handoff before the ledger) counts, as it always did. Either way the content
//! decides: an episode is extended only when its transcript is an exact prefix of the source's.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use handoff_store::marker::{OwnershipMarker, MARKER_KEY};
use handoff_store::StoreRoot;
use handoff_transcript::{Body, Event};

use crate::journal::resolve_inside;
use crate::seal::{Purpose, Seal, SealedRecord};

/// The schema of a ledger file.
pub const EPISODES_SCHEMA: &str = "handoff.episodes/1";

/// A ledger file larger than this is not read (it is not one handoff wrote).
const MAX_LEDGER_BYTES: u64 = 16 << 20;

/// How far into a session file the host looks for the marker.
const MARKER_HEAD_LINES: usize = 64;
const MARKER_HEAD_BYTES: u64 = 4 << 20;

/// One session handoff wrote (or extended) for a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Episode {
    /// The target it belongs to.
    pub target: String,
    /// Its native id.
    pub session: String,
    /// Its file, relative to the store root (links resolved).
    pub path: String,
    /// The id of its first event as the target's reader reads it: a session that a CLI continued
    /// natively into a new file with the same first record is known by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event: Option<String>,
    /// The hop of the conversation that last wrote it (the origin is hop 0).
    pub hop: u32,
    /// How many events it held then.
    pub events: usize,
    /// When it was last written by handoff, in milliseconds since the epoch.
    pub updated_ms: i64,
    /// The user's own session, extended on request (`--into`): never reused by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub into: bool,
    /// The call ids of the tool results it holds as failed, as handoff wrote them: a format
    /// with no error flag of its own keeps it in handoff's event extras, which a native rewrite
    /// (`codex migrate-rollouts`) drops; handoff reads the episode with these flags put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The call ids of `events`' failed tool results.
pub fn failed_calls<'e>(events: impl IntoIterator<Item = &'e Event>) -> Vec<String> {
    events
        .into_iter()
        .filter_map(|e| match e.body.as_tool_result()? {
            (call_id, _, true) => Some(call_id.to_owned()),
            _ => None,
        })
        .collect()
}

/// Puts back the error flag of a tool result the ledger recorded as failed (`errors`): a native
/// rewrite may have dropped it. Never clears one.
pub fn restore_error_flag(event: &mut Event, errors: &[String]) {
    if let Body::ToolResult {
        call_id, is_error, ..
    } = &mut event.body
    {
        if !*is_error && errors.iter().any(|c| c == call_id) {
            *is_error = true;
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    schema: String,
    conversation: String,
    episodes: Vec<Episode>,
    #[serde(default)]
    seal: String,
}

impl SealedRecord for Record {
    const PURPOSE: Purpose = Purpose::Episodes;

    fn seal_mut(&mut self) -> &mut String {
        &mut self.seal
    }
}

/// The folder of a store root's ledger.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".handoff").join("episodes")
}

/// The ledger file's name for `conversation`.
fn file_name(conversation: &str) -> String {
    format!(
        "{}.json",
        hex::encode(Sha256::digest(conversation.as_bytes()))
    )
}

fn resolved(root: &StoreRoot) -> io::Result<PathBuf> {
    std::fs::canonicalize(root.path())
}

/// Reads and verifies one ledger file; `Err` says why it is not trusted.
fn read_ledger(seal: &Seal, root: &Path, file: &Path) -> Result<Record, String> {
    let path = resolve_inside(root, file).map_err(|e| e.to_string())?;
    let opened = std::fs::File::open(&path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    opened
        .take(MAX_LEDGER_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_LEDGER_BYTES {
        return Err("larger than any ledger handoff writes".into());
    }
    let record: Record =
        serde_json::from_slice(&bytes).map_err(|e| format!("not an episode ledger: {e}"))?;
    if record.schema != EPISODES_SCHEMA {
        return Err(format!(
            "schema {:?}, this host reads {EPISODES_SCHEMA:?}",
            record.schema
        ));
    }
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name != file_name(&record.conversation) {
        return Err("its name is not its conversation's".into());
    }
    if !seal.verifies_record(root, &name, &record) {
        return Err("its seal does not verify under this user's key: not written by this user's handoff for this store root (planted, edited or moved)".into());
    }
    Ok(record)
}

/// The episodes of `conversation` the ledger of `root` records, newest first; an untrusted
/// ledger is named in a warning and counts as none.
pub fn of_conversation(root: &StoreRoot, seal: &Seal, conversation: &str) -> Vec<Episode> {
    let Ok(resolved) = resolved(root) else {
        return Vec::new();
    };
    let file = dir(&resolved).join(file_name(conversation));
    if !file.exists() {
        return Vec::new();
    }
    match read_ledger(seal, &resolved, &file) {
        Ok(record) if record.conversation == conversation => newest_first(record.episodes),
        Ok(_) => Vec::new(),
        Err(why) => {
            tracing::warn!(path = %file.display(), "ignoring the episode ledger: {why}");
            Vec::new()
        }
    }
}

fn newest_first(mut episodes: Vec<Episode>) -> Vec<Episode> {
    episodes.sort_by_key(|e| std::cmp::Reverse(e.updated_ms));
    episodes
}

/// Every trusted ledger entry of `root`: conversation → its episodes, newest first.
pub fn all(root: &StoreRoot, seal: &Seal) -> BTreeMap<String, Vec<Episode>> {
    let mut found = BTreeMap::new();
    let Ok(resolved) = resolved(root) else {
        return found;
    };
    let Ok(entries) = std::fs::read_dir(dir(&resolved)) else {
        return found;
    };
    for entry in entries.flatten() {
        let file = entry.path();
        if file.extension().is_none_or(|e| e != "json") {
            continue;
        }
        match read_ledger(seal, &resolved, &file) {
            Ok(record) => {
                found.insert(record.conversation, newest_first(record.episodes));
            }
            Err(why) => {
                tracing::warn!(path = %file.display(), "ignoring the episode ledger: {why}")
            }
        }
    }
    found
}

/// A session file's path relative to the resolved store root, if it lies inside it.
pub fn relative_path(root: &StoreRoot, session: &Path) -> Option<String> {
    let resolved = resolved(root).ok()?;
    let file = std::fs::canonicalize(session).ok()?;
    file.strip_prefix(&resolved)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Records `episode` of `conversation` in the ledger of `root` (replacing the entry of the same
/// target and session, and dropping `forget`'s), sealed, written atomically. The caller holds the
/// conversation's lock, whose key is `lock_key`: the temp file is named after it, so a killed
/// run's is removed by the next recovery once that lock is free ([`remove_stale_temps`]).
pub fn record(
    root: &StoreRoot,
    seal: &Seal,
    conversation: &str,
    lock_key: &str,
    episode: Episode,
    forget: &[String],
) -> io::Result<()> {
    let resolved = resolved(root)?;
    let folder = dir(&resolved);
    std::fs::create_dir_all(&folder)?;
    let name = file_name(conversation);
    let file = resolve_inside(&resolved, &folder.join(&name))?;
    let mut episodes = if file.exists() {
        match read_ledger(seal, &resolved, &file) {
            Ok(record) => record.episodes,
            Err(why) => {
                tracing::warn!(path = %file.display(), "replacing an episode ledger that is not trusted: {why}");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let replaced = |e: &Episode| e.target == episode.target && e.session == episode.session;
    episodes.retain(|e| !replaced(e) && !forget.contains(&e.session));
    episodes.push(episode);
    let mut record = Record {
        schema: EPISODES_SCHEMA.into(),
        conversation: conversation.to_owned(),
        episodes,
        seal: String::new(),
    };
    seal.seal_record(&resolved, &name, &mut record)?;
    let json = serde_json::to_vec_pretty(&record).map_err(io::Error::other)?;
    let temp = folder.join(format!("{name}.{lock_key}.tmp"));
    let written = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        out.write_all(&json)?;
        out.sync_all()?;
        std::fs::rename(&temp, &file)?;
        handoff_store::atomic::sync_parent(&file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Removes the ledger temp files killed runs left in `root`: `<ledger>.<lock key>.tmp` whose
/// conversation lock is free (its run is gone) or is `held` (the caller's own, so no live run
/// writes it). Only inside the root; anything else in the folder is left alone.
pub fn remove_stale_temps(root: &StoreRoot, held: Option<&str>) {
    let Ok(resolved) = resolved(root) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir(&resolved)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(key) = name
            .strip_suffix(".tmp")
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(_, key)| key)
            .filter(|key| key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()))
        else {
            continue;
        };
        use handoff_store::lock::Lock;
        let gone = held == Some(key)
            || !Lock::path_of(root, key).exists()
            || matches!(Lock::try_key(root, key), Ok(Some(_)));
        if !gone {
            continue;
        }
        let Ok(temp) = resolve_inside(&resolved, &entry.path()) else {
            continue;
        };
        match std::fs::remove_file(&temp) {
            Ok(()) => {
                tracing::debug!(path = %temp.display(), "removed a killed run's ledger temp file")
            }
            Err(e) => {
                tracing::warn!(path = %temp.display(), error = %e, "cannot remove a killed run's ledger temp file")
            }
        }
    }
}

/// The marker of a session file, found by the host in the file's first lines (every CLI plugin
/// marks the first record that tolerates an extra member): the second witness, read without the
/// plugin.
pub fn marker_in_head(path: &Path) -> Option<OwnershipMarker> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let reader = io::BufReader::new(file.take(MARKER_HEAD_BYTES));
    for line in reader.lines().take(MARKER_HEAD_LINES) {
        let line = line.ok()?;
        if !line.contains(MARKER_KEY) {
            continue;
        }
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) {
            if let Some(marker) = find_marker(&value) {
                return Some(marker);
            }
        }
    }
    None
}

fn find_marker(value: &serde_json::Value) -> Option<OwnershipMarker> {
    match value {
        serde_json::Value::Object(map) => {
            OwnershipMarker::find(value).or_else(|| map.values().find_map(find_marker))
        }
        serde_json::Value::Array(items) => items.iter().find_map(find_marker),
        _ => None,
    }
}

/// How a source session's conversation was known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Witness {
    /// The sealed ledger of its store root names it (and its marker agrees or is gone).
    Ledger,
    /// Its marker names it (no ledger entry, or the ledger disagreed).
    Marker,
    /// Its first event is an episode's first event: a CLI continued that episode natively into a
    /// new session.
    FirstEvent,
    /// None: it is the conversation's origin (`<target>:<first event id>`).
    Origin,
}

/// Which conversation a source session belongs to, and its hop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceIdentity {
    /// The conversation.
    pub conversation: String,
    /// The hop that last wrote the source (0: the origin, or not known).
    pub hop: u32,
    /// How it was known.
    pub witness: Witness,
    /// The failed calls the ledger recorded for it (see [`Episode::errors`]).
    pub errors: Vec<String>,
}

/// The store roots a session file may belong to: each folder above it holding a ledger folder.
fn ledger_roots(path: &Path) -> Vec<StoreRoot> {
    path.ancestors()
        .skip(1)
        .filter(|a| dir(a).is_dir())
        .filter_map(|a| StoreRoot::new(a).ok())
        .collect()
}

/// The conversation a source session file belongs to: the ledger of a store root above it, then
/// its marker, then an episode with its first event, else it is an origin.
pub fn identify_source(
    seal: &Seal,
    source_target: &str,
    path: &Path,
    first_event: &str,
) -> SourceIdentity {
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let marker = marker_in_head(&file).and_then(|m| m.locator);
    let roots = ledger_roots(&file);
    let ledgers: Vec<BTreeMap<String, Vec<Episode>>> = roots.iter().map(|r| all(r, seal)).collect();
    for (root, ledger) in roots.iter().zip(&ledgers) {
        let Some(relative) = relative_path(root, &file) else {
            continue;
        };
        for (conversation, episodes) in ledger {
            let Some(episode) = episodes
                .iter()
                .find(|e| e.target == source_target && e.path == relative)
            else {
                continue;
            };
            match &marker {
                Some(other) if other != conversation => {
                    tracing::warn!(path = %file.display(), ledger = %conversation, marker = %other,
                        "the ledger and the session's marker name different conversations; the marker wins");
                }
                _ => {
                    return SourceIdentity {
                        conversation: conversation.clone(),
                        hop: episode.hop,
                        witness: Witness::Ledger,
                        errors: episode.errors.clone(),
                    }
                }
            }
        }
    }
    if let Some(conversation) = marker {
        let hop = ledgers
            .iter()
            .filter_map(|l| l.get(&conversation))
            .flatten()
            .map(|e| e.hop)
            .max()
            .unwrap_or(0);
        return SourceIdentity {
            conversation,
            hop,
            witness: Witness::Marker,
            errors: Vec::new(),
        };
    }
    for ledger in &ledgers {
        for (conversation, episodes) in ledger {
            if let Some(episode) = episodes.iter().find(|e| {
                e.target == source_target && e.first_event.as_deref() == Some(first_event)
            }) {
                return SourceIdentity {
                    conversation: conversation.clone(),
                    hop: episode.hop,
                    witness: Witness::FirstEvent,
                    errors: Vec::new(),
                };
            }
        }
    }
    SourceIdentity {
        conversation: origin(source_target, first_event),
        hop: 0,
        witness: Witness::Origin,
        errors: Vec::new(),
    }
}

/// The conversation an origin session starts: its target and its first event's id.
pub fn origin(target: &str, first_event: &str) -> String {
    format!("{target}:{first_event}")
}

/// A short, stable label of a conversation for a column (the first 8 hex digits of its hash).
pub fn short_label(conversation: &str) -> String {
    hex::encode(&Sha256::digest(conversation.as_bytes())[..4])
}

#[cfg(test)]
mod tests;
