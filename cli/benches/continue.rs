//! `continue` on synthetic 5,000- and 25,000-turn sessions, including the read-back verify, in
//! both directions (Claude Code → Codex and Codex → Claude Code), each beside its floor: reading
//! the same source line by line, parsing each line into a `serde_json::Value` and serialising it
//! back through a buffered writer into a file, measured in the same run. Wall time is the median of
//! five runs, each in a child process of its own (as a `handoff continue` is; its start and the
//! removal of what it wrote are not timed), the floor's and the continuation's alternating; peak
//! memory is each phase's VmHWM in such a child, less that process's resident size before the
//! work.
//!
//! Run: `cargo bench -p handoff-cli --bench continue` (add `-- --quick` for the 5,000-turn size
//! only; `-- --large 400,2000` for generated sessions of about those many MB each, with images
//! and compactions, written into a temp dir and removed after; `-- --large 400 --to pi` for
//! Claude Code → pi, pi's streamed writer beside its whole-transcript one; `--to gemini-cli` for
//! Claude Code → Gemini CLI; `-- --large 400 --to pi
//! --before EXE` with another build of this bench, at the commit before a change, in the third
//! column instead). Figures are printed as a table and as ratios to the floor and to the input
//! size; the phases of one continuation (read the source, write the target, verify) go to stderr.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_gemini::GeminiPlugin;
use handoff_host::continuation::{continue_conversation, ContinueRequest, Source, SourceFile};
use handoff_host::{CreateOptions, Origin, Plugin, ReadFrom, StoreRoot};
use handoff_pi::PiPlugin;

/// The `handoff` binary's allocator (cli/src/main.rs), so the figures are the command's.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const RUNS: usize = 9;
/// Runs of each path in the comparison with the plugin files (alternated, so more are cheap).
const PLUGIN_FILE_RUNS: usize = 5;

/// Which way a continuation goes: the source's plugin and target, then the target's.
#[derive(Clone, Copy)]
enum Direction {
    ClaudeToCodex,
    CodexToClaude,
    /// Claude Code → pi, pi's writer writing each event as it arrives (`--large … --to pi`).
    ClaudeToPi,
    /// The same through pi's writer as it was before it streamed: the whole transcript
    /// collected by the engine, then written ([`HeldPi`]).
    ClaudeToPiHeld,
    /// Claude Code → Gemini CLI (`--large … --to gemini-cli`).
    ClaudeToGemini,
}

impl Direction {
    const ALL: [Direction; 2] = [Direction::ClaudeToCodex, Direction::CodexToClaude];

    fn name(self) -> &'static str {
        match self {
            Direction::ClaudeToCodex => "claude-code→codex",
            Direction::CodexToClaude => "codex→claude-code",
            Direction::ClaudeToPi => "claude-code→pi",
            Direction::ClaudeToPiHeld => "claude-code→pi-held",
            Direction::ClaudeToGemini => "claude-code→gemini-cli",
        }
    }

    fn parse(name: &str) -> Direction {
        [
            Direction::ClaudeToCodex,
            Direction::CodexToClaude,
            Direction::ClaudeToPi,
            Direction::ClaudeToPiHeld,
            Direction::ClaudeToGemini,
        ]
        .into_iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("unknown direction {name}"))
    }

    fn source(self) -> (&'static dyn Plugin, &'static str) {
        match self {
            Direction::CodexToClaude => (&CodexPlugin, "codex"),
            _ => (&ClaudePlugin, "claude-code"),
        }
    }

    fn target(self) -> (&'static dyn Plugin, &'static str) {
        match self {
            Direction::ClaudeToCodex => (&CodexPlugin, "codex"),
            Direction::CodexToClaude => (&ClaudePlugin, "claude-code"),
            Direction::ClaudeToPi => (&PiPlugin, "pi"),
            Direction::ClaudeToPiHeld => (&HeldPi, "pi"),
            Direction::ClaudeToGemini => (&GeminiPlugin, "gemini-cli"),
        }
    }

    /// The model provider the source's assistant turns come from.
    fn origin(self) -> Origin {
        match self {
            Direction::CodexToClaude => Origin::new("openai", "gpt-5.5", "openai-responses"),
            _ => Origin::new("anthropic", "claude-opus-4-8", "anthropic-messages"),
        }
    }
}

