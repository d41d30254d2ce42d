use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time with millisecond precision, kept exactly.
///
/// Serialised as RFC 3339 in UTC with three fractional digits (`2026-11-30T00:41:53.963Z`), the
/// form every native store uses. Finer precision in the input is truncated to the millisecond:
/// semantic equality ignores it by contract.
///
/// That one form (JavaScript's `toISOString()`, and what Codex and Claude Code write on every line)
/// is parsed and formatted by hand, without chrono's general machinery: a session carries one per
/// record, so it is on the hot path of every reader and writer. Any other form goes to chrono, and
/// both paths agree exactly (tests below).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// The length of the common form, `YYYY-MM-DDThh:mm:ss.mmmZ`.
pub const RFC3339_MILLIS_LEN: usize = 24;

const MS_PER_DAY: i64 = 86_400_000;
/// Where the punctuation of the common form is.
const PUNCTUATION: [(usize, u8); 7] = [
    (4, b'-'),
    (7, b'-'),
    (10, b'T'),
    (13, b':'),
    (16, b':'),
    (19, b'.'),
    (23, b'Z'),
];

impl Timestamp {
    /// From milliseconds since the Unix epoch.
    pub fn from_millis(millis: i64) -> Self {
        Timestamp(millis)
    }

    /// Milliseconds since the Unix epoch.
    pub fn millis(self) -> i64 {
        self.0
    }

    /// The current time, truncated to the millisecond.
    pub fn now() -> Self {
        Timestamp(Utc::now().timestamp_millis())
    }

