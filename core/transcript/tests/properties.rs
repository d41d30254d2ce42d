//! Property tests: the JSON form round-trips, equality is reflexive and symmetric, and a change to
//! one field of one event is always found by the diff, at that event.

use handoff_transcript::{
    AssistantPart, Author, AuthorKind, Body, Comparison, Event, Origin, Part, Signature, Thinking,
    Timestamp, ToolCall, Transcript,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        "[a-z ]{0,10}",
        Just("👩‍💻 שלום e\u{301}".to_owned())
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        "[a-z]{0,8}".prop_map(Value::String),
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
        text().prop_map(|text| Part::Text { text }),
        prop::collection::vec(any::<u8>(), 0..16).prop_map(|data| Part::Image {
            media_type: "image/png".into(),
            data
        }),
    ]
}

fn assistant_part(n: usize) -> impl Strategy<Value = AssistantPart> {
    prop_oneof![
        text().prop_map(|text| AssistantPart::Text { text }),
        (text(), proptest::option::of("[A-Za-z0-9]{1,12}")).prop_map(|(text, sig)| {
            AssistantPart::Thinking(Thinking {
                text,
                signature: sig.map(|value| Signature {
                    provider: "anthropic".into(),
                    model: None,
                    value,
                    redacted: false,
                }),
            })
        }),
        ("[a-z_]{1,8}", json_value()).prop_map(move |(name, arguments)| {
            AssistantPart::ToolCall(ToolCall::new(format!("call_{n}"), name, arguments))
        }),
    ]
}

fn body(n: usize) -> impl Strategy<Value = Body> {
    prop_oneof![
        prop::collection::vec(part(), 0..3).prop_map(|content| Body::User { content }),
        prop::collection::vec(assistant_part(n), 0..3).prop_map(|content| Body::Assistant {
            content,
            origin: Some(Origin {
                provider: "anthropic".into(),
                model: Some("m".into()),
                api: None
            })
        }),
    ]
}

fn transcript() -> impl Strategy<Value = Transcript> {
    (1usize..6)
        .prop_flat_map(|len| {
            (0..len)
                .map(|i| {
                    (
                        body(i),
                        proptest::option::of("[A-Z][a-z]{1,5}"),
                        0i64..4_000_000_000_000,
                    )
                        .prop_map(move |(body, author, millis)| {
                            let mut e =
                                Event::new(format!("e{i}"), Timestamp::from_millis(millis), body);
                            e.author = author.map(|name| Author {
                                kind: AuthorKind::Human,
                                name,
                            });
                            e
                        })
                })
                .collect::<Vec<_>>()
        })
        .prop_map(Transcript::new)
}

/// Changes exactly one compared field of event `index`.
fn mutate(t: &mut Transcript, index: usize, how: usize) {
    let event = &mut t.events[index];
    match (&mut event.body, how % 3) {
        (_, 0) => event.timestamp = Timestamp::from_millis(event.timestamp.millis() + 1),
        (_, 1) => {
            event.author = match &event.author {
                Some(_) => None,
                None => Some(Author {
                    kind: AuthorKind::Agent,
                    name: "Z".into(),
                }),
            }
        }
        (Body::User { content }, _) => content.push(Part::text("x")),
        (Body::Assistant { content, .. }, _) => content.push(AssistantPart::text("x")),
        (body, _) => *body = Body::user_text("replaced"),
    }
}

proptest! {
    #[test]
    fn json_form_round_trips(t in transcript()) {
        let text = serde_json::to_string(&t).unwrap();
        let back = Transcript::from_json(&text).unwrap();
        prop_assert_eq!(&back, &t);
        Comparison::exact().diff(&t, &back).unwrap();
    }

    #[test]
    fn equality_is_reflexive_and_symmetric(a in transcript(), b in transcript()) {
        prop_assert!(Comparison::exact().equal(&a, &a));
        prop_assert_eq!(Comparison::exact().equal(&a, &b), Comparison::exact().equal(&b, &a));
    }

    #[test]
    fn a_one_field_change_is_found_at_that_event(t in transcript(), pick in any::<prop::sample::Index>(), how in 0usize..3) {
        let index = pick.index(t.events.len());
        let mut changed = t.clone();
        mutate(&mut changed, index, how);
        let d = Comparison::exact().diff(&t, &changed).unwrap_err();
        prop_assert_eq!(d.index, index, "{}", d);
    }
}
