//! Benchmark harnesses every plugin runs the same way.
//!
//! [`memory`]: the peak memory of a target's write, read and streamed read (`read_each`, what the
//! continuation engine's verify uses) against the size of the file written. Linux only: the peak
//! is VmHWM from /proc/self/status, reset before each step by writing 5 to /proc/self/clear_refs,
//! minus the resident size at that moment. Reads run in a fresh process (the bench binary
//! re-executes itself), so memory freed while building the transcript cannot hide a read's peak.
//!
//! [`tool_session`]: the session the write + read benches of codex, pi and gemini-cli write,
//! one definition with each CLI's own tool call, so their figures compare; [`serde_floor`]: what
//! they measure it against; `store_group` (feature `criterion`): those benches themselves, one
//! criterion group a target.

use std::path::Path;

use handoff_host::{ById, CreateOptions, Plugin, StoreRoot, Transcript};
use handoff_transcript::{AssistantPart, Body, Event, Origin, Part, Timestamp, ToolCall};

/// How many turns a [`tool_session`] has.
pub const TURNS: usize = 5_000;

/// The tool call each turn of a [`tool_session`] makes, as the target's CLI names it.
pub struct BenchCall<'a> {
    /// The call id before the turn's six digits (`call_` makes `call_000042`).
    pub id_prefix: &'a str,
    /// The tool.
    pub name: &'a str,
    /// Its arguments, the same every turn.
    pub arguments: serde_json::Value,
}

/// [`TURNS`] turns of a user prompt → assistant text + `call` → ~1.3 KB tool output → assistant
/// text, `origin` on every assistant event, events 7 ms apart, in `/home/dev/proj` (about 18 MB
/// as a Codex rollout). Event ids: `u`, `a`, `r`, `b` and the turn.
pub fn tool_session(origin: Origin, call: &BenchCall) -> Transcript {
    let output =
        "drwxr-xr-x  2 dev dev 4096 Nov 30 00:41 src/main.rs and some more text\n".repeat(18);
    let origin = Some(origin);
    let mut events = Vec::with_capacity(TURNS * 4);
    let mut ms = 1_795_999_300_000i64;
    let mut next = || {
        ms += 7;
        Timestamp::from_millis(ms)
    };
    for turn in 0..TURNS {
        let call_id = format!("{}{turn:06}", call.id_prefix);
        let mut push = |letter: char, body: Body| {
            events.push(Event::new(format!("{letter}{turn}"), next(), body));
        };
        push(
            'u',
            Body::User {
                content: vec![Part::text(format!(
                    "Turn {turn}: please list the files in the project and tell me what changed since the last turn."
                ))],
            },
        );
        let text = "I will list the files in the project directory first, then compare.";
        let tool_call = ToolCall::new(call_id.clone(), call.name, call.arguments.clone());
        push(
            'a',
            Body::Assistant {
                content: vec![
                    AssistantPart::text(text),
                    AssistantPart::ToolCall(tool_call),
                ],
                origin: origin.clone(),
            },
        );
        push(
            'r',
            Body::ToolResult {
                call_id,
                content: vec![Part::text(output.clone())],
                is_error: false,
            },
        );
        push(
            'b',
            Body::Assistant {
                content: vec![AssistantPart::text(
                    "The project has one source directory with the main file; nothing changed since the last turn, \
                     so the build should still pass. Let me know what you would like to do next.",
                )],
                origin: origin.clone(),
            },
        );
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

/// The serde_json floor of a JSONL file's bytes: parse every line into a `Value` and serialise it
/// again; returns the bytes written.
pub fn serde_floor(bytes: &[u8]) -> usize {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let value: serde_json::Value = serde_json::from_slice(line).expect("valid line");
        serde_json::to_writer(&mut out, &value).expect("serialises");
        out.push(b'\n');
    }
    out.len()
}

/// How small a streamed read must stay.
#[derive(Clone, Copy, Debug)]
pub enum StreamLimit {
    /// At most a quarter of the file (a reader that streams holds one record at a time).
    QuarterOfFile,
    /// No more than the whole read (a reader that must see the whole tree before it can stream).
    NotAboveRead,
}

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} not in /proc/self/status"))
}

