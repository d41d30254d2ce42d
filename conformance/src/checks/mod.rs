//! The checks. Each returns its evidence: `Ok` lines on a pass, `Err` lines on a failure.

mod append;
mod bad_input;
mod copies;
mod fidelity;
mod manifest;
mod ownership;
mod round_trip;
mod streamed;
mod strict_resume;

use handoff_host::{
    Comparison, CreateOptions, Plugin, ReadFrom, SessionRef, StoreRoot, TargetManifest, Transcript,
};

use crate::sandbox::Sandbox;
use crate::Options;

/// Evidence lines; `Err` means the check failed.
pub(crate) type Outcome = Result<Vec<String>, Vec<String>>;

/// The working directory every suite session claims.
pub(crate) const SUITE_CWD: &str = "/home/dev/handoff-conformance";

pub(crate) fn dispatch(plugin: &dyn Plugin, id: &str, options: &Options) -> Outcome {
    if id == "manifest" {
        return manifest::check(plugin);
    }
    let (kind, target_name) = id
        .split_once('/')
        .ok_or_else(|| vec![format!("unknown check id {id:?}")])?;
    let manifest = plugin.manifest();
    let target = manifest
        .target(target_name)
        .ok_or_else(|| vec![format!("the plugin has no target {target_name:?}")])?;
    let ctx = Ctx {
        plugin,
        target,
        sandbox: Sandbox::new(options.scratch.as_deref())
            .map_err(|e| vec![format!("cannot make a scratch directory: {e}")])?,
    };
    let outcome = match kind {
        "round_trip" => round_trip::check(&ctx),
        "streamed" => streamed::check(&ctx),
        "fidelity" => fidelity::check(&ctx),
        "append" => append::check(&ctx),
        "strict_resume" => strict_resume::check(&ctx),
        "ownership" => ownership::check(&ctx),
        "bad_input" => bad_input::check(&ctx),
        _ => return Err(vec![format!("unknown check kind {kind:?}")]),
    };
    // Whatever the check found, nothing may appear outside the store root.
    let outside = ctx.sandbox.outside_changes();
    match (outcome, outside.is_empty()) {
        (outcome, true) => outcome,
        (Ok(mut evidence) | Err(mut evidence), false) => {
            evidence.extend(outside);
            Err(evidence)
        }
    }
}

/// What every per-target check works with.
pub(crate) struct Ctx<'a> {
    pub plugin: &'a dyn Plugin,
    pub target: &'a TargetManifest,
    pub sandbox: Sandbox,
}

impl Ctx<'_> {
    pub fn root(&self) -> &StoreRoot {
        &self.sandbox.root
    }

    pub fn name(&self) -> &str {
        &self.target.name
    }

    pub fn comparison(&self) -> Comparison {
        self.target.comparison()
    }

    /// Whether the target declares every part `transcript` uses.
    pub fn carries(&self, transcript: &Transcript) -> bool {
        transcript.first_uncarried(&self.target.carries).is_none()
    }

    pub fn create(&self, what: &str, transcript: &Transcript) -> Result<SessionRef, Vec<String>> {
        let options = CreateOptions {
            cwd: Some(SUITE_CWD.to_owned()),
            locator: Some(format!("conformance:{what}")),
        };
        let session = self
            .plugin
            .writer()
            .create(self.root(), self.name(), transcript, &options)
            .map_err(|e| vec![format!("{what}: create failed: {e}")])?;
        if session.target != self.name() {
            return Err(vec![format!(
                "{what}: create returned a session of target {:?}",
                session.target
            )]);
        }
        if let Err(e) = self.root().check_inside(&session.path) {
            return Err(vec![format!("{what}: {e}")]);
        }
        Ok(session)
    }

    /// Reads `session` back by id and requires it to equal `expected`.
    pub fn read_back(
        &self,
        what: &str,
        session: &SessionRef,
        expected: &Transcript,
    ) -> Result<(), Vec<String>> {
        let got = self
            .plugin
            .reader()
            .read(ReadFrom::Session(self.root(), session))
            .map_err(|e| vec![format!("{what}: read {} failed: {e}", session.id)])?;
        self.comparison()
            .diff(expected, &got)
            .map_err(|d| vec![format!("{what}: read back differs: {d}")])
    }
}
