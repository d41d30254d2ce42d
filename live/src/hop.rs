//! One HOME where every CLI runs against one fake provider: a conversation hopping between the
//! real CLIs (issue 26). Each target's recipe configures its CLI in the shared HOME and names its
//! store root there; a [`SharedHome::turn`] resumes a session by its plan, as a person would, and
//! judges it as the live checks do: the CLI exits 0, its first model request carries the whole
//! session plus the prompt, it appended to the same file (our bytes first), and the plugin reads
//! the session back with the prompt and the fake's answer after what was there.

use std::path::{Path, PathBuf};

use handoff_capability::live::LiveRecipe;
use handoff_host::{
    Plugin, ReadFrom, ResumeCommand, ResumePlan, SessionRef, StoreRoot, TargetManifest, Transcript,
};

use crate::cli::{FoundCli, Invocation, RunOutcome};
use crate::fake_provider::FakeProvider;
use crate::interactive::type_until_sent;
use crate::pty::PtySession;
use crate::run::{installed, live_target, recipe_at, Evidence, Live, Place};
use crate::LiveOptions;

/// A temporary HOME shared by every CLI, with its project folder and one fake provider.
pub struct SharedHome {
    home: tempfile::TempDir,
    cwd: PathBuf,
    fake: FakeProvider,
    options: LiveOptions,
}

/// One target's CLI, configured in a [`SharedHome`], and its store root there.
pub struct Agent<'p> {
    plugin: &'p dyn Plugin,
    target: TargetManifest,
    recipe: LiveRecipe,
    cli: FoundCli,
    root: StoreRoot,
}

/// Why an agent cannot be had.
#[derive(Debug)]
pub enum AgentError {
    /// The CLI is not installed at the recipe's version: a skip, unless skips are failures.
    NotInstalled(String),
    /// Anything else.
    Failed(String),
}

impl Agent<'_> {
    /// Its store root in the shared HOME.
    pub fn root(&self) -> &StoreRoot {
        &self.root
    }

    /// The CLI's pinned version.
    pub fn version(&self) -> &str {
        &self.recipe.version
    }

    fn live<'a>(&'a self, options: &'a LiveOptions) -> Live<'a> {
        Live {
            plugin: self.plugin,
            target: &self.target,
            recipe: &self.recipe,
            cli: &self.cli,
            options,
        }
    }
}

