//! The events a model sees: the last compaction governs. The events up to the one it replaces
//! through are out of view; every later event is seen in order, and each compaction in view
//! (the governing one too) shows its summary as a user turn at its own place. So events between
//! `replaces_through` and the compaction come before its summary (Codex sends the user messages
//! it keeps, then the summary); a reader whose CLI shows the summary first puts the compaction
//! right after `replaces_through`.

use super::RenderError;
use handoff_transcript::{Body, Transcript};

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
    let mut start = 0;
    if let Some(c) = governing {
        let Body::Compaction {
            replaces_through, ..
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
        start = through + 1;
    }
    let out = (start..events.len())
        .map(|index| (index, summary_of(transcript, index)))
        .collect();
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
    use handoff_transcript::{Event, Timestamp};

    fn user(id: &str) -> Event {
        Event::new(id, Timestamp::from_millis(0), Body::user_text(id))
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
            [(1, Some("Sc1")), (2, None), (3, Some("Sc2")), (4, None)]
        );
    }

    /// The events a compaction keeps (after `replaces_through`, before it) come before its
    /// summary, as Codex sends its `replacement_history`; a compaction right after what it
    /// replaces shows its summary first, as Claude Code and pi send it.
    #[test]
    fn the_summary_is_seen_at_the_compactions_place() {
        let kept_first = Transcript::new(vec![
            user("a"),
            user("kept"),
            compaction("c", "a"),
            user("d"),
        ]);
        assert_eq!(
            checked(&kept_first).unwrap(),
            [(1, None), (2, Some("Sc")), (3, None)]
        );
        let summary_first = Transcript::new(vec![
            user("a"),
            compaction("c", "a"),
            user("kept"),
            user("d"),
        ]);
        assert_eq!(
            checked(&summary_first).unwrap(),
            [(1, Some("Sc")), (2, None), (3, None)]
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
