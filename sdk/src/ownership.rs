//! The owner check: a plugin changes or removes only sessions that carry its own marker.
//!
//! How the marker is found is the plugin's business (the first record of a JSONL file, a member
//! of a JSON document, a header line); what counts as "ours" is decided here, the same way for
//! every plugin: a marker whose `plugin` is the plugin's manifest name.

use std::path::Path;

use handoff_capability::PluginError;
use handoff_store::marker::OwnershipMarker;

/// The marker if it is `plugin`'s own; `None` for no marker or another plugin's. What a listing
/// passes to [`SessionInfo::of_file`](handoff_capability::SessionInfo::of_file).
pub fn own_marker(marker: Option<OwnershipMarker>, plugin: &str) -> Option<OwnershipMarker> {
    marker.filter(|m| m.plugin == plugin)
}

/// Refuses the session file at `path` unless `marker` (read from it) is `plugin`'s own:
/// [`PluginError::NotOwned`] naming the file. Returns the marker (its locator is kept on rewrite).
///
/// Call it after [`SessionRef::check`](handoff_capability::SessionRef::check) and, for a
/// change, with the [session lock](crate::session_lock) held, before anything is written.
pub fn require_owned(
    path: &Path,
    marker: Option<OwnershipMarker>,
    plugin: &str,
) -> Result<OwnershipMarker, PluginError> {
    own_marker(marker, plugin).ok_or_else(|| PluginError::NotOwned {
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(plugin: &str) -> Option<OwnershipMarker> {
        Some(OwnershipMarker {
            plugin: plugin.into(),
            locator: Some("conv-1".into()),
        })
    }

    #[test]
    fn only_the_plugins_own_marker_passes() {
        let path = Path::new("/store/s.jsonl");
        let mine = require_owned(path, marker("claude"), "claude").unwrap();
        assert_eq!(mine.locator.as_deref(), Some("conv-1"));
        for other in [marker("codex"), marker("Claude"), None] {
            match require_owned(path, other, "claude") {
                Err(PluginError::NotOwned { path: p }) => assert_eq!(p, path),
                outcome => panic!("expected NotOwned, got {outcome:?}"),
            }
        }
        assert!(own_marker(marker("codex"), "claude").is_none());
        assert!(own_marker(marker("codex"), "codex").is_some());
    }
}
