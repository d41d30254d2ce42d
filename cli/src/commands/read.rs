use std::path::{Path, PathBuf};
use std::process::ExitCode;

use handoff_core::Transcript;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The target whose native format the session is in, e.g. `claude-code`.
    target: String,
    /// A native session id, or a path to a session file.
    session: String,
    /// The target's store root (for an id); default: the configured or real one.
    #[arg(long, value_name = "DIR")]
    store_root: Option<PathBuf>,
    /// Print the canonical JSON instead of a readable view.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let transcript = read_session(
        &catalog,
        config,
        &args.target,
        &args.session,
        args.store_root.as_deref(),
    )?;
    if args.json {
        super::print_json(&transcript);
    } else {
        print!("{}", crate::view::render(&transcript));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a session argument is a path rather than an id.
pub fn is_path(session: &str) -> bool {
    session.contains('/') || session.ends_with(".jsonl") || session.ends_with(".json")
}

/// Reads `session` (an id or a path) of `target`.
pub fn read_session(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    session: &str,
    store_root: Option<&Path>,
) -> Result<Transcript, CliError> {
    let plugin = catalog.plugin(target)?;
    if is_path(session) {
        let path = crate::config::absolute(Path::new(session))?;
        if !path.is_file() {
            return Err(CliError::Usage(format!(
                "{}: no such session file",
                path.display()
            )));
        }
        Ok(plugin.reader().read_path(target, &path)?)
    } else {
        let root = config.store_root(&catalog.target(target)?, store_root)?;
        let session = plugin.resumer().resolve(&root, target, session)?;
        Ok(plugin.reader().read(&root, &session)?)
    }
}
