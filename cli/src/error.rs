//! The command's errors, each with its exit code and, where useful, what to do next.

use std::path::PathBuf;

use handoff_host::continuation::ContinueError;
use handoff_host::PluginError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("configuration {}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    #[error("unknown target {target:?}")]
    UnknownTarget { target: String, known: Vec<String> },
    #[error("target {target:?} is not verified: {reason}")]
    NotVerified { target: String, reason: String },
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Continue(#[from] ContinueError),
    #[error("{0}")]
    Failed(String),
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    /// Whoever read stdout closed it (`| head`): the command ends quietly, with success.
    #[error("stdout was closed")]
    OutputClosed,
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::OutputClosed => 0,
            CliError::Usage(_) | CliError::Config { .. } | CliError::UnknownTarget { .. } => 2,
            // A bad path or name (a relative or empty cwd, a traversing id) is bad usage, whether
            // the plugin or the engine refused it.
            CliError::Plugin(PluginError::Path(_))
            | CliError::Continue(ContinueError::Plugin(PluginError::Path(_))) => 2,
            CliError::Continue(ContinueError::NotDroppable(_)) => 2,
            CliError::NotVerified { .. } => 3,
            _ => 1,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            CliError::UnknownTarget { known, .. } => {
                Some(format!("known targets: {}", known.join(", ")))
            }
            CliError::NotVerified { .. } => Some(
                "see `handoff targets`; certify a plugin file with `handoff certify FILE`".into(),
            ),
            CliError::Plugin(PluginError::NotCarried { feature, .. })
            | CliError::Continue(ContinueError::Plugin(PluginError::NotCarried {
                feature, ..
            })) if feature.droppable() => Some(format!(
                "to continue without it, pass --drop {feature} (every dropped item is listed in the report)"
            )),
            CliError::Continue(ContinueError::NotAPrefix { .. }) => Some(
                "nothing was written; without --into the conversation continues in its own episode on the target (or a new one)".into(),
            ),
            CliError::Continue(ContinueError::Recovery { .. }) => Some(
                "a killed run's write could not be undone automatically; the journal and the old bytes beside it are kept for you to inspect".into(),
            ),
            _ => None,
        }
    }
}
