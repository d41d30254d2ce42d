//! pi's timestamps: entry times as JavaScript's `toISOString()` writes them
//! (`2026-11-30T00:41:45.653Z`), message times as Unix milliseconds. The codec is the transcript's
//! [`Timestamp`]; what is pi's own is keeping an entry's spelling when a session spelled it
//! otherwise, without a heap string in the common case.

use handoff_sdk::{Timestamp, RFC3339_MILLIS_LEN};

/// An entry time's text.
pub enum IsoText<'a> {
    /// As pi writes it.
    Fixed([u8; RFC3339_MILLIS_LEN]),
    /// As a pi session spelled it.
    Borrowed(&'a str),
    /// Outside years 0 to 9999.
    Owned(String),
}

impl IsoText<'_> {
    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            IsoText::Fixed(bytes) => {
                std::str::from_utf8(bytes).expect("ASCII digits and punctuation")
            }
            IsoText::Borrowed(s) => s,
            IsoText::Owned(s) => s,
        }
    }
}

/// `at` as pi writes an entry time.
pub fn iso_text(at: Timestamp) -> IsoText<'static> {
    match at.rfc3339_bytes() {
        Some(bytes) => IsoText::Fixed(bytes),
        None => IsoText::Owned(at.to_rfc3339()),
    }
}
