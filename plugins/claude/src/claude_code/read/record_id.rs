//! Record ids (`uuid`, `parentUuid`): Claude Code's are UUIDs, kept as their 128 bits and parsed
//! and printed by table, without the formatting machinery.

/// A record's `uuid` (or a `parentUuid`): Claude Code's are UUIDs, kept as their 128 bits (no
/// allocation, cheap to hash and compare); anything else as its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RecordId {
    /// The 128 bits as two halves (a `u128` would align every record to 16 bytes).
    Uuid([u64; 2]),
    Text(Box<str>),
}

impl RecordId {
    pub(super) fn new(text: &str) -> Self {
        parse_uuid(text).map_or_else(
            || RecordId::Text(text.into()),
            |bits| RecordId::Uuid([(bits >> 64) as u64, bits as u64]),
        )
    }
}

impl RecordId {
    /// The id as text (a UUID formatted directly, without the formatting machinery).
    pub(super) fn to_text(&self) -> String {
        match self {
            RecordId::Uuid(halves) => {
                let text = uuid_text(halves);
                std::str::from_utf8(&text).map_or_else(|_| String::new(), str::to_owned)
            }
            RecordId::Text(text) => text.to_string(),
        }
    }
}

/// One word per UUID (its halves folded; the bits are random), so linking hashes each record id
/// with one integer write instead of a tag, a length and sixteen bytes.
impl std::hash::Hash for RecordId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            RecordId::Uuid([high, low]) => state.write_u64(high ^ low),
            RecordId::Text(text) => text.hash(state),
        }
    }
}

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Where the 32 hex digits of a hyphenated UUID are.
const UUID_DIGITS: [usize; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29,
    30, 31, 32, 33, 34, 35,
];

/// Lowercase hex digit values; 0xff for anything else.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The lowercase, hyphenated text of a UUID.
pub(super) fn uuid_text([high, low]: &[u64; 2]) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = (u128::from(*high) << 64) | u128::from(*low);
    let mut text = [b'-'; 36];
    for (n, &at) in UUID_DIGITS.iter().enumerate() {
        text[at] = HEX[((bits >> (124 - 4 * n)) & 0xf) as usize];
    }
    text
}

/// The bits of a UUID in the one form [`uuid_text`] gives back: lowercase, hyphenated.
pub(super) fn parse_uuid(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 || [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
        return None;
    }
    let mut bits = 0u128;
    for &at in &UUID_DIGITS {
        let digit = HEX_VALUE[bytes[at] as usize];
        if digit > 15 {
            return None;
        }
        bits = (bits << 4) | u128::from(digit);
    }
    Some(bits)
}
