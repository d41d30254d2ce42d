//! The title Gemini CLI 0.61.0 lists a session under (`--list-sessions`, the `/resume` browser):
//! its `summary` when it has one, else its first user message the CLI would resume (not a
//! command, not injected context), as the CLI cleans it: text parts joined, whitespace runs made
//! one space, anything outside printable ASCII dropped.

use std::path::Path;

use handoff_sdk::serde_json::Value;
use handoff_sdk::PluginError;

use super::chat::Chat;
use super::parts;
use super::record_types::ContentIn;

/// The listing title of a session file (`chat`, indexed from `path`): its messages are read up
/// to the first user message the title comes from.
pub(crate) fn title(chat: &Chat, path: &Path) -> Result<Option<String>, PluginError> {
    let summary = chat
        .meta
        .get("summary")
        .and_then(Value::as_str)
        .map(strip_unsafe)
        .filter(|s| !s.trim().is_empty());
    if summary.is_some() {
        return Ok(summary);
    }
    let mut title = None;
    chat.each_message(path, &mut |m| {
        if m.kind() == Some("user") {
            title = user_title(&m.body.content);
        }
        Ok(title.is_none())
    })?;
    Ok(title)
}

/// The title a user message gives, unless the CLI skips it.
fn user_title(content: &ContentIn) -> Option<String> {
    let (form, texts) = match content {
        ContentIn::None => return None,
        ContentIn::Text(t) => (t.clone(), t.clone()),
        ContentIn::Parts(p) => (
            parts::text_form(p),
            p.iter().filter_map(|p| p.text.as_deref()).collect(),
        ),
    };
    if parts::skipped_user_text(&form) {
        return None;
    }
    Some(clean(&texts)).filter(|t| !t.is_empty())
}

/// The CLI's `cleanMessage`: runs of whitespace become one space, characters outside printable
/// ASCII are dropped, the ends trimmed.
fn clean(text: &str) -> String {
    let spaced = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let ascii: String = spaced.chars().filter(|c| (' '..='~').contains(c)).collect();
    ascii.trim().to_owned()
}

/// The CLI's `stripUnsafeCharacters` on a summary: control characters removed.
fn strip_unsafe(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cleaned_as_the_cli_cleans_them() {
        assert_eq!(clean("  fix\n\n the\tbug — now  "), "fix the bug  now");
        assert_eq!(strip_unsafe("a\u{1b}[31mb\n"), "a[31mb");
    }

    #[test]
    fn the_title_skips_the_injected_context_and_a_summary_wins() {
        // Written by Gemini CLI 0.61.0: its first user message is the injected session context.
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/samples/session-2026-11-30T00-42-d0a744dc.jsonl");
        let mut chat = super::super::chat::index(&sample).unwrap();
        assert_eq!(title(&chat, &sample).unwrap().as_deref(), Some("TOOLME"));
        chat.meta.insert("summary".into(), "Run a tool".into());
        assert_eq!(
            title(&chat, &sample).unwrap().as_deref(),
            Some("Run a tool")
        );
    }
}
