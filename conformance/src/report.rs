//! What a run of the suite found.

use serde::{Deserialize, Serialize};

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The check passed.
    Pass,
    /// The check failed; the evidence says why.
    Fail,
    /// The check did not run; the evidence says why. Never counted as a pass.
    Skip,
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The check id, e.g. `round_trip/claude-code`.
    pub id: String,
    /// Pass, fail or skip.
    pub status: Status,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// What was checked and, on failure, the diff or error.
    pub evidence: Vec<String>,
}

/// The schema of the JSON report.
pub const REPORT_SCHEMA: &str = "handoff.conformance-report/1";

/// A whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: String,
    /// The suite version ([`crate::SUITE_VERSION`]).
    pub suite_version: String,
    /// The host's plugin API version.
    pub host_api_version: String,
    /// The plugin name.
    pub plugin: String,
    /// The plugin version.
    pub plugin_version: String,
    /// Every check run, in order.
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// True when every check passed (a skip is not a pass).
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.status == Status::Pass)
    }

    /// The checks that did not pass.
    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(|c| c.status != Status::Pass)
    }

    /// Panics, with the table and every failed check's evidence, unless every check passed: what
    /// a plugin's own test of the suite asserts.
    pub fn assert_passed(&self) {
        let failures: Vec<String> = self
            .failures()
            .map(|c| format!("{}: {}", c.id, c.evidence.join("\n  ")))
            .collect();
        assert!(self.passed(), "{}\n{}", self.table(), failures.join("\n"));
    }

    /// A plain-text table, one line per check, for a terminal.
    pub fn table(&self) -> String {
        let width = self.checks.iter().map(|c| c.id.len()).max().unwrap_or(5);
        let mut out = String::new();
        for c in &self.checks {
            let status = match c.status {
                Status::Pass => "PASS",
                Status::Fail => "FAIL",
                Status::Skip => "SKIP",
            };
            out += &format!("{status}  {:<width$}  {:>9.1} ms\n", c.id, c.duration_ms);
            if c.status != Status::Pass {
                for line in &c.evidence {
                    out += &format!("      {line}\n");
                }
            }
        }
        out
    }
}
