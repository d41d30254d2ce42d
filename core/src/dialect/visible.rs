//! The events a model sees: the last compaction governs. Its summary comes first, as a user
//! turn, then every event after the one it replaces through (the compaction itself excepted); an
//! earlier compaction still in view shows its summary in its place.

use super::RenderError;
use crate::transcript::{Body, Transcript};

/// The visible events in order: `(event index, Some(summary))` for a compaction shown as its
/// summary, `(event index, None)` for any other event.
pub fn events(transcript: &Transcript) -> Vec<(usize, Option<&str>)> {
    checked(transcript).unwrap_or_else(|_| {
        // A compaction that replaces nothing known: show everything, summaries in place.
        (0..transcript.events.len())
            .map(|i| (i, summary_of(transcript, i)))
            .collect()
    })
}

/// Like [`events`], but a compaction whose `replaces_through` is not an earlier event is an error.
pub fn checked(transcript: &Transcript) -> Result<Vec<(usize, Option<&str>)>, RenderError> {
    let events = &transcript.events;
    let governing = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Compaction { .. }));
    let mut out = Vec::with_capacity(events.len() + 1);
    let mut start = 0;
    if let Some(c) = governing {
        let Body::Compaction {
            summary,
            replaces_through,
        } = &events[c].body
        else {
            unreachable!("found as a compaction")
        };
        let through = events[..c]
            .iter()
            .position(|e| &e.id == replaces_through)
            .ok_or_else(|| {
                RenderError::at(
                    transcript,
                    c,
                    "body.replaces_through",
                    format!("{replaces_through:?} is not an earlier event"),
                )
            })?;
        out.push((c, Some(summary.as_str())));
        start = through + 1;
    }
    for index in start..events.len() {
        if Some(index) != governing {
            out.push((index, summary_of(transcript, index)));
        }
    }
    Ok(out)
}

fn summary_of(transcript: &Transcript, index: usize) -> Option<&str> {
    match &transcript.events[index].body {
        Body::Compaction { summary, .. } => Some(summary),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Event, Part, Timestamp};

    fn user(id: &str) -> Event {
        Event::new(
            id,
            Timestamp::from_millis(0),
            Body::User {
                content: vec![Part::text(id)],
            },
        )
    }

    fn compaction(id: &str, through: &str) -> Event {
        Event::new(
            id,
            Timestamp::from_millis(0),
            Body::Compaction {
                summary: format!("S{id}"),
                replaces_through: through.into(),
            },
        )
    }

    #[test]
    fn the_last_compaction_governs() {
        let t = Transcript::new(vec![
            user("a"),
            compaction("c1", "a"),
            user("b"),
            compaction("c2", "a"),
            user("d"),
        ]);
        assert_eq!(
            checked(&t).unwrap(),
            [(3, Some("Sc2")), (1, Some("Sc1")), (2, None), (4, None)]
        );
    }

    #[test]
    fn a_dangling_compaction_is_an_error_naming_it() {
        let t = Transcript::new(vec![user("a"), compaction("c", "zz")]);
        let e = checked(&t).unwrap_err();
        assert_eq!((e.index, e.field.as_str()), (1, "body.replaces_through"));
        assert_eq!(events(&t).len(), 2);
    }
}
