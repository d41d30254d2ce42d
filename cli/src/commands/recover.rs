//! `handoff recover`: roll back what interrupted handoff writes left in a target's store root.
//!
//! Every `continue` does this first, for the store root it writes; this command does it alone,
//! for a person (or a test) who wants the store clean without continuing anything. Only journals
//! sealed by this user's key are acted on (docs/continuation.md, "What handoff trusts").

use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output;

#[derive(clap::Args)]
pub struct Args {
    /// The target whose store root to recover, e.g. `codex`.
    target: String,
    /// The target's store root; default: the configured or real one.
    #[arg(long, value_name = "DIR")]
    store_root: Option<PathBuf>,
    /// Print what was rolled back as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let plugin = catalog.plugin(&args.target)?;
    let root = config.store_root(&catalog.target(&args.target)?, args.store_root.as_deref())?;
    let seal = catalog.seal()?;
    let recovered = handoff_host::continuation::recover(&root, &seal, &[plugin.as_ref()])?;
    if args.json {
        output::json(&recovered)?;
    } else if recovered.is_empty() {
        output::line(format_args!(
            "nothing to roll back in {}",
            root.path().display()
        ))?;
    } else {
        for done in &recovered {
            output::line(format_args!("rolled back: {}", done.what))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
