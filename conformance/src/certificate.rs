//! From a suite run to a certificate.
//!
//! The certificate format and store live in `handoff_host::registry::certificate` (a host reads
//! them without depending on the suite); this module turns a [`Report`] into one.

use std::path::PathBuf;

use handoff_host::loader::PluginFile;
use handoff_host::registry::{
    Certificate, CertificateError, CertificateStore, CertifiedCheck, Registry, Subject,
    SuiteOutcome,
};
use handoff_host::Manifest;

use crate::report::{Report, Status};

/// The checks of a report as a certificate records them.
pub fn outcome(report: &Report) -> SuiteOutcome {
    SuiteOutcome {
        suite_version: report.suite_version.clone(),
        checks: report
            .checks
            .iter()
            .map(|c| CertifiedCheck {
                id: c.id.clone(),
                status: match c.status {
                    Status::Pass => "pass",
                    Status::Fail => "fail",
                    Status::Skip => "skip",
                }
                .into(),
            })
            .collect(),
    }
}

/// Writes the certificate of a plugin file that ran the whole suite; returns its path.
pub fn certify_file(
    store: &CertificateStore,
    file: &PluginFile,
    manifest: &Manifest,
    report: &Report,
) -> Result<PathBuf, CertificateError> {
    let subject = Subject::File {
        sha256: file.sha256.clone(),
        path: std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone()),
    };
    store.write(&Certificate::new(subject, manifest, outcome(report)))
}

/// Certifies, on first use, every built-in plugin of `registry` that has no certificate yet
/// (running the whole suite in this process: a built-in is part of the host binary already).
pub fn certify_builtins(
    registry: &mut Registry,
    options: &crate::Options,
) -> Result<Vec<PathBuf>, CertificateError> {
    registry.certify_builtins(|plugin| outcome(&crate::run(plugin, options)))
}
