//! The serde types of the records the writer produces, borrowing from the transcript (no JSON
//! value tree is built on the write path).

use handoff_sdk::serde_json::Value;
use handoff_sdk::{Author, Origin, ToolCall};
use serde::Serialize;

/// One line the writer appends.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Rec<'a> {
    User(UserRec<'a>),
    Gemini(GeminiRec<'a>),
    /// A record already in the file, written again (results added to its calls).
    Raw(Value),
    /// `{"$set": {"lastUpdated": …}}`.
    Set(SetRec),
}

#[derive(Serialize)]
pub(crate) struct SetRec {
    #[serde(rename = "$set")]
    pub set: LastUpdated,
}

#[derive(Serialize)]
pub(crate) struct LastUpdated {
    #[serde(rename = "lastUpdated")]
    pub last_updated: String,
}

/// A `user` message.
#[derive(Serialize)]
pub(crate) struct UserRec<'a> {
    pub id: &'a str,
    pub timestamp: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub content: Vec<WPart<'a>>,
    #[serde(rename = "x-handoff-event", skip_serializing_if = "Extras::is_empty")]
    pub extras: Extras<'a>,
}

/// A `gemini` message (modern: the calls are in `content`).
#[derive(Serialize)]
pub(crate) struct GeminiRec<'a> {
    pub id: &'a str,
    pub timestamp: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub content: Vec<WPart<'a>>,
    /// The thought summaries a Gemini CLI session had (`opaque["gemini-cli"].thoughts`), else
    /// `[]`. The CLI never sends them to the model (it strips thought parts from requests).
    pub thoughts: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    #[serde(rename = "x-handoff-event", skip_serializing_if = "Extras::is_empty")]
    pub extras: Extras<'a>,
    #[serde(rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRec<'a>>,
    /// The calls of `content`, borrowed, for their results (not written).
    #[serde(skip)]
    pub calls: Vec<&'a ToolCall>,
}

/// A `toolCalls` entry: the call and its result.
#[derive(Serialize)]
pub(crate) struct ToolCallRec<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub args: std::borrow::Cow<'a, Value>,
    pub result: [WPart<'a>; 1],
    pub status: &'static str,
    pub timestamp: String,
    #[serde(rename = "x-handoff-event")]
    pub extras: Extras<'a>,
}

/// `x-handoff-event`.
#[derive(Default, Serialize)]
pub(crate) struct Extras<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<&'a Author>,
    /// `Some(None)` is written as `null`: the event had no origin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Option<&'a Origin>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signature_models: Vec<Option<&'a str>>,
    /// Which of the message's calls (counted in order, from 0) are freeform: their `args` are
    /// `{"input": <text>}` (Gemini's function calls take JSON objects only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freeform_calls: Vec<usize>,
}

impl Extras<'_> {
    pub fn is_empty(&self) -> bool {
        self.id.is_none()
            && self.author.is_none()
            && self.origin.is_none()
            && self.signature_models.is_empty()
            && self.freeform_calls.is_empty()
    }
}

/// A Gemini part.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum WPart<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought: Option<bool>,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    Inline {
        #[serde(rename = "inlineData")]
        inline: Inline<'a>,
    },
    File {
        #[serde(rename = "fileData")]
        file: FileRef<'a>,
    },
    Call {
        #[serde(rename = "functionCall")]
        call: CallRef<'a>,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    Response {
        #[serde(rename = "functionResponse")]
        response: ResponseRef<'a>,
    },
    /// A part kept verbatim (a thought part of a Gemini CLI session, from its opaque fields).
    Verbatim(&'a Value),
}

#[derive(Serialize)]
pub(crate) struct Inline<'a> {
    #[serde(rename = "mimeType")]
    pub mime_type: &'a str,
    pub data: String,
}

#[derive(Serialize)]
pub(crate) struct FileRef<'a> {
    #[serde(rename = "fileUri")]
    pub file_uri: &'a str,
}

#[derive(Serialize)]
pub(crate) struct CallRef<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// A freeform call's structured form, `{"input": <text>}`.
    pub args: std::borrow::Cow<'a, Value>,
}

#[derive(Serialize)]
pub(crate) struct ResponseRef<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub response: ResponseBody<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<WPart<'a>>,
}

