//! Reading the history a real CLI sent, and the view of a transcript the wire can show.
//!
//! The wire carries no timestamps, authors, event ids or turn origins, a dialect has limits of
//! its own ([`Dialect::limits`]), and a CLI adds things of its own (system prompt, tool
//! definitions, `<system-reminder>` texts, …). So both sides are brought to a *wire view* before
//! the semantic comparison: on the request side exactly what the recipe declares as
//! [`Injected`] is set aside; on the transcript side thinking the target does not carry is set
//! aside and compactions are applied; both sides set aside what the wire cannot carry and merge
//! consecutive turns of one role (the APIs merge them too). This module knows no provider: the
//! dialect and the injected rules come from the plugin's recipe.

use handoff_capability::live::{Injected, TrailingTurn, TurnRole};
use handoff_dialects::{parsed_view, Dialect};
use handoff_host::{AssistantPart, Body, Event, Part, Thinking, Timestamp, Transcript};
use serde_json::Value;

/// The history of a model request in `dialect`, with what the CLI injected set aside as
/// `injected` declares: user text parts a [`Injected::UserTextPrefix`] covers (and user turns
/// left empty), tool-result texts an [`Injected::ToolResultText`] covers. A system prompt or tool definitions the request carries but `injected` does not
/// declare are an error, as is a body the dialect cannot parse. Parsed events have timestamp 0
/// and no author.
pub fn history_from_request(
    dialect: Dialect,
    body: &Value,
    injected: &[Injected],
) -> Result<Transcript, String> {
    let parsed = dialect
        .parse(body)
        .map_err(|e| format!("cannot parse the {dialect} request: {e}"))?;
    if !parsed.system.is_empty() && !injected.contains(&Injected::SystemPrompt) {
        return Err(format!(
            "the request carries a system prompt ({} texts) that the recipe does not declare \
             as injected (system_prompt)",
            parsed.system.len()
        ));
    }
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if has_tools && !injected.contains(&Injected::ToolDefinitions) {
        return Err(
            "the request carries tool definitions that the recipe does not declare as injected \
             (tool_definitions)"
                .into(),
        );
    }
    Ok(set_aside_injected(parsed.transcript, injected))
}

/// Drops the user and tool-result text parts an injected rule covers and user events left empty;
/// takes a merge's suffix off a user turn's text parts but the last.
fn set_aside_injected(mut transcript: Transcript, injected: &[Injected]) -> Transcript {
    strip_prompt_tag(&mut transcript, injected);
    let merge_suffixes: Vec<&str> = injected
        .iter()
        .filter_map(Injected::merged_user_text_suffix)
        .collect();
    transcript.events.retain_mut(|event| match &mut event.body {
        Body::User { content } => {
            strip_merge_suffixes(content, &merge_suffixes);
            content.retain(|p| {
                !matches!(p, Part::Text { text } if injected.iter().any(|i| i.covers_user_text(text)))
            });
            !content.is_empty()
        }
        Body::ToolResult { content, .. } => {
            content.retain(|p| {
                !matches!(p, Part::Text { text } if injected.iter().any(|i| i.covers_result_text(text)))
            });
            true
        }
        _ => true,
    });
    transcript
}

/// Takes a [`Injected::PromptLeadingTag`] off the first text of the last user turn (the new
/// prompt), where the recipe declares one and the text starts with it.
fn strip_prompt_tag(transcript: &mut Transcript, injected: &[Injected]) {
    let Some(Body::User { content }) = transcript
        .events
        .iter_mut()
        .rev()
        .map(|e| &mut e.body)
        .find(|b| matches!(b, Body::User { .. }))
    else {
        return;
    };
    let Some(Part::Text { text }) = content.iter_mut().find(|p| matches!(p, Part::Text { .. }))
    else {
        return;
    };
    if let Some(rest) = injected.iter().find_map(|rule| rule.strip_prompt_tag(text)) {
        *text = rest.to_owned();
    }
}

/// Takes one of `suffixes` off the end of every text part but the last: what a CLI that merges
/// consecutive user messages into one added where it joined them.
fn strip_merge_suffixes(content: &mut [Part], suffixes: &[&str]) {
    if suffixes.is_empty() {
        return;
    }
    let Some(last_text) = content.iter().rposition(|p| matches!(p, Part::Text { .. })) else {
        return;
    };
    for part in &mut content[..last_text] {
        let Part::Text { text } = part else { continue };
        if let Some(suffix) = suffixes.iter().find(|s| text.ends_with(**s)) {
            text.truncate(text.len() - suffix.len());
        }
    }
}

/// The turns a CLI adds on resume after `history` (a wire view) and before the new prompt, as the
/// recipe's [`Injected::ResumeTurn`] rules say: each rule, in order, looks at how the history
/// ends so far (its own turns included) and adds its turn when that matches.
pub fn resume_turns(history: &Transcript, injected: &[Injected]) -> Vec<Event> {
    let mut ending = history.events.last().map(|e| Ending::of(e, history));
    let mut added = Vec::new();
    for rule in injected {
        let Injected::ResumeTurn(rule) = rule else {
            continue;
        };
        let applies = match (&ending, rule.after) {
            (Some(Ending::User), TrailingTurn::UserOrToolResult) => true,
            (Some(Ending::ToolResult(name)), _) => !name
                .as_ref()
                .is_some_and(|n| rule.unless_answering.contains(n)),
            _ => false,
        };
        if !applies {
            continue;
        }
        let body = match rule.role {
            TurnRole::User => {
                ending = Some(Ending::User);
                Body::user_text(rule.text.clone())
            }
            TurnRole::Assistant => {
                ending = Some(Ending::Assistant);
                Body::assistant(vec![AssistantPart::text(rule.text.clone())])
            }
        };
        let id = format!("resume-turn-{}", added.len());
        added.push(Event::new(id, Timestamp::from_millis(0), body));
    }
    added
}

