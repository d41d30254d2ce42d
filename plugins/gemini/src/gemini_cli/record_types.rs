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
    /// Always `[]`: thought summaries would be sent for a message without call or thought parts.
    pub thoughts: [(); 0],
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
    pub args: &'a Value,
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
}

impl Extras<'_> {
    pub fn is_empty(&self) -> bool {
        self.id.is_none()
            && self.author.is_none()
            && self.origin.is_none()
            && self.signature_models.is_empty()
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
    pub args: &'a Value,
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
