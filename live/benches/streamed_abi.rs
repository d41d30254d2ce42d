//! What the v4 streamed calls cost through a plugin file, against the same plugin built in.
//!
//! For Claude Code and Codex sessions of the continue bench's shape
//! (`transcript::synthetic::tool_turns`): `read_path_each` of a session file (every event handed
//! to a sink that drops it, as the engine hands it to its channel) and `create_streamed` of it
//! (from owned events, as the engine's stream hands them), built in and through the `.so` (`plugins/<p>/so`, built beside this
//! bench), alternated A, B, A, B, … and printed as the ratio of the medians.
//!
//! ```text
//! cargo bench -p handoff-live --bench streamed_abi -- [--turns N] [--runs K] [--target T] [--phase P]
//! # instruction counts (repeatable on a loaded machine): write a source, then one pass
//! streamed_abi --write-source DIR TARGET TURNS
//! valgrind --tool=callgrind --toggle-collect='*one_pass*' \
//!     streamed_abi --pass builtin|plugin-file read_path_each|create_streamed TARGET SOURCE ROOT
//! ```

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_host::loader::{self, LoadedPlugin};
use handoff_host::{
    CreateOptions, Event, EventStream, Origin, Plugin, PluginError, ReadFrom, StoreRoot, Transcript,
};

const TARGETS: [&str; 2] = ["claude-code", "codex"];
const PHASES: [&str; 2] = ["read_path_each", "create_streamed"];

fn builtin(target: &str) -> &'static dyn Plugin {
    match target {
        "claude-code" => &handoff_claude::ClaudePlugin,
        "codex" => &handoff_codex::CodexPlugin,
        other => panic!("no such target {other}"),
    }
}

fn plugin_file(target: &str) -> LoadedPlugin {
    let package = match target {
        "claude-code" => "handoff-plugin-claude",
        _ => "handoff-plugin-codex",
    };
    let path = support::plugin(package);
    let bytes = std::fs::read(&path).expect("read the plugin file");
    loader::load_bytes(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: None,
    }
}

/// Writes a session of `turns` tool turns with the built-in writer; returns its file.
fn write_source(dir: &Path, target: &str, turns: usize) -> PathBuf {
    let origin = Origin::new("anthropic", "claude-opus-4-8", "anthropic-messages");
    let transcript = handoff_transcript::synthetic::tool_turns(turns, &origin);
    let root = StoreRoot::new(dir.join(target)).expect("a store root");
    builtin(target)
        .writer()
        .create(&root, target, &transcript, &options())
        .unwrap_or_else(|e| panic!("{target}: {e}"))
        .path
}

/// One pass of `phase`: what callgrind counts (`--toggle-collect='*one_pass*'`).
#[inline(never)]
fn one_pass(
    plugin: &dyn Plugin,
    phase: &str,
    target: &str,
    source: &Path,
    held: &Transcript,
    root: &Path,
) {
    match phase {
        "read_path_each" => {
            let mut events = 0usize;
            plugin
                .reader()
                .read_each(ReadFrom::File(target, source), &mut |event| {
                    events += 1;
                    drop(event);
                    true
                })
                .unwrap_or_else(|e| panic!("{target}: {e}"));
            assert_eq!(events, held.events.len());
        }
        _ => {
            let root = StoreRoot::new(root.to_owned()).expect("a store root");
            plugin
                .writer()
                .create_streamed(&root, target, &mut OwnedEvents::new(held), &options())
                .unwrap_or_else(|e| panic!("{target}: {e}"));
        }
    }
}

/// The events as the engine's stream hands them: each one owned (it arrived over a channel), and
/// the whole transcript, when a writer asks for it, built as a new owned transcript (the engine
/// collects it). So a built-in writer pays for its own copy, as it will under the engine.
struct OwnedEvents<'t> {
    held: &'t Transcript,
    next: usize,
    whole: Option<Transcript>,
}

impl<'t> OwnedEvents<'t> {
    fn new(held: &'t Transcript) -> Self {
        OwnedEvents {
            held,
            next: 0,
            whole: None,
        }
    }
}

impl EventStream for OwnedEvents<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        let event = self.held.events.get(self.next).cloned();
        self.next += 1;
        Ok(event)
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        Ok(self.whole.get_or_insert_with(|| self.held.clone()))
    }
}

fn timed(
    plugin: &dyn Plugin,
    phase: &str,
    target: &str,
    source: &Path,
    held: &Transcript,
) -> Duration {
    let root = tempfile::tempdir().expect("a temp dir");
    let start = Instant::now();
    one_pass(plugin, phase, target, source, held, root.path());
    start.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--write-source") {
        let turns = args[i + 3].parse().expect("a number of turns");
        let path = write_source(Path::new(&args[i + 1]), &args[i + 2], turns);
        println!("{}", path.display());
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--pass") {
        let (phase, target) = (args[i + 2].as_str(), args[i + 3].as_str());
        let (source, root) = (Path::new(&args[i + 4]), Path::new(&args[i + 5]));
        let held = builtin(target)
            .reader()
            .read(ReadFrom::File(target, source))
            .unwrap();
        let file = plugin_file(target);
        let plugin: &dyn Plugin = match args[i + 1].as_str() {
            "builtin" => builtin(target),
            _ => &file,
        };
        one_pass(plugin, phase, target, source, &held, root);
        return;
    }
    // `cargo bench` passes `--bench`; nothing else is an option of ours.
    let turns = arg(&args, "--turns", 5_000usize);
    let runs = arg(&args, "--runs", 5usize);
    let dir = tempfile::tempdir().expect("a temp dir");
    println!("{turns} turns, median of {runs} alternated runs; plugin file ÷ built in");
    let only_target = arg(&args, "--target", String::new());
    let only_phase = arg(&args, "--phase", String::new());
    for target in TARGETS {
        if !only_target.is_empty() && only_target != target {
            continue;
        }
        let source = write_source(dir.path(), target, turns);
        let builtin = builtin(target);
        let file = plugin_file(target);
        let held = builtin
            .reader()
            .read(ReadFrom::File(target, &source))
            .unwrap();
        for phase in PHASES {
            if !only_phase.is_empty() && only_phase != phase {
                continue;
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                a.push(timed(builtin, phase, target, &source, &held));
                b.push(timed(&file, phase, target, &source, &held));
            }
            let (a, b) = (median(a), median(b));
            println!(
                "{target:12} {phase:16} built in {:8.1} ms  plugin file {:8.1} ms  {:.2}×",
                a.as_secs_f64() * 1e3,
                b.as_secs_f64() * 1e3,
                b.as_secs_f64() / a.as_secs_f64()
            );
        }
    }
}
