//! `handoff sessions <target>`: a target's sessions, newest first, as its plugin lists them, and
//! the newest session of a directory (what `--from <target>` and `read <target>` take without an
//! id).
//!
//! A plugin's listing reads only what its CLI's own listing reads (the id, title, cwd and update
//! time); the event count needs a full read, so it is counted here, exactly (the plugin's reader
//! streams the session), for the sessions shown only: `--limit` (default 20) keeps a store of
//! thousands of sessions fast to list.
//!
//! Each session shows the conversation it belongs to (issue 26): an episode handoff wrote
//! carries its conversation (the store root's sealed ledger, else the session's marker); any
//! other session starts its own (`<target>:<first event id>`). The column is a short label of
//! the conversation (the same on every target's listing) and the episode's hop; `--json` gives
//! the conversation whole.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use handoff_host::episodes::{self, Episode};
use handoff_host::{Plugin, ReadFrom, SessionInfo, StoreRoot};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output::{self, outln};

/// How many sessions are shown (and counted) when `--limit` is not given.
const DEFAULT_LIMIT: usize = 20;

#[derive(clap::Args)]
pub struct Args {
    /// The target, e.g. `claude-code`.
    target: String,
    /// Only the sessions of this working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The target's store root; default: the configured or real one (e.g. ~/.codex).
    #[arg(long, value_name = "DIR")]
    store_root: Option<PathBuf>,
    /// Show (and count the events of) at most N sessions, newest first; 0 shows them all.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let plugin = catalog.plugin(&args.target)?;
    let root = config.store_root(&catalog.target(&args.target)?, args.store_root.as_deref())?;
    let cwd = args.cwd.as_deref().map(CwdFilter::new).transpose()?;
    let limit = if args.limit == 0 {
        usize::MAX
    } else {
        args.limit
    };
    let sessions: Vec<SessionInfo> = plugin
        .reader()
        .list(&root, &args.target)?
        .into_iter()
        .filter(|s| cwd.as_ref().is_none_or(|c| c.matches(s)))
        .take(limit)
        .collect();
    let ledger = episodes::all(&root, &catalog.seal()?);
    let listed: Vec<Listed> = sessions
        .into_iter()
        .map(|session| listed(plugin.as_ref(), &root, &ledger, session))
        .collect();
    if args.json {
        output::json(&listed)?;
        return Ok(ExitCode::SUCCESS);
    }
    let sessions: Vec<SessionInfo> = listed.iter().map(|l| l.session.clone()).collect();
    if sessions.is_empty() {
        output::note(format_args!(
            "no {} sessions under {}{}",
            args.target,
            root.path().display(),
            cwd.map(|c| format!(" with cwd {}", c.shown))
                .unwrap_or_default()
        ));
    }
    for (s, l) in sessions.iter().zip(&listed) {
        outln!(
            "{}  {}  {:>6}  {}  {}  {}",
            s.session.id,
            updated(s.updated_ms),
            s.events.map_or("?".to_owned(), |n| n.to_string()),
            conversation_column(l),
            s.cwd.as_deref().unwrap_or("-"),
            one_line(s.title.as_deref().unwrap_or("")),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The newest session of `target` whose cwd is `dir`, with its events counted: what
/// `continue --from <target>` and `read <target>` take without an id. None is bad usage (exit 2),
/// naming the target, the directory and the store.
pub fn newest_of_dir(
    plugin: &dyn Plugin,
    root: &StoreRoot,
    target: &str,
    dir: &Path,
) -> Result<SessionInfo, CliError> {
    let filter = CwdFilter::new(dir)?;
    let mut newest = plugin
        .reader()
        .list(root, target)?
        .into_iter()
        .find(|s| filter.matches(s))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "no {target} session with cwd {} under {}; list them with `handoff sessions {target}`, or name one: {target}:<id or path>",
                filter.shown,
                root.path().display()
            ))
        })?;
    let _ = count_events(plugin, root, &mut newest);
    Ok(newest)
}

/// What `continue` and `read` say on stderr about the session they took.
pub fn describe(s: &SessionInfo) -> String {
    let mut line = format!(
        "{} session {} (updated {}",
        s.session.target,
        s.session.id,
        updated(s.updated_ms)
    );
    if let Some(n) = s.events {
        line += &format!(", {n} events");
    }
    line += ")";
    if let Some(title) = s.title.as_deref().filter(|t| !t.trim().is_empty()) {
        line += &format!(": {}", one_line(title));
    }
    line
}

/// A listed session with its conversation.
#[derive(serde::Serialize)]
pub(crate) struct Listed {
    #[serde(flatten)]
    pub(crate) session: SessionInfo,
    /// The conversation it belongs to (`None`: it could not be read, and handoff did not write it).
    pub(crate) conversation: Option<String>,
    /// The hop that last wrote it (0: the conversation's origin, a session handoff did not write).
    pub(crate) hop: u32,
}