/// pi's plugin with the writer it had before it streamed: `create_streamed` is the trait's
/// default, which takes the whole transcript (the engine collects it from the stream and
/// verifies against it) and calls `create`. The "before" of `--large … --to pi`.
struct HeldPi;

impl Plugin for HeldPi {
    fn manifest(&self) -> handoff_host::Manifest {
        PiPlugin.manifest()
    }
    fn writer(&self) -> &dyn handoff_host::Writer {
        self
    }
    fn reader(&self) -> &dyn handoff_host::Reader {
        PiPlugin.reader()
    }
    fn resumer(&self) -> &dyn handoff_host::Resumer {
        PiPlugin.resumer()
    }
}

impl handoff_host::Writer for HeldPi {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &handoff_host::Transcript,
        options: &CreateOptions,
    ) -> Result<handoff_host::SessionRef, handoff_host::PluginError> {
        PiPlugin.writer().create(root, target, transcript, options)
    }
    fn append(
        &self,
        root: &StoreRoot,
        session: &handoff_host::SessionRef,
        events: &[handoff_host::Event],
    ) -> Result<handoff_host::SessionRef, handoff_host::PluginError> {
        PiPlugin.writer().append(root, session, events)
    }
    fn remove(
        &self,
        root: &StoreRoot,
        session: &handoff_host::SessionRef,
    ) -> Result<(), handoff_host::PluginError> {
        PiPlugin.writer().remove(root, session)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(
            &args[i + 1],
            Direction::parse(&args[i + 2]),
            Path::new(&args[i + 3]),
        );
        return;
    }
    // For profiling (callgrind) outside the bench: write a source and print its path.
    if let Some(i) = args.iter().position(|a| a == "--write-source") {
        let path = write_source(
            Path::new(&args[i + 1]),
            Direction::parse(&args[i + 2]),
            args[i + 3].parse().expect("a number of turns"),
        );
        println!("{}", path.display());
        return;
    }
    // For profiling at a large size: write a generated session of about MB megabytes (images
    // and compactions) and print its path and its number of events.
    if let Some(i) = args.iter().position(|a| a == "--write-large-source") {
        let (path, events) = write_large_source(
            Path::new(&args[i + 1]),
            Direction::parse(&args[i + 2]),
            args[i + 3].parse().expect("a size in MB"),
        );
        println!("{} {events}", path.display());
        return;
    }
    // Generated sessions of about MB megabytes each (images and compactions), both directions.
    if let Some(i) = args.iter().position(|a| a == "--large") {
        let sizes: Vec<u64> = args[i + 1]
            .split(',')
            .map(|mb| mb.parse().expect("--large MB[,MB…]"))
            .collect();
        let into = match args.iter().position(|a| a == "--to") {
            Some(t) if args[t + 1] == "pi" => Some(Direction::ClaudeToPi),
            Some(t) if args[t + 1] == "gemini-cli" => Some(Direction::ClaudeToGemini),
            Some(t) => panic!(
                "--to {}: only pi and gemini-cli are measured this way",
                args[t + 1]
            ),
            None => None,
        };
        // Another build of this bench (at the commit before a change): its continuation is the
        // third child instead, so before and after alternate in one run.
        let before = args
            .iter()
            .position(|a| a == "--before")
            .map(|b| PathBuf::from(&args[b + 1]));
        large(&sizes, into, before.as_deref());
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[5_000] } else { &[5_000, 25_000] };
    // For callgrind: one continuation of SOURCE into ROOT, built in or through the plugin files
    // (`--toggle-collect='*one_pass*'` counts the continuation alone, not the loading).
    if let Some(i) = args.iter().position(|a| a == "--pass") {
        let direction = Direction::parse(&args[i + 2]);
        let (source, root) = (Path::new(&args[i + 3]), Path::new(&args[i + 4]));
        let (files, _) = PluginFiles::load();
        let ((source_plugin, source_target), (plugin, target)) = match args[i + 1].as_str() {
            "builtin" => (direction.source(), direction.target()),
            _ => files.of(direction),
        };
        one_pass(
            (source_plugin, source_target),
            (plugin, target),
            source,
            root,
        );
        return;
    }
    // Only the comparison of the plugin files with the built-ins (several back-to-back runs).
    if args.iter().any(|a| a == "--plugin-files") {
        for direction in Direction::ALL {
            for &turns in sizes {
                let dir = tempfile::tempdir().expect("temp dir");
                let source = write_source(dir.path(), direction, turns);
                through_plugin_files(direction, turns, dir.path(), &source);
            }
        }
        return;
    }
    println!(
        "{:>17} {:>7} {:>9} {:>10} {:>12} {:>6} {:>11} {:>14} {:>9} {:>11}",
        "direction",
        "turns",
        "input MiB",
        "floor ms",
        "continue ms",
        "ratio",
        "floor peak",
        "continue peak",
        "÷ input",
        "CPU ratio"
    );
    for direction in Direction::ALL {
        for &turns in sizes {
            measure(direction, turns);
        }
    }
}

