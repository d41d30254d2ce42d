//! Property test: any well-formed conversation survives write → read, and write prefix → append
//! suffix → read, semantically equal under the target's comparison.

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::ById;
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, Origin, Part, Plugin, Signature,
    StoreRoot, Thinking, Timestamp, ToolCall, Transcript,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,30}",
        "[a-z \n\t\"\\\\]{0,12}",
        Just(
            "👩‍💻 שלום e\u{301} \u{2028} \r\n <environment_context>x</environment_context>"
                .to_owned()
        ),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        4 => text().prop_map(|text| Part::Text { text }),
        // Bytes behind a JPEG signature: Codex sends only images it can decode.
        1 => prop::collection::vec(any::<u8>(), 0..24).prop_map(|tail| Part::Image {
            media_type: "image/jpeg".into(),
            data: [&[0xff, 0xd8, 0xff][..], &tail].concat()
        }),
        1 => "[a-z]{1,8}".prop_map(|p| Part::ImageUrl { url: format!("https://example.com/{p}.png") }),
    ]
}

/// One assistant part before the calls: text or OpenAI thinking (portable to Codex).
fn lead_part() -> impl Strategy<Value = AssistantPart> {
    prop_oneof![
        3 => text().prop_map(|text| AssistantPart::Text { text }),
        1 => (text(), proptest::option::of("[A-Za-z0-9+/=]{1,24}"), proptest::option::of("gpt-5|o3"))
            .prop_map(|(text, value, model)| AssistantPart::Thinking(Thinking {
                text,
                signature: value.map(|value| Signature {
                    provider: "openai".into(),
                    model,
                    value,
                    redacted: false,
                }),
            })),
    ]
}

/// A turn: a user message, then an assistant message with leading parts and some calls, then
/// one result per call (in call order), then maybe a closing assistant text.
#[derive(Clone, Debug)]
struct Turn {
    user: Vec<Part>,
    author: Option<String>,
    lead: Vec<AssistantPart>,
    calls: Vec<(String, Value, Vec<Part>, bool)>,
    closing: Option<String>,
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        prop::collection::vec(part(), 0..3),
        proptest::option::of("Alice|Bob"),
        prop::collection::vec(lead_part(), 0..3),
        prop::collection::vec(
            (
                "[a-z_]{1,10}",
                json_value(),
                prop::collection::vec(part(), 0..3),
                any::<bool>(),
            ),
            0..3,
        ),
        proptest::option::of(text()),
    )
        .prop_map(|(user, author, lead, calls, closing)| Turn {
            user,
            author,
            lead,
            calls,
            closing,
        })
}

fn transcript(turns: Vec<Turn>, compact_after: Option<usize>) -> Transcript {
    let mut events = Vec::new();
    let mut ms = 1_795_999_300_000i64;
    let mut next = |events: &mut Vec<Event>, body: Body| {
        ms += 13;
        let id = format!("e{}", events.len());
        events.push(Event::new(id, Timestamp::from_millis(ms), body));
    };
    let origin = Some(Origin::new("openai", "gpt-5", "openai-responses"));
    for (t, turn) in turns.into_iter().enumerate() {
        next(&mut events, Body::User { content: turn.user });
        if let Some(name) = turn.author {
            events.last_mut().unwrap().author = Some(Author {
                kind: AuthorKind::Human,
                name,
            });
        }
        let mut content = turn.lead;
        for (c, (name, arguments, _, _)) in turn.calls.iter().enumerate() {
            content.push(AssistantPart::ToolCall(ToolCall::new(
                format!("call_{t}_{c}"),
                name.clone(),
                arguments.clone(),
            )));
        }
        if !content.is_empty() {
            next(
                &mut events,
                Body::Assistant {
                    content,
                    origin: origin.clone(),
                },
            );
        }
        for (c, (_, _, output, is_error)) in turn.calls.into_iter().enumerate() {
            next(
                &mut events,
                Body::ToolResult {
                    call_id: format!("call_{t}_{c}"),
                    content: output,
                    is_error,
                },
            );
        }
        if let Some(text) = turn.closing {
            next(
                &mut events,
                Body::assistant(vec![AssistantPart::Text { text }]),
            );
        }
        if compact_after == Some(t) {
            let through = events.last().unwrap().id.clone();
            next(
                &mut events,
                Body::Compaction {
                    summary: format!("summary of {t} turns"),
                    replaces_through: through,
                },
            );
        }
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn write_read_and_append_round_trip(
        turns in prop::collection::vec(turn(), 1..5),
        compact in proptest::option::of(0usize..4),
        cut in 0usize..40,
    ) {
        let whole = transcript(turns, compact);
        let comparison = CodexPlugin::target_manifest().comparison();
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path().join("codex")).unwrap();
        let plugin = CodexPlugin;

        let session = plugin.writer().create(&root, TARGET, &whole, &CreateOptions::default()).unwrap();
        let back = plugin.read_id(&root, TARGET, &session.id).unwrap();
        if let Err(d) = comparison.diff(&whole, &back) {
            prop_assert!(false, "{d}");
        }

        let cut = cut.min(whole.events.len());
        let mut prefix = whole.clone();
        let suffix = prefix.events.split_off(cut);
        // A compaction cannot be split from the event it replaces only if that event is gone;
        // the prefix is a valid transcript by construction (results follow their calls).
        if prefix.validate().is_ok() {
            let session = plugin.writer().create(&root, TARGET, &prefix, &CreateOptions::default()).unwrap();
            plugin.append_id(&root, TARGET, &session.id, &suffix).unwrap();
            let back = plugin.read_id(&root, TARGET, &session.id).unwrap();
            if let Err(d) = comparison.diff(&whole, &back) {
                prop_assert!(false, "cut {cut}: {d}");
            }
        }
    }
}
