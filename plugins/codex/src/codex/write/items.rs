//! The pieces of a written line: a `response_item`'s content and tag, an assistant event's items,
//! origins serialised once.

use std::borrow::Cow;
use std::io;
use std::rc::Rc;

use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, ToolInput};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::codex::records::*;
use crate::THINKING_PROVIDER;

/// Assistant origins as JSON, serialised once per run of equal origins: every item of an
/// assistant event carries its origin, and a session's turns mostly share one. The bytes are what
/// serialising the origin in place writes.
#[derive(Default)]
pub(super) struct OriginCache {
    last: Option<(Origin, Rc<RawValue>)>,
}

impl OriginCache {
    #[inline]
    pub(super) fn raw(&mut self, origin: Option<&Origin>) -> io::Result<Option<Rc<RawValue>>> {
        let Some(origin) = origin else {
            return Ok(None);
        };
        match &self.last {
            Some((last, raw)) if last == origin => Ok(Some(Rc::clone(raw))),
            _ => {
                let raw: Rc<RawValue> = Rc::from(raw(origin)?);
                self.last = Some((origin.clone(), Rc::clone(&raw)));
                Ok(Some(raw))
            }
        }
    }
}

/// Whether a thinking part goes to Codex: only OpenAI's own reasoning is portable to it.
#[inline]
pub(super) fn thinking_is_portable(thinking: &handoff_sdk::Thinking, event: &Event) -> bool {
    let maker = thinking
        .signature
        .as_ref()
        .map(|s| s.provider.as_str())
        .or(match &event.body {
            Body::Assistant { origin, .. } => origin.as_ref().map(|o| o.provider.as_str()),
            _ => None,
        });
    maker == Some(THINKING_PROVIDER)
}

/// The items of one assistant event: runs of text become one message, then reasoning and calls
/// in order. Foreign thinking is set aside (display-only across providers).
pub(super) fn assistant_items<'a>(
    event: &'a Event,
    content: &'a [AssistantPart],
    tagged: bool,
    origin: Option<&'a RawValue>,
) -> Vec<ItemOut<'a>> {
    let mut items = Vec::with_capacity(content.len());
    let mut texts: Vec<ContentOut<'a>> = Vec::new();
    let tag_for = |tagged: bool| tagged.then(|| tag(event, origin));
    let flush = |texts: &mut Vec<ContentOut<'a>>, items: &mut Vec<ItemOut<'a>>| {
        if !texts.is_empty() {
            items.push(ItemOut::Message {
                role: "assistant",
                content: std::mem::take(texts),
                tag: tag_for(tagged),
            });
        }
    };
    for part in content {
        match part {
            AssistantPart::Text { text } => texts.push(ContentOut::OutputText { text }),
            AssistantPart::Thinking(thinking) => {
                if !thinking_is_portable(thinking, event) {
                    continue;
                }
                flush(&mut texts, &mut items);
                let mut tag = tag_for(tagged);
                if let (Some(tag), Some(sig)) = (&mut tag, &thinking.signature) {
                    tag.signature_model = sig.model.as_deref();
                    tag.redacted = sig.redacted;
                }
                items.push(ItemOut::Reasoning {
                    summary: if thinking.text.is_empty() {
                        Vec::new()
                    } else {
                        vec![SummaryOut {
                            kind: "summary_text",
                            text: &thinking.text,
                        }]
                    },
                    encrypted_content: thinking.signature.as_ref().map(|s| s.value.as_str()),
                    tag,
                });
            }
            AssistantPart::ToolCall(call) => {
                flush(&mut texts, &mut items);
                items.push(match &call.input {
                    ToolInput::Arguments(arguments) => ItemOut::FunctionCall {
                        name: &call.name,
                        arguments: arguments.to_string(),
                        call_id: &call.id,
                        tag: tag_for(tagged),
                    },
                    ToolInput::Freeform(input) => ItemOut::CustomToolCall {
                        name: &call.name,
                        input,
                        call_id: &call.id,
                        tag: tag_for(tagged),
                    },
                });
            }
            AssistantPart::WebSearch(search) => {
                flush(&mut texts, &mut items);
                items.push(ItemOut::WebSearchCall {
                    id: search.id.as_deref(),
                    status: search.status.as_deref(),
                    action: &search.action,
                    tag: tag_for(tagged),
                });
            }
        }
    }
    flush(&mut texts, &mut items);
    // An assistant turn with no content at all still exists in the transcript.
    if content.is_empty() {
        items.push(ItemOut::Message {
            role: "assistant",
            content: Vec::new(),
            tag: tag_for(tagged),
        });
    }
    items
}

/// The `x-handoff-event` member of an item of `event`; `origin` is the assistant event's origin
/// as JSON (see [`OriginCache`]).
#[inline]
pub(super) fn tag<'a>(event: &'a Event, origin: Option<&'a RawValue>) -> EventTagOut<'a> {
    EventTagOut {
        id: &event.id,
        author: event.author.as_ref(),
        origin,
        is_error: false,
        replaces_through: None,
        signature_model: None,
        redacted: false,
    }
}

#[inline]
pub(super) fn content_item(part: &Part) -> io::Result<ContentOut<'_>> {
    Ok(match part {
        Part::Text { text } => ContentOut::InputText { text },
        Part::Image { media_type, data } => ContentOut::InputImage {
            image_url: ImageUrlOut::data(media_type, data).map_err(io::Error::other)?,
        },
        Part::ImageUrl { url } => ContentOut::InputImage {
            image_url: ImageUrlOut::Url(url),
        },
    })
}

#[inline]
pub(super) fn joined_text<'a>(mut texts: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut all = format!("{first}\n{second}");
            for t in texts {
                all.push('\n');
                all.push_str(t);
            }
            Cow::Owned(all)
        }
    }
}

pub(super) fn raw<T: Serialize>(value: &T) -> io::Result<Box<RawValue>> {
    serde_json::value::to_raw_value(value).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_origin_is_written_as_in_place() {
        let origin = Origin {
            provider: "anthropic".into(),
            model: Some("claude \"opus\"".into()),
            api: None,
        };
        let mut cache = OriginCache::default();
        let first = cache.raw(Some(&origin)).unwrap().unwrap();
        let again = cache.raw(Some(&origin)).unwrap().unwrap();
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!(first.get(), serde_json::to_string(&origin).unwrap());
        let other = Origin {
            model: None,
            ..origin.clone()
        };
        assert_eq!(
            cache.raw(Some(&other)).unwrap().unwrap().get(),
            serde_json::to_string(&other).unwrap()
        );
        assert!(cache.raw(None).unwrap().is_none());
    }
}
