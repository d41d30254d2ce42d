//! `handoff`: continue a coding-agent conversation on another provider, natively, by its id.
//!
//! Exit codes: 0 success; 1 the operation failed (a plugin error, a verify mismatch, a failed
//! certification); 2 bad usage or configuration (unknown target, bad path, missing cwd); 3 the
//! target exists but is not verified. With `continue --exec`, the resumed program's own exit code.
//! A reader that closes stdout early (`| head`) ends any command quietly, with 0: what it did is
//! done, and the reader asked for no more (`output`).

mod catalog;
mod commands;
mod config;
mod error;
mod output;
mod progress;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

/// jemalloc, not glibc's malloc: a continuation reads the source on one thread and frees its
/// events on another, and glibc's arenas turn those frees into lock contention (futex wake-ups
/// in the reader's `realloc`s). The continue bench measured 0.13–0.30× the floor less under
/// jemalloc, the same peak (`docs/continuation.md`, "The allocator").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "handoff",
    version,
    about = "Continue a coding-agent conversation on another provider, natively"
)]
struct Cli {
    /// Configuration file (TOML). Default: $XDG_CONFIG_HOME/handoff/config.toml, if it exists.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// More logging (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Without one, on a terminal: pick a session of this directory and the agent to continue it on.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Every plugin and target, verified or not, and why not.
    Targets(commands::targets::Args),
    /// Read a native session into the canonical transcript.
    Read(commands::read::Args),
    /// A target's sessions, newest first (id, last update, cwd, title).
    Sessions(commands::sessions::Args),
    /// Continue a conversation on another target: materialise or sync, verify, print the resume.
    Continue(commands::continue_on::Args),
    /// Run the conformance suite on a plugin file and certify it.
    Certify(commands::certify::Args),
    /// Roll back what interrupted handoff writes left in a target's store root (every
    /// `continue` does this first).
    Recover(commands::recover::Args),
    /// What this machine offers handoff: the target CLIs on PATH against the versions each
    /// target verified, the store roots, the certificates and the plugin folders (read only).
    Doctor(commands::doctor::Args),
    /// A shell completion script (targets completed by name), on stdout.
    Completions(commands::generate::CompletionsArgs),
    /// The man page (roff), on stdout; `--out DIR` writes one per command.
    Man(commands::generate::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let Some(command) = cli.command else {
        return pick_or_usage(cli.config.as_deref());
    };
    let result = config::Config::load(cli.config.as_deref()).and_then(|config| match command {
        Command::Targets(args) => commands::targets::run(&config, args),
        Command::Read(args) => commands::read::run(&config, args),
        Command::Sessions(args) => commands::sessions::run(&config, args),
        Command::Continue(args) => commands::continue_on::run(&config, args),
        Command::Certify(args) => commands::certify::run(&config, args),
        Command::Recover(args) => commands::recover::run(&config, args),
        Command::Doctor(args) => commands::doctor::run(&config, args),
        Command::Completions(args) => commands::generate::completions(&config, args),
        Command::Man(args) => commands::generate::man(args),
    });
    finish(result)
}

/// `handoff` alone: the picker on a terminal; elsewhere the usage, as for any missing command.
fn pick_or_usage(config: Option<&std::path::Path>) -> ExitCode {
    use clap::CommandFactory as _;
    use std::io::IsTerminal as _;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        Cli::command()
            .error(
                clap::error::ErrorKind::MissingSubcommand,
                "a command is required (run on a terminal without one to pick a session)",
            )
            .exit();
    }
    finish(config::Config::load(config).and_then(|config| commands::pick::run(&config)))
}

fn finish(result: Result<ExitCode, CliError>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(CliError::OutputClosed) => ExitCode::SUCCESS,
        Err(e) => {
            output::note(format_args!("handoff: {e}"));
            if let Some(hint) = e.hint() {
                output::note(format_args!("  {hint}"));
            }
            ExitCode::from(e.exit_code())
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (stderr closed) is dropped, not reported on the
        // stderr that just failed (a panic).
        .log_internal_errors(false)
        .init();
}

// Keep the error type in use from main so its module stays the one place exit codes live.
#[allow(dead_code)]
fn _exit_code_of(e: &CliError) -> u8 {
    e.exit_code()
}
