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

/// Strict `YYYY-MM-DD` (as text or bytes), a day of the supported calendar.
pub fn parse_date(text: impl AsRef<[u8]>) -> Option<Date> {
    let bytes = text.as_ref();
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
    // Built from its digits (every row read parses one or two days).
    let year = i16::try_from(number(&bytes[0..4])).ok()?;
    let month = i8::try_from(number(&bytes[5..7])).ok()?;
    let day = i8::try_from(number(&bytes[8..10])).ok()?;
    Date::new(year, month, day).ok().filter(|d| *d >= MIN_DATE)
}

/// The value of a run of ASCII digits (at most four: no overflow).
fn number(digits: &[u8]) -> u32 {
    digits
        .iter()
        .fold(0, |n, d| n * 10 + u32::from(d.wrapping_sub(b'0')))
}

/// A timestamp as [`format_timestamp`] writes it, read from its digits;
/// any other form jiff reads (`None` where it cannot). Stored rows carry
/// the first, and each read row parses one.
pub fn parse_timestamp(text: &str) -> Option<Timestamp> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 24
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            13 | 16 => *b == b':',
            19 => *b == b'.',
            23 => *b == b'Z',
            _ => b.is_ascii_digit(),
        });
    let from_digits = || {
        let date = parse_date(&text[0..10])?;
        let part = |at: usize| i8::try_from(number(&bytes[at..at + 2])).ok();
        let millis = i32::try_from(number(&bytes[20..23])).ok()?;
        let time =
            jiff::civil::Time::new(part(11)?, part(14)?, part(17)?, millis * 1_000_000).ok()?;
        jiff::tz::Offset::UTC
            .to_timestamp(date.to_datetime(time))
            .ok()
    };
    // What the digits cannot give (year 0, a leap second) jiff decides.
    shaped
        .then(from_digits)
        .flatten()
        .or_else(|| text.parse().ok())
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
pub fn format_date(date: Date) -> String {
    let mut out = String::with_capacity(10);
    push_date(&mut out, date);
    out
}

/// [`format_date`] appended to `out`: its ten bytes made in place and
/// written at once. A page of entries writes two or three days a row, and
/// jiff's printer (and `strftime`, which read its format again for every
/// date) cost more than the digits; so did pushing them one by one.
/// Years outside 0 to 9999 as the date's own `Display` writes them.
pub fn push_date(out: &mut String, date: Date) {
    let Ok(year) = u16::try_from(date.year()) else {
        return push_displayed(out, date);
    };
    if year > 9999 {
        return push_displayed(out, date);
    }
    let (month, day) = (date.month().unsigned_abs(), date.day().unsigned_abs());
    // Each value is below 10: a digit's byte.
    let digit = |n: u16| b'0' + (n % 10) as u8;
    let bytes = [
        digit(year / 1000),
        digit(year / 100),
        digit(year / 10),
        digit(year),
        b'-',
        b'0' + month / 10,
        b'0' + month % 10,
        b'-',
        b'0' + day / 10,
        b'0' + day % 10,
    ];
    crate::text::push_ascii(out, &bytes);
}

fn push_displayed(out: &mut String, date: Date) {
    use std::fmt::Write;
    // Writing to a String cannot fail.
    let _ = write!(out, "{date}");
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
    use proptest::prelude::*;

    proptest! {
        /// Days and timestamps read from their digits as jiff reads them.
        #[test]
        fn days_and_timestamps_parse_as_jiff_parses_them(
            digits in "[0-9]{4}-[0-1][0-9]-[0-3][0-9]",
            time in "[0-2][0-9]:[0-6][0-9]:[0-6][0-9]\\.[0-9]{3}",
            seconds in -62_135_596_800i64..=253_402_300_799,
            millis in 0i32..1000,
        ) {
            let by_jiff = digits.parse::<Date>().ok().filter(|d| *d >= MIN_DATE);
            prop_assert_eq!(parse_date(&digits), by_jiff);
            let text = format!("{digits}T{time}Z");
            prop_assert_eq!(parse_timestamp(&text), text.parse::<Timestamp>().ok());
            let ts = Timestamp::new(seconds, millis * 1_000_000).unwrap();
            prop_assert_eq!(parse_timestamp(&format_timestamp(ts)), Some(ts));
        }

        /// Days written as their `Display` writes them.
        #[test]
        fn days_format_as_their_display(year in -9999i16..=9999, month in 1i8..=12, day in 1i8..=28) {
            let d = date(year, month, day);
            prop_assert_eq!(format_date(d), d.to_string());
        }
    }

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
