//! What the fuzz targets share: how an input reaches a native reader (as a session file, the way
//! `handoff read` hands one over) or a dialect parser (as a request body), and their seeds.
//!
//! Seeds: every fuzz target, run with `HANDOFF_FUZZ_SEED=<dir>`, writes its seed inputs into
//! `<dir>` and exits: for a reader, the repository's sample sessions of its target and every
//! transcript of the conformance corpus written by the target's own writer; for a dialect, every
//! corpus transcript rendered as a request body. `scripts/fuzz.sh` does this before each run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use handoff_dialects::{Dialect, RenderOptions};
use handoff_host::{CreateOptions, Plugin, ReadFrom, SessionRef, StoreRoot};
use serde_json::Value;

/// The plugin that offers `target`.
pub fn plugin_for(target: &str) -> Box<dyn Plugin> {
    let plugins: Vec<Box<dyn Plugin>> = vec![
        Box::new(handoff_claude::ClaudePlugin),
        Box::new(handoff_codex::CodexPlugin),
        Box::new(handoff_gemini::GeminiPlugin),
        Box::new(handoff_openai::OpenaiPlugin),
        Box::new(handoff_pi::PiPlugin),
        Box::new(handoff_qwen::QwenPlugin),
        Box::new(handoff_opencode::OpencodePlugin),
        Box::new(handoff_copilot::CopilotPlugin),
    ];
    plugins
        .into_iter()
        .find(|p| p.manifest().target(target).is_some())
        .unwrap_or_else(|| panic!("no plugin offers target {target}"))
}

/// A native reader under fuzzing: each input is written to one session file (at the place the
/// target's writer puts its sessions) and read whole with `Reader::read` from the file, then streamed with
/// `Reader::read_each` from the session (the engine's verify).
pub struct Native {
    target: String,
    plugin: Box<dyn Plugin>,
    root: StoreRoot,
    session: SessionRef,
    _dir: tempfile::TempDir,
}

static NATIVE: OnceLock<Native> = OnceLock::new();

impl Native {
    /// Sets the target up (or, with `HANDOFF_FUZZ_SEED`, writes its seeds and exits).
    pub fn init(target: &str) {
        let plugin = plugin_for(target);
        let written = tempfile::tempdir().expect("a temp dir");
        let seeds = corpus_sessions(plugin.as_ref(), target, written.path());
        if let Some(out) = seed_dir() {
            let mut all = samples(target);
            all.extend(seeds.iter().map(|(_, _, bytes)| bytes.clone()));
            // Writing the seeds ends the process, which drops nothing.
            drop(written);
            write_seeds(&out, &all);
        }
        let (relative, id, _) = seeds
            .first()
            .unwrap_or_else(|| panic!("the {target} writer wrote no corpus transcript"));
        let dir = tempfile::Builder::new()
            .prefix("handoff-fuzz-")
            .tempdir_in(scratch_parent())
            .expect("a temp dir");
        let file = dir.path().join(relative);
        std::fs::create_dir_all(file.parent().expect("a file in a folder")).expect("its folder");
        let native = Native {
            target: target.to_owned(),
            plugin,
            root: StoreRoot::new(dir.path()).expect("a store root"),
            session: SessionRef {
                target: target.to_owned(),
                id: id.clone(),
                path: file,
            },
            _dir: dir,
        };
        assert!(NATIVE.set(native).is_ok(), "init runs once");
        // libFuzzer ends the process with `exit`, which drops no static: the scratch folder
        // goes at exit instead of staying behind in /dev/shm after every run.
        extern "C" fn remove_scratch() {
            if let Some(native) = NATIVE.get() {
                let _ = std::fs::remove_dir_all(native._dir.path());
            }
        }
        // SAFETY: registers a function without arguments that touches only this static; it
        // runs once, at exit, on the exiting thread.
        unsafe {
            libc::atexit(remove_scratch);
        }
    }

    /// The target set up by [`Native::init`].
    pub fn get() -> &'static Native {
        NATIVE.get().expect("Native::init ran")
    }

    /// Reads `data` as a session file of the target. Refusing it is fine; a panic is a finding,
    /// and so is a streamed read of the file (`read_each` of `ReadFrom::File`) that differs from a whole read the
    /// file passes: the streamed one may judge records off the conversation less, never read the
    /// conversation otherwise. `read_each` (by the session's id, as the engine's verify reads)
    /// may also refuse a file that is not that session.
    pub fn read(&self, data: &[u8]) {
        std::fs::write(&self.session.path, data).expect("write the input");
        let reader = self.plugin.reader();
        let whole = reader.read(ReadFrom::File(&self.target, &self.session.path));
        let mut streamed = Vec::new();
        let each = reader.read_each(ReadFrom::File(&self.target, &self.session.path), &mut |e| {
            streamed.push(e);
            true
        });
        let _ = reader.read_each(ReadFrom::Session(&self.root, &self.session), &mut |_| true);
        if let Ok(whole) = whole {
            if let Err(e) = each {
                panic!("the whole read passes, the streamed one fails: {e}");
            }
            assert!(
                whole.events == streamed,
                "the streamed read differs from the whole read"
            );
        }
    }
}

