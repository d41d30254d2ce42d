//! Which version of a target's CLI is installed, and where it stands against the range the live
//! tier proved (`handoff doctor`, the warning of `continue`).
//!
//! The version is read from the npm package's `package.json` beside the program's
//! `node_modules/.bin` link, which runs nothing. Only a program that is not an npm install (a
//! native binary on PATH) is asked `--version`, under a timeout.

use std::cmp::Ordering;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use handoff_capability::live::{parse_version, LiveRecipe, VerifiedRange};

/// A CLI found on the search path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstalledCli {
    /// The program found.
    pub path: PathBuf,
    /// Its version, where it could be read.
    pub version: Option<String>,
}

/// Where an installed version stands against a verified range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Within the range, both ends included.
    Verified,
    /// Older than the oldest version proven.
    Older,
    /// Newer than the newest version proven.
    Newer,
    /// The installed version or the range is not a version number this can compare.
    Unknown,
}

impl Standing {
    /// `verified`, `older`, `newer` or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Standing::Verified => "verified",
            Standing::Older => "older",
            Standing::Newer => "newer",
            Standing::Unknown => "unknown",
        }
    }
}

impl InstalledCli {
    /// Where this CLI stands against `recipe`'s verified range.
    pub fn standing(&self, recipe: &LiveRecipe) -> Standing {
        match &self.version {
            Some(version) => standing(version, &recipe.verified_range()),
            None => Standing::Unknown,
        }
    }
}

/// Finds `recipe`'s program in `dirs`, in order (the first executable wins, as a shell would).
pub fn find(recipe: &LiveRecipe, dirs: impl IntoIterator<Item = PathBuf>) -> Option<InstalledCli> {
    let path = dirs
        .into_iter()
        .map(|dir| dir.join(&recipe.program))
        .find(|candidate| is_executable(candidate))?;
    let version = npm_package_version(&path, &recipe.npm_package).or_else(|| asked_version(&path));
    Some(InstalledCli { path, version })
}

/// The version of its CLI a source session is read as (a CLI's versions send the same file
/// differently: [`handoff_capability::Reader::reading_as`]), and why that one.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReadAs {
    /// The version, e.g. `2.1.197`.
    pub version: String,
    /// How it was chosen.
    pub basis: ReadAsBasis,
    /// Why, in words: which program was found, and where it stands.
    pub why: String,
}

/// How [`ReadAs::version`] was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadAsBasis {
    /// The version of the CLI installed, within the verified range.
    Installed,
    /// The newest end of the verified range: no CLI installed, or one whose version is outside
    /// the range or unknown.
    NewestEnd,
    /// The user asked for it (`--read-as`).
    Asked,
}

impl ReadAs {
    /// As the user asked (`--read-as VERSION`).
    pub fn asked(version: &str) -> ReadAs {
        ReadAs {
            version: version.to_owned(),
            basis: ReadAsBasis::Asked,
            why: "--read-as".to_owned(),
        }
    }

    /// As the CLI of `recipe` found in `dirs` (see [`find`]) sends a session: its version when
    /// the live tier verified it (within the range, both ends included), else the newest end of
    /// the range, which is what a reader not told any version reads as.
    pub fn installed(recipe: &LiveRecipe, dirs: impl IntoIterator<Item = PathBuf>) -> ReadAs {
        let range = recipe.verified_range();
        let newest_end = |why: String| ReadAs {
            version: range.newest.clone(),
            basis: ReadAsBasis::NewestEnd,
            why,
        };
        let Some(found) = find(recipe, dirs) else {
            return newest_end(format!(
                "no {} installed: the newest version verified",
                recipe.program
            ));
        };
        let shown = found.path.display();
        match (&found.version, found.standing(recipe)) {
            (Some(version), Standing::Verified) => ReadAs {
                version: version.clone(),
                basis: ReadAsBasis::Installed,
                why: format!("the installed {shown} is {version}"),
            },
            (Some(version), side) => newest_end(format!(
                "the installed {shown} is {version}, {} than the versions verified ({} to {}): the newest verified",
                match side {
                    Standing::Older => "older",
                    Standing::Newer => "newer",
                    _ => "not comparable with",
                },
                range.oldest,
                range.newest
            )),
            (None, _) => newest_end(format!(
                "the installed {shown} did not say its version: the newest version verified"
            )),
        }
    }
}