/// `{"output": …}` or `{"error": …}`.
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ResponseBody<'a> {
    Output(Texts<'a>),
    Error(Texts<'a>),
}

/// `""`, one string, or several.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Texts<'a> {
    One(&'a str),
    Many(Vec<&'a str>),
}

// ---- What the reader reads -----------------------------------------------------------------

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A message record as read: a message line, or an element of a list line (`$set.messages`, a
/// metadata line's `messages`, a legacy record's). Members of no message are skipped.
#[derive(Deserialize)]
pub(crate) struct LineIn {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub content: ContentIn,
    #[serde(default, rename = "toolCalls")]
    pub tool_calls: Option<Vec<ToolCallIn>>,
    #[serde(default)]
    pub thoughts: Option<Vec<Value>>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, rename = "x-handoff-event")]
    pub extras: Option<Value>,
}

impl LineIn {
    /// The message this record is, when its `id` is a string.
    pub fn into_message(self) -> Option<(String, MessageBody)> {
        match self.id {
            Some(Value::String(id)) => Some((
                id,
                MessageBody {
                    timestamp: self.timestamp,
                    kind: self.kind,
                    content: self.content,
                    tool_calls: self.tool_calls.unwrap_or_default(),
                    thoughts: self.thoughts.unwrap_or_default(),
                    model: self.model,
                    extras: self.extras,
                },
            )),
            _ => None,
        }
    }
}

/// A message's members other than its id.
#[derive(Clone, Default)]
pub(crate) struct MessageBody {
    pub timestamp: Option<String>,
    pub kind: Option<String>,
    pub content: ContentIn,
    pub tool_calls: Vec<ToolCallIn>,
    /// Thought summaries, verbatim (the CLI never sends them to the model).
    pub thoughts: Vec<Value>,
    pub model: Option<String>,
    pub extras: Option<Value>,
}

/// A `PartListUnion`: nothing, a string, one part, or a list of parts and strings.
#[derive(Clone, Default)]
pub(crate) enum ContentIn {
    #[default]
    None,
    Text(String),
    Parts(Vec<PartIn>),
}

impl ContentIn {
    /// As a list of parts (a string is one text part).
    pub fn into_parts(self) -> Vec<PartIn> {
        match self {
            ContentIn::None => Vec::new(),
            ContentIn::Text(text) => vec![PartIn {
                text: Some(text),
                ..PartIn::default()
            }],
            ContentIn::Parts(parts) => parts,
        }
    }

    /// JavaScript truthiness (`""` and `null` are false; any list is true).
    pub fn truthy(&self) -> bool {
        match self {
            ContentIn::None => false,
            ContentIn::Text(t) => !t.is_empty(),
            ContentIn::Parts(_) => true,
        }
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = ContentIn;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, a part or a list of parts")
    }
    fn visit_unit<E: de::Error>(self) -> Result<ContentIn, E> {
        Ok(ContentIn::None)
    }
    fn visit_none<E: de::Error>(self) -> Result<ContentIn, E> {
        Ok(ContentIn::None)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ContentIn, E> {
        Ok(ContentIn::Text(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<ContentIn, E> {
        Ok(ContentIn::Text(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ContentIn, A::Error> {
        let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(PartElem(p)) = seq.next_element()? {
            parts.push(p);
        }
        Ok(ContentIn::Parts(parts))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ContentIn, A::Error> {
        Ok(ContentIn::Parts(vec![PartIn::deserialize(
            de::value::MapAccessDeserializer::new(map),
        )?]))
    }
}

impl<'de> Deserialize<'de> for ContentIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

/// An element of a part list: a part, or a string (a text part).
struct PartElem(PartIn);

struct PartElemVisitor;

impl<'de> Visitor<'de> for PartElemVisitor {
    type Value = PartElem;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a part or a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PartElem, E> {
        Ok(PartElem(PartIn {
            text: Some(v.to_owned()),
            ..PartIn::default()
        }))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<PartElem, E> {
        Ok(PartElem(PartIn {
            text: Some(v),
            ..PartIn::default()
        }))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<PartElem, A::Error> {
        PartIn::deserialize(de::value::MapAccessDeserializer::new(map)).map(PartElem)
    }
}

impl<'de> Deserialize<'de> for PartElem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartElemVisitor)
    }
}

/// A Gemini part as read.
#[derive(Clone, Default, Deserialize)]
pub(crate) struct PartIn {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub thought: Option<Value>,
    #[serde(default, rename = "thoughtSignature")]
    pub signature: Option<String>,
    #[serde(default, rename = "inlineData")]
    pub inline: Option<InlineIn>,
    #[serde(default, rename = "fileData")]
    pub file: Option<FileIn>,
    #[serde(default, rename = "functionCall")]
    pub call: Option<CallIn>,
    #[serde(default, rename = "functionResponse")]
    pub response: Option<ResponseIn>,
    #[serde(default, rename = "videoMetadata")]
    pub video: Option<Value>,
    #[serde(default, rename = "executableCode")]
    pub code: Option<Value>,
    #[serde(default, rename = "codeExecutionResult")]
    pub code_result: Option<Value>,
}

impl PartIn {
    /// A thought part as the session held it: its text, `thought` and signature.
    pub fn thought_part(self) -> Value {
        let mut part = handoff_sdk::serde_json::Map::new();
        if let Some(text) = self.text {
            part.insert("text".into(), Value::String(text));
        }
        if let Some(thought) = self.thought {
            part.insert("thought".into(), thought);
        }
        if let Some(signature) = self.signature {
            part.insert("thoughtSignature".into(), Value::String(signature));
        }
        Value::Object(part)
    }
}

#[derive(Clone, Default, Deserialize)]
pub(crate) struct InlineIn {
    #[serde(default, rename = "mimeType")]
    pub mime_type: Option<String>,
    #[serde(default)]
    pub data: Option<String>,
}

#[derive(Clone, Default, Deserialize)]
pub(crate) struct FileIn {
    #[serde(default, rename = "fileUri")]
    pub file_uri: Option<String>,
}

#[derive(Clone, Default, Deserialize)]
pub(crate) struct CallIn {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub args: Option<Value>,
}

#[derive(Clone, Default, Deserialize)]
pub(crate) struct ResponseIn {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub response: Option<Value>,
    #[serde(default)]
    pub parts: Option<Vec<PartIn>>,
}

/// A `toolCalls` entry as read.
#[derive(Clone, Default, Deserialize)]
pub(crate) struct ToolCallIn {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default)]
    pub result: ContentIn,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default, rename = "x-handoff-event")]
    pub extras: Option<Value>,
}
