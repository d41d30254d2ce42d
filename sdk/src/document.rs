//! What is read of an API history (a session file that is one JSON document) without building
//! the history: a listing of thousands of them needs only each one's marker, and a `continue` from
//! one needs its cwd before it streams the events.

use std::path::Path;

use handoff_core::capability::PluginError;
use handoff_core::store::marker::OwnershipMarker;

/// The ownership marker of an API history: its top-level `x-handoff` member. None when the file
/// cannot be read, is not a JSON object, or holds no well-formed marker.
pub fn document_marker(path: &Path) -> Option<OwnershipMarker> {
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(rename = "x-handoff")]
        marker: Option<serde_json::Value>,
    }
    let bytes = std::fs::read(path).ok()?;
    let top: Top = serde_json::from_slice(&bytes).ok()?;
    serde_json::from_value(top.marker?).ok()
}

/// The working directory an API history's extras name (its `handoff.cwd`). A file that is not a
/// JSON object is an error naming the file and line; one without extras (saved by someone else)
/// has no cwd.
pub fn document_cwd(path: &Path) -> Result<Option<String>, PluginError> {
    #[derive(serde::Deserialize)]
    struct Top {
        handoff: Option<Extras>,
    }
    #[derive(serde::Deserialize)]
    struct Extras {
        cwd: Option<String>,
    }
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    let top: Top = serde_json::from_slice(&bytes).map_err(|e| {
        PluginError::malformed_line(path, e.line(), Some("handoff.cwd"), e.to_string())
    })?;
    Ok(top.handoff.and_then(|extras| extras.cwd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_documents_marker_is_its_top_level_member() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.json");
        assert_eq!(handoff_core::store::marker::MARKER_KEY, "x-handoff");
        let doc = serde_json::json!({
            "messages": [{"role": "user", "x-handoff": {"plugin": "nested"}}],
            "x-handoff": {"plugin": "me", "locator": "conv"},
        });
        std::fs::write(&path, doc.to_string()).unwrap();
        let marker = document_marker(&path).unwrap();
        assert_eq!(
            (marker.plugin.as_str(), marker.locator.as_deref()),
            ("me", Some("conv"))
        );
        for other in [
            "[1]",
            "{\"messages\": []}",
            "{\"x-handoff\": 3}",
            "{\"x-handoff\": ",
        ] {
            std::fs::write(&path, other).unwrap();
            assert!(document_marker(&path).is_none(), "{other}");
        }
        assert!(document_marker(&tmp.path().join("absent.json")).is_none());
    }

    #[test]
    fn a_documents_cwd_is_its_extras_member() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.json");
        let doc = serde_json::json!({
            "messages": [{"role": "user", "content": "hi", "cwd": "/not/this"}],
            "handoff": {"cwd": "/home/dev/proj", "events": []},
        });
        std::fs::write(&path, doc.to_string()).unwrap();
        assert_eq!(
            document_cwd(&path).unwrap().as_deref(),
            Some("/home/dev/proj")
        );
        for none in ["{\"messages\": []}", "{\"handoff\": {\"events\": []}}"] {
            std::fs::write(&path, none).unwrap();
            assert_eq!(document_cwd(&path).unwrap(), None, "{none}");
        }
        std::fs::write(&path, "{\"messages\": [],\n\"handoff\": {\"cwd\": ").unwrap();
        match document_cwd(&path) {
            Err(PluginError::Malformed { file, line, .. }) => {
                assert_eq!((file, line), (path.clone(), Some(2)));
            }
            other => panic!("a torn document: {other:?}"),
        }
        assert!(matches!(
            document_cwd(&tmp.path().join("absent.json")),
            Err(PluginError::Io { .. })
        ));
    }
}
