//! What crosses the boundary: one JSON request per call, one JSON answer.
//!
//! Requests are tagged by `method`. The host serialises from borrowed values (no clone of a large
//! transcript); the plugin deserialises into owned ones. Transcripts keep their own versioned
//! form (`"schema": "handoff.transcript/1"`); the request shapes are versioned by the capability
//! id they are sent to. The v1 shapes are frozen: they name a session by target and id, so the
//! plugin resolves it again on every call. The v2 shapes hand over the [`SessionRef`] the host
//! resolved once. The v3 ids add binary calls ([`super::binary_call`]) whose events travel in
//! batches of the form of [`super::codec`]; the v4 ids add the streamed create and the streamed
//! read of a session file.

use std::borrow::Cow;
use std::path::Path;

use serde::{Deserialize, Serialize};

use handoff_capability::{CreateOptions, PluginError, SessionRef};
use handoff_transcript::{Event, Transcript};

/// A request to `transcript.writer.v1`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum WriterRequest<'a> {
    /// [`handoff_capability::Writer::create`].
    Create {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The transcript.
        transcript: Cow<'a, Transcript>,
        /// The options.
        options: Cow<'a, CreateOptions>,
    },
    /// [`handoff_capability::Writer::append`].
    Append {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
        /// The events to append.
        events: Cow<'a, [Event]>,
    },
    /// [`handoff_capability::Writer::remove`].
    Remove {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
    },
}

/// A request to `transcript.reader.v1`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ReaderRequest<'a> {
    /// [`handoff_capability::Reader::read`].
    Read {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
    },
    /// [`handoff_capability::Reader::read`] of a [`handoff_capability::ReadFrom::File`].
    ReadPath {
        /// The target.
        target: Cow<'a, str>,
        /// The session file.
        path: Cow<'a, Path>,
    },
    /// [`handoff_capability::Reader::list`].
    List {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
    },
}

/// A request to `resume.v1`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ResumeRequest<'a> {
    /// [`handoff_capability::Resumer::resolve`].
    Resolve {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
    },
    /// [`handoff_capability::Resumer::plan`].
    Plan {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
        /// The new prompt.
        prompt: Cow<'a, str>,
    },
}

/// A request to `transcript.writer.v2`: as v1, but a session is the one the host resolved.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum WriterRequestV2<'a> {
    /// [`handoff_capability::Writer::create`].
    Create {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The transcript.
        transcript: Cow<'a, Transcript>,
        /// The options.
        options: Cow<'a, CreateOptions>,
    },
    /// [`handoff_capability::Writer::append`].
    Append {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
        /// The events to append.
        events: Cow<'a, [Event]>,
    },
    /// [`handoff_capability::Writer::remove`].
    Remove {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
    },
}

/// A request to `transcript.reader.v2`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ReaderRequestV2<'a> {
    /// [`handoff_capability::Reader::read`].
    Read {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
    },
    /// [`handoff_capability::Reader::read`] of a [`handoff_capability::ReadFrom::File`].
    ReadPath {
        /// The target.
        target: Cow<'a, str>,
        /// The session file.
        path: Cow<'a, Path>,
    },
    /// [`handoff_capability::Reader::list`].
    List {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
    },
    /// [`handoff_capability::Reader::find_owned`].
    FindOwned {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The conversation locator.
        locator: Cow<'a, str>,
    },
}

/// A request to `resume.v2`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ResumeRequestV2<'a> {
    /// [`handoff_capability::Resumer::resolve`].
    Resolve {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The session id.
        id: Cow<'a, str>,
    },
    /// [`handoff_capability::Resumer::plan`].
    Plan {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
        /// The new prompt.
        prompt: Cow<'a, str>,
    },
}

/// A binary call to `transcript.writer.v3` (inside a [`super::binary_call::Envelope`]): the plugin
/// pulls the events from the host in batches of the binary form of [`super::codec`]. `remove` is
/// v2's JSON request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum WriterRequestV3<'a> {
    /// [`handoff_capability::Writer::create`]: the events are the transcript's.
    Create {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The transcript's working directory.
        cwd: Option<Cow<'a, str>>,
        /// The options.
        options: Cow<'a, CreateOptions>,
        /// How many events the plugin will pull.
        event_count: usize,
    },
    /// [`handoff_capability::Writer::append`]: the events are the ones to append.
    Append {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
        /// How many events the plugin will pull.
        event_count: usize,
    },
}