/// Takes out of `transcript` what a CLI with [`Injected::ThinkingOfOtherModelsLeftOut`] does
/// not send in a request for `request_model`: signed (or redacted) thinking made by another model.
/// Claude Code 2.1.197 sends such blocks back only to the model that made them, comparing names
/// without a `[1m]` / `[2m]` suffix, and keeps those of `<synthetic>` turns (`Flm` in its bundle),
/// as the Anthropic API needs. The maker is the signature's model, else the turn's; thinking of
/// no known maker stays, and so does everything when the request names no model. With
/// [`Injected::AllThinkingOfOtherModelsLeftOut`] (pi from 1.3.0 on) every thinking part of a turn
/// whose model is not the request's goes, signed or not. Returns how many thinking parts were
/// taken out; none without either rule.
pub fn leave_out_thinking_of_other_models(
    transcript: &mut Transcript,
    request_model: Option<&str>,
    injected: &[Injected],
) -> usize {
    if injected.contains(&Injected::AllThinkingOfOtherModelsLeftOut) {
        if let Some(wanted) = request_model {
            return leave_out_all_thinking_of_other_models(transcript, wanted);
        }
    }
    let Some(wanted) =
        request_model.filter(|_| injected.contains(&Injected::ThinkingOfOtherModelsLeftOut))
    else {
        return 0;
    };
    let wanted = plain_model(wanted);
    let mut taken = 0;
    for event in &mut transcript.events {
        let Body::Assistant { content, origin } = &mut event.body else {
            continue;
        };
        let turn_model = origin.as_ref().and_then(|o| o.model.clone());
        let before = content.len();
        content.retain(|part| match part {
            AssistantPart::Thinking(Thinking {
                signature: Some(s), ..
            }) if s.redacted || !s.value.is_empty() => s
                .model
                .as_deref()
                .or(turn_model.as_deref())
                .is_none_or(|made| made == "<synthetic>" || plain_model(made) == wanted),
            _ => true,
        });
        taken += before - content.len();
    }
    taken
}

/// A model's name without the `[1m]` / `[2m]` context suffix Claude Code adds.
fn plain_model(model: &str) -> String {
    ["[1m]", "[2m]", "[1M]", "[2M]"]
        .iter()
        .fold(model.to_owned(), |m, suffix| m.replace(suffix, ""))
}

/// [`Injected::AllThinkingOfOtherModelsLeftOut`]: every thinking part of an assistant turn whose
/// model (its origin's) is not `wanted` taken out; a turn of no known model is another model's.
fn leave_out_all_thinking_of_other_models(transcript: &mut Transcript, wanted: &str) -> usize {
    let wanted = plain_model(wanted);
    let mut taken = 0;
    for event in &mut transcript.events {
        let Body::Assistant { content, origin } = &mut event.body else {
            continue;
        };
        let same_model = origin
            .as_ref()
            .and_then(|o| o.model.as_deref())
            .is_some_and(|made| plain_model(made) == wanted);
        if same_model {
            continue;
        }
        let before = content.len();
        content.retain(|part| !matches!(part, AssistantPart::Thinking(_)));
        taken += before - content.len();
    }
    taken
}

/// What a CLI's first request must carry when it resumes `transcript` with `prompt`, by the
/// recipe's rules, as the live tier and the differential harness both expect it: the thinking it
/// does not send to `request_model` left out, the tool outputs it cuts cut, the turns it adds on
/// resume added, then the prompt (before the wire view, which the caller takes). Also a line of
/// evidence for each rule that changed something.
pub fn expected_request(
    mut transcript: Transcript,
    request_model: Option<&str>,
    prompt: &str,
    injected: &[Injected],
    thinking_from: &[String],
    dialect: Dialect,
) -> (Transcript, Vec<String>) {
    let mut notes = Vec::new();
    let left_out = leave_out_thinking_of_other_models(&mut transcript, request_model, injected);
    if left_out > 0 {
        let which = if injected.contains(&Injected::AllThinkingOfOtherModelsLeftOut) {
            "thinking parts (signed or not)"
        } else {
            "signed thinking parts"
        };
        notes.push(format!(
            "{left_out} {which} of turns made by another model than the request's \
             ({}) are expected left out",
            request_model.unwrap_or("none")
        ));
    }
    let cut = truncate_tool_outputs(&mut transcript, injected);
    if cut > 0 {
        notes.push(format!(
            "{cut} tool outputs over the recipe's budget are expected cut in the middle"
        ));
    }
    // What the CLI adds on resume after a history that ends as this one does.
    let view = wire_view(&transcript, thinking_from, dialect);
    let added = resume_turns(&view, injected);
    if !added.is_empty() {
        notes.push(format!(
            "the history ends on a {} turn: the recipe's resume turns ({}) are expected before \
             the prompt",
            view.events.last().map_or("no", |e| e.body.kind()),
            added.len()
        ));
    }
    transcript.events.extend(added);
    transcript.events.push(Event::new(
        "live-prompt",
        Timestamp::from_millis(0),
        Body::user_text(prompt.to_owned()),
    ));
    (transcript, notes)
}

/// The model a request body names (its `model` member), if any.
pub fn request_model(body: &Value) -> Option<&str> {
    body.get("model")?.as_str()
}

