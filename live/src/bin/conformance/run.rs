//! The `run` subcommand: probe in this process, everything that runs plugin code in children.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_conformance::report::{CheckResult, Report, Status, REPORT_SCHEMA};
use handoff_conformance::SUITE_VERSION;
use handoff_host::loader::PluginFile;
use handoff_host::registry::CertificateStore;
use handoff_host::PLUGIN_API_VERSION;
use handoff_live::child::{self, ChildAnswer};
use serde::Serialize;

use crate::RunArgs;

/// The schema of the JSON report `--json` writes.
const RUN_SCHEMA: &str = "handoff.conformance-run/1";

const PASS: u8 = 0;
const CHECK_FAILED: u8 = 1;
const NOT_LOADED: u8 = 2;

/// The least a live check's process may take: the live tier's own CLI timeout and some margin.
const LIVE_CHECK_TIMEOUT: Duration = Duration::from_secs(240);

/// The versioned JSON report of one `conformance run`.
#[derive(Serialize)]
struct RunReport<'a> {
    schema: &'static str,
    /// `pass`, `fail` or `not_loaded`.
    outcome: &'static str,
    plugin: PluginSection<'a>,
    suite_version: &'static str,
    host_api_version: &'static str,
    /// True when `--check` selected a subset (a partial run certifies nothing).
    partial: bool,
    /// Why the plugin was not loaded, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    load_error: Option<LoadErrorSection>,
    checks: &'a [CheckResult],
    /// The certificate written, if any.
    certificate: Option<PathBuf>,
}

#[derive(Serialize)]
struct PluginSection<'a> {
    path: &'a Path,
    sha256: Option<&'a str>,
    #[serde(flatten)]
    file: Option<&'a handoff_abi::declaration::Declaration>,
    manifest_name: Option<&'a str>,
    manifest_version: Option<&'a str>,
}

#[derive(Serialize)]
struct LoadErrorSection {
    kind: String,
    message: String,
}

/// Everything a run found, for the outputs.
struct Outcome {
    file: Option<PluginFile>,
    manifest: Option<handoff_host::Manifest>,
    load_error: Option<LoadErrorSection>,
    checks: Vec<CheckResult>,
    partial: bool,
}

/// Runs the whole thing and returns the exit status.
pub fn run(args: &RunArgs) -> u8 {
    let outcome = execute(args);
    let loaded = outcome.load_error.is_none();
    let passed = loaded
        && !outcome.checks.is_empty()
        && outcome.checks.iter().all(|c| c.status == Status::Pass);

    print_table(args, &outcome);

    let mut certificate = None;
    let mut status = if !loaded {
        NOT_LOADED
    } else if passed {
        PASS
    } else {
        CHECK_FAILED
    };
    if passed && !outcome.partial {
        match write_certificate(args, &outcome) {
            Ok(path) => {
                eprintln!("certified: {}", path.display());
                certificate = Some(path);
            }
            Err(e) => {
                eprintln!("conformance: passed, but the certificate was not written: {e}");
                status = CHECK_FAILED;
            }
        }
    } else if passed {
        eprintln!("passed the selected checks (a partial run writes no certificate)");
    }

    let report = RunReport {
        schema: RUN_SCHEMA,
        outcome: match status {
            PASS => "pass",
            NOT_LOADED => "not_loaded",
            _ => "fail",
        },
        plugin: PluginSection {
            path: &args.plugin,
            sha256: outcome.file.as_ref().map(|f| f.sha256.as_str()),
            file: outcome.file.as_ref().map(|f| &f.declaration),
            manifest_name: outcome.manifest.as_ref().map(|m| m.name.as_str()),
            manifest_version: outcome.manifest.as_ref().map(|m| m.version.as_str()),
        },
        suite_version: SUITE_VERSION,
        host_api_version: PLUGIN_API_VERSION,
        partial: outcome.partial,
        load_error: outcome.load_error,
        checks: &outcome.checks,
        certificate,
    };
    if let Some(path) = &args.json {
        let written = serde_json::to_vec_pretty(&report)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                handoff_store::atomic::replace(path, |w| {
                    w.write_all(&json)?;
                    w.write_all(b"\n")
                })
            });
        if let Err(e) = written {
            eprintln!("conformance: cannot write {}: {e}", path.display());
            status = status.max(CHECK_FAILED);
        }
    }
    if let Some(path) = &args.junit {
        let name = report.plugin.manifest_name.unwrap_or("plugin");
        let xml = crate::junit::render(name, report.checks);
        if let Err(e) = handoff_store::atomic::replace(path, |w| w.write_all(xml.as_bytes())) {
            eprintln!("conformance: cannot write {}: {e}", path.display());
            status = status.max(CHECK_FAILED);
        }
    }
    status
}

