//! Plugin files and folders are trusted as strictly as ssh trusts its keys.
//!
//! A plugin runs as the user, inside the host. Anyone who can replace a plugin file, or put one
//! in a plugin folder, could run code there; a certificate does not help when the file can change
//! between runs (it would only be refused, not loaded, but a folder others can write is a folder
//! others decide about). So a plugin file or folder that is group- or world-writable, or that
//! belongs to another user than this one or root, is not loaded, and `handoff targets` says why.

use std::os::unix::fs::MetadataExt;

use crate::seal::effective_uid;

/// Why the plugin file or folder `what` that `meta` describes must not be used, if it must not.
pub fn refusal(meta: &std::fs::Metadata, what: &str) -> Option<String> {
    let owner = meta.uid();
    let me = effective_uid();
    if owner != me && owner != 0 {
        return Some(format!(
            "{what} belongs to user {owner}, not to this user ({me}) or root: it is not loaded"
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        let who = if mode & 0o002 != 0 { "world" } else { "group" };
        return Some(format!(
            "{what} is {who}-writable (mode {mode:04o}): anyone who may change it could run code in handoff, so it is not loaded; `chmod go-w` it"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn writable_by_others_or_owned_by_another_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.so");
        std::fs::write(&file, b"").unwrap();
        let meta = || std::fs::metadata(&file).unwrap();
        for (mode, refused) in [(0o644, false), (0o755, false), (0o664, true), (0o646, true)] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(
                refusal(&meta(), "plugin file").is_some(),
                refused,
                "{mode:o}"
            );
        }
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let why = refusal(&meta(), "plugin file").unwrap();
        assert!(why.contains("world-writable (mode 0666)"), "{why}");
        if effective_uid() == 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
            let why = refusal(&meta(), "plugin file").unwrap();
            assert!(why.contains("belongs to user 65534"), "{why}");
        }
    }
}
