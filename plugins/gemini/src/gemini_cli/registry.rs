//! The project registry, `<root>/projects.json`, and its `.project_root` markers, kept exactly as
//! Gemini CLI 0.61.0's `ProjectRegistry.getShortId` keeps them.
//!
//! Concurrency: the CLI changes `projects.json` only while it holds proper-lockfile's lock on it,
//! the directory `<realpath of projects.json>.lock` (made with `mkdir`, stale after 10 s). This
//! module takes the same lock the same way, re-reads the file under it, adds its one mapping and
//! replaces the file whole (temp file + rename), so a CLI writing at the same time either waits for
//! us or we wait for it: neither loses the other's entry. Other entries are kept as they are (key
//! order included). A `projects.json` that is not a valid registry is refused, never reset (the CLI
//! would reset it; we will not destroy what it holds).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{atomic, PluginError, StoreRoot};

use super::layout::{HISTORY, PROJECT_ROOT_FILE, REGISTRY, TMP};

/// proper-lockfile's default: a lock older than this is stale.
const STALE: Duration = Duration::from_secs(10);
/// The CLI waits up to 10 s (100 retries of 100 ms) for the lock; so do we.
const WAIT: Duration = Duration::from_secs(10);
const RETRY: Duration = Duration::from_millis(100);

/// The registry's base folders: the CLI writes a `.project_root` marker in both.
const BASES: [&str; 2] = [TMP, HISTORY];

/// The short id of `project_root`, registering it as the CLI would when it is not yet known.
pub(crate) fn register(root: &StoreRoot, project_root: &str) -> Result<String, PluginError> {
    let registry = root.join(&[REGISTRY])?;
    std::fs::create_dir_all(root.path()).map_err(|e| PluginError::io(root.path(), &e))?;
    if !registry.exists() {
        // As the CLI does before locking: the lock needs the file to exist.
        let created = atomic::create_new(&registry, |w| w.write_all(b"{\n  \"projects\": {}\n}"))
            .and_then(|()| {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&registry, std::fs::Permissions::from_mode(0o644))
            });
        if let Err(e) = created {
            if !registry.exists() {
                return Err(PluginError::io(&registry, &e));
            }
        }
    }
    let _lock = RegistryLock::acquire(&registry)?;
    let mut data = load(&registry)?;
    let projects = projects_mut(&mut data);
    if let Some(slug) = projects
        .get(project_root)
        .and_then(Value::as_str)
        .map(str::to_owned)
    {
        if owned_by(root, &slug, project_root)? {
            ensure_markers(root, &slug, project_root)?;
            return Ok(slug);
        }
        projects.shift_remove(project_root);
    }
    let slug = match find_by_marker(root, project_root)? {
        Some(slug) => slug,
        None => claim_new(root, project_root, projects)?,
    };
    projects.insert(project_root.to_owned(), Value::String(slug.clone()));
    let text = serde_json::to_string_pretty(&data).expect("a JSON value serialises");
    // The replacement keeps the file's mode (the CLI's is 0644 under a usual umask), owner and
    // group (`atomic::replace`).
    atomic::replace(&registry, |w| w.write_all(text.as_bytes()))
        .map_err(|e| PluginError::io(&registry, &e))?;
    Ok(slug)
}

/// The project root a short id belongs to: its `.project_root` marker, else the registry entry
/// that maps to it. `None` when neither says.
pub(crate) fn project_root_of(root: &StoreRoot, slug: &str) -> Option<String> {
    let marker = root.join(&[TMP, slug, PROJECT_ROOT_FILE]).ok()?;
    if let Ok(owner) = std::fs::read_to_string(marker) {
        let owner = owner.trim();
        if !owner.is_empty() {
            return Some(owner.to_owned());
        }
    }
    let registry = root.join(&[REGISTRY]).ok()?;
    let data: Value = serde_json::from_slice(&std::fs::read(registry).ok()?).ok()?;
    data.get("projects")?
        .as_object()?
        .iter()
        .find(|(_, v)| v.as_str() == Some(slug))
        .map(|(k, _)| k.clone())
}

/// The CLI's `slugify`: lower case, `[^a-z0-9]` → `-`, runs collapsed, ends trimmed, `project`
/// when nothing is left.
pub(crate) fn slugify(text: &str) -> String {
    let mut out = String::new();
    for c in text.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "project".to_owned()
    } else {
        trimmed.to_owned()
    }
}

fn load(registry: &Path) -> Result<Value, PluginError> {
    let bytes = std::fs::read(registry).map_err(|e| PluginError::io(registry, &e))?;
    let invalid = |message: String| PluginError::Malformed {
        file: registry.to_owned(),
        line: None,
        field: Some("projects".into()),
        message: format!(
            "{message}; Gemini CLI would reset the whole registry, so it is left untouched"
        ),
    };
    let data: Value =
        serde_json::from_slice(&bytes).map_err(|e| invalid(format!("not JSON ({e})")))?;
    let projects = data
        .get("projects")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("no `projects` object".into()))?;
    for (path, slug) in projects {
        let ok = slug.as_str().is_some_and(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        });
        if !ok {
            return Err(invalid(format!(
                "the entry for {path:?} is not a short id ([a-z0-9-]+)"
            )));
        }
    }
    Ok(data)
}

