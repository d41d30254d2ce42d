//! `conformance run PLUGIN.so`: probe, load, then the suite, each check in its own process.
//!
//! Exit status: 0 every check passed, 1 a check failed, 2 the plugin could not be loaded (or the
//! command line was wrong).

mod junit;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The handoff conformance suite.
#[derive(Parser)]
#[command(name = "conformance", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Probe, load and run the suite on a plugin shared library; certify it on a pass.
    Run(RunArgs),
    /// Internal: load the plugin and answer one question (run by `run`, one process per check).
    #[command(hide = true)]
    Child {
        /// The plugin file.
        #[arg(long)]
        plugin: PathBuf,
        /// The check to run; without it, list the checks.
        #[arg(long)]
        check: Option<String>,
        /// Where to write the answer.
        #[arg(long)]
        out: PathBuf,
    },
}

/// Arguments of `conformance run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The plugin shared library (`.so`).
    pub plugin: PathBuf,
    /// Write the versioned JSON report here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run only this check (an id such as `round_trip/claude-code`, or a kind such as
    /// `round_trip`); repeatable. A partial run never writes a certificate.
    #[arg(long = "check", value_name = "ID")]
    pub checks: Vec<String>,
    /// Seconds each check may take before its process is killed.
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub timeout: f64,
    /// Where certificates are written (default: $HANDOFF_CERT_DIR, else
    /// $XDG_DATA_HOME/handoff/certificates, else ~/.local/share/handoff/certificates).
    #[arg(long, value_name = "DIR")]
    pub cert_dir: Option<PathBuf>,
    /// Also run the live tier: each CLI target's real CLI (found in $HANDOFF_CLI_DIR, the
    /// repository's .live-cache/ or PATH) resumes what the plugin wrote, against a loopback fake
    /// provider. An absent CLI is a skip, and a skip is not a pass.
    #[arg(long)]
    pub live: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    init_tracing();
    match cli.command {
        Command::Run(args) => ExitCode::from(run::run(&args)),
        Command::Child { plugin, check, out } => {
            match handoff_live::child::child_main(&plugin, check.as_deref(), &out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("conformance child: cannot write {}: {e}", out.display());
                    ExitCode::from(3)
                }
            }
        }
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (default: warnings). Plugin logs arrive through the
/// loader's bridge under the `handoff::plugin` target.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
