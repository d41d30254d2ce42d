//! The differential harness: a plugin's reader against the real CLI, on the same file.
//!
//! The continuation engine reads sessions people went on with in the real CLIs, so a reader must
//! reconstruct exactly the conversation the CLI itself sends to the model on resume. A [`Case`]
//! is a genuine session file (written by the real CLI) with a [`Mutation`] applied — a change real
//! stores contain: lines out of order, a record repeated, a branch, a torn last line, … . The
//! harness places the mutated file where the CLI finds it (in a temporary HOME, as the live tier
//! does), resumes it with the real CLI against the fake provider, parses the first model request
//! with the recipe's dialect (what the recipe declares injected set aside), and compares it in
//! the wire view with the plugin's `read_path` of the same file plus the prompt.
//!
//! The outcome ([`Outcome`]) is one of: both agree; both fail (the CLI sent no model request, and
//! the reader erred naming the file and line); or one of the two disagreements. This module knows
//! no provider: where a session file lives comes with the case ([`Case::place`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use handoff_host::{Plugin, PluginError, ReadFrom, Transcript};

use crate::run::{installed, live_target, recipe_at, Live};
use crate::wire::{
    aligned_request_view, expected_request, history_from_request, request_model, wire_view,
};
use crate::LiveOptions;

/// A named change to a genuine session file.
#[derive(Clone, Copy)]
pub struct Mutation {
    /// Its name, e.g. `swap-last-two`.
    pub name: &'static str,
    /// Genuine bytes → mutated bytes.
    pub apply: fn(&[u8]) -> Vec<u8>,
}

/// The file unchanged.
pub const GENUINE: Mutation = Mutation {
    name: "genuine",
    apply: <[u8]>::to_vec,
};

/// One differential case: a genuine session file and a mutation of it.
pub struct Case<'a> {
    /// The case's name (for reports), e.g. `claude-code/tool-call/swap-last-two`.
    pub name: String,
    /// The CLI target (a target of the plugin with a live recipe).
    pub target: &'a str,
    /// The session id the CLI resumes.
    pub id: &'a str,
    /// The genuine file's bytes.
    pub genuine: &'a [u8],
    /// The working directory the genuine file names; every occurrence is replaced by the scene's
    /// project folder before the mutation applies (the CLI looks for the session there).
    pub recorded_cwd: &'a str,
    /// Where the file goes, relative to the store root, given the scene's project folder.
    pub place: &'a dyn Fn(&str) -> PathBuf,
    /// Files the CLI needs beside the session (e.g. a project registry), relative to the store
    /// root, given the scene's project folder.
    pub side_files: &'a dyn Fn(&str) -> Vec<SideFile>,
    /// The mutation.
    pub mutation: Mutation,
}

/// A file beside the session: its path relative to the store root, and its bytes.
pub type SideFile = (PathBuf, Vec<u8>);

/// No files beside the session.
pub fn no_side_files(_cwd: &str) -> Vec<SideFile> {
    Vec::new()
}

/// What the CLI and the reader made of one file.
#[derive(Debug)]
pub enum Outcome {
    /// The CLI sent the reader's conversation plus the prompt: this many wire turns, equal.
    Agree(usize),
    /// The CLI sent no model request (or exited non-zero) and the reader failed, naming the file
    /// and line (the error).
    BothFail(String),
    /// Both read a conversation, and they differ (the diff: left reader, right request).
    Differ(String),
    /// The CLI resumed a conversation; the reader failed (its error).
    ReaderFails(String),
    /// The CLI sent no model request; the reader read a conversation of this many events.
    CliFails(usize),
    /// The reader's error does not name the file and a line (the error).
    VagueError(String),
    /// The CLI sent the history, but the provider refused it (the fake provider's refusal names
    /// the API rule it breaks); `diff` is `None` when the reader's conversation is the one sent.
    ProviderRefuses {
        /// The refusal.
        refusal: String,
        /// The difference (left reader, right request), if any.
        diff: Option<String>,
    },
}

impl Outcome {
    /// A short name for the outcome's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Agree(_) => "agree",
            Outcome::BothFail(_) => "both-fail",
            Outcome::Differ(_) => "differ",
            Outcome::ReaderFails(_) => "reader-fails",
            Outcome::CliFails(_) => "cli-fails",
            Outcome::VagueError(_) => "vague-error",
            Outcome::ProviderRefuses { diff: None, .. } => "provider-refuses-same",
            Outcome::ProviderRefuses { diff: Some(_), .. } => "provider-refuses-differ",
        }
    }
}

/// A case's result: the outcome (or why the case could not run) and the evidence.
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// `Err` when the case could not run (CLI absent, harness failure): the reason.
    pub outcome: Result<Outcome, String>,
    /// Whether the CLI was absent or at another version (then `outcome` is `Err`).
    pub skipped: bool,
    /// What happened, one line each.
    pub evidence: Vec<String>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
}

