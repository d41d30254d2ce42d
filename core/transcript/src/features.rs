use serde::{Deserialize, Serialize};

use super::{AssistantPart, Body, Event, Part, ToolInput, Transcript};

/// A part of the canonical model that a target may or may not carry natively.
///
/// A target's manifest lists what it carries; a write of a transcript that uses anything else is
/// refused, naming the first event that needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Text in user and assistant turns.
    Text,
    /// Images by bytes in user turns.
    Image,
    /// Images by URL.
    ImageUrl,
    /// Thinking text.
    Thinking,
    /// Thinking with a provider signature or encrypted blob.
    ThinkingSignature,
    /// Tool calls.
    ToolCall,
    /// Tool results.
    ToolResult,
    /// The error flag of a failed tool result.
    ToolError,
    /// Images inside tool results.
    ToolResultImage,
    /// Compaction events.
    Compaction,
    /// Event authors (several people in one conversation).
    Author,
    /// Text or thinking after a tool call inside one assistant turn (some CLIs move the calls to
    /// the end of the turn).
    TextAfterToolCall,
    /// Numbers in tool arguments that a JavaScript reader would change: integers beyond 2^53,
    /// and any number whose text is not how JavaScript prints its value (`1.0`, `1e5`).
    PreciseNumbers,
    /// Tool calls with freeform text input (a custom tool, e.g. Codex's `apply_patch`), carried
    /// as such or in the target's structured form with a marker that reads them back.
    FreeformToolCall,
    /// Web searches the provider ran itself (OpenAI's hosted `web_search`).
    WebSearch,
}

impl Feature {
    /// Every feature, in a fixed order.
    pub const ALL: [Feature; 15] = [
        Feature::Text,
        Feature::Image,
        Feature::ImageUrl,
        Feature::Thinking,
        Feature::ThinkingSignature,
        Feature::ToolCall,
        Feature::ToolResult,
        Feature::ToolError,
        Feature::ToolResultImage,
        Feature::Compaction,
        Feature::Author,
        Feature::TextAfterToolCall,
        Feature::PreciseNumbers,
        Feature::FreeformToolCall,
        Feature::WebSearch,
    ];

    /// Every feature but `refused`, in [`Feature::ALL`]'s order: a manifest's `carries` written
    /// as what its target cannot carry, which is what a reader of the manifest looks for. A
    /// feature added to [`Feature::ALL`] is then claimed by such a manifest until it says
    /// otherwise; the conformance corpus uses every feature, so a target that cannot carry it
    /// fails its round trip instead of refusing it quietly.
    pub fn all_except(refused: &[Feature]) -> Vec<Feature> {
        Feature::ALL
            .into_iter()
            .filter(|feature| !refused.contains(feature))
            .collect()
    }