/// Cuts every tool output a CLI with [`Injected::ToolOutputMiddleTruncated`] would send cut:
/// a tool result whose one part is a text longer than the budget becomes that text's head, the
/// marker and its tail, as the CLI sends it. Returns how many outputs were cut; none without the
/// rule. (A result of several parts is left whole: how the CLI shares the budget between parts
/// was not measured, so such a result still has to match in full.)
pub fn truncate_tool_outputs(transcript: &mut Transcript, injected: &[Injected]) -> usize {
    let Some(max_bytes) = injected.iter().find_map(|rule| match rule {
        Injected::ToolOutputMiddleTruncated { max_bytes } => Some(*max_bytes),
        _ => None,
    }) else {
        return 0;
    };
    let mut cut = 0;
    for event in &mut transcript.events {
        if let Body::ToolResult { content, .. } = &mut event.body {
            if let [Part::Text { text }] = content.as_mut_slice() {
                if text.len() > max_bytes {
                    *text = middle_truncated(text, max_bytes);
                    cut += 1;
                }
            }
        }
    }
    cut
}

/// `text` (longer than `max_bytes`) as its first half budget and its last, each on a character
/// boundary, with `…N chars truncated…` for the characters between.
fn middle_truncated(text: &str, max_bytes: usize) -> String {
    let mut head_end = max_bytes / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (max_bytes - max_bytes / 2);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = text[head_end..tail_start].chars().count();
    format!(
        "{}…{removed} chars truncated…{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// How a history ends, for the resume-turn rules.
enum Ending {
    User,
    /// Tool results; the name of the call the last one answers, when the history has it.
    ToolResult(Option<String>),
    Assistant,
}

impl Ending {
    fn of(last: &Event, history: &Transcript) -> Ending {
        match &last.body {
            Body::ToolResult { call_id, .. } => Ending::ToolResult(call_name(history, call_id)),
            Body::Assistant { .. } => Ending::Assistant,
            _ => Ending::User,
        }
    }
}

fn call_name(history: &Transcript, call_id: &str) -> Option<String> {
    history.events.iter().find_map(|e| match &e.body {
        Body::Assistant { content, .. } => content.iter().find_map(|p| match p {
            AssistantPart::ToolCall(call) if call.id == call_id => Some(call.name.clone()),
            _ => None,
        }),
        _ => None,
    })
}

/// The wire view of a transcript as a target that keeps thinking made by `thinking_from` (its
/// manifest's list) carries it over `dialect` (see the module docs).
pub fn wire_view(
    transcript: &Transcript,
    thinking_from: &[String],
    dialect: Dialect,
) -> Transcript {
    handoff_dialects::wire_view(transcript, dialect, thinking_from)
}

/// The wire view of a parsed request history: the same normalisation, nothing set aside.
pub fn request_view(history: &Transcript, dialect: Dialect) -> Transcript {
    parsed_view(history, dialect)
}

/// The request's history as the comparison sees it: [`request_view`], with what the CLI may send
/// in place of an event of `whole` (the expected transcript) aligned to it — a compaction summary
/// in a preamble of the CLI's own, and, under [`Injected::ToolOutputMasked`], a masked tool output
/// whose preview is the expected output's.
pub fn aligned_request_view(
    history: &Transcript,
    dialect: Dialect,
    whole: &Transcript,
    injected: &[Injected],
) -> Transcript {
    let mut actual = request_view(history, dialect);
    align_compaction_summaries(&compaction_summaries(whole), &mut actual);
    if injected.contains(&Injected::ToolOutputMasked) {
        align_masked_tool_outputs(whole, &mut actual);
    }
    actual
}

const MASK_OPEN: &str = "<tool_output_masked>\n";
const MASK_CLOSE: &str = "\n</tool_output_masked>";

/// Whether `event` is a tool result Gemini CLI masked: one text,
/// `<tool_output_masked>\n…\n</tool_output_masked>`.
pub(crate) fn is_masked_tool_output(event: &Event) -> bool {
    matches!(&event.body, Body::ToolResult { content, .. }
        if matches!(content.as_slice(), [Part::Text { text }]
            if text.starts_with(MASK_OPEN) && text.ends_with(MASK_CLOSE)))
}

/// Gemini CLI's masked tool output (see [`Injected::ToolOutputMasked`]): a result of `actual`
/// that is one is replaced by the result of `expected` whose preview it keeps (the same call's
/// first; ids may be remapped between the two views).
pub fn align_masked_tool_outputs(expected: &Transcript, actual: &mut Transcript) {
    let is_masked = is_masked_tool_output;
    if !actual.events.iter().any(is_masked) {
        return;
    }
    let tool_names: std::collections::HashMap<&str, &str> = expected
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Assistant { content, .. } => Some(content),
            _ => None,
        })
        .flatten()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(call) => Some((call.id.as_str(), call.name.as_str())),
            _ => None,
        })
        .collect();
    // Each expected text result with the masked form Gemini CLI would send of it, up to the path.
    let masked_forms: Vec<(&str, String, &str, bool)> = expected
        .events
        .iter()
        .filter_map(|e| {
            let (call_id, [Part::Text { text }], is_error) = e.body.as_tool_result()? else {
                return None;
            };
            let tool = tool_names.get(call_id).copied().unwrap_or("");
            let preview = masking_preview(tool, text, is_error);
            let head =
                format!("{MASK_OPEN}{preview}\n\nOutput too large. Full output available at: ");
            Some((call_id, head, text.as_str(), is_error))
        })
        .collect();
    for event in &mut actual.events {
        let Body::ToolResult {
            call_id,
            content,
            is_error,
        } = &mut event.body
        else {
            continue;
        };
        let [Part::Text { text }] = content.as_mut_slice() else {
            continue;
        };
        if !text.starts_with(MASK_OPEN) || !text.ends_with(MASK_CLOSE) {
            continue;
        }
        // Masked in the session itself (Gemini CLI wrote the masked form back into its file):
        // the expected output is that masked text, and another call's equal output is no match.
        if masked_forms
            .iter()
            .any(|(id, _, original, _)| id == call_id && original == text)
        {
            continue;
        }
        let kept = |(_, head, _, _): &&(&str, String, &str, bool)| text.starts_with(head.as_str());
        let found = masked_forms
            .iter()
            .filter(|(id, _, _, _)| id == call_id)
            .find(kept)
            .or_else(|| masked_forms.iter().find(kept));
        // The masked response is `{output}` whatever the call's outcome: the flag goes with it.
        if let Some((_, _, original, failed)) = found {
            *text = (*original).to_owned();
            *is_error = *failed;
        }
    }
}

