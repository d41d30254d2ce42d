//! The suite runs its checks at once (each in its own scratch store root), reports them in order,
//! and one after the other when asked.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use handoff_conformance::{check_ids, run, Options, Status};
use handoff_host::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, Resumer, SessionRef, StoreRoot,
    Transcript, Writer,
};
use handoff_reference::ReferencePlugin;

const INNER: ReferencePlugin = ReferencePlugin;

/// The reference plugin, counting how many `create` calls are in flight at once.
#[derive(Default)]
struct Counting {
    in_flight: AtomicUsize,
    most: AtomicUsize,
}

impl Plugin for Counting {
    fn manifest(&self) -> Manifest {
        INNER.manifest()
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        INNER.reader()
    }
    fn resumer(&self) -> &dyn Resumer {
        INNER.resumer()
    }
}

impl Writer for Counting {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        // Long enough for another check's create to start meanwhile, if one runs at all.
        std::thread::sleep(Duration::from_millis(20));
        let created = INNER.create(root, target, transcript, options);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        created
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
        INNER.remove(root, session)
    }
}

#[test]
fn checks_run_at_once_and_are_reported_in_order() {
    let plugin = Counting::default();
    let report = run(&plugin, &Options::default());
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, check_ids(&plugin));
    assert!(
        report.checks.iter().all(|c| c.status == Status::Pass),
        "{}",
        report.table()
    );
    assert!(
        plugin.most.load(Ordering::SeqCst) > 1,
        "the checks ran one after the other"
    );
}

#[test]
fn one_job_runs_the_checks_one_after_the_other() {
    let plugin = Counting::default();
    let report = run(
        &plugin,
        &Options {
            jobs: Some(1),
            ..Options::default()
        },
    );
    assert!(report.checks.iter().all(|c| c.status == Status::Pass));
    assert_eq!(plugin.most.load(Ordering::SeqCst), 1);
}
