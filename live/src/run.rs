//! Running the live checks of one target.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use handoff_capability::live::LiveRecipe;
use handoff_host::{
    Body, ById, CreateOptions, Part, Plugin, ResumePlan, SessionRef, StoreRoot, TargetManifest,
    Transcript,
};

use super::cli::{find_cli, run, tail, FoundCli, Invocation, RunOutcome};
use super::wire::{
    align_masked_tool_outputs, aligned_request_view, expected_request, history_from_request,
    is_masked_tool_output, request_model, wire_view,
};
use super::{check_id, CliEnd, LiveOptions, MISSING_ID};
use crate::fake_provider::{FakeProvider, FakeProviderOptions, LoggedRequest};
use handoff_conformance::corpus::Entry;
use handoff_conformance::report::{CheckResult, Status};

pub(crate) type Evidence = Vec<String>;

/// One live check of a target.
enum Job<'c> {
    /// Write this entry, resume it, compare the first request.
    Resume(&'c Entry),
    /// Write this entry, plan it, remove it, resume: must fail without a request.
    MissingId(Option<&'c Entry>),
}

/// The live checks of `target` over `corpus` (the entries it carries; `options.only` filters
/// them), then the missing-id check (on the first entry it carries, whatever the filter).
fn jobs<'c>(
    target: &TargetManifest,
    corpus: &'c [Entry],
    options: &LiveOptions,
) -> Vec<(String, Job<'c>)> {
    let carried: Vec<&Entry> = corpus
        .iter()
        .filter(|e| target.check_carried(&e.transcript).is_ok())
        .collect();
    let mut jobs: Vec<(String, Job<'c>)> = carried
        .iter()
        .filter(|e| options.only.is_empty() || options.only.iter().any(|o| o == e.name))
        .map(|e| (check_id(&target.name, e.name), Job::Resume(e)))
        .collect();
    jobs.push((
        check_id(&target.name, MISSING_ID),
        Job::MissingId(carried.first().copied()),
    ));
    jobs
}

/// The target's manifest and recipe, or the failed check that says why there is none.
pub(crate) fn live_target(
    plugin: &dyn Plugin,
    target: &str,
) -> Result<(TargetManifest, LiveRecipe), CheckResult> {
    let manifest = plugin.manifest();
    let Some(target_manifest) = manifest.target(target).cloned() else {
        return Err(fail_now(
            check_id(target, "recipe"),
            format!("plugin {} has no target {target:?}", manifest.name),
        ));
    };
    let Some(recipe) = target_manifest.live.clone() else {
        return Err(fail_now(
            check_id(target, "recipe"),
            format!("target {target} declares no live recipe"),
        ));
    };
    Ok((target_manifest, recipe))
}

/// The ids of every live check of every live target of `plugin` over `corpus`, in run order.
pub fn live_check_ids(plugin: &dyn Plugin, corpus: &[Entry]) -> Vec<String> {
    let options = LiveOptions::default();
    super::live_targets(plugin)
        .iter()
        .filter_map(|t| live_target(plugin, t).ok())
        .flat_map(|(target, _)| {
            jobs(&target, corpus, &options)
                .into_iter()
                .map(|(id, _)| id)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The live checks of one target over `corpus` (the entries the target carries), then the
/// missing-id check. The CLI absent or at another version: every check is a skip with the reason.
pub fn run_live(
    plugin: &dyn Plugin,
    target: &str,
    corpus: &[Entry],
    options: &LiveOptions,
) -> Vec<CheckResult> {
    let (target_manifest, recipe) = match live_target(plugin, target) {
        Ok(found) => found,
        Err(failed) => return vec![failed],
    };
    let jobs = jobs(&target_manifest, corpus, options);
    let cli = match installed(&recipe, options) {
        Ok(cli) => cli,
        Err(reason) => return jobs.into_iter().map(|(id, _)| skip(id, &reason)).collect(),
    };
    let recipe = recipe_at(&recipe, &cli);
    let live = Live {
        plugin,
        target: &target_manifest,
        recipe: &recipe,
        cli: &cli,
        options,
    };
    jobs.iter().map(|(id, job)| live.run_job(id, job)).collect()
}

/// Runs one live check by id (`live/<target>/<corpus entry>` or `live/<target>/missing-id`), as
/// a check process of the `conformance` binary does. An unknown id is a failed check naming the
/// known ones.
pub fn run_live_check(
    plugin: &dyn Plugin,
    id: &str,
    corpus: &[Entry],
    options: &LiveOptions,
) -> CheckResult {
    let target = id
        .strip_prefix("live/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(target, _)| target)
        .unwrap_or_default();
    let (target_manifest, recipe) = match live_target(plugin, target) {
        Ok(found) => found,
        Err(failed) => {
            return CheckResult {
                id: id.to_owned(),
                ..failed
            }
        }
    };
    let all = LiveOptions {
        only: Vec::new(),
        ..options.clone()
    };
    let jobs = jobs(&target_manifest, corpus, &all);
    let Some((_, job)) = jobs.iter().find(|(job_id, _)| job_id == id) else {
        let known: Vec<&str> = jobs.iter().map(|(j, _)| j.as_str()).collect();
        return fail_now(
            id.to_owned(),
            format!(
                "no live check {id:?}; the live checks of {target} are: {}",
                known.join(", ")
            ),
        );
    };
    match installed(&recipe, options) {
        Err(reason) => skip(id.to_owned(), &reason),
        Ok(cli) => Live {
            plugin,
            target: &target_manifest,
            recipe: &recipe_at(&recipe, &cli),
            cli: &cli,
            options,
        }
        .run_job(id, job),
    }
}

fn skip(id: String, reason: &str) -> CheckResult {
    CheckResult {
        id,
        status: Status::Skip,
        duration_ms: 0.0,
        evidence: vec![reason.to_owned()],
    }
}

/// The live checks of one target over the built-in corpus.
pub fn run_live_target(
    plugin: &dyn Plugin,
    target: &str,
    options: &LiveOptions,
) -> Vec<CheckResult> {
    run_live(
        plugin,
        target,
        handoff_conformance::corpus::entries(),
        options,
    )
}

/// The installed CLI at the version of `options.end` of the recipe's verified range, or why
/// there is none. The newest end, where it is not the pinned version, is looked for first in the
/// cache's `newest/` folder (`scripts/install-clis.sh --newest`), under the package the pins name
/// for it.
pub(crate) fn installed(recipe: &LiveRecipe, options: &LiveOptions) -> Result<FoundCli, String> {
    let range = recipe.verified_range();
    // A CLI may have moved to another package by its newest version (the pins name it).
    let newest_package = || {
        crate::cli::pinned_for_package(&recipe.npm_package)
            .and_then(|pin| pin.newest_package)
            .unwrap_or_else(|| recipe.npm_package.clone())
    };
    let (version, package, install) = match options.end {
        CliEnd::Candidate => (range.newest, newest_package(), "scripts/newest-clis.sh"),
        CliEnd::Newest if range.newest != recipe.version => (
            range.newest,
            newest_package(),
            "scripts/install-clis.sh --newest",
        ),
        _ => (
            recipe.version.clone(),
            recipe.npm_package.clone(),
            "scripts/install-clis.sh",
        ),
    };
    let cli_dir = match (options.end, &options.cli_dir) {
        (_, Some(dir)) => Some(dir.clone()),
        (CliEnd::Newest | CliEnd::Candidate, None) => crate::cli::newest_cache(),
        (CliEnd::Oldest, None) => None,
    };
    let found = find_cli(&recipe.program, &package, cli_dir.as_deref())?;
    match &found.version {
        Some(v) if v == &version || options.end == CliEnd::Candidate => Ok(found),
        Some(v) => Err(format!(
            "{}: {} is version {v}, the recipe pins {version} for this run; run {install}",
            recipe.program, found.how
        )),
        None => Err(format!(
            "{}: {} but its {package} version cannot be read (the recipe pins {version} for this run); \
             install it with {install}",
            recipe.program, found.how
        )),
    }
}

/// `recipe` as it holds for the CLI found: the rules of the version it runs
/// ([`LiveRecipe::at_version`]; the pinned version's when its version cannot be read).
pub(crate) fn recipe_at(recipe: &LiveRecipe, cli: &FoundCli) -> LiveRecipe {
    recipe.at_version(cli.version.as_deref().unwrap_or(&recipe.version))
}

fn fail_now(id: String, why: String) -> CheckResult {
    CheckResult {
        id,
        status: Status::Fail,
        duration_ms: 0.0,
        evidence: vec![why],
    }
}

/// Runs a check body; a panic fails the check instead of ending the caller.
fn timed(id: &str, check: impl FnOnce() -> Result<Evidence, Evidence>) -> CheckResult {
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
    let (status, evidence) = match outcome {
        Ok(Ok(e)) => (Status::Pass, e),
        Ok(Err(e)) => (Status::Fail, e),
        Err(panic) => {
            let message = handoff_capability::panic_message(&*panic);
            (Status::Fail, vec![format!("panicked: {message}")])
        }
    };
    CheckResult {
        id: id.to_owned(),
        status,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
        evidence,
    }
}

/// One target's live setting.
pub(crate) struct Live<'a> {
    pub(crate) plugin: &'a dyn Plugin,
    pub(crate) target: &'a TargetManifest,
    pub(crate) recipe: &'a LiveRecipe,
    pub(crate) cli: &'a FoundCli,
    pub(crate) options: &'a LiveOptions,
}

/// A temporary HOME with the recipe applied, a store root and a fake provider.
pub(crate) struct Scene {
    pub(crate) home: tempfile::TempDir,
    pub(crate) cwd: PathBuf,
    pub(crate) root: StoreRoot,
    pub(crate) fake: FakeProvider,
}

/// Where a CLI runs: its HOME, project folder, store root and the fake provider's address.
pub(crate) struct Place<'s> {
    pub(crate) home: &'s Path,
    pub(crate) cwd: &'s Path,
    pub(crate) root: &'s StoreRoot,
    pub(crate) base_url: String,
}

impl Scene {
    pub(crate) fn place(&self) -> Place<'_> {
        Place {
            home: self.home.path(),
            cwd: &self.cwd,
            root: &self.root,
            base_url: self.fake.base_url(),
        }
    }

    /// Keeps the HOME on disk when asked, saying where.
    pub(crate) fn finish(self, keep: bool, evidence: &mut Evidence) {
        if keep {
            let path = self.home.keep();
            evidence.push(format!("temporary HOME kept at {}", path.display()));
        }
    }
}

impl Live<'_> {
    fn run_job(&self, id: &str, job: &Job<'_>) -> CheckResult {
        timed(id, || match job {
            Job::Resume(entry) => self.resume_check(entry),
            Job::MissingId(Some(entry)) => self.missing_id_check(&entry.transcript),
            Job::MissingId(None) => Err(vec![format!(
                "{} carries no corpus transcript, so no session can be written",
                self.name()
            )]),
        })
    }

    fn name(&self) -> &str {
        &self.target.name
    }

    /// The version of the CLI the checks run (read from its package; the pin if unreadable).
    pub(crate) fn cli_version(&self) -> &str {
        self.cli.version.as_deref().unwrap_or(&self.recipe.version)
    }

    pub(crate) fn scene(&self) -> Result<Scene, Evidence> {
        let io = |what: &str, e: std::io::Error| vec![format!("{what}: {e}")];
        let builder = {
            let mut b = tempfile::Builder::new();
            b.prefix("handoff-live-");
            b
        };
        let home = match &self.options.scratch {
            Some(dir) => builder.tempdir_in(dir),
            None => builder.tempdir(),
        }
        .map_err(|e| io("cannot make a temporary HOME", e))?;
        let log_file = self
            .options
            .keep_homes
            .then(|| home.path().join("handoff-live-requests.jsonl"));
        let fake = FakeProvider::start_with(FakeProviderOptions {
            log_file,
            ..FakeProviderOptions::default()
        })
        .map_err(|e| vec![e.to_string()])?;
        let cwd = home.path().join("proj");
        std::fs::create_dir_all(&cwd).map_err(|e| io("cannot make the project folder", e))?;
        let store_rel = relative_inside(&self.recipe.store_root)
            .map_err(|why| vec![format!("recipe store_root: {why}")])?;
        let store = home.path().join(store_rel);
        std::fs::create_dir_all(&store).map_err(|e| io("cannot make the store root", e))?;
        let root = StoreRoot::new(&store).map_err(|e| vec![e.to_string()])?;
        let scene = Scene {
            home,
            cwd,
            root,
            fake,
        };
        self.write_recipe_files(&scene.place())?;
        Ok(scene)
    }

    /// The store root the recipe names, under `home`.
    pub(crate) fn store_root_in(&self, home: &Path) -> Result<StoreRoot, Evidence> {
        let store_rel = relative_inside(&self.recipe.store_root)
            .map_err(|why| vec![format!("recipe store_root: {why}")])?;
        let store = home.join(store_rel);
        std::fs::create_dir_all(&store)
            .map_err(|e| vec![format!("cannot make the store root: {e}")])?;
        StoreRoot::new(&store).map_err(|e| vec![e.to_string()])
    }

    /// Writes the recipe's files (the CLI's configuration) into the place's HOME.
    pub(crate) fn write_recipe_files(&self, place: &Place<'_>) -> Result<(), Evidence> {
        let io = |what: &str, e: std::io::Error| vec![format!("{what}: {e}")];
        for (path, contents) in &self.recipe.files {
            let rel = relative_inside(path)
                .map_err(|why| vec![format!("recipe file {path:?}: {why}")])?;
            let file = place.home.join(rel);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| io(&format!("cannot make {}", parent.display()), e))?;
            }
            std::fs::write(&file, self.fill(contents, place))
                .map_err(|e| io(&format!("cannot write {}", file.display()), e))?;
        }
        Ok(())
    }

    /// The recipe string with its placeholders filled in.
    /// The recipe's environment, its placeholders filled for `place`.
    pub(crate) fn recipe_env(&self, place: &Place<'_>) -> Vec<(String, String)> {
        self.recipe
            .env
            .iter()
            .map(|(k, v)| (k.clone(), self.fill(v, place)))
            .collect()
    }

    fn fill(&self, text: &str, place: &Place<'_>) -> String {
        text.replace("{base_url}", &place.base_url)
            .replace("{home}", &place.home.to_string_lossy())
            .replace("{store_root}", &place.root.path().to_string_lossy())
    }

    /// Writes `transcript` as a session of the target, in the scene's project folder.
    pub(crate) fn write(
        &self,
        scene: &Scene,
        transcript: &Transcript,
    ) -> Result<handoff_host::SessionRef, Evidence> {
        let cwd = scene.cwd.to_string_lossy().into_owned();
        let mut transcript = transcript.clone();
        transcript.cwd = Some(cwd.clone());
        self.plugin
            .writer()
            .create(
                &scene.root,
                self.name(),
                &transcript,
                &CreateOptions {
                    cwd: Some(cwd),
                    locator: None,
                },
            )
            .map_err(|e| vec![format!("the writer refused the transcript: {e}")])
    }

    /// The plan's command as an invocation in this scene: its headless command, or with
    /// `interactive` its interactive one (which the plan must offer).
    pub(crate) fn invocation(
        &self,
        scene: &Place<'_>,
        plan: ResumePlan,
        interactive: bool,
    ) -> Result<Invocation, Evidence> {
        let ResumePlan::Command(command) = plan else {
            return Err(vec![format!(
                "the resume plan of CLI target {} is not a command: {plan:?}",
                self.name()
            )]);
        };
        let (mut args, close_stdin) = match (interactive, command.interactive_args) {
            (false, _) => (command.args, command.close_stdin),
            (true, Some(interactive)) => (interactive, false),
            (true, None) => {
                return Err(vec![format!(
                    "the resume plan of {} offers no interactive command",
                    self.name()
                )])
            }
        };
        let program = if command.program == self.recipe.program {
            self.cli.path.clone()
        } else {
            find_cli(
                &command.program,
                &self.recipe.npm_package,
                self.options.cli_dir.as_deref(),
            )
            .map_err(|e| vec![e])?
            .path
        };
        let mut extra = self.recipe.extra_args.iter();
        while let Some(arg) = extra.next() {
            if self.options.omitted_options.contains(arg) {
                extra.next(); // its value
                continue;
            }
            args.push(self.fill(arg, scene));
        }
        let mut all_env = self.recipe_env(scene);
        all_env.extend(command.env);
        Ok(Invocation {
            program,
            args,
            home: scene.home.to_owned(),
            env: all_env,
            cwd: command.cwd.unwrap_or_else(|| scene.cwd.to_owned()),
            close_stdin,
            timeout: self.options.timeout,
        })
    }

    pub(crate) fn plan(&self, scene: &Scene, session: &SessionRef) -> Result<ResumePlan, Evidence> {
        self.plugin
            .resumer()
            .plan(&scene.root, session, &self.options.prompt)
            .map_err(|e| vec![format!("the resumer gave no plan for {}: {e}", session.id)])
    }

    pub(crate) fn launch(&self, invocation: &Invocation) -> Result<RunOutcome, Evidence> {
        run(invocation).map_err(|e| {
            vec![format!(
                "cannot run {} {:?}: {e}",
                invocation.program.display(),
                invocation.args
            )]
        })
    }

    fn listed_ids(&self, scene: &Scene) -> Result<BTreeSet<String>, String> {
        self.plugin
            .reader()
            .list(&scene.root, self.name())
            .map(|list| list.into_iter().map(|s| s.session.id).collect())
            .map_err(|e| format!("the reader cannot list the store: {e}"))
    }

    /// Write, resume with a new prompt, and require the first model request to carry the
    /// transcript plus the prompt, and the session to be the one we wrote.
    fn resume_check(&self, entry: &Entry) -> Result<Evidence, Evidence> {
        let scene = self.scene()?;
        let session = self.write(&scene, &entry.transcript)?;
        let written = std::fs::read(&session.path)
            .map_err(|e| vec![format!("cannot read {}: {e}", session.path.display())])?;
        let listed_before = self.listed_ids(&scene).map_err(|e| vec![e])?;
        let plan = self.plan(&scene, &session)?;
        let invocation = self.invocation(&scene.place(), plan, false)?;
        let outcome = self.launch(&invocation)?;
        let requests = scene.fake.requests();

        let mut evidence = vec![format!(
            "{} {} resumed {} ({} events) with {:?}: {}",
            self.recipe.program,
            self.cli_version(),
            session.id,
            entry.transcript.events.len(),
            invocation.args,
            outcome.summary()
        )];
        let mut failed = false;
        let mut fail = |evidence: &mut Evidence, line: String| {
            failed = true;
            evidence.push(line);
        };
        if !outcome.succeeded() {
            fail(&mut evidence, "the CLI did not exit 0".into());
        }
        if !self.judge_request(&requests, &entry.transcript, &mut evidence) {
            fail(
                &mut evidence,
                "the resumed request does not carry the transcript (above)".into(),
            );
        }

        // The CLI appended to our session: same file, our bytes first, no other session.
        match std::fs::read(&session.path) {
            Err(e) => fail(
                &mut evidence,
                format!(
                    "the session file {} is gone after the resume: {e}",
                    session.path.display()
                ),
            ),
            Ok(after) if !after.starts_with(&written) => fail(
                &mut evidence,
                format!(
                    "the CLI rewrote {} instead of appending: the first {} bytes we wrote changed",
                    session.path.display(),
                    written.len()
                ),
            ),
            // A session whose rows live in a database the store shares is named by
            // a handle file the CLI never writes: the read-back below is what shows the turn.
            Ok(after) if after.len() == written.len() && self.shares_a_database(&scene) => {
                evidence.push(format!(
                    "{} is a handle of a session in the store's database; the read-back judges the append",
                    session.path.display()
                ))
            }
            Ok(after) if after.len() == written.len() => fail(
                &mut evidence,
                format!(
                    "the CLI did not append the new turn to {}",
                    session.path.display()
                ),
            ),
            Ok(after) => evidence.push(format!(
                "{} grew from {} to {} bytes, our bytes untouched",
                session.path.display(),
                written.len(),
                after.len()
            )),
        }
        match self.listed_ids(&scene) {
            Err(e) => fail(&mut evidence, format!("after the resume, {e}")),
            Ok(after) if after != listed_before => fail(
                &mut evidence,
                format!("the sessions changed: before {listed_before:?}, after {after:?}"),
            ),
            Ok(after) => evidence.push(format!("the store still lists exactly {after:?}")),
        }
        // The continuation engine reads sessions a person went on with in the real CLI: our reader
        // must read what the CLI appended, our events first, then the prompt and the answer.
        match self.reread(&scene.root, &session.id, &entry.transcript) {
            Ok(line) => evidence.push(line),
            // A CLI that writes the history back as it sent it (Gemini CLI, once it masks
            // outputs) is judged by its own next resume of the file instead.
            Err(line) => match self.judge_rewritten(&scene, &session, &entry.transcript) {
                None => fail(&mut evidence, line),
                Some(Ok(lines)) => evidence.extend(lines),
                Some(Err(lines)) => {
                    evidence.push(line);
                    evidence.extend(lines);
                    fail(
                        &mut evidence,
                        "the rewritten session does not read as the CLI sends it".into(),
                    );
                }
            },
        }
        let named = outcome.stdout.contains(&session.id) || outcome.stderr.contains(&session.id);
        evidence.push(format!(
            "the CLI's output {} the session id",
            if named { "names" } else { "does not name" }
        ));
        scene.finish(self.options.keep_homes || failed, &mut evidence);
        if failed {
            Err(evidence)
        } else {
            Ok(evidence)
        }
    }

    /// Whether the first model request with the prompt carries `transcript` plus the prompt, as
    /// the recipe expects the CLI to send it; the evidence says so either way.
    pub(crate) fn judge_request(
        &self,
        requests: &[LoggedRequest],
        transcript: &Transcript,
        evidence: &mut Evidence,
    ) -> bool {
        match self.first_turn(requests) {
            Err(why) => {
                evidence.push(why);
                evidence.push(format!("requests received: {}", describe(requests)));
                false
            }
            Ok((request, history)) => {
                let dialect = self.recipe.dialect;
                let (whole, notes) = expected_request(
                    transcript.clone(),
                    request_model(&request.body),
                    &self.options.prompt,
                    &self.recipe.injected,
                    &self.target.thinking_from,
                    dialect,
                );
                evidence.extend(notes);
                let expected = wire_view(&whole, &self.target.thinking_from, dialect);
                let actual = aligned_request_view(&history, dialect, &whole, &self.recipe.injected);
                evidence.extend(dialect.limit_notes());
                match self.target.comparison().diff(&expected, &actual) {
                    Ok(()) => {
                        evidence.push(format!(
                            "request #{} ({} {}) carries the transcript plus the prompt: {} wire turns equal",
                            request.seq,
                            request.method,
                            request.path,
                            expected.events.len()
                        ));
                        true
                    }
                    Err(diff) => {
                        evidence.push(format!(
                            "request #{} differs from the transcript plus the prompt (left: \
                             transcript, right: request): {diff}",
                            request.seq
                        ));
                        false
                    }
                }
            }
        }
    }

    /// The read-back of a session the CLI rewrote, under [`Injected::ToolOutputMasked`]: Gemini
    /// CLI, once it masks tool outputs, records the history as it sends it (a `$set` of every
    /// message: masked outputs, consecutive turns of a role merged, its own `<session_context>`
    /// turn merged with the first user turn, new ids and times), so the file no longer starts with
    /// what we wrote. Then the judge is the CLI itself: the reader's read-back must end with the
    /// prompt and the answer, and a second resume of the file must send the read-back plus the
    /// prompt. `None` when this is no such rewrite (the recipe has no masking, or the read-back
    /// holds no masked output): the prefix check's failure stands. The evidence says what the
    /// rewrite changed from the transcript we wrote.
    ///
    /// [`Injected::ToolOutputMasked`]: handoff_capability::live::Injected::ToolOutputMasked
    fn judge_rewritten(
        &self,
        scene: &Scene,
        session: &SessionRef,
        written: &Transcript,
    ) -> Option<Result<Evidence, Evidence>> {
        use handoff_capability::live::Injected;
        if !self.recipe.injected.contains(&Injected::ToolOutputMasked) {
            return None;
        }
        let read = self
            .plugin
            .read_id(&scene.root, self.name(), &session.id)
            .ok()?;
        let masked = read
            .events
            .iter()
            .filter(|e| is_masked_tool_output(e))
            .count();
        if masked == 0 {
            return None;
        }
        let mut evidence = vec![format!(
            "the CLI rewrote the session's history as it sent it ({masked} tool outputs masked; \
             read back: {} events, we wrote {}): its next resume judges the read-back",
            read.events.len(),
            written.events.len()
        )];
        // What the rewrite changed, in the wire view (said, not judged: the CLI chose it).
        let prompt_at = read.events.iter().rposition(|e| {
            matches!(&e.body, Body::User { content }
                if content.iter().any(|p| matches!(p, Part::Text { text } if text.trim() == self.options.prompt.trim())))
        });
        let Some(prompt_at) = prompt_at else {
            evidence.push("read back after the resume, no user turn holds the prompt".into());
            return Some(Err(evidence));
        };
        let answered = read.events[prompt_at + 1..].iter().any(|e| {
            matches!(&e.body, Body::Assistant { content, .. }
                if content.iter().any(|p| matches!(p, handoff_host::AssistantPart::Text { text } if text.contains("ok"))))
        });
        if !answered {
            evidence
                .push("read back after the resume, no assistant turn follows the prompt".into());
            return Some(Err(evidence));
        }
        let dialect = self.recipe.dialect;
        let thinking_from = &self.target.thinking_from;
        let history = Transcript::new(read.events[..prompt_at].to_vec());
        let mut rewritten = wire_view(&history, thinking_from, dialect);
        align_masked_tool_outputs(written, &mut rewritten);
        let comparison = self.target.comparison();
        let as_written = |from: usize| {
            let rest = Transcript::new(written.events[from..].to_vec());
            comparison.diff(&wire_view(&rest, thinking_from, dialect), &rewritten)
        };
        // Gemini CLI merges its `<session_context>` turn with the first user turn, and drops
        // that merged message on resume: the rewrite is what we wrote without it.
        let first_turn_end = written
            .events
            .iter()
            .position(|e| !matches!(e.body, Body::User { .. }))
            .unwrap_or(written.events.len());
        match as_written(0) {
            Ok(()) => evidence.push(
                "the rewritten history, masked outputs aligned, is the transcript we wrote as the \
                 wire shows it"
                    .into(),
            ),
            Err(_) if first_turn_end > 0 && as_written(first_turn_end).is_ok() => {
                evidence.push(format!(
                    "the rewritten history, masked outputs aligned, is the transcript we wrote \
                     without its first user turn ({first_turn_end} events): the CLI merged it into \
                     its own context turn, which it does not send on resume (its own choice; the \
                     request of this resume carried it)"
                ))
            }
            Err(diff) => evidence.push(format!(
                "the rewritten history differs from the transcript we wrote as the wire shows it \
                 (left: written, right: read back; the CLI's own rewrite): {diff}"
            )),
        }
        // The CLI's next resume of the rewritten file.
        let second = (|| {
            let plan = self.plan(scene, session)?;
            let invocation = self.invocation(&scene.place(), plan, false)?;
            let seen = scene.fake.requests().len();
            let outcome = self.launch(&invocation)?;
            let mut requests = scene.fake.requests();
            Ok::<_, Evidence>((outcome, requests.split_off(seen.min(requests.len()))))
        })();
        let (outcome, requests) = match second {
            Ok(ran) => ran,
            Err(lines) => {
                evidence.extend(lines);
                return Some(Err(evidence));
            }
        };
        evidence.push(format!(
            "resumed again, the rewritten file: {}",
            outcome.summary()
        ));
        if self.judge_request(&requests, &read, &mut evidence) {
            evidence.push(format!(
                "read back: the CLI's rewritten history ({prompt_at} events), then the prompt and \
                 the answer; its next resume sends exactly that"
            ));
            Some(Ok(evidence))
        } else {
            Some(Err(evidence))
        }
    }

    /// Whether the store keeps its sessions in one SQLite database at the top of the store root
    /// (the CLI writes there, not to the session's own file).
    fn shares_a_database(&self, scene: &Scene) -> bool {
        use std::io::Read as _;
        let Ok(entries) = std::fs::read_dir(scene.root.path()) else {
            return false;
        };
        entries.flatten().any(|entry| {
            let mut header = [0u8; 16];
            std::fs::File::open(entry.path())
                .and_then(|mut f| f.read_exact(&mut header))
                .is_ok_and(|()| &header == b"SQLite format 3\0")
        })
    }

    /// Reads the resumed session back: `written` must be a prefix, followed by the prompt as a user
    /// turn and an assistant turn holding the fake provider's answer.
    pub(crate) fn reread(
        &self,
        root: &StoreRoot,
        id: &str,
        written: &Transcript,
    ) -> Result<String, String> {
        let read = self
            .plugin
            .read_id(root, self.name(), id)
            .map_err(|e| format!("the reader cannot read the session the CLI resumed: {e}"))?;
        let comparison = self.target.comparison();
        let covered = comparison.prefix_of(written, &read).map_err(|diff| {
            format!("read back after the resume, the session no longer starts with the transcript: {diff}")
        })?;
        let rest = &read.events[covered..];
        // The prompt as the CLI stored it: a tag the recipe says it puts before the prompt
        // (`Injected::PromptLeadingTag`) may lead it.
        let is_prompt = |text: &str| {
            let untagged = self
                .recipe
                .injected
                .iter()
                .find_map(|rule| rule.strip_prompt_tag(text))
                .unwrap_or(text);
            untagged.trim() == self.options.prompt.trim()
        };
        let prompt_at = rest.iter().position(|e| {
            matches!(&e.body, Body::User { content }
                if content.iter().any(|p| matches!(p, Part::Text { text } if is_prompt(text))))
        });
        let Some(prompt_at) = prompt_at else {
            return Err(format!(
                "read back after the resume, the {} events after the transcript hold no user turn with the prompt",
                rest.len()
            ));
        };
        let answered = rest[prompt_at + 1..].iter().any(|e| {
            matches!(&e.body, Body::Assistant { content, .. }
                if content.iter().any(|p| matches!(p, handoff_host::AssistantPart::Text { text } if text.contains("ok"))))
        });
        if !answered {
            return Err("read back after the resume, no assistant turn follows the prompt".into());
        }
        Ok(format!(
            "read back: the transcript ({covered} events), then {} events the CLI appended (prompt and answer)",
            rest.len()
        ))
    }

    /// The first model request of the recipe's dialect whose last user turn holds the prompt,
    /// parsed with what the CLI injected set aside.
    pub(crate) fn first_turn<'r>(
        &self,
        requests: &'r [LoggedRequest],
    ) -> Result<(&'r LoggedRequest, Transcript), String> {
        let mut seen = Vec::new();
        for request in requests.iter().filter(|r| r.is_model_turn()) {
            if request.endpoint.dialect() != Some(self.recipe.dialect) {
                seen.push(format!(
                    "#{} speaks {:?}",
                    request.seq,
                    request.endpoint.dialect()
                ));
                continue;
            }
            if let Some(refusal) = &request.refusal {
                seen.push(format!("#{} was refused: {refusal}", request.seq));
                continue;
            }
            match history_from_request(self.recipe.dialect, &request.body, &self.recipe.injected) {
                Err(why) => seen.push(format!("#{}: {why}", request.seq)),
                Ok(history) => {
                    if ends_with_prompt(&history, &self.options.prompt) {
                        return Ok((request, history));
                    }
                    seen.push(format!(
                        "#{} is a side request (its last user turn is not the prompt)",
                        request.seq
                    ));
                }
            }
        }
        Err(format!(
            "no {} model request carried the new prompt{}",
            self.recipe.dialect,
            if seen.is_empty() {
                String::new()
            } else {
                format!(": {}", seen.join("; "))
            }
        ))
    }

    /// A session written, planned and then removed: the CLI must fail and ask no model.
    fn missing_id_check(&self, transcript: &Transcript) -> Result<Evidence, Evidence> {
        let scene = self.scene()?;
        let session = self.write(&scene, transcript)?;
        let plan = self.plan(&scene, &session)?;
        self.plugin
            .writer()
            .remove(&scene.root, &session)
            .map_err(|e| {
                vec![format!(
                    "cannot remove {} to make its id missing: {e}",
                    session.id
                )]
            })?;
        if let Ok(found) = self
            .plugin
            .resumer()
            .resolve(&scene.root, self.name(), &session.id)
        {
            return Err(vec![format!(
                "the resumer still resolves removed id {} to {}",
                session.id,
                found.path.display()
            )]);
        }
        let invocation = self.invocation(&scene.place(), plan, false)?;
        let outcome = self.launch(&invocation)?;
        let asked: Vec<_> = scene
            .fake
            .requests()
            .into_iter()
            .filter(LoggedRequest::is_model_turn)
            .collect();
        let mut evidence = vec![format!(
            "{} {} with missing id {}: {}",
            self.recipe.program,
            self.cli_version(),
            session.id,
            outcome.summary()
        )];
        let mut ok = true;
        if outcome.succeeded() || outcome.timed_out {
            ok = false;
            evidence.push("a missing id must make the CLI exit non-zero (promptly)".into());
        }
        if !asked.is_empty() {
            ok = false;
            evidence.push(format!(
                "a missing id must send no model request; sent: {}",
                describe(&asked)
            ));
        }
        scene.finish(self.options.keep_homes || !ok, &mut evidence);
        if ok {
            Ok(evidence)
        } else {
            Err(evidence)
        }
    }
}