fn measure(direction: Direction, turns: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = write_source(dir.path(), direction, turns);
    let input = std::fs::metadata(&source).expect("source").len();
    // Each run is a process of its own, as a `handoff continue` is, the floor and the
    // continuation alternating so both see the same machine.
    let (mut floors, mut conts) = (Vec::new(), Vec::new());
    let (mut floor_cpus, mut cont_cpus) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (_, wall, cpu) = run_child("floor", direction, &source);
        floors.push(wall);
        floor_cpus.push(cpu);
        let (_, wall, cpu) = run_child("continue", direction, &source);
        conts.push(wall);
        cont_cpus.push(cpu);
    }
    let (floor, cont) = (median(floors), median(conts));
    let (floor_cpu, cont_cpu) = (median(floor_cpus), median(cont_cpus));
    let read = median(
        (0..RUNS)
            .map(|_| time(|| read_pass(direction, &source)))
            .collect(),
    );
    eprintln!(
        "  {} {turns}: read source alone: {:.0} ms, {:.2}× the floor",
        direction.name(),
        ms(read),
        read.as_secs_f64() / floor.as_secs_f64()
    );
    phases(direction, &source, &dir.path().join("target-phases"), floor);
    let floor_peak = peak_of("floor", direction, &source);
    let cont_peak = peak_of("continue", direction, &source);
    let read_peak = peak_of("read", direction, &source);
    eprintln!(
        "  {} {turns}: peak of reading the source alone: {:.1} MiB, {:.2}× the input",
        direction.name(),
        mib(read_peak),
        read_peak as f64 / input as f64
    );
    println!(
        "{:>17} {:>7} {:>9.1} {:>10.0} {:>12.0} {:>5.2}× {:>8.1} MiB {:>11.1} MiB {:>8.2}× {:>10.2}×",
        direction.name(),
        turns,
        mib(input),
        ms(floor),
        ms(cont),
        cont.as_secs_f64() / floor.as_secs_f64(),
        mib(floor_peak),
        mib(cont_peak),
        cont_peak as f64 / input as f64,
        cont_cpu.as_secs_f64() / floor_cpu.as_secs_f64(),
    );
    through_plugin_files(direction, turns, dir.path(), &source);
}

/// A session of `turns` turns in the direction's source format: user → assistant text + tool
/// call → ~1.3 KB tool result → assistant text, written by the source plugin's own writer.
fn write_source(dir: &Path, direction: Direction, turns: usize) -> PathBuf {
    let origin = direction.origin();
    let mut transcript = handoff_transcript::synthetic::tool_turns(turns, &origin);
    transcript.cwd = Some("/home/dev/proj".into());
    let (plugin, target) = direction.source();
    let root = StoreRoot::new(dir.join("source")).expect("root");
    let session = plugin
        .writer()
        .create(&root, target, &transcript, &CreateOptions::default())
        .expect("write the source session");
    session.path
}

