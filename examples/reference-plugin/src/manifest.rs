//! What the plugin declares: its one target and what it carries.

use handoff_sdk::{DefaultRoot, Feature, Manifest, TargetKind, TargetManifest};

/// The plugin's name (written into ownership markers); also its one target's name.
pub const NAME: &str = "reference";

/// The plugin's manifest.
pub fn manifest() -> Manifest {
    Manifest {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        api_requirement: handoff_sdk::API_REQUIREMENT.into(),
        targets: vec![target()],
    }
}

/// The `reference` target.
pub(crate) fn target() -> TargetManifest {
    TargetManifest {
        name: NAME.into(),
        kind: TargetKind::Cli,
        provider: "reference".into(),
        carries: Feature::ALL.to_vec(),
        thinking_from: vec!["anthropic".into(), "openai".into(), "google".into()],
        notes: vec!["stores the canonical transcript as JSONL; carries everything".into()],
        live: None,
        // A store only handoff keeps, so its default lives in handoff's data directory.
        default_root: Some(DefaultRoot::handoff_data(NAME)),
        dialect: None,
    }
}
