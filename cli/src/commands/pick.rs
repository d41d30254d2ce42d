//! `handoff` alone, on a terminal: pick a session of this directory from every CLI's store,
//! newest first, pick the target, and continue it there in the target's interactive session —
//! `continue --from <picked> --to <target> --exec`. Keyboard only (arrows, Enter; Esc or q
//! leaves without doing anything).

use std::process::ExitCode;

use dialoguer::theme::ColorfulTheme;
use dialoguer::Select;
use handoff_host::{SessionInfo, TargetKind, TargetManifest};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output;
use crate::progress::Progress;

use super::sessions::{conversation_column, listed, one_line, updated, CwdFilter, Listed};

/// How many sessions the list shows (their events are counted, which reads each one).
const SHOWN: usize = 30;

/// One row of the list: a session (with its conversation) and the CLI target whose store holds it.
struct Found {
    target: String,
    listed: Listed,
}

pub fn run(config: &Config) -> Result<ExitCode, CliError> {
    let here = super::read::current_dir()?;
    let catalog = Catalog::open(config)?;
    let progress = Progress::start("certifying the built-in plugins");
    catalog.certify_all()?;
    progress.step("listing the sessions of this directory");
    let targets = cli_targets(&catalog);
    let found = sessions_of(&catalog, config, &targets, &here)?;
    drop(progress);
    if found.is_empty() {
        return Err(CliError::Usage(format!(
            "no session of {} in the stores of {}; start one in a CLI, or name one with `handoff continue --from TARGET:ID --to TARGET`",
            here.display(),
            targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let theme = ColorfulTheme::default();
    let rows: Vec<String> = found.iter().map(row).collect();
    let Some(picked) = Select::with_theme(&theme)
        .with_prompt(format!("Continue which session of {}?", here.display()))
        .items(&rows)
        .default(0)
        .max_length(15)
        .interact_opt()
        .map_err(picker_error)?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    let from = &found[picked];
    let from_id = &from.listed.session.session;
    let others: Vec<&TargetManifest> = targets.iter().filter(|t| t.name != from.target).collect();
    let names: Vec<&str> = others.iter().map(|t| t.name.as_str()).collect();
    let Some(to) = Select::with_theme(&theme)
        .with_prompt(format!(
            "Continue it on which agent? (from {})",
            from.target
        ))
        .items(&names)
        .default(0)
        .interact_opt()
        .map_err(picker_error)?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    output::note(format_args!(
        "handoff continue --from {}:{} --to {} --exec",
        from.target, from_id.id, names[to]
    ));
    super::continue_on::run(
        config,
        super::continue_on::Args::picked(
            format!("{}:{}", from.target, from_id.path.display()),
            names[to].to_owned(),
        ),
    )
}

/// The verified CLI targets, in the catalog's order.
fn cli_targets(catalog: &Catalog) -> Vec<TargetManifest> {
    let verified: Vec<String> = catalog
        .listings()
        .into_iter()
        .filter(|l| l.in_use())
        .filter_map(|l| l.target)
        .collect();
    catalog
        .manifests_of_targets()
        .into_iter()
        .filter(|t| t.kind == TargetKind::Cli && verified.contains(&t.name))
        .collect()
}

/// The sessions of `dir` in every target's store (its configured or default root; a store that
/// is not there holds none), newest first, at most [`SHOWN`], their events counted and their
/// conversation found as `handoff sessions` finds it.
fn sessions_of(
    catalog: &Catalog,
    config: &Config,
    targets: &[TargetManifest],
    dir: &std::path::Path,
) -> Result<Vec<Found>, CliError> {
    let filter = CwdFilter::new(dir)?;
    // Each store read once: its plugin, root and episodes, then its sessions of `dir`.
    let mut stores = Vec::new();
    let mut found: Vec<(usize, SessionInfo)> = Vec::new();
    let seal = catalog.seal()?;
    for target in targets {
        let Ok(root) = config.store_root(target, None) else {
            continue;
        };
        if !root.path().is_dir() {
            continue;
        }
        let plugin = catalog.plugin(&target.name)?;
        match plugin.reader().list(&root, &target.name) {
            Ok(list) => {
                let store = stores.len();
                found.extend(
                    list.into_iter()
                        .filter(|s| filter.matches(s))
                        .map(|session| (store, session)),
                );
                let ledger = handoff_host::episodes::all(&root, &seal);
                stores.push((target.name.clone(), plugin, root, ledger));
            }
            Err(e) => output::note(format_args!(
                "cannot list the {} sessions under {}: {e}",
                target.name,
                root.path().display()
            )),
        }
    }
    found.sort_by_key(|(_, s)| std::cmp::Reverse(s.updated_ms));
    found.truncate(SHOWN);
    Ok(found
        .into_iter()
        .map(|(store, session)| {
            let (target, plugin, root, ledger) = &stores[store];
            Found {
                target: target.clone(),
                listed: listed(plugin.as_ref(), root, ledger, session),
            }
        })
        .collect())
}

/// `codex        2026-12-02 06:40    15 events  3f2a9c1e hop 1    fix the flaky test`: the
/// conversation column marks the sessions of one conversation with one label.
fn row(f: &Found) -> String {
    let session = &f.listed.session;
    format!(
        "{:<12} {}  {:>4} events  {}  {}",
        f.target,
        updated(session.updated_ms),
        session.events.map_or("?".to_owned(), |n| n.to_string()),
        conversation_column(&f.listed),
        one_line(session.title.as_deref().unwrap_or("(untitled)"))
    )
}

fn picker_error(e: dialoguer::Error) -> CliError {
    CliError::Failed(format!("the picker failed: {e}"))
}
