//! The rollout records this plugin writes and reads, as typed serde structs.
//!
//! Every line is `{"timestamp", "type", "payload"}`. Write-side structs borrow from the canonical
//! transcript so a large session is serialised without copying it; read-side structs are flat
//! (every field optional) so a missing field becomes an error that names it, not a serde message.

use std::borrow::Cow;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{Author, Origin};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The Codex version whose format this plugin writes.
pub const CLI_VERSION: &str = "0.171.0";
/// The originator the interactive Codex CLI writes (`codex resume` lists it).
pub const ORIGINATOR: &str = "codex_cli_rs";
/// The session source of the interactive CLI; the picker shows only `cli` and `vscode`.
pub const SOURCE: &str = "cli";
/// The model provider Codex uses when its config names none.
pub const DEFAULT_MODEL_PROVIDER: &str = "openai";

/// One line: `{"timestamp":…,"type":…,"payload":…}`.
#[derive(Serialize)]
pub struct LineOut<'a, P> {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: &'a str,
    /// The record type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The record.
    pub payload: P,
}

/// The first line of every rollout.
#[derive(Serialize)]
pub struct SessionMetaOut<'a> {
    pub id: &'a str,
    pub timestamp: &'a str,
    pub cwd: &'a str,
    pub originator: &'static str,
    pub cli_version: &'static str,
    pub source: &'static str,
    pub model_provider: &'a str,
    /// The ownership marker (`x-handoff`); Codex ignores unknown members.
    #[serde(rename = "x-handoff")]
    pub marker: &'a OwnershipMarker,
}

/// The per-turn settings record Codex writes before a turn's items.
#[derive(Serialize)]
pub struct TurnContextOut<'a> {
    pub turn_id: &'a str,
    pub cwd: &'a str,
    pub approval_policy: &'static str,
    pub sandbox_policy: SandboxPolicyOut,
    pub model: &'a str,
    pub summary: &'static str,
}

/// `{"type":"read-only"}`.
#[derive(Serialize)]
pub struct SandboxPolicyOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// The `event_msg` records this plugin writes (the ones Codex needs to list and draw a session).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsgOut<'a> {
    /// A turn begins.
    TaskStarted {
        turn_id: &'a str,
        model_context_window: Option<u64>,
        collaboration_mode_kind: &'static str,
    },
    /// What the user typed (the listing needs one of these).
    UserMessage {
        message: Cow<'a, str>,
        images: Vec<String>,
        local_images: [(); 0],
        text_elements: [(); 0],
    },
    /// What the assistant said.
    AgentMessage { message: Cow<'a, str> },
    /// A turn ends.
    TaskComplete {
        turn_id: &'a str,
        last_agent_message: Option<Cow<'a, str>>,
    },
}

/// Canonical fields Codex has no place for, carried on each `response_item` / `compacted` payload
/// under the member `x-handoff-event`. Codex ignores the member and never sends it to the model.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct EventTag {
    /// The canonical event id; items with the same id form one event.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The tool result failed (Codex has no error flag on `function_call_output`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For `compacted`: the id of the last event the summary replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces_through: Option<String>,
    /// For `reasoning`: the model that made the encrypted content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_model: Option<String>,
    /// For `reasoning`: the reasoning is hidden and only the encrypted content carries it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// The write-side view of an [`EventTag`].
#[derive(Serialize)]
pub struct EventTagOut<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<&'a Author>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a Origin>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces_through: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_model: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// A `response_item` payload.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemOut<'a> {
    Message {
        role: &'static str,
        content: Vec<ContentOut<'a>>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    Reasoning {
        summary: Vec<SummaryOut<'a>>,
        encrypted_content: Option<&'a str>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    FunctionCall {
        name: &'a str,
        /// The arguments as a JSON-encoded string, as the Responses API has them.
        arguments: String,
        call_id: &'a str,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: OutputOut<'a>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
}

/// A content item of a message or a tool output.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentOut<'a> {
    InputText { text: &'a str },
    OutputText { text: &'a str },
    InputImage { image_url: Cow<'a, str> },
}

/// `{"type":"summary_text","text":…}`.
#[derive(Serialize)]
pub struct SummaryOut<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: &'a str,
}

/// A tool output: a plain string, or content items (several parts, images, or none).
#[derive(Serialize)]
#[serde(untagged)]
pub enum OutputOut<'a> {
    Text(&'a str),
    Items(Vec<ContentOut<'a>>),
}

/// A `compacted` payload.
#[derive(Serialize)]
pub struct CompactedOut<'a> {
    pub message: &'a str,
    pub replacement_history: Vec<Box<RawValue>>,
    #[serde(rename = "x-handoff-event")]
    pub tag: EventTagOut<'a>,
}

// ---------------------------------------------------------------------------------------------
// Read side.

/// A line with its payload left raw until its type is known.
#[derive(Deserialize)]
pub struct LineIn<'a> {
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub payload: Option<&'a RawValue>,
}

/// The fields of `session_meta` this plugin reads.
#[derive(Deserialize)]
pub struct SessionMetaIn {
    pub id: Option<String>,
    pub cwd: Option<String>,
    pub model_provider: Option<String>,
    #[serde(rename = "x-handoff")]
    pub marker: Option<serde_json::Value>,
}

/// The fields of `turn_context` this plugin reads.
#[derive(Deserialize)]
pub struct TurnContextIn {
    pub model: Option<String>,
}

/// A `response_item` payload, flat: which fields must be present depends on `type`.
#[derive(Deserialize)]
pub struct ItemIn<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    pub id: Option<String>,
    #[serde(borrow)]
    pub role: Option<Cow<'a, str>>,
    pub content: Option<Vec<ContentIn>>,
    pub summary: Option<Vec<ContentIn>>,
    pub encrypted_content: Option<String>,
    pub name: Option<String>,
    pub arguments: Option<String>,
    /// `custom_tool_call` input (a freeform string).
    pub input: Option<String>,
    pub call_id: Option<String>,
    pub output: Option<OutputIn>,
    /// Present on items the CLI wrote itself; tells harness-injected context from user text.
    pub internal_chat_message_metadata_passthrough: Option<PassthroughIn>,
    #[serde(rename = "x-handoff-event")]
    pub tag: Option<EventTag>,
}

/// A content item as read.
#[derive(Deserialize)]
pub struct ContentIn {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub text: Option<String>,
    pub image_url: Option<String>,
}

/// A tool output as read.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum OutputIn {
    Text(String),
    Items(Vec<ContentIn>),
}

/// The CLI's own metadata on an item.
#[derive(Deserialize)]
pub struct PassthroughIn {
    #[serde(default)]
    pub content_item_kinds: Vec<String>,
    #[serde(default)]
    pub content_item_metadata: Vec<ContentItemMetadataIn>,
}

/// Per content item metadata.
#[derive(Deserialize)]
pub struct ContentItemMetadataIn {
    pub provenance: Option<ProvenanceIn>,
}

/// Who put a content item there.
#[derive(Deserialize)]
pub struct ProvenanceIn {
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// The fields of an `event_msg` this plugin reads (only failed items matter).
#[derive(Deserialize)]
pub struct EventMsgIn<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    pub item: Option<EventItemIn>,
}

/// `item_completed.item`.
#[derive(Deserialize)]
pub struct EventItemIn {
    pub id: Option<String>,
    pub status: Option<String>,
}

/// A `compacted` payload as read.
#[derive(Deserialize)]
pub struct CompactedIn {
    pub message: Option<String>,
    #[serde(rename = "x-handoff-event")]
    pub tag: Option<EventTag>,
}
