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

use super::layout::{CHATS, HISTORY, PROJECT_ROOT_FILE, REGISTRY, TMP};

/// proper-lockfile's default: a lock older than this is stale.
const STALE: Duration = Duration::from_secs(10);
/// The CLI waits up to 10 s (100 retries of 100 ms) for the lock; so do we.
const WAIT: Duration = Duration::from_secs(10);
const RETRY: Duration = Duration::from_millis(100);

/// The registry's base folders: the CLI writes a `.project_root` marker in both.
const BASES: [&str; 2] = [TMP, HISTORY];

/// What one registration changed, so that a create failing after it takes back exactly that
/// ([`Registration::undo`]) and never another project's entry or marker.
#[derive(Debug, Default)]
pub(crate) struct Registration {
    /// The project's short id.
    pub slug: String,
    project_root: String,
    /// Set when this run wrote the project's entry: what the entry was before (`None`: none).
    entry_before: Option<Option<Value>>,
    /// The `.project_root` markers this run created.
    markers: Vec<PathBuf>,
    /// The folders this run created, outermost first.
    dirs: Vec<PathBuf>,
    /// What the project's folders (both bases and `chats`) held once it was registered: anything
    /// else found there later was put there by someone else (a CLI that found the project
    /// through this registration), and the registration is then theirs too.
    found: Vec<PathBuf>,
}

/// The short id of `project_root`, registering it as the CLI would when it is not yet known. What
/// a registration that fails halfway made is taken back before the error is returned.
pub(crate) fn register(root: &StoreRoot, project_root: &str) -> Result<Registration, PluginError> {
    let registry = root.join(&[REGISTRY])?;
    std::fs::create_dir_all(root.path()).map_err(|e| PluginError::io(root.path(), &e))?;
    if !registry.exists() {
        // As the CLI does before locking: the lock needs the file to exist. It stays, even if
        // this create fails: see `Registration::undo`.
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
    let lock = RegistryLock::acquire(&registry)?;
    let mut done = Registration {
        project_root: project_root.to_owned(),
        ..Registration::default()
    };
    match register_locked(root, &registry, &mut done) {
        Ok(()) => {
            done.found = contents(root, &done.slug);
            Ok(done)
        }
        Err(e) => {
            done.undo_locked(root, &registry);
            drop(lock);
            Err(e)
        }
    }
}

fn register_locked(
    root: &StoreRoot,
    registry: &Path,
    done: &mut Registration,
) -> Result<(), PluginError> {
    let project_root = done.project_root.clone();
    let mut data = load(registry)?;
    let projects = projects_mut(&mut data);
    let before = projects.get(&project_root).cloned();
    if let Some(slug) = before.as_ref().and_then(Value::as_str).map(str::to_owned) {
        if owned_by(root, &slug, &project_root)? {
            ensure_markers(root, &slug, &project_root, done)?;
            done.slug = slug;
            return Ok(());
        }
        projects.shift_remove(&project_root);
    }
    let slug = match find_by_marker(root, &project_root, done)? {
        Some(slug) => slug,
        None => claim_new(root, &project_root, projects, done)?,
    };
    projects.insert(project_root.clone(), Value::String(slug.clone()));
    done.slug = slug;
    let text = serde_json::to_string_pretty(&data).expect("a JSON value serialises");
    // The replacement keeps the file's mode (the CLI's is 0644 under a usual umask), owner and
    // group (`atomic::replace`).
    atomic::replace(registry, |w| w.write_all(text.as_bytes()))
        .map_err(|e| PluginError::io(registry, &e))?;
    done.entry_before = Some(before);
    Ok(())
}

impl Registration {
    /// Takes back what this registration changed, for a create that failed after it: the entry
    /// it wrote (the one before it put back), the markers and the (empty) folders it created.
    /// Nothing is taken back when anything new appeared in the project's folders since (a CLI
    /// found the project through this registration and keeps its chats there), nor when the
    /// registry's lock cannot be had. `projects.json` itself stays when this run created it: the
    /// CLI creates it outside its lock and then locks it, so removing it could fail a CLI starting
    /// at that moment, and an empty registry is what the CLI itself writes on its first run.
    pub(crate) fn undo(self, root: &StoreRoot) {
        if self.entry_before.is_none() && self.markers.is_empty() && self.dirs.is_empty() {
            return;
        }
        let Ok(registry) = root.join(&[REGISTRY]) else {
            return;
        };
        let Ok(_lock) = RegistryLock::acquire(&registry) else {
            return;
        };
        let found = contents(root, &self.slug);
        if found.iter().any(|entry| !self.found.contains(entry)) {
            return;
        }
        self.undo_locked(root, &registry);
    }

    /// [`Registration::undo`] under the registry's lock.
    fn undo_locked(&self, root: &StoreRoot, registry: &Path) {
        if let Some(before) = &self.entry_before {
            let taken_back = load(registry).and_then(|mut data| {
                let projects = projects_mut(&mut data);
                let ours = projects.get(&self.project_root).and_then(Value::as_str);
                if ours != Some(self.slug.as_str()) {
                    return Ok(()); // someone else changed it since: theirs now
                }
                match before {
                    Some(value) => {
                        projects.insert(self.project_root.clone(), value.clone());
                    }
                    None => {
                        projects.shift_remove(&self.project_root);
                    }
                }
                let text = serde_json::to_string_pretty(&data).expect("a JSON value serialises");
                atomic::replace(registry, |w| w.write_all(text.as_bytes()))
                    .map_err(|e| PluginError::io(registry, &e))
            });
            if taken_back.is_err() {
                return; // the entry stays, and so do the markers it names
            }
        }
        for marker in &self.markers {
            let ours = std::fs::read_to_string(marker).is_ok_and(|o| o.trim() == self.project_root);
            if ours {
                let _ = std::fs::remove_file(marker);
            }
        }
        root.remove_created_dirs(&self.dirs);
    }
}

/// The entries of a project's folders (both bases and its `chats`), sorted.
fn contents(root: &StoreRoot, slug: &str) -> Vec<PathBuf> {
    let folders = [
        root.join(&[TMP, slug]),
        root.join(&[TMP, slug, CHATS]),
        root.join(&[HISTORY, slug]),
    ];
    let mut found: Vec<PathBuf> = folders
        .into_iter()
        .flatten()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.filter_map(|e| Some(e.ok()?.path())))
        .collect();
    found.sort();
    found
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
fn find_by_marker(
    root: &StoreRoot,
    project_root: &str,
    done: &mut Registration,
) -> Result<Option<String>, PluginError> {
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
                ensure_markers(root, &name, project_root, done)?;
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
    done: &mut Registration,
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
        match ensure_markers(root, &candidate, project_root, done) {
            Ok(()) => return Ok(candidate),
            Err(PluginError::Other(_)) => continue, // lost a race for the folder
            Err(e) => return Err(e),
        }
    }
    unreachable!("the counter is unbounded")
}

