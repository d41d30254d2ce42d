//! `host-app <plugin dir> <certificate dir> [--continue transcript.json --to TARGET --store-root DIR]
//! [--prompt TEXT] [--locator NAME]`
//!
//! A host app on handoff: it loads every `*.so` of the plugin folder through the registry (only a
//! file with a passing certificate in the certificate folder is opened), lists the verified
//! targets with what each carries and the others with why they are not offered, and, with
//! `--continue`, continues the canonical transcript on the chosen target and prints what the
//! engine did and the resume plan as JSON. Exit 0 on success, 1 when the continuation fails, 2 on
//! a usage error or a target that is not offered.

mod listing;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use handoff_host::continuation::{continue_conversation, ContinueRequest};
use handoff_host::registry::{Registry, RegistryConfig};
use handoff_host::{StoreRoot, Transcript};

/// The conformance suite version whose certificates this host accepts
/// (`handoff_conformance::SUITE_VERSION`; the test keeps them equal).
pub const SUITE_VERSION: &str = "1.6.0";

const USAGE: &str = "usage: host-app <plugin dir> <certificate dir> [--continue transcript.json --to TARGET --store-root DIR] [--prompt TEXT] [--locator NAME]";

struct Args {
    plugin_dir: PathBuf,
    certificate_dir: PathBuf,
    continuation: Option<Continuation>,
}

struct Continuation {
    transcript: PathBuf,
    target: String,
    store_root: PathBuf,
    prompt: String,
    locator: Option<String>,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut positional = Vec::new();
    let (mut transcript, mut target, mut store_root, mut prompt, mut locator) =
        (None, None, None, None, None);
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--continue" => transcript = Some(PathBuf::from(value("--continue")?)),
            "--to" => target = Some(value("--to")?),
            "--store-root" => store_root = Some(PathBuf::from(value("--store-root")?)),
            "--prompt" => prompt = Some(value("--prompt")?),
            "--locator" => locator = Some(value("--locator")?),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [plugin_dir, certificate_dir] = <[PathBuf; 2]>::try_from(positional)
        .map_err(|_| "expected a plugin folder and a certificate folder".to_owned())?;
    let continuation = match (transcript, target, store_root) {
        (None, None, None) => None,
        (Some(transcript), Some(target), Some(store_root)) => Some(Continuation {
            transcript,
            target,
            store_root,
            prompt: prompt.unwrap_or_else(|| "Continue.".to_owned()),
            locator,
        }),
        _ => return Err("--continue, --to and --store-root go together".to_owned()),
    };
    Ok(Args {
        plugin_dir,
        certificate_dir,
        continuation,
    })
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1).collect()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("host-app: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let registry = Registry::open(RegistryConfig {
        plugin_dirs: vec![args.plugin_dir],
        plugin_files: Vec::new(),
        certificate_dir: args.certificate_dir,
        suite_version: SUITE_VERSION.to_owned(),
    });
    print!("{}", listing::render(&registry));
    match args.continuation {
        None => ExitCode::SUCCESS,
        Some(c) => match continue_on(&registry, &c) {
            Ok(json) => {
                println!("continued:\n{json}");
                ExitCode::SUCCESS
            }
            Err((code, e)) => {
                eprintln!("host-app: {e}");
                ExitCode::from(code)
            }
        },
    }
}

/// Continues the transcript on the chosen target; the engine's result (session, action, plan) as
/// pretty JSON.
fn continue_on(registry: &Registry, c: &Continuation) -> Result<String, (u8, String)> {
    let plugin = registry.plugin_for(&c.target).map_err(|e| (2, e))?;
    let text = std::fs::read_to_string(&c.transcript)
        .map_err(|e| (2, format!("{}: {e}", c.transcript.display())))?;
    let transcript = Transcript::from_json(&text).map_err(|e| {
        (
            2,
            format!("{}: not a transcript: {e}", c.transcript.display()),
        )
    })?;
    std::fs::create_dir_all(&c.store_root)
        .map_err(|e| (1, format!("{}: {e}", c.store_root.display())))?;
    let root = StoreRoot::new(&c.store_root).map_err(|e| (2, e.to_string()))?;
    let locator = c
        .locator
        .clone()
        .unwrap_or_else(|| format!("host-app:{}", c.transcript.display()));
    // The user's key beside the certificates seals this run's journals (docs/continuation.md).
    let seal = registry.seal().map_err(|e| (2, e.to_string()))?;
    let continued = continue_conversation(
        plugin.as_ref(),
        &ContinueRequest {
            source: (&transcript).into(),
            locator: Some(&locator),
            target: &c.target,
            root: &root,
            seal,
            cwd: None,
            prompt: &c.prompt,
            drop: &[],
            lock_wait: Duration::from_secs(10),
            into: None,
        },
    )
    .map_err(|e| (1, e.to_string()))?;
    serde_json::to_string_pretty(&continued).map_err(|e| (1, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse_args(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn continuing_needs_all_three_options() {
        assert!(args(&["p", "c"]).unwrap().continuation.is_none());
        let a = args(&[
            "p",
            "c",
            "--continue",
            "t.json",
            "--to",
            "x",
            "--store-root",
            "s",
        ])
        .unwrap();
        assert_eq!(a.continuation.unwrap().prompt, "Continue.");
        assert!(args(&["p", "c", "--to", "x"]).is_err());
        assert!(args(&["p"]).is_err());
        assert!(args(&["p", "c", "--bogus"]).is_err());
    }
}
