//! What is read of an API history (a session file that is one JSON document) without building
//! the history: a listing of thousands of them needs only each one's marker, and a `continue` from
//! one needs its cwd before it streams the events.

use std::path::Path;

use handoff_capability::PluginError;
use handoff_store::marker::OwnershipMarker;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// The member that holds, beside the native data, what it has no place for (an API history's
/// event ids, timestamps, authors, origins; a Claude Code record's): the providers never read it.
pub const EXTRAS_KEY: &str = "handoff";

/// `deserialize_with` for an `Option<Option<T>>` member of the extras (with `default`): a member
/// that is present is `Some`, even as `null`, so "known to be none" stays apart from "not said".
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// How deep a document may nest: serde_json's recursion limit (its 128th level is refused), which
/// stands so that deep nesting is an error, never a stack overflow.
pub const DOCUMENT_DEPTH_LIMIT: usize = 127;

/// What is wrong with `bytes` (the whole of the file `path`) as a JSON document, given the error
/// serde_json gave parsing them: an empty file, bytes that are not JSON, a document cut short, one
/// nested too deep. `None` when the bytes are JSON and the error is about their shape, which the
/// caller names (a member of the wrong type, a missing field).
pub fn document_error(path: &Path, bytes: &[u8], e: &serde_json::Error) -> Option<PluginError> {
    use serde_json::error::Category;
    let at = |line: Option<usize>, message: String| {
        Some(PluginError::Malformed {
            file: path.to_owned(),
            line,
            field: None,
            message,
        })
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        let what = if bytes.is_empty() {
            "empty file"
        } else {
            "empty file (whitespace only)"
        };
        return at(None, what.to_owned());
    }
    match e.classify() {
        Category::Eof => at(
            Some(e.line()),
            format!("truncated at byte {} ({e})", bytes.len()),
        ),
        // serde_json names no category of its own for it; its message is pinned by a test.
        Category::Syntax if e.to_string().starts_with("recursion limit exceeded") => at(
            Some(e.line()),
            format!(
                "nested deeper than {DOCUMENT_DEPTH_LIMIT} levels (at line {} column {})",
                e.line(),
                e.column()
            ),
        ),
        Category::Syntax | Category::Io => at(Some(e.line()), format!("not JSON: {e}")),
        Category::Data => None,
    }
}

/// An API history's bytes as the JSON object it must be; anything else is `Malformed`, naming
/// the file and what is wrong ([`document_error`], or a document that is not an object).
pub fn parse_document(path: &Path, bytes: &[u8]) -> Result<Map<String, Value>, PluginError> {
    let malformed = |line, message: String| PluginError::Malformed {
        file: path.to_owned(),
        line,
        field: None,
        message,
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(malformed(
            None,
            "a JSON document but not an object (a request history is one)".into(),
        )),
        Err(e) => Err(document_error(path, bytes, &e)
            .unwrap_or_else(|| malformed(Some(e.line()), format!("not a JSON document: {e}")))),
    }
}

/// Reads the JSON document at `path` as a `T`: an error names the file, and the line and what is
/// wrong ([`document_error`], or the member serde could not take).
pub fn load_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        document_error(path, &bytes, &e)
            .unwrap_or_else(|| PluginError::malformed_line(path, e.line(), None, e.to_string()))
    })
}

/// Writes `value` as one line of JSON (what a store of one JSON document per file writes).
pub fn write_json_line(
    out: &mut dyn std::io::Write,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

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
        // Only a member of an object is the cwd's fault: serde would also take an array for
        // `Top` (its members in order) and blame the cwd for what is no history at all.
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let of_the_cwd =
            || PluginError::malformed_line(path, e.line(), Some("handoff.cwd"), e.to_string());
        match document_error(path, &bytes, &e) {
            Some(not_a_document) => not_a_document,
            // What it is instead, the whole parse says (nested too deep, not an object).
            None if first != Some(&b'{') => parse_document(path, &bytes)
                .err()
                .unwrap_or_else(of_the_cwd),
            None => of_the_cwd(),
        }
    })?;
    Ok(top.handoff.and_then(|extras| extras.cwd))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_present_null_is_kept_apart_from_an_absent_member() {
        #[derive(serde::Deserialize)]
        struct Extras {
            #[serde(default, deserialize_with = "super::present")]
            origin: Option<Option<String>>,
        }
        let of = |json: &str| serde_json::from_str::<Extras>(json).unwrap().origin;
        assert_eq!(of(r#"{"origin": null}"#), Some(None));
        assert_eq!(of(r#"{"origin": "a"}"#), Some(Some("a".to_owned())));
        assert_eq!(of("{}"), None);
    }

    use super::*;

    #[test]
    fn a_documents_marker_is_its_top_level_member() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.json");
        assert_eq!(handoff_store::marker::MARKER_KEY, "x-handoff");
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

    /// The message of the error reading `bytes` as a history's cwd, and as the history.
    fn refusals(bytes: &[u8]) -> (String, String) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.json");
        std::fs::write(&path, bytes).unwrap();
        let cwd = document_cwd(&path).unwrap_err().to_string();
        let whole = parse_document(&path, bytes).unwrap_err().to_string();
        let file = path.display().to_string();
        assert!(
            cwd.starts_with(&file) && whole.starts_with(&file),
            "{cwd} / {whole}"
        );
        assert!(!cwd.contains("handoff.cwd"), "{cwd}");
        (cwd[file.len()..].to_owned(), whole[file.len()..].to_owned())
    }

    #[test]
    fn what_is_no_json_document_is_named_not_blamed_on_a_field() {
        assert_eq!(refusals(b"").0, ": empty file");
        assert_eq!(refusals(b"").1, ": empty file");
        assert_eq!(refusals(b" \n\t").0, ": empty file (whitespace only)");
        let (cwd, whole) = refusals(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        assert_eq!(cwd, whole);
        assert_eq!(cwd, ":1: not JSON: expected value at line 1 column 1");
        let (cwd, whole) = refusals(b"{\"messages\": [{\"role\": \"user\"");
        assert_eq!(cwd, whole);
        assert!(
            cwd.starts_with(":1: truncated at byte 29 (EOF while parsing"),
            "{cwd}"
        );
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let (cwd, whole) = refusals(deep.as_bytes());
        assert_eq!(cwd, whole);
        assert_eq!(
            cwd,
            ":1: nested deeper than 127 levels (at line 1 column 128)"
        );
        let (cwd, whole) = refusals(b"[1, 2]");
        assert_eq!(cwd, whole);
        assert!(cwd.contains("not an object"), "{cwd}");
    }

    #[test]
    fn the_depth_limit_is_serde_jsons() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let path = Path::new("h.json");
        let within = format!("{{\"a\": {}}}", nested(DOCUMENT_DEPTH_LIMIT - 1));
        parse_document(path, within.as_bytes()).unwrap();
        let beyond = format!("{{\"a\": {}}}", nested(DOCUMENT_DEPTH_LIMIT));
        let err = parse_document(path, beyond.as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("nested deeper than 127 levels"),
            "{err}"
        );
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
