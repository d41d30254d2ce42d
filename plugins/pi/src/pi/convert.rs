//! One pi entry → one canonical event (or, for what pi never sends, the entry kept whole).
//!
//! What a pi entry has beyond its canonical form (usage, response ids, signatures of text blocks,
//! the entries pi never sends, …) goes into the event's `opaque["pi"]`, so writing the transcript
//! back into pi loses nothing:
//!
//! | key | what |
//! |---|---|
//! | `line` | members of the entry line without a canonical home (and its `timestamp` when it is not exactly the event's time as pi would write it) |
//! | `message` | likewise for the message (`usage` unless zero, `stopReason` unless implied, `responseId`, `errorMessage`, `details`, …) |
//! | `blocks` | `[[index, {members}], …]`: likewise for content blocks (`textSignature`, `thoughtSignature`, …) |
//! | `string` | `true`: the user message's content was a plain string |
//! | `entry` | the whole entry, for events made from what pi sends as user text (custom messages, summaries, bash runs) |
//! | `before` | the entries pi does not send that came just before this event on the path, whole |
//! | `after` | on the last event: the entries after it on the path, whole |

use std::collections::BTreeMap;
use std::path::Path;

use handoff_sdk::serde_json::{Map, Value};
use handoff_sdk::{
    AssistantPart, Body, Event, Origin, Part, PluginError, Signature, Thinking, Timestamp,
    ToolCall, ToolInput,
};

use super::llm::{self, field_error};
use super::records::{Block, Content, Entry, HandoffEvent, IntoValue, Message, ZERO_USAGE};

/// The key of this plugin's native fields in `Event::opaque`.
pub const OPAQUE_KEY: &str = "pi";

/// One entry on the path, parsed whole.
pub struct Node {
    /// Its 1-based line.
    pub line: usize,
    /// Its id (a v1 entry's stand-in `L<line>`).
    pub id: String,
    /// Its parent's id.
    pub parent: Option<String>,
    /// The entry, without `id` and `parentId`.
    pub entry: Entry,
}

