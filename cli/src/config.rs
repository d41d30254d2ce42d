//! Configuration: plugin directories, store roots per target, the certificate directory.
//!
//! ```toml
//! plugin_dirs = ["/opt/handoff/plugins"]
//! certificate_dir = "/var/cache/handoff/certificates"
//! [store_roots]
//! claude-code = "/home/me/.claude"
//! ```
//!
//! Default store roots are the user's real ones (`~/.claude`, `~/.codex`, …) and are used only
//! when a command does not name `--store-root`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use handoff_host::{StoreRoot, TargetManifest};
use serde::Deserialize;

use crate::error::CliError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Directories whose `*.so` files are plugins.
    #[serde(default)]
    pub plugin_dirs: Vec<PathBuf>,
    /// Where certificates are kept.
    pub certificate_dir: Option<PathBuf>,
    /// Store roots by target name.
    #[serde(default)]
    pub store_roots: BTreeMap<String, PathBuf>,
}

impl Config {
    /// Reads `explicit`, or the default file if it exists, or nothing.
    pub fn load(explicit: Option<&Path>) -> Result<Config, CliError> {
        let path = match explicit {
            Some(p) => p.to_owned(),
            None => match config_home().map(|d| d.join("handoff").join("config.toml")) {
                Some(p) if p.is_file() => p,
                _ => return Ok(Config::default()),
            },
        };
        let text = std::fs::read_to_string(&path).map_err(|e| CliError::Config {
            path: path.clone(),
            message: e.to_string(),
        })?;
        toml::from_str(&text).map_err(|e| CliError::Config {
            path,
            message: e.to_string(),
        })
    }

    /// The store root for `target`: `--store-root`, else the configuration, else the default its
    /// plugin declares.
    pub fn store_root(
        &self,
        target: &TargetManifest,
        explicit: Option<&Path>,
    ) -> Result<StoreRoot, CliError> {
        let path = match explicit {
            Some(p) => absolute(p)?,
            None => match self.store_roots.get(&target.name) {
                Some(p) => p.clone(),
                None => default_store_root(target).ok_or_else(|| {
                    let target = &target.name;
                    CliError::Usage(format!(
                        "no store root for target {target:?}: pass --store-root DIR or set store_roots.{target} in the configuration"
                    ))
                })?,
            },
        };
        StoreRoot::new(path).map_err(|e| CliError::Usage(e.to_string()))
    }

    /// Where certificates live, one place per user whatever the store root, so a plugin
    /// certified once is offered to every command: `$HANDOFF_CERT_DIR` (which the `conformance`
    /// binary honours too), else the configuration's `certificate_dir`, else
    /// `$XDG_DATA_HOME/handoff/certificates`.
    pub fn certificate_dir(&self) -> Result<PathBuf, CliError> {
        if let Some(dir) = std::env::var_os("HANDOFF_CERT_DIR").filter(|d| !d.is_empty()) {
            return absolute(Path::new(&dir));
        }
        if let Some(dir) = &self.certificate_dir {
            return Ok(dir.clone());
        }
        data_home()
            .map(|d| d.join("handoff").join("certificates"))
            .ok_or_else(|| {
                CliError::Usage(
                    "no HOME: set HANDOFF_CERT_DIR or certificate_dir in the configuration".into(),
                )
            })
    }
}

pub fn absolute(path: &Path) -> Result<PathBuf, CliError> {
    std::path::absolute(path).map_err(|e| CliError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn xdg(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(fallback)))
}

fn config_home() -> Option<PathBuf> {
    xdg("XDG_CONFIG_HOME", ".config")
}

fn data_home() -> Option<PathBuf> {
    xdg("XDG_DATA_HOME", ".local/share")
}

/// The store the target's plugin declares as its default (the real CLI's own, honouring its
/// environment override; API histories in handoff's data directory).
fn default_store_root(target: &TargetManifest) -> Option<PathBuf> {
    target.default_root.as_ref()?.resolve(
        |var| std::env::var_os(var),
        home().as_deref(),
        data_home().map(|d| d.join("handoff")).as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "plugin_dir = []\n").unwrap();
        let err = Config::load(Some(&path)).unwrap_err();
        assert!(err.to_string().contains("c.toml"), "{err}");
        assert!(err.to_string().contains("plugin_dir"), "{err}");
    }

    #[test]
    fn explicit_store_root_wins_and_must_not_be_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        let codex = target("codex");
        let root = config.store_root(&codex, Some(dir.path())).unwrap();
        assert_eq!(root.path(), dir.path());
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let err = config.store_root(&codex, Some(&file)).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    fn target(name: &str) -> TargetManifest {
        serde_json::from_value(serde_json::json!({
            "name": name, "kind": "cli", "provider": "p", "carries": [], "thinking_from": []
        }))
        .unwrap()
    }

    #[test]
    fn a_target_without_a_default_root_needs_one_named() {
        let err = Config::default()
            .store_root(&target("somewhere"), None)
            .unwrap_err();
        assert!(err.to_string().contains("--store-root"), "{err}");
    }

    #[test]
    fn the_configured_certificate_dir_does_not_follow_the_store_root() {
        let config = Config {
            certificate_dir: Some(PathBuf::from("/var/lib/handoff/certificates")),
            ..Config::default()
        };
        if std::env::var_os("HANDOFF_CERT_DIR").is_none() {
            assert_eq!(
                config.certificate_dir().unwrap(),
                PathBuf::from("/var/lib/handoff/certificates")
            );
        }
    }
}