/// Whether the last user turn of `history` holds `prompt` as a text part.
fn ends_with_prompt(history: &Transcript, prompt: &str) -> bool {
    history
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            Body::User { content } => Some(content),
            _ => None,
        })
        .is_some_and(|content| {
            content
                .iter()
                .any(|p| matches!(p, Part::Text { text } if text.trim() == prompt.trim()))
        })
}

/// One line per request: sequence number, endpoint, path and status.
pub(crate) fn describe(requests: &[LoggedRequest]) -> String {
    if requests.is_empty() {
        return "none".into();
    }
    requests
        .iter()
        .map(|r| {
            let error = r
                .body_error
                .as_deref()
                .or(r.refusal.as_deref())
                .map(|e| format!(" ({})", tail(e, 160)))
                .unwrap_or_default();
            format!(
                "#{} {} {} → {:?} {}{error}",
                r.seq, r.method, r.path, r.endpoint, r.status
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A recipe path as a relative path that stays inside the temporary HOME.
fn relative_inside(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if p.as_os_str().is_empty() {
        return Err("is empty".into());
    }
    for component in p.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            _ => {
                return Err(format!(
                    "{path:?} must be relative and stay inside the temporary HOME"
                ))
            }
        }
    }
    Ok(p.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_host::{Event, Timestamp};

    #[test]
    fn recipe_paths_stay_inside_home() {
        assert!(relative_inside(".claude").is_ok());
        assert!(relative_inside("codex/config.toml").is_ok());
        assert!(relative_inside("../x").is_err());
        assert!(relative_inside("/etc/passwd").is_err());
        assert!(relative_inside("").is_err());
    }

    #[test]
    fn the_prompt_must_be_the_last_user_turn() {
        let user = |t: &str| Event::new("u", Timestamp::from_millis(0), Body::user_text(t));
        let history = Transcript::new(vec![user("hi"), user("go on")]);
        assert!(ends_with_prompt(&history, "go on"));
        assert!(!ends_with_prompt(&history, "hi"));
        assert!(!ends_with_prompt(&Transcript::new(vec![]), "hi"));
    }
}
