//! Peak memory of write, read and streamed read (`read_each`, what the continuation engine's
//! verify uses) of the synthetic 5,000-turn session, against the file size.
//!
//! `cargo bench -p handoff-pi --bench memory`. Linux only: the peak is VmHWM from /proc/self/status, reset before each step by writing 5 to
//! /proc/self/clear_refs, minus the resident size at that moment.

use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::ById;
use handoff_sdk::{CreateOptions, Plugin, StoreRoot};

mod synthetic;

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

/// Reads the session in a fresh process (`mode`: `--read` or `--read-each`), so memory freed by
/// building the transcript cannot hide the read's own peak; prints the peak in bytes.
fn read_in_child(mode: &str, root: &std::path::Path, id: &str) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().expect("own path"))
        .args([mode, &root.to_string_lossy(), id])
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

fn child_read(root: &str, id: &str) {
    let root = StoreRoot::new(root).expect("store root");
    let base = reset_peak();
    let back = PiPlugin.read_id(&root, TARGET, id).expect("read");
    let peak = peak_since(base);
    assert_eq!(back.events.len(), synthetic::TURNS * 4);
    println!("{peak}");
}

/// Streams the session event by event, holding none of them.
fn child_read_each(root: &str, id: &str) {
    let root = StoreRoot::new(root).expect("store root");
    let base = reset_peak();
    let mut events = 0;
    PiPlugin
        .read_each_id(&root, TARGET, id, &mut |_| {
            events += 1;
            true
        })
        .expect("read_each");
    let peak = peak_since(base);
    assert_eq!(events, synthetic::TURNS * 4);
    println!("{peak}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--read") {
        return child_read(&args[i + 1], &args[i + 2]);
    }
    if let Some(i) = args.iter().position(|a| a == "--read-each") {
        return child_read_each(&args[i + 1], &args[i + 2]);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = StoreRoot::new(dir.path().join("pi")).expect("store root");
    let transcript = synthetic::transcript();

    let base = reset_peak();
    let session = PiPlugin
        .writer()
        .create(&root, TARGET, &transcript, &CreateOptions::default())
        .expect("create");
    let write_peak = peak_since(base);
    let file = std::fs::metadata(&session.path).expect("stat").len();
    drop(transcript);

    let read_peak = read_in_child("--read", root.path(), &session.id);
    let stream_peak = read_in_child("--read-each", root.path(), &session.id);

    let mb = |b: u64| b as f64 / 1e6;
    println!("file: {:.1} MB", mb(file));
    println!(
        "write: peak +{:.1} MB ({:.2}x the file), beyond the transcript it is given",
        mb(write_peak),
        write_peak as f64 / file as f64
    );
    println!(
        "read: peak +{:.1} MB ({:.2}x the file), including the transcript it returns",
        mb(read_peak),
        read_peak as f64 / file as f64
    );
    println!(
        "read_each: peak +{:.1} MB ({:.2}x the file), streaming every event to a sink that drops it",
        mb(stream_peak),
        stream_peak as f64 / file as f64
    );
    assert!(
        stream_peak <= read_peak,
        "read_each peak {stream_peak} B is above the whole read's ({read_peak} B)"
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
