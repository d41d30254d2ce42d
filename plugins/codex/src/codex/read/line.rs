//! One rollout line: its envelope (`timestamp`, `type`, `payload`) and its payload, in one pass
//! when it can be, else the careful way that names the field at fault.

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
    // UTF-8 is checked once for the line (from_slice checks each string on its own: 800,000
    // calls for a 5,000-turn rollout, 13 % of reading it); a line that is not goes the careful
    // way, which says so.
    if let Some(FastLine {
        timestamp: Some(ts),
        kind: Some(kind),
        payload: Some(payload),
    }) = handoff_sdk::lines::text_of(bytes)
        .and_then(|text| serde_json::from_str::<FastLine<'a>>(text).ok())
    {
        let payload = match payload {
            FastPayload::Typed(payload) => Some(payload),
            FastPayload::Raw(raw) => PayloadIn::from_raw(&kind, raw).ok(),
        };
        if let Some(payload) = payload {
            let ts = Timestamp::parse(&ts)
                .map_err(|e| PluginError::malformed_line(path, n, Some("timestamp"), e))?;
            return Ok((ts, payload));
        }
    }
    let (ts, kind, raw) = envelope(path, n, bytes)?;
    let payload = PayloadIn::from_raw(&kind, raw).map_err(|e| {
        PluginError::malformed_line(path, n, Some("payload"), format!("unexpected shape: {e}"))
    })?;
    Ok((ts, payload))
}