/// The `opaque["pi"]` object of an event, made when missing.
pub fn pi_map(event: &mut Event) -> &mut Map<String, Value> {
    let slot = event
        .opaque
        .entry(OPAQUE_KEY.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut().expect("made an object above")
}

/// An entry carried whole: its members as pi wrote them (a v1 entry without the stand-in id).
pub fn carried(node: Node) -> Value {
    let Node {
        id, parent, entry, ..
    } = node;
    let mut map = Map::new();
    let (kind, rest) = split_kind(entry);
    map.insert("type".into(), Value::String(kind));
    if !is_v1_id(&id) {
        map.insert("id".into(), Value::String(id));
        map.insert("parentId".into(), parent.map_or(Value::Null, Value::String));
    }
    map.extend(rest);
    Value::Object(map)
}

fn split_kind(mut entry: Entry) -> (String, Map<String, Value>) {
    let kind = entry.kind.take().unwrap_or_default();
    (kind, entry.into_map())
}

/// The stand-in ids of v1 entries (`L<line>`), which are not written back.
pub fn is_v1_id(id: &str) -> bool {
    id.strip_prefix('L')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Native fields of one event, gathered as it is converted.
#[derive(Default)]
struct Residue {
    map: Map<String, Value>,
}

impl Residue {
    fn put_map(&mut self, key: &str, members: Map<String, Value>) {
        if !members.is_empty() {
            self.map.insert(key.to_owned(), Value::Object(members));
        }
    }

    fn into_opaque(self) -> BTreeMap<String, Value> {
        let mut opaque = BTreeMap::new();
        if !self.map.is_empty() {
            opaque.insert(OPAQUE_KEY.to_owned(), Value::Object(self.map));
        }
        opaque
    }
}

/// An event as converted: its line, and a tool result's `toolName`, which stays out of the
/// carried fields only when it is the call's (known once the path is checked in order).
pub struct Converted {
    /// The event.
    pub event: Event,
    /// The line it came from.
    pub line: usize,
    /// A tool result's `toolName`.
    pub tool_name: Option<String>,
}

/// Converts entries of one file.
pub struct Converter<'a> {
    /// The file (for errors).
    pub file: &'a Path,
    /// Its format version.
    pub version: u64,
}

impl Converter<'_> {
    fn fail(&self, line: usize, field: &str, message: impl Into<String>) -> PluginError {
        PluginError::malformed_line(self.file, line, Some(field), message)
    }

    /// A user, assistant or tool result message.
    pub fn message(&self, node: Node) -> Result<Converted, PluginError> {
        let Node {
            line,
            id,
            mut entry,
            ..
        } = node;
        let handoff = entry.handoff.take().unwrap_or_default();
        let timestamp = llm::message_time(&entry).map_err(|e| field_error(self.file, line, e))?;
        let mut message = entry.message.take().expect("classified as a message");
        if message
            .timestamp
            .as_ref()
            .is_some_and(|n| n.as_i64().is_some())
        {
            message.timestamp = None;
        }
        let mut residue = Residue::default();
        let role = message.role.take().unwrap_or_default();
        let body = match role.as_str() {
            "user" => self.user(&mut message, line, &mut residue)?,
            "assistant" => self.assistant(&mut message, &handoff, line, &mut residue)?,
            _ => self.tool_result(&mut message, line, &mut residue)?,
        };
        let tool_name = message.tool_name.take();
        residue.put_map("message", message.into_map());
        residue.put_map("line", entry_rest(entry, timestamp));
        Ok(Converted {
            event: Event {
                id,
                timestamp,
                author: handoff.author,
                body,
                opaque: residue.into_opaque(),
            },
            line,
            tool_name,
        })
    }

    fn user(
        &self,
        message: &mut Message,
        line: usize,
        residue: &mut Residue,
    ) -> Result<Body, PluginError> {
        let content = match message.content.take() {
            Some(Content::Text(text)) => {
                residue.map.insert("string".into(), Value::Bool(true));
                vec![Part::text(text)]
            }
            Some(Content::Blocks(blocks)) => self.parts(blocks, line, residue)?,
            None => return Err(self.fail(line, "message.content", "the message has no content")),
        };
        Ok(Body::User { content })
    }

    /// Text and image blocks (user content, tool results), moved out of the records.
    fn parts(
        &self,
        blocks: Vec<Block>,
        line: usize,
        residue: &mut Residue,
    ) -> Result<Vec<Part>, PluginError> {
        let mut parts = Vec::with_capacity(blocks.len());
        let mut rests = Vec::new();
        for (i, mut block) in blocks.into_iter().enumerate() {
            // Made only for an error: a string per block shows in the profile.
            let field = || format!("message.content[{i}]");
            let part = match block.kind.as_deref() {
                Some("text") => Part::Text {
                    text: block.text.take().ok_or_else(|| {
                        self.fail(line, &format!("{}.text", field()), "a text block has no text")
                    })?,
                },
                Some("image") => {
                    let part = llm::image_part(
                        block.data.as_deref(),
                        block.mime_type.as_deref(),
                        &field(),
                    )
                    .map_err(|e| field_error(self.file, line, e))?;
                    block.data = None;
                    block.mime_type = None;
                    part
                }
                other => {
                    return Err(self.fail(
                        line,
                        &format!("{}.type", field()),
                        format!(
                            "{:?} is not a block pi sends in user content or tool results (text or image)",
                            other.unwrap_or("(none)")
                        ),
                    ))
                }
            };
            block.kind = None;
            rest_of_block(block, i, &mut rests);
            parts.push(part);
        }
        if !rests.is_empty() {
            residue.map.insert("blocks".into(), Value::Array(rests));
        }
        Ok(parts)
    }

    fn assistant(
        &self,
        message: &mut Message,
        handoff: &HandoffEvent,
        line: usize,
        residue: &mut Residue,
    ) -> Result<Body, PluginError> {
        let origin = match handoff
            .origin_override()
            .map_err(|e| self.fail(line, "x-handoff-event.origin", e))?
        {
            Some(origin) => {
                // The members pi needs were written as stand-ins.
                message.api = None;
                message.provider = None;
                message.model = None;
                origin
            }
            None => match message.provider.take() {
                Some(provider) => Some(Origin {
                    provider,
                    model: message.model.take(),
                    api: message.api.take(),
                }),
                None => None,
            },
        };
        let blocks = match message.content.take() {
            Some(Content::Blocks(blocks)) => blocks,
            Some(Content::Text(_)) => {
                return Err(self.fail(
                    line,
                    "message.content",
                    "an assistant message's content must be an array of blocks (pi cannot send a string)",
                ))
            }
            None => return Err(self.fail(line, "message.content", "the message has no content")),
        };
        let mut content = Vec::with_capacity(blocks.len());
        let mut rests = Vec::new();
        for (i, mut block) in blocks.into_iter().enumerate() {
            let part = self.assistant_part(&mut block, i, origin.as_ref(), handoff, line)?;
            block.kind = None;
            rest_of_block(block, i, &mut rests);
            content.push(part);
        }
        if !rests.is_empty() {
            residue.map.insert("blocks".into(), Value::Array(rests));
        }
        let implied = if content
            .iter()
            .any(|p| matches!(p, AssistantPart::ToolCall(_)))
        {
            "toolUse"
        } else {
            "stop"
        };
        if message.stop_reason.as_deref() == Some(implied) {
            message.stop_reason = None;
        }
        if message
            .usage
            .as_ref()
            .is_some_and(|u| u.get() == ZERO_USAGE)
        {
            message.usage = None;
        }
        Ok(Body::Assistant { content, origin })
    }

    fn assistant_part(
        &self,
        block: &mut Block,
        i: usize,
        origin: Option<&Origin>,
        handoff: &HandoffEvent,
        line: usize,
    ) -> Result<AssistantPart, PluginError> {
        let field = || format!("message.content[{i}]");
        let missing = |what: &str| {
            self.fail(
                line,
                &format!("{}.{what}", field()),
                format!("the block has no {what}"),
            )
        };
        Ok(match block.kind.as_deref() {
            Some("text") => AssistantPart::Text {
                text: block.text.take().ok_or_else(|| missing("text"))?,
            },
            Some("thinking") => {
                let text = block.thinking.take().ok_or_else(|| missing("thinking"))?;
                let value = block.thinking_signature.take_if(|s| !s.is_empty());
                let signature = value.map(|value| {
                    let model = handoff
                        .signature_models
                        .iter()
                        .find(|(index, _)| *index == i)
                        .map_or_else(|| origin.and_then(|o| o.model.clone()), |(_, m)| m.clone());
                    Signature {
                        provider: origin.map_or_else(String::new, |o| o.provider.clone()),
                        model,
                        value,
                        redacted: block.redacted.take().unwrap_or(false),
                    }
                });
                // A signature pi would not replay to this turn's provider rides in the extras.
                let signature = signature.or_else(|| {
                    handoff
                        .unreplayed_signatures
                        .iter()
                        .find(|(index, _)| *index == i)
                        .map(|(_, s)| s.clone())
                });
                AssistantPart::Thinking(Thinking { text, signature })
            }
            Some("toolCall") => {
                let id = block.id.take().ok_or_else(|| missing("id"))?;
                let name = block.name.take().ok_or_else(|| missing("name"))?;
                let arguments = block.arguments.take().ok_or_else(|| missing("arguments"))?;
                let input = if handoff.freeform_calls.contains(&i) {
                    ToolInput::Freeform(
                        ToolInput::freeform_from_structured(&arguments).ok_or_else(|| {
                            self.fail(
                                line,
                                &format!("{}.arguments", field()),
                                "a call marked freeform (x-handoff-event.freeform_calls) must \
                                 have the arguments {\"input\": <text>}"
                                    .to_owned(),
                            )
                        })?,
                    )
                } else {
                    ToolInput::Arguments(arguments)
                };
                AssistantPart::ToolCall(ToolCall { id, name, input })
            }
            other => {
                return Err(self.fail(
                    line,
                    &format!("{}.type", field()),
                    format!(
                        "{:?} is not a block of an assistant message (text, thinking or toolCall)",
                        other.unwrap_or("(none)")
                    ),
                ))
            }
        })
    }

    fn tool_result(
        &self,
        message: &mut Message,
        line: usize,
        residue: &mut Residue,
    ) -> Result<Body, PluginError> {
        let call_id = message.tool_call_id.take().ok_or_else(|| {
            self.fail(line, "message.toolCallId", "the tool result names no call")
        })?;
        let content = match message.content.take() {
            Some(Content::Blocks(blocks)) => self.parts(blocks, line, residue)?,
            Some(Content::Text(text)) => {
                residue.map.insert("string".into(), Value::Bool(true));
                vec![Part::text(text)]
            }
            None => {
                return Err(self.fail(line, "message.content", "the tool result has no content"))
            }
        };
        let is_error = message.is_error.take().unwrap_or(false);
        Ok(Body::ToolResult {
            call_id,
            content,
            is_error,
        })
    }

    /// An entry pi sends as user text: the text it sends, and the whole entry kept.
    pub fn as_user(&self, node: Node) -> Result<Converted, PluginError> {
        let Node {
            line,
            id,
            mut entry,
            ..
        } = node;
        let handoff = entry.handoff.take().unwrap_or_default();
        let is_hook = self.version < 3
            && entry.message.as_ref().and_then(|m| m.role.as_deref()) == Some("hookMessage");
        let (timestamp, content) =
            llm::as_user(&entry).map_err(|e| field_error(self.file, line, e))?;
        if is_hook {
            // pi renames the v2 role when it migrates the file.
            if let Some(m) = entry.message.as_mut() {
                m.role = Some("custom".into());
            }
        }
        let mut residue = Residue::default();
        residue.map.insert("entry".into(), entry.into_value());
        Ok(Converted {
            event: Event {
                id,
                timestamp,
                author: handoff.author,
                body: Body::User { content },
                opaque: residue.into_opaque(),
            },
            line,
            tool_name: None,
        })
    }

    /// A compaction replacing everything up to the event `through`.
    pub fn compaction(&self, node: Node, through: String) -> Result<Converted, PluginError> {
        let Node {
            line,
            id,
            mut entry,
            ..
        } = node;
        let handoff = entry.handoff.take().unwrap_or_default();
        let text = entry
            .timestamp
            .as_deref()
            .ok_or_else(|| self.fail(line, "timestamp", "the compaction has no timestamp"))?;
        let timestamp = Timestamp::parse(text).map_err(|e| self.fail(line, "timestamp", e))?;
        let summary = entry
            .summary
            .take()
            .ok_or_else(|| self.fail(line, "summary", "the compaction has no summary"))?;
        entry.first_kept_entry_id = None;
        let mut residue = Residue::default();
        residue.put_map("line", entry_rest(entry, timestamp));
        Ok(Converted {
            event: Event {
                id,
                timestamp,
                author: handoff.author,
                body: Body::Compaction {
                    summary,
                    replaces_through: through,
                },
                opaque: residue.into_opaque(),
            },
            line,
            tool_name: None,
        })
    }
}

/// The members of an event's entry line left after conversion (its type, id and parent are
/// the writer's; its timestamp only when the writer would spell it differently).
fn entry_rest(mut entry: Entry, timestamp: Timestamp) -> Map<String, Value> {
    entry.kind = None;
    entry.message = None;
    if entry
        .timestamp
        .as_deref()
        .is_some_and(|t| timestamp.is_spelled(t))
    {
        entry.timestamp = None;
    }
    entry.into_map()
}

/// Keeps the members of a block left after conversion, by index.
fn rest_of_block(block: Block, index: usize, rests: &mut Vec<Value>) {
    let rest = block.into_map();
    if !rest.is_empty() {
        rests.push(Value::Array(vec![Value::from(index), Value::Object(rest)]));
    }
}