impl SharedHome {
    /// A new HOME (in `options.scratch` or the system temp dir) with a project folder `proj`.
    pub fn new(options: LiveOptions) -> Result<SharedHome, String> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("handoff-hops-");
        let home = match &options.scratch {
            Some(dir) => builder.tempdir_in(dir),
            None => builder.tempdir(),
        }
        .map_err(|e| format!("cannot make a temporary HOME: {e}"))?;
        let cwd = home.path().join("proj");
        std::fs::create_dir_all(&cwd).map_err(|e| format!("cannot make {}: {e}", cwd.display()))?;
        let fake = FakeProvider::start().map_err(|e| e.to_string())?;
        Ok(SharedHome {
            home,
            cwd,
            fake,
            options,
        })
    }

    /// The project folder every session runs in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The HOME.
    pub fn path(&self) -> &Path {
        self.home.path()
    }

    /// Keeps the HOME on disk (for a failure's evidence) and returns where.
    pub fn keep(self) -> PathBuf {
        self.home.keep()
    }

    /// `target`'s CLI configured in this HOME (its recipe's files written), with its store root.
    pub fn agent<'p>(&self, plugin: &'p dyn Plugin, target: &str) -> Result<Agent<'p>, AgentError> {
        let (target, recipe) = live_target(plugin, target)
            .map_err(|failed| AgentError::Failed(failed.evidence.join("; ")))?;
        let cli = installed(&recipe, &self.options).map_err(AgentError::NotInstalled)?;
        let recipe = recipe_at(&recipe, &cli);
        let mut agent = Agent {
            plugin,
            target,
            recipe,
            cli,
            root: StoreRoot::new(self.home.path())
                .map_err(|e| AgentError::Failed(e.to_string()))?,
        };
        let live = agent.live(&self.options);
        agent.root = live
            .store_root_in(self.home.path())
            .map_err(|e| AgentError::Failed(e.join("; ")))?;
        let live = agent.live(&self.options);
        live.write_recipe_files(&self.place(&agent.root))
            .map_err(|e| AgentError::Failed(e.join("; ")))?;
        Ok(agent)
    }

    fn place<'s>(&'s self, root: &'s StoreRoot) -> Place<'s> {
        Place {
            home: self.home.path(),
            cwd: &self.cwd,
            root,
            base_url: self.fake.base_url(),
        }
    }

    /// Runs the agent's CLI with `args` in the project folder, with the recipe's environment
    /// (e.g. `codex migrate-rollouts --apply` on its store).
    pub fn run(&self, agent: &Agent<'_>, args: &[&str]) -> Result<RunOutcome, String> {
        let live = agent.live(&self.options);
        let plan = ResumePlan::Command(ResumeCommand {
            program: agent.recipe.program.clone(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            cwd: Some(self.cwd.clone()),
            close_stdin: true,
            interactive_args: None,
        });
        // The recipe's extra arguments are a resume's (a model, a provider): not these.
        let mut invocation = live
            .invocation(&self.place(&agent.root), plan, false)
            .map_err(|e| e.join("; "))?;
        invocation.args.truncate(args.len());
        crate::cli::run(&invocation).map_err(|e| e.to_string())
    }

    /// An invocation of `program` (not a CLI of the recipes: e.g. `handoff` itself, run as a
    /// person runs it) in the project folder, with what each of `agents` needs to run in this
    /// HOME: its recipe's environment, and its CLI's folder first on `PATH` so that a program
    /// that starts the CLI by name (a plan's `codex`) starts the installed one.
    pub fn invocation_for(
        &self,
        program: &Path,
        args: &[&str],
        agents: &[&Agent<'_>],
    ) -> Result<Invocation, String> {
        let mut env = Vec::new();
        let mut path: Vec<PathBuf> = Vec::new();
        for agent in agents {
            env.extend(
                agent
                    .live(&self.options)
                    .recipe_env(&self.place(&agent.root)),
            );
            path.extend(agent.cli.path.parent().map(Path::to_owned));
        }
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let path = std::env::join_paths(path).map_err(|e| format!("PATH: {e}"))?;
        env.push(("PATH".to_owned(), path.to_string_lossy().into_owned()));
        Ok(Invocation {
            program: program.to_owned(),
            args: args.iter().map(|a| a.to_string()).collect(),
            home: self.home.path().to_owned(),
            env,
            cwd: self.cwd.clone(),
            close_stdin: false,
            timeout: self.options.timeout,
        })
    }

    /// With `agent`'s terminal UI open on `terminal` (whoever opened it), types the options'
    /// prompt as a person would and judges the model request the CLI sends: it must carry
    /// `expected` plus the prompt. The evidence either way.
    pub fn judge_typed_turn(
        &self,
        agent: &Agent<'_>,
        terminal: &mut PtySession,
        expected: &Transcript,
    ) -> Result<Evidence, Evidence> {
        let live = agent.live(&self.options);
        let seen = self.fake.requests().len();
        let typed = type_until_sent(
            terminal,
            &self.fake,
            &self.options.prompt,
            self.options.timeout,
            &|requests| live.first_turn(requests).is_ok(),
        );
        let requests = self.fake.requests().split_off(seen);
        let mut evidence = vec![format!(
            "{} {} on a terminal, {} events expected",
            agent.recipe.program,
            agent.recipe.version,
            expected.events.len()
        )];
        let mut ok = match typed {
            Ok(line) => {
                evidence.push(line);
                true
            }
            Err(line) => {
                evidence.push(line);
                false
            }
        };
        ok &= live.judge_request(&requests, expected, &mut evidence);
        if ok {
            Ok(evidence)
        } else {
            Err(evidence)
        }
    }

    /// The real CLI resumes `session` by its resume plan with the options' prompt and answers
    /// one turn; judged as the live checks judge a resume (see the module). The evidence either
    /// way.
    pub fn turn(&self, agent: &Agent<'_>, session: &SessionRef) -> Result<Evidence, Evidence> {
        let live = agent.live(&self.options);
        let name = &agent.target.name;
        let before = agent
            .plugin
            .reader()
            .read(ReadFrom::Session(&agent.root, session))
            .map_err(|e| {
                vec![format!(
                    "{name}: cannot read {} before the turn: {e}",
                    session.id
                )]
            })?;
        let bytes = std::fs::read(&session.path)
            .map_err(|e| vec![format!("cannot read {}: {e}", session.path.display())])?;
        let plan = agent
            .plugin
            .resumer()
            .plan(&agent.root, session, &self.options.prompt)
            .map_err(|e| vec![format!("{name}: no resume plan for {}: {e}", session.id)])?;
        let invocation = live.invocation(&self.place(&agent.root), plan, false)?;
        let seen = self.fake.requests().len();
        let outcome = live.launch(&invocation)?;
        let requests = self.fake.requests().split_off(seen);
        let mut evidence = vec![format!(
            "{} {} resumed {} ({} events): {}",
            agent.recipe.program,
            live.cli_version(),
            session.id,
            before.events.len(),
            outcome.summary()
        )];
        let mut ok = outcome.succeeded();
        if !ok {
            evidence.push("the CLI did not exit 0".into());
        }
        ok &= live.judge_request(&requests, &before, &mut evidence);
        match std::fs::read(&session.path) {
            Ok(after) if after.starts_with(&bytes) && after.len() > bytes.len() => evidence.push(
                format!("{} grew in place, its bytes first", session.path.display()),
            ),
            Ok(_) => {
                ok = false;
                evidence.push(format!(
                    "the CLI did not append to {} (rewrote it, or wrote nothing)",
                    session.path.display()
                ));
            }
            Err(e) => {
                ok = false;
                evidence.push(format!("{} is gone: {e}", session.path.display()));
            }
        }
        match live.reread(&agent.root, &session.id, &before) {
            Ok(line) => evidence.push(line),
            Err(line) => {
                ok = false;
                evidence.push(line);
            }
        }
        if ok {
            Ok(evidence)
        } else {
            Err(evidence)
        }
    }
}