/// Rounds of the floor, the continuation and the third child at a large size (each child first in
/// one round; medians).
const LARGE_RUNS: usize = 3;

/// Bytes a generated turn takes in either format, about (3.6 KB of text; a 64 KiB image every
/// 20th turn, base64).
const LARGE_BYTES_A_TURN: u64 = 3_700 + (64 << 10) * 4 / 3 / 20;

/// The large sizes: a generated session of about `mb` MB in each direction's source format
/// (`synthetic::LongSession`: the tool turns, a 64 KiB image every 20th turn, a compaction every
/// 500th), written into a temp dir and removed after; the floor, the continuation and a third
/// child run in [`LARGE_RUNS`] rounds, each child first in one of them; medians of wall and CPU
/// time as ratios to the floor's, and each one's peak (VmHWM, the whole process). The third
/// child continues with everything on the heap, as before it went to temporary files: the Claude
/// Code reader's index (`HANDOFF_CLAUDE_SPILL_RECORDS`) and the id sets (`HANDOFF_SPILL_IDS`)
/// past any session; its wall ratio and peak are the last two columns. With `into` (`--to pi`, `--to gemini-cli`) the
/// one direction is Claude Code → that target; into pi, the third child writes pi as before it
/// streamed ([`HeldPi`]: the whole transcript held): "heap" is then "held". With `before`
/// (`--before EXE`, another build of this bench), the third child is that build's continuation
/// in the same direction: "heap" is then "before".
fn large(sizes: &[u64], into: Option<Direction>, before: Option<&Path>) {
    let into_pi = matches!(into, Some(Direction::ClaudeToPi));
    let directions = into.map_or(Direction::ALL.to_vec(), |d| vec![d]);
    println!(
        "{:>17} {:>9} {:>8} {:>10} {:>12} {:>6} {:>10} {:>11} {:>14} {:>11} {:>14}",
        "direction",
        "input MB",
        "events",
        "floor ms",
        "continue ms",
        "ratio",
        "CPU ratio",
        "floor peak",
        "continue peak",
        "heap ratio",
        "heap peak"
    );
    // The third child of each round: the build `before`, pi held, or everything on the heap.
    let third_child = |direction: Direction, source: &Path| {
        let (peak, wall, _) = if let Some(exe) = before {
            run_exe(exe, "continue-whole", direction, source, &[])
        } else if into_pi {
            run_child("continue-whole", Direction::ClaudeToPiHeld, source)
        } else {
            let heap_index = [
                ("HANDOFF_CLAUDE_SPILL_RECORDS", usize::MAX.to_string()),
                ("HANDOFF_SPILL_IDS", usize::MAX.to_string()),
            ];
            run_child_with("continue-whole", direction, source, &heap_index)
        };
        (peak, wall)
    };
    for &size in sizes {
        for &direction in &directions {
            let dir = tempfile::tempdir().expect("temp dir");
            let (source, events) = write_large_source(dir.path(), direction, size);
            let input = std::fs::metadata(&source).expect("source").len();
            let (mut floors, mut conts) = (Vec::new(), Vec::new());
            let (mut floor_cpus, mut cont_cpus) = (Vec::new(), Vec::new());
            let (mut floor_peak, mut cont_peak) = (0, 0);
            let (mut heaps, mut heap_peak) = (Vec::new(), 0);
            // The three children take turns at going first: on a VM a run right after another
            // reuses the page cache that one freed, where fresh memory costs system time on
            // first touch, so a fixed order favours whichever runs second.
            for round in 0..LARGE_RUNS {
                for child in 0..3 {
                    match (round + child) % 3 {
                        0 => {
                            let (peak, wall, cpu) = run_child("floor-whole", direction, &source);
                            floor_peak = floor_peak.max(peak);
                            floors.push(wall);
                            floor_cpus.push(cpu);
                        }
                        1 => {
                            let (peak, wall, cpu) = run_child("continue-whole", direction, &source);
                            cont_peak = cont_peak.max(peak);
                            conts.push(wall);
                            cont_cpus.push(cpu);
                        }
                        _ => {
                            let (peak, wall) = third_child(direction, &source);
                            heap_peak = heap_peak.max(peak);
                            heaps.push(wall);
                        }
                    }
                }
            }
            let (floor, cont) = (median(floors), median(conts));
            let (floor_cpu, cont_cpu) = (median(floor_cpus), median(cont_cpus));
            let heap = median(heaps);
            println!(
                "{:>17} {:>9.1} {:>8} {:>10.0} {:>12.0} {:>5.2}× {:>9.2}× {:>8.1} MiB {:>11.1} MiB {:>10.2}× {:>11.1} MiB",
                direction.name(),
                input as f64 / 1e6,
                events,
                ms(floor),
                ms(cont),
                cont.as_secs_f64() / floor.as_secs_f64(),
                cont_cpu.as_secs_f64() / floor_cpu.as_secs_f64(),
                mib(floor_peak),
                mib(cont_peak),
                heap.as_secs_f64() / floor.as_secs_f64(),
                mib(heap_peak),
            );
        }
    }
}

