use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::Config;
use crate::error::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The plugin file (a shared library built with handoff-sdk).
    plugin: PathBuf,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also run the live tier (each CLI target's real CLI against a loopback fake provider).
    /// The `conformance` binary runs it: `handoff` itself links no server.
    #[arg(long)]
    live: bool,
}

/// Certifies a plugin file by running the `conformance` binary on it (each check in a child
/// process, so a crashing plugin cannot take this command down).
pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let cert_dir = config.certificate_dir()?;
    let conformance = sibling_program("conformance")?;
    let mut command = std::process::Command::new(&conformance);
    command
        .arg("run")
        .arg(&args.plugin)
        .arg("--cert-dir")
        .arg(&cert_dir);
    if let Some(json) = &args.json {
        command.arg("--json").arg(json);
    }
    if args.live {
        command.arg("--live");
    }
    let status = command
        .status()
        .map_err(|e| CliError::Failed(format!("cannot run {}: {e}", conformance.display())))?;
    Ok(ExitCode::from(
        status.code().unwrap_or(1).clamp(0, 255) as u8
    ))
}

/// The `conformance` binary installed beside this one.
fn sibling_program(name: &str) -> Result<PathBuf, CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::Failed(e.to_string()))?;
    let sibling = exe.with_file_name(name);
    if sibling.is_file() {
        Ok(sibling)
    } else {
        Err(CliError::Failed(format!(
            "the `{name}` program is not installed beside {} (build it with `cargo build -p handoff-live`)",
            exe.display()
        )))
    }
}
