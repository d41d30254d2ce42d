use std::path::{Path, PathBuf};
use std::process::ExitCode;

use handoff_host::installed::{self, ReadAs, ReadAsBasis};
use handoff_host::{Plugin, ReadFrom, Reader, SessionInfo, StoreRoot, TargetKind, Transcript};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::error::CliError;
use crate::output;

#[derive(clap::Args)]
pub struct Args {
    /// The target whose native format the session is in, e.g. `claude-code`.
    target: String,
    /// A native session id, or a path to a session file; default: the newest session of the
    /// current directory (or `--cwd`), named on stderr.
    session: Option<String>,
    /// Without a session: take the newest session of this directory instead of the current one.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The target's store root (for an id); default: the configured or real one.
    #[arg(long, value_name = "DIR")]
    store_root: Option<PathBuf>,
    /// Read the session as this version of the target's CLI sends it (a CLI's versions send
    /// the same file differently); default: the version installed (on PATH) when verified, else
    /// the newest version verified. Said on stderr unless it is the newest verified.
    #[arg(long, value_name = "VERSION", value_parser = super::continue_on::parse_cli_version)]
    read_as: Option<String>,
    /// Print the canonical JSON instead of a readable view.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &Config, args: Args) -> Result<ExitCode, CliError> {
    let catalog = Catalog::open(config)?;
    let read_as = read_as(&catalog, &args.target, args.read_as.as_deref())?;
    // Said when it is not what a reader reads as untold (the newest end), so the default stays
    // quiet.
    if let Some(read_as) = read_as
        .as_ref()
        .filter(|r| r.basis != ReadAsBasis::NewestEnd)
    {
        output::note(format_args!(
            "reading as {} {} sends it ({})",
            args.target, read_as.version, read_as.why
        ));
    }
    let cli_version = read_as.as_ref().map(|r| r.version.as_str());
    let transcript = match &args.session {
        Some(session) => read_session(
            &catalog,
            config,
            &args.target,
            session,
            args.store_root.as_deref(),
            cli_version,
        )?,
        None => {
            let dir = match &args.cwd {
                Some(dir) => dir.clone(),
                None => current_dir()?,
            };
            read_newest(
                &catalog,
                config,
                &args.target,
                &dir,
                args.store_root.as_deref(),
                cli_version,
            )?
            .0
        }
    };
    if args.json {
        output::json(&transcript)?;
    } else {
        output::text(&crate::view::render(&transcript))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a session argument is a path rather than an id.
pub fn is_path(session: &str) -> bool {
    session.contains('/') || session.ends_with(".jsonl") || session.ends_with(".json")
}

/// Which version of `target`'s CLI a source of it is read as: `asked` (`--read-as`), else the
/// installed one's when verified, else the newest verified ([`ReadAs::installed`], on PATH).
/// `None` for a target with no CLI (an API history reads alike whoever sent it).
pub fn read_as(
    catalog: &Catalog,
    target: &str,
    asked: Option<&str>,
) -> Result<Option<ReadAs>, CliError> {
    if let Some(version) = asked {
        return Ok(Some(ReadAs::asked(version)));
    }
    let manifest = catalog.target(target)?;
    Ok(manifest
        .live
        .as_ref()
        .filter(|_| manifest.kind == TargetKind::Cli)
        .map(|recipe| ReadAs::installed(recipe, installed::path_dirs())))
}

/// `plugin`'s reader, reading as `cli_version` where one is given and the reader reads versions
/// apart.
fn reader_as<'p>(
    plugin: &'p dyn Plugin,
    cli_version: Option<&str>,
) -> Option<Box<dyn Reader + 'p>> {
    plugin.reader().reading_as(cli_version?)
}

/// Reads `session` (an id or a path) of `target`, as `cli_version` of its CLI sends it. A read
/// changes nothing: what a killed handoff run left in the store (a journal) is named in a
/// warning, and rolled back by the next write there.
pub fn read_session(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    session: &str,
    store_root: Option<&Path>,
    cli_version: Option<&str>,
) -> Result<Transcript, CliError> {
    let plugin = catalog.plugin(target)?;
    let versioned = reader_as(plugin.as_ref(), cli_version);
    let reader = versioned.as_deref().unwrap_or(plugin.reader());
    Ok(
        match locate(catalog, config, target, session, store_root)? {
            Located::File(path) => reader.read(ReadFrom::File(target, &path))?,
            Located::Session(root, session) => reader.read(ReadFrom::Session(&root, &session))?,
        },
    )
}

/// A session argument found: a file named by its path, or a session resolved by its id.
enum Located {
    File(PathBuf),
    Session(StoreRoot, handoff_host::SessionRef),
}

/// Finds `session` (an id or a path) of `target`, warning of journals of handoff runs in its store.
fn locate(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    session: &str,
    store_root: Option<&Path>,
) -> Result<Located, CliError> {
    let plugin = catalog.plugin(target)?;
    if is_path(session) {
        let path = crate::config::absolute(Path::new(session))?;
        check_session_file(&path)?;
        if let Some(root) = enclosing_store_root(&path) {
            warn_of_journals(&root)
        }
        Ok(Located::File(path))
    } else {
        let root = config.store_root(&catalog.target(target)?, store_root)?;
        warn_of_journals(&root);
        let session = plugin.resumer().resolve(&root, target, session)?;
        Ok(Located::Session(root, session))
    }
}

