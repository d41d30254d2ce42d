//! Binary calls over the frozen capability object (the v3 ids).
//!
//! abi_stable lets a library be newer than the interface a host was built with, never older: a
//! field or method added to the root module or to the [`super::Capability`] object would make
//! every newer host refuse every older plugin ("too many fields"). So the object stays exactly
//! `call(RStr) -> RResult<RString, RString>`, and a v3 binary call is a JSON request, an
//! [`Envelope`], that carries the v3 request and the address of a [`BinaryCall`]: a `#[repr(C)]`
//! record of plain C types, valid for the duration of the call, with two callbacks into the host.
//! A reader hands the host the batches of events it reads ([`BinaryCall::on_batch`]); a writer
//! pulls the events it is to write, a batch at a time ([`BinaryCall::pull`]). Batches are in the
//! binary form of [`super::codec`]. The answer is the usual JSON. The record starts with a magic
//! number and version the plugin checks before it reads anything else; its layout is fixed by the
//! capability id, as the request shapes are.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use abi_stable::std_types::{RResult, RStr, RString};
use serde::{Deserialize, Serialize};

use super::CapabilityBox;
use handoff_capability::PluginError;

/// `b"hoff-bc1"`: what a [`BinaryCall`] starts with (the `1` is the record's version).
pub const BINARY_CALL_MAGIC: u64 = u64::from_le_bytes(*b"hoff-bc1");

/// The host's callback for one batch a reader streams: `context`, the batch's bytes; 1 to go on,
/// 0 to stop.
pub type BatchCallback = extern "C" fn(context: *mut c_void, batch: *const u8, len: usize) -> u8;

/// The host's callback that lends a writer the next batch of events: 1 and the batch's bytes
/// (valid until the next pull or the end of the call), 0 when there are no more, or 2 when the
/// host's events failed, with the bytes of the [`handoff_capability::PluginError`] as JSON (the writer ends
/// with that error, removing what it began). A plugin built before 2 existed reads those bytes
/// as a batch, which does not decode: its write fails too.
pub type PullCallback =
    extern "C" fn(context: *mut c_void, batch: *mut *const u8, len: *mut usize) -> u8;

/// What a binary call hands the plugin, by address.
#[repr(C)]
pub struct BinaryCall {
    /// [`BINARY_CALL_MAGIC`].
    pub magic: u64,
    /// Where a read's batches go.
    pub on_batch: BatchCallback,
    /// Where a write's batches come from.
    pub pull: PullCallback,
    /// The callbacks' first argument.
    pub context: *mut c_void,
}

/// The JSON request of a binary call: the v3 request, and the address of the [`BinaryCall`]
/// (valid until the call returns). A v3 capability tells it from v2's requests, which it also
/// answers, by the `binary_call` field.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope<R> {
    /// The address of the [`BinaryCall`].
    pub binary_call: u64,
    /// The request.
    pub request: R,
}

/// [`PullCallback`]'s answers.
const PULL_END: u8 = 0;
const PULL_BATCH: u8 = 1;
const PULL_FAILED: u8 = 2;

/// What the host lends a writer that pulls.
#[derive(Debug, PartialEq, Eq)]
pub enum Pull<'a> {
    /// The next batch of events.
    Batch(&'a [u8]),
    /// No more events.
    End,
    /// The host's events failed: the [`handoff_capability::PluginError`] as JSON.
    Failed(&'a [u8]),
}

/// What a writer pulls when the host's own code panicked while making the batch: the panic goes
/// on in the host once the plugin has returned, and the writer must not take the end of its
/// events for a whole transcript.
const HOST_PANICKED: &[u8] =
    br#"{"kind":"other","detail":"the host panicked while lending events"}"#;

/// The host's end of a binary call.
pub trait HostEnd {
    /// A batch the plugin read; false to stop it.
    fn on_batch(&mut self, batch: &[u8]) -> bool;
    /// The next batch for the plugin to write.
    fn next_batch(&mut self) -> Pull<'_>;
}

/// The host's end as the callbacks see it, with a panic of the host's code held until the plugin
/// has returned.
struct Context<'h> {
    host: &'h mut dyn HostEnd,
    panic: Option<Box<dyn Any + Send>>,
}

impl Context<'_> {
    /// Runs `f` on the host's end unless it already panicked; an unwind must never cross the
    /// plugin's frames (the process would abort), so it is caught here and resumed in the host
    /// once the plugin has returned.
    fn run<T>(&mut self, stopped: T, f: impl FnOnce(&mut dyn HostEnd) -> T) -> T {
        if self.panic.is_some() {
            return stopped;
        }
        let host = &mut *self.host;
        match catch_unwind(AssertUnwindSafe(|| f(host))) {
            Ok(value) => value,
            Err(payload) => {
                self.panic = Some(payload);
                stopped
            }
        }
    }
}

