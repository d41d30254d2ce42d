//! `handoff completions SHELL` and `handoff man`: generated from the clap definitions, so they
//! cannot drift from what the command accepts.
//!
//! The target names a completion offers are those of the plugins this installation knows when
//! the script is generated (the built-ins and the configured plugin files); they are offered, not
//! required: the parser itself accepts any name and says which are known. Session ids are not
//! completed: listing them reads every store, which a shell would do on every Tab.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::CommandFactory as _;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output;

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write one page per command (`handoff.1`, `handoff-continue.1`, …) into this folder instead
    /// of printing `handoff.1`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The subcommands whose first argument is a target, and `continue`'s `--to`.
const TARGET_ARGUMENTS: [(&str, &str); 4] = [
    ("continue", "to"),
    ("sessions", "target"),
    ("read", "target"),
    ("recover", "target"),
];

pub fn completions(config: &Config, args: CompletionsArgs) -> Result<ExitCode, CliError> {
    let mut command = with_target_names(crate::Cli::command(), &known_targets(config)?);
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "handoff", &mut script);
    output::text(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: ManArgs) -> Result<ExitCode, CliError> {
    let command = crate::Cli::command();
    match args.out {
        None => {
            let mut page = Vec::new();
            render(clap_mangen::Man::new(command), &mut page)?;
            output::text(&String::from_utf8_lossy(&page))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
            clap_mangen::generate_to(command, &dir).map_err(|e| io_error(&dir, e))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn render(man: clap_mangen::Man, into: &mut Vec<u8>) -> Result<(), CliError> {
    man.render(into)
        .map_err(|e| CliError::Failed(format!("cannot render the man page: {e}")))
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> CliError {
    CliError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// Every target name this installation knows, certified or not (nothing is certified here).
fn known_targets(config: &Config) -> Result<Vec<String>, CliError> {
    let mut names: Vec<String> = Catalog::open(config)?
        .listings()
        .into_iter()
        .filter_map(|l| l.target)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// `command` with `targets` as the values offered for every target argument.
fn with_target_names(command: clap::Command, targets: &[String]) -> clap::Command {
    TARGET_ARGUMENTS
        .iter()
        .fold(command, |command, (subcommand, argument)| {
            command.mut_subcommand(subcommand, |sub| {
                // `mut_args` keeps the arguments' order (`mut_arg` would put this one last,
                // reordering positionals).
                sub.mut_args(|arg| {
                    if arg.get_id() == argument {
                        arg.value_parser(PossibleValuesParser::new(targets.to_vec()))
                    } else {
                        arg
                    }
                })
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_argument_is_offered_the_target_names() {
        let targets = ["codex".to_owned(), "pi".to_owned()];
        let mut command = with_target_names(crate::Cli::command(), &targets);
        command.build();
        for (subcommand, argument) in TARGET_ARGUMENTS {
            let arg = command
                .find_subcommand(subcommand)
                .and_then(|s| s.get_arguments().find(|a| a.get_id() == argument))
                .unwrap_or_else(|| panic!("{subcommand} has no argument {argument}"));
            let offered: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            assert_eq!(offered, targets, "{subcommand} {argument}");
        }
    }
}