/// Writes a generated session of about `mb` MB in the direction's source format with its own
/// plugin's streamed writer (never held); returns its path and its number of events.
fn write_large_source(dir: &Path, direction: Direction, mb: u64) -> (PathBuf, usize) {
    struct Generated(handoff_transcript::synthetic::LongSession, usize);
    impl handoff_host::EventStream for Generated {
        fn next_event(&mut self) -> Result<Option<handoff_host::Event>, handoff_host::PluginError> {
            let next = self.0.next();
            self.1 += usize::from(next.is_some());
            Ok(next)
        }
        fn whole(&mut self) -> Result<&handoff_host::Transcript, handoff_host::PluginError> {
            Err(handoff_host::PluginError::Other(
                "the generated session is streamed, never held".into(),
            ))
        }
    }
    let turns = ((mb << 20) / LARGE_BYTES_A_TURN) as usize;
    let origin = direction.origin();
    let mut events = Generated(
        handoff_transcript::synthetic::LongSession::new(turns, &origin, (20, 64 << 10), 500),
        0,
    );
    let (plugin, target) = direction.source();
    let root = StoreRoot::new(dir.join("source")).expect("root");
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        ..CreateOptions::default()
    };
    let session = plugin
        .writer()
        .create_streamed(&root, target, &mut events, &options)
        .expect("write the source session");
    (session.path, events.1)
}

/// The floor: read the source line by line, parse each line into a JSON value and serialise it
/// again through a buffered writer into `out` (constant memory).
fn floor_pass(source: &Path, out: &Path) {
    let reader = std::io::BufReader::new(std::fs::File::open(source).expect("open"));
    let mut writer = std::io::BufWriter::new(std::fs::File::create(out).expect("create"));
    for line in reader.lines() {
        let line = line.expect("read");
        let value: serde_json::Value = serde_json::from_str(&line).expect("json");
        serde_json::to_writer(&mut writer, &value).expect("write");
        writer.write_all(b"\n").expect("write");
    }
    writer.flush().expect("flush");
}

/// Reading the source alone, streamed as a continuation reads it, for its own time and peak
/// memory.
fn read_pass(direction: Direction, source: &Path) {
    let (plugin, target) = direction.source();
    plugin
        .reader()
        .read_each(ReadFrom::File(target, source), &mut |event| {
            std::hint::black_box(event);
            true
        })
        .expect("read the source");
}

/// What `handoff continue --from SOURCE:PATH --to TARGET` does: read the source, write the target
/// session, read it back and compare, plan the resume.
fn continue_pass(direction: Direction, source: &Path, target_root: &Path) {
    one_pass(direction.source(), direction.target(), source, target_root);
}

