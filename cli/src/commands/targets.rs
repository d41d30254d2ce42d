use std::process::ExitCode;

use handoff_host::registry::Availability;

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

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    // It reports verification: every built-in is certified (in parallel) first.
    catalog.certify_all()?;
    let listings = catalog.listings();
    if args.json {
        output::json(&listings)?;
        return Ok(ExitCode::SUCCESS);
    }
    for l in &listings {
        let source = &l.source;
        let target = l.target.as_deref().unwrap_or("?");
        match &l.availability {
            Availability::Verified { .. } if l.shadowed_by.is_some() => {
                let winner = l.shadowed_by.as_deref().unwrap_or_default();
                outln!(
                    "{target:<20} SHADOWED      {} ({source}): verified, but {winner} is used for {target}",
                    l.plugin
                )?
            }
            Availability::Verified { certified_at, .. } => outln!(
                "{target:<20} verified      {} ({source}, certified {certified_at}) IN USE",
                l.plugin
            )?,
            Availability::NotOffered { reason } => outln!(
                "{target:<20} NOT OFFERED   {} ({source}): {reason}",
                l.plugin
            )?,
        }
    }
    Ok(ExitCode::SUCCESS)
}
