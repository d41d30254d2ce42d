//! The corpus of real users' sessions (issue 27), judged by the real CLIs: every session file under
//! `tests/corpus/<cli>/` (public test fixtures and examples of other projects that read these
//! formats, and genuine sessions of the pinned CLIs; `tests/corpus/SOURCES.md` says where each
//! came from) is read by its CLI's plugin, continued by the engine into every target (written,
//! read back, verified; then again, unchanged), and for a CLI target resumed by the real CLI by
//! its id against the fake provider, whose first request must carry the whole history. A sixth
//! column, `source-cli`, is the differential harness on the file itself: the real source CLI
//! resumes it as it is, and handoff's reader must read the conversation that CLI sends.
//!
//! Each cell's outcome is compared with the committed table `tests/corpus/expected.tsv`, so a cell
//! that carried and now refuses (or fails) fails the test; so does a refused cell that now
//! carries (update the table: `HANDOFF_CORPUS_BLESS=1` rewrites it from the run).
//!
//! By default one small file per CLI runs (the CI subset, 28 cells); `HANDOFF_CORPUS_FULL=1`
//! runs every file. `HANDOFF_CORPUS_ONLY=FILE[:TARGET]` runs only the cells whose file name
//! contains FILE (and whose target is TARGET), whether or not they are in the CI subset: for
//! working on one cell; `HANDOFF_CORPUS_KEEP=1` keeps every temporary HOME of the live checks
//! with the fake provider's request log. `HANDOFF_LIVE_REQUIRED=1` makes an absent CLI a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_conformance::report::Status;
use handoff_host::continuation::{
    continue_conversation, Action, ContinueError, ContinueRequest, Source, SourceFile,
};
use handoff_host::{DropFilter, Feature, Plugin, PluginError, ReadFrom, StoreRoot, Transcript};
use handoff_live::differential::{no_side_files, run_case, Case, SideFile, GENUINE};
use handoff_live::{run_live, skips_are_failures, LiveOptions};
use serde_json::{json, Value};

/// The corpus folders, by the CLI (the source target) whose sessions they hold.
const SOURCES: [&str; 4] = ["claude-code", "codex", "pi", "gemini-cli"];

/// Every target a corpus session is continued into: the five CLIs and a stateless API history.
const TARGETS: [&str; 6] = [
    "claude-code",
    "codex",
    "pi",
    "gemini-cli",
    "openai-responses",
    "copilot-cli",
];

/// The CI subset: one small file per CLI, each with a tool call where the CLI has one.
const FAST: [&str; 4] = [
    "claude-code/session-migrate-claude-2.1.209-basic.jsonl",
    "codex/claude-code-log-rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
    "pi/session-migrate-pi-0.80.6-basic.jsonl",
    "gemini-cli/vibecodingtracker-f1f04cc-session-2d9ea14f.json",
];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn plugin_of(target: &str) -> Box<dyn Plugin> {
    match target {
        "claude-code" => Box::new(handoff_claude::ClaudePlugin),
        "codex" => Box::new(handoff_codex::CodexPlugin),
        "pi" => Box::new(handoff_pi::PiPlugin),
        "gemini-cli" => Box::new(handoff_gemini::GeminiPlugin),
        "openai-responses" => Box::new(handoff_openai::OpenaiPlugin),
        "copilot-cli" => Box::new(handoff_copilot::CopilotPlugin),
        other => panic!("no plugin for {other}"),
    }
}

/// What became of one session in one target.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// Continued (created, verified, unchanged the second time) and, for a CLI target, resumed by
    /// the real CLI with the whole history in its first request.
    Carried,
    /// Refused as it is, carried as above with `--drop` of these kinds (the reason names them).
    CarriedWithDrop(String),
    /// The source plugin could not read the file (the error).
    Unreadable(String),
    /// The engine refused to continue it into the target (the reason).
    Refused(String),
    /// Continued, but the real CLI's resume did not carry it (the failed live checks).
    Failed(String),
    /// The target's CLI is not installed here (the reason).
    Skipped(String),
    /// The source CLI's own resume and handoff's reader did not agree (the differential
    /// harness's outcome kind, and the detail).
    Differs(&'static str, String),
}