/// The preview Gemini CLI 0.61 keeps of a masked output (`formatShellPreview` for its shell tool,
/// else the first and last 250 UTF-16 units of the response's `JSON.stringify(…, null, 2)`: a
/// failed call's response is `{error}`, any other `{output}`).
fn masking_preview(tool: &str, output: &str, is_error: bool) -> String {
    if tool == "run_shell_command" && !is_error {
        return shell_preview(output);
    }
    let key = if is_error { "error" } else { "output" };
    let json = serde_json::to_string_pretty(&serde_json::json!({ key: output }))
        .expect("a string serialises");
    let units: Vec<u16> = json.encode_utf16().collect();
    if units.len() <= 500 {
        return json;
    }
    format!(
        "{}\n... [TRUNCATED] ...\n{}",
        String::from_utf16_lossy(&units[..250]),
        String::from_utf16_lossy(&units[units.len() - 250..])
    )
}

/// `formatShellPreview`: the shell tool's output by its sections, the `Output:` one shortened.
fn shell_preview(output: &str) -> String {
    const SECTIONS: [&str; 6] = [
        "Output",
        "Error",
        "Exit Code",
        "Signal",
        "Background PIDs",
        "Process Group PGID",
    ];
    // Split at the start of each line that opens a section (`Name: `), as the CLI's regex does.
    let mut pieces: Vec<(Option<&str>, String)> = vec![(None, String::new())];
    for line in output.split_inclusive('\n') {
        let opened = SECTIONS
            .iter()
            .find(|name| line.starts_with(&format!("{name}: ")));
        match opened {
            Some(name) => pieces.push((Some(name), line[name.len() + 2..].to_owned())),
            None => pieces.last_mut().expect("one piece").1.push_str(line),
        }
    }
    if pieces.len() < 2 {
        return simple_preview(output);
    }
    let mut parts = Vec::new();
    let first = pieces[0].1.trim();
    if !first.is_empty() {
        parts.push(simple_preview(first));
    }
    for (name, body) in &pieces[1..] {
        let name = name.expect("a section");
        let body = body.trim();
        if name == "Output" {
            parts.push(format!("Output: {}", simple_preview(body)));
        } else {
            parts.push(format!("{name}: {body}"));
        }
    }
    parts.join("\n")
}

/// `formatSimplePreview`: up to 20 lines whole, else the first and last ten.
fn simple_preview(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= 20 {
        return content.to_owned();
    }
    format!(
        "{}\n\n... [{} lines omitted] ...\n\n{}",
        lines[..10].join("\n"),
        lines.len() - 20,
        lines[lines.len() - 10..].join("\n")
    )
}

/// The compaction summaries of a transcript: the texts its wire view shows in their place.
pub fn compaction_summaries(transcript: &Transcript) -> Vec<String> {
    transcript
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Compaction { summary, .. } => Some(summary.clone()),
            _ => None,
        })
        .collect()
}

