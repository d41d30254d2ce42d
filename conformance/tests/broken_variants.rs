//! Each check can fail: broken variants of the reference plugin fail exactly the check aimed at
//! them, and pass every other.

use handoff_conformance::{run, Options, Report, Status};
use handoff_host::{
    AssistantPart, Body, CreateOptions, Event, Manifest, Part, Plugin, PluginError, ReadFrom,
    ReadOutcome, Reader, ResumePlan, Resumer, SessionInfo, SessionRef, StoreRoot, Transcript,
    Writer,
};
use handoff_reference::ReferencePlugin;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Defect {
    /// The writer drops images.
    DropsImages,
    /// The resolver returns the newest session, whatever id it is asked for.
    ResolvesNewest,
    /// remove deletes any session, marked or not.
    RemovesUnmarked,
    /// The reader panics on a line it cannot parse.
    PanicsOnBadInput,
    /// The manifest asks for another plugin API major.
    NeedsApi2,
    /// The writer writes what it cannot carry instead of refusing (it claims no images).
    WritesUncarried,
    /// The listing leaves out sessions larger than 100 kB (as one that reads only a file's head
    /// and skips what it cannot parse there).
    ListsOnlySmallSessions,
    /// The streamed read of a file loses its last event (the whole read is right).
    StreamsAllButTheLast,
}

struct Broken(Defect);

const INNER: ReferencePlugin = ReferencePlugin;

impl Plugin for Broken {
    fn manifest(&self) -> Manifest {
        let mut m = INNER.manifest();
        match self.0 {
            Defect::NeedsApi2 => m.api_requirement = "^2".into(),
            Defect::WritesUncarried => m.targets[0]
                .carries
                .retain(|f| *f != handoff_host::Feature::Image),
            _ => {}
        }
        m
    }
    handoff_capability::parts_are_self!();
}

fn without_images(t: &Transcript) -> Transcript {
    let mut t = t.clone();
    for e in &mut t.events {
        if let Body::User { content } | Body::ToolResult { content, .. } = &mut e.body {
            content.retain(|p| !matches!(p, Part::Image { .. }));
        }
    }
    t
}

impl Writer for Broken {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        match self.0 {
            Defect::DropsImages => INNER.create(root, target, &without_images(transcript), options),
            _ => INNER.create(root, target, transcript, options),
        }
    }
    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        INNER.append(root, session, events)
    }
    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        if self.0 == Defect::RemovesUnmarked {
            return std::fs::remove_file(&session.path)
                .map_err(|e| PluginError::io(&session.path, &e));
        }
        INNER.remove(root, session)
    }
}

fn panic_on_malformed(r: Result<Transcript, PluginError>) -> Result<Transcript, PluginError> {
    match r {
        Err(PluginError::Malformed { message, .. }) => panic!("cannot parse: {message}"),
        other => other,
    }
}

impl Reader for Broken {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(handoff_host::Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if let ReadFrom::Written(..) = from {
            return Ok(ReadOutcome::NotSupported);
        }
        let mut events = self.read(from)?.events;
        if self.0 == Defect::StreamsAllButTheLast && matches!(from, ReadFrom::File(..)) {
            events.pop();
        }
        for event in events {
            if !sink(event) {
                break;
            }
        }
        Ok(ReadOutcome::Read)
    }
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        Ok(self.read(from)?.cwd)
    }
    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        let r = INNER.read(from);
        if self.0 == Defect::PanicsOnBadInput {
            return panic_on_malformed(r);
        }
        r
    }
    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        let mut listed = INNER.list(root, target)?;
        if self.0 == Defect::ListsOnlySmallSessions {
            listed.retain(|s| std::fs::metadata(&s.session.path).is_ok_and(|m| m.len() < 100_000));
        }
        Ok(listed)
    }
}

