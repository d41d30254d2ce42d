//! The model provider Codex's config selects: new sessions must name it.
//!
//! Measured with Codex 0.171.0: resuming a thread recorded with another provider fails ("Cannot
//! change this thread's model provider from `openai` to `fake` on resume"), and the session list
//! shows only threads of the configured provider. So the writer records the provider of
//! `<CODEX_HOME>/config.toml` (its `model_provider`, or that of the selected `profile`), as the CLI
//! itself does, and `openai` when the config names none.

use handoff_sdk::{PluginError, StoreRoot};

use crate::codex::records::DEFAULT_MODEL_PROVIDER;

/// The provider id new sessions under `root` are recorded with.
pub fn model_provider(root: &StoreRoot) -> Result<String, PluginError> {
    let path = root.path().join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(DEFAULT_MODEL_PROVIDER.to_owned())
        }
        Err(e) => return Err(PluginError::io(&path, &e)),
    };
    let config: toml::Table =
        text.parse()
            .map_err(|e: toml::de::Error| PluginError::Malformed {
                file: path.clone(),
                line: None,
                field: None,
                message: format!("Codex's config is not valid TOML: {e}"),
            })?;
    let profile = config
        .get("profile")
        .and_then(toml::Value::as_str)
        .and_then(|name| config.get("profiles")?.get(name)?.get("model_provider"))
        .and_then(toml::Value::as_str);
    let top = config.get("model_provider").and_then(toml::Value::as_str);
    Ok(profile.or(top).unwrap_or(DEFAULT_MODEL_PROVIDER).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_configured_provider() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        assert_eq!(model_provider(&root).unwrap(), "openai");
        let config = tmp.path().join("config.toml");
        std::fs::write(
            &config,
            "model_provider = \"fake\"\n[model_providers.fake]\nname = \"f\"\n",
        )
        .unwrap();
        assert_eq!(model_provider(&root).unwrap(), "fake");
        std::fs::write(
            &config,
            "model_provider = \"fake\"\nprofile = \"work\"\n[profiles.work]\nmodel_provider = \"azure\"\n",
        )
        .unwrap();
        assert_eq!(model_provider(&root).unwrap(), "azure");
        std::fs::write(&config, "model_provider = ").unwrap();
        assert!(matches!(
            model_provider(&root),
            Err(PluginError::Malformed { .. })
        ));
    }
}