/// Where the time of one continuation goes (printed to stderr, for the docs): the phases the
/// engine itself marks (see [`timed_phases`]).
fn phases(direction: Direction, source: &Path, target_root: &Path, floor: Duration) {
    let spans = timed_phases(direction.source(), direction.target(), source, target_root);
    let of_floor = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
    let shown: Vec<String> = PHASES
        .iter()
        .zip(spans)
        .map(|((_, name), d)| format!("{name} {:.0} ms ({:.2}×)", ms(d), of_floor(d)))
        .collect();
    eprintln!(
        "  {} phases (× the floor): {}",
        direction.name(),
        shown.join(", ")
    );
}

/// The engine's phase marks (its `phase` debug events) and what the time up to each is called.
const PHASES: [(&str, &str); 5] = [
    ("locked", "start (source cwd, lock, recovery)"),
    ("journaled", "look-up and journal"),
    ("written", "read source ∥ write"),
    ("verified", "verify"),
    ("end", "commit and plan"),
];

/// Records when each `phase` event of the engine happens.
struct PhaseClock(std::sync::Arc<std::sync::Mutex<Vec<(String, Instant)>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for PhaseClock {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Phase(Option<String>);
        impl tracing::field::Visit for Phase {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "phase" {
                    self.0 = Some(value.to_owned());
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut phase = Phase(None);
        event.record(&mut phase);
        if let Some(name) = phase.0 {
            self.0.lock().unwrap().push((name, Instant::now()));
        }
    }
}

/// One continuation with these plugins, timed between the engine's phase marks.
fn timed_phases(
    source: (&dyn Plugin, &str),
    target: (&dyn Plugin, &str),
    path: &Path,
    root: &Path,
) -> [Duration; 5] {
    use tracing_subscriber::layer::SubscriberExt as _;
    let marks = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(PhaseClock(marks.clone()));
    let start = Instant::now();
    tracing::subscriber::with_default(subscriber, || one_pass(source, target, path, root));
    let end = Instant::now();
    let marks = marks.lock().unwrap();
    let at = |name: &str| {
        if name == "end" {
            return end;
        }
        marks
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .unwrap_or_else(|| panic!("the engine marked no {name} phase"))
    };
    let mut previous = start;
    PHASES.map(|(name, _)| {
        let t = at(name);
        let d = t.duration_since(previous);
        previous = t;
        d
    })
}

/// One phase in a process of its own: prints its peak memory (VmHWM less the resident size
/// before), its wall time and its CPU time (all its threads) in nanoseconds, the work only (not
/// the process's start, nor the removal of what it wrote).
fn child(phase: &str, direction: Direction, source: &Path) {
    // The large sizes report the whole process's peak, as the limit is the process's.
    let (phase, whole) = match phase.strip_suffix("-whole") {
        Some(phase) => (phase, true),
        None => (phase, false),
    };
    let before = if whole { 0 } else { vm("VmRSS") };
    let scratch = tempfile::tempdir().expect("temp dir");
    if phase == "phases" {
        // For A/B comparisons by hand: the continuation's phases, in ms.
        let root = scratch.path().join("target");
        let spans = timed_phases(direction.source(), direction.target(), source, &root);
        let shown: Vec<String> = spans.iter().map(|d| format!("{:.0}", ms(*d))).collect();
        println!("{}", shown.join(" "));
        return;
    }
    let (start, cpu_start) = (Instant::now(), cpu_time());
    match phase {
        "floor" => floor_pass(source, &scratch.path().join("floor.jsonl")),
        "read" => read_pass(direction, source),
        _ => continue_pass(direction, source, &scratch.path().join("target")),
    }
    let (elapsed, cpu) = (start.elapsed(), cpu_time().saturating_sub(cpu_start));
    let peak = vm("VmHWM");
    settle(scratch);
    let mut out = std::io::stdout();
    writeln!(
        out,
        "{} {} {}",
        peak.saturating_sub(before),
        elapsed.as_nanos(),
        cpu.as_nanos()
    )
    .expect("stdout");
}

/// The CPU time this process has used so far, on all its threads (ended ones too): what a
/// continuation costs whatever else the machine runs, where its wall time on two cores depends
/// on a second core being free.
fn cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a plain system call that writes the clock's value into `now`.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Writes back what a child wrote and removes it, untimed, before the next child starts: the
/// floor leaves its output to the kernel's writeback (the continuation syncs its session, as a
/// store must), and on two cores that writeback, run during the next child, was measured as that
/// child's time (the continuation's two threads lose the most to it).
fn settle(scratch: tempfile::TempDir) {
    let parent = scratch.path().parent().map(Path::to_owned);
    for entry in walk(scratch.path()) {
        if let Ok(file) = std::fs::File::open(&entry) {
            let _ = file.sync_all();
        }
    }
    drop(scratch);
    // The removal too: syncing the folder commits the file system's journal.
    if let Some(file) = parent.and_then(|p| std::fs::File::open(p).ok()) {
        let _ = file.sync_all();
    }
}

/// The files under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(entry.path()),
                Ok(_) => files.push(entry.path()),
                Err(_) => {}
            }
        }
    }
    files
}