impl Outcome {
    fn kind(&self) -> &'static str {
        match self {
            Outcome::Carried => "carried",
            Outcome::CarriedWithDrop(_) => "carried-with-drop",
            Outcome::Unreadable(_) => "unreadable",
            Outcome::Refused(_) => "refused",
            Outcome::Failed(_) => "failed",
            Outcome::Skipped(_) => "skipped",
            Outcome::Differs(kind, _) => kind,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Outcome::Carried => "",
            Outcome::Unreadable(r)
            | Outcome::CarriedWithDrop(r)
            | Outcome::Refused(r)
            | Outcome::Failed(r)
            | Outcome::Skipped(r)
            | Outcome::Differs(_, r) => r,
        }
    }
}

/// One line of a reason, without the folders the run made or the corpus' own folder (so the table
/// is stable) and without tabs (the table's separator).
fn one_line(text: &str) -> String {
    let mut line = text.lines().next().unwrap_or("").replace('\t', " ");
    let corpus = format!("{}/", corpus_dir().display());
    line = line.replace(&corpus, "");
    // Every temporary folder (a scratch HOME, a tempdir) becomes `<tmp>`.
    let tmp = format!("{}/", std::env::temp_dir().display());
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find(&tmp) {
        out.push_str(&rest[..at]);
        out.push_str("<tmp>");
        let after = &rest[at + tmp.len()..];
        let end = after.find(['/', ' ', '"', ':']).unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    // The scene's project folder is named after its scratch HOME in Claude Code's slug.
    while let Some(at) = out.find("-tmp-handoff-live-") {
        let end = out[at..].find("-proj").map_or(out.len(), |e| at + e);
        out.replace_range(at..end, "-<tmp>");
    }
    match out.char_indices().nth(240) {
        Some((cut, _)) => format!("{}…", &out[..cut]),
        None => out,
    }
}

/// The evidence line that says why a live check failed: a refusal or a difference if there is
/// one, else the first line after the one naming the invocation (not a declared set-aside).
fn failure_reason(evidence: &[String]) -> &str {
    evidence
        .iter()
        .find(|l| l.contains(" rule ") || l.contains("differs from"))
        .or_else(|| {
            evidence
                .iter()
                .skip(1)
                .find(|l| !l.starts_with("set aside"))
        })
        .or(evidence.first())
        .map_or("", String::as_str)
}

/// Reads `file` (a session of `source`) and continues it into `target`, then resumes it with
/// the real CLI when `target` has one.
fn cell(source: &str, file: &Path, target: &str) -> Outcome {
    let reader = plugin_of(source);
    let transcript = match reader.reader().read(ReadFrom::File(source, file)) {
        Ok(t) => t,
        Err(e) => return Outcome::Unreadable(one_line(&e.to_string())),
    };
    let plugin = plugin_of(target);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    // Refused for a kind the target does not carry: tried again without it (`--drop KIND`), as a
    // person would, until it is carried or refused for something that cannot be dropped.
    let mut drop: Vec<Feature> = Vec::new();
    'attempt: loop {
        let scratch = tempfile::tempdir().unwrap();
        let cwd = scratch.path().join("proj");
        std::fs::create_dir(&cwd).unwrap();
        let root = StoreRoot::new(scratch.path().join("store")).unwrap();
        // As `handoff continue` does: the first time streamed from the file, the second from the
        // transcript held, which must find the session already whole.
        for expected in [Action::Created, Action::Unchanged] {
            let source_of_turn = match expected {
                Action::Created => Source::File(SourceFile {
                    reader: reader.reader(),
                    target: source,
                    path: file,
                    cli_version: None,
                }),
                _ => (&transcript).into(),
            };
            let continued = continue_conversation(
                plugin.as_ref(),
                &ContinueRequest {
                    source: source_of_turn,
                    locator: Some(&name),
                    target,
                    root: &root,
                    seal: handoff_host::seal::Seal::of_this_process(),
                    cwd: Some(cwd.display().to_string()),
                    prompt: "go on",
                    drop: &drop,
                    lock_wait: Duration::from_secs(10),
                    into: None,
                },
            );
            match continued {
                Err(ContinueError::Plugin(PluginError::NotCarried { feature, .. }))
                    if feature.droppable() && !drop.contains(&feature) =>
                {
                    drop.push(feature);
                    continue 'attempt;
                }
                Err(e) => return Outcome::Refused(one_line(&e.to_string())),
                Ok(c) if c.action != expected => {
                    return Outcome::Failed(format!(
                        "continued as {:?}, expected {expected:?}",
                        c.action
                    ))
                }
                Ok(_) => {}
            }
        }
        break;
    }
    let dropped = (!drop.is_empty()).then(|| {
        let kinds: Vec<&str> = drop.iter().map(|f| f.name()).collect();
        format!("--drop {}", kinds.join(" --drop "))
    });
    let carried = || match &dropped {
        Some(kinds) => Outcome::CarriedWithDrop(kinds.clone()),
        None => Outcome::Carried,
    };
    // What the target holds: the source without what was dropped.
    let transcript = match DropFilter::new(&drop) {
        Ok(mut filter) if !drop.is_empty() => Transcript {
            events: transcript
                .events
                .into_iter()
                .enumerate()
                .filter_map(|(i, e)| filter.apply(i, e))
                .collect(),
            ..transcript
        },
        _ => transcript,
    };
    let has_cli = plugin
        .manifest()
        .targets
        .iter()
        .any(|t| t.name == target && t.live.is_some());
    if !has_cli {
        return carried();
    }
    // The live tier writes into its own scratch HOME, in its own project folder.
    let mut transcript = transcript;
    transcript.cwd = None;
    let entry = handoff_conformance::corpus::Entry {
        name: "corpus",
        transcript,
    };
    // HANDOFF_CORPUS_KEEP=1 keeps every HOME with the fake provider's request log (a failed
    // check keeps its HOME anyway, but logs the requests only when asked from the start).
    let options = LiveOptions {
        keep_homes: std::env::var_os("HANDOFF_CORPUS_KEEP").is_some(),
        ..LiveOptions::default()
    };
    let results = run_live(plugin.as_ref(), target, &[entry], &options);
    let results: Vec<_> = results
        .into_iter()
        .filter(|r| !r.id.ends_with("/missing-id"))
        .collect();
    if results.is_empty() {
        return Outcome::Failed("the live tier ran no check".into());
    }
    if let Some(skip) = results.iter().find(|r| r.status == Status::Skip) {
        return Outcome::Skipped(one_line(&skip.evidence.join(" ")));
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.status == Status::Fail)
        .map(|r| {
            for line in &r.evidence {
                eprintln!("    {}: {line}", r.id);
            }
            format!("{}: {}", r.id, failure_reason(&r.evidence))
        })
        .collect();
    match (failed.is_empty(), &dropped) {
        (true, _) => carried(),
        (false, None) => Outcome::Failed(one_line(&failed.join("; "))),
        (false, Some(kinds)) => {
            Outcome::Failed(one_line(&format!("with {kinds}: {}", failed.join("; "))))
        }
    }
}