/// Resets the peak and returns the resident size now, in bytes.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    status_kb("VmRSS:") * 1024
}

fn peak_since(base: u64) -> u64 {
    (status_kb("VmHWM:") * 1024).saturating_sub(base)
}

/// Reads the session in a fresh process of this binary; returns the peak it printed.
fn read_in_child(mode: &str, root: &Path, id: &str, events: usize) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().expect("own path"))
        .args([mode, &root.to_string_lossy(), id, &events.to_string()])
        .output()
        .expect("run the read child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the child prints its peak")
}

/// The child's side: reads (or streams) the session and prints its peak.
fn child(plugin: &dyn Plugin, target: &str, mode: &str, args: &[String]) {
    let root = StoreRoot::new(&args[0]).expect("store root");
    let (id, expected): (&str, usize) = (&args[1], args[2].parse().expect("event count"));
    let base = reset_peak();
    let events = if mode == "--read" {
        plugin
            .read_id(&root, target, id)
            .expect("read")
            .events
            .len()
    } else {
        let mut n = 0;
        plugin
            .read_each_id(&root, target, id, &mut |_| {
                n += 1;
                true
            })
            .expect("read_each");
        n
    };
    let peak = peak_since(base);
    assert_eq!(events, expected, "{mode} read {events} events");
    println!("{peak}");
}

/// The memory bench of `target`: call it from a bench binary's `main`. `make` builds the
/// transcript written (only in the parent process). Prints the peaks as ratios to the file and
/// asserts write and read stay within 2× the file and the streamed read within `stream`.
pub fn memory(
    plugin: &dyn Plugin,
    target: &str,
    make: impl FnOnce() -> Transcript,
    stream: StreamLimit,
) {
    let args: Vec<String> = std::env::args().collect();
    for mode in ["--read", "--read-each"] {
        if let Some(i) = args.iter().position(|a| a == mode) {
            return child(plugin, target, mode, &args[i + 1..]);
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join("store")).expect("store root");
    let transcript = make();
    let events = transcript.events.len();

    let base = reset_peak();
    let session = plugin
        .writer()
        .create(&root, target, &transcript, &CreateOptions::default())
        .expect("create");
    let write_peak = peak_since(base);
    let file = std::fs::metadata(&session.path).expect("stat").len();
    drop(transcript);

    let read_peak = read_in_child("--read", root.path(), &session.id, events);
    let stream_peak = read_in_child("--read-each", root.path(), &session.id, events);

    let mb = |b: u64| b as f64 / 1e6;
    let of_file = |b: u64| b as f64 / file as f64;
    println!("file: {:.1} MB", mb(file));
    println!(
        "write: peak +{:.1} MB ({:.2}x the file), beyond the transcript it is given",
        mb(write_peak),
        of_file(write_peak)
    );
    println!(
        "read: peak +{:.1} MB ({:.2}x the file), including the transcript it returns",
        mb(read_peak),
        of_file(read_peak)
    );
    println!(
        "read_each: peak +{:.1} MB ({:.2}x the file), streaming every event to a sink that drops it",
        mb(stream_peak),
        of_file(stream_peak)
    );
    let stream_max = match stream {
        StreamLimit::QuarterOfFile => file / 4,
        StreamLimit::NotAboveRead => read_peak,
    };
    assert!(
        stream_peak <= stream_max,
        "read_each peak {stream_peak} B is above {stream_max} B ({stream:?}): is it streaming?"
    );
    assert!(
        read_peak <= 2 * file,
        "read peak {read_peak} B exceeds 2x the file ({file} B)"
    );
    assert!(
        write_peak <= 2 * file,
        "write peak {write_peak} B exceeds 2x the file ({file} B)"
    );
}

/// The write + read benches of `target`, one criterion group (`<target>-5000-turns`) whose
/// figures compare across plugins: `transcript` is written once and must read back equal; then
/// the floor ([`serde_floor`] of that file), write + read, write, read and `read_each` (as the
/// continuation engine's verify reads), after [`interleaved`]'s alternated ratios.
#[cfg(feature = "criterion")]
pub fn store_group(
    c: &mut criterion::Criterion,
    plugin: &dyn Plugin,
    target: &str,
    transcript: &Transcript,
    options: &CreateOptions,
) {
    use handoff_host::ReadFrom;

    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join("store")).expect("store root");
    let create = || {
        let session = plugin.writer().create(&root, target, transcript, options);
        session.expect("create")
    };
    let sample = create();
    let bytes = std::fs::read(&sample.path).expect("read the sample");
    eprintln!(
        "synthetic session: {TURNS} turns, {} events, {:.1} MB",
        transcript.events.len(),
        bytes.len() as f64 / 1e6
    );
    let back = plugin.read_id(&root, target, &sample.id).expect("read");
    let manifest = plugin.manifest();
    let comparison = manifest.target(target).expect("the target").comparison();
    comparison
        .diff(transcript, &back)
        .expect("the sample reads back equal");
    interleaved(&sample.path, || {
        let session = create();
        let back = plugin.reader().read(ReadFrom::Session(&root, &session));
        std::hint::black_box(back.expect("read"));
        plugin.writer().remove(&root, &session).expect("remove");
    });

    let mut group = c.benchmark_group(format!("{target}-{TURNS}-turns"));
    group.sample_size(10);
    group.bench_function("serde_json floor (read file, parse + re-serialise)", |b| {
        b.iter(|| serde_floor(&std::fs::read(&sample.path).expect("read")))
    });
    group.bench_function("write + read (create, read back, remove)", |b| {
        b.iter(|| {
            let session = create();
            let back = plugin.reader().read(ReadFrom::Session(&root, &session));
            assert_eq!(back.expect("read").events.len(), transcript.events.len());
            plugin.writer().remove(&root, &session).expect("remove");
        })
    });
    group.bench_function("write (create)", |b| {
        b.iter(|| std::fs::remove_file(create().path).expect("remove"))
    });
    group.bench_function("read", |b| {
        b.iter(|| {
            plugin
                .reader()
                .read(ReadFrom::File(target, &sample.path))
                .expect("read")
        })
    });
    group.bench_function("read_each (streamed, as the engine's verify reads)", |b| {
        b.iter(|| {
            let mut events = 0usize;
            let from = ReadFrom::Session(&root, &sample);
            let read = plugin.reader().read_each(from, &mut |_| {
                events += 1;
                true
            });
            read.expect("read_each");
            events
        })
    });
    group.finish();
}