/// Reads the newest session of `target` whose cwd is `dir`, saying on stderr which one it took.
pub fn read_newest(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    dir: &Path,
    store_root: Option<&Path>,
    cli_version: Option<&str>,
) -> Result<(Transcript, SessionInfo), CliError> {
    let plugin = catalog.plugin(target)?;
    let root = config.store_root(&catalog.target(target)?, store_root)?;
    let newest = newest_session(catalog, config, target, dir, store_root)?;
    let versioned = reader_as(plugin.as_ref(), cli_version);
    let reader = versioned.as_deref().unwrap_or(plugin.reader());
    let transcript = reader.read(ReadFrom::Session(&root, &newest.session))?;
    Ok((transcript, newest))
}

/// The newest session of `target` whose cwd is `dir`, said on stderr (with a warning of journals
/// of handoff runs in the store).
pub fn newest_session(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    dir: &Path,
    store_root: Option<&Path>,
) -> Result<SessionInfo, CliError> {
    let plugin = catalog.plugin(target)?;
    let root = config.store_root(&catalog.target(target)?, store_root)?;
    warn_of_journals(&root);
    let newest = super::sessions::newest_of_dir(plugin.as_ref(), &root, target, dir)?;
    output::note(format_args!(
        "taking the newest {}",
        super::sessions::describe(&newest)
    ));
    Ok(newest)
}

/// The file of `session` (an id or a path) of `target`, for a reader to stream (see [`locate`]).
pub fn session_file(
    catalog: &Catalog,
    config: &Config,
    target: &str,
    session: &str,
    store_root: Option<&Path>,
) -> Result<PathBuf, CliError> {
    Ok(
        match locate(catalog, config, target, session, store_root)? {
            Located::File(path) => path,
            Located::Session(_, session) => session.path,
        },
    )
}

/// The current directory, as the shell's `$PWD` names it when that is the same directory (so a
/// path through a symbolic link matches sessions recorded under it).
pub fn current_dir() -> Result<PathBuf, CliError> {
    let here = std::env::current_dir().map_err(|e| CliError::Io {
        path: ".".into(),
        message: format!("cannot read the current directory: {e}"),
    })?;
    let pwd = std::env::var_os("PWD").map(PathBuf::from);
    Ok(match pwd {
        Some(pwd) if pwd.is_absolute() && same_dir(&pwd, &here) => pwd,
        _ => here,
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Names the journals in `root` on stderr: a handoff run is writing there, or one was killed and
/// its write is not rolled back yet. A read acts on none of them (it may read a half-written
/// session); only a write into that store root rolls back, and only what handoff can prove it
/// wrote.
fn warn_of_journals(root: &StoreRoot) {
    let pending = handoff_host::journal::pending(root);
    if !pending.is_empty() {
        let names: Vec<String> = pending.iter().map(|p| p.display().to_string()).collect();
        tracing::warn!(
            "{} holds {} journal(s) of handoff writes that are running or were interrupted ({}); this read may see a half-written session, and the next `handoff continue` into that store root rolls an interrupted one back",
            root.path().display(),
            pending.len(),
            names.join(", ")
        );
    }
}

/// The store root a session file lies in, if a handoff run has written there: the nearest folder
/// above it with a `.handoff/journal` folder.
fn enclosing_store_root(path: &Path) -> Option<StoreRoot> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.join(".handoff").join("journal").is_dir())
        .and_then(|dir| StoreRoot::new(dir).ok())
}

/// A session argument that names something other than a readable regular file is refused,
/// saying what it is.
pub fn check_session_file(path: &Path) -> Result<(), CliError> {
    let refuse = |what: String| {
        Err(CliError::Usage(format!(
            "{}: {what}, not a session file",
            path.display()
        )))
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => refuse(kind_of(&meta.file_type()).into()),
        Err(e) => {
            let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            match (link, e.kind()) {
                (false, std::io::ErrorKind::NotFound) => Err(CliError::Usage(format!(
                    "{}: no such session file",
                    path.display()
                ))),
                (true, std::io::ErrorKind::NotFound) => {
                    let to = std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    refuse(format!("a symbolic link to {to}, which does not exist"))
                }
                // ELOOP: too many levels of symbolic links.
                (true, _) if e.raw_os_error() == Some(40) => refuse("a symbolic link loop".into()),
                _ => Err(CliError::Io {
                    path: path.to_owned(),
                    message: format!("cannot read the session file: {e}"),
                }),
            }
        }
    }
}

fn kind_of(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(path: &Path) -> String {
        let err = check_session_file(path).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        err.to_string()
    }

    #[test]
    fn what_is_not_a_session_file_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(refusal(d).contains("a directory"));
        assert!(refusal(Path::new("/dev/null")).contains("a character device"));
        let fifo = d.join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(refusal(&fifo).contains("a FIFO"));
        std::os::unix::fs::symlink(d.join("loop-b"), d.join("loop-a")).unwrap();
        std::os::unix::fs::symlink(d.join("loop-a"), d.join("loop-b")).unwrap();
        assert!(refusal(&d.join("loop-a")).contains("a symbolic link loop"));
        std::os::unix::fs::symlink(d.join("gone"), d.join("dangling")).unwrap();
        assert!(refusal(&d.join("dangling")).contains("which does not exist"));
        assert!(refusal(&d.join("missing.jsonl")).contains("no such session file"));
        let file = d.join("s.jsonl");
        std::fs::write(&file, b"{}\n").unwrap();
        check_session_file(&file).unwrap();
    }
}
