//! Codex's own `compacted` record: from it on, Codex's history is its `replacement_history` (the
//! user messages it keeps, then the summary as a user message), and what follows it. The reader
//! reads that as the compaction and then the user messages kept, restated as events: the model
//! sees the same messages, but the canonical compaction shows its summary first, so the summary
//! comes before them, not after (a declared difference: docs/live.md, "Differential tests").
//! Instructions and injected context in it are set aside as everywhere.

use std::path::Path;

use handoff_sdk::{Part, PluginError};

use super::items::{is_injected, user_parts};
use crate::codex::records::ItemIn;

/// The user messages a replacement history keeps before its summary.
pub(super) fn kept_user_messages(
    path: &Path,
    n: usize,
    summary: &str,
    items: Vec<ItemIn<'_>>,
) -> Result<Vec<Vec<Part>>, PluginError> {
    let field = |k: usize, member: &str| format!("payload.replacement_history[{k}]{member}");
    let mut kept = Vec::new();
    let count = items.len();
    for (k, item) in items.into_iter().enumerate() {
        let is_message = item.kind.as_deref() == Some("message");
        match (is_message, item.role.as_deref()) {
            (true, Some("developer" | "system")) => continue,
            (true, Some("user")) if is_injected(&item) => continue,
            (true, Some("user")) => {
                let content = item.content.ok_or_else(|| {
                    PluginError::malformed_line(path, n, Some(&field(k, ".content")), "missing")
                })?;
                let parts = user_parts(path, n, content)?;
                let is_summary =
                    matches!(parts.as_slice(), [Part::Text { text }] if text == summary);
                if is_summary {
                    if k + 1 != count {
                        return Err(PluginError::malformed_line(
                            path,
                            n,
                            Some(&field(k + 1, "")),
                            "items after the summary of Codex's own compaction are not read",
                        ));
                    }
                    return Ok(kept);
                }
                kept.push(parts);
            }
            _ => {
                return Err(PluginError::malformed_line(
                    path,
                    n,
                    Some(&field(k, ".type")),
                    format!(
                        "a {:?} item in the replacement history of Codex's own compaction has no \
                         canonical form; refusing to drop it",
                        item.kind.as_deref().unwrap_or("(none)")
                    ),
                ))
            }
        }
    }
    Err(PluginError::malformed_line(
        path,
        n,
        Some("payload.replacement_history"),
        "no user message holds the summary (payload.message)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(json: &str) -> Vec<ItemIn<'_>> {
        handoff_sdk::serde_json::from_str(json).unwrap()
    }

    /// Differential case codex/two-turns/compacted.
    #[test]
    fn the_user_messages_before_the_summary_are_kept_and_instructions_set_aside() {
        let path = Path::new("rollout.jsonl");
        let history = r#"[
            {"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"S"}]}]"#;
        let kept = kept_user_messages(path, 7, "S", items(history)).unwrap();
        assert_eq!(kept, vec![vec![Part::text("hi")]]);
    }

    #[test]
    fn what_the_reader_cannot_read_is_named() {
        let path = Path::new("rollout.jsonl");
        let no_summary =
            r#"[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]"#;
        let e = kept_user_messages(path, 7, "S", items(no_summary)).unwrap_err();
        assert!(e.to_string().contains("rollout.jsonl:7"), "{e}");
        let encrypted = r#"[{"type":"compaction","encrypted_content":"x"},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"S"}]}]"#;
        let e = kept_user_messages(path, 7, "S", items(encrypted)).unwrap_err();
        assert!(e.to_string().contains("replacement_history[0].type"), "{e}");
    }
}
