//! The plugins this command can use: the built-ins linked into it and plugin files from the
//! configured directories, each offered only with a passing certificate.

use std::sync::Arc;

use handoff_conformance::certificate::outcome;
use handoff_conformance::{Options, SUITE_VERSION};
use handoff_core::registry::{Registry, RegistryConfig, TargetListing};
use handoff_core::store::scratch::ScratchDir;
use handoff_core::{Plugin, TargetManifest};

use crate::config::Config;
use crate::error::CliError;
use crate::progress::Progress;

// BUILTINS: every plugin dependency of this crate (build.rs lists them).
include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

pub struct Catalog {
    registry: Registry,
}

impl Catalog {
    /// Opens the registry; built-ins without a certificate in this binary are certified now (once:
    /// the certificate is cached). Runs started together on a fresh certificate directory certify
    /// each built-in once: the others wait for it and use its certificate.
    pub fn open(config: &Config) -> Result<Catalog, CliError> {
        let certificate_dir = config.certificate_dir()?;
        let mut registry = Registry::open(RegistryConfig {
            plugin_dirs: config.plugin_dirs.clone(),
            plugin_files: Vec::new(),
            certificate_dir: certificate_dir.clone(),
            suite_version: SUITE_VERSION.to_owned(),
        });
        for make in BUILTINS {
            registry.add_builtin(Arc::from(make()));
        }
        // The suite's scratch store roots go in a folder beside the certificates, never in the
        // system temp dir: a run killed while certifying leaves it, and the next run sweeps it.
        let parent = certificate_dir.join("scratch");
        if let Err(e) = ScratchDir::sweep(&parent) {
            tracing::warn!(
                "cannot remove what a killed run left in {}: {e}",
                parent.display()
            );
        }
        let uncertified = registry.uncertified_builtins();
        if uncertified.is_empty() {
            return Ok(Catalog { registry });
        }
        let scratch = ScratchDir::new(&parent).map_err(|e| {
            CliError::Failed(format!(
                "cannot make a scratch folder to certify {}: {e}",
                uncertified.join(", ")
            ))
        })?;
        let options = Options {
            scratch: Some(scratch.path().to_owned()),
            ..Options::default()
        };
        let progress = Progress::start("certifying built-in plugins");
        registry
            .certify_builtins(|plugin| {
                progress.step(&format!("certifying built-in {}", plugin.manifest().name));
                outcome(&handoff_conformance::run(plugin, &options))
            })
            .map_err(|e| CliError::Failed(format!("cannot record a certificate: {e}")))?;
        drop(scratch);
        Ok(Catalog { registry })
    }

    pub fn listings(&self) -> Vec<TargetListing> {
        self.registry.targets()
    }

    /// The listing of the plugin used for `target` (it says where the plugin came from).
    pub fn in_use(&self, target: &str) -> Option<TargetListing> {
        self.listings()
            .into_iter()
            .find(|l| l.target.as_deref() == Some(target) && l.in_use())
    }

    /// The manifest of `target`, from the plugin that offers it.
    pub fn target(&self, target: &str) -> Result<TargetManifest, CliError> {
        let plugin = self.plugin(target)?;
        plugin
            .manifest()
            .target(target)
            .cloned()
            .ok_or_else(|| CliError::UnknownTarget {
                target: target.to_owned(),
                known: Vec::new(),
            })
    }

    /// The plugin offering `target`: an unknown target is a usage error, an unverified one says why.
    pub fn plugin(&self, target: &str) -> Result<Arc<dyn Plugin>, CliError> {
        match self.registry.plugin_for(target) {
            Ok(plugin) => Ok(plugin),
            Err(reason) => {
                let listings = self.listings();
                if listings.iter().any(|l| l.target.as_deref() == Some(target)) {
                    Err(CliError::NotVerified {
                        target: target.to_owned(),
                        reason,
                    })
                } else {
                    let mut known: Vec<String> =
                        listings.into_iter().filter_map(|l| l.target).collect();
                    known.sort();
                    known.dedup();
                    Err(CliError::UnknownTarget {
                        target: target.to_owned(),
                        known,
                    })
                }
            }
        }
    }
}
