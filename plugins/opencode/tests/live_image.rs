//! A user image (by bytes), resumed by the real OpenCode 1.18.33: the corpus's image entry also
//! holds what OpenCode does not carry (images by URL, images in tool results), so this one is
//! its own.

use handoff_conformance::corpus::Entry;
use handoff_live::harness::judge_live;
use handoff_live::{run_live, LiveOptions};
use handoff_opencode::{OpencodePlugin, TARGET};
use handoff_sdk::{AssistantPart, Body, Event, Part, Timestamp, Transcript};

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[test]
fn a_user_image_is_resumed_by_the_real_opencode() {
    let t = 1_795_999_300_000;
    let transcript = Transcript::new(vec![
        Event::new(
            "u1",
            Timestamp::from_millis(t),
            Body::User {
                content: vec![
                    Part::text("What is in this picture?"),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: PNG.to_vec(),
                    },
                ],
            },
        ),
        Event::new(
            "a1",
            Timestamp::from_millis(t + 1000),
            Body::assistant(vec![AssistantPart::text("A single pixel.")]),
        ),
    ]);
    let entry = Entry {
        name: "user-image",
        transcript,
    };
    let results = run_live(&OpencodePlugin, TARGET, &[entry], &LiveOptions::default());
    for r in &results {
        eprintln!("{} {:?}", r.id, r.status);
        for line in &r.evidence {
            eprintln!("    {line}");
        }
    }
    judge_live(&results);
}
