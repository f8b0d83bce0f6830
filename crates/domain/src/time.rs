//! Dates and timestamps in the wire formats of the contract, and the clock
//! that decides "today" in the user's time zone.

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;

use crate::DomainError;

/// Strict `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<Date> {
    let bytes = text.as_bytes();
    let shape_ok = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape_ok {
        return None;
    }
    text.parse::<Date>().ok()
}

pub fn date_field(field: &str, text: &str) -> Result<Date, DomainError> {
    parse_date(text).ok_or_else(|| DomainError::field(field, "must be a date in YYYY-MM-DD form"))
}

pub fn format_date(date: Date) -> String {
    date.strftime("%Y-%m-%d").to_string()
}

/// ISO 8601 UTC with milliseconds and `Z`: `2026-11-22T10:15:00.000Z`.
pub fn format_timestamp(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Where "now" comes from: the real clock, or a pinned instant for tests
/// and demos (`COFRE_NOW`).
#[derive(Clone, Debug)]
pub struct Clock {
    pinned: Option<Timestamp>,
    zone: TimeZone,
}

impl Clock {
    pub fn new(pinned: Option<Timestamp>, zone: TimeZone) -> Self {
        Self { pinned, zone }
    }

    pub fn now(&self) -> Timestamp {
        self.pinned.unwrap_or_else(Timestamp::now)
    }

    /// Today's date in the configured time zone.
    pub fn today(&self) -> Date {
        self.now().to_zoned(self.zone.clone()).date()
    }

    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_must_be_exactly_yyyy_mm_dd() {
        assert!(parse_date("2026-02-28").is_some());
        assert!(parse_date("2024-02-29").is_some());
        assert!(parse_date("2026-02-29").is_none());
        assert!(parse_date("2026-2-28").is_none());
        assert!(parse_date("2026-02-28T00:00").is_none());
        assert!(parse_date("20260228").is_none());
        assert!(parse_date("2026-13-01").is_none());
    }

    #[test]
    fn timestamps_have_milliseconds_and_z() {
        let ts: Timestamp = "2026-11-22T10:15:00Z".parse().unwrap();
        assert_eq!(format_timestamp(ts), "2026-11-22T10:15:00.000Z");
        let ts: Timestamp = "2026-11-22T10:15:00.123456Z".parse().unwrap();
        assert_eq!(format_timestamp(ts), "2026-11-22T10:15:00.123Z");
    }

    #[test]
    fn today_follows_the_time_zone() {
        // 02:00 UTC on the 22nd is still the 21st in São Paulo (UTC-3).
        let ts: Timestamp = "2026-11-22T02:00:00Z".parse().unwrap();
        let zone = TimeZone::get("America/Sao_Paulo").unwrap();
        let clock = Clock::new(Some(ts), zone);
        assert_eq!(format_date(clock.today()), "2026-11-21");
        assert_eq!(Clock::new(Some(ts), TimeZone::UTC).today().day(), 22);
    }
}
