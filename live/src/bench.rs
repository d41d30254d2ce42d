//! Benchmark harnesses every plugin runs the same way.
//!
//! [`memory`]: the peak memory of a target's write, read and streamed read (`read_each`, what the
//! continuation engine's verify uses) against the size of the file written. Linux only: the peak
//! is VmHWM from /proc/self/status, reset before each step by writing 5 to /proc/self/clear_refs,
//! minus the resident size at that moment. Reads run in a fresh process (the bench binary
//! re-executes itself), so memory freed while building the transcript cannot hide a read's peak.

use std::path::Path;

use handoff_host::{ById, CreateOptions, Plugin, StoreRoot, Transcript};

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
