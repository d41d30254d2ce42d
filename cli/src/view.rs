//! A readable view of a transcript for a terminal.

use std::fmt::Write as _;

use handoff_host::{AssistantPart, Body, Part, ToolInput, Transcript};

const TEXT_LIMIT: usize = 2_000;

pub fn render(t: &Transcript) -> String {
    let mut out = String::new();
    if let Some(cwd) = &t.cwd {
        let _ = writeln!(out, "cwd: {cwd}");
    }
    for (i, e) in t.events.iter().enumerate() {
        let who = e
            .author
            .as_ref()
            .map(|a| format!(" ({})", a.name))
            .unwrap_or_default();
        let _ = match &e.body {
            Body::User { content } => {
                let _ = writeln!(out, "\n#{i} user{who}  {}", e.timestamp);
                parts(&mut out, content);
                Ok(())
            }
            Body::Assistant { content, origin } => {
                let from = origin
                    .as_ref()
                    .map(|o| {
                        format!(
                            " [{}{}]",
                            o.provider,
                            o.model
                                .as_ref()
                                .map(|m| format!(" {m}"))
                                .unwrap_or_default()
                        )
                    })
                    .unwrap_or_default();
                let _ = writeln!(out, "\n#{i} assistant{from}{who}  {}", e.timestamp);
                for part in content {
                    match part {
                        AssistantPart::Text { text } => indent(&mut out, text),
                        AssistantPart::Thinking(t) => {
                            let signed = if t.signature.is_some() {
                                ", signed"
                            } else {
                                ""
                            };
                            let _ = writeln!(out, "  (thinking{signed})");
                            indent(&mut out, &t.text);
                        }
                        AssistantPart::ToolCall(c) => {
                            let input = match &c.input {
                                ToolInput::Arguments(arguments) => arguments.to_string(),
                                ToolInput::Freeform(text) => format!("(freeform) {text}"),
                            };
                            let _ = writeln!(out, "  → {} [{}] {}", c.name, c.id, clip(&input));
                        }
                        AssistantPart::WebSearch(search) => {
                            let _ = writeln!(
                                out,
                                "  (web search) {}",
                                clip(&search.action.to_string())
                            );
                        }
                    }
                }
                Ok(())
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let flag = if *is_error { "  ERROR" } else { "" };
                let _ = writeln!(out, "\n#{i} tool result [{call_id}]{flag}  {}", e.timestamp);
                if content.is_empty() {
                    let _ = writeln!(out, "  (no output)");
                }
                parts(&mut out, content);
                Ok(())
            }
            Body::Compaction {
                summary,
                replaces_through,
            } => {
                let _ = writeln!(
                    out,
                    "\n#{i} compaction (replaces up to {replaces_through})  {}",
                    e.timestamp
                );
                indent(&mut out, summary);
                Ok::<(), std::fmt::Error>(())
            }
        };
    }
    out
}

fn parts(out: &mut String, content: &[Part]) {
    for part in content {
        match part {
            Part::Text { text } => indent(out, text),
            Part::Image { media_type, data } => {
                let _ = writeln!(out, "  [image {media_type}, {} bytes]", data.len());
            }
            Part::ImageUrl { url } => {
                let _ = writeln!(out, "  [image {url}]");
            }
        }
    }
}

fn indent(out: &mut String, text: &str) {
    for line in clip(text).lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn clip(text: &str) -> String {
    if text.len() <= TEXT_LIMIT {
        return text.to_owned();
    }
    let mut cut = TEXT_LIMIT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &text[..cut], text.len() - cut)
}
