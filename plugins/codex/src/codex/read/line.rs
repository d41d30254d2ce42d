//! One rollout line: its envelope (`timestamp`, `type`, `payload`) and its payload, in one pass
//! when it can be, else the careful way that names the field at fault.

use std::borrow::Cow;
use std::path::Path;

use handoff_sdk::{PluginError, Timestamp};
use serde::Deserialize;

use super::Header;
use crate::codex::records::*;

pub(super) fn torn(path: &Path, line: usize) -> PluginError {
    PluginError::malformed_line(
        path,
        line,
        None,
        "the last line is torn (no final newline); a writer was interrupted",
    )
}

/// The header and the provider a session_meta line names (if it names one).
pub(super) struct Meta(pub(super) Header, pub(super) Option<String>);

pub(super) fn parse_session_meta(
    path: &Path,
    n: usize,
    bytes: &[u8],
) -> Result<(Timestamp, Meta), PluginError> {
    let (ts, kind, payload) = envelope(path, n, bytes).map_err(|e| {
        if is_legacy_header(bytes) {
            PluginError::malformed_line(path, n, Some("type"), LEGACY_ROLLOUT)
        } else {
            e
        }
    })?;
    if kind != "session_meta" {
        return Err(PluginError::malformed_line(
            path,
            n,
            Some("type"),
            format!("the first line must be session_meta, found {kind:?}"),
        ));
    }
    let meta: SessionMetaIn = payload_as(path, n, payload)?;
    let id = meta.id.ok_or_else(|| missing(path, n, "payload.id"))?;
    let cwd = meta.cwd.ok_or_else(|| missing(path, n, "payload.cwd"))?;
    // A spawned agent's thread: Codex 0.171.0 needs its depth, and without it reads no session
    // metadata and resumes nothing ("rollout … does not start with session metadata"; measured
    // with claude-code-log's hand-written `rollout-…-33333333…`, which resumes once `depth` is
    // added).
    if let Some(spawn) = meta
        .source
        .as_ref()
        .and_then(|s| s.get("subagent"))
        .and_then(|s| s.get("thread_spawn"))
    {
        if spawn.get("depth").is_none_or(|d| !d.is_u64()) {
            return Err(PluginError::malformed_line(
                path,
                n,
                Some("payload.source.subagent.thread_spawn.depth"),
                "required field is missing (a spawned agent's thread without its depth: Codex \
                 0.171.0 does not resume it, \"does not start with session metadata\")",
            ));
        }
    }
    let marker = meta
        .marker
        .as_ref()
        .and_then(|m| serde_json::from_value(m.clone()).ok());
    let header = Header {
        id,
        cwd,
        marker,
        rewritten_by_codex: meta.history_mode.as_deref() == Some("paginated"),
        model_provider: meta
            .model_provider
            .clone()
            .unwrap_or_else(|| crate::codex::records::DEFAULT_MODEL_PROVIDER.to_owned()),
    };
    Ok((ts, Meta(header, meta.model_provider)))
}

/// Why a rollout of the early format is refused (measured with Codex 0.171.0: `codex exec resume
/// <id>` on such a file fails with "failed to read session metadata …: rollout at … is empty",
/// exit 1, no model request).
const LEGACY_ROLLOUT: &str = "a rollout of the early format (a bare `{id, timestamp}` header and \
    bare response items, without the `{timestamp, type, payload}` envelope): Codex 0.171.0 does \
    not resume it either (\"failed to read session metadata: rollout … is empty\")";

/// Whether a first line is the early format's header: an object with an `id` and no `type` or
/// `payload`.
fn is_legacy_header(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Header {
        id: Option<serde_json::Value>,
        #[serde(rename = "type")]
        kind: Option<serde_json::Value>,
        payload: Option<serde_json::Value>,
    }
    serde_json::from_slice::<Header>(bytes)
        .is_ok_and(|h| h.id.is_some() && h.kind.is_none() && h.payload.is_none())
}

pub(super) fn missing(path: &Path, n: usize, field: &str) -> PluginError {
    PluginError::malformed_line(path, n, Some(field), "required field is missing")
}