fn execute(args: &RunArgs) -> Outcome {
    let mut outcome = Outcome {
        file: None,
        manifest: None,
        load_error: None,
        checks: Vec::new(),
        partial: !args.checks.is_empty(),
    };
    let not_loaded = |mut outcome: Outcome, id: &str, kind: &str, message: String, ms: f64| {
        outcome.checks.push(CheckResult {
            id: id.into(),
            status: Status::Fail,
            duration_ms: ms,
            evidence: vec![message.clone()],
        });
        outcome.load_error = Some(LoadErrorSection {
            kind: kind.into(),
            message,
        });
        outcome
    };

    // 1. probe: hash, declaration, API semver, panic strategy. No plugin code runs.
    let started = Instant::now();
    let file = match handoff_host::loader::probe(&args.plugin) {
        Ok(probe) => probe.file,
        Err(e) => {
            let ms = ms(started);
            return not_loaded(outcome, "probe", e.kind(), e.to_string(), ms);
        }
    };
    let d = &file.declaration;
    outcome.checks.push(CheckResult {
        id: "probe".into(),
        status: Status::Pass,
        duration_ms: ms(started),
        evidence: vec![
            format!("sha256 {}", file.sha256),
            format!(
                "{} {}: plugin API {} (host {PLUGIN_API_VERSION}), panic=unwind, built by {}",
                d.name, d.version, d.api_requirement, d.rustc_version
            ),
        ],
    });
    outcome.file = Some(file.clone());

    // 2. load (the ABI header, version, layout; manifest), in a child process.
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return not_loaded(
                outcome,
                "load",
                "internal",
                format!("cannot find this program: {e}"),
                0.0,
            )
        }
    };
    let timeout = Duration::from_secs_f64(args.timeout.max(0.1));
    let started = Instant::now();
    let (manifest, mut check_ids, live_check_ids, capabilities) = match child::run_child(
        &exe,
        &args.plugin,
        None,
        timeout,
    ) {
        Err(e) => {
            let ms = ms(started);
            return not_loaded(
                outcome,
                "load",
                "internal",
                format!("cannot start a check process: {e}"),
                ms,
            );
        }
        Ok(run) => match (&run.failure, run.output.map(|o| (o.sha256, o.answer))) {
            (
                None,
                Some((
                    sha,
                    ChildAnswer::Loaded {
                        manifest,
                        check_ids,
                        live_check_ids,
                        capabilities,
                    },
                )),
            ) if sha == file.sha256 => (manifest, check_ids, live_check_ids, capabilities),
            (None, Some((_, ChildAnswer::LoadFailed { kind, message }))) => {
                let ms = ms(started);
                return not_loaded(outcome, "load", &kind, message, ms);
            }
            (None, Some((sha, _))) if sha != file.sha256 => {
                let ms = ms(started);
                return not_loaded(outcome, "load", "changed", format!("the plugin file changed during the run (sha256 {} when probed, {sha} when loaded)", file.sha256), ms);
            }
            (failure, _) => {
                let mut message = failure.clone().unwrap_or_else(|| "no answer".into());
                if let Some(last) = run.tail.last() {
                    message += &format!("; it last printed: {last}");
                }
                let ms = ms(started);
                return not_loaded(
                    outcome,
                    "load",
                    "crashed",
                    format!("loading crashed: {message}"),
                    ms,
                );
            }
        },
    };
    outcome.checks.push(CheckResult {
        id: "load".into(),
        status: Status::Pass,
        duration_ms: ms(started),
        evidence: vec![
            format!(
                "root module v{} loaded, layout checked",
                handoff_abi::ROOT_MODULE_VERSION
            ),
            format!("capabilities: {}", capabilities.join(", ")),
            format!(
                "targets: {}",
                manifest
                    .targets
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ],
    });
    outcome.manifest = Some(manifest);

    // 3. the suite, one process per check; with --live, the live tier after it.
    if args.live {
        check_ids.extend(live_check_ids);
    }
    let selected: Vec<&String> = check_ids
        .iter()
        .filter(|id| {
            args.checks.is_empty()
                || args
                    .checks
                    .iter()
                    .any(|o| o == *id || id.split('/').next() == Some(o.as_str()))
        })
        .collect();
    if selected.is_empty() {
        outcome.checks.push(CheckResult {
            id: "select".into(),
            status: Status::Fail,
            duration_ms: 0.0,
            evidence: vec![format!(
                "no check matches {}; the checks are: {}",
                args.checks.join(", "),
                check_ids.join(", ")
            )],
        });
        return outcome;
    }
    for id in selected {
        eprintln!("running {id} …");
        // A live check runs a real CLI, with its own timeout inside; give it room.
        let timeout = if id.starts_with("live/") {
            timeout.max(LIVE_CHECK_TIMEOUT)
        } else {
            timeout
        };
        let result = match child::run_child(&exe, &args.plugin, Some(id), timeout) {
            Ok(run) => child::check_result(id, &file.sha256, run),
            Err(e) => CheckResult {
                id: id.clone(),
                status: Status::Fail,
                duration_ms: 0.0,
                evidence: vec![format!("cannot start the check's process: {e}")],
            },
        };
        outcome.checks.push(result);
    }
    outcome
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}