/// A CLI may wrap a compaction summary in a preamble of its own: a request's user text that
/// contains one of `summaries` (and is not exactly it) is replaced by that summary.
pub fn align_compaction_summaries(summaries: &[String], actual: &mut Transcript) {
    for event in &mut actual.events {
        let Body::User { content } = &mut event.body else {
            continue;
        };
        for part in content.iter_mut() {
            let Part::Text { text } = part else { continue };
            if let Some(summary) = summaries
                .iter()
                .find(|s| !s.is_empty() && text != *s && text.contains(s.as_str()))
            {
                *text = summary.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use handoff_host::{AssistantPart, Event, Origin, Signature, Thinking, Timestamp, ToolCall};
    use serde_json::json;

    use super::*;

    fn anthropic() -> Vec<String> {
        vec!["anthropic".into()]
    }

    fn ev(id: &str, ms: i64, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(ms), body)
    }

    fn user(text: &str) -> Body {
        Body::user_text(text)
    }

    fn kinds(t: &Transcript) -> Vec<&'static str> {
        t.events.iter().map(|e| e.body.kind()).collect()
    }

    fn prefix(p: &str) -> Injected {
        Injected::UserTextPrefix(p.into())
    }

    #[test]
    fn an_anthropic_request_loses_exactly_what_the_recipe_declares() {
        let body = json!({
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "You are Claude Code"}],
            "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>\nagents\n</system-reminder>"},
                    {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
                ]},
                {"role": "system", "content": "agent listing"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
                    {"type": "text", "text": "<system-reminder>late</system-reminder>"}
                ]},
                {"role": "user", "content": "continue"}
            ]
        });
        let all = [
            Injected::SystemPrompt,
            Injected::ToolDefinitions,
            prefix("<system-reminder>"),
        ];
        let history = history_from_request(Dialect::AnthropicMessages, &body, &all).unwrap();
        assert_eq!(
            kinds(&history),
            ["user", "assistant", "tool_result", "user"]
        );
        assert_eq!(history.events[0].body, user("hello"));
        assert_eq!(history.events[3].body, user("continue"));

        // Undeclared, each injected thing shows.
        let no_prefix = history_from_request(Dialect::AnthropicMessages, &body, &all[..2]).unwrap();
        assert_eq!(no_prefix.events.len(), 5);
        let err = history_from_request(Dialect::AnthropicMessages, &body, &all[1..]).unwrap_err();
        assert!(err.contains("system_prompt"), "{err}");
        let err = history_from_request(
            Dialect::AnthropicMessages,
            &body,
            &[Injected::SystemPrompt, prefix("<system-reminder>")],
        )
        .unwrap_err();
        assert!(err.contains("tool_definitions"), "{err}");
    }

    #[test]
    fn signed_thinking_goes_only_to_the_model_that_made_it() {
        let thinking = |text: &str, model: Option<&str>, value: &str| {
            AssistantPart::Thinking(Thinking {
                text: text.into(),
                signature: Some(Signature {
                    provider: "anthropic".into(),
                    model: model.map(Into::into),
                    value: value.into(),
                    redacted: false,
                }),
            })
        };
        let turn = |content| ev("a", 0, Body::assistant(content));
        let mut t = Transcript::new(vec![
            turn(vec![
                thinking("old", Some("claude-sonnet-4-20250514"), "S1"),
                AssistantPart::text("answer"),
            ]),
            turn(vec![
                thinking("same", Some("claude-sonnet-4-5"), "S2"),
                thinking("synthetic", Some("<synthetic>"), "S3"),
                thinking("unknown maker", None, "S4"),
                thinking("unsigned", Some("claude-sonnet-4-20250514"), ""),
            ]),
        ]);
        let texts = |t: &Transcript| -> Vec<String> {
            t.events
                .iter()
                .flat_map(|e| match &e.body {
                    Body::Assistant { content, .. } => content.clone(),
                    _ => vec![],
                })
                .map(|p| match p {
                    AssistantPart::Thinking(t) => t.text,
                    AssistantPart::Text { text } => text,
                    _ => String::new(),
                })
                .collect()
        };
        let all = texts(&t);
        let rule = [Injected::ThinkingOfOtherModelsLeftOut];
        assert_eq!(leave_out_thinking_of_other_models(&mut t, None, &rule), 0);
        assert_eq!(
            leave_out_thinking_of_other_models(&mut t, Some("claude-sonnet-4-5"), &[]),
            0
        );
        assert_eq!(texts(&t), all);
        let taken =
            leave_out_thinking_of_other_models(&mut t, Some("claude-sonnet-4-5[1m]"), &rule);
        assert_eq!(taken, 1);
        assert_eq!(
            texts(&t),
            ["answer", "same", "synthetic", "unknown maker", "unsigned"]
        );
    }

    #[test]
    fn a_merge_suffix_comes_off_every_user_text_but_the_last() {
        let body = json!({"messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "kept\n"},
                {"type": "text", "text": "two\n\n"},
                {"type": "text", "text": "summary\n"}
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok\n"}]}
        ]});
        let merged = Injected::MergedUserTextSuffix("\n".into());
        let history = history_from_request(Dialect::AnthropicMessages, &body, &[merged]).unwrap();
        let Body::User { content } = &history.events[0].body else {
            panic!("a user turn")
        };
        let texts: Vec<&str> = content
            .iter()
            .map(|p| match p {
                Part::Text { text } => text.as_str(),
                _ => "",
            })
            .collect();
        // One suffix off each text but the last; the last and assistant texts are as sent.
        assert_eq!(texts, ["kept", "two\n", "summary\n"]);
        let Body::Assistant { content, .. } = &history.events[1].body else {
            panic!("an assistant turn")
        };
        assert_eq!(content, &vec![AssistantPart::text("ok\n")]);
        // Undeclared, the texts stay as sent.
        let as_sent = history_from_request(Dialect::AnthropicMessages, &body, &[]).unwrap();
        assert_eq!(
            as_sent.events[0].body,
            Body::User {
                content: vec![
                    Part::text("kept\n"),
                    Part::text("two\n\n"),
                    Part::text("summary\n")
                ]
            }
        );
    }

    #[test]
    fn a_responses_request_loses_instructions_and_the_declared_context() {
        let body = json!({"input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]}
        ]});
        let rules = [Injected::SystemPrompt, prefix("<environment_context>")];
        let history = history_from_request(Dialect::OpenaiResponses, &body, &rules).unwrap();
        assert_eq!(kinds(&history), ["user", "assistant", "user"]);
        let kept = history_from_request(Dialect::OpenaiResponses, &body, &rules[..1]).unwrap();
        assert_eq!(kinds(&kept), ["user", "assistant", "user", "user"]);
    }

    #[test]
    fn a_prompt_leading_tag_comes_off_the_new_prompt_only() {
        let tagged =
            |text: &str| format!("<current_datetime>2026-12-02T06:30</current_datetime>\n\n{text}");
        let chat = json!({"messages": [
            {"role": "user", "content": tagged("from the session")},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": tagged("next")}
        ]});
        let texts = |rules: &[Injected]| -> Vec<String> {
            history_from_request(Dialect::OpenaiChat, &chat, rules)
                .unwrap()
                .events
                .iter()
                .filter_map(|e| match &e.body {
                    Body::User { content } => match &content[0] {
                        Part::Text { text } => Some(text.clone()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        };
        let rule = Injected::PromptLeadingTag("current_datetime".into());
        assert_eq!(texts(&[rule]), [tagged("from the session"), "next".into()]);
        // Without the rule the prompt keeps its tag, and the check would fail on it.
        assert_eq!(texts(&[]), [tagged("from the session"), tagged("next")]);
    }

    #[test]
    fn chat_and_gemini_requests_are_read_too() {
        let chat = json!({"messages": [
            {"role": "system", "content": "You are pi."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "user", "content": "next"}
        ]});
        let history = history_from_request(Dialect::OpenaiChat, &chat, &[Injected::SystemPrompt]);
        assert_eq!(
            kinds(&history.unwrap()),
            ["user", "assistant", "tool_result", "user"]
        );
        let placeholder = Injected::ToolResultText("x".into());
        let history = history_from_request(
            Dialect::OpenaiChat,
            &chat,
            &[Injected::SystemPrompt, placeholder],
        )
        .unwrap();
        assert_eq!(
            history.events[2].body,
            Body::ToolResult {
                call_id: "c1".into(),
                content: vec![],
                is_error: false
            }
        );
        let gemini = json!({"contents": [
            {"role": "user", "parts": [{"text": "<session_context>cwd</session_context>"}, {"text": "hi"}]},
            {"role": "model", "parts": [{"text": "ok"}]},
            {"role": "user", "parts": [{"text": "next"}]}
        ]});
        let history =
            history_from_request(Dialect::Gemini, &gemini, &[prefix("<session_context>")]).unwrap();
        assert_eq!(history.events[0].body, user("hi"));
    }

    #[test]
    fn a_body_the_dialect_cannot_read_is_an_error_not_a_pass() {
        let err = history_from_request(Dialect::Gemini, &json!({}), &[]).unwrap_err();
        assert!(err.contains("cannot parse the gemini request"), "{err}");
    }

    #[test]
    fn the_wire_view_sets_aside_what_the_wire_cannot_carry() {
        let result = ev("r", 0, Body::tool_error("c", "boom"));
        let call = ev(
            "a",
            0,
            Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                "c",
                "ls",
                json!({}),
            ))]),
        );
        let t = Transcript::new(vec![ev("u", 0, user("hi")), call, result]);
        let flag = |view: &Transcript| {
            matches!(view.events[2].body, Body::ToolResult { is_error: true, .. })
        };
        assert!(flag(&wire_view(
            &t,
            &anthropic(),
            Dialect::AnthropicMessages
        )));
        assert!(!flag(&wire_view(
            &t,
            &anthropic(),
            Dialect::OpenaiResponses
        )));
        assert!(!flag(&request_view(&t, Dialect::OpenaiChat)));
    }

    #[test]
    fn the_wire_view_drops_what_the_wire_cannot_show_and_merges_same_role_turns() {
        let mut alice = ev("a", 5, user("one"));
        alice.author = Some(handoff_host::Author {
            kind: handoff_host::AuthorKind::Human,
            name: "alice".into(),
        });
        let foreign = AssistantPart::Thinking(Thinking {
            text: "hm".into(),
            signature: Some(Signature {
                provider: "openai".into(),
                model: Some("o3".into()),
                value: "enc".into(),
                redacted: false,
            }),
        });
        let transcript = Transcript::new(vec![
            alice,
            ev("b", 6, user("two")),
            ev(
                "c",
                7,
                Body::Assistant {
                    content: vec![foreign.clone(), AssistantPart::text("hi")],
                    origin: Some(Origin {
                        provider: "openai".into(),
                        model: Some("o3".into()),
                        api: None,
                    }),
                },
            ),
            ev("d", 8, Body::assistant(vec![foreign])),
        ]);
        let view = wire_view(&transcript, &anthropic(), Dialect::AnthropicMessages);
        assert_eq!(view.events.len(), 2);
        assert_eq!(
            view.events[0].body,
            Body::User {
                content: vec![Part::text("one"), Part::text("two")]
            }
        );
        assert_eq!(view.events[0].author, None);
        assert_eq!(view.events[0].timestamp, Timestamp::from_millis(0));
        let Body::Assistant { content, origin } = &view.events[1].body else {
            panic!()
        };
        assert_eq!(content, &vec![AssistantPart::text("hi")]);
        assert_eq!(origin.as_ref().unwrap().provider, "anthropic");
    }

    fn resume_turn(after: TrailingTurn, role: TurnRole, text: &str) -> Injected {
        // The exception applies to the rule after tool results only.
        let unless_answering = match after {
            TrailingTurn::ToolResult => vec!["Brief".into()],
            TrailingTurn::UserOrToolResult => Vec::new(),
        };
        Injected::ResumeTurn(handoff_capability::live::ResumeTurn {
            after,
            role,
            text: text.into(),
            unless_answering,
        })
    }

    #[test]
    fn resume_turns_follow_how_the_history_ends() {
        // Claude Code's two rules, in its order: a resume prompt after tool results, then a
        // reply after any user turn (its own resume prompt included).
        let claude = [
            Injected::SystemPrompt,
            resume_turn(TrailingTurn::ToolResult, TurnRole::User, "Continue."),
            resume_turn(
                TrailingTurn::UserOrToolResult,
                TurnRole::Assistant,
                "No response requested.",
            ),
        ];
        let gemini = [resume_turn(
            TrailingTurn::ToolResult,
            TurnRole::Assistant,
            "[interrupted]",
        )];
        let call = |name: &str| {
            ev(
                "a",
                0,
                Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                    "c",
                    name,
                    json!({}),
                ))]),
            )
        };
        let result = ev("r", 0, Body::tool_output("c", "done"));
        let answered = Transcript::new(vec![
            ev("u", 0, user("hi")),
            ev("b", 0, Body::assistant(vec![AssistantPart::text("ok")])),
        ]);
        let texts = |events: Vec<Event>| -> Vec<(&'static str, String)> {
            events
                .into_iter()
                .map(|e| {
                    let kind = e.body.kind();
                    let text = match e.body {
                        Body::User { content } => match &content[0] {
                            Part::Text { text } => text.clone(),
                            _ => String::new(),
                        },
                        Body::Assistant { content, .. } => match &content[0] {
                            AssistantPart::Text { text } => text.clone(),
                            _ => String::new(),
                        },
                        _ => String::new(),
                    };
                    (kind, text)
                })
                .collect()
        };
        // A history that ends on an answer: nothing added.
        assert!(resume_turns(&answered, &claude).is_empty());
        assert!(resume_turns(&Transcript::new(vec![]), &claude).is_empty());
        // On a user message: the reply only (Claude Code); nothing (Gemini CLI).
        let asked = Transcript::new(vec![ev("u", 0, user("hi"))]);
        assert_eq!(
            texts(resume_turns(&asked, &claude)),
            [("assistant", "No response requested.".to_owned())]
        );
        assert!(resume_turns(&asked, &gemini).is_empty());
        // On tool results: both CLIs add theirs.
        let interrupted =
            Transcript::new(vec![ev("u", 0, user("hi")), call("Bash"), result.clone()]);
        assert_eq!(
            texts(resume_turns(&interrupted, &claude)),
            [
                ("user", "Continue.".to_owned()),
                ("assistant", "No response requested.".to_owned())
            ]
        );
        assert_eq!(
            texts(resume_turns(&interrupted, &gemini)),
            [("assistant", "[interrupted]".to_owned())]
        );
        // A result of a tool the rule names as an exception: that rule does not apply.
        let briefed = Transcript::new(vec![ev("u", 0, user("hi")), call("Brief"), result]);
        assert_eq!(
            texts(resume_turns(&briefed, &claude)),
            [("assistant", "No response requested.".to_owned())]
        );
    }

    #[test]
    fn a_long_tool_output_is_cut_in_the_middle_only_under_the_rule() {
        let result = |text: &str| ev("r", 0, Body::tool_output("c", text.to_owned()));
        // 20,030 characters, as measured with Codex 0.171.0: 6,000 kept at each end.
        let long: String = (0..20_030)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let short = "x".repeat(12_000);
        let mut t = Transcript::new(vec![result(&long), result(&short)]);
        let rule = [Injected::ToolOutputMiddleTruncated { max_bytes: 12_000 }];
        assert_eq!(truncate_tool_outputs(&mut t.clone(), &[]), 0);
        assert_eq!(truncate_tool_outputs(&mut t, &rule), 1);
        let Body::ToolResult { content, .. } = &t.events[0].body else {
            panic!("a tool result")
        };
        let Part::Text { text } = &content[0] else {
            panic!("a text")
        };
        let expected = format!(
            "{}…8030 chars truncated…{}",
            &long[..6_000],
            &long[long.len() - 6_000..]
        );
        assert_eq!(*text, expected);
        // A multi-byte character is never split: the head ends before it, the tail after it.
        let wide = format!("{}é{}", "a".repeat(5), "b".repeat(10));
        assert_eq!(
            middle_truncated(&wide, 12),
            "aaaaa…5 chars truncated…bbbbbb"
        );
    }

    #[test]
    fn signed_thinking_of_another_model_is_left_out_only_under_the_rule() {
        let signed = |model: Option<&str>| {
            AssistantPart::Thinking(Thinking {
                text: "hm".into(),
                signature: Some(Signature {
                    provider: "anthropic".into(),
                    model: model.map(Into::into),
                    value: "sig".into(),
                    redacted: false,
                }),
            })
        };
        let unsigned = AssistantPart::Thinking(Thinking {
            text: "plain".into(),
            signature: None,
        });
        let turn = |model: Option<&str>| {
            ev(
                "a",
                0,
                Body::Assistant {
                    content: vec![signed(model), unsigned.clone(), AssistantPart::text("ok")],
                    origin: Some(Origin {
                        provider: "anthropic".into(),
                        model: model.map(str::to_owned),
                        api: None,
                    }),
                },
            )
        };
        let transcript = Transcript::new(vec![
            turn(Some("claude-opus-4-5")),
            turn(Some("claude-sonnet-4-5")),
            turn(None),
        ]);
        let rule = [Injected::ThinkingOfOtherModelsLeftOut];
        let mut left = transcript.clone();
        let taken = leave_out_thinking_of_other_models(&mut left, Some("claude-sonnet-4-5"), &rule);
        assert_eq!(taken, 1);
        let lengths: Vec<usize> = left
            .events
            .iter()
            .map(|e| match &e.body {
                Body::Assistant { content, .. } => content.len(),
                _ => 0,
            })
            .collect();
        // The other model's turn loses its signed thinking only; the request model's turn and
        // the turn of no known model keep theirs.
        assert_eq!(lengths, [2, 3, 3]);
        let mut untouched = transcript.clone();
        assert_eq!(
            leave_out_thinking_of_other_models(&mut untouched, Some("claude-sonnet-4-5"), &[]),
            0
        );
        assert_eq!(untouched, transcript);

        // pi from 1.3.0 on: every thinking part of another model's turn goes, signed or not,
        // and a turn of no known model is another model's.
        let all = [Injected::AllThinkingOfOtherModelsLeftOut];
        let mut left = transcript.clone();
        let taken = leave_out_thinking_of_other_models(&mut left, Some("claude-sonnet-4-5"), &all);
        assert_eq!(taken, 4);
        let kept: Vec<Vec<&AssistantPart>> = left
            .events
            .iter()
            .map(|e| match &e.body {
                Body::Assistant { content, .. } => content.iter().collect(),
                _ => Vec::new(),
            })
            .collect();
        let ok = AssistantPart::text("ok");
        assert_eq!(kept[0], [&ok]);
        assert_eq!(
            kept[1].len(),
            3,
            "the request model's turn keeps its thinking"
        );
        assert_eq!(kept[2], [&ok]);
        // No model named by the request: nothing is known to be another's.
        let mut unnamed = transcript.clone();
        assert_eq!(
            leave_out_thinking_of_other_models(&mut unnamed, None, &all),
            0
        );
    }

    #[test]
    fn a_masked_output_the_session_itself_holds_is_left_as_it_is() {
        // Gemini CLI writes masked outputs back into its file; read back, the expected output
        // of that call is the masked text, and another call's equal output must not replace it.
        let original = "x\n".repeat(400);
        let preview = masking_preview("read", &original, false);
        let masked = format!(
            "<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: /t/a.txt\n</tool_output_masked>"
        );
        let call = |id: &str| Body::Assistant {
            content: vec![AssistantPart::ToolCall(ToolCall::new(
                id,
                "read",
                json!({}),
            ))],
            origin: None,
        };
        let result = |id: &str, text: &str| Body::tool_output(id, text);
        let expected = Transcript::new(vec![
            ev("a", 1, call("c1")),
            ev("b", 2, result("c1", &masked)),
            ev("c", 3, call("c2")),
            ev("d", 4, result("c2", &original)),
        ]);
        let mut actual = Transcript::new(vec![
            ev("b", 2, result("c1", &masked)),
            ev("d", 4, result("c2", &masked)),
        ]);
        align_masked_tool_outputs(&expected, &mut actual);
        let texts: Vec<&str> = actual
            .events
            .iter()
            .map(|e| match &e.body {
                Body::ToolResult { content, .. } => match content.as_slice() {
                    [Part::Text { text }] => text.as_str(),
                    _ => "",
                },
                _ => "",
            })
            .collect();
        // c1's masked output is the session's own; c2's is the CLI's masking of its output.
        assert_eq!(texts, [masked.as_str(), original.as_str()]);
    }

    #[test]
    fn compactions_are_applied_and_a_wrapped_summary_is_accepted() {
        let transcript = Transcript::new(vec![
            ev("a", 1, user("old")),
            ev(
                "b",
                2,
                Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                    "c1",
                    "ls",
                    json!({}),
                ))]),
            ),
            ev(
                "c",
                3,
                Body::Compaction {
                    summary: "we listed files".into(),
                    replaces_through: "b".into(),
                },
            ),
            ev("d", 4, user("new")),
        ]);
        let d = Dialect::AnthropicMessages;
        let expected = wire_view(&transcript, &anthropic(), d);
        assert_eq!(
            expected.events,
            vec![ev(
                "c",
                0,
                Body::User {
                    content: vec![Part::text("we listed files"), Part::text("new")]
                }
            )]
        );
        let request = Transcript::new(vec![
            ev("x", 0, user("Previously: we listed files. Go on.")),
            ev("y", 0, user("new")),
        ]);
        let mut actual = request_view(&request, d);
        let exact = handoff_host::Comparison::exact();
        assert!(exact.diff(&expected, &actual).is_err());
        align_compaction_summaries(&compaction_summaries(&transcript), &mut actual);
        exact.diff(&expected, &actual).unwrap();
        let mut other = request_view(&request, d);
        align_compaction_summaries(&["something else".into()], &mut other);
        assert!(exact.diff(&expected, &other).is_err());
    }

    #[test]
    fn a_masked_output_stands_for_the_output_whose_preview_it_keeps() {
        use handoff_host::ToolCall;
        let long = format!("{}\n{}", "a".repeat(400), "z".repeat(400));
        let shell: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let event = |id: &str, body: Body| {
            Event::new(id, Timestamp::parse("2026-01-01T00:00:00Z").unwrap(), body)
        };
        let call = |id: &str, name: &str| {
            AssistantPart::ToolCall(ToolCall::new(id, name, serde_json::json!({})))
        };
        let result = |id: &str, text: &str| Body::ToolResult {
            call_id: id.to_owned(),
            content: vec![Part::Text {
                text: text.to_owned(),
            }],
            is_error: false,
        };
        let expected = Transcript::new(vec![
            event(
                "e1",
                Body::assistant(vec![
                    call("c1", "read_file"),
                    call("c2", "run_shell_command"),
                ]),
            ),
            event("e2", result("c1", &long)),
            event("e3", result("c2", &format!("Output: {shell}Exit Code: 0"))),
        ]);
        let masked = |preview: &str| {
            format!("<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: /t/x.txt\n</tool_output_masked>")
        };
        let json = serde_json::to_string_pretty(&serde_json::json!({ "output": long })).unwrap();
        let file_preview = format!(
            "{}\n... [TRUNCATED] ...\n{}",
            &json[..250],
            &json[json.len() - 250..]
        );
        // `formatSimplePreview` of the Output section's 30 lines: the first and last ten.
        let lines = |range: std::ops::RangeInclusive<i32>| {
            range
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let shell_preview = format!(
            "Output: {}\n\n... [10 lines omitted] ...\n\n{}\nExit Code: 0",
            lines(1..=10),
            lines(21..=30)
        );
        let mut actual = expected.clone();
        for (event, text) in actual.events[1..]
            .iter_mut()
            .zip([masked(&file_preview), masked(&shell_preview)])
        {
            let Body::ToolResult { content, .. } = &mut event.body else {
                unreachable!()
            };
            content[0] = Part::Text { text };
        }
        let mut aligned = actual.clone();
        align_masked_tool_outputs(&expected, &mut aligned);
        assert_eq!(aligned.events[1], expected.events[1]);
        assert_eq!(
            aligned.events[2], expected.events[2],
            "{:?}",
            actual.events[2]
        );
        // A preview of anything else is not the output: left for the comparison to report.
        let mut other = actual.clone();
        let Body::ToolResult { content, .. } = &mut other.events[1].body else {
            unreachable!()
        };
        content[0] = Part::Text {
            text: masked("something else"),
        };
        let before = other.clone();
        align_masked_tool_outputs(&expected, &mut other);
        assert_eq!(other.events[1], before.events[1]);
    }
}
