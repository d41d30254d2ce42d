//! Codex's own `compacted` record: from it on, Codex's history is its `replacement_history` (the
//! user messages it keeps, then the summary as a user message), and what follows it. The reader
//! restates the user messages kept as events, then the compaction: a canonical compaction's
//! summary is seen at its place, so the history reads as Codex sends it. Instructions and
//! injected context in it are set aside as everywhere.
//!
//! A record without `replacement_history` (older Codex) is rebuilt as Codex 0.171.0 rebuilds it
//! on resume (codex-rs `build_compacted_history`): the user messages in its history before the
//! record, the most recent first within a budget of 20,000 approximate tokens (bytes / 4,
//! rounded up), then the summary (`(no summary available)` when empty). A summary stays in
//! Codex's history as a user message, so a later rebuild keeps it too, unless it starts with
//! Codex's own summary prefix. A rebuilt user message is its texts (each an `input_text`, in
//! order), its images left out; one without text is one empty text (measured with Codex
//! 0.171.0). Where Codex would cut a message to fit the budget (or may: a message of several
//! texts whose count is not known to fit), the reader refuses, naming the lines: it does not
//! guess Codex's truncation marker.

use std::collections::VecDeque;
use std::path::Path;

use handoff_sdk::{Part, PluginError};

use super::items::{is_injected, user_parts};
use super::state::SeenUser;
use crate::codex::records::ItemIn;

/// Codex's budget for the user messages a rebuilt history keeps, in approximate tokens
/// (`COMPACT_USER_MESSAGE_MAX_TOKENS`).
const KEPT_USER_TOKENS: usize = 20_000;

/// The summary Codex puts in a rebuilt history when the record's `message` is empty.
pub(super) const NO_SUMMARY: &str = "(no summary available)";

/// The text Codex's own compaction summaries start with (then a line break), which a rebuild
/// leaves out of the user messages it keeps (codex-rs `SUMMARY_PREFIX`, `is_summary_message`).
const SUMMARY_PREFIX: &str = "Another language model started to solve this problem and produced \
a summary of its thinking process. You also have access to the state of the tools that were used \
by that language model. Use this to build on the work that has already been done and avoid \
duplicating work. Here is the summary produced by the other language model, use the information \
in this summary to assist with your own analysis:";

/// Whether `text` is one of Codex's own compaction summaries.
pub(super) fn is_summary_message(text: &str) -> bool {
    text.strip_prefix(SUMMARY_PREFIX)
        .is_some_and(|rest| rest.starts_with('\n'))
}

/// A user message as Codex's compaction sees it: its texts, in order, its images left out.
pub(super) fn seen_user(line: usize, content: &[Part]) -> SeenUser {
    let texts = content
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.clone()),
            Part::Image { .. } | Part::ImageUrl { .. } => None,
        })
        .collect();
    SeenUser { line, texts }
}

/// Codex's token estimate: bytes / 4, rounded up (`approx_token_count`).
fn approx_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The fewest and the most tokens Codex can count for a message of several texts: each text
/// counted alone, or all of them joined by line breaks (which Codex 0.171.0 does was not
/// measured; for one text the two agree).
fn token_bounds(texts: &[String]) -> (usize, usize) {
    let each: usize = texts.iter().map(|t| approx_tokens(t)).sum();
    let bytes: usize = texts.iter().map(String::len).sum::<usize>() + texts.len().saturating_sub(1);
    let joined = bytes.div_ceil(4);
    (each.min(joined), each.max(joined))
}

