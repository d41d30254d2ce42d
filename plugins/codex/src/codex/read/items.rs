//! Records → events: each `response_item` and `compacted` record added to the events being
//! built; the CLI's injected user messages set aside.

use std::borrow::Cow;
use std::path::Path;

use handoff_sdk::{
    AssistantPart, Body, Part, PluginError, Signature, Thinking, Timestamp, ToolCall, ToolInput,
    WebSearch,
};

use super::image_part;
use super::line::missing;
use super::replacement::{
    is_summary_message, kept_user_messages, rebuilt_user_messages, seen_user, NO_SUMMARY,
};
use super::state::{ReadState, SeenUser};
use crate::codex::records::*;
use crate::THINKING_PROVIDER;

impl ReadState<'_, '_> {
    /// A `response_item`: its events, or nothing for what is not history.
    pub(super) fn item(
        &mut self,
        n: usize,
        ts: Timestamp,
        item: ItemIn<'_>,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        let kind = item.kind.as_deref().ok_or_else(|| field_missing("type"))?;
        match kind {
            "message" => self.message(n, ts, item),
            "reasoning" => self.reasoning(n, ts, item),
            "function_call" | "custom_tool_call" => {
                let json_arguments = kind == "function_call";
                self.call(n, ts, json_arguments, item)
            }
            "function_call_output" | "custom_tool_call_output" => self.call_output(n, ts, item),
            "web_search_call" => self.web_search(n, ts, item),
            // A snapshot of the work tree for undo; never shown to the model.
            "ghost_snapshot" => Ok(()),
            other => Err(PluginError::malformed_line(
                path,
                n,
                Some("payload.type"),
                format!("response item type {other:?} has no canonical form; refusing to drop it"),
            )),
        }
    }

    /// A message: the user's (unless the CLI injected it) or the assistant's; instructions are
    /// not history.
    fn message(&mut self, n: usize, ts: Timestamp, item: ItemIn<'_>) -> Result<(), PluginError> {
        let path = self.path;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        let role = item.role.as_deref().ok_or_else(|| field_missing("role"))?;
        match role {
            "developer" | "system" => Ok(()),
            "user" => {
                if item.tag.is_none() && is_injected(&item) {
                    return Ok(());
                }
                let content = item.content.ok_or_else(|| field_missing("content"))?;
                let parts = user_parts(path, n, content)?;
                self.history_users.push(seen_user(n, &parts));
                self.push(n, ts, item.tag, item.id, Body::User { content: parts })
            }
            "assistant" => {
                let content = item.content.ok_or_else(|| field_missing("content"))?;
                let empty = content.is_empty();
                let mut parts = Vec::with_capacity(content.len());
                for (i, c) in content.into_iter().enumerate() {
                    match (c.kind.as_deref(), &c.text) {
                        (Some("output_text" | "input_text"), Some(_)) => {
                            let text = c.text.map(Cow::into_owned).unwrap_or_default();
                            parts.push(AssistantPart::Text { text })
                        }
                        (Some("refusal"), _) => {
                            return Err(PluginError::malformed_line(
                                path,
                                n,
                                Some(&format!("payload.content[{i}]")),
                                "a refusal has no canonical form",
                            ))
                        }
                        _ => return Err(bad_content(path, n, i, &c)),
                    }
                }
                self.push_assistant(n, ts, item.tag, item.id, parts, empty)
            }
            other => Err(PluginError::malformed_line(
                path,
                n,
                Some("payload.role"),
                format!("unknown message role {other:?}"),
            )),
        }
    }

    /// Reasoning: its summary texts, joined, and the encrypted content as the signature.
    fn reasoning(&mut self, n: usize, ts: Timestamp, item: ItemIn<'_>) -> Result<(), PluginError> {
        let summary = item.summary.unwrap_or_default();
        let mut texts = summary.into_iter().filter_map(|s| s.text);
        let text = match (texts.next(), texts.next()) {
            (None, _) => String::new(),
            (Some(only), None) => only.into_owned(),
            (Some(first), Some(second)) => {
                let mut all = format!("{first}\n\n{second}");
                for t in texts {
                    all.push_str("\n\n");
                    all.push_str(&t);
                }
                all
            }
        };
        let (signature_model, redacted) = match &item.tag {
            Some(tag) => (tag.signature_model.clone(), tag.redacted),
            None => (self.model.clone(), text.is_empty()),
        };
        let signature = item.encrypted_content.map(|value| Signature {
            provider: THINKING_PROVIDER.to_owned(),
            model: signature_model,
            value: value.into_owned(),
            redacted,
        });
        let part = AssistantPart::Thinking(Thinking { text, signature });
        self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
    }

