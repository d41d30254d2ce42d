//! Copies of a written session under a new id, made without knowing the native format: the id is
//! replaced in the bytes and in the deepest component of the path that contains it (the file name,
//! or the session's own folder). Some component must contain the session id (every native store
//! of the design does).

use std::path::PathBuf;

use handoff_host::SessionRef;
use handoff_store::marker;

/// A new id of the same shape as `id` (a UUID for a UUID).
pub(crate) fn fresh_id_like(id: &str) -> String {
    let new = uuid::Uuid::new_v4().to_string();
    if uuid::Uuid::parse_str(id).is_ok() || id.len() >= new.len() {
        new
    } else {
        new[..id.len()].to_owned()
    }
}

/// An id that shares all but its last character with `id` (a hex digit stays a hex digit): a
/// decoy for resolvers that match a prefix.
pub(crate) fn sibling_id(id: &str) -> String {
    let mut chars: Vec<char> = id.chars().collect();
    if let Some(last) = chars.last_mut() {
        *last = match last.to_digit(16) {
            Some(d) => std::char::from_digit((d + 1) % 16, 16).unwrap_or('0'),
            None if *last == 'x' => 'y',
            None => 'x',
        };
    }
    chars.into_iter().collect()
}

/// Copies `session` to a new id with `edit` applied to its bytes; returns the copy.
pub(crate) fn copy_with_new_id(
    session: &SessionRef,
    edit: impl FnOnce(Vec<u8>) -> Vec<u8>,
) -> Result<SessionRef, String> {
    copy_with_id(session, &fresh_id_like(&session.id), edit)
}

/// Copies `session` to the id `id` with `edit` applied to its bytes; returns the copy.
pub(crate) fn copy_with_id(
    session: &SessionRef,
    id: &str,
    edit: impl FnOnce(Vec<u8>) -> Vec<u8>,
) -> Result<SessionRef, String> {
    // The deepest component of the path that names the session: the file, or a session's own
    // folder (Copilot CLI's `session-state/<id>/events.jsonl`).
    let components: Vec<&std::ffi::OsStr> = session.path.iter().collect();
    let Some(named) = components
        .iter()
        .rposition(|c| c.to_str().is_some_and(|c| c.contains(&session.id)))
    else {
        return Err(format!(
            "no component of the session's path {} contains its id {:?}; the suite cannot copy it",
            session.path.display(),
            session.id
        ));
    };
    let id = id.to_owned();
    let path: PathBuf = components
        .iter()
        .enumerate()
        .map(|(i, c)| match c.to_str() {
            Some(c) if i == named => std::ffi::OsString::from(c.replace(&session.id, &id)),
            _ => c.to_os_string(),
        })
        .collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let bytes =
        std::fs::read(&session.path).map_err(|e| format!("cannot read the session: {e}"))?;
    let text = String::from_utf8_lossy(&bytes).replace(&session.id, &id);
    std::fs::write(&path, edit(text.into_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(SessionRef {
        target: session.target.clone(),
        id,
        path,
    })
}

/// Removes every ownership marker from each JSON line (or the whole JSON document).
pub(crate) fn strip_markers(bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&bytes);
    if let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(&text) {
        marker::strip(&mut doc);
        return serde_json::to_vec_pretty(&doc).unwrap_or(bytes);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(mut v) => {
                marker::strip(&mut v);
                out += &v.to_string();
            }
            Err(_) => out += line,
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::sibling_id;

    #[test]
    fn a_sibling_shares_all_but_the_last_character() {
        let id = "01a229e6-93f2-7540-95e0-5ee20bf368fe";
        let sibling = sibling_id(id);
        assert_eq!(sibling.len(), id.len());
        assert_eq!(&sibling[..id.len() - 1], &id[..id.len() - 1]);
        assert_ne!(sibling, id);
        assert_eq!(sibling_id("abcf"), "abc0");
        assert_eq!(sibling_id("name-x"), "name-y");
    }
}
