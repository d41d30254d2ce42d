use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use handoff_host::continuation::{
    continue_conversation, Action, ContinueRequest, Continued, Source, SourceFile,
};
use handoff_host::registry::PluginSource;
use handoff_host::{Feature, ReadFrom, ResumePlan, TargetKind};
use serde_json::json;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output::{self, outln};
use crate::progress::Progress;

#[derive(clap::Args)]
pub struct Args {
    /// The source: `<target>:<session id or path>`, e.g. `claude-code:./3f1c….jsonl`; a bare
    /// `<target>` takes its newest session of the current directory (or `--cwd`), named on stderr.
    #[arg(long, value_name = "TARGET[:SESSION]")]
    from: String,
    /// The target to continue on, e.g. `codex`.
    #[arg(long, value_name = "TARGET")]
    to: String,
    /// The working directory of the new session (must exist); default: the source's, which must
    /// then exist on this machine for a CLI target (its resume command runs there).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The target's store root; default: the configured or real one (e.g. ~/.codex).
    #[arg(long, value_name = "DIR")]
    store_root: Option<PathBuf>,
    /// The source's store root, when the source is given by id.
    #[arg(long, value_name = "DIR")]
    from_store_root: Option<PathBuf>,
    /// The prompt of the headless resume command (default: "Continue where we left off.");
    /// with --exec, run that headless command instead of opening the interactive session.
    #[arg(long)]
    prompt: Option<String>,
    /// The conversation's name; default: the one the source carries when handoff wrote it (an
    /// episode of a conversation), else the source target and its first event id.
    #[arg(long)]
    locator: Option<String>,
    /// Extend this session of the target (its native id), e.g. your own session the
    /// conversation started in, instead of the conversation's episode there. Refused, with the
    /// first difference, when it is not a prefix of the source. Without it your own sessions are
    /// never modified.
    #[arg(long, value_name = "ID")]
    into: Option<String>,
    /// Continue without this kind of event or part, which the target would refuse (repeatable):
    /// image, image_url, thinking, thinking_signature, tool_call (takes its result with it),
    /// tool_result_image, compaction, author. Each dropped item is listed in the report; the
    /// verify compares everything else. Nothing is dropped unless named here.
    #[arg(long = "drop", value_name = "KIND", value_parser = parse_drop_kind)]
    drop: Vec<Feature>,
    /// Read the source as this version of its CLI sends it (a CLI's versions send the same
    /// file differently); default: the version installed (on PATH) when verified, else the
    /// newest version verified.
    #[arg(long, value_name = "VERSION", value_parser = parse_cli_version)]
    read_as: Option<String>,
    /// Open the session in the target CLI's own interactive session instead of printing the
    /// commands: handoff is replaced by it, attached to this terminal. With --prompt, run the
    /// headless command instead.
    #[arg(long)]
    exec: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// What the picker chose: continue `from` (`TARGET:PATH`) on `to` and open it there.
    pub fn picked(from: String, to: String) -> Args {
        Args {
            from,
            to,
            cwd: None,
            store_root: None,
            from_store_root: None,
            prompt: None,
            locator: None,
            drop: Vec::new(),
            into: None,
            read_as: None,
            exec: true,
            json: false,
        }
    }
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let (from_target, from_session) = match args.from.split_once(':') {
        Some((target, session)) => (target, Some(session)),
        None => (args.from.as_str(), None),
    };
    let bare_path = from_session.is_none() && super::read::is_path(from_target);
    if from_target.is_empty() || from_session.is_some_and(str::is_empty) || bare_path {
        return Err(CliError::Usage(format!(
            "--from {:?} must be TARGET:SESSION or TARGET, e.g. claude-code:/path/to/session.jsonl",
            args.from
        )));
    }
    let cwd = match &args.cwd {
        None => None,
        Some(dir) => {
            let dir = crate::config::absolute(dir)?;
            if !dir.is_dir() {
                return Err(CliError::Usage(format!(
                    "--cwd {}: no such directory",
                    dir.display()
                )));
            }
            // The physical path, as the CLIs record it (`..` and symbolic links resolved).
            let dir = std::fs::canonicalize(&dir).map_err(|e| CliError::Io {
                path: dir.clone(),
                message: e.to_string(),
            })?;
            Some(dir.display().to_string())
        }
    };
    let catalog = Catalog::open(config)?;
    // Certify the two plugins it uses (in parallel, when neither is yet) before using either.
    catalog.certify_for(&[&args.to, from_target])?;
    let target_plugin = catalog.plugin(&args.to)?;
    let target_manifest = catalog.target(&args.to)?;
    super::doctor::warn_if_unverified_cli(&target_manifest);
    let root = config.store_root(&target_manifest, args.store_root.as_deref())?;

