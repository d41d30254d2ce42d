//! handoff-conformance: the suite every plugin passes before a host offers its targets.
//!
//! [`run`] takes any [`Plugin`] — linked in, or loaded from a shared library and wrapped back into
//! the same traits — and runs the offline checks of the design against scratch store roots:
//! manifest, round trip over the built-in [`corpus`], fidelity (what a target cannot carry is
//! refused and nothing is left behind), append, strict resume with decoys, ownership, and bad
//! input. Each check reports an id, a status, a duration and its evidence (the diff on failure).
#![deny(missing_docs)]

pub mod certificate;
mod checks;
pub mod corpus;
mod lent;
pub mod report;
mod sandbox;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use handoff_host::{Plugin, PLUGIN_API_VERSION};

pub use lent::LentInSteps;
pub use report::{CheckResult, Report, Status, REPORT_SCHEMA};

/// The suite version; certificates are keyed by it.
/// 1.1.0: the suite calls the resolve-once traits (v2), and strict resume adds a prefix decoy;
/// certificates of 1.0.0 no longer vouch for anything.
/// 1.2.0: bad input's huge line is 4 MiB, not 64 MiB (still longer than any reader's buffer), and
/// round trip lists the store once, after writing every entry, instead of after each.
/// 1.3.0: `streamed`: `create_streamed`, `read_path_each` and `read_path_cwd` agree with `create`
/// and `read_path` (the continuation engine streams a source through them).
/// 1.4.0: `streamed` also reads through `read_path_batches` and `read_each_batches`, which the
/// engine's threads take a source and a read-back through.
/// 1.5.0: `streamed` also reads each session as if its writer were still writing it
/// (`read_written_each`, `read_written_batches`: the engine's verify reads a new session so),
/// which must yield `read_path`'s events or decline, and fail, not end short, on a file its
/// writer abandons.
/// 1.6.0: the corpus has a freeform (custom) tool call (`freeform-tool-call`) and a web search
/// (`web-search`): carried by the targets that declare them, refused by the others.
pub const SUITE_VERSION: &str = "1.6.0";

/// What to run and where.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these check ids (e.g. `round_trip/claude-code`, or a kind such as `round_trip`);
    /// all when empty.
    pub only: Vec<String>,
    /// Where to make scratch directories; the system temp dir when `None`.
    pub scratch: Option<PathBuf>,
    /// How many checks run at once (each in its own scratch store root); [`DEFAULT_JOBS`] when
    /// `None`, one after the other with `Some(1)`.
    pub jobs: Option<usize>,
}

/// How many checks run at once by default. The checks mostly wait on the disk (every write a
/// plugin makes is synced), and waits that overlap cost about one.
pub const DEFAULT_JOBS: usize = 8;

/// The kinds of per-target checks, in the order they run.
pub const TARGET_CHECKS: [&str; 7] = [
    "round_trip",
    "streamed",
    "fidelity",
    "append",
    "strict_resume",
    "ownership",
    "bad_input",
];

/// Every check id the suite would run on this plugin, in order.
pub fn check_ids(plugin: &dyn Plugin) -> Vec<String> {
    let manifest = plugin.manifest();
    let mut ids = vec!["manifest".to_owned()];
    for kind in TARGET_CHECKS {
        for target in &manifest.targets {
            ids.push(format!("{kind}/{}", target.name));
        }
    }
    ids
}

/// Runs the suite (or the checks `options.only` selects) and reports every check.
pub fn run(plugin: &dyn Plugin, options: &Options) -> Report {
    let manifest = plugin.manifest();
    let selected = |id: &str| {
        options.only.is_empty()
            || options
                .only
                .iter()
                .any(|o| o == id || id.split('/').next() == Some(o.as_str()))
    };
    let ids: Vec<String> = check_ids(plugin)
        .into_iter()
        .filter(|id| selected(id))
        .collect();
    let checks = run_checks(plugin, &ids, options);
    Report {
        schema: REPORT_SCHEMA.to_owned(),
        suite_version: SUITE_VERSION.to_owned(),
        host_api_version: PLUGIN_API_VERSION.to_owned(),
        plugin: manifest.name,
        plugin_version: manifest.version,
        checks,
    }
}

/// Runs `ids`, up to `options.jobs` at once; the results are in the order of `ids`.
fn run_checks(plugin: &dyn Plugin, ids: &[String], options: &Options) -> Vec<CheckResult> {
    map_at_once(ids, jobs(options), |id| run_check(plugin, id, options))
}

/// How many things run at once under `options`.
fn jobs(options: &Options) -> usize {
    options.jobs.unwrap_or(DEFAULT_JOBS).max(1)
}

/// `each` of every item, up to `jobs` at once, in the order of `items`. A panic in `each` is
/// the caller's (the suite catches the plugin's per check, in [`run_check`]).
fn map_at_once<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    each: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        return items.iter().map(each).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break done };
                        done.push((i, each(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs one check by id. A panic inside the plugin fails the check; it never ends the caller.
pub fn run_check(plugin: &dyn Plugin, id: &str, options: &Options) -> CheckResult {
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        checks::dispatch(plugin, id, options)
    }));
    let (status, evidence) = match outcome {
        Ok(Ok(evidence)) => (Status::Pass, evidence),
        Ok(Err(evidence)) => (Status::Fail, evidence),
        Err(panic) => (
            Status::Fail,
            vec![format!(
                "the plugin panicked: {}",
                handoff_capability::panic_message(&*panic)
            )],
        ),
    };
    CheckResult {
        id: id.to_owned(),
        status,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
        evidence,
    }
}