fn print_table(args: &RunArgs, outcome: &Outcome) {
    let (name, version) = match (&outcome.manifest, &outcome.file) {
        (Some(m), _) => (m.name.clone(), m.version.clone()),
        (None, Some(f)) => (f.declaration.name.clone(), f.declaration.version.clone()),
        (None, None) => ("?".into(), "?".into()),
    };
    eprintln!(
        "conformance {SUITE_VERSION} (plugin API {PLUGIN_API_VERSION}): {} — {name} {version}",
        args.plugin.display()
    );
    let report = Report {
        schema: REPORT_SCHEMA.into(),
        suite_version: SUITE_VERSION.into(),
        host_api_version: PLUGIN_API_VERSION.into(),
        plugin: name,
        plugin_version: version,
        checks: outcome.checks.clone(),
    };
    eprint!("{}", report.table());
    let failed = report.failures().count();
    if let Some(error) = &outcome.load_error {
        eprintln!("could not load: {}", error.message);
    } else {
        eprintln!("{} passed, {failed} failed", report.checks.len() - failed);
    }
}

fn write_certificate(args: &RunArgs, outcome: &Outcome) -> Result<PathBuf, String> {
    let dir = args
        .cert_dir
        .clone()
        .or_else(child::default_certificate_dir)
        .ok_or("no certificate directory: pass --cert-dir")?;
    let (Some(file), Some(manifest)) = (&outcome.file, &outcome.manifest) else {
        return Err("nothing was loaded".into());
    };
    // The certificate records every check, probe and load included.
    let report = Report {
        schema: REPORT_SCHEMA.into(),
        suite_version: SUITE_VERSION.into(),
        host_api_version: PLUGIN_API_VERSION.into(),
        plugin: manifest.name.clone(),
        plugin_version: manifest.version.clone(),
        checks: outcome.checks.clone(),
    };
    handoff_conformance::certificate::certify_file(
        &CertificateStore::new(dir),
        file,
        manifest,
        &report,
    )
    .map_err(|e| e.to_string())
}
