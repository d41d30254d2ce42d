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
    let bytes: &[u8; 36] = text.as_bytes().try_into().ok()?;
    if [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
        return None;
    }
    // Each half in a 64-bit word, over a fixed array (unrolled, no bounds checks), and one check
    // at the end: a character that is no digit is 0xff, which the digits OR-ed together then
    // exceed 15 by. (A record's two ids are parsed per record: a `u128` and a branch per digit
    // made this a percent of reading a session.)
    let half = |digits: &[usize]| {
        digits.iter().fold((0u64, 0u8), |(bits, seen), &at| {
            let digit = HEX_VALUE[bytes[at] as usize];
            ((bits << 4) | u64::from(digit & 0xf), seen | digit)
        })
    };
    let (high, seen_high) = half(&UUID_DIGITS[..16]);
    let (low, seen_low) = half(&UUID_DIGITS[16..]);
    ((seen_high | seen_low) <= 15).then_some((u128::from(high) << 64) | u128::from(low))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random UUIDs go to text and back; every change of one character to a character
    /// that is not a lowercase hex digit (or, at a hyphen's place, not a hyphen) is refused.
    #[test]
    fn a_uuid_parses_back_from_its_text_and_nothing_else_does() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let halves = [next(), next()];
            let text = uuid_text(&halves);
            let text = std::str::from_utf8(&text).unwrap();
            let bits = (u128::from(halves[0]) << 64) | u128::from(halves[1]);
            assert_eq!(parse_uuid(text), Some(bits), "{text}");
            assert_eq!(RecordId::new(text), RecordId::Uuid(halves));
            assert_eq!(RecordId::new(text).to_text(), text);
            for at in 0..36 {
                for replacement in ['A', 'g', '-', '0', 'é', ' '] {
                    let mut changed: Vec<char> = text.chars().collect();
                    if changed[at] == replacement {
                        continue;
                    }
                    changed[at] = replacement;
                    let changed: String = changed.into_iter().collect();
                    let digit_for_digit = text.as_bytes()[at] != b'-'
                        && replacement.is_ascii_hexdigit()
                        && !replacement.is_ascii_uppercase();
                    assert_eq!(parse_uuid(&changed).is_some(), digit_for_digit, "{changed}");
                }
            }
        }
        for text in [
            "",
            "not a uuid",
            "0123456789abcdef0123456789abcdef",
            "toolu_01",
        ] {
            assert_eq!(parse_uuid(text), None, "{text}");
            assert_eq!(RecordId::new(text), RecordId::Text(text.into()));
        }
    }
}
