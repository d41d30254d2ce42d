//! The listing: verified targets with what each carries, then everything not offered and why.

use std::fmt::Write as _;

use handoff_host::registry::{Availability, Registry, TargetListing};

/// The listing as lines of text.
pub fn render(registry: &Registry) -> String {
    let listings = registry.targets();
    let mut out = String::from("verified targets:\n");
    let verified: Vec<&TargetListing> = listings.iter().filter(|l| l.in_use()).collect();
    if verified.is_empty() {
        out.push_str("  (none)\n");
    }
    for listing in verified {
        let target = listing.target.as_deref().unwrap_or("?");
        let _ = writeln!(out, "  {target}  ({}, {})", listing.plugin, listing.source);
        let Some(manifest) = registry
            .plugin_for(target)
            .ok()
            .and_then(|p| p.manifest().target(target).cloned())
        else {
            continue;
        };
        let kind = match manifest.kind {
            handoff_host::TargetKind::Cli => "cli",
            handoff_host::TargetKind::Api => "api",
        };
        let dialect = manifest.dialect.map_or("-".to_owned(), |d| d.to_string());
        let carries: Vec<&str> = manifest.carries.iter().map(|f| f.name()).collect();
        let thinking = match manifest.thinking_from.as_slice() {
            [] => "nobody (all thinking is display-only)".to_owned(),
            from => from.join(", "),
        };
        let _ = writeln!(out, "    kind: {kind}, wire: {dialect}");
        let _ = writeln!(out, "    carries: {}", carries.join(", "));
        let _ = writeln!(out, "    thinking kept from: {thinking}");
        for note in &manifest.notes {
            let _ = writeln!(out, "    note: {note}");
        }
    }
    out.push_str("not offered:\n");
    let others: Vec<&TargetListing> = listings.iter().filter(|l| !l.in_use()).collect();
    if others.is_empty() {
        out.push_str("  (none)\n");
    }
    for listing in others {
        let what = listing
            .target
            .clone()
            .unwrap_or_else(|| format!("({})", listing.plugin));
        let why = match (&listing.availability, &listing.shadowed_by) {
            (Availability::NotOffered { reason }, _) => reason.clone(),
            (Availability::Verified { .. }, Some(by)) => format!("shadowed by {by}"),
            (Availability::Verified { .. }, None) => "verified".to_owned(),
        };
        let _ = writeln!(out, "  {what}  ({}): {why}", listing.source);
    }
    out
}