fn peak_of(phase: &str, direction: Direction, source: &Path) -> u64 {
    run_child(phase, direction, source).0
}

/// Runs [`child`]: its peak memory in bytes, its wall time and its CPU time.
fn run_child(phase: &str, direction: Direction, source: &Path) -> (u64, Duration, Duration) {
    run_child_with(phase, direction, source, &[])
}

/// [`run_child`] with these variables in the child's environment.
fn run_child_with(
    phase: &str,
    direction: Direction,
    source: &Path,
    env: &[(&str, String)],
) -> (u64, Duration, Duration) {
    let exe = std::env::current_exe().expect("exe");
    run_exe(&exe, phase, direction, source, env)
}

/// [`run_child_with`] of another build of this bench (`--before`).
fn run_exe(
    exe: &Path,
    phase: &str,
    direction: Direction,
    source: &Path,
    env: &[(&str, String)],
) -> (u64, Duration, Duration) {
    let out = std::process::Command::new(exe)
        .args(["--child", phase, direction.name()])
        .arg(source)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut numbers = text
        .split_whitespace()
        .map(|n| n.parse::<u64>().expect("a number"));
    let peak = numbers.next().expect("the peak");
    let nanos = numbers.next().expect("the time");
    let cpu = numbers.next().expect("the CPU time");
    (peak, Duration::from_nanos(nanos), Duration::from_nanos(cpu))
}