/// The dialect named `name`.
pub fn dialect(name: &str) -> Dialect {
    Dialect::ALL
        .into_iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("no dialect {name}"))
}

/// Parses `data` as a request body of the dialect, validates it both ways, and renders what was
/// parsed back. Refusing it is fine; a panic is a finding.
pub fn parse_dialect(name: &str, data: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let dialect = dialect(name);
    let _ = dialect.validate(&body);
    let _ = dialect.validate_history(&body);
    if let Ok(parsed) = dialect.parse(&body) {
        let _ = dialect.render_body(&parsed.transcript, &RenderOptions::default());
    }
}

/// With `HANDOFF_FUZZ_SEED`, writes the dialect's seeds (every corpus transcript as a request
/// body) and exits.
pub fn seed_dialect_if_asked(name: &str) {
    let Some(out) = seed_dir() else { return };
    let dialect = dialect(name);
    let seeds: Vec<Vec<u8>> = handoff_conformance::corpus::entries()
        .iter()
        .filter_map(|entry| {
            let options = RenderOptions {
                thinking_from: Some(vec![]),
                ..RenderOptions::default()
            };
            dialect
                .render_request(&entry.transcript, "model", "go on", &options)
                .ok()
        })
        .map(|body| serde_json::to_vec_pretty(&body).expect("JSON"))
        .collect();
    write_seeds(&out, &seeds);
}

fn seed_dir() -> Option<PathBuf> {
    std::env::var_os("HANDOFF_FUZZ_SEED")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// Writes `seeds` into `out` (one file each, named by content) and ends the process.
fn write_seeds(out: &Path, seeds: &[Vec<u8>]) -> ! {
    std::fs::create_dir_all(out).expect("the seed folder");
    for (n, bytes) in seeds.iter().enumerate() {
        std::fs::write(out.join(format!("seed-{n:03}")), bytes).expect("write a seed");
    }
    eprintln!("{} seeds written to {}", seeds.len(), out.display());
    std::process::exit(0)
}

/// Every corpus transcript the target's writer accepts, written into a store root under `dir`:
/// each session file's path inside the root, its id and its bytes.
fn corpus_sessions(
    plugin: &dyn Plugin,
    target: &str,
    dir: &Path,
) -> Vec<(PathBuf, String, Vec<u8>)> {
    let mut found = Vec::new();
    for (n, entry) in handoff_conformance::corpus::entries().iter().enumerate() {
        let root = StoreRoot::new(dir.join(format!("root-{n}"))).expect("a store root");
        let options = CreateOptions {
            cwd: Some(
                entry
                    .transcript
                    .cwd
                    .clone()
                    .unwrap_or_else(|| "/home/dev/proj".into()),
            ),
            locator: Some("fuzz".into()),
        };
        let Ok(session) = plugin
            .writer()
            .create(&root, target, &entry.transcript, &options)
        else {
            continue;
        };
        let relative = session
            .path
            .strip_prefix(root.path())
            .expect("inside the root")
            .to_owned();
        let bytes = std::fs::read(&session.path).expect("the session");
        found.push((relative, session.id, bytes));
    }
    found
}

/// The repository's sample sessions of `target`.
fn samples(target: &str) -> Vec<Vec<u8>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dirs: &[&str] = match target {
        "claude-code" => &[
            "plugins/claude/tests/samples",
            "examples/sessions/claude-code",
        ],
        "codex" => &["plugins/codex/tests/fixtures"],
        "pi" => &["plugins/pi/tests/samples"],
        "gemini-cli" => &["plugins/gemini/tests/samples"],
        "qwen-code" => &["plugins/qwen/tests/samples"],
        "copilot-cli" => &["live/tests/differential/copilot-cli"],
        _ => &[],
    };
    let mut files = Vec::new();
    for dir in dirs {
        walk(&repo.join(dir), &mut files);
    }
    files.sort();
    files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|f| std::fs::read(f).ok())
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Where the input file lives: memory (`/dev/shm`) where there is one.
fn scratch_parent() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_owned()
    } else {
        std::env::temp_dir()
    }
}