/// A binary call to `transcript.reader.v3` (inside a [`super::binary_call::Envelope`]): the plugin
/// streams what it reads to the host in batches. `list` and `find_owned` are v2's JSON requests.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ReaderRequestV3<'a> {
    /// [`handoff_capability::Reader::read`]; answers a [`TranscriptHeader`].
    Read {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
        /// The version of the source's CLI to read as ([`handoff_capability::Reader::reading_as`]),
        /// if the host asks for one. Optional both ways: a host built before it sends none (the
        /// plugin reads as its default), and a plugin built before it ignores it (no request
        /// denies unknown members).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cli_version: Option<Cow<'a, str>>,
    },
    /// [`handoff_capability::Reader::read`] of a [`handoff_capability::ReadFrom::File`]; answers a
    /// [`TranscriptHeader`].
    ReadPath {
        /// The target.
        target: Cow<'a, str>,
        /// The session file.
        path: Cow<'a, Path>,
        /// The version of the source's CLI to read as ([`handoff_capability::Reader::reading_as`]),
        /// if the host asks for one. Optional both ways: a host built before it sends none (the
        /// plugin reads as its default), and a plugin built before it ignores it (no request
        /// denies unknown members).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cli_version: Option<Cow<'a, str>>,
    },
    /// [`handoff_capability::Reader::read_each`]: stops when the sink says so; answers `null`.
    ReadEach {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The resolved session.
        session: Cow<'a, SessionRef>,
        /// The version of the source's CLI to read as ([`handoff_capability::Reader::reading_as`]),
        /// if the host asks for one. Optional both ways: a host built before it sends none (the
        /// plugin reads as its default), and a plugin built before it ignores it (no request
        /// denies unknown members).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cli_version: Option<Cow<'a, str>>,
    },
}

/// A binary call to `transcript.writer.v4` (inside a [`super::binary_call::Envelope`]). The v4
/// object also answers v3's binary calls and v2's JSON requests.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum WriterRequestV4<'a> {
    /// [`handoff_capability::Writer::create_streamed`]: the plugin pulls the events a batch at a time as its
    /// writer takes them; answers a [`StreamedCreate`].
    CreateStreamed {
        /// The store root's path.
        root: Cow<'a, Path>,
        /// The target.
        target: Cow<'a, str>,
        /// The options. Their `cwd` is also the cwd of the transcript the plugin builds when its
        /// writer asks for the whole transcript before taking any event; without one the plugin
        /// answers [`StreamedCreate::WholeNeeded`] instead.
        options: Cow<'a, CreateOptions>,
    },
}

/// What `create_streamed` answers.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamedCreate {
    /// The session it created.
    Created(SessionRef),
    /// The writer asked for the whole transcript after it had taken events, which the plugin
    /// cannot get back: it removed what it began, and the host calls v3's `create` with the whole
    /// transcript instead.
    WholeNeeded,
}

/// A request to `transcript.reader.v4`. The v4 object also answers v3's binary calls and v2's
/// JSON requests.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ReaderRequestV4<'a> {
    /// [`handoff_capability::Reader::read_each`] of a [`handoff_capability::ReadFrom::File`], a
    /// binary call: the plugin's reader streams the events as it reads them, and stops when the
    /// host's sink says so; answers `null`.
    ReadPathEach {
        /// The target.
        target: Cow<'a, str>,
        /// The session file.
        path: Cow<'a, Path>,
        /// The version of the source's CLI to read as ([`handoff_capability::Reader::reading_as`]),
        /// if the host asks for one. Optional both ways: a host built before it sends none (the
        /// plugin reads as its default), and a plugin built before it ignores it (no request
        /// denies unknown members).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cli_version: Option<Cow<'a, str>>,
    },
    /// [`handoff_capability::Reader::cwd`] of a [`handoff_capability::ReadFrom::File`], plain JSON;
    /// answers the cwd or `null`.
    ReadPathCwd {
        /// The target.
        target: Cow<'a, str>,
        /// The session file.
        path: Cow<'a, Path>,
    },
}

/// A binary call to `transcript.reader.v5` (inside a [`super::binary_call::Envelope`]). The v5
/// object also answers v4's and v3's binary calls and v2's JSON requests.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ReaderRequestV5<'a> {
    /// [`handoff_capability::Reader::read_each`] of a [`handoff_capability::ReadFrom::Written`]:
    /// the plugin's reader streams the events of `file` as it reads them, and at the end of what is
    /// written so far pulls the file's growth ([`super::growth`]); answers whether it read the file
    /// (`false`: its reader reads whole files only).
    ReadWrittenEach {
        /// The target.
        target: Cow<'a, str>,
        /// A path that opens the file being written (`/proc/self/fd/N` of a host's handle: the
        /// writer may rename the file meanwhile).
        file: Cow<'a, Path>,
        /// The file's name for errors.
        name: Cow<'a, Path>,
    },
}

/// What a streamed read answers besides its events: the rest of the transcript.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TranscriptHeader {
    /// The transcript's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