    /// The snake_case name used in manifests and messages.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Text => "text",
            Feature::Image => "image",
            Feature::ImageUrl => "image_url",
            Feature::Thinking => "thinking",
            Feature::ThinkingSignature => "thinking_signature",
            Feature::ToolCall => "tool_call",
            Feature::ToolResult => "tool_result",
            Feature::ToolError => "tool_error",
            Feature::ToolResultImage => "tool_result_image",
            Feature::Compaction => "compaction",
            Feature::Author => "author",
            Feature::TextAfterToolCall => "text_after_tool_call",
            Feature::PreciseNumbers => "precise_numbers",
            Feature::FreeformToolCall => "freeform_tool_call",
            Feature::WebSearch => "web_search",
        }
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Event {
    /// Every feature this event needs, in [`Feature::ALL`] order, without repeats.
    pub fn features(&self) -> Vec<Feature> {
        let mut found = Vec::new();
        self.each_feature(|f| {
            if !found.contains(&f) {
                found.push(f);
            }
        });
        found.sort();
        found
    }

    /// The first feature this event needs that `carried` lacks (without collecting them: the
    /// continuation engine asks this of every event it streams).
    pub fn first_uncarried(&self, carried: &[Feature]) -> Option<Feature> {
        let mut missing = None;
        self.each_feature(|f| {
            if missing.is_none_or(|m| f < m) && !carried.contains(&f) {
                missing = Some(f);
            }
        });
        missing
    }

    /// Calls `add` with every feature this event needs, in no order, possibly repeated.
    fn each_feature(&self, mut add: impl FnMut(Feature)) {
        if self.author.is_some() {
            add(Feature::Author);
        }
        match &self.body {
            Body::User { content } => {
                for part in content {
                    add(user_part_feature(part, false));
                }
            }
            Body::Assistant { content, .. } => {
                let first_call = content
                    .iter()
                    .position(|p| matches!(p, AssistantPart::ToolCall(_)));
                if first_call.is_some_and(|i| {
                    content[i..]
                        .iter()
                        .any(|p| !matches!(p, AssistantPart::ToolCall(_)))
                }) {
                    add(Feature::TextAfterToolCall);
                }
                for part in content {
                    match part {
                        AssistantPart::Text { .. } => add(Feature::Text),
                        AssistantPart::Thinking(t) => {
                            add(Feature::Thinking);
                            if t.signature.is_some() {
                                add(Feature::ThinkingSignature);
                            }
                        }
                        AssistantPart::ToolCall(call) => {
                            add(Feature::ToolCall);
                            match &call.input {
                                ToolInput::Arguments(arguments) => {
                                    if !js_preserves(arguments) {
                                        add(Feature::PreciseNumbers);
                                    }
                                }
                                ToolInput::Freeform(_) => add(Feature::FreeformToolCall),
                            }
                        }
                        AssistantPart::WebSearch(_) => add(Feature::WebSearch),
                    }
                }
            }
            Body::ToolResult {
                content, is_error, ..
            } => {
                add(Feature::ToolResult);
                if *is_error {
                    add(Feature::ToolError);
                }
                for part in content {
                    add(user_part_feature(part, true));
                }
            }
            Body::Compaction { .. } => add(Feature::Compaction),
        }
    }
}

/// Whether a JavaScript `JSON.parse` + `JSON.stringify` keeps every number of `value` as written.
fn js_preserves(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            let text = n.to_string();
            n.as_f64().is_some_and(|v| js_number(v) == text)
        }
        Value::Array(items) => items.iter().all(js_preserves),
        Value::Object(map) => map.values().all(js_preserves),
        _ => true,
    }
}

/// ECMAScript `Number::toString(v)` for a finite double: the shortest digits that round-trip,
/// laid out as JavaScript does (plain up to 10^21, exponential beyond, `e+N` / `e-N`).
pub(crate) fn js_number(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    if v < 0.0 {
        return format!("-{}", js_number(-v));
    }
    // Rust's `{:e}` prints the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().expect("{:e} exponent is an integer") + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let e = (n - 1).abs();
        if k == 1 {
            format!("{digits}e{sign}{e}")
        } else {
            format!("{}.{}e{sign}{e}", &digits[..1], &digits[1..])
        }
    }
}

fn user_part_feature(part: &Part, in_tool_result: bool) -> Feature {
    match part {
        Part::Text { .. } => Feature::Text,
        Part::Image { .. } if in_tool_result => Feature::ToolResultImage,
        Part::Image { .. } => Feature::Image,
        Part::ImageUrl { .. } => Feature::ImageUrl,
    }
}

impl Transcript {
    /// Every feature the transcript uses, sorted, without repeats.
    pub fn features(&self) -> Vec<Feature> {
        let mut all: Vec<Feature> = self.events.iter().flat_map(Event::features).collect();
        all.sort();
        all.dedup();
        all
    }