pub(super) fn envelope<'a>(
    path: &Path,
    n: usize,
    bytes: &'a [u8],
) -> Result<
    (
        Timestamp,
        std::borrow::Cow<'a, str>,
        &'a serde_json::value::RawValue,
    ),
    PluginError,
> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| PluginError::malformed_line(path, n, None, format!("not valid UTF-8: {e}")))?;
    let line: LineIn<'a> = serde_json::from_str(text).map_err(|e| {
        PluginError::malformed_line(path, n, None, format!("not a JSON record: {e}"))
    })?;
    let ts = line
        .timestamp
        .ok_or_else(|| missing(path, n, "timestamp"))?;
    let ts = Timestamp::parse(&ts)
        .map_err(|e| PluginError::malformed_line(path, n, Some("timestamp"), e))?;
    let kind = line.kind.ok_or_else(|| missing(path, n, "type"))?;
    let payload = line.payload.ok_or_else(|| missing(path, n, "payload"))?;
    Ok((ts, kind, payload))
}

pub(super) fn payload_as<'a, T: Deserialize<'a>>(
    path: &Path,
    n: usize,
    payload: &'a serde_json::value::RawValue,
) -> Result<T, PluginError> {
    serde_json::from_str(payload.get()).map_err(|e| {
        PluginError::malformed_line(path, n, Some("payload"), format!("unexpected shape: {e}"))
    })
}

/// Parses one line after the first: in one pass when it can, else the careful way, which names
/// the field at fault.
pub(super) fn parse_line<'a>(
    path: &Path,
    n: usize,
    bytes: &'a [u8],
) -> Result<(Timestamp, PayloadIn<'a>), PluginError> {
    let (ts, payload) = match one_pass(bytes) {
        Some(parsed) => parsed,
        None => {
            let (ts, kind, raw) = envelope(path, n, bytes)?;
            let payload = PayloadIn::from_raw(&kind, raw).map_err(|e| {
                PluginError::malformed_line(
                    path,
                    n,
                    Some("payload"),
                    format!("unexpected shape: {e}"),
                )
            })?;
            return Ok((ts, payload));
        }
    };
    let ts = Timestamp::parse(&ts)
        .map_err(|e| PluginError::malformed_line(path, n, Some("timestamp"), e))?;
    Ok((ts, payload))
}