    /// A tool call: a function call's arguments are a JSON document, a custom tool's input a
    /// string.
    fn call(
        &mut self,
        n: usize,
        ts: Timestamp,
        json_arguments: bool,
        item: ItemIn<'_>,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        let name = item.name.ok_or_else(|| field_missing("name"))?;
        let call_id = item.call_id.ok_or_else(|| field_missing("call_id"))?;
        let input = if json_arguments {
            let text = item
                .arguments
                .as_deref()
                .ok_or_else(|| field_missing("arguments"))?;
            ToolInput::Arguments(serde_json::from_str(text).map_err(|e| {
                PluginError::malformed_line(
                    path,
                    n,
                    Some("payload.arguments"),
                    format!("the arguments are not a JSON document: {e}"),
                )
            })?)
        } else {
            ToolInput::Freeform(
                item.input
                    .ok_or_else(|| field_missing("input"))?
                    .into_owned(),
            )
        };
        let part = AssistantPart::ToolCall(ToolCall {
            id: call_id.into_owned(),
            name: name.into_owned(),
            input,
        });
        self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
    }

    /// A web search the provider ran: its action as written (Codex sends it back as it is, with
    /// its id and status), no output.
    fn web_search(&mut self, n: usize, ts: Timestamp, item: ItemIn<'_>) -> Result<(), PluginError> {
        let action = item
            .action
            .ok_or_else(|| missing(self.path, n, "payload.action"))?;
        if action
            .get("type")
            .and_then(|t| t.as_str())
            .is_none_or(str::is_empty)
        {
            return Err(PluginError::malformed_line(
                self.path,
                n,
                Some("payload.action.type"),
                "a web search's action names its type",
            ));
        }
        let part = AssistantPart::WebSearch(WebSearch {
            id: item.id.as_deref().map(str::to_owned),
            status: item.status.map(Cow::into_owned),
            action,
        });
        self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
    }

    /// A tool call's output; it stays open to an `item_completed` failure until its turn ends.
    fn call_output(
        &mut self,
        n: usize,
        ts: Timestamp,
        item: ItemIn<'_>,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        let call_id = item
            .call_id
            .ok_or_else(|| field_missing("call_id"))?
            .into_owned();
        let content = match item.output {
            None => return Err(field_missing("output")),
            Some(OutputIn::Text(text)) => vec![Part::Text {
                text: text.into_owned(),
            }],
            Some(OutputIn::Items(items)) => {
                if let Some((i, kind)) = not_an_output_item(&items) {
                    // Codex parses a call output's items as `input_text` and `input_image`
                    // only: the line does not parse, Codex passes it over and answers the
                    // call "aborted" (measured, 0.171.0). So does this reader, never unsaid.
                    tracing::warn!(
                        "{}:{n}: payload.output[{i}].type: {kind:?} is no item of a tool's                          output; passed over, as Codex passes the line over",
                        path.display()
                    );
                    return Ok(());
                }
                user_parts(path, n, items)?
            }
        };
        let is_error =
            item.tag.as_ref().is_some_and(|t| t.is_error) || self.failed_calls.contains(&call_id);
        let index = self.emitted + self.held.len();
        self.hold_from.get_or_insert(index);
        self.open_results.insert(call_id.clone(), index);
        self.push(
            n,
            ts,
            item.tag,
            item.id,
            Body::ToolResult {
                call_id,
                content,
                is_error,
            },
        )
    }