    let progress = if args.json {
        Progress::none()
    } else {
        Progress::start("reading the source session")
    };
    let (path, source_id, listed_cwd) = match from_session {
        Some(session) => {
            let path = super::read::session_file(
                &catalog,
                config,
                from_target,
                session,
                args.from_store_root.as_deref(),
            )?;
            (path, session.to_owned(), None)
        }
        None => {
            let dir = match &args.cwd {
                Some(dir) => dir.clone(),
                None => super::read::current_dir()?,
            };
            let newest = super::read::newest_session(
                &catalog,
                config,
                from_target,
                &dir,
                args.from_store_root.as_deref(),
            )?;
            (newest.session.path, newest.session.id, newest.cwd)
        }
    };
    let source_plugin = catalog.plugin(from_target)?;
    let read_as = super::read::read_as(&catalog, from_target, args.read_as.as_deref())?;
    // The file's own cwd; where the file alone does not say, the store's listing may (Gemini
    // CLI keeps some projects' folders in a registry beside the chats).
    let source_cwd = source_plugin
        .reader()
        .cwd(ReadFrom::File(from_target, &path))?
        .or(listed_cwd);
    // The source's cwd goes to the engine as read here, so it does not read the head again.
    let cwd =
        resume_dir(cwd, source_cwd.as_deref(), catalog.target(&args.to)?.kind)?.or(source_cwd);

    let seal = catalog.seal()?;
    let source_len = std::fs::metadata(&path).ok().map(|m| m.len());
    let writing = format!("writing and verifying the conversation on {}", args.to);
    let continued = progress.continuation(&writing, source_len, || {
        continue_conversation(
            target_plugin.as_ref(),
            &ContinueRequest {
                source: Source::File(SourceFile {
                    reader: source_plugin.reader(),
                    target: from_target,
                    path: &path,
                    cli_version: read_as.as_ref().map(|r| r.version.as_str()),
                }),
                locator: args.locator.as_deref(),
                target: &args.to,
                root: &root,
                seal: &seal,
                cwd,
                prompt: args.prompt.as_deref().unwrap_or(DEFAULT_PROMPT),
                drop: &args.drop,
                lock_wait: Duration::from_secs(30),
                into: args.into.as_deref(),
            },
        )
    })?;
    drop(progress);