/// The folders of `PATH`.
pub fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default()
}

/// Where `version` stands against `range`.
pub fn standing(version: &str, range: &VerifiedRange) -> Standing {
    let (Some(version), Some(oldest), Some(newest)) = (
        parse_version(version),
        parse_version(&range.oldest),
        parse_version(&range.newest),
    ) else {
        return Standing::Unknown;
    };
    match (version.cmp(&oldest), version.cmp(&newest)) {
        (Ordering::Less, _) => Standing::Older,
        (_, Ordering::Greater) => Standing::Newer,
        _ => Standing::Verified,
    }
}

/// Whether `version` (`22.23.5`, `v22.23.5`) is `min` or newer; `false` when either is no version.
pub fn at_least(version: &str, min: &str) -> bool {
    handoff_capability::live::version_at_least(version, min)
}

/// Whether `path` is a file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The version of npm package `package` that provides `program`: npm links
/// `node_modules/.bin/<program>` to the package, whose `package.json` holds the version; a global
/// install links `bin/<program>` into `lib/node_modules/<package>`.
pub fn npm_package_version(program: &Path, package: &str) -> Option<String> {
    let resolved = std::fs::canonicalize(program).ok()?;
    let mut candidates: Vec<PathBuf> = resolved
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .map(|nm| nm.join(package).join("package.json"))
        .collect();
    if let Some(bin_dir) = program.parent() {
        candidates.push(bin_dir.join("..").join(package).join("package.json"));
        candidates.push(
            bin_dir
                .join("../lib/node_modules")
                .join(package)
                .join("package.json"),
        );
    }
    candidates.into_iter().find_map(|manifest| {
        let text = std::fs::read_to_string(manifest).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value.get("version")?.as_str().map(str::to_owned)
    })
}

/// How long `--version` may take: a Node CLI starts in about a second.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// The first `X.Y.Z` that `program --version` prints (`codex-cli 0.171.0`, `2.1.197 (Claude
/// Code)`), or `None` if it prints none, fails or outlives [`ASK_TIMEOUT`] (then it is killed).
fn asked_version(program: &Path) -> Option<String> {
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < ASK_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut printed = String::new();
    child.stdout.take()?.read_to_string(&mut printed).ok()?;
    first_version(&printed)
}

