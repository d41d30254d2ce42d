//! The history Qwen Code sends → canonical events: the contents are parsed by core's Gemini
//! dialect; each event takes its record's uuid, timestamp and what the record keeps for handoff.

use std::path::Path;

use handoff_sdk::dialect::gemini;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{AssistantPart, Body, Origin, PluginError, Thinking, Timestamp, Transcript};

use crate::chain::{self, Loaded};
use crate::manifest::{API, PROVIDER};

/// The `handoff` member's origin of an assistant record (present, even as null, when the
/// canonical origin is not what the record reads as by default).
pub(crate) const ORIGIN: &str = "origin";
/// The `handoff` member's author of a record.
pub(crate) const AUTHOR: &str = "author";
/// The `handoff` member's thinking of an assistant record: `[{at, part}]`, each thinking part
/// exactly (its signature and maker, which a thought part does not keep) with its index in the
/// turn. Present, they replace the thought parts the message holds.
pub(crate) const THINKING: &str = "thinking";

/// The transcript of a loaded chat file, as the CLI sends it.
pub(crate) fn transcript(path: &Path, loaded: &Loaded) -> Result<Transcript, PluginError> {
    read(path, loaded, true)
}

/// The transcript of the records as they are, without the results the CLI makes up for calls
/// that have none: what an append goes on from (a result appended answers the call itself).
pub(crate) fn transcript_as_written(
    path: &Path,
    loaded: &Loaded,
) -> Result<Transcript, PluginError> {
    read(path, loaded, false)
}

fn read(path: &Path, loaded: &Loaded, as_sent: bool) -> Result<Transcript, PluginError> {
    if loaded.leaf().is_none() {
        // `loadSession` finds no session in a file without a conversation record.
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "no conversation record (Qwen Code finds no session in this file)".into(),
        });
    }
    let mut entries = chain::history(path, loaded)?;
    if as_sent {
        chain::repair_unanswered(&mut entries);
    }
    let contents: Vec<&Value> = entries.iter().map(|e| &e.content).collect();
    let parsed = gemini::parse(&json!({ "contents": contents })).map_err(|e| {
        let entry = content_index(&e.path).and_then(|c| entries.get(c));
        PluginError::Malformed {
            file: path.to_owned(),
            line: entry.map(|e| e.line),
            field: Some(format!("message{}", after_index(&e.path))),
            message: e.message,
        }
    })?;
    let mut events = parsed.transcript.events;
    for event in &mut events {
        let (c, k) = event_origin(&event.id).ok_or_else(|| {
            PluginError::Other(format!("the Gemini parser named an event {:?}", event.id))
        })?;
        let entry = &entries[c];
        // A result the CLI moved into this content, or made up, keeps its own identity.
        let moved = first_part_of_event(&entry.content, k).and_then(|p| entry.part_origin(p));
        let (id, stamp, extras) = match moved {
            Some(o) => (o.id.clone(), o.timestamp.as_deref(), o.extras.as_ref()),
            None => (
                match k {
                    0 => entry.id.clone(),
                    k => format!("{}#{k}", entry.id),
                },
                entry.timestamp.as_deref(),
                entry.extras.as_ref(),
            ),
        };
        event.id = id;
        event.timestamp = timestamp(path, entry.line, stamp)?;
        event.author = member(path, entry.line, extras, AUTHOR)?.flatten();
        if let Body::Assistant { origin, content } = &mut event.body {
            if let Some(Some(kept)) =
                member::<Vec<KeptThinking>>(path, entry.line, extras, THINKING)?
            {
                content.retain(|p| !matches!(p, AssistantPart::Thinking(_)));
                for k in kept {
                    let at = k.at.min(content.len());
                    content.insert(at, AssistantPart::Thinking(k.part));
                }
            }
            *origin = match member(path, entry.line, extras, ORIGIN)? {
                Some(kept) => kept,
                None => Some(Origin {
                    provider: PROVIDER.to_owned(),
                    model: entry.model.clone(),
                    api: Some(API.to_owned()),
                }),
            };
        }
    }
    let mut transcript = Transcript::new(events);
    transcript.cwd = loaded.cwd().map(str::to_owned);
    Ok(transcript)
}

/// A thinking part kept in a record's `handoff` member, with its index in the turn.
#[derive(serde::Deserialize)]
struct KeptThinking {
    at: usize,
    part: Thinking,
}

/// `contents[c]` or `contents[c]#k` → `(c, k)`.
fn event_origin(id: &str) -> Option<(usize, usize)> {
    let rest = id.strip_prefix("contents[")?;
    let (c, tail) = rest.split_once(']')?;
    let k = match tail.strip_prefix('#') {
        Some(k) => k.parse().ok()?,
        None if tail.is_empty() => 0,
        None => return None,
    };
    Some((c.parse().ok()?, k))
}

/// The content index a parse error's path starts with.
fn content_index(path: &str) -> Option<usize> {
    event_origin(path.split('.').next()?)
        .map(|(c, _)| c)
        .or_else(|| {
            let rest = path.strip_prefix("contents[")?;
            rest.split_once(']')?.0.parse().ok()
        })
}

/// The part of a parse error's path after `contents[c]`.
fn after_index(path: &str) -> &str {
    path.find(']').map_or("", |i| &path[i + 1..])
}

/// The part a user content's `k`-th event starts at, as the Gemini parser splits it: each
/// `functionResponse` one event, each run of other parts one.
fn first_part_of_event(content: &Value, k: usize) -> Option<usize> {
    let parts = content["parts"].as_array()?;
    let is_result = |p: &Value| p.get("functionResponse").is_some();
    let mut starts =
        (0..parts.len()).filter(|&p| is_result(&parts[p]) || p == 0 || is_result(&parts[p - 1]));
    starts.nth(k)
}

fn timestamp(path: &Path, line: usize, stamp: Option<&str>) -> Result<Timestamp, PluginError> {
    let malformed =
        |message: String| PluginError::malformed_line(path, line, Some("timestamp"), message);
    let text = stamp.ok_or_else(|| malformed("missing".into()))?;
    Timestamp::parse(text).map_err(malformed)
}

/// A member of the record's `handoff` object: `None` when absent, `Some(None)` when null.
fn member<T: serde::de::DeserializeOwned>(
    path: &Path,
    line: usize,
    extras: Option<&Value>,
    key: &str,
) -> Result<Option<Option<T>>, PluginError> {
    let Some(value) = extras.and_then(|x| x.get(key)) else {
        return Ok(None);
    };
    serde_json::from_value::<Option<T>>(value.clone())
        .map(Some)
        .map_err(|e| PluginError::Malformed {
            file: path.to_owned(),
            line: Some(line),
            field: Some(format!("{}.{key}", handoff_sdk::EXTRAS_KEY)),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_of_the_parser_map_back_to_contents() {
        assert_eq!(event_origin("contents[3]"), Some((3, 0)));
        assert_eq!(event_origin("contents[12]#2"), Some((12, 2)));
        assert_eq!(event_origin("messages[1]"), None);
        assert_eq!(content_index("contents[4].parts[1].functionCall"), Some(4));
        assert_eq!(after_index("contents[4].parts[1]"), ".parts[1]");
    }
}