impl Resumer for Broken {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        match INNER.resolve(root, target, id) {
            // The bug: an id it cannot find falls back to the newest session.
            Err(PluginError::NotFound { .. }) if self.0 == Defect::ResolvesNewest => {
                let newest = INNER.list(root, target)?.into_iter().next();
                newest.map(|s| s.session).ok_or(PluginError::NotFound {
                    target: target.into(),
                    id: id.into(),
                    searched: root.path().to_owned(),
                })
            }
            found => found,
        }
    }
    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        // The newest-resolving defect plans whatever its resolve picks, not the session handed.
        let session = self.resolve(root, &session.target, &session.id)?;
        INNER.plan(root, &session, prompt)
    }
}

fn failed_checks(report: &Report) -> Vec<&str> {
    report
        .checks
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| c.id.as_str())
        .collect()
}

fn assert_fails_exactly(defect: Defect, check: &str, evidence: &str) {
    assert_fails_in(defect, &[check], check, evidence);
}

/// `checks` fail and no other; `check`'s evidence mentions `evidence`.
fn assert_fails_in(defect: Defect, checks: &[&str], check: &str, evidence: &str) {
    let report = run(&Broken(defect), &Options::default());
    assert_eq!(failed_checks(&report), checks, "{}", report.table());
    let failed = report.checks.iter().find(|c| c.id == check).unwrap();
    assert!(
        failed.evidence.iter().any(|e| e.contains(evidence)),
        "evidence of {check} does not mention {evidence:?}: {:#?}",
        failed.evidence
    );
}

#[test]
fn a_writer_that_drops_images_fails_round_trip() {
    // Its streamed create drops them too (the default streams into the same create).
    assert_fails_in(
        Defect::DropsImages,
        &["round_trip/reference", "streamed/reference"],
        "round_trip/reference",
        "images: read back differs: event 0",
    );
}

#[test]
fn a_streamed_read_that_loses_an_event_fails_streamed() {
    assert_fails_exactly(
        Defect::StreamsAllButTheLast,
        "streamed/reference",
        "read_each of the file yields",
    );
}

#[test]
fn a_listing_that_leaves_out_a_session_fails_round_trip() {
    assert_fails_exactly(
        Defect::ListsOnlySmallSessions,
        "round_trip/reference",
        "large-text: list does not show",
    );
}

#[test]
fn a_resolver_that_returns_the_newest_session_fails_strict_resume() {
    // Every later call starts from resolve, so the same bug also "finds" a removed session.
    assert_fails_in(
        Defect::ResolvesNewest,
        &["strict_resume/reference", "ownership/reference"],
        "strict_resume/reference",
        "resolve of a missing id",
    );
}

#[test]
fn a_remove_that_deletes_unmarked_files_fails_ownership() {
    assert_fails_exactly(
        Defect::RemovesUnmarked,
        "ownership/reference",
        "did not create",
    );
}

#[test]
fn a_reader_that_panics_on_bad_input_fails_bad_input() {
    assert_fails_exactly(
        Defect::PanicsOnBadInput,
        "bad_input/reference",
        "the plugin panicked",
    );
}

#[test]
fn a_manifest_for_another_api_major_fails_manifest() {
    assert_fails_exactly(Defect::NeedsApi2, "manifest", "needs plugin API ^2");
}

#[test]
fn a_writer_that_writes_what_it_does_not_carry_fails_fidelity() {
    assert_fails_exactly(
        Defect::WritesUncarried,
        "fidelity/reference",
        "instead of refused",
    );
}

#[test]
fn the_report_serialises_with_every_check() {
    let report = run(&ReferencePlugin, &Options::default());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["schema"], "handoff.conformance-report/1");
    assert_eq!(json["checks"].as_array().unwrap().len(), 8);
    assert!(json["checks"][1]["duration_ms"].as_f64().unwrap() > 0.0);
    let _unused: &dyn Fn(&AssistantPart) = &|_| {};
}

#[test]
fn only_selects_checks_by_kind_or_id() {
    let options = Options {
        only: vec!["append".into(), "manifest".into()],
        ..Options::default()
    };
    let report = run(&ReferencePlugin, &options);
    let ids: Vec<_> = report.checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["manifest", "append/reference"]);
}
