//! The history Qwen Code sends → canonical events, as it is built: the contents are parsed by
//! core's Gemini dialect; each event takes its record's uuid, timestamp and what the record keeps
//! for handoff.

use std::path::Path;

use handoff_sdk::dialect::gemini;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, PluginError, Thinking, Timestamp};

use crate::chain::Index;
use crate::history::{self, Entry};
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

/// Hands the events of the chat file `path` (indexed as `index`) to `sink`, in order, until it
/// returns `false`. `as_sent`: as the CLI sends them, with the results it makes up for calls
/// that have none; else as the records are, what an append goes on from (a result appended
/// answers the call itself). Each block of the history is parsed as it comes, with one Gemini
/// parser for the whole history (a result pairs with the calls before it).
pub(crate) fn each(
    path: &Path,
    index: &Index,
    as_sent: bool,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    if index.leaf().is_none() {
        // `loadSession` finds no session in a file without a conversation record.
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "no conversation record (Qwen Code finds no session in this file)".into(),
        });
    }
    let mut parser = gemini::ContentParser::new(None);
    // The position in the history of the next content.
    let mut c = 0;
    history::each_block(path, index, as_sent, &mut |entries| {
        for entry in entries {
            let events =
                parser
                    .parse_content(c, &entry.content)
                    .map_err(|e| PluginError::Malformed {
                        file: path.to_owned(),
                        line: Some(entry.line),
                        field: Some(format!("message{}", after_index(&e.path))),
                        message: e.message,
                    })?;
            c += 1;
            for (k, event) in events.into_iter().enumerate() {
                if !sink(event_of(path, &entry, k, event)?) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    })
}

/// The `k`-th event the parser made of `entry`'s content, with its record's identity: its id,
/// time, author, origin and thinking as kept.
fn event_of(path: &Path, entry: &Entry, k: usize, mut event: Event) -> Result<Event, PluginError> {
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
        if let Some(Some(kept)) = member::<Vec<KeptThinking>>(path, entry.line, extras, THINKING)? {
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
    Ok(event)
}

/// A thinking part kept in a record's `handoff` member, with its index in the turn.
#[derive(serde::Deserialize)]
struct KeptThinking {
    at: usize,
    part: Thinking,
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
    fn an_error_names_the_field_after_its_content() {
        assert_eq!(after_index("contents[4].parts[1]"), ".parts[1]");
        assert_eq!(after_index("contents[4]"), "");
    }
}