/// The column of the source CLI's own resume: the real source CLI resumes the file as it is, and
/// handoff's reader must read the conversation the CLI sends (the differential harness).
const SOURCE_CLI: &str = "source-cli";

/// Where the source CLI finds a session, and what the differential harness needs to place it:
/// the session id, the working directory the file names, its path under the store root given the
/// scene's project folder, and the files beside it.
struct Placement {
    id: String,
    recorded_cwd: String,
    place: Box<dyn Fn(&str) -> PathBuf>,
    side_files: Box<SideFiles>,
}

/// The files beside a session, given the scene's project folder.
type SideFiles = dyn Fn(&str) -> Vec<SideFile>;

/// The JSON records of a JSONL file, or the one document of a JSON file (lines that are not JSON
/// are left out: the harness places the bytes as they are).
fn records_of(bytes: &[u8]) -> Vec<Value> {
    if let Ok(whole) = serde_json::from_slice::<Value>(bytes) {
        return vec![whole];
    }
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}

fn first_str(records: &[Value], pick: impl Fn(&Value) -> Option<&str>) -> Option<String> {
    records.iter().find_map(|r| pick(r).map(str::to_owned))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A v4-shaped UUID made from `name` (stable: the same name gives the same UUID).
fn uuid_for(name: &str) -> String {
    let hex: String = name
        .bytes()
        .chain(std::iter::repeat(0))
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// The model provider the live recipe's Codex config selects (`model_provider = "…"`).
fn codex_scene_provider() -> String {
    let manifest = handoff_codex::CodexPlugin.manifest();
    let recipe = manifest.targets[0]
        .live
        .as_ref()
        .expect("codex has a live recipe");
    let config = recipe
        .files
        .iter()
        .find(|(path, _)| path.ends_with("config.toml"))
        .map(|(_, text)| text)
        .expect("the recipe writes Codex's config");
    let line = config
        .lines()
        .find_map(|l| l.strip_prefix("model_provider = "))
        .expect("the config selects a provider");
    line.trim_matches('"').to_owned()
}

/// `bytes` with the rollout's `session_meta` naming the scene's model provider. Codex 0.171.0
/// refuses to resume a thread recorded under another provider than its config selects ("Cannot
/// change this thread's model provider from `openai` to `fake` on resume"), where the person
/// whose rollout it is has that provider configured: the scene's provider stands in for the
/// recorded one, as the scene's project folder stands in for the recorded cwd. Other lines are
/// kept byte for byte.
fn with_the_scene_provider(bytes: &[u8]) -> Vec<u8> {
    let provider = codex_scene_provider();
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(mut record)
                if record["type"] == "session_meta"
                    && record["payload"]["model_provider"].is_string() =>
            {
                record["payload"]["model_provider"] = Value::from(provider.as_str());
                out.extend_from_slice(record.to_string().as_bytes());
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

/// A cwd no file names: nothing to replace.
const NO_CWD: &str = "/nonexistent/recorded/cwd";

/// Where `source`'s CLI looks for the session in `bytes`; `None` when the file names no id.
fn placement(source: &str, bytes: &[u8]) -> Option<Placement> {
    let records = records_of(bytes);
    match source {
        "claude-code" => {
            let named = first_str(&records, |r| r["sessionId"].as_str())?;
            // Claude Code finds a session by the UUID in its file name (`<id>.jsonl`) and takes
            // no other id on `--resume`; a hand-written file whose records name another id
            // (claude-code-log's `session_b`) is placed under a UUID made from that name, as the
            // CLI would have named it.
            let id = if is_uuid(&named) {
                named
            } else {
                uuid_for(&named)
            };
            let recorded_cwd = first_str(&records, |r| r["cwd"].as_str()).unwrap_or(NO_CWD.into());
            let file = format!("{id}.jsonl");
            Some(Placement {
                id,
                recorded_cwd,
                place: Box::new(move |cwd| {
                    let slug: String = cwd
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                        .collect();
                    PathBuf::from("projects").join(slug).join(&file)
                }),
                side_files: Box::new(no_side_files),
            })
        }
        "codex" => {
            let meta = |r: &Value| {
                if r["type"] == "session_meta" {
                    r["payload"].clone()
                } else {
                    r.clone()
                }
            };
            let id = first_str(&records, |r| {
                r["payload"]["id"]
                    .as_str()
                    .filter(|_| r["type"] == "session_meta")
            })
            .or_else(|| {
                records
                    .first()
                    .and_then(|r| meta(r)["id"].as_str().map(str::to_owned))
            })?;
            let recorded_cwd =
                first_str(&records, |r| r["payload"]["cwd"].as_str()).unwrap_or(NO_CWD.into());
            let file = format!("rollout-2026-01-01T00-00-00-{id}.jsonl");
            Some(Placement {
                id,
                recorded_cwd,
                place: Box::new(move |_| PathBuf::from("sessions/2026/01/01").join(&file)),
                side_files: Box::new(no_side_files),
            })
        }
        "pi" => {
            let header = records.first().filter(|r| r["type"] == "session")?;
            let id = header["id"].as_str()?.to_owned();
            let recorded_cwd = header["cwd"].as_str().unwrap_or(NO_CWD).to_owned();
            let file = format!("2026-01-01T00-00-00-000Z_{id}.jsonl");
            Some(Placement {
                id,
                recorded_cwd,
                place: Box::new(move |cwd| {
                    let folder = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
                    PathBuf::from("sessions").join(folder).join(&file)
                }),
                side_files: Box::new(no_side_files),
            })
        }
        "gemini-cli" => {
            let id = first_str(&records, |r| r["sessionId"].as_str())?;
            // A legacy chat is one JSON document; a newer one is JSONL.
            let extension = if records.len() == 1 { "json" } else { "jsonl" };
            let file = format!(
                "session-2026-01-01T00-00-{}.{extension}",
                &id[..8.min(id.len())]
            );
            Some(Placement {
                id,
                recorded_cwd: NO_CWD.into(),
                place: Box::new(move |_| PathBuf::from("tmp/proj/chats").join(&file)),
                // The project registry and ownership markers, as the CLI leaves them.
                side_files: Box::new(|cwd| {
                    let registry = json!({"projects": {cwd: "proj"}});
                    vec![
                        (
                            PathBuf::from("projects.json"),
                            serde_json::to_vec_pretty(&registry).unwrap(),
                        ),
                        (
                            PathBuf::from("tmp/proj/.project_root"),
                            cwd.as_bytes().to_vec(),
                        ),
                        (
                            PathBuf::from("history/proj/.project_root"),
                            cwd.as_bytes().to_vec(),
                        ),
                    ]
                }),
            })
        }
        other => panic!("no placement for {other}"),
    }
}

/// The real source CLI resumes `file` as it is; the outcome is the differential harness's kind
/// (`agree`: the reader reads what the CLI sends).
fn source_cli_cell(source: &str, file: &Path) -> Outcome {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let Some(placement) = placement(source, &bytes) else {
        return Outcome::Unreadable("the file names no session id the CLI could resume".into());
    };
    let bytes = match source {
        "codex" => with_the_scene_provider(&bytes),
        _ => bytes,
    };
    // The reader reads as the source CLI at this end of its range sends (Claude Code's reader
    // has rules of its own per version).
    let plugin: Box<dyn Plugin> = match (source, handoff_live::CliEnd::from_env()) {
        ("claude-code", handoff_live::CliEnd::Oldest) => Box::new(
            handoff_claude::ClaudePluginReadingAs::version(handoff_claude::CLAUDE_CODE_VERSION),
        ),
        _ => plugin_of(source),
    };
    let case = Case {
        name: file.display().to_string(),
        target: source,
        id: &placement.id,
        genuine: &bytes,
        recorded_cwd: &placement.recorded_cwd,
        place: &*placement.place,
        side_files: &*placement.side_files,
        mutation: GENUINE,
    };
    // HANDOFF_DIFF_KEEP=1 keeps the temporary HOME (with the fake provider's request log).
    let options = LiveOptions {
        keep_homes: std::env::var_os("HANDOFF_DIFF_KEEP").is_some(),
        ..LiveOptions::default()
    };
    let result = run_case(plugin.as_ref(), &case, &options);
    match result.outcome {
        _ if result.skipped => Outcome::Skipped("CLI absent".into()),
        Err(e) => Outcome::Failed(one_line(&format!("not run: {e}"))),
        Ok(handoff_live::differential::Outcome::Agree(_)) => Outcome::Carried,
        Ok(other) => {
            let detail = match &other {
                handoff_live::differential::Outcome::BothFail(e)
                | handoff_live::differential::Outcome::ReaderFails(e)
                | handoff_live::differential::Outcome::VagueError(e)
                | handoff_live::differential::Outcome::Differ(e) => e.clone(),
                handoff_live::differential::Outcome::ProviderRefuses { refusal, .. } => {
                    refusal.clone()
                }
                handoff_live::differential::Outcome::CliFails(n) => {
                    format!("the reader read {n} events")
                }
                handoff_live::differential::Outcome::Agree(_) => String::new(),
            };
            Outcome::Differs(other.kind(), one_line(&detail))
        }
    }
}

/// The corpus files, as `<cli>/<file>` with the CLI, in order.
fn corpus_files() -> Vec<(String, &'static str, PathBuf)> {
    let mut files = Vec::new();
    for source in SOURCES {
        let dir = corpus_dir().join(source);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jsonl") || n.ends_with(".json"))
            .collect();
        names.sort();
        for name in names {
            files.push((format!("{source}/{name}"), source, dir.join(&name)));
        }
    }
    files
}

/// The committed table: (`<cli>/<file>`, target) → (outcome kind, reason).
fn expected_table() -> BTreeMap<(String, String), (String, String)> {
    let path = corpus_dir().join("expected.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut table = BTreeMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert!(
            fields.len() == 4,
            "{}:{}: expected 4 tab-separated fields (file, target, outcome, reason), found {}",
            path.display(),
            n + 1,
            fields.len()
        );
        table.insert(
            (fields[0].to_owned(), fields[1].to_owned()),
            (fields[2].to_owned(), fields[3].to_owned()),
        );
    }
    table
}

fn write_table(rows: &[(String, String, Outcome)]) -> String {
    let mut text = String::from("file\ttarget\toutcome\treason\n");
    for (file, target, outcome) in rows {
        text.push_str(&format!(
            "{file}\t{target}\t{}\t{}\n",
            outcome.kind(),
            outcome.reason()
        ));
    }
    text
}

#[test]
fn every_corpus_session_in_every_target_comes_to_its_committed_outcome() {
    let full = std::env::var_os("HANDOFF_CORPUS_FULL").is_some();
    let bless = std::env::var_os("HANDOFF_CORPUS_BLESS").is_some();
    let only = std::env::var("HANDOFF_CORPUS_ONLY").ok();
    let (only_file, only_target) = match only.as_deref().map(|o| o.split_once(':')) {
        Some(Some((file, target))) => (Some(file), Some(target)),
        Some(None) => (only.as_deref(), None),
        None => (None, None),
    };
    assert!(
        !bless || (full && only.is_none()),
        "HANDOFF_CORPUS_BLESS=1 rewrites the whole table: set HANDOFF_CORPUS_FULL=1 too, without HANDOFF_CORPUS_ONLY"
    );
    let files = corpus_files();
    assert!(
        files.len() >= 25,
        "the corpus holds {} sessions, fewer than 25",
        files.len()
    );
    for fast in FAST {
        assert!(
            files.iter().any(|(f, _, _)| f == fast),
            "the CI subset names {fast}, not in the corpus"
        );
    }
    let expected = expected_table();
    let mut rows = Vec::new();
    let mut wrong = Vec::new();
    let mut skipped = Vec::new();
    let started = Instant::now();
    let chosen = |f: &str| match only_file {
        Some(only) => f.contains(only),
        None => full || FAST.contains(&f),
    };
    for (name, source, path) in files.iter().filter(|(f, _, _)| chosen(f)) {
        for target in TARGETS
            .into_iter()
            .chain([SOURCE_CLI])
            .filter(|t| only_target.is_none_or(|only| only == *t))
        {
            let t0 = Instant::now();
            let outcome = if target == SOURCE_CLI {
                source_cli_cell(source, path)
            } else {
                cell(source, path, target)
            };
            println!(
                "{name:<90} {target:<17} {:>7.0} ms  {} {}",
                t0.elapsed().as_secs_f64() * 1000.0,
                outcome.kind(),
                outcome.reason()
            );
            let key = (name.clone(), target.to_owned());
            match (&outcome, expected.get(&key)) {
                (Outcome::Skipped(_), _) => skipped.push(format!("{name} -> {target}")),
                (_, Some((kind, _))) if kind == outcome.kind() => {}
                (_, Some((kind, reason))) => wrong.push(format!(
                    "{name} -> {target}: expected {kind} ({reason}), got {} ({})",
                    outcome.kind(),
                    outcome.reason()
                )),
                (_, None) => wrong.push(format!(
                    "{name} -> {target}: not in expected.tsv (got {} ({}))",
                    outcome.kind(),
                    outcome.reason()
                )),
            }
            rows.push((name.clone(), target.to_owned(), outcome));
        }
    }
    let carried = rows
        .iter()
        .filter(|(_, _, o)| *o == Outcome::Carried)
        .count();
    println!(
        "{} cells, {carried} carried, in {:.0} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    let table = write_table(&rows);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("real_sessions.tsv");
    std::fs::write(&out, &table).unwrap();
    println!("this run's table: {}", out.display());
    if bless {
        assert!(
            skipped.is_empty(),
            "cannot bless with skipped cells: {skipped:?}"
        );
        std::fs::write(corpus_dir().join("expected.tsv"), &table).unwrap();
        return;
    }
    if full && only.is_none() {
        for key in expected.keys() {
            if !rows.iter().any(|(f, t, _)| (f, t) == (&key.0, &key.1)) {
                wrong.push(format!(
                    "{} -> {}: in expected.tsv, but no such corpus file",
                    key.0, key.1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cells differ from tests/corpus/expected.tsv:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    if !skipped.is_empty() {
        assert!(
            !skips_are_failures(),
            "HANDOFF_LIVE_REQUIRED=1 and {} cells were skipped (CLI absent): {skipped:?}",
            skipped.len()
        );
        eprintln!("skipped (CLI absent): {skipped:?}");
    }
}
