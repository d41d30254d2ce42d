//! RFC 3339 timestamps in the one form rollouts use (`2026-11-30T00:41:53.963Z`), parsed and
//! formatted without chrono's general machinery: every line of a rollout carries one, so this is
//! on the hot path of both the reader and the writer. Anything else goes to chrono.

use handoff_sdk::Timestamp;

const MS_PER_DAY: i64 = 86_400_000;
/// 10000-01-01T00:00:00Z: four-digit years only.
const END_OF_YEAR_9999: i64 = 253_402_300_800_000;

/// Parses RFC 3339, exactly as [`Timestamp::parse`] does.
pub fn parse(text: &str) -> Result<Timestamp, String> {
    match parse_utc_millis(text) {
        Some(ms) => Ok(Timestamp::from_millis(ms)),
        None => Timestamp::parse(text),
    }
}

/// Formats as [`Timestamp::to_rfc3339`] does.
pub fn format(ts: Timestamp) -> String {
    let ms = ts.millis();
    if !(0..END_OF_YEAR_9999).contains(&ms) {
        return ts.to_rfc3339();
    }
    let (y, m, d) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    let rem = ms.rem_euclid(MS_PER_DAY);
    let (h, min, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    let mut out = [0u8; 24];
    let mut put = |at: usize, width: usize, mut v: i64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, h);
    put(14, 2, min);
    put(17, 2, s);
    put(20, 3, milli);
    for (at, c) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        out[at] = c;
    }
    out.iter().map(|&b| b as char).collect()
}

/// `YYYY-MM-DDThh:mm:ss.mmmZ` → milliseconds since the epoch; `None` for any other form or an
/// out-of-range field (chrono then decides).
fn parse_utc_millis(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 24 {
        return None;
    }
    for (at, c) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        if b[at] != c {
            return None;
        }
    }
    let num = |at: usize, width: usize| -> Option<i64> {
        b[at..at + width].iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, min, s, milli) = (num(11, 2)?, num(14, 2)?, num(17, 2)?, num(20, 3)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) || h > 23 || min > 59 || s > 59 {
        return None;
    }
    Some(days_from_civil(y, m, d) * MS_PER_DAY + ((h * 60 + min) * 60 + s) * 1000 + milli)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instants spread over years 0..9999 (and around the edges), from a fixed-seed generator.
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
            -62_167_219_200_000, // 0000-01-01
        ];
        edges.into_iter().chain((0..200_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (END_OF_YEAR_9999 as u64 + 62_167_219_200_000)) as i64 - 62_167_219_200_000
        }))
    }

    #[test]
    fn formats_exactly_as_chrono() {
        for ms in samples() {
            let ts = Timestamp::from_millis(ms);
            assert_eq!(format(ts), ts.to_rfc3339(), "{ms}");
        }
    }

    #[test]
    fn parses_exactly_as_chrono() {
        for ms in samples() {
            let text = Timestamp::from_millis(ms).to_rfc3339();
            assert_eq!(parse(&text), Timestamp::parse(&text), "{text}");
            assert_eq!(parse(&text).map(Timestamp::millis), Ok(ms), "{text}");
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
            assert_eq!(parse(text), Timestamp::parse(text), "{text}");
        }
    }
}
