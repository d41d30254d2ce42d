//! An image's base64 (the standard alphabet, padded), encoded and decoded with SIMD where the
//! CPU has it (`base64-simd`): a continuation of a session with images decodes each one from
//! the source, encodes it into the target and decodes it again in the verify, and the `base64`
//! crate's scalar loops were a tenth of such a continuation's CPU.
//!
//! The `base64` crate stays the judge of what is base64: a text the fast decoder refuses, or
//! whose last symbols are not the canonical spelling of its bytes, is decoded again by it, so
//! every text is accepted or refused (with its error) exactly as before.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// `bytes` in base64, appended to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    base64_simd::STANDARD.encode_append(bytes, out);
}

/// `bytes` in base64, appended to `out` (a JSON line being written, say).
pub fn encode_into_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    base64_simd::STANDARD.encode_append(bytes, out);
}

/// `bytes` in base64.
pub fn encode(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

/// The bytes of base64 `text`; the `base64` crate's error where it refuses it.
pub fn decode(text: &[u8]) -> Result<Vec<u8>, base64::DecodeError> {
    match base64_simd::STANDARD.decode_to_vec(text) {
        Ok(bytes) if canonical_end(text, &bytes) => Ok(bytes),
        _ => STANDARD.decode(text),
    }
}

/// Whether `text`'s last four symbols are the standard spelling of the last bytes of `bytes`
/// (its decoding): unused bits zero, the padding where it belongs.
fn canonical_end(text: &[u8], bytes: &[u8]) -> bool {
    if text.is_empty() {
        return bytes.is_empty();
    }
    let tail = match bytes.len() % 3 {
        0 => 3.min(bytes.len()),
        r => r,
    };
    let mut spelled = [0u8; 4];
    let n = STANDARD
        .encode_slice(&bytes[bytes.len() - tail..], &mut spelled)
        .unwrap_or(0);
    n == 4 && text.len() >= 4 && text[text.len() - 4..] == spelled
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn bytes_of_every_length_go_through_and_back() {
        for len in 0..70 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = encode(&bytes);
            assert_eq!(text, STANDARD.encode(&bytes), "{len}");
            let mut appended = String::from("data:");
            encode_into(&bytes, &mut appended);
            assert_eq!(appended, format!("data:{text}"));
            assert_eq!(decode(text.as_bytes()).unwrap(), bytes, "{len}");
        }
    }

    #[test]
    fn a_text_the_base64_crate_refuses_is_refused_with_its_error() {
        for text in [
            "QQ", "QR==", "QUI", "QUJ=", "Q===", "QUJD\n", "QU JD", "=QUJ", "QUJD====", "*",
        ] {
            assert_eq!(decode(text.as_bytes()), STANDARD.decode(text), "{text:?}");
            assert!(decode(text.as_bytes()).is_err(), "{text:?}");
        }
    }

    proptest! {
        /// Any text of base64's symbols, padding and a few others decodes as the `base64`
        /// crate decodes it: the same bytes, or the same error.
        #[test]
        fn any_text_decodes_as_the_base64_crate_decodes_it(
            text in "[A-Za-z0-9+/=\\-_ ]{0,40}",
        ) {
            prop_assert_eq!(decode(text.as_bytes()), STANDARD.decode(&text));
        }

        /// The base64 of any bytes with one symbol changed (to another symbol or the padding,
        /// often leaving bits the last symbol should not have) decodes as the `base64` crate
        /// decodes it.
        #[test]
        fn a_changed_symbol_decodes_as_the_base64_crate_decodes_it(
            bytes in proptest::collection::vec(any::<u8>(), 1..40),
            at in any::<prop::sample::Index>(),
            to in "[A-Za-z0-9+/=]",
        ) {
            let mut text = STANDARD.encode(&bytes).into_bytes();
            let at = at.index(text.len());
            text[at] = to.as_bytes()[0];
            prop_assert_eq!(decode(&text), STANDARD.decode(&text));
        }

        /// Any bytes encode as the `base64` crate encodes them.
        #[test]
        fn any_bytes_encode_as_the_base64_crate_encodes_them(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            prop_assert_eq!(encode(&bytes), STANDARD.encode(&bytes));
            prop_assert_eq!(decode(encode(&bytes).as_bytes()).unwrap(), bytes);
        }
    }
}
