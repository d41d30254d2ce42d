use handoff_host::{Body, Event, Feature, Part, PluginError, Timestamp, Transcript};

use crate::corpus;
use crate::sandbox::{changes, is_bookkeeping, snapshot};

use super::{Ctx, Outcome};

/// A transcript with a part the target does not carry is refused, naming the event, and an invalid
/// transcript is refused; either way nothing is left behind.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
    for feature in Feature::ALL {
        if ctx.target.carries(feature) {
            continue;
        }
        let Some(transcript) = example_of(feature) else {
            evidence.push(format!("no example of {feature} to try"));
            continue;
        };
        let (index, event, _) = transcript
            .first_uncarried(&ctx.target.carries)
            .expect("the example uses the feature");
        match refused(ctx, &transcript) {
            Ok(PluginError::NotCarried {
                event_id, index: i, ..
            }) if event_id == event.id && i == index => {
                evidence.push(format!("refused {feature} at event {index} ({event_id})"));
            }
            Ok(other) => failures.push(format!(
                "{feature}: refused, but the error does not name event {index} ({}) as not carried: {other}",
                event.id
            )),
            Err(e) => failures.push(format!("{feature}: {e}")),
        }
    }
    let orphan = Transcript::new(vec![Event::new(
        "orphan",
        Timestamp::from_millis(1_795_999_300_000),
        Body::tool_output("never-called", "result of nothing"),
    )]);
    match refused(ctx, &orphan) {
        Ok(e) => evidence.push(format!("refused an invalid transcript: {e}")),
        Err(e) => failures.push(format!("invalid transcript: {e}")),
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

/// Writes `transcript`, expecting a refusal that leaves the store root as it was.
fn refused(ctx: &Ctx<'_>, transcript: &Transcript) -> Result<PluginError, String> {
    let before = snapshot(ctx.root().path());
    let outcome = ctx.plugin.writer().create(
        ctx.root(),
        ctx.name(),
        transcript,
        &handoff_host::CreateOptions {
            cwd: Some(super::SUITE_CWD.into()),
            locator: None,
        },
    );
    let after = snapshot(ctx.root().path());
    let left = changes(&before, &after, |p| is_bookkeeping(ctx.root(), p));
    match outcome {
        Ok(session) => Err(format!("was written as {} instead of refused", session.id)),
        Err(_) if !left.is_empty() => Err(format!(
            "refused, but left things behind: {}",
            left.join("; ")
        )),
        Err(e) => Ok(e),
    }
}

/// A transcript whose first use of `feature` is known.
fn example_of(feature: Feature) -> Option<Transcript> {
    if feature == Feature::ImageUrl {
        return Some(Transcript::new(vec![Event::new(
            "u1",
            Timestamp::from_millis(1_795_999_300_000),
            Body::User {
                content: vec![
                    Part::text("Look at this:"),
                    Part::ImageUrl {
                        url: "https://example.com/cat.png".into(),
                    },
                ],
            },
        )]));
    }
    corpus::entries()
        .iter()
        .find(|e| e.transcript.features().contains(&feature))
        .map(|e| e.transcript.clone())
}
