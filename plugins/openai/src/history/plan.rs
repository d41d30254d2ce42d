//! The resume plan: the exact next request body, the stored history plus the new user message,
//! for the model the session used.
//!
//! The body is rendered from the transcript the session reads back as, by core's dialect, so it
//! never holds `handoff` (the API never sees the extras); it is checked against the provider's
//! rules for a request about to be sent (every call answered, C1–C5 / R1–R7) before it is
//! returned. Responses reasoning made by another model than the session's is left out (R5).

use handoff_sdk::dialect::RenderOptions;
use handoff_sdk::serde_json::Value;
use handoff_sdk::{PluginError, ResumePlan, SessionRef};

use super::layout::load;
use super::read::from_map;
use super::{ApiTarget, DEFAULT_MODEL};

/// How to resume exactly `session` with `prompt`.
pub(crate) fn plan(
    target: &ApiTarget,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let path = session.path.as_path();
    let map = load(path)?;
    let model = map
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_owned();
    let transcript = from_map(target, path, map)?;
    let options = RenderOptions {
        thinking_from: Some((target.manifest)().thinking_from),
        ..RenderOptions::default()
    };
    let rejected = |what: String| {
        PluginError::Other(format!(
            "{}: the next request would be rejected: {what}",
            path.display()
        ))
    };
    let body = target
        .dialect
        .render_request(&transcript, &model, prompt, &options)
        .map_err(|e| rejected(e.to_string()))?;
    target
        .dialect
        .validate(&body)
        .map_err(|v| rejected(v.to_string()))?;
    Ok(ResumePlan::Request {
        dialect: target.dialect,
        body,
    })
}
