//! What a plugin says about itself: its targets, what each carries, and the facts a host needs
//! without knowing the provider (where its store lives by default, which wire it speaks, how its
//! real CLI runs in the live tier).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::PluginError;
use handoff_dialects::Dialect;
use handoff_transcript::{Feature, Transcript};

/// What a plugin says about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The plugin name, e.g. `claude`.
    pub name: String,
    /// The plugin version (semver).
    pub version: String,
    /// Which plugin API versions it works with (a semver requirement, e.g. `^1`).
    pub api_requirement: String,
    /// The targets it offers.
    pub targets: Vec<TargetManifest>,
}

impl Manifest {
    /// The target with this name.
    pub fn target(&self, name: &str) -> Option<&TargetManifest> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// One target of a plugin: a native store and how to resume from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetManifest {
    /// The target name, e.g. `claude-code`.
    pub name: String,
    /// A CLI session store or an API request history.
    pub kind: TargetKind,
    /// The provider whose models resume this target, e.g. `anthropic`.
    pub provider: String,
    /// The parts of the canonical model it carries natively.
    pub carries: Vec<Feature>,
    /// Providers whose thinking (with its signature) this target carries; thinking from anyone else
    /// is display-only, set aside on write and by comparison.
    pub thinking_from: Vec<String>,
    /// Declarations a user should read (what is display-only, what is mapped and how).
    #[serde(default)]
    pub notes: Vec<String>,
    /// How the real CLI runs against a fake provider (CLI targets; `None` for API targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<crate::live::LiveRecipe>,
    /// Where the store lives when the user names none (the CLI's own default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_root: Option<DefaultRoot>,
    /// The wire the target's history is in: the body of an API target's resume plan, or what a
    /// CLI target's program sends to its provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
}

impl TargetManifest {
    /// A target `name` of `kind` whose sessions `provider`'s models resume, carrying `carries`:
    /// no thinking of anyone's, no notes, no live recipe, default root or dialect until the
    /// `with_` methods or the fields say so.
    pub fn new(name: &str, kind: TargetKind, provider: &str, carries: Vec<Feature>) -> Self {
        TargetManifest {
            name: name.to_owned(),
            kind,
            provider: provider.to_owned(),
            carries,
            thinking_from: Vec::new(),
            notes: Vec::new(),
            live: None,
            default_root: None,
            dialect: None,
        }
    }

    /// The same, with `note` added to its notes.
    pub fn with_note(mut self, note: &str) -> Self {
        self.notes.push(note.to_owned());
        self
    }

    /// The same, with its store at `root` when the user names none.
    pub fn with_default_root(mut self, root: DefaultRoot) -> Self {
        self.default_root = Some(root);
        self
    }

    /// Whether this target carries `feature` natively.
    pub fn carries(&self, feature: Feature) -> bool {
        self.carries.contains(&feature)
    }

    /// The comparison that applies to sessions of this target.
    pub fn comparison(&self) -> handoff_transcript::Comparison {
        handoff_transcript::Comparison::for_target(&self.thinking_from)
    }

    /// Refuses a transcript that needs a part this target does not carry, naming the event.
    pub fn check_carried(&self, transcript: &Transcript) -> Result<(), PluginError> {
        transcript
            .events
            .iter()
            .enumerate()
            .try_for_each(|(index, event)| self.check_carried_event(index, event))
    }

    /// Refuses event `index` of a transcript when it needs a part this target does not carry.
    pub fn check_carried_event(
        &self,
        index: usize,
        event: &handoff_transcript::Event,
    ) -> Result<(), PluginError> {
        match event.first_uncarried(&self.carries) {
            None => Ok(()),
            Some(feature) => Err(PluginError::NotCarried {
                target: self.name.clone(),
                index,
                event_id: event.id.clone(),
                feature,
            }),
        }
    }
}

/// The kind of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A CLI's session store, resumed by running the CLI.
    Cli,
    /// A stateless API's request history, resumed by the next request body.
    Api,
}

/// Where a target's store lives by default: the directory named by the CLI's own environment
/// variable when it is set, else `path` under `base`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultRoot {
    /// The environment variable the CLI itself honours for its store (`CODEX_HOME`, …), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// What `path` is relative to.
    pub base: RootBase,
    /// The path under `base`, e.g. `.codex`.
    pub path: String,
}

/// The base directory of a [`DefaultRoot`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootBase {
    /// The user's home directory (a CLI's own store).
    Home,
    /// handoff's data directory (`$XDG_DATA_HOME/handoff`): API histories, which no CLI keeps.
    HandoffData,
}

impl DefaultRoot {
    /// A store under HOME, with the CLI's environment override.
    pub fn home(env: Option<&str>, path: &str) -> DefaultRoot {
        DefaultRoot {
            env: env.map(str::to_owned),
            base: RootBase::Home,
            path: path.to_owned(),
        }
    }

    /// A store in handoff's data directory.
    pub fn handoff_data(path: &str) -> DefaultRoot {
        DefaultRoot {
            env: None,
            base: RootBase::HandoffData,
            path: path.to_owned(),
        }
    }

    /// The directory, given how to read the environment and the two bases (either may be
    /// unknown). An empty variable counts as unset, as the CLIs treat it.
    pub fn resolve(
        &self,
        var: impl Fn(&str) -> Option<OsString>,
        home: Option<&Path>,
        handoff_data: Option<&Path>,
    ) -> Option<PathBuf> {
        if let Some(value) = self.env.as_deref().and_then(&var).filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(value));
        }
        let base = match self.base {
            RootBase::Home => home?,
            RootBase::HandoffData => handoff_data?,
        };
        Some(base.join(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_override_wins_unless_empty() {
        let root = DefaultRoot::home(Some("CODEX_HOME"), ".codex");
        let home = Path::new("/home/u");
        let set = |v: &'static str| move |name: &str| (name == "CODEX_HOME").then(|| v.into());
        assert_eq!(
            root.resolve(set("/elsewhere"), Some(home), None),
            Some(PathBuf::from("/elsewhere"))
        );
        assert_eq!(
            root.resolve(set(""), Some(home), None),
            Some(PathBuf::from("/home/u/.codex"))
        );
        assert_eq!(root.resolve(|_| None, None, None), None);
        let api = DefaultRoot::handoff_data("openai-chat");
        assert_eq!(
            api.resolve(|_| None, Some(home), Some(Path::new("/d/handoff"))),
            Some(PathBuf::from("/d/handoff/openai-chat"))
        );
    }
}