/// Runs one case: place the file (genuine first, so the plugin plans the resume; then the
/// mutated bytes), read it with the plugin, resume it with the real CLI, compare.
pub fn run_case(plugin: &dyn Plugin, case: &Case<'_>, options: &LiveOptions) -> CaseResult {
    let started = Instant::now();
    let mut evidence = Vec::new();
    let mut skipped = false;
    let outcome = run_inner(plugin, case, options, &mut evidence, &mut skipped);
    CaseResult {
        name: case.name.clone(),
        outcome,
        skipped,
        evidence,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
    }
}

fn run_inner(
    plugin: &dyn Plugin,
    case: &Case<'_>,
    options: &LiveOptions,
    evidence: &mut Vec<String>,
    skipped: &mut bool,
) -> Result<Outcome, String> {
    let joined = |e: Vec<String>| e.join("; ");
    let (target, recipe) =
        live_target(plugin, case.target).map_err(|failed| failed.evidence.join("; "))?;
    let cli = installed(&recipe, options).inspect_err(|_| *skipped = true)?;
    let recipe = recipe_at(&recipe, &cli);
    let live = Live {
        plugin,
        target: &target,
        recipe: &recipe,
        cli: &cli,
        options,
    };
    let scene = live.scene().map_err(joined)?;
    let cwd = scene.cwd.to_string_lossy().into_owned();
    let genuine = replace_all(case.genuine, case.recorded_cwd.as_bytes(), cwd.as_bytes());
    let file = scene.root.path().join((case.place)(&cwd));
    for (side, bytes) in (case.side_files)(&cwd) {
        write_file(&scene.root.path().join(side), &bytes)?;
    }
    write_file(&file, &genuine)?;
    // The plan is taken on the genuine file: a mutation may leave a file the plugin will not plan.
    let session = plugin
        .resumer()
        .resolve(&scene.root, case.target, case.id)
        .map_err(|e| format!("the genuine file does not resolve: {e}"))?;
    let plan = live.plan(&scene, &session).map_err(joined)?;
    let mutated = (case.mutation.apply)(&genuine);
    write_file(&file, &mutated)?;
    let ours = plugin.reader().read(ReadFrom::File(case.target, &file));

    let invocation = live
        .invocation(&scene.place(), plan, false)
        .map_err(joined)?;
    let outcome = live.launch(&invocation).map_err(joined)?;
    let requests = scene.fake.requests();
    evidence.push(format!(
        "{} {} resumed {} ({}): {}",
        recipe.program,
        live.cli_version(),
        case.id,
        case.mutation.name,
        outcome.summary()
    ));
    let sent = live.first_turn(&requests);
    let compare = |ours: Transcript, history: &Transcript, model: Option<String>| {
        // The recipe's rules, as the live tier applies them.
        let (whole, _) = expected_request(
            ours,
            model.as_deref(),
            &options.prompt,
            &recipe.injected,
            &target.thinking_from,
            recipe.dialect,
        );
        let expected = wire_view(&whole, &target.thinking_from, recipe.dialect);
        let actual = aligned_request_view(history, recipe.dialect, &whole, &recipe.injected);
        target
            .comparison()
            .diff(&expected, &actual)
            .map(|()| expected.events.len())
            .map_err(|diff| diff.to_string())
    };
    let refused = refused_turn(&live, &requests);
    let result = match (ours, sent) {
        (Ok(ours), Ok((request, history))) => {
            evidence.push(format!("request #{}", request.seq));
            match compare(
                ours,
                &history,
                request_model(&request.body).map(str::to_owned),
            ) {
                Ok(turns) => Outcome::Agree(turns),
                Err(diff) => Outcome::Differ(diff),
            }
        }
        (Ok(ours), Err(_)) if refused.is_some() => {
            let (seq, refusal, history, model) = refused.expect("checked");
            evidence.push(format!("request #{seq}, refused: {refusal}"));
            Outcome::ProviderRefuses {
                refusal,
                diff: compare(ours, &history, model).err(),
            }
        }
        (Err(e), Ok(_)) => Outcome::ReaderFails(e.to_string()),
        (Ok(ours), Err(why)) => {
            evidence.push(why);
            evidence.push(format!(
                "requests received: {}",
                crate::run::describe(&requests)
            ));
            Outcome::CliFails(ours.events.len())
        }
        (Err(e), Err(why)) => {
            evidence.push(why);
            if names_file_and_line(&e, &file) {
                Outcome::BothFail(e.to_string())
            } else {
                Outcome::VagueError(e.to_string())
            }
        }
    };
    scene.finish(options.keep_homes, evidence);
    Ok(result)
}