/// The floor (of the file at `sample`) and `write_and_read`, alternated so that load from other
/// processes hits both alike: prints the median of each and of the pairs' ratios, in wall time
/// and in this thread's CPU time.
pub fn interleaved(sample: &Path, mut write_and_read: impl FnMut()) {
    const PAIRS: usize = 15;
    let mut wall: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut time = |which: usize, work: &mut dyn FnMut()| {
        let (started, cpu_started) = (std::time::Instant::now(), thread_cpu_ns());
        work();
        wall[which].push(started.elapsed().as_secs_f64() * 1e3);
        cpu[which].push((thread_cpu_ns() - cpu_started) as f64 / 1e6);
    };
    for _ in 0..PAIRS {
        time(0, &mut || {
            let bytes = std::fs::read(sample).expect("read");
            std::hint::black_box(serde_floor(&bytes));
        });
        time(1, &mut write_and_read);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (what, [floor, ours]) in [("wall", &mut wall), ("cpu", &mut cpu)] {
        let mut ratios: Vec<f64> = ours.iter().zip(floor.iter()).map(|(o, f)| o / f).collect();
        let ratio = median(&mut ratios);
        eprintln!(
            "interleaved, {PAIRS} pairs, {what} time: floor median {:.0} ms, write + read median \
             {:.0} ms, ratio median {ratio:.2} (min {:.2}, max {:.2})",
            median(floor),
            median(ours),
            ratios[0],
            ratios[PAIRS - 1]
        );
    }
}

/// CPU time of this thread so far (user + system), from `/proc/thread-self/schedstat`: what the
/// work cost, whatever else the machine was doing; waits (fsync, other processes) are not in it.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