/// The first whitespace-separated word of `text` that parses as a version.
fn first_version(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|word| word.trim_start_matches('v'))
        .find(|word| semver::Version::parse(word).is_ok())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(oldest: &str, newest: &str) -> VerifiedRange {
        VerifiedRange {
            oldest: oldest.to_owned(),
            newest: newest.to_owned(),
        }
    }

    #[test]
    fn a_version_is_placed_against_both_ends_numerically() {
        let r = range("2.1.197", "2.1.332");
        assert_eq!(standing("2.1.197", &r), Standing::Verified);
        assert_eq!(standing("2.1.332", &r), Standing::Verified);
        assert_eq!(standing("2.1.200", &r), Standing::Verified);
        // Numeric, not textual: 2.1.1000 is newer than 2.1.332.
        assert_eq!(standing("2.1.1000", &r), Standing::Newer);
        assert_eq!(standing("2.1.99", &r), Standing::Older);
        assert_eq!(standing("v2.1.333", &r), Standing::Newer);
        assert_eq!(standing("latest", &r), Standing::Unknown);
    }

    #[test]
    fn the_version_printed_by_a_cli_is_its_first_version_word() {
        assert_eq!(
            first_version("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(
            first_version("2.1.197 (Claude Code)\n").as_deref(),
            Some("2.1.197")
        );
        assert_eq!(first_version("no version here"), None);
    }

    #[test]
    fn a_native_program_is_asked_and_an_npm_one_read_from_its_package() {
        let dir = tempfile::tempdir().unwrap();
        let recipe: LiveRecipe = serde_json::from_value(serde_json::json!({
            "npm_package": "@x/tool", "version": "1.2.3", "program": "tool",
            "dialect": "openai-responses", "store_root": ".tool"
        }))
        .unwrap();
        // A native program on a PATH folder: asked.
        let native = dir.path().join("native");
        std::fs::create_dir(&native).unwrap();
        write_program(&native.join("tool"), "echo 'tool v1.3.0 (native)'");
        let found = find(&recipe, [dir.path().join("absent"), native.clone()]).unwrap();
        assert_eq!(found.path, native.join("tool"));
        assert_eq!(found.version.as_deref(), Some("1.3.0"));
        assert_eq!(found.standing(&recipe), Standing::Newer);
        // An npm install: its package.json wins over what the program would print.
        let cache = dir.path().join("cache/node_modules");
        std::fs::create_dir_all(cache.join(".bin")).unwrap();
        std::fs::create_dir_all(cache.join("@x/tool")).unwrap();
        std::fs::write(cache.join("@x/tool/package.json"), r#"{"version":"1.2.3"}"#).unwrap();
        write_program(&cache.join("@x/tool/cli.sh"), "echo 9.9.9");
        std::os::unix::fs::symlink(cache.join("@x/tool/cli.sh"), cache.join(".bin/tool")).unwrap();
        let found = find(&recipe, [cache.join(".bin"), native]).unwrap();
        assert_eq!(found.version.as_deref(), Some("1.2.3"));
        assert_eq!(found.standing(&recipe), Standing::Verified);
    }

    #[test]
    fn a_source_is_read_as_the_installed_cli_within_the_verified_range_else_the_newest_end() {
        let dir = tempfile::tempdir().unwrap();
        let recipe: LiveRecipe = serde_json::from_value(serde_json::json!({
            "npm_package": "@x/tool", "version": "2.1.197", "program": "tool",
            "dialect": "anthropic-messages", "store_root": ".tool",
            "verified": {"oldest": "2.1.197", "newest": "2.1.332"}
        }))
        .unwrap();
        let installed = |version: &str| {
            let bin = dir.path().join(version);
            std::fs::create_dir_all(&bin).unwrap();
            write_program(&bin.join("tool"), &format!("echo '{version} (Tool)'"));
            ReadAs::installed(&recipe, [bin])
        };
        let oldest = installed("2.1.197");
        assert_eq!(
            (oldest.version.as_str(), oldest.basis),
            ("2.1.197", ReadAsBasis::Installed)
        );
        assert!(oldest.why.contains("is 2.1.197"), "{}", oldest.why);
        assert_eq!(installed("2.1.250").version, "2.1.250");
        for outside in ["2.1.100", "2.1.400", "latest"] {
            let read_as = installed(outside);
            assert_eq!(
                (read_as.version.as_str(), read_as.basis),
                ("2.1.332", ReadAsBasis::NewestEnd),
                "{outside}"
            );
        }
        assert!(installed("2.1.100").why.contains("older"));
        let none = ReadAs::installed(&recipe, [dir.path().join("empty")]);
        assert_eq!(
            (none.version.as_str(), none.basis),
            ("2.1.332", ReadAsBasis::NewestEnd)
        );
        assert!(none.why.starts_with("no tool installed"), "{}", none.why);
        let json = serde_json::to_value(ReadAs::asked("2.1.197")).unwrap();
        assert_eq!(json["basis"], "asked");
    }

    fn write_program(path: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