    if args.exec {
        if !continued.dropped.is_empty() {
            output::note(format_args!(
                "continued without {} (--drop); resuming",
                dropped_summary(&continued)
            ));
        }
        let interactive = args.prompt.is_none();
        return exec(&continued.plan, interactive);
    }
    let used = catalog.in_use(&args.to);
    if args.json {
        output::json(&json!({
            "source": { "target": from_target, "session": source_id },
            "target": args.to,
            "plugin": used.as_ref().map(|l| json!({ "name": l.plugin, "source": l.source })),
            "locator": continued.locator,
            "conversation": continued.locator,
            "hop": continued.hop,
            "source_known_by": continued.witness,
            "session": continued.session,
            "action": continued.action,
            "diverged_from": continued.diverged_from,
            "diverged_at": continued.diverged_at,
            "recovered": continued.recovered,
            "dropped": continued.dropped,
            "read_as": read_as,
            "plan": continued.plan,
            "command": command_line(&continued.plan, Mode::Headless),
            "interactive_command": command_line(&continued.plan, Mode::Interactive),
        }))?;
    } else {
        print_summary(&args.to, &continued, continued.events)?;
        if let Some(read_as) = &read_as {
            outln!(
                "  the source read as {from_target} {} sends it ({})",
                read_as.version,
                read_as.why
            )?;
        }
        if let Some(l) = used.filter(|l| l.source != PluginSource::BuiltIn) {
            outln!("(plugin {} from {})", l.plugin, l.source)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The working directory of the new session. The source's own cwd is used only when it exists
/// here: a CLI target's resume command runs in it, so a cwd from another machine would make a
/// command that fails as printed. `--cwd` replaces it (said on stderr); without `--cwd` a missing
/// one is bad usage naming it. An API target's plan is a request body, run nowhere.
fn resume_dir(
    given: Option<String>,
    source: Option<&str>,
    kind: TargetKind,
) -> Result<Option<String>, CliError> {
    // Only a well-formed absolute path is checked here; a relative, empty or NUL-holding one is
    // refused by the plugin, naming the field.
    let missing = source.filter(|dir| {
        dir.starts_with('/') && !dir.contains('\0') && !std::path::Path::new(dir).is_dir()
    });
    match (given, missing) {
        (Some(dir), Some(gone)) => {
            output::note(format_args!(
                "the source session's working directory {gone} does not exist here; the new session uses --cwd {dir}"
            ));
            Ok(Some(dir))
        }
        (None, Some(gone)) if kind == TargetKind::Cli => Err(CliError::Usage(format!(
            "the source session's working directory {gone} does not exist on this machine, and the resume command runs there; pass --cwd DIR (e.g. --cwd \"$PWD\") to continue in a directory that does"
        ))),
        (given, _) => Ok(given),
    }
}

fn print_summary(target: &str, c: &Continued, events: usize) -> Result<(), CliError> {
    let what = match &c.action {
        Action::Created => format!(
            "created {target} session {} with {events} events",
            c.session.id
        ),
        Action::Appended { events: n } => {
            format!("appended {n} events to {target} session {}", c.session.id)
        }
        Action::Unchanged => format!(
            "{target} session {} already holds all {events} events",
            c.session.id
        ),
    };
    outln!("{what} (read back and verified)")?;
    outln!(
        "  hop {} of conversation {} [{}]",
        c.hop,
        c.locator,
        handoff_host::episodes::short_label(&c.locator)
    )?;
    outln!("  {}", c.session.path.display())?;
    if !c.dropped.is_empty() {
        outln!(
            "  without {} (--drop); the session holds the rest of the source:",
            dropped_summary(c)
        )?;
        for d in &c.dropped {
            outln!(
                "    event {} ({}): {} [{}]",
                d.index,
                d.event_id,
                d.what,
                d.kind
            )?;
        }
    }
    if let Some(old) = &c.diverged_from {
        let at = c
            .diverged_at
            .as_ref()
            .map(|d| {
                format!(
                    " at its event {}{} ({})",
                    d.index,
                    d.event_id
                        .as_deref()
                        .map(|id| format!(" {id}"))
                        .unwrap_or_default(),
                    d.field
                )
            })
            .unwrap_or_default();
        outln!(
            "  (episode {} of this conversation had diverged{at} and was left as it was)",
            old.id
        )?;
    }
    match &c.plan {
        ResumePlan::Command(_) => {
            let headless = command_line(&c.plan, Mode::Headless).unwrap_or_default();
            match command_line(&c.plan, Mode::Interactive) {
                Some(interactive) => {
                    outln!("open it with (or run again with --exec):")?;
                    outln!("  {interactive}")?;
                    outln!("or resume headless, with a prompt:")?;
                    outln!("  {headless}")
                }
                None => {
                    outln!("resume with:")?;
                    outln!("  {headless}")
                }
            }
        }
        ResumePlan::Request { dialect, body } => {
            outln!("next {dialect} request body:")?;
            output::json(body)
        }
    }
}

/// A `--read-as VERSION` value: a version number (`2.1.197`, `v2.1.197`).
pub fn parse_cli_version(version: &str) -> Result<String, String> {
    match handoff_host::live::parse_version(version) {
        Some(_) => Ok(version.to_owned()),
        None => Err("not a version number (e.g. 2.1.197)".to_owned()),
    }
}

/// A `--drop KIND` value: a feature name that a continuation can drop.
fn parse_drop_kind(name: &str) -> Result<Feature, String> {
    let droppable = || {
        Feature::droppable_kinds()
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match Feature::from_name(name) {
        Some(kind) if kind.droppable() => Ok(kind),
        Some(kind) => Err(format!(
            "{kind} cannot be dropped without changing what is left; droppable: {}",
            droppable()
        )),
        None => Err(format!("no such kind; droppable: {}", droppable())),
    }
}

/// Which kinds were dropped from how many events, e.g. `thinking (3 events), image_url (1 event)`.
fn dropped_summary(c: &Continued) -> String {
    let mut counts: Vec<(Feature, usize)> = Vec::new();
    for d in &c.dropped {
        match counts.iter_mut().find(|(k, _)| *k == d.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((d.kind, 1)),
        }
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} ({n} event{})", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which of a plan's two commands: the CLI's interactive session, or the headless run of a prompt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Interactive,
    Headless,
}

/// The prompt of the headless command when `--prompt` is not given.
const DEFAULT_PROMPT: &str = "Continue where we left off.";

/// A plan's command in `mode`: program, arguments, environment, cwd and whether stdin is closed.
/// `None` for an API target, or for the interactive command of a plan that offers none.
struct Runnable<'p> {
    program: &'p str,
    args: &'p [String],
    env: &'p [(String, String)],
    cwd: Option<&'p std::path::Path>,
    close_stdin: bool,
}

fn runnable(plan: &ResumePlan, mode: Mode) -> Option<Runnable<'_>> {
    let command = plan.command()?;
    let (args, close_stdin) = match mode {
        Mode::Headless => (&command.args, command.close_stdin),
        Mode::Interactive => (command.interactive_args.as_ref()?, false),
    };
    Some(Runnable {
        program: &command.program,
        args,
        env: &command.env,
        cwd: command.cwd.as_deref(),
        close_stdin,
    })
}

/// The plan's command in `mode` as one shell line (`cd DIR && ENV=… program args…`), for people
/// to copy.
fn command_line(plan: &ResumePlan, mode: Mode) -> Option<String> {
    let run = runnable(plan, mode)?;
    let mut line = String::new();
    if let Some(dir) = run.cwd {
        line += &format!("cd {} && ", quote(&dir.display().to_string()));
    }
    for (k, v) in run.env {
        line += &format!("{k}={} ", quote(v));
    }
    line += &quote(run.program);
    for a in run.args {
        line += " ";
        line += &quote(a);
    }
    if run.close_stdin {
        line += " </dev/null";
    }
    Some(line)
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Runs the plan: the interactive session replaces this process, attached to its terminal (a
/// plan without one runs its headless command); the headless command runs as a child, whose exit
/// code becomes handoff's.
fn exec(plan: &ResumePlan, interactive: bool) -> Result<ExitCode, CliError> {
    use std::io::IsTerminal as _;
    use std::os::unix::process::CommandExt as _;
    let mode = if interactive && runnable(plan, Mode::Interactive).is_some() {
        Mode::Interactive
    } else {
        Mode::Headless
    };
    let Some(run) = runnable(plan, mode) else {
        return Err(CliError::Usage(
            "--exec runs a CLI target's resume command; an API target's plan is a request body (omit --exec to print it)".into(),
        ));
    };
    if mode == Mode::Interactive
        && !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal())
    {
        return Err(CliError::Usage(format!(
            "--exec opens {}'s interactive session, which needs a terminal; pass --prompt TEXT to run the headless command instead",
            run.program
        )));
    }
    let mut command = std::process::Command::new(run.program);
    command
        .args(run.args)
        .envs(run.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = run.cwd {
        if !dir.is_dir() {
            return Err(CliError::Usage(format!(
                "the session's working directory {} does not exist here; pass --cwd",
                dir.display()
            )));
        }
        command.current_dir(dir);
    }
    if run.close_stdin {
        command.stdin(Stdio::null());
    }
    if mode == Mode::Interactive {
        // Only returns if the program could not be started.
        let e = command.exec();
        return Err(CliError::Failed(format!("cannot run {}: {e}", run.program)));
    }
    let status = command
        .status()
        .map_err(|e| CliError::Failed(format!("cannot run {}: {e}", run.program)))?;
    Ok(ExitCode::from(
        status.code().unwrap_or(1).clamp(0, 255) as u8
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_cwd_missing_here_needs_cwd_for_a_cli_target() {
        let here = std::env::temp_dir().display().to_string();
        let gone = "/no/such/dir/handoff-test";
        assert_eq!(
            resume_dir(None, Some(&here), TargetKind::Cli).unwrap(),
            None
        );
        let refused = resume_dir(None, Some(gone), TargetKind::Cli).unwrap_err();
        assert_eq!(refused.exit_code(), 2);
        let message = refused.to_string();
        assert!(
            message.contains(gone) && message.contains("pass --cwd DIR"),
            "{message}"
        );
        let given = resume_dir(Some(here.clone()), Some(gone), TargetKind::Cli).unwrap();
        assert_eq!(given, Some(here));
        // A request body runs nowhere; a malformed cwd is the plugin's to refuse.
        assert_eq!(resume_dir(None, Some(gone), TargetKind::Api).unwrap(), None);
        assert_eq!(
            resume_dir(None, Some("rel/dir"), TargetKind::Cli).unwrap(),
            None
        );
    }

    #[test]
    fn command_line_quotes_what_needs_it() {
        let mut plan = ResumePlan::Command(handoff_host::ResumeCommand {
            program: "codex".into(),
            args: vec![
                "exec".into(),
                "resume".into(),
                "0199-ab".into(),
                "it's done".into(),
            ],
            env: vec![],
            cwd: Some("/home/me/my proj".into()),
            close_stdin: true,
            interactive_args: Some(vec!["resume".into(), "0199-ab".into()]),
        });
        assert_eq!(
            command_line(&plan, Mode::Headless).unwrap(),
            r"cd '/home/me/my proj' && codex exec resume 0199-ab 'it'\''s done' </dev/null"
        );
        // The interactive one: same place and environment, stdin left to the terminal.
        assert_eq!(
            command_line(&plan, Mode::Interactive).unwrap(),
            r"cd '/home/me/my proj' && codex resume 0199-ab"
        );
        let ResumePlan::Command(command) = &mut plan else {
            unreachable!()
        };
        command.interactive_args = None;
        assert_eq!(command_line(&plan, Mode::Interactive), None);
    }
}
