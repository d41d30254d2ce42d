//! How far a continuation is, for a person watching a long one: the events handed to the
//! writer and the bytes it wrote so far. A caller that shows progress (the CLI's bar, on a
//! terminal only) runs the continuation inside [`with_progress`]; nothing is reported otherwise,
//! and the engine's signature stays as it is.
//!
//! Both counts are reported on the thread that runs the continuation (the writer takes the
//! stream there, and a watched file's writes are reported there), so the hook is that thread's.

use std::cell::RefCell;

/// Where a continuation stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Events handed to the target's writer so far.
    pub events: u64,
    /// Bytes of the new session written so far.
    pub written_bytes: u64,
}

type Hook = Box<dyn FnMut(&Progress)>;

thread_local! {
    static HOOK: RefCell<Option<(Hook, Progress)>> = const { RefCell::new(None) };
}

/// Events between two reports: a report per event would cost more than the bar shows.
const EVENTS_EVERY: u64 = 256;
/// Bytes between two reports of the writer's progress.
const BYTES_EVERY: u64 = 1 << 20;

/// Runs `f` (a continuation) with `hook` called as it progresses, on this thread.
pub fn with_progress<R>(hook: impl FnMut(&Progress) + 'static, f: impl FnOnce() -> R) -> R {
    struct Unset;
    impl Drop for Unset {
        fn drop(&mut self) {
            HOOK.with(|h| *h.borrow_mut() = None);
        }
    }
    HOOK.with(|h| *h.borrow_mut() = Some((Box::new(hook), Progress::default())));
    let _unset = Unset;
    f()
}

/// `events` events were handed to the writer.
pub(super) fn events(events: u64) {
    if events.is_multiple_of(EVENTS_EVERY) {
        report(|p| {
            p.events = events;
            true
        });
    }
}

/// The new session is `len` bytes long so far.
pub(super) fn written(len: u64) {
    report(|p| {
        if len / BYTES_EVERY != p.written_bytes / BYTES_EVERY {
            p.written_bytes = len;
            true
        } else {
            false
        }
    });
}

fn report(update: impl FnOnce(&mut Progress) -> bool) {
    HOOK.with(|h| {
        // A hook that reports again from inside itself is not called twice.
        let Ok(mut hook) = h.try_borrow_mut() else {
            return;
        };
        if let Some((hook, progress)) = hook.as_mut() {
            if update(progress) {
                hook(progress);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    #[test]
    fn a_hook_sees_events_and_bytes_now_and_then_and_only_inside() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let into = Rc::clone(&seen);
        let answer = with_progress(
            move |p| into.borrow_mut().push(*p),
            || {
                (1..=600).for_each(events);
                written(10);
                written(3 << 20);
                written((3 << 20) + 5);
                42
            },
        );
        assert_eq!(answer, 42);
        let expected = [
            Progress {
                events: 256,
                written_bytes: 0,
            },
            Progress {
                events: 512,
                written_bytes: 0,
            },
            Progress {
                events: 512,
                written_bytes: 3 << 20,
            },
        ];
        assert_eq!(*seen.borrow(), expected);
        // Outside, nothing is reported.
        events(1024);
        written(9 << 20);
        assert_eq!(seen.borrow().len(), expected.len());
    }
}
