use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time with millisecond precision, kept exactly.
///
/// Serialised as RFC 3339 in UTC with three fractional digits (`2026-11-30T00:41:53.963Z`), the
/// form every native store uses. Finer precision in the input is truncated to the millisecond:
/// semantic equality ignores it by contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

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
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
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

    #[test]
    fn keeps_milliseconds_exactly() {
        let t = Timestamp::parse("2026-11-30T00:41:53.963Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T00:41:53.963Z");
    }

    #[test]
    fn truncates_below_a_millisecond_and_normalises_offsets() {
        let t = Timestamp::parse("2026-11-30T01:41:53.963999+01:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T00:41:53.963Z");
    }

    #[test]
    fn rejects_garbage() {
        assert!(Timestamp::parse("yesterday").is_err());
    }
}
