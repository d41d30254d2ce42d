//! pi's timestamps: entry times as JavaScript's `toISOString()` writes them
//! (`2026-11-30T00:41:45.653Z`), message times as Unix milliseconds.
//!
//! The common shape is formatted and parsed by hand (a session has one per entry); anything else
//! goes through the general RFC 3339 parser.

use handoff_sdk::Timestamp;

/// The length of `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub const ISO_LEN: usize = 24;

/// `ms` as `toISOString()` writes it, for years 0 to 9999; `None` outside them.
pub fn format_iso(ms: i64) -> Option<[u8; ISO_LEN]> {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let put = |out: &mut [u8; ISO_LEN], at: usize, width: usize, mut value: i64| {
        for i in (0..width).rev() {
            out[at + i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(&mut out, 0, 4, year);
    put(&mut out, 5, 2, month);
    put(&mut out, 8, 2, day);
    put(&mut out, 11, 2, in_day / 3_600_000);
    put(&mut out, 14, 2, in_day / 60_000 % 60);
    put(&mut out, 17, 2, in_day / 1000 % 60);
    put(&mut out, 20, 3, in_day % 1000);
    Some(out)
}

/// An entry time's text without a heap string in the common case.
pub enum IsoText<'a> {
    /// As pi writes it.
    Fixed([u8; ISO_LEN]),
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

/// `ms` as pi writes an entry time.
pub fn iso_text(ms: i64) -> IsoText<'static> {
    match format_iso(ms) {
        Some(bytes) => IsoText::Fixed(bytes),
        None => IsoText::Owned(Timestamp::from_millis(ms).to_rfc3339()),
    }
}

/// `ms` as an ISO string (the general formatter outside years 0 to 9999).
pub fn iso_string(ms: i64) -> String {
    match format_iso(ms) {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => Timestamp::from_millis(ms).to_rfc3339(),
    }
}

/// Parses an entry time: the `toISOString()` shape by hand, anything else as RFC 3339.
pub fn parse_iso(text: &str) -> Result<Timestamp, String> {
    fast_parse(text.as_bytes())
        .map(Timestamp::from_millis)
        .map_or_else(|| Timestamp::parse(text), Ok)
}

/// Whether `text` is exactly how the writer would spell `ts`.
pub fn is_canonical(text: &str, ts: Timestamp) -> bool {
    format_iso(ts.millis()).is_some_and(|b| b.as_slice() == text.as_bytes())
}

fn fast_parse(b: &[u8]) -> Option<i64> {
    if b.len() != ISO_LEN {
        return None;
    }
    let shape = b"0000-00-00T00:00:00.000Z";
    let fits = b.iter().zip(shape).all(|(&c, &s)| {
        if s == b'0' {
            c.is_ascii_digit()
        } else {
            c == s
        }
    });
    if !fits {
        return None;
    }
    let num = |at: usize, width: usize| {
        b[at..at + width]
            .iter()
            .fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'))
    };
    let (year, month, day) = (num(0, 4), num(5, 2), num(8, 2));
    let (hour, minute, second, milli) = (num(11, 2), num(14, 2), num(17, 2), num(20, 3));
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli)
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
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_general_codec() {
        let mut ms: i64 = -62_135_596_800_000; // 0001-01-01
        let step = 7_919_777_123; // about 92 days, with every field moving
        while ms < 253_402_300_799_999 {
            let general = Timestamp::from_millis(ms).to_rfc3339();
            assert_eq!(iso_string(ms), general, "{ms}");
            assert_eq!(parse_iso(&general).unwrap().millis(), ms, "{general}");
            assert!(is_canonical(&general, Timestamp::from_millis(ms)));
            ms += step;
        }
    }

    #[test]
    fn other_shapes_fall_back_to_rfc3339() {
        let t = parse_iso("2026-11-30T01:41:45.653+01:00").unwrap();
        assert_eq!(t, parse_iso("2026-11-30T00:41:45.653Z").unwrap());
        assert!(!is_canonical("2026-11-30T01:41:45.653+01:00", t));
        assert!(parse_iso("2026-02-30T00:00:00.000Z").is_err());
        assert!(parse_iso("yesterday").is_err());
    }
}