/// The first model request in the recipe's dialect that the fake provider refused (it names
/// the API rule broken), with its history: what the CLI sent when the API would not take it.
fn refused_turn(
    live: &Live<'_>,
    requests: &[crate::fake_provider::LoggedRequest],
) -> Option<(usize, String, Transcript, Option<String>)> {
    requests
        .iter()
        .filter(|r| r.is_model_turn() && r.endpoint.dialect() == Some(live.recipe.dialect))
        .find_map(|r| {
            let refusal = r.refusal.clone()?;
            let history =
                history_from_request(live.recipe.dialect, &r.body, &live.recipe.injected).ok()?;
            let model = request_model(&r.body).map(str::to_owned);
            Some((r.seq, refusal, history, model))
        })
}

/// Whether a reader's error names `file` and a line.
fn names_file_and_line(error: &PluginError, file: &Path) -> bool {
    matches!(error, PluginError::Malformed { file: f, line: Some(_), .. } if f == file)
}

fn write_file(file: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    std::fs::write(file, bytes).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// `bytes` with every occurrence of `from` replaced by `to`.
pub fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// The lines of a JSONL file, without their newlines (a last line without one included).
pub fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return Vec::new();
    }
    body.split(|&b| b == b'\n').collect()
}

/// Lines joined back into a file, each ending in a newline.
pub fn join(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// The file with each line changed or dropped by `f` (given the line's index and its JSON).
pub fn map_records(
    bytes: &[u8],
    mut f: impl FnMut(usize, serde_json::Value) -> Option<serde_json::Value>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, line) in lines(bytes).into_iter().enumerate() {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            out.extend_from_slice(line);
            out.push(b'\n');
            continue;
        };
        if let Some(v) = f(i, value) {
            out.extend_from_slice(v.to_string().as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Mutations that apply to any JSONL session file.
pub mod generic {
    use super::{join, lines, Mutation};

    /// The last two lines swapped (a child record before its parent, as concurrent writers
    /// leave them).
    pub const SWAP_LAST_TWO: Mutation = Mutation {
        name: "swap-last-two",
        apply: |b| {
            let mut l = lines(b);
            let n = l.len();
            if n >= 2 {
                l.swap(n - 1, n - 2);
            }
            join(&l)
        },
    };

    /// Every pair of adjacent lines swapped (the 1st with the 2nd, the 3rd with the 4th, …): each
    /// record of a streamed turn before the one it follows, as concurrent writers may leave them.
    pub const SWAP_EVERY_PAIR: Mutation = Mutation {
        name: "swap-every-pair",
        apply: |b| {
            let mut l = lines(b);
            for pair in l.chunks_mut(2) {
                pair.reverse();
            }
            join(&l)
        },
    };

    /// The last line cut in the middle, without its newline (a writer killed mid-line).
    pub const TORN_LAST_LINE: Mutation = Mutation {
        name: "torn-last-line",
        apply: |b| {
            let l = lines(b);
            let Some((last, rest)) = l.split_last() else {
                return b.to_vec();
            };
            let mut out = join(rest);
            out.extend_from_slice(&last[..last.len() / 2]);
            out
        },
    };

    /// A blank line in the middle of the file.
    pub const BLANK_LINE: Mutation = Mutation {
        name: "blank-line",
        apply: |b| {
            let mut l = lines(b);
            l.insert(l.len() / 2, b"");
            join(&l)
        },
    };

    /// A UTF-8 byte order mark before the first line.
    pub const BOM: Mutation = Mutation {
        name: "bom",
        apply: |b| {
            let mut out = b"\xEF\xBB\xBF".to_vec();
            out.extend_from_slice(b);
            out
        },
    };

    /// CRLF line ends.
    pub const CRLF: Mutation = Mutation {
        name: "crlf",
        apply: |b| super::replace_all(b, b"\n", b"\r\n"),
    };
}

#[cfg(test)]
mod tests {
    use super::generic::*;
    use super::*;

    #[test]
    fn generic_mutations_do_what_they_say() {
        let file = b"a\nb\nc\n";
        assert_eq!((SWAP_LAST_TWO.apply)(file), b"a\nc\nb\n");
        assert_eq!((SWAP_EVERY_PAIR.apply)(file), b"b\na\nc\n");
        assert_eq!((TORN_LAST_LINE.apply)(b"a\nbcde\n"), b"a\nbc");
        assert_eq!((BLANK_LINE.apply)(file), b"a\n\nb\nc\n");
        assert_eq!((BOM.apply)(b"a\n"), b"\xEF\xBB\xBFa\n");
        assert_eq!((CRLF.apply)(b"a\nb\n"), b"a\r\nb\r\n");
        assert_eq!(replace_all(b"/x/y and /x/y", b"/x/y", b"/z"), b"/z and /z");
        assert_eq!(lines(b"a\nb"), vec![&b"a"[..], &b"b"[..]]);
    }
}