/// A line's timestamp (unparsed) and payload, if the one pass takes it.
fn one_pass(bytes: &[u8]) -> Option<(Cow<'_, str>, PayloadIn<'_>)> {
    // UTF-8 is checked once for the line (from_slice checks each string on its own: 800,000
    // calls for a 5,000-turn rollout, 13 % of reading it), and so is the absence of control
    // characters, which the one pass does not check in every string ([`FastLine`]); a line
    // that fails either goes the careful way, which says what is wrong.
    let text = handoff_sdk::lines::text_of(bytes)
        .filter(|_| !handoff_sdk::lines::has_control_byte(bytes))?;
    let FastLine {
        timestamp: Some(ts),
        kind: Some(kind),
        payload: Some(payload),
    } = serde_json::from_str::<FastLine<'_>>(text).ok()?
    else {
        return None;
    };
    let payload = match payload {
        FastPayload::Typed(payload) => payload,
        FastPayload::Raw(raw) => PayloadIn::from_raw(&kind, raw).ok()?,
    };
    Some((ts, payload))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// The careful way's reading of a line (its payload as `Debug` shows it), or its error.
    fn careful(line: &str) -> Result<String, String> {
        let (_, kind, raw) =
            envelope(Path::new("r.jsonl"), 2, line.as_bytes()).map_err(|e| e.to_string())?;
        let payload = PayloadIn::from_raw(&kind, raw).map_err(|e| e.to_string())?;
        Ok(format!("{payload:?}"))
    }

    /// Where the one pass takes a line it reads what the careful way reads; whether it took it.
    fn agrees(line: &str) -> bool {
        let Some((_, payload)) = one_pass(line.as_bytes()) else {
            return false;
        };
        assert_eq!(Ok(format!("{payload:?}")), careful(line), "{line}");
        true
    }

    fn record(kind: &str, payload: &str) -> String {
        format!(r#"{{"timestamp":"2026-11-30T00:41:47.198Z","type":"{kind}","payload":{payload}}}"#)
    }

    fn prompt_with_image(url: &str) -> String {
        record(
            "response_item",
            &format!(
                r#"{{"type":"message","role":"user","content":[{{"type":"input_image","image_url":{url}}}]}}"#
            ),
        )
    }

    fn copy_with_images(images: &str) -> String {
        record(
            "event_msg",
            &format!(r#"{{"type":"user_message","message":"hi","images":{images}}}"#),
        )
    }

    /// An image URL is read as bytes, then checked to be UTF-8: it reads as the string it is,
    /// escapes undone, and is refused where a string is (checked against serde_json's `Value`,
    /// which reads it as a string).
    #[test]
    fn an_image_url_reads_as_the_string_it_is() {
        let taken = [
            r#""data:image/png;base64,aGk=""#,
            r#""data:image\/png;base64,a\/k=""#,
            r#""https://x/\u00e9\u0001.png""#,
            r#""data:image/png;base64,\ud83d\ude00""#,
            r#""""#,
            "null",
        ];
        for url in taken {
            let line = prompt_with_image(url);
            assert!(agrees(&line), "{line}");
            let as_string = serde_json::from_str::<Value>(&line).unwrap()["payload"]["content"][0]
                ["image_url"]
                .clone();
            let read = careful(&line).unwrap();
            match as_string {
                Value::String(text) => assert!(read.contains(&format!("{text:?}")), "{read}"),
                other => assert_eq!(other, Value::Null),
            }
        }
        // Not a string, or not one: refused both ways, as a string would be.
        for url in [r#""\ud800""#, "[104,105]", "5", r#"{"a":1}"#] {
            let line = prompt_with_image(url);
            assert!(!agrees(&line), "{line}");
            assert!(careful(&line).is_err(), "{line}");
            assert!(
                serde_json::from_str::<Option<String>>(url).is_err(),
                "{url}"
            );
        }
    }

    /// `user_message`'s image copies are passed over in the one pass when they are a list of
    /// strings; anything else there the careful way passes over as any value.
    #[test]
    fn image_copies_are_passed_over_whatever_they_are() {
        for images in [
            r#"["data:image/png;base64,aGk=","https://x/y.png"]"#,
            r#"["a\/b\n"]"#,
            "[]",
            "null",
        ] {
            let line = copy_with_images(images);
            assert!(agrees(&line), "{line}");
        }
        for images in ["5", "[5]", r#"[["a"]]"#, r#"{"a":1}"#, "[104,105]"] {
            let line = copy_with_images(images);
            assert!(!agrees(&line), "{line}");
            assert!(careful(&line).is_ok(), "{line}");
        }
        let twice = record(
            "event_msg",
            r#"{"type":"user_message","images":[],"images":["x"]}"#,
        );
        assert!(!agrees(&twice));
        assert!(careful(&twice).is_ok());
    }

    /// A control character anywhere in the line: the one pass declines it. In a string, JSON
    /// forbids it and the careful way says so; between tokens (whitespace) the line is read.
    #[test]
    fn a_line_with_a_control_character_goes_the_careful_way() {
        let in_url = prompt_with_image("\"data:image/png;base64,aG\u{1}k=\"");
        let in_copy = copy_with_images("[\"data:image/png;base64,aG\u{1f}k=\"]");
        for line in [&in_url, &in_copy] {
            assert!(one_pass(line.as_bytes()).is_none());
            let error = careful(line).unwrap_err();
            assert!(error.contains("control character"), "{error}");
        }
        let tabbed =
            prompt_with_image("\"data:image/png;base64,aGk=\"").replace(",\"type\"", ",\t\"type\"");
        assert!(one_pass(tabbed.as_bytes()).is_none());
        assert!(careful(&tabbed).is_ok());
    }
}