    /// Parses RFC 3339 (any offset, any fractional precision).
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(millis) = parse_common_form(text.as_bytes()) {
            return Ok(Timestamp(millis));
        }
        DateTime::parse_from_rfc3339(text)
            .map(|t| Timestamp(t.timestamp_millis()))
            .map_err(|e| format!("not an RFC 3339 timestamp: {text:?} ({e})"))
    }

    /// This instant as a chrono UTC time.
    pub fn to_datetime(self) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(self.0)
            .single()
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-30T00:41:53.963Z`.
    pub fn to_rfc3339(self) -> String {
        self.with_rfc3339(str::to_owned)
    }

    /// Hands [`Timestamp::to_rfc3339`]'s text to `f`, on the stack for years 0 to 9999.
    fn with_rfc3339<R>(self, f: impl FnOnce(&str) -> R) -> R {
        match self.rfc3339_bytes() {
            Some(bytes) => f(std::str::from_utf8(&bytes).expect("ASCII digits and punctuation")),
            None => f(&self
                .to_datetime()
                .to_rfc3339_opts(SecondsFormat::Millis, true)),
        }
    }

    /// [`Timestamp::to_rfc3339`] without a heap string, for years 0 to 9999 (`None` outside
    /// them, where the form has more than four year digits or a sign).
    pub fn rfc3339_bytes(self) -> Option<[u8; RFC3339_MILLIS_LEN]> {
        let (year, month, day) = civil_from_days(self.0.div_euclid(MS_PER_DAY));
        if !(0..=9999).contains(&year) {
            return None;
        }
        let in_day = self.0.rem_euclid(MS_PER_DAY);
        let mut out = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: i64| {
            for digit in out[at..at + width].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, month);
        put(8, 2, day);
        put(11, 2, in_day / 3_600_000);
        put(14, 2, in_day / 60_000 % 60);
        put(17, 2, in_day / 1000 % 60);
        put(20, 3, in_day % 1000);
        Some(out)
    }

    /// Whether `text` is exactly how [`Timestamp::to_rfc3339`] spells this instant (a store that
    /// keeps another spelling of it must keep that text to round-trip byte for byte).
    pub fn is_spelled(self, text: &str) -> bool {
        self.with_rfc3339(|spelled| spelled == text)
    }
}

/// `YYYY-MM-DDThh:mm:ss.mmmZ` → milliseconds since the epoch; `None` for any other form or an
/// out-of-range field (chrono then decides, and refuses it or reads another form).
fn parse_common_form(b: &[u8]) -> Option<i64> {
    if b.len() != RFC3339_MILLIS_LEN || PUNCTUATION.iter().any(|&(at, c)| b[at] != c) {
        return None;
    }
    let num = |at: usize, width: usize| -> Option<i64> {
        b[at..at + width].iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second, milli) = (num(11, 2)?, num(14, 2)?, num(17, 2)?, num(20, 3)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let seconds = (hour * 60 + minute) * 60 + second;
    Some(days_from_civil(year, month, day) * MS_PER_DAY + seconds * 1000 + milli)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (the inverse of the above).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_rfc3339(|text| f.write_str(text))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with_rfc3339(|text| serializer.serialize_str(text))
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10000-01-01T00:00:00Z: the end of four-digit years.
    const END_OF_YEAR_9999: i64 = 253_402_300_800_000;
    /// 0000-01-01T00:00:00Z.
    const YEAR_0: i64 = -62_167_219_200_000;

    fn chrono_text(ms: i64) -> String {
        Timestamp(ms)
            .to_datetime()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    fn chrono_parse(text: &str) -> Result<Timestamp, String> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| Timestamp(t.timestamp_millis()))
            .map_err(|e| e.to_string())
    }

    /// Instants spread over years 0..9999 and around the edges, from a fixed-seed generator.
    fn samples() -> impl Iterator<Item = i64> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let edges = [
            0,
            1,
            999,
            MS_PER_DAY - 1,
            951_782_400_000,   // 2000-02-29
            4_107_456_000_000, // 2100-02-28
            END_OF_YEAR_9999 - 1,
            YEAR_0,
        ];
        edges.into_iter().chain((0..200_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (END_OF_YEAR_9999 - YEAR_0) as u64) as i64 + YEAR_0
        }))
    }

    #[test]
    fn formats_exactly_as_chrono() {
        for ms in samples() {
            let ts = Timestamp(ms);
            assert_eq!(ts.to_rfc3339(), chrono_text(ms), "{ms}");
            assert!(ts.is_spelled(&chrono_text(ms)), "{ms}");
        }
        for ms in [YEAR_0 - 1, END_OF_YEAR_9999, i64::MIN / 4] {
            assert_eq!(Timestamp(ms).rfc3339_bytes(), None);
            assert_eq!(Timestamp(ms).to_rfc3339(), chrono_text(ms));
        }
    }

    #[test]
    fn parses_exactly_as_chrono() {
        for ms in samples() {
            let text = chrono_text(ms);
            assert_eq!(Timestamp::parse(&text), Ok(Timestamp(ms)), "{text}");
        }
    }

    #[test]
    fn other_forms_and_bad_fields_go_to_chrono() {
        for text in [
            "2026-11-30T00:41:53.963+01:00",
            "2026-11-30T00:41:53Z",
            "2026-11-30T00:41:53.963123Z",
            "2026-02-29T00:00:00.000Z",
            "2024-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-11-31T00:00:00.000Z",
            "2026-11-30T24:00:00.000Z",
            "2026-11-30T23:59:60.000Z",
            "2026-11-30 00:41:53.963Z",
            "2026-1a-30T00:41:53.963Z",
            "+026-11-30T00:41:53.963Z",
            "",
        ] {
            assert_eq!(
                Timestamp::parse(text).is_ok(),
                chrono_parse(text).is_ok(),
                "{text}"
            );
            if let Ok(t) = chrono_parse(text) {
                assert_eq!(Timestamp::parse(text), Ok(t), "{text}");
            }
        }
    }

    #[test]
    fn keeps_milliseconds_exactly() {
        let t = Timestamp::parse("2026-11-30T00:41:53.963Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T00:41:53.963Z");
    }

    #[test]
    fn truncates_below_a_millisecond_and_normalises_offsets() {
        let t = Timestamp::parse("2026-11-30T01:41:53.963999+01:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T00:41:53.963Z");
        assert!(!t.is_spelled("2026-11-30T01:41:53.963999+01:00"));
    }

    #[test]
    fn rejects_garbage() {
        assert!(Timestamp::parse("yesterday").is_err());
    }
}