/// `session` as a listing shows it: its events counted, its conversation found in `ledger` (the
/// store's episodes) or by its marker or first event.
pub(crate) fn listed(
    plugin: &dyn Plugin,
    root: &StoreRoot,
    ledger: &std::collections::BTreeMap<String, Vec<Episode>>,
    mut session: SessionInfo,
) -> Listed {
    let first = count_events(plugin, root, &mut session);
    let (conversation, hop) = conversation_of(ledger, &session, first.as_deref());
    Listed {
        session,
        conversation,
        hop,
    }
}

/// The conversation of a listed session: the ledger's, else its marker's, else the one it starts.
fn conversation_of(
    ledger: &std::collections::BTreeMap<String, Vec<Episode>>,
    session: &SessionInfo,
    first_event: Option<&str>,
) -> (Option<String>, u32) {
    let recorded = ledger.iter().find_map(|(conversation, episodes)| {
        episodes
            .iter()
            .find(|e| e.target == session.session.target && e.session == session.session.id)
            .map(|e| (conversation, e.hop))
    });
    match (recorded, &session.locator) {
        // The ledger and the marker disagree: the marker wins (see `handoff_host::episodes`).
        (Some((conversation, hop)), marker)
            if marker.as_ref().is_none_or(|m| m == conversation) =>
        {
            (Some(conversation.clone()), hop)
        }
        (_, Some(marker)) => (Some(marker.clone()), 0),
        _ => (
            first_event.map(|id| episodes::origin(&session.session.target, id)),
            0,
        ),
    }
}

/// The conversation column: its short label, and the hop of an episode (`origin` otherwise).
pub(crate) fn conversation_column(listed: &Listed) -> String {
    match &listed.conversation {
        None => format!("{:<17}", "-"),
        Some(c) if listed.hop == 0 => format!("{} origin  ", episodes::short_label(c)),
        Some(c) => format!("{} hop {:<3}", episodes::short_label(c), listed.hop),
    }
}

/// Counts `session`'s events with the plugin's streaming reader, and returns the id of its first;
/// a session it cannot read keeps no count (the listing still shows it).
fn count_events(
    plugin: &dyn Plugin,
    root: &StoreRoot,
    session: &mut SessionInfo,
) -> Option<String> {
    let mut events = 0u64;
    let mut first = None;
    let read = plugin
        .reader()
        .read_each(ReadFrom::Session(root, &session.session), &mut |event| {
            if first.is_none() {
                first = Some(event.id);
            }
            events += 1;
            true
        });
    match read {
        Ok(_) => session.events = Some(events),
        Err(e) => tracing::warn!("cannot count the events of {}: {e}", session.session.id),
    }
    first
}

/// A working directory as the CLIs record it: the absolute path as given, or its physical path
/// (symbolic links resolved), whichever a session names.
pub(crate) struct CwdFilter {
    shown: String,
    physical: Option<String>,
}

impl CwdFilter {
    pub(crate) fn new(dir: &Path) -> Result<CwdFilter, CliError> {
        let absolute = crate::config::absolute(dir)?;
        let physical = std::fs::canonicalize(&absolute)
            .ok()
            .map(|p| p.display().to_string());
        Ok(CwdFilter {
            shown: absolute.display().to_string(),
            physical,
        })
    }

    pub(crate) fn matches(&self, session: &SessionInfo) -> bool {
        let Some(cwd) = session.cwd.as_deref() else {
            return false;
        };
        let cwd = cwd.trim_end_matches('/');
        cwd == self.shown.trim_end_matches('/') || self.physical.as_deref() == Some(cwd)
    }
}

/// `YYYY-MM-DD HH:MM` (UTC) of a listing's modification time.
pub(crate) fn updated(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".into())
}

/// A title on one line, at most 72 characters.
pub(crate) fn one_line(title: &str) -> String {
    let flat: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(72) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_host::SessionRef;

    fn info(cwd: Option<&str>) -> SessionInfo {
        SessionInfo {
            session: SessionRef {
                target: "t".into(),
                id: "s1".into(),
                path: "/r/s1.jsonl".into(),
            },
            owned: false,
            locator: None,
            updated_ms: 0,
            title: Some("fix\nthe bug".into()),
            cwd: cwd.map(str::to_owned),
            events: None,
        }
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        let long = "x".repeat(100);
        assert_eq!(one_line(&long).chars().count(), 73);
        assert_eq!(updated(0), "1970-01-01 00:00");
    }

    #[test]
    fn a_directory_matches_by_its_given_or_physical_path() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let physical = std::fs::canonicalize(&real).unwrap().display().to_string();
        let by_link = CwdFilter::new(&link).unwrap();
        assert!(by_link.matches(&info(Some(&physical))));
        assert!(by_link.matches(&info(Some(&link.display().to_string()))));
        assert!(by_link.matches(&info(Some(&format!("{physical}/")))));
        assert!(!by_link.matches(&info(Some(&format!("{physical}x")))));
        assert!(!by_link.matches(&info(None)));
    }

    #[test]
    fn the_taken_session_is_described_on_one_line() {
        let mut s = info(None);
        s.events = Some(4);
        assert_eq!(
            describe(&s),
            "t session s1 (updated 1970-01-01 00:00, 4 events): fix the bug"
        );
    }
}