fn projects_mut(data: &mut Value) -> &mut Map<String, Value> {
    data.get_mut("projects")
        .and_then(Value::as_object_mut)
        .expect("load checked the projects object")
}

fn marker_paths(root: &StoreRoot, slug: &str) -> Result<Vec<PathBuf>, PluginError> {
    BASES
        .iter()
        .map(|base| Ok(root.join(&[base, slug, PROJECT_ROOT_FILE])?))
        .collect()
}

/// `verifySlugOwnership`: every marker that exists names this root.
fn owned_by(root: &StoreRoot, slug: &str, project_root: &str) -> Result<bool, PluginError> {
    for marker in marker_paths(root, slug)? {
        match std::fs::read_to_string(&marker) {
            Ok(owner) if owner.trim() == project_root => {}
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return Ok(false),
        }
    }
    Ok(true)
}

/// `findExistingSlugForPath`: a folder in either base whose marker names this root.
fn find_by_marker(root: &StoreRoot, project_root: &str) -> Result<Option<String>, PluginError> {
    for base in BASES {
        let dir = root.path().join(base);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let marker = dir.join(&name).join(PROJECT_ROOT_FILE);
            if std::fs::read_to_string(marker).is_ok_and(|o| o.trim() == project_root)
                && root.join(&[base, &name]).is_ok()
            {
                ensure_markers(root, &name, project_root)?;
                return Ok(Some(name));
            }
        }
    }
    Ok(None)
}

/// `claimNewSlug`: the basename's slug, then `-1`, `-2`, … skipping ids the registry uses and
/// folders another root owns.
fn claim_new(
    root: &StoreRoot,
    project_root: &str,
    projects: &Map<String, Value>,
) -> Result<String, PluginError> {
    let base = Path::new(project_root)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("project");
    let slug = slugify(base);
    for counter in 0.. {
        let candidate = if counter == 0 {
            slug.clone()
        } else {
            format!("{slug}-{counter}")
        };
        if projects
            .values()
            .any(|v| v.as_str() == Some(candidate.as_str()))
        {
            continue;
        }
        if !owned_by(root, &candidate, project_root)? {
            continue;
        }
        match ensure_markers(root, &candidate, project_root) {
            Ok(()) => return Ok(candidate),
            Err(PluginError::Other(_)) => continue, // lost a race for the folder
            Err(e) => return Err(e),
        }
    }
    unreachable!("the counter is unbounded")
}

/// `ensureOwnershipMarkers`: each base folder of the slug has a marker naming this root, created
/// exclusively; a marker naming another root is a collision (`PluginError::Other`).
fn ensure_markers(root: &StoreRoot, slug: &str, project_root: &str) -> Result<(), PluginError> {
    for marker in marker_paths(root, slug)? {
        let dir = marker.parent().expect("a marker has a folder");
        std::fs::create_dir_all(dir).map_err(|e| PluginError::io(dir, &e))?;
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&marker)
            .and_then(|mut f| f.write_all(project_root.as_bytes()));
        match created {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let owner =
                    std::fs::read_to_string(&marker).map_err(|e| PluginError::io(&marker, &e))?;
                if owner.trim() != project_root {
                    return Err(PluginError::Other(format!(
                        "{} is already owned by {}",
                        marker.display(),
                        owner.trim()
                    )));
                }
            }
            Err(e) => return Err(PluginError::io(&marker, &e)),
        }
    }
    Ok(())
}

/// proper-lockfile's lock on the registry: the directory `<realpath>.lock`.
struct RegistryLock {
    dir: PathBuf,
}

impl RegistryLock {
    fn acquire(registry: &Path) -> Result<RegistryLock, PluginError> {
        let real = std::fs::canonicalize(registry).map_err(|e| PluginError::io(registry, &e))?;
        let mut dir = real.into_os_string();
        dir.push(".lock");
        let dir = PathBuf::from(dir);
        let deadline = Instant::now() + WAIT;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(RegistryLock { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&dir)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > STALE);
                    if stale {
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    if Instant::now() >= deadline {
                        return Err(PluginError::Locked { path: dir });
                    }
                    std::thread::sleep(RETRY);
                }
                Err(e) => return Err(PluginError::io(&dir, &e)),
            }
        }
    }
}

impl Drop for RegistryLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_cli() {
        assert_eq!(slugify("proj"), "proj");
        assert_eq!(slugify("My Project!!v2"), "my-project-v2");
        assert_eq!(slugify("--"), "project");
        assert_eq!(slugify("Ünï"), "n");
    }
}
