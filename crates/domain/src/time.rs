//! Dates and timestamps in the wire formats of the contract, and the clock
//! that decides "today" in the user's time zone.

use jiff::Timestamp;
use jiff::civil::{Date, date};
use jiff::tz::TimeZone;

use crate::DomainError;

/// The first day of the supported calendar. jiff reaches year -9999, but
/// the wire form has four unsigned digits and year 0 is no year anyone
/// writes: the calendar is 0001-01-01 to 9999-12-31, and every walk over
/// days, months, cycles, occurrences and installments stops at its ends.
pub const MIN_DATE: Date = date(1, 1, 1);
/// The last day of the supported calendar (also jiff's last day).
pub const MAX_DATE: Date = date(9999, 12, 31);

/// Strict `YYYY-MM-DD`, a day of the supported calendar.
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
    text.parse::<Date>().ok().filter(|d| *d >= MIN_DATE)
}

pub fn date_field(field: &str, text: &str) -> Result<Date, DomainError> {
    parse_date(text).ok_or_else(|| {
        DomainError::field(
            field,
            "must be a date from 0001-01-01 to 9999-12-31 in YYYY-MM-DD form",
        )
    })
}

/// `YYYY-MM-DD`, the inverse of [`parse_date`] on the supported calendar.
/// jiff's own ISO 8601 printer: `strftime` read its format string again
/// for every date, and a page of entries prints two or three a row.
pub fn format_date(date: Date) -> String {
    date.to_string()
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
        assert_eq!(parse_date("0001-01-01"), Some(MIN_DATE));
        assert_eq!(parse_date("9999-12-31"), Some(MAX_DATE));
        assert!(parse_date("0000-12-31").is_none(), "year 0");
        assert!(parse_date("-001-01-01").is_none());
        assert_eq!(MAX_DATE, Date::MAX);
    }

    #[test]
    fn dates_print_as_they_parse() {
        for text in [
            "0001-01-01",
            "0999-02-03",
            "2024-02-29",
            "2026-11-22",
            "9999-12-31",
        ] {
            let day = parse_date(text).unwrap();
            assert_eq!(format_date(day), text);
            assert_eq!(format_date(day), day.strftime("%Y-%m-%d").to_string());
        }
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