    /// A `compacted` record: a compaction replacing what its tag names, or (Codex's own)
    /// everything before it, the user messages it keeps coming first (Codex sends them before
    /// the summary).
    pub(super) fn compacted(
        &mut self,
        n: usize,
        ts: Timestamp,
        compacted: CompactedIn<'_>,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let mut summary = compacted
            .message
            .ok_or_else(|| missing(path, n, "payload.message"))?
            .into_owned();
        let mut kept = Vec::new();
        let replaces_through = match compacted
            .tag
            .as_ref()
            .and_then(|t| t.replaces_through.clone())
        {
            Some(id) if self.ids.contains(&self.seeds.digest(&id)) => id,
            Some(id) => {
                return Err(PluginError::malformed_line(
                    path,
                    n,
                    Some("payload.x-handoff-event.replaces_through"),
                    format!("{id:?} is not an earlier event"),
                ))
            }
            // Codex's own compaction replaces everything before it; its history from here on is
            // its replacement history (the user messages it keeps, then the summary) or, without
            // one, what Codex rebuilds from the user messages before it (see `replacement`).
            None => {
                kept = match compacted.replacement_history {
                    Some(items) => kept_user_messages(path, n, &summary, items)?,
                    None => {
                        if summary.is_empty() {
                            summary = NO_SUMMARY.to_owned();
                        }
                        rebuilt_user_messages(path, n, &self.history_users)?
                    }
                };
                match self.held.back() {
                    Some(last) => last.event.id.clone(),
                    None => {
                        return Err(PluginError::malformed_line(
                            path,
                            n,
                            None,
                            "a compaction with nothing before it to replace",
                        ))
                    }
                }
            }
        };
        self.history_users
            .replace(kept.iter().map(|content| seen_user(n, content)));
        if !is_summary_message(&summary) {
            // Codex's history holds the summary as a user message, and only a summary with its
            // own prefix is left out of the next rebuild.
            self.history_users.push(SeenUser {
                line: n,
                texts: vec![summary.clone()],
            });
        }
        for (k, content) in kept.into_iter().enumerate() {
            let id = Cow::Owned(format!("line-{n}-kept-{k}"));
            self.push(n, ts, None, Some(id), Body::User { content })?;
        }
        self.push(
            n,
            ts,
            compacted.tag.map(Box::new),
            None,
            Body::Compaction {
                summary,
                replaces_through,
            },
        )
    }
}

/// The rule for user messages the CLI injected (not typed by the user), for untagged items only:
/// the CLI's own metadata says a harness put every content item there (`provenance.type` is
/// `harness`, or the item kind is `environments.*`); or, for files without that metadata, the
/// message is exactly one `<environment_context>…</environment_context>` text.
pub(super) fn is_injected(item: &ItemIn<'_>) -> bool {
    if let Some(meta) = &item.internal_chat_message_metadata_passthrough {
        let by_kind = !meta.content_item_kinds.is_empty()
            && meta
                .content_item_kinds
                .iter()
                .all(|k| k.starts_with("environments."));
        let by_provenance = !meta.content_item_metadata.is_empty()
            && meta
                .content_item_metadata
                .iter()
                .all(|m| m.provenance.as_ref().and_then(|p| p.kind.as_deref()) == Some("harness"));
        return by_kind || by_provenance;
    }
    match item.content.as_deref() {
        Some([only]) => {
            only.kind.as_deref() == Some("input_text")
                && only.text.as_deref().is_some_and(is_environment_context)
        }
        _ => false,
    }
}

/// Whether `text` is the environment context Codex injects as a user message: exactly one
/// `<environment_context>…</environment_context>` element (surrounding whitespace aside).
fn is_environment_context(text: &str) -> bool {
    let t = text.trim();
    t.starts_with("<environment_context>") && t.ends_with("</environment_context>")
}

fn bad_content(path: &Path, n: usize, i: usize, c: &ContentIn<'_>) -> PluginError {
    PluginError::malformed_line(
        path,
        n,
        Some(&format!("payload.content[{i}]")),
        format!(
            "unexpected content item (type {:?}, text {}, image_url {})",
            c.kind,
            if c.text.is_some() {
                "present"
            } else {
                "missing"
            },
            if c.image_url.is_some() {
                "present"
            } else {
                "missing"
            },
        ),
    )
}

/// The first item of a call's output that is no `input_text` or `input_image`, the only items
/// Codex reads in a call's output (an `output_text` there is a message's item).
fn not_an_output_item<'c>(items: &'c [ContentIn<'_>]) -> Option<(usize, &'c str)> {
    items.iter().enumerate().find_map(|(i, c)| {
        let kind = c.kind.as_deref().unwrap_or("");
        (!matches!(kind, "input_text" | "input_image")).then_some((i, kind))
    })
}

pub(super) fn user_parts(
    path: &Path,
    n: usize,
    content: Vec<ContentIn<'_>>,
) -> Result<Vec<Part>, PluginError> {
    let mut parts = Vec::with_capacity(content.len());
    for (i, c) in content.into_iter().enumerate() {
        match (c.kind.as_deref(), &c.text, &c.image_url) {
            (Some("input_text" | "output_text"), Some(_), _) => parts.push(Part::Text {
                text: c.text.map(Cow::into_owned).unwrap_or_default(),
            }),
            (Some("input_image"), _, Some(url)) => parts.push(image_part(url).map_err(|m| {
                PluginError::malformed_line(
                    path,
                    n,
                    Some(&format!("payload.content[{i}].image_url")),
                    m,
                )
            })?),
            _ => return Err(bad_content(path, n, i, &c)),
        }
    }
    Ok(parts)
}
