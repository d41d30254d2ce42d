//! Why a plugin call failed: [`PluginError`], plain data that crosses the plugin boundary intact.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use handoff_store::{CreateError, PathError};
use handoff_transcript::Feature;

/// Why a plugin call failed. Plain data, so it crosses the plugin boundary intact.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
// Adjacently tagged: an internally tagged enum cannot serialise its newtype variants (`Other`,
// `InvalidTranscript`, `Path`), and every variant must cross the plugin boundary.
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum PluginError {
    /// The plugin does not offer this target.
    #[error("unknown target {target:?}")]
    UnknownTarget {
        /// The name asked for.
        target: String,
    },
    /// No session with this id exists in the store.
    #[error("{target}: no session with id {id:?} under {}", searched.display())]
    NotFound {
        /// The target.
        target: String,
        /// The id asked for.
        id: String,
        /// Where it looked.
        searched: PathBuf,
    },
    /// The transcript needs a part the target does not carry natively.
    #[error(
        "{target} cannot carry event {index} ({event_id}): it has {feature}, which {target} does not carry natively"
    )]
    NotCarried {
        /// The target.
        target: String,
        /// Index of the first event that needs it.
        index: usize,
        /// Its id.
        event_id: String,
        /// The missing part.
        feature: Feature,
    },
    /// The transcript is not valid.
    #[error("invalid transcript: {0}")]
    InvalidTranscript(String),
    /// The session exists but this plugin did not create it, so it will not change or remove it.
    #[error("{} was not created by this plugin; refusing to change it", path.display())]
    NotOwned {
        /// The session file.
        path: PathBuf,
    },
    /// A native file is malformed.
    #[error("{}{}: {}{message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), field.as_ref().map(|f| format!("{f}: ")).unwrap_or_default())]
    Malformed {
        /// The file.
        file: PathBuf,
        /// The 1-based line, for line-oriented formats.
        line: Option<usize>,
        /// The field, where one is at fault.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A path would leave the store root or is not a valid name.
    #[error(transparent)]
    Path(#[from] PathError),
    /// An I/O error.
    #[error("{}: {message}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// Another writer holds the session.
    #[error("{} is locked by another writer", path.display())]
    Locked {
        /// The locked path.
        path: PathBuf,
    },
    /// The plugin panicked; the host caught it.
    #[error("plugin {plugin} panicked in {method}: {message}")]
    Panicked {
        /// The plugin.
        plugin: String,
        /// The method.
        method: String,
        /// The panic message.
        message: String,
    },
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// What a caught panic says: its message, or `(no message)` for a payload that is not text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

impl PluginError {
    /// `plugin` panicked in `method` and the caller caught it: `payload` is what
    /// `catch_unwind` returned.
    pub fn panicked(plugin: &str, method: &str, payload: &(dyn std::any::Any + Send)) -> Self {
        PluginError::Panicked {
            plugin: plugin.to_owned(),
            method: method.to_owned(),
            message: panic_message(payload),
        }
    }

    /// An I/O error at `path`.
    pub fn io(path: &Path, error: &std::io::Error) -> Self {
        PluginError::Io {
            path: path.to_owned(),
            message: error.to_string(),
        }
    }

    /// A malformed line of a line-oriented file.
    pub fn malformed_line(
        file: &Path,
        line: usize,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        PluginError::Malformed {
            file: file.to_owned(),
            line: Some(line),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl PluginError {
    /// A transcript read from `file` that breaks the transcript's rules
    /// ([`handoff_transcript::Transcript::validate`]): malformed, naming the field at fault.
    pub fn invalid_in(file: &Path, e: &handoff_transcript::ValidationError) -> Self {
        PluginError::Malformed {
            file: file.to_owned(),
            line: None,
            field: Some(e.field.clone()),
            message: e.to_string(),
        }
    }
}

impl From<handoff_transcript::ValidationError> for PluginError {
    fn from(e: handoff_transcript::ValidationError) -> Self {
        PluginError::InvalidTranscript(e.to_string())
    }
}

impl From<CreateError> for PluginError {
    fn from(e: CreateError) -> Self {
        match e {
            CreateError::Path(e) => PluginError::Path(e),
            CreateError::Io { path, source } => PluginError::io(&path, &source),
        }
    }
}