/// The user messages Codex rebuilds a history from when a `compacted` record (line `n`) has no
/// replacement history: the most recent of `seen` within the budget, in their order, each as
/// its texts (measured with Codex 0.171.0: every text item of the message, in order, as an
/// `input_text`; its images left out; a message without text as one empty text).
pub(super) fn rebuilt_user_messages(
    path: &Path,
    n: usize,
    seen: &UserHistory,
) -> Result<Vec<Vec<Part>>, PluginError> {
    let refuse = |line: usize, why: &str| {
        PluginError::malformed_line(
            path,
            n,
            Some("payload.replacement_history"),
            format!(
                "Codex rebuilds this compaction's history from the user messages before it \
                 within {KEPT_USER_TOKENS} tokens and {why} the message on line {line}; the \
                 reader does not guess the cut"
            ),
        )
    };
    // What is left of the budget if Codex counted every message so far the most (`low`) or
    // the fewest (`high`) tokens it can; they differ only after a message of several texts.
    let (mut low, mut high) = (KEPT_USER_TOKENS, KEPT_USER_TOKENS);
    let mut kept = Vec::new();
    for (user, _) in seen.users.iter().rev() {
        if high == 0 {
            break;
        }
        if low == 0 {
            return Err(refuse(user.line, "may stop before or cut"));
        }
        let (fewest, most) = token_bounds(&user.texts);
        if most > low {
            return Err(refuse(user.line, "cuts (or may cut)"));
        }
        low -= most;
        high -= fewest;
        kept.push(if user.texts.is_empty() {
            vec![Part::text("")]
        } else {
            user.texts.iter().map(|t| Part::text(t.as_str())).collect()
        });
    }
    kept.reverse();
    Ok(kept)
}

/// The user messages in Codex's history now (since its last compaction), which a `compacted`
/// record without `replacement_history` rebuilds the history from: only as far back as a
/// rebuild can reach (it stops once the messages after one hold at least [`KEPT_USER_TOKENS`]
/// by the fewest count), so a long session keeps about that many tokens of text here, not all
/// of its user messages.
#[derive(Default)]
pub(super) struct UserHistory {
    /// Each message and the fewest tokens Codex may count it as.
    users: VecDeque<(SeenUser, usize)>,
    fewest_total: usize,
}

impl UserHistory {
    pub(super) fn push(&mut self, user: SeenUser) {
        let (fewest, _) = token_bounds(&user.texts);
        self.fewest_total += fewest;
        self.users.push_back((user, fewest));
        // The oldest is out of reach once the messages after it fill the budget.
        while let Some(&(_, oldest)) = self.users.front() {
            if self.fewest_total - oldest < KEPT_USER_TOKENS {
                break;
            }
            self.fewest_total -= oldest;
            self.users.pop_front();
        }
    }

    /// The history after a compaction: these messages alone.
    pub(super) fn replace(&mut self, users: impl IntoIterator<Item = SeenUser>) {
        *self = UserHistory::default();
        users.into_iter().for_each(|user| self.push(user));
    }
}