extern "C" fn host_on_batch(context: *mut c_void, batch: *const u8, len: usize) -> u8 {
    // SAFETY: `context` is the `Context` that `invoke` made for this call, alive until it
    // returns; the plugin calls back only during the call, on the calling thread.
    let context = unsafe { &mut *context.cast::<Context<'_>>() };
    // SAFETY: the plugin lends `len` bytes at `batch` for the duration of this callback.
    let batch = unsafe { slice_from(batch, len) };
    u8::from(context.run(false, |host| host.on_batch(batch)))
}

extern "C" fn host_pull(context: *mut c_void, batch: *mut *const u8, len: *mut usize) -> u8 {
    // SAFETY: as in `host_on_batch`.
    let context = unsafe { &mut *context.cast::<Context<'_>>() };
    let raw = |bytes: &[u8]| (bytes.as_ptr(), bytes.len());
    let (answer, (ptr, n)) = context.run((PULL_FAILED, raw(HOST_PANICKED)), |host| {
        match host.next_batch() {
            Pull::Batch(bytes) => (PULL_BATCH, raw(bytes)),
            Pull::End => (PULL_END, raw(&[])),
            Pull::Failed(bytes) => (PULL_FAILED, raw(bytes)),
        }
    });
    if answer == PULL_END || batch.is_null() || len.is_null() {
        return PULL_END;
    }
    // SAFETY: the plugin passes two writable out-parameters; the bytes stay lent until its
    // next pull or the call's end.
    unsafe {
        *batch = ptr;
        *len = n;
    }
    answer
}

/// Makes a binary call of `request` on `object`, with `host` as the host's end. A panic of the
/// host's end stops the plugin and goes on unwinding here once the plugin has returned.
pub fn invoke(
    object: &CapabilityBox,
    request: &impl Serialize,
    host: &mut dyn HostEnd,
) -> Result<RResult<RString, RString>, serde_json::Error> {
    let mut context = Context { host, panic: None };
    let call = BinaryCall {
        magic: BINARY_CALL_MAGIC,
        on_batch: host_on_batch,
        pull: host_pull,
        context: (&mut context as *mut Context<'_>).cast(),
    };
    let envelope = serde_json::to_string(&Envelope {
        binary_call: &call as *const BinaryCall as usize as u64,
        request,
    })?;
    let answer = object.call(RStr::from_str(&envelope));
    if let Some(payload) = context.panic.take() {
        resume_unwind(payload);
    }
    Ok(answer)
}

/// The plugin's view of a binary call. A clone is another handle on the same call (a v5 create
/// reports its file through one while its events are pulled through the other), valid as long.
#[derive(Clone)]
pub struct Received {
    call: *const BinaryCall,
}

impl Received {
    /// Hands a batch to the host; false once it wants no more.
    pub fn push(&mut self, batch: &[u8]) -> bool {
        // SAFETY: `receive` checked the record, which lives until the call returns.
        let call = unsafe { &*self.call };
        (call.on_batch)(call.context, batch.as_ptr(), batch.len()) != 0
    }

    /// The next batch the host lends, valid until the next pull; none when there are no more;
    /// the host's error when its events failed.
    pub fn pull(&mut self) -> Result<Option<&[u8]>, PluginError> {
        // SAFETY: as in `push`.
        let call = unsafe { &*self.call };
        let (mut ptr, mut len) = (std::ptr::null(), 0usize);
        let answer = (call.pull)(call.context, &mut ptr, &mut len);
        // SAFETY: the host lends `len` bytes at `ptr` until the next pull or the call's end;
        // the borrow of `self` ends before either.
        let bytes = unsafe { slice_from(ptr, len) };
        match answer {
            PULL_END => Ok(None),
            PULL_FAILED => Err(serde_json::from_slice(bytes).unwrap_or_else(|e| {
                PluginError::Other(format!(
                    "the host's events failed, with an unreadable error ({e}): {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                ))
            })),
            _ => Ok(Some(bytes)),
        }
    }
}

/// The binary call at `address`, as a plugin receives it in an [`Envelope`].
///
/// # Safety
///
/// `address` must be the one a host's [`invoke`] put in the envelope of the call being answered,
/// and the result must not outlive that call. The magic number is checked, so an envelope from
/// another kind of caller is refused rather than followed, as far as its first eight bytes allow.
pub unsafe fn receive(address: u64) -> Result<Received, String> {
    let address = usize::try_from(address).map_err(|_| format!("bad address {address}"))?;
    if address == 0 || address % std::mem::align_of::<BinaryCall>() != 0 {
        return Err(format!("bad address {address:#x}"));
    }
    let call = address as *const BinaryCall;
    // SAFETY: the caller promises the address is a live `BinaryCall`; its magic comes first.
    let magic = unsafe { (*call).magic };
    if magic != BINARY_CALL_MAGIC {
        return Err(format!(
            "not a binary call of this version (magic {magic:#x})"
        ));
    }
    Ok(Received { call })
}

/// A slice from a pointer and a length (an empty slice for a null pointer).
///
/// # Safety
///
/// `ptr` must point to `len` readable bytes that live for `'a`.
unsafe fn slice_from<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: as the caller promises.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Recorder {
        seen: Vec<Vec<u8>>,
        to_lend: Vec<Vec<u8>>,
        lent: Vec<u8>,
        panic_on: Option<&'static [u8]>,
    }

    impl HostEnd for Recorder {
        fn on_batch(&mut self, batch: &[u8]) -> bool {
            if Some(batch) == self.panic_on {
                panic!("the host's end panicked");
            }
            self.seen.push(batch.to_vec());
            self.seen.len() < 2
        }
        fn next_batch(&mut self) -> Pull<'_> {
            if self.to_lend.is_empty() {
                return Pull::End;
            }
            self.lent = self.to_lend.remove(0);
            if self.lent == b"panic" {
                panic!("the host's lender panicked");
            }
            if self.lent.starts_with(b"{") {
                return Pull::Failed(&self.lent);
            }
            Pull::Batch(&self.lent)
        }
    }

    fn call_for(context: &mut Context<'_>) -> BinaryCall {
        BinaryCall {
            magic: BINARY_CALL_MAGIC,
            on_batch: host_on_batch,
            pull: host_pull,
            context: (context as *mut Context<'_>).cast(),
        }
    }

    /// Both ends in one process: the callbacks reach the host's end, its answers come back, and
    /// a panic in it is held (and stops the plugin) instead of crossing the plugin's frames.
    #[test]
    fn a_call_record_round_trips_through_its_address() {
        let mut recorder = Recorder {
            seen: vec![],
            to_lend: vec![
                b"a".to_vec(),
                b"bc".to_vec(),
                br#"{"kind":"locked","detail":{"path":"/s"}}"#.to_vec(),
            ],
            lent: vec![],
            panic_on: Some(b"boom"),
        };
        let mut context = Context {
            host: &mut recorder,
            panic: None,
        };
        let call = call_for(&mut context);
        // SAFETY: `call` and `context` live for the whole test.
        let mut received = unsafe { receive(&call as *const BinaryCall as u64) }.unwrap();
        assert!(received.push(b"one"));
        assert!(!received.push(b"two"));
        assert_eq!(received.pull(), Ok(Some(&b"a"[..])));
        assert_eq!(received.pull(), Ok(Some(&b"bc"[..])));
        assert_eq!(
            received.pull(),
            Err(PluginError::Locked { path: "/s".into() })
        );
        assert_eq!(received.pull(), Ok(None));
        assert!(!received.push(b"boom"));
        // Once the host's end panicked, nothing more reaches it.
        assert!(!received.push(b"three"));
        assert!(context.panic.is_some());
        drop(context);
        assert_eq!(recorder.seen, vec![b"one".to_vec(), b"two".to_vec()]);

        let wrong = BinaryCall { magic: 7, ..call };
        // SAFETY: `wrong` lives for the whole test.
        let err = unsafe { receive(&wrong as *const BinaryCall as u64) }
            .err()
            .unwrap();
        assert!(err.contains("not a binary call"), "{err}");
        // SAFETY: a null address is refused before it is read.
        assert!(unsafe { receive(0) }.is_err());
    }

    /// A panic while the host makes a batch is held like any other, and the writer that pulled
    /// is told the events failed: it must not take the end of its events for a whole transcript.
    #[test]
    fn a_host_panic_while_lending_fails_the_pull() {
        let mut recorder = Recorder {
            seen: vec![],
            to_lend: vec![b"a".to_vec(), b"panic".to_vec(), b"b".to_vec()],
            lent: vec![],
            panic_on: None,
        };
        let mut context = Context {
            host: &mut recorder,
            panic: None,
        };
        let call = call_for(&mut context);
        // SAFETY: `call` and `context` live for the whole test.
        let mut received = unsafe { receive(&call as *const BinaryCall as u64) }.unwrap();
        assert_eq!(received.pull(), Ok(Some(&b"a"[..])));
        let failed = PluginError::Other("the host panicked while lending events".into());
        assert_eq!(received.pull(), Err(failed.clone()));
        assert_eq!(received.pull(), Err(failed));
        assert!(context.panic.is_some());
    }
}
