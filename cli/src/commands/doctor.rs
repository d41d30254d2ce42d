//! `handoff doctor`: what this machine offers handoff, read only — the target CLIs on PATH and
//! their versions against what each target verified, the store roots, the certificates and the
//! plugin folders. It certifies nothing and writes nothing (no key, no folder).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use handoff_host::installed::{self, InstalledCli, Standing};
use handoff_host::live::LiveRecipe;
use handoff_host::registry::permissions;
use handoff_host::seal::Seal;
use handoff_host::{TargetKind, TargetManifest};
use serde::Serialize;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output::{self, outln};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    clis: Vec<CliReport>,
    store_roots: Vec<RootReport>,
    certificates: FolderReport,
    plugin_folders: Vec<FolderReport>,
}

#[derive(Serialize)]
struct CliReport {
    target: String,
    program: String,
    verified: handoff_host::live::VerifiedRange,
    /// `None`: not on PATH.
    found: Option<PathBuf>,
    version: Option<String>,
    standing: Option<&'static str>,
}

#[derive(Serialize)]
struct RootReport {
    target: String,
    /// `None`: none configured and no default (`problem` says so).
    path: Option<PathBuf>,
    exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

#[derive(Serialize)]
struct FolderReport {
    path: PathBuf,
    exists: bool,
    /// Plugin files (`*.so`) or certificates (`*.json`) in it.
    files: usize,
    /// What keeps handoff from trusting it or a file in it, one line each.
    problems: Vec<String>,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let targets = catalog.manifests_of_targets();
    let path = installed::path_dirs();
    let report = Report {
        clis: targets
            .iter()
            .filter_map(|t| Some((t, t.live.as_ref()?)))
            .map(|(t, recipe)| cli_report(t, recipe, &path))
            .collect(),
        store_roots: targets.iter().map(|t| root_report(config, t)).collect(),
        certificates: certificates_report(&config.certificate_dir()?),
        plugin_folders: config
            .plugin_dirs
            .iter()
            .map(|d| plugin_folder_report(d))
            .collect(),
    };
    if args.json {
        output::json(&report)?;
    } else {
        print(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Warns on stderr when `target`'s CLI on PATH is outside the versions its live tier verified:
/// the session is written as those versions write it, and another may read it otherwise.
pub fn warn_if_unverified_cli(target: &TargetManifest) {
    let Some(recipe) = target
        .live
        .as_ref()
        .filter(|_| target.kind == TargetKind::Cli)
    else {
        return;
    };
    let Some(found) = installed::find(recipe, installed::path_dirs()) else {
        return;
    };
    if let Some(what) = outside_range(&found, recipe) {
        output::note(format_args!(
            "warning: {} {what}; the session is written as those versions write it",
            found.path.display()
        ));
    }
}

/// "is 2.1.332, newer than the versions verified for claude-code (2.1.197)", or `None` within.
fn outside_range(found: &InstalledCli, recipe: &LiveRecipe) -> Option<String> {
    let side = match found.standing(recipe) {
        side @ (Standing::Newer | Standing::Older) => side.name(),
        Standing::Verified | Standing::Unknown => return None,
    };
    Some(format!(
        "is {}, {side} than the versions verified ({})",
        found.version.as_deref().unwrap_or("?"),
        range_text(&recipe.verified_range())
    ))
}

fn range_text(range: &handoff_host::live::VerifiedRange) -> String {
    if range.oldest == range.newest {
        range.oldest.clone()
    } else {
        format!("{} to {}", range.oldest, range.newest)
    }
}

fn cli_report(target: &TargetManifest, recipe: &LiveRecipe, path: &[PathBuf]) -> CliReport {
    let found = installed::find(recipe, path.iter().cloned());
    let standing = found.as_ref().map(|f| f.standing(recipe).name());
    CliReport {
        target: target.name.clone(),
        program: recipe.program.clone(),
        verified: recipe.verified_range(),
        version: found.as_ref().and_then(|f| f.version.clone()),
        found: found.map(|f| f.path),
        standing,
    }
}

fn root_report(config: &Config, target: &TargetManifest) -> RootReport {
    match config.store_root(target, None) {
        Ok(root) => RootReport {
            target: target.name.clone(),
            exists: root.path().is_dir(),
            path: Some(root.path().to_owned()),
            problem: None,
        },
        Err(e) => RootReport {
            target: target.name.clone(),
            path: None,
            exists: false,
            problem: Some(e.to_string()),
        },
    }
}

fn certificates_report(dir: &Path) -> FolderReport {
    let mut report = folder(dir, "json");
    if let Err(e) = Seal::existing(dir) {
        report.problems.push(e.to_string());
    }
    report
}

fn plugin_folder_report(dir: &Path) -> FolderReport {
    let mut report = folder(dir, "so");
    if let Ok(meta) = std::fs::metadata(dir) {
        report.problems.extend(permissions::refusal(
            &meta,
            &format!("the plugin folder {}", dir.display()),
        ));
    }
    for file in files_with_extension(dir, "so") {
        if let Ok(meta) = std::fs::metadata(&file) {
            report.problems.extend(permissions::refusal(
                &meta,
                &format!("the plugin file {}", file.display()),
            ));
        }
    }
    report
}

fn folder(dir: &Path, extension: &str) -> FolderReport {
    FolderReport {
        path: dir.to_owned(),
        exists: dir.is_dir(),
        files: files_with_extension(dir, extension).len(),
        problems: Vec::new(),
    }
}

fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect()
}

fn print(report: &Report) -> Result<(), CliError> {
    outln!("target CLIs (on PATH):")?;
    for cli in &report.clis {
        let verified = range_text(&cli.verified);
        match (&cli.found, cli.standing) {
            (None, _) => outln!(
                "  {:<14} {:<8} not on PATH (verified: {verified})",
                cli.target,
                cli.program
            )?,
            (Some(path), standing) => {
                let version = cli.version.as_deref().unwrap_or("version unknown");
                let verdict = match standing {
                    Some("verified") => "verified".to_owned(),
                    Some(side @ ("newer" | "older")) => {
                        format!("{} than verified ({verified})", side.to_uppercase())
                    }
                    _ => format!("cannot compare with verified ({verified})"),
                };
                outln!(
                    "  {:<14} {:<8} {version:<10} {verdict:<28} {}",
                    cli.target,
                    cli.program,
                    path.display()
                )?
            }
        }
    }
    outln!("store roots:")?;
    for root in &report.store_roots {
        match (&root.path, &root.problem) {
            (Some(path), _) => outln!(
                "  {:<18} {} {}",
                root.target,
                path.display(),
                if root.exists { "" } else { "(absent)" }
            )?,
            (None, problem) => outln!(
                "  {:<18} {}",
                root.target,
                problem.as_deref().unwrap_or("none")
            )?,
        }
    }
    outln!("certificates:")?;
    print_folder(&report.certificates, "certificates")?;
    outln!("plugin folders:")?;
    if report.plugin_folders.is_empty() {
        outln!("  none configured (plugin_dirs in the configuration)")?;
    }
    for folder in &report.plugin_folders {
        print_folder(folder, "plugin files")?;
    }
    Ok(())
}

fn print_folder(folder: &FolderReport, what: &str) -> Result<(), CliError> {
    if folder.exists {
        outln!("  {} ({} {what})", folder.path.display(), folder.files)?;
    } else {
        outln!("  {} (absent)", folder.path.display())?;
    }
    for problem in &folder.problems {
        outln!("    PROBLEM: {problem}")?;
    }
    Ok(())
}