macro_rules! method_names {
    ($ty:ident { $($variant:ident => $name:literal),* $(,)? }) => {
        impl $ty<'_> {
            /// The method name, for error messages.
            pub fn method(&self) -> &'static str {
                match self { $($ty::$variant { .. } => $name),* }
            }
        }
    };
}
method_names!(WriterRequest { Create => "create", Append => "append", Remove => "remove" });
method_names!(ReaderRequest { Read => "read", ReadPath => "read_path", List => "list" });
method_names!(ResumeRequest { Resolve => "resolve", Plan => "plan" });
method_names!(WriterRequestV2 { Create => "create", Append => "append", Remove => "remove" });
method_names!(ReaderRequestV2 { Read => "read", ReadPath => "read_path", List => "list", FindOwned => "find_owned" });
method_names!(ResumeRequestV2 { Resolve => "resolve", Plan => "plan" });
method_names!(WriterRequestV3 { Create => "create", Append => "append" });
impl ReaderRequestV3<'_> {
    /// The version of the source's CLI the host asks the read to read as, if any.
    pub fn cli_version(&self) -> Option<&str> {
        match self {
            ReaderRequestV3::Read { cli_version, .. }
            | ReaderRequestV3::ReadPath { cli_version, .. }
            | ReaderRequestV3::ReadEach { cli_version, .. } => cli_version.as_deref(),
        }
    }
}

method_names!(ReaderRequestV3 { Read => "read", ReadPath => "read_path", ReadEach => "read_each" });
method_names!(WriterRequestV4 { CreateStreamed => "create_streamed" });
method_names!(ReaderRequestV4 { ReadPathEach => "read_path_each", ReadPathCwd => "read_path_cwd" });
method_names!(ReaderRequestV5 { ReadWrittenEach => "read_written_each" });