/// `ensureOwnershipMarkers`: each base folder of the slug has a marker naming this root, created
/// exclusively; a marker naming another root is a collision (`PluginError::Other`). What it
/// creates is noted in `done`.
fn ensure_markers(
    root: &StoreRoot,
    slug: &str,
    project_root: &str,
    done: &mut Registration,
) -> Result<(), PluginError> {
    for marker in marker_paths(root, slug)? {
        let dir = marker.parent().expect("a marker has a folder");
        let made = root
            .create_dirs(dir)
            .map_err(|e| PluginError::io(dir, &e))?;
        done.dirs.extend(made);
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&marker)
            .and_then(|mut f| {
                done.markers.push(marker.clone());
                f.write_all(project_root.as_bytes())
            });
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

    /// A registration taken back leaves the store as it was; one whose project folder was used
    /// meanwhile (a CLI found the project through it and wrote a chat there) stays.
    #[test]
    fn a_registration_is_taken_back_unless_its_folder_was_used_meanwhile() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path().join("gemini")).unwrap();
        let registry = root.path().join(REGISTRY);
        let registered = register(&root, "/w/proj").unwrap();
        assert_eq!(registered.slug, "proj");
        assert!(root.path().join("tmp/proj/.project_root").is_file());
        registered.undo(&root);
        assert_eq!(
            std::fs::read_to_string(&registry).unwrap(),
            "{\n  \"projects\": {}\n}"
        );
        assert!(!root.path().join("tmp").exists() && !root.path().join("history").exists());

        let registered = register(&root, "/w/proj").unwrap();
        let chats = root.path().join("tmp/proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        std::fs::write(
            chats.join("session-2026-12-01T00-00-abcdef12.jsonl"),
            "{}\n",
        )
        .unwrap();
        let before = std::fs::read(&registry).unwrap();
        registered.undo(&root);
        assert_eq!(std::fs::read(&registry).unwrap(), before);
        assert!(before.windows(4).any(|w| w == b"proj"));
        assert!(root.path().join("tmp/proj/.project_root").is_file());
        assert!(root.path().join("history/proj/.project_root").is_file());
    }

    #[test]
    fn slugs_follow_the_cli() {
        assert_eq!(slugify("proj"), "proj");
        assert_eq!(slugify("My Project!!v2"), "my-project-v2");
        assert_eq!(slugify("--"), "project");
        assert_eq!(slugify("Ünï"), "n");
    }
}