    /// The first event (index and event) that needs a feature `carried` does not contain.
    pub fn first_uncarried(&self, carried: &[Feature]) -> Option<(usize, &Event, Feature)> {
        self.events.iter().enumerate().find_map(|(i, e)| {
            e.features()
                .into_iter()
                .find(|f| !carried.contains(f))
                .map(|f| (i, e, f))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Thinking, Timestamp};

    #[test]
    fn javascript_number_layout() {
        for (v, js) in [
            (0.0, "0"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (std::f64::consts::PI, "3.141592653589793"),
            (1.5e-10, "1.5e-10"),
            (1e21, "1e+21"),
            (123456789012345678901.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (12345678901234567890123.0, "1.2345678901234568e+22"),
        ] {
            assert_eq!(js_number(v), js, "{v}");
        }
    }

    #[test]
    fn numbers_javascript_would_change_need_precise_numbers() {
        let call = |args: &str| Event {
            body: Body::assistant(vec![AssistantPart::ToolCall(crate::ToolCall::new(
                "c",
                "f",
                serde_json::from_str(args).unwrap(),
            ))]),
            ..Event::new(
                "a",
                Timestamp::from_millis(0),
                Body::User { content: vec![] },
            )
        };
        let needs = |args: &str| call(args).features().contains(&Feature::PreciseNumbers);
        assert!(!needs(
            r#"{"n": 42, "f": 0.5, "big": 9007199254740991, "x": [1.5e-10]}"#
        ));
        assert!(needs(r#"{"big": 12345678901234567890123}"#));
        assert!(needs(r#"{"n": -9007199254740993}"#));
        assert!(needs(r#"{"f": 1.0}"#));
        assert!(needs(r#"{"f": 1e5}"#));
    }

    #[test]
    fn freeform_calls_and_web_searches_are_features_of_their_own() {
        let turn = |part: AssistantPart| {
            Event::new("a", Timestamp::from_millis(0), Body::assistant(vec![part])).features()
        };
        let freeform = turn(AssistantPart::ToolCall(crate::ToolCall {
            id: "c".into(),
            name: "apply_patch".into(),
            // A number JavaScript would change, as text: not a precise-number matter.
            input: ToolInput::Freeform("1.0".into()),
        }));
        assert_eq!(freeform, vec![Feature::ToolCall, Feature::FreeformToolCall]);
        let search = turn(AssistantPart::WebSearch(crate::WebSearch {
            id: None,
            status: None,
            action: serde_json::json!({"type": "search", "query": "q"}),
        }));
        assert_eq!(search, vec![Feature::WebSearch]);
        // Every feature is named once, and serialised as its name.
        let names: std::collections::BTreeSet<&str> =
            Feature::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), Feature::ALL.len());
        for f in Feature::ALL {
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
        }
    }

    #[test]
    fn text_after_a_tool_call_is_its_own_feature() {
        let turn = |parts: Vec<AssistantPart>| {
            Event::new("a", Timestamp::from_millis(0), Body::assistant(parts))
                .features()
                .contains(&Feature::TextAfterToolCall)
        };
        let call =
            || AssistantPart::ToolCall(crate::ToolCall::new("c", "f", serde_json::json!({})));
        assert!(!turn(vec![AssistantPart::text("a"), call(), call()]));
        assert!(turn(vec![
            AssistantPart::text("a"),
            call(),
            AssistantPart::text("b")
        ]));
    }

    #[test]
    fn names_the_first_event_a_target_cannot_carry() {
        let t = Transcript::new(vec![
            Event::new("a", Timestamp::from_millis(0), Body::user_text("hi")),
            Event::new(
                "b",
                Timestamp::from_millis(1),
                Body::assistant(vec![AssistantPart::Thinking(Thinking {
                    text: "hm".into(),
                    signature: None,
                })]),
            ),
        ]);
        let (index, event, feature) = t.first_uncarried(&[Feature::Text]).unwrap();
        assert_eq!(
            (index, event.id.as_str(), feature),
            (1, "b", Feature::Thinking)
        );
        assert!(t
            .first_uncarried(&[Feature::Text, Feature::Thinking])
            .is_none());
    }
}
