//! Why a session written as its events arrive ([`crate::Writer::create_streamed`]) stopped before
//! its end, and how that travels through an atomic create whose closure can only fail with an
//! `io::Error`.

use std::io::{self, Write};
use std::path::Path;

use crate::{CreateOptions, Event, EventStream, PluginError};

/// Why a streamed write stopped before its end.
pub enum Stop {
    /// An event cannot be written (the error names it), or the stream failed: the create fails
    /// with this error, unchanged.
    Refused(PluginError),
    /// An event needs what was already written laid out otherwise (a compaction that keeps
    /// earlier events): start over with the whole transcript.
    StartOver,
    /// Writing failed.
    Io(io::Error),
}

impl Stop {
    /// A streamed create's answer to this stop: [`Stop::StartOver`] runs `start_over` (the
    /// create of the whole transcript, once what was begun is gone), a refusal is the create's
    /// error unchanged, and an I/O error is named by the file that was being written, `path`.
    pub fn answer<T>(
        self,
        path: &Path,
        start_over: impl FnOnce() -> Result<T, PluginError>,
    ) -> Result<T, PluginError> {
        match self {
            Stop::StartOver => start_over(),
            Stop::Refused(e) => Err(e),
            Stop::Io(e) => Err(PluginError::io(path, &e)),
        }
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

/// Runs `write` as the body handed to an atomic create (`create` calls it with the file's
/// writer): a stop fails that body, so the create removes what was begun, and comes back as is.
/// `Ok(Ok(()))` is a finished create, `Ok(Err(stop))` a stop, `Err` the create's own failure.
pub fn within<E>(
    create: impl FnOnce(&mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> Result<(), E>,
    write: impl FnOnce(&mut dyn Write) -> Result<(), Stop>,
) -> Result<Result<(), Stop>, E> {
    let mut write = Some(write);
    let mut stopped = None;
    let created = create(&mut |out| match write.take().map(|w| w(out)) {
        Some(Ok(())) => Ok(()),
        Some(Err(Stop::Io(e))) => Err(e),
        Some(Err(stop)) => {
            stopped = Some(stop);
            Err(io::Error::other("the streamed write stopped"))
        }
        None => Err(io::Error::other("a create ran its body twice")),
    });
    match (created, stopped) {
        (_, Some(stop)) => Ok(Err(stop)),
        (Ok(()), None) => Ok(Ok(())),
        (Err(e), None) => Err(e),
    }
}

/// Where a streamed write begins: the cwd the host gave and the first event. `None` when the
/// write takes the whole transcript instead: no cwd was given (it would come from the
/// transcript, which only the whole knows) or there is no event at all.
pub fn begin<'o>(
    events: &mut dyn EventStream,
    options: &'o CreateOptions,
) -> Result<Option<(&'o str, Event)>, PluginError> {
    let Some(cwd) = options.cwd.as_deref() else {
        return Ok(None);
    };
    Ok(events.next_event()?.map(|first| (cwd, first)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(body: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> Result<(), String> {
        let mut out = Vec::new();
        body(&mut out).map_err(|e| e.to_string())
    }

    #[test]
    fn a_stop_comes_back_as_is_and_io_errors_stay_the_creates() {
        assert!(matches!(within(create, |_| Ok(())), Ok(Ok(()))));
        assert!(matches!(
            within(create, |_| Err(Stop::StartOver)),
            Ok(Err(Stop::StartOver))
        ));
        let refused = within(create, |_| {
            Err(Stop::Refused(PluginError::Other("event 3".into())))
        });
        assert!(matches!(refused, Ok(Err(Stop::Refused(PluginError::Other(m)))) if m == "event 3"));
        let io = within(create, |_| Err(io::Error::other("disk full").into()));
        assert_eq!(io.err().as_deref(), Some("disk full"));
    }

    #[test]
    fn a_stop_is_answered_by_starting_over_or_by_its_error() {
        let path = Path::new("/store/s.jsonl");
        let whole = || Ok::<_, PluginError>("the whole transcript's session");
        assert_eq!(
            Stop::StartOver.answer(path, whole).unwrap(),
            "the whole transcript's session"
        );
        let refused = Stop::Refused(PluginError::Other("event 3".into())).answer(path, whole);
        assert!(matches!(refused, Err(PluginError::Other(m)) if m == "event 3"));
        let io = Stop::Io(io::Error::other("disk full")).answer(path, whole);
        assert!(
            matches!(&io, Err(PluginError::Io { path: at, message }) if at == path && message == "disk full"),
            "{io:?}"
        );
    }
}