/// What handoff trusts from disk only when it sealed it: a journal or a certificate, each checked
/// against one fixed key (so seeds written by one process verify in another).
pub mod sealed {
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use handoff_host::journal::{self, Op, Record, Verdict, JOURNAL_SCHEMA};
    use handoff_host::registry::{Certificate, CertificateStore, CertifiedCheck, Subject};
    use handoff_host::seal::KEY_FILE;
    use handoff_host::SessionRef;

    /// The one store root, run and key the seeds are sealed for.
    const ROOT: &str = "/nonexistent/handoff-fuzz-root";
    const RUN: &str = "abababababababababababababababababababababababababababababababab.1-2-fuzz";

    struct Fixture {
        store: CertificateStore,
        journal: Record,
        certificate: Certificate,
        certificate_path: PathBuf,
    }

    fn fixture() -> &'static Fixture {
        static FIXTURE: OnceLock<Fixture> = OnceLock::new();
        FIXTURE.get_or_init(|| {
            // A fixed key, private as handoff requires, in the fuzz build's own folder.
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sealed-key");
            std::fs::create_dir_all(&dir).expect("the key folder");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            let key = dir.join(KEY_FILE);
            std::fs::write(&key, format!("{}\n", "5a".repeat(32))).expect("the key");
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
            let store = CertificateStore::new(&dir);
            let seal = store.seal().expect("the fixed key").clone();
            let mut journal = Record {
                schema: JOURNAL_SCHEMA.into(),
                pid: 2,
                started_ms: 1,
                target: "codex".into(),
                locator: "fuzz".into(),
                op: Op::Create {
                    previous: None,
                    created: Some(SessionRef {
                        target: "codex".into(),
                        id: "s".into(),
                        path: PathBuf::from(ROOT).join("sessions/s.jsonl"),
                    }),
                    created_file: None,
                },
                seal: String::new(),
            };
            seal.seal_record(Path::new(ROOT), RUN, &mut journal).unwrap();
            let subject = Subject::File {
                sha256: "ab".repeat(32),
                path: "/x/p.so".into(),
            };
            let certificate = Certificate {
                schema: handoff_host::registry::CERTIFICATE_SCHEMA.into(),
                subject,
                plugin: "p".into(),
                plugin_version: "1.0.0".into(),
                targets: vec!["t".into()],
                suite_version: "1.0.0".into(),
                api_major: 1,
                host_api_version: "1.0.0".into(),
                passed: true,
                checks: vec![CertifiedCheck {
                    id: "manifest".into(),
                    status: "pass".into(),
                }],
                issued_at: "2026-12-02T00:00:00Z".into(),
                seal: String::new(),
            };
            let certificate_path = store.write(&certificate).expect("a sealed certificate");
            let certificate = store
                .parse(
                    &certificate_path,
                    &std::fs::read_to_string(&certificate_path).unwrap(),
                )
                .expect("it verifies");
            Fixture {
                store,
                journal,
                certificate,
                certificate_path,
            }
        })
    }

    /// Sets the journal target up (or writes its seed: the sealed journal, and exits).
    pub fn seed_journal_if_asked() {
        let f = fixture();
        if let Some(out) = super::seed_dir() {
            super::write_seeds(&out, &[serde_json::to_vec_pretty(&f.journal).unwrap()]);
        }
    }

    /// Arbitrary bytes as a journal: refused, or — only if they say exactly what was sealed —
    /// trusted. Anything else that verifies is a forgery.
    pub fn journal(data: &[u8]) {
        let f = fixture();
        let seal = f.store.seal().unwrap();
        if let Verdict::Sealed(record) = journal::verify(seal, Path::new(ROOT), RUN, data) {
            assert_eq!(
                *record, f.journal,
                "a journal that was never sealed verified"
            );
        }
        // The same bytes for another root or run never verify.
        let elsewhere = journal::verify(seal, Path::new("/elsewhere"), RUN, data);
        assert!(!matches!(elsewhere, Verdict::Sealed(_)));
    }

    /// Sets the certificate target up (or writes its seed, and exits).
    pub fn seed_certificate_if_asked() {
        let f = fixture();
        if let Some(out) = super::seed_dir() {
            super::write_seeds(&out, &[std::fs::read(&f.certificate_path).unwrap()]);
        }
    }

    /// Arbitrary bytes as a certificate: refused, or exactly the one sealed.
    pub fn certificate(data: &[u8]) {
        let f = fixture();
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        if let Ok(found) = f.store.parse(&f.certificate_path, text) {
            assert_eq!(
                found, f.certificate,
                "a certificate that was never sealed verified"
            );
        }
    }
}
