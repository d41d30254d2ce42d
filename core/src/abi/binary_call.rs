//! Binary calls over the frozen capability object (the v3 ids).
//!
//! abi_stable lets a library be newer than the interface a host was built with, never older: a
//! field or method added to the root module or to the [`super::Capability`] object would make
//! every newer host refuse every older plugin ("too many fields"). So the object stays exactly
//! `call(RStr) -> RResult<RString, RString>`, and a v3 binary call is a JSON request that carries
//! the address of a [`BinaryCall`]: a `#[repr(C)]` record of plain C types, valid for the
//! duration of the call, holding the request bytes (a [`super::wire::BinaryRequest`]) and a C
//! callback that takes the batches of events a read streams back. The answer is the usual JSON.
//! The record starts with a magic number and version the plugin checks before it reads anything
//! else; its layout is fixed by the capability id, as the request shapes are.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use abi_stable::std_types::{RResult, RStr, RString};
use serde::{Deserialize, Serialize};

use super::CapabilityBox;

/// `b"hoff-bc1"`: what a [`BinaryCall`] starts with (the `1` is the record's version).
pub const BINARY_CALL_MAGIC: u64 = u64::from_le_bytes(*b"hoff-bc1");

/// The host's callback for one batch: `context`, the batch's bytes; 1 to go on, 0 to stop.
pub type BatchCallback = extern "C" fn(context: *mut c_void, batch: *const u8, len: usize) -> u8;

/// What a binary call hands the plugin, by address.
#[repr(C)]
pub struct BinaryCall {
    /// [`BINARY_CALL_MAGIC`].
    pub magic: u64,
    /// The request bytes: a [`super::wire::BinaryRequest`].
    pub request: *const u8,
    /// Their length.
    pub request_len: usize,
    /// Where a read's batches go.
    pub on_batch: BatchCallback,
    /// The callback's first argument.
    pub context: *mut c_void,
}

/// The JSON request of a binary call: `{"method": "binary", "call": <address of a BinaryCall>}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Envelope {
    /// A binary call.
    Binary {
        /// The address of the [`BinaryCall`], valid until the call returns.
        call: u64,
    },
}

/// The host's side of the callback: its sink, and a panic of it held until the plugin returned.
struct HostSink<'f> {
    on_batch: &'f mut dyn FnMut(&[u8]) -> bool,
    panic: Option<Box<dyn Any + Send>>,
}

extern "C" fn host_sink(context: *mut c_void, batch: *const u8, len: usize) -> u8 {
    // SAFETY: `context` is the `HostSink` that `invoke` made for this call, alive until it
    // returns; the plugin calls back only during the call, on the calling thread.
    let sink = unsafe { &mut *context.cast::<HostSink<'_>>() };
    if sink.panic.is_some() {
        return 0;
    }
    // SAFETY: the plugin lends `len` bytes at `batch` for the duration of this callback.
    let batch = unsafe { slice_from(batch, len) };
    // An unwind must never cross the plugin's frames (the process would abort): it is caught here
    // and resumed in the host once the plugin has returned.
    match catch_unwind(AssertUnwindSafe(|| (sink.on_batch)(batch))) {
        Ok(more) => u8::from(more),
        Err(payload) => {
            sink.panic = Some(payload);
            0
        }
    }
}

/// Makes a binary call: `request` is a [`super::wire::BinaryRequest`]; each batch the plugin
/// streams back goes to `on_batch`, which says whether to go on. A panic in `on_batch` (the host's
/// own code) stops the plugin's read and goes on unwinding here once the plugin has returned.
pub fn invoke(
    object: &CapabilityBox,
    request: &[u8],
    on_batch: &mut dyn FnMut(&[u8]) -> bool,
) -> RResult<RString, RString> {
    let mut sink = HostSink {
        on_batch,
        panic: None,
    };
    let call = BinaryCall {
        magic: BINARY_CALL_MAGIC,
        request: request.as_ptr(),
        request_len: request.len(),
        on_batch: host_sink,
        context: (&mut sink as *mut HostSink<'_>).cast(),
    };
    let envelope = serde_json::to_string(&Envelope::Binary {
        call: &call as *const BinaryCall as usize as u64,
    })
    .expect("an envelope always serialises");
    let answer = object.call(RStr::from_str(&envelope));
    if let Some(payload) = sink.panic.take() {
        resume_unwind(payload);
    }
    answer
}

/// The plugin's view of a binary call.
pub struct Received<'a> {
    /// The request bytes.
    pub request: &'a [u8],
    on_batch: BatchCallback,
    context: *mut c_void,
}

impl Received<'_> {
    /// Hands a batch to the host; false once it wants no more.
    pub fn push(&mut self, batch: &[u8]) -> bool {
        (self.on_batch)(self.context, batch.as_ptr(), batch.len()) != 0
    }
}

/// The binary call at `address`, as a plugin receives it in an [`Envelope`].
///
/// # Safety
///
/// `address` must be the one a host's [`invoke`] put in the envelope of the call being answered,
/// and the result must not outlive that call. The magic number is checked, so an envelope from
/// another kind of caller is refused rather than read, as far as its first eight bytes allow.
pub unsafe fn receive<'a>(address: u64) -> Result<Received<'a>, String> {
    let address = usize::try_from(address).map_err(|_| format!("bad address {address}"))?;
    if address == 0 || address % std::mem::align_of::<BinaryCall>() != 0 {
        return Err(format!("bad address {address:#x}"));
    }
    // SAFETY: the caller promises the address is a live `BinaryCall`; its magic comes first.
    let call = unsafe { &*(address as *const BinaryCall) };
    if call.magic != BINARY_CALL_MAGIC {
        return Err(format!(
            "not a binary call of this version (magic {:#x})",
            call.magic
        ));
    }
    Ok(Received {
        // SAFETY: the host lends the request bytes for the duration of the call.
        request: unsafe { slice_from(call.request, call.request_len) },
        on_batch: call.on_batch,
        context: call.context,
    })
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

    /// Both ends in one process: what `invoke` lends is what `receive` sees, and the callback's
    /// answer and a panic in it come back to the host.
    #[test]
    fn a_call_record_round_trips_through_its_address() {
        let request = b"request bytes".to_vec();
        let mut seen = Vec::new();
        let mut on_batch = |batch: &[u8]| {
            seen.push(batch.to_vec());
            seen.len() < 2
        };
        let mut sink = HostSink {
            on_batch: &mut on_batch,
            panic: None,
        };
        let call = BinaryCall {
            magic: BINARY_CALL_MAGIC,
            request: request.as_ptr(),
            request_len: request.len(),
            on_batch: host_sink,
            context: (&mut sink as *mut HostSink<'_>).cast(),
        };
        // SAFETY: `call` lives for the whole block.
        let mut received = unsafe { receive(&call as *const BinaryCall as u64) }.unwrap();
        assert_eq!(received.request, b"request bytes");
        assert!(received.push(b"one"));
        assert!(!received.push(b"two"));
        drop(sink);
        assert_eq!(seen, vec![b"one".to_vec(), b"two".to_vec()]);

        let wrong = BinaryCall { magic: 7, ..call };
        // SAFETY: `wrong` lives for the whole block.
        let err = unsafe { receive(&wrong as *const BinaryCall as u64) }
            .err()
            .unwrap();
        assert!(err.contains("not a binary call"), "{err}");
        // SAFETY: a null address is refused before it is read.
        assert!(unsafe { receive(0) }.is_err());
    }
}
