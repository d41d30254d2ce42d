//! handoff-live: the live tier of the conformance suite and the `conformance` binary.
//!
//! Everything here runs a server or a real CLI, so it lives apart from `handoff-conformance` (the
//! offline suite, which the `handoff` binary links): `handoff` carries neither tokio nor hyper.
//! - [`fake_provider`]: a loopback server speaking each provider API as it streams;
//! - the live tier (this module's functions, [`cli`], [`wire`]): real CLIs resume what a plugin
//!   wrote, against the fake provider;
//! - [`harness`]: the standard tests of a plugin crate (`plugin_tests!`);
//! - [`child`]: the child-process protocol of the `conformance` binary;
//! - [`bench`](mod@bench): benchmark harnesses every plugin runs the same way.
//!
//! # The live tier
//!
//! For every CLI target whose manifest declares a [`LiveRecipe`](handoff_capability::live::LiveRecipe),
//! and every corpus transcript the target carries, [`run_live`]:
//! 1. makes a temporary HOME and writes the recipe's files into it (placeholders `{base_url}`,
//!    `{home}`, `{store_root}`), with a project folder `{home}/proj` as the session's cwd;
//! 2. writes the transcript with the plugin's [`Writer`](handoff_host::Writer) into the store root
//!    `{home}/{recipe.store_root}`;
//! 3. asks the plugin's [`Resumer`](handoff_host::Resumer) for the plan with a new prompt, and runs
//!    it: the program from the install cache (`scripts/install-clis.sh`), `HANDOFF_CLI_DIR` or
//!    `PATH`, at the recipe's pinned version; a clean environment with HOME set, the recipe's and
//!    the plan's variables, stdin closed when the plan says so, a timeout;
//! 4. takes the first model request the fake provider received whose last user turn holds the new
//!    prompt (side requests — token counts, titles — are skipped), parses its history with the
//!    dialect parser of `handoff-dialects`, sets aside what the CLI injected (system prompt,
//!    `<system-reminder>`, environment context), and requires semantic equality with the
//!    transcript plus the new prompt (the target's comparison, on the wire view of
//!    [`wire`]); the diff on failure;
//! 5. requires that the CLI kept the session: our file grew and still starts with the bytes we
//!    wrote, and the plugin's reader lists the same sessions as before (no new one);
//! 6. reads the session back with the plugin's reader: the transcript must be a prefix, followed
//!    by the prompt and the fake's answer the CLI appended (the continuation engine reads sessions
//!    a person went on with in the real CLI).
//!
//! One more check per target: a missing id (a session written, planned, then removed by the
//! plugin) makes the CLI exit non-zero without sending a model request.
//!
//! Where the CLI is not installed at the pinned version every check reports
//! [`Status::Skip`](handoff_conformance::Status) with the reason — never a pass. CI treats a skip as a failure:
//! see [`skips_are_failures`].

#![deny(missing_docs)]

pub mod bench;
pub mod child;
pub mod cli;
pub mod differential;
pub mod fake_provider;
pub mod harness;
pub mod hop;
pub mod interactive;
pub mod pty;
mod run;
pub mod session_files;
pub mod streamed;
pub mod wire;

use std::path::PathBuf;
use std::time::Duration;

use handoff_host::{Plugin, TargetKind};

use handoff_conformance::corpus::Entry;
use handoff_conformance::report::CheckResult;

pub use run::{live_check_ids, run_live, run_live_check, run_live_target};

/// How the live checks run.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// The new prompt given to the resumed session.
    pub prompt: String,
    /// How long one CLI run may take before it is killed (and the check fails).
    pub timeout: Duration,
    /// An install cache or folder of programs to look in first (after `$HANDOFF_CLI_DIR`).
    pub cli_dir: Option<PathBuf>,
    /// Where to make the temporary HOMEs; the system temp dir when `None`.
    pub scratch: Option<PathBuf>,
    /// Keep each temporary HOME (its path goes into the evidence) for debugging.
    pub keep_homes: bool,
    /// Only these corpus entries (by name); all when empty.
    pub only: Vec<String>,
    /// Options of the recipe's extra arguments left out of each run, each with its value (e.g.
    /// `--model`: the session is then resumed as a person resumes it, with the model the CLI
    /// restores from the file).
    pub omitted_options: Vec<String>,
    /// Which end of each target's verified range the checks run against (default from
    /// `HANDOFF_LIVE_END`: `oldest`, the pinned version, unless it says `newest`).
    pub end: CliEnd,
}

/// One end of a target's verified range (`LiveRecipe::verified_range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliEnd {
    /// The pinned version (`LiveRecipe::version`), installed in `.live-cache`.
    Oldest,
    /// The newest version proven, installed in `.live-cache/newest` where it differs.
    Newest,
    /// Whatever version is installed in the newest cache (`scripts/newest-clis.sh`: a release
    /// not yet proven, to find out whether it can be).
    Candidate,
}

impl CliEnd {
    /// `HANDOFF_LIVE_END=newest`, else the oldest.
    pub fn from_env() -> CliEnd {
        match std::env::var("HANDOFF_LIVE_END").as_deref() {
            Ok("newest") => CliEnd::Newest,
            Ok("candidate") => CliEnd::Candidate,
            _ => CliEnd::Oldest,
        }
    }
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            prompt: "handoff live check: reply with ok".into(),
            timeout: Duration::from_secs(180),
            cli_dir: None,
            scratch: None,
            keep_homes: false,
            only: Vec::new(),
            omitted_options: Vec::new(),
            end: CliEnd::from_env(),
        }
    }
}

/// The check id of a live check: `live/<target>/<corpus entry>` or `live/<target>/missing-id`.
pub fn check_id(target: &str, what: &str) -> String {
    format!("live/{target}/{what}")
}

/// The name of the per-target check that a missing id sends nothing.
pub const MISSING_ID: &str = "missing-id";

/// The targets of `plugin` the live tier runs: CLI targets with a live recipe.
pub fn live_targets(plugin: &dyn Plugin) -> Vec<String> {
    plugin
        .manifest()
        .targets
        .into_iter()
        .filter(|t| t.kind == TargetKind::Cli && t.live.is_some())
        .map(|t| t.name)
        .collect()
}

/// The library entry for `conformance run … --live`: every live check of every live target of
/// `plugin` over the built-in corpus, in this process. Append the results to the offline report.
/// To run each live check in its own process instead, list them with [`live_check_ids`] and run
/// one with [`run_live_check`].
pub fn run_live_checks(plugin: &dyn Plugin, options: &LiveOptions) -> Vec<CheckResult> {
    let corpus: Vec<Entry> = handoff_conformance::corpus::entries().to_vec();
    live_targets(plugin)
        .iter()
        .flat_map(|target| run_live(plugin, target, &corpus, options))
        .collect()
}

/// Whether skips must count as failures: `HANDOFF_LIVE_REQUIRED=1` (set by CI, where every CLI
/// must be installed).
pub fn skips_are_failures() -> bool {
    std::env::var("HANDOFF_LIVE_REQUIRED").is_ok_and(|v| v == "1")
}