/// Whether `item`'s content is exactly one text, `text`.
fn holds_only(item: &ItemIn<'_>, text: &str) -> bool {
    matches!(item.content.as_deref(), Some([only]) if only.text.as_deref() == Some(text))
}

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
            // Codex 0.171.0's own summary item is marked as the harness's (provenance
            // `harness`, kind `compaction.summary`): it is the summary, not an injection.
            (true, Some("user")) if is_injected(&item) && !holds_only(&item, summary) => continue,
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

    fn seen(line: usize, text: &str) -> SeenUser {
        SeenUser {
            line,
            texts: vec![text.into()],
        }
    }

    fn history(users: impl IntoIterator<Item = SeenUser>) -> UserHistory {
        let mut history = UserHistory::default();
        users.into_iter().for_each(|u| history.push(u));
        history
    }

    /// The history keeps only what a rebuild can reach, and rebuilds the same from it.
    #[test]
    fn messages_out_of_a_rebuilds_reach_are_forgotten_without_changing_it() {
        let path = Path::new("rollout.jsonl");
        // 1,000 messages of about 400 tokens: a rebuild reaches the last 50.
        let text = "word ".repeat(320);
        let users = || (0..1000).map(|line| seen(line, &text));
        let kept_all = {
            // What a history that forgot nothing rebuilds: the newest within the budget.
            let all = UserHistory {
                users: users()
                    .map(|u| (u, token_bounds(&u_texts(&text)).0))
                    .collect(),
                fewest_total: 0,
            };
            rebuilt_user_messages(path, 2000, &all).unwrap()
        };
        let trimmed = history(users());
        assert!(trimmed.users.len() <= 51, "{}", trimmed.users.len());
        assert_eq!(
            rebuilt_user_messages(path, 2000, &trimmed).unwrap(),
            kept_all
        );
    }

    fn u_texts(text: &str) -> Vec<String> {
        vec![text.to_owned()]
    }

    /// Differential case codex/two-turns/compacted-no-replacement: every user message fits.
    #[test]
    fn without_a_replacement_history_the_user_messages_before_are_kept_in_order() {
        let path = Path::new("rollout.jsonl");
        let kept =
            rebuilt_user_messages(path, 9, &history([seen(3, "one"), seen(5, "two")])).unwrap();
        assert_eq!(kept, vec![vec![Part::text("one")], vec![Part::text("two")]]);
        assert!(rebuilt_user_messages(path, 9, &UserHistory::default())
            .unwrap()
            .is_empty());
    }

    /// The budget is spent from the most recent message back; a message it leaves out whole
    /// (the budget exactly spent) is not kept, one Codex would cut is refused.
    #[test]
    fn the_budget_keeps_the_most_recent_messages() {
        let path = Path::new("rollout.jsonl");
        // 79,996 bytes = 19,999 tokens; 1 byte = 1 token: the budget is spent exactly.
        let big = "x".repeat(79_996);
        let kept = rebuilt_user_messages(
            path,
            9,
            &history([seen(1, "old"), seen(3, &big), seen(5, "y")]),
        )
        .unwrap();
        assert_eq!(
            kept,
            vec![vec![Part::text(big.as_str())], vec![Part::text("y")]]
        );
        // 79,997 bytes = 20,000 tokens: the 1-token message after it would need a cut.
        let bigger = "x".repeat(79_997);
        let e = rebuilt_user_messages(
            path,
            9,
            &history([seen(3, "z"), seen(4, &bigger), seen(5, "y")]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rollout.jsonl:9") && e.contains("line 4"), "{e}");
    }

    /// Differential case codex/two-turns/compacted-no-replacement-images: a message's texts are
    /// kept, its images left out; one without text is one empty text.
    #[test]
    fn a_rebuilt_message_keeps_its_texts_and_leaves_out_its_images() {
        let path = Path::new("rollout.jsonl");
        let png = Part::Image {
            media_type: "image/png".into(),
            data: vec![1, 2],
        };
        let mixed = seen_user(2, &[Part::text("look"), png.clone(), Part::text("and")]);
        let image = seen_user(4, &[png]);
        let kept = rebuilt_user_messages(path, 9, &history([mixed, image])).unwrap();
        assert_eq!(
            kept,
            vec![
                vec![Part::text("look"), Part::text("and")],
                vec![Part::text("")]
            ]
        );
    }

    /// Where Codex's count of a message of several texts is not known to fit, the reader
    /// refuses rather than guess.
    #[test]
    fn a_message_of_several_texts_near_the_budget_is_refused() {
        let path = Path::new("rollout.jsonl");
        // Two texts of 39,998 bytes: 20,000 tokens counted apart, 20,000 joined (79,997 bytes).
        let half = "x".repeat(39_998);
        let two = SeenUser {
            line: 3,
            texts: vec![half.clone(), half.clone()],
        };
        let kept = rebuilt_user_messages(path, 9, &history([two])).unwrap();
        assert_eq!(kept[0].len(), 2);
        // Two texts of 40,000 bytes: 20,000 tokens apart but 20,001 joined (80,001 bytes).
        let over = SeenUser {
            line: 3,
            texts: vec!["x".repeat(40_000), "x".repeat(40_000)],
        };
        let e = rebuilt_user_messages(path, 9, &history([over]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn only_a_summary_with_codexs_prefix_and_a_line_break_is_one() {
        assert!(is_summary_message(&format!("{SUMMARY_PREFIX}\nS")));
        assert!(!is_summary_message(&format!("{SUMMARY_PREFIX} S")));
        assert!(!is_summary_message("The user said hi."));
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