/// A `/proc/self/status` field in bytes.
fn vm(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Bytes in MiB (what the peaks are shown in).
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The built-in plugins' `.so` files (`plugins/<p>/so`, dev-dependencies of this crate, so the
/// `cargo bench` that builds this bench built them beside it), loaded as `handoff` loads a plugin
/// file: its bytes read once, then `loader::load_bytes` (the registry's call after the
/// certificate check, which is not timed here).
struct PluginFiles {
    claude: handoff_host::loader::LoadedPlugin,
    codex: handoff_host::loader::LoadedPlugin,
}

impl PluginFiles {
    fn load() -> (PluginFiles, Duration) {
        let start = Instant::now();
        let files = PluginFiles {
            claude: load_plugin_file("handoff_plugin_claude"),
            codex: load_plugin_file("handoff_plugin_codex"),
        };
        (files, start.elapsed())
    }

    /// The direction's source and target, as plugin files.
    fn of(&self, direction: Direction) -> ((&dyn Plugin, &str), (&dyn Plugin, &str)) {
        let (claude, codex) = (
            (&self.claude as &dyn Plugin, "claude-code"),
            (&self.codex as &dyn Plugin, "codex"),
        );
        match direction {
            Direction::ClaudeToCodex => (claude, codex),
            Direction::CodexToClaude => (codex, claude),
            _ => panic!("only Claude Code and Codex are compared through plugin files"),
        }
    }
}

fn load_plugin_file(name: &str) -> handoff_host::loader::LoadedPlugin {
    let exe = std::env::current_exe().expect("exe");
    let deps = exe.parent().expect("the bench is in a folder");
    let file = format!("lib{name}.so");
    let path = [deps.join(&file), deps.join("..").join(&file)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{file} is not beside {}", exe.display()));
    let bytes = std::fs::read(&path).expect("read the plugin file");
    handoff_host::loader::load_bytes(&path, bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The continuation of [`continue_pass`] through the plugin files instead of the built-ins, timed
/// alternately with the built-in path (A, B, A, B, …) so both see the same machine, and printed
/// as their ratio.
fn through_plugin_files(direction: Direction, turns: usize, dir: &Path, source: &Path) {
    let (files, load) = PluginFiles::load();
    let ((source_plugin, source_target), (plugin, target)) = files.of(direction);
    let (mut builtin, mut loaded) = (Vec::new(), Vec::new());
    let (mut builtin_phases, mut loaded_phases) = (Vec::new(), Vec::new());
    for i in 0..PLUGIN_FILE_RUNS {
        let root = dir.join(format!("builtin-{i}"));
        builtin.push(time(|| continue_pass(direction, source, &root)));
        let root = dir.join(format!("plugin-files-{i}"));
        loaded.push(time(|| {
            one_pass(
                (source_plugin, source_target),
                (plugin, target),
                source,
                &root,
            )
        }));
        let root = dir.join(format!("builtin-phases-{i}"));
        builtin_phases.push(timed_phases(
            direction.source(),
            direction.target(),
            source,
            &root,
        ));
        let root = dir.join(format!("plugin-files-phases-{i}"));
        loaded_phases.push(timed_phases(
            (source_plugin, source_target),
            (plugin, target),
            source,
            &root,
        ));
    }
    let (builtin, loaded) = (median(builtin), median(loaded));
    let phase = |runs: &[[Duration; 5]], k: usize| median(runs.iter().map(|p| p[k]).collect());
    let ratios: Vec<String> = PHASES
        .iter()
        .enumerate()
        .map(|(k, (_, name))| {
            let (b, l) = (phase(&builtin_phases, k), phase(&loaded_phases, k));
            format!(
                "{name} {:.0}/{:.0} ms ({:+.0})",
                ms(l),
                ms(b),
                ms(l) - ms(b)
            )
        })
        .collect();
    eprintln!(
        "  {} {turns}: phases through the plugin files / built in: {}",
        direction.name(),
        ratios.join(", ")
    );
    eprintln!(
        "  {} {turns}: through the plugin files: {:.0} ms against {:.0} ms built in, {:.3}× (loading both files: {:.0} ms, once per process)",
        direction.name(),
        ms(loaded),
        ms(builtin),
        loaded.as_secs_f64() / builtin.as_secs_f64(),
        ms(load),
    );
}

/// What [`continue_pass`] does, with these plugins for the source and the target.
#[inline(never)]
fn one_pass(
    (source_plugin, source_target): (&dyn Plugin, &str),
    (plugin, target): (&dyn Plugin, &str),
    source: &Path,
    root: &Path,
) {
    let root = StoreRoot::new(root).expect("root");
    let done = continue_conversation(
        plugin,
        &ContinueRequest {
            source: Source::File(SourceFile {
                reader: source_plugin.reader(),
                target: source_target,
                path: source,
                cli_version: None,
            }),
            locator: Some("bench"),
            target,
            root: &root,
            seal: handoff_host::seal::Seal::of_this_process(),
            cwd: None,
            prompt: "go on",
            // Gemini CLI has no record for a compaction: the generated session's are dropped, as
            // `--drop compaction` drops them.
            drop: if target == "gemini-cli" {
                &[handoff_host::Feature::Compaction]
            } else {
                &[]
            },
            lock_wait: Duration::from_secs(5),
            into: None,
        },
    )
    .expect("continue");
    std::hint::black_box(done);
}