/// Serialises a plugin error for the `Err` side of an answer. Never fails: a [`PluginError`] is
/// plain data.
pub fn encode_error(error: &PluginError) -> String {
    serde_json::to_string(error)
        .unwrap_or_else(|e| format!(r#"{{"kind":"other","0":"unserialisable plugin error: {e}"}}"#))
}

/// Reads the `Err` side of an answer back into a [`PluginError`]; anything unreadable becomes
/// [`PluginError::Other`] naming the plugin and method.
pub fn decode_error(plugin: &str, method: &str, json: &str) -> PluginError {
    serde_json::from_str(json).unwrap_or_else(|e| {
        PluginError::Other(format!(
            "plugin {plugin} answered {method} with an unreadable error ({e}): {}",
            truncate(json, 200)
        ))
    })
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_round_trip_and_garbage_is_named() {
        let e = PluginError::Panicked {
            plugin: "p".into(),
            method: "create".into(),
            message: "boom".into(),
        };
        assert_eq!(decode_error("p", "create", &encode_error(&e)), e);
        let garbage = decode_error("p", "read", "not json");
        assert!(
            garbage.to_string().contains("plugin p answered read"),
            "{garbage}"
        );
    }

    #[test]
    fn requests_borrow_on_the_way_out_and_own_on_the_way_in() {
        let request = WriterRequest::Remove {
            root: Cow::Borrowed(Path::new("/tmp/x")),
            target: Cow::Borrowed("t"),
            id: Cow::Borrowed("abc"),
        };
        let json = serde_json::to_string(&request).unwrap();
        assert!(json.contains(r#""method":"remove""#), "{json}");
        let back: WriterRequest<'static> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.method(), "remove");
    }

    /// serde_json's `arbitrary_precision` cannot read some numbers back through an internally
    /// tagged enum; everything that crosses the boundary must survive it.
    #[test]
    fn numbers_survive_the_tagged_forms_that_cross() {
        use handoff_capability::ResumePlan;
        let error = PluginError::NotCarried {
            target: "t".into(),
            index: 3,
            event_id: "e3".into(),
            feature: handoff_transcript::Feature::Image,
        };
        assert_eq!(decode_error("p", "create", &encode_error(&error)), error);

        let plan = ResumePlan::Request {
            dialect: handoff_dialects::Dialect::AnthropicMessages,
            body: serde_json::json!({"max_tokens": 1024, "temperature": 0.25, "big": 18446744073709551615u64}),
        };
        let back: ResumePlan =
            serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(back, plan);

        let transcript: Transcript = serde_json::from_str(&format!(
            r#"{{"schema": "{}", "events": [{{"id": "a1", "timestamp": "2023-11-14T22:13:20.123Z",
                "body": {{"type": "assistant", "content": [{{"type": "tool_call", "id": "c1",
                "name": "f", "arguments": {{"n": 123456789012345678901234567890, "x": 1.5e300,
                "y": 0.1, "z": null}}}}]}}}}]}}"#,
            handoff_transcript::SCHEMA
        ))
        .unwrap();
        let request = WriterRequest::Create {
            root: Cow::Borrowed(Path::new("/store")),
            target: Cow::Borrowed("t"),
            transcript: Cow::Borrowed(&transcript),
            options: Cow::Owned(CreateOptions::default()),
        };
        let json = serde_json::to_string(&request).unwrap();
        let WriterRequest::Create {
            transcript: back, ..
        } = serde_json::from_str::<WriterRequest<'static>>(&json).unwrap()
        else {
            panic!("not a create")
        };
        assert_eq!(back.as_ref(), &transcript);
    }

    #[test]
    fn every_plugin_error_crosses_intact() {
        use handoff_store::PathError;
        let errors = vec![
            PluginError::UnknownTarget { target: "t".into() },
            PluginError::NotFound {
                target: "t".into(),
                id: "x".into(),
                searched: "/s".into(),
            },
            PluginError::InvalidTranscript("event 2: no id".into()),
            PluginError::NotOwned { path: "/p".into() },
            PluginError::Malformed {
                file: "/f".into(),
                line: Some(3),
                field: Some("message.content".into()),
                message: "not a string".into(),
            },
            PluginError::Path(PathError::BadName {
                what: "session id".into(),
                value: "../x".into(),
                reason: "it contains a path separator".into(),
            }),
            PluginError::Io {
                path: "/p".into(),
                message: "denied".into(),
            },
            PluginError::Locked { path: "/p".into() },
            PluginError::Other("anything else".into()),
        ];
        for error in errors {
            let json = encode_error(&error);
            assert_eq!(decode_error("p", "m", &json), error, "{json}");
        }
    }

    /// `cli_version` is optional both ways: a plugin built before it (its request types as they
    /// were, mirrored here) reads a request that carries it and ignores it; a plugin built after
    /// it reads a request of a host built before it as asking for no version; and a host asks
    /// for none without it, byte for byte as before.
    #[test]
    fn the_cli_version_of_a_read_is_optional_both_ways() {
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(tag = "method", rename_all = "snake_case")]
        enum BeforeV4 {
            ReadPathEach {
                target: String,
                path: std::path::PathBuf,
            },
        }
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(tag = "method", rename_all = "snake_case")]
        enum BeforeV3 {
            ReadEach {
                root: std::path::PathBuf,
                session: SessionRef,
            },
        }
        let path = Path::new("/s/a.jsonl");
        let asked = ReaderRequestV4::ReadPathEach {
            target: Cow::Borrowed("claude-code"),
            path: Cow::Borrowed(path),
            cli_version: Some(Cow::Borrowed("2.1.197")),
        };
        let json = serde_json::to_string(&asked).unwrap();
        assert!(json.contains(r#""cli_version":"2.1.197""#), "{json}");
        assert_eq!(
            serde_json::from_str::<BeforeV4>(&json).unwrap(),
            BeforeV4::ReadPathEach {
                target: "claude-code".into(),
                path: path.into()
            }
        );
        let session = SessionRef {
            target: "claude-code".into(),
            id: "a".into(),
            path: path.into(),
        };
        let asked = ReaderRequestV3::ReadEach {
            root: Cow::Borrowed(Path::new("/s")),
            session: Cow::Borrowed(&session),
            cli_version: Some(Cow::Borrowed("2.1.197")),
        };
        let json = serde_json::to_string(&asked).unwrap();
        assert!(matches!(
            serde_json::from_str::<BeforeV3>(&json).unwrap(),
            BeforeV3::ReadEach { session: s, .. } if s == session
        ));

        // A host built before it: the request as it sent it, read as asking for no version.
        let before = r#"{"method":"read_path_each","target":"claude-code","path":"/s/a.jsonl"}"#;
        match serde_json::from_str::<ReaderRequestV4<'static>>(before).unwrap() {
            ReaderRequestV4::ReadPathEach { cli_version, .. } => assert_eq!(cli_version, None),
            other => panic!("{other:?}"),
        }
        let before = r#"{"method":"read_path","target":"claude-code","path":"/s/a.jsonl"}"#;
        match serde_json::from_str::<ReaderRequestV3<'static>>(before).unwrap() {
            ReaderRequestV3::ReadPath { cli_version, .. } => assert_eq!(cli_version, None),
            other => panic!("{other:?}"),
        }
        // Asking for none sends what a host built before it sent.
        let unasked = ReaderRequestV4::ReadPathEach {
            target: Cow::Borrowed("claude-code"),
            path: Cow::Borrowed(path),
            cli_version: None,
        };
        assert_eq!(
            serde_json::to_string(&unasked).unwrap(),
            r#"{"method":"read_path_each","target":"claude-code","path":"/s/a.jsonl"}"#
        );
    }
}
