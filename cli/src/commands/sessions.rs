//! `handoff sessions <target>`: a target's sessions, newest first, as its plugin lists them.

use std::path::PathBuf;
use std::process::ExitCode;

use handoff_core::SessionInfo;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;

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
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let plugin = catalog.plugin(&args.target)?;
    let root = config.store_root(&catalog.target(&args.target)?, args.store_root.as_deref())?;
    let cwd = args
        .cwd
        .as_deref()
        .map(crate::config::absolute)
        .transpose()?
        .map(|d| d.display().to_string());
    let sessions: Vec<SessionInfo> = plugin
        .reader()
        .list(&root, &args.target)?
        .into_iter()
        .filter(|s| cwd.is_none() || s.cwd == cwd)
        .collect();
    if args.json {
        super::print_json(&sessions);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!(
            "no {} sessions under {}",
            args.target,
            root.path().display()
        );
    }
    for s in &sessions {
        println!(
            "{}  {}  {}  {}",
            s.session.id,
            updated(s.updated_ms),
            s.cwd.as_deref().unwrap_or("-"),
            one_line(s.title.as_deref().unwrap_or("")),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD HH:MM` (UTC) of a listing's modification time.
fn updated(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".into())
}

/// A title on one line, at most 72 characters.
fn one_line(title: &str) -> String {
    let flat: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(72) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        let long = "x".repeat(100);
        assert_eq!(one_line(&long).chars().count(), 73);
        assert_eq!(updated(0), "1970-01-01 00:00");
    }
}
