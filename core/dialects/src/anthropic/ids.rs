//! Tool-call ids: the API accepts only `^[a-zA-Z0-9_-]+$` (rule A6). Other ids are mapped to
//! [`MAPPED_ID_PREFIX`] + base64url(id) and mapped back on read, so a round trip is exact.

use std::borrow::Cow;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

/// The prefix of a mapped id. A canonical id that already starts with it is mapped too, so the
/// mapping stays reversible.
pub const MAPPED_ID_PREFIX: &str = "hx_";

/// Whether the API accepts `id` as a `tool_use.id` (rule A6).
pub fn is_wire_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The id to send for the canonical tool-call id `id`: itself when the API accepts it, else the
/// deterministic mapping `hx_<base64url(id)>`.
pub fn wire_tool_id(id: &str) -> Cow<'_, str> {
    if is_wire_tool_id(id) && !id.starts_with(MAPPED_ID_PREFIX) {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(format!("{MAPPED_ID_PREFIX}{}", URL_SAFE_NO_PAD.encode(id)))
    }
}

/// The canonical id for a wire id: the inverse of [`wire_tool_id`]. A wire id that starts with the
/// prefix but is not a mapping this module made is kept as it is.
pub fn canonical_tool_id(wire: &str) -> Cow<'_, str> {
    let Some(encoded) = wire.strip_prefix(MAPPED_ID_PREFIX) else {
        return Cow::Borrowed(wire);
    };
    match URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
    {
        Some(id) if wire_tool_id(&id) == wire => Cow::Owned(id),
        _ => Cow::Borrowed(wire),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids_pass_through() {
        assert_eq!(wire_tool_id("toolu_01ABC-x"), "toolu_01ABC-x");
        assert_eq!(canonical_tool_id("toolu_01ABC-x"), "toolu_01ABC-x");
    }

    #[test]
    fn foreign_ids_map_reversibly() {
        for id in [
            "functions.read:3",
            "call_a|fc_b",
            "hx_looks_mapped",
            "ünï",
            "a b",
        ] {
            let wire = wire_tool_id(id);
            assert!(is_wire_tool_id(&wire), "{wire}");
            assert_ne!(wire, id);
            assert_eq!(canonical_tool_id(&wire), id);
        }
    }

    #[test]
    fn unmapped_prefix_is_kept() {
        assert_eq!(canonical_tool_id("hx_!!"), "hx_!!");
        // Decodes, but is not what wire_tool_id would make of the decoded id.
        let plain = format!("{MAPPED_ID_PREFIX}{}", URL_SAFE_NO_PAD.encode("abc"));
        assert_eq!(canonical_tool_id(&plain), plain);
    }

    proptest::proptest! {
        #[test]
        fn every_id_maps_to_a_wire_id_and_back(id in "\\PC{1,80}") {
            let wire = wire_tool_id(&id);
            proptest::prop_assert!(is_wire_tool_id(&wire));
            proptest::prop_assert_eq!(canonical_tool_id(&wire), id.as_str());
        }

        #[test]
        fn wire_ids_read_as_themselves_unless_mapped(id in "[a-zA-Z0-9_-]{1,64}") {
            proptest::prop_assume!(!id.starts_with(MAPPED_ID_PREFIX));
            proptest::prop_assert_eq!(canonical_tool_id(&id), id.as_str());
        }
    }
}
