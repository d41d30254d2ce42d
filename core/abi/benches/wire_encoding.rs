//! What it costs to move a transcript across the plugin boundary, by encoding: the measurements
//! behind the choice of `abi::codec` for the v3 capability ids (docs/abi.md).
//!
//! Each candidate encodes a transcript of the continue bench's shape on one side and decodes it
//! into owned events on the other, per event or as a whole; the figure is the median of several
//! runs, printed as a ratio to one `clone()` of the same transcript (every string copied once:
//! the least any crossing into the other library's heap can cost), measured in the same run.
//!
//! Run: `cargo bench -p handoff-abi --bench wire_encoding` (add `-- --quick` for
//! 5,000 turns only).

use std::time::{Duration, Instant};

use handoff_abi::codec;
use handoff_transcript::{Event, Origin, Transcript};

const RUNS: usize = 7;

/// The continue bench's session: user → assistant text + tool call → ~1.3 KB tool result →
/// assistant text, `turns` times.
fn transcript(turns: usize) -> Transcript {
    let origin = Origin::new("anthropic", "claude-opus-4-8", "anthropic-messages");
    handoff_transcript::synthetic::tool_turns(turns, &origin)
}

/// One candidate: encodes and decodes the transcript, returning the decoded events (checked
/// against the original once, outside the timing).
type Candidate = fn(&Transcript) -> Vec<Event>;

fn clone_once(t: &Transcript) -> Vec<Event> {
    t.events.clone()
}

/// The v1/v2 path: the whole transcript as one JSON document.
fn json_whole(t: &Transcript) -> Vec<Event> {
    let text = serde_json::to_string(t).expect("encode");
    serde_json::from_str::<Transcript>(&text)
        .expect("decode")
        .events
}

/// JSON per event, into one reused buffer (a streamed JSON form).
fn json_per_event(t: &Transcript) -> Vec<Event> {
    let mut buffer = Vec::new();
    let mut out = Vec::with_capacity(t.events.len());
    for event in &t.events {
        buffer.clear();
        serde_json::to_writer(&mut buffer, event).expect("encode");
        out.push(serde_json::from_slice(&buffer).expect("decode"));
    }
    out
}

/// CBOR (a self-describing binary serde format: it can `deserialize_any`, which the model's
/// tagged enums and `serde_json::Value` need) per event.
fn cbor_per_event(t: &Transcript) -> Vec<Event> {
    let mut buffer = Vec::new();
    let mut out = Vec::with_capacity(t.events.len());
    for event in &t.events {
        buffer.clear();
        ciborium::into_writer(event, &mut buffer).expect("encode");
        out.push(ciborium::from_reader(buffer.as_slice()).expect("decode"));
    }
    out
}

/// `#[repr(C)]` mirror types of the model, at their least: each string copied into the other
/// library's own string type and out again into a `String` (a vector another library allocated
/// is never adopted), i.e. two clones, not counting the JSON text its `Value`s would still need.
/// Measured as clones so this bench stays off the FFI types, which live in the ABI glue only.
fn mirror_lower_bound(t: &Transcript) -> Vec<Event> {
    let there = t.events.clone();
    let back = there.clone();
    drop(there);
    back
}

/// The v3 form: `abi::codec`, in batches of ~64 KiB as the SDK streams them.
fn codec_batches(t: &Transcript) -> Vec<Event> {
    let mut encoder = codec::Encoder::new();
    let mut out = Vec::with_capacity(t.events.len());
    let flush = |encoder: &mut codec::Encoder, out: &mut Vec<Event>| {
        codec::decode_events(encoder.batch(), &mut |e| {
            out.push(e);
            true
        })
        .expect("decode");
        encoder.clear();
    };
    for event in &t.events {
        encoder.push(event);
        if encoder.len() >= 64 * 1024 {
            flush(&mut encoder, &mut out);
        }
    }
    flush(&mut encoder, &mut out);
    out
}

/// The v3 form as a writer receives it: one batch.
fn codec_whole(t: &Transcript) -> Vec<Event> {
    codec::decode_all(&codec::encode_events(&t.events)).expect("decode")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // For profiling one candidate: `--only codec` keeps those whose name contains "codec".
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args[i + 1].clone());
    let sizes: &[usize] = if quick { &[5_000] } else { &[5_000, 25_000] };
    let all: [(&str, Candidate); 7] = [
        ("clone once (the least a crossing costs)", clone_once),
        ("JSON, whole transcript (v1/v2)", json_whole),
        ("JSON per event", json_per_event),
        ("CBOR per event (ciborium)", cbor_per_event),
        ("FFI mirror types, lower bound", mirror_lower_bound),
        ("abi::codec, 64 KiB batches (v3 read)", codec_batches),
        ("abi::codec, one batch (v3 write)", codec_whole),
    ];
    let candidates: Vec<(&str, Candidate)> = all
        .into_iter()
        .filter(|(name, _)| only.as_ref().is_none_or(|o| name.contains(o.as_str())))
        .collect();
    for &turns in sizes {
        let t = transcript(turns);
        println!("{turns} turns ({} events):", t.events.len());
        let mut baseline = None;
        // Interleaved: every candidate once per round, so each sees the same machine.
        let mut times = vec![Vec::new(); candidates.len()];
        for (name, candidate) in &candidates {
            assert!(candidate(&t) == t.events, "{name} does not round-trip");
        }
        for _ in 0..RUNS {
            for (i, (_, candidate)) in candidates.iter().enumerate() {
                let start = Instant::now();
                let events = candidate(&t);
                times[i].push(start.elapsed());
                drop(events);
            }
        }
        for ((name, _), times) in candidates.iter().zip(times) {
            let m = median(times);
            let base = *baseline.get_or_insert(m);
            println!(
                "  {name:<42} {:>8.1} ms  {:>5.2}× a clone",
                m.as_secs_f64() * 1e3,
                m.as_secs_f64() / base.as_secs_f64()
            );
        }
    }
}
