//! The plugins this command can use: the built-ins linked into it and plugin files from the
//! configured directories, each offered only with a passing certificate.
//!
//! A built-in without a certificate in this binary is certified when a command first uses one of
//! its targets, and only then: `read` and `sessions` certify one plugin, `continue` the source's
//! and the target's (in parallel), `targets` all of them (it reports verification).

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

use handoff_conformance::certificate::outcome;
use handoff_conformance::{Options, SUITE_VERSION};
use handoff_host::registry::{PluginSource, Registry, RegistryConfig, TargetListing};
use handoff_host::seal::Seal;
use handoff_host::{Plugin, TargetManifest};
use handoff_store::scratch::ScratchDir;

use crate::config::Config;
use crate::error::CliError;
use crate::progress::Progress;

// BUILTINS: every plugin dependency of this crate (build.rs lists them).
include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

pub struct Catalog {
    /// Certifying a built-in on first use changes its entry, behind `&self`.
    registry: RefCell<Registry>,
    certificate_dir: PathBuf,
}

/// Which built-ins to certify now.
#[derive(Clone, Copy)]
enum Needed<'a> {
    All,
    Targets(&'a [&'a str]),
}

impl Catalog {
    /// Opens the registry. Built-ins are certified later, when a command uses them
    /// ([`Catalog::certify_for`], [`Catalog::plugin`], [`Catalog::certify_all`]).
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
        // What a killed run left while certifying is removed by every run, certifying or not.
        if let Err(e) = ScratchDir::sweep(&scratch_parent(&certificate_dir)) {
            tracing::warn!(
                "cannot remove what a killed run left in {}: {e}",
                scratch_parent(&certificate_dir).display()
            );
        }
        Ok(Catalog {
            registry: RefCell::new(registry),
            certificate_dir,
        })
    }

    /// Certifies every built-in that has no certificate in this binary yet (in parallel).
    pub fn certify_all(&self) -> Result<(), CliError> {
        self.certify(Needed::All)
    }

    /// Certifies the built-ins that offer `targets` and have no certificate in this binary yet
    /// (in parallel), unless a verified plugin file is used for the target instead. Runs started
    /// together on a fresh certificate directory certify each built-in once: the others wait for
    /// it and use its certificate.
    pub fn certify_for(&self, targets: &[&str]) -> Result<(), CliError> {
        self.certify(Needed::Targets(targets))
    }

    fn certify(&self, needed: Needed<'_>) -> Result<(), CliError> {
        let mut registry = self.registry.borrow_mut();
        let uncertified = match needed {
            Needed::All => registry.uncertified_builtins(),
            Needed::Targets(targets) => registry.uncertified_builtins_for(targets),
        };
        if uncertified.is_empty() {
            return Ok(());
        }
        // The suite's scratch store roots go in a folder beside the certificates, never in the
        // system temp dir: a run killed while certifying leaves it, and the next run sweeps it.
        let scratch = ScratchDir::new(&scratch_parent(&self.certificate_dir)).map_err(|e| {
            CliError::Failed(format!(
                "cannot make a scratch folder to certify {}: {e}",
                uncertified.join(", ")
            ))
        })?;
        let options = Options {
            scratch: Some(scratch.path().to_owned()),
            ..Options::default()
        };
        let _progress = Progress::start(&format!(
            "certifying built-in plugins: {}",
            uncertified.join(", ")
        ));
        let run = |plugin: &dyn Plugin| {
            let report = handoff_conformance::run(plugin, &options);
            for check in &report.checks {
                tracing::debug!(
                    "certifying {}: {} {:?} in {:.0} ms",
                    report.plugin,
                    check.id,
                    check.status,
                    check.duration_ms
                );
                if check.status != handoff_conformance::Status::Pass {
                    tracing::warn!(
                        "built-in {} did not pass {}: {}",
                        report.plugin,
                        check.id,
                        check.evidence.join("; ")
                    );
                }
            }
            outcome(&report)
        };
        match needed {
            Needed::All => registry.certify_builtins(run),
            Needed::Targets(targets) => registry.certify_builtins_for(targets, run),
        }
        .map_err(|e| CliError::Failed(format!("cannot record a certificate: {e}")))?;
        drop(scratch);
        Ok(())
    }

    /// The user's key (beside the certificates), which seals the journals of a write and proves
    /// the ones a write finds are handoff's.
    pub fn seal(&self) -> Result<Seal, CliError> {
        self.registry
            .borrow()
            .seal()
            .cloned()
            .map_err(|e| CliError::Config {
                path: self.certificate_dir.join(handoff_host::seal::KEY_FILE),
                message: e.to_string(),
            })
    }

    pub fn listings(&self) -> Vec<TargetListing> {
        self.registry.borrow().targets()
    }

    /// One manifest per known target, from the plugin in use for it where one is (else the
    /// first plugin that declares it), without certifying anything.
    pub fn manifests_of_targets(&self) -> Vec<TargetManifest> {
        let listings = self.listings();
        let in_use = |source: &PluginSource, plugin: &str, target: &str| {
            listings.iter().any(|l| {
                l.in_use()
                    && &l.source == source
                    && l.plugin == plugin
                    && l.target.as_deref() == Some(target)
            })
        };
        let mut chosen: Vec<(TargetManifest, bool)> = Vec::new();
        for (source, manifest) in self.registry.borrow().manifests() {
            for target in manifest.targets {
                let used = in_use(&source, &manifest.name, &target.name);
                match chosen.iter_mut().find(|(t, _)| t.name == target.name) {
                    Some(slot) if used && !slot.1 => *slot = (target, used),
                    Some(_) => {}
                    None => chosen.push((target, used)),
                }
            }
        }
        chosen.into_iter().map(|(t, _)| t).collect()
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

    /// The plugin offering `target` (a built-in not yet certified is certified now): an unknown
    /// target is a usage error, an unverified one says why.
    pub fn plugin(&self, target: &str) -> Result<Arc<dyn Plugin>, CliError> {
        self.certify_for(&[target])?;
        let found = self.registry.borrow().plugin_for(target);
        match found {
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

/// Where the suite's scratch store roots go while certifying.
fn scratch_parent(certificate_dir: &std::path::Path) -> PathBuf {
    certificate_dir.join("scratch")
}
