//! Property tests for the pure projection module (DECISIONS.md sections 7
//! and 8): recurrence schedules checked against a brute-force oracle built
//! from `Schedule::nth`, `nth` itself checked against an independent
//! calendar computation, installment splitting and dating, and handles.

use cofre_domain::projection::{
    Frequency, Handle, InstallmentPlan, Schedule, Template, installment_amount, installment_date,
};
use cofre_domain::transaction::TxType;
use cofre_domain::{AccountId, Money, PurchaseId, RuleId, UserId};
use jiff::civil::Date;
use proptest::prelude::*;
use std::ops::RangeInclusive;
use uuid::Uuid;

// ---------------------------------------------------------------------------
// An independent calendar: proleptic Gregorian day numbers (days since
// 1970-01-01), computed without jiff's arithmetic. jiff is only used to
// build and validate the resulting `Date`.
// ---------------------------------------------------------------------------

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => unreachable!("month {month}"),
    }
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

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

fn make_date(year: i64, month: i64, day: i64) -> Option<Date> {
    Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()
}

fn day_number(date: Date) -> i64 {
    days_from_civil(
        i64::from(date.year()),
        i64::from(date.month()),
        i64::from(date.day()),
    )
}

fn from_day_number(days: i64) -> Option<Date> {
    let (y, m, d) = civil_from_days(days);
    make_date(y, m, d)
}

fn add_days(date: Date, days: i64) -> Date {
    from_day_number(day_number(date) + days).expect("date within jiff's range")
}

/// `date` moved `months` months, the day clamped to the target month.
fn add_months_clamped(date: Date, months: i64) -> Option<Date> {
    let index = i64::from(date.year()) * 12 + i64::from(date.month()) - 1 + months;
    let (year, month) = (index.div_euclid(12), index.rem_euclid(12) + 1);
    if !(-9999..=9999).contains(&year) {
        return None;
    }
    let day = i64::from(date.day()).min(days_in_month(year, month));
    make_date(year, month, day)
}

/// The n-th date of the schedule from its start, ignoring end and count.
fn expected_raw(s: &Schedule, n: u32) -> Option<Date> {
    let units = i64::from(n) * i64::from(s.interval);
    match s.frequency {
        Frequency::Daily => from_day_number(day_number(s.start) + units),
        Frequency::Weekly => from_day_number(day_number(s.start) + units * 7),
        Frequency::Monthly => add_months_clamped(s.start, units),
        Frequency::Yearly => add_months_clamped(s.start, units * 12),
    }
}

/// The n-th occurrence as DECISIONS.md section 7 describes it.
fn expected_nth(s: &Schedule, n: u32) -> Option<Date> {
    if s.count.is_some_and(|c| n >= c) {
        return None;
    }
    let date = expected_raw(s, n)?;
    if s.end_date.is_some_and(|end| date > end) {
        return None;
    }
    Some(date)
}

// ---------------------------------------------------------------------------
// The brute-force oracle: nth(0), nth(1), ... until None or past `to`.
// ---------------------------------------------------------------------------

/// Occurrences up to `to` and the first after it.
type Walk = (Vec<(u32, Date)>, Option<(u32, Date)>);

/// Every occurrence dated on or before `to`, plus the first one after it
/// (when there is one), oldest first.
fn oracle_walk(s: &Schedule, to: Date) -> Walk {
    let mut within = Vec::new();
    for n in 0u32.. {
        match s.nth(n) {
            Some(date) if date <= to => within.push((n, date)),
            Some(date) => return (within, Some((n, date))),
            None => break,
        }
    }
    (within, None)
}

fn oracle_window(s: &Schedule, from: Date, to: Date) -> Vec<(u32, Date)> {
    oracle_walk(s, to)
        .0
        .into_iter()
        .filter(|(_, date)| *date >= from)
        .collect()
}

// ---------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------

fn arb_frequency() -> impl Strategy<Value = Frequency> {
    prop_oneof![
        Just(Frequency::Daily),
        Just(Frequency::Weekly),
        Just(Frequency::Monthly),
        Just(Frequency::Yearly),
    ]
}

/// Dates in `years`, biased towards month ends and leap days.
fn arb_date(years: RangeInclusive<i16>) -> impl Strategy<Value = Date> {
    let leap_years = years.clone();
    prop_oneof![
        // Any day of any month.
        (years.clone(), 1i8..=12, 1i8..=31).prop_map(|(y, m, d)| {
            let first = Date::new(y, m, 1).unwrap();
            Date::new(y, m, d.min(first.days_in_month())).unwrap()
        }),
        // One of the last four days of a month (28th to 31st).
        (years, 1i8..=12, 0i8..=3).prop_map(|(y, m, back)| {
            let first = Date::new(y, m, 1).unwrap();
            Date::new(y, m, first.days_in_month() - back).unwrap()
        }),
        // February 29 of a leap year.
        leap_years.prop_map(|y| {
            let mut y = y - y.rem_euclid(4);
            while !is_leap(i64::from(y)) {
                y -= 4;
            }
            Date::new(y, 2, 29).unwrap()
        }),
    ]
}

fn arb_schedule() -> impl Strategy<Value = Schedule> {
    (
        arb_frequency(),
        1u32..=12,
        arb_date(1990..=2040),
        proptest::option::of(0i64..=8000),
        proptest::option::of(1u32..=500),
    )
        .prop_map(|(frequency, interval, start, end_offset, count)| Schedule {
            frequency,
            interval,
            start,
            end_date: end_offset.map(|days| add_days(start, days)),
            count,
        })
}

/// A query date: near the m-th raw date of the schedule (so windows far
/// from the start still hold occurrences), or anywhere in 1985..=2045.
#[derive(Clone, Debug)]
enum Point {
    Near { m: u32, jitter: i64 },
    Anywhere(Date),
}

fn arb_point() -> impl Strategy<Value = Point> {
    prop_oneof![
        2 => (0u32..=12, -45i64..=45).prop_map(|(m, jitter)| Point::Near { m, jitter }),
        3 => (0u32..=600, -45i64..=45).prop_map(|(m, jitter)| Point::Near { m, jitter }),
        2 => arb_date(1985..=2045).prop_map(Point::Anywhere),
    ]
}

fn resolve(s: &Schedule, point: &Point) -> Date {
    match *point {
        Point::Near { m, jitter } => add_days(expected_raw(s, m).expect("in range"), jitter),
        Point::Anywhere(date) => date,
    }
}

/// A window `[from, to]`: up to 1200 days long, sometimes empty (to < from).
fn arb_window() -> impl Strategy<Value = (Point, i64)> {
    (arb_point(), -3i64..=1200)
}

fn resolve_window(s: &Schedule, (point, length): &(Point, i64)) -> (Date, Date) {
    let from = resolve(s, point);
    (from, add_days(from, *length))
}

fn arb_uuid() -> impl Strategy<Value = Uuid> {
    any::<u128>().prop_map(Uuid::from_u128)
}

fn arb_handle() -> impl Strategy<Value = Handle> {
    prop_oneof![
        (arb_uuid(), arb_date(1..=9999)).prop_map(|(id, date)| Handle::Recurrence {
            rule_id: RuleId(id),
            date,
        }),
        (arb_uuid(), any::<u16>()).prop_map(|(id, number)| Handle::Installment {
            purchase_id: PurchaseId(id),
            number,
        }),
        (arb_uuid(), 0i16..=9999, 1i8..=12).prop_map(|(id, year, month)| Handle::Bill {
            card_id: AccountId(id),
            year,
            month,
        }),
    ]
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The independent calendar agrees with jiff (guards the oracle itself).
    #[test]
    fn independent_calendar_agrees_with_jiff(a in arb_date(1..=9999), b in arb_date(1..=9999)) {
        let span = a.until(b).unwrap();
        prop_assert_eq!(i64::from(span.get_days()), day_number(b) - day_number(a));
        prop_assert_eq!(from_day_number(day_number(a)), Some(a));
    }

    /// 1. nth(n) is start + n*interval units: days for DAILY/WEEKLY, months
    /// or years with the start's day clamped (never drifting) for
    /// MONTHLY/YEARLY; None past count or end_date.
    #[test]
    fn nth_matches_independent_computation(
        s in arb_schedule(),
        extra in proptest::collection::vec(any::<u32>(), 8),
    ) {
        for n in (0..=800).chain(extra) {
            prop_assert_eq!(s.nth(n), expected_nth(&s, n), "n = {} of {:?}", n, s);
        }
        if matches!(s.frequency, Frequency::Monthly | Frequency::Yearly) {
            for n in 0..=800 {
                let Some(date) = s.nth(n) else { break };
                let last = date.days_in_month();
                prop_assert_eq!(date.day(), s.start.day().min(last), "n = {} of {:?}", n, s);
            }
        }
    }

    /// 2. ascending(from, to) is the oracle's occurrences in [from, to] in
    /// order, with the same indices; descending is exactly its reverse.
    #[test]
    fn ascending_and_descending_match_oracle(s in arb_schedule(), window in arb_window()) {
        let (from, to) = resolve_window(&s, &window);
        let expected = oracle_window(&s, from, to);
        let ascending: Vec<_> = s.ascending(from, to).collect();
        prop_assert_eq!(&ascending, &expected, "window [{}, {}] of {:?}", from, to, s);
        let mut descending: Vec<_> = s.descending(from, to).collect();
        descending.reverse();
        prop_assert_eq!(&descending, &expected, "window [{}, {}] of {:?}", from, to, s);
    }

    /// 3. Dates strictly increase with n, are >= start, <= end_date when
    /// set, there are at most `count` of them, and once nth is None it
    /// stays None.
    #[test]
    fn series_is_strictly_increasing_and_bounded(s in arb_schedule()) {
        let bounded = s.count.is_some() || s.end_date.is_some();
        let cap: u32 = if bounded { 20_000 } else { 2_000 };
        let mut previous: Option<Date> = None;
        let mut produced: u32 = 0;
        let mut first_none = None;
        for n in 0..cap {
            let Some(date) = s.nth(n) else {
                first_none = Some(n);
                break;
            };
            prop_assert_eq!(n, produced, "{:?}", s);
            produced += 1;
            prop_assert!(date >= s.start, "nth({}) = {} before start of {:?}", n, date, s);
            if let Some(end) = s.end_date {
                prop_assert!(date <= end, "nth({}) = {} after end of {:?}", n, date, s);
            }
            if let Some(prev) = previous {
                prop_assert!(prev < date, "nth({}) = {} not after {} in {:?}", n, date, prev, s);
            }
            previous = Some(date);
        }
        if let Some(count) = s.count {
            prop_assert!(produced <= count, "{} occurrences for {:?}", produced, s);
            if s.end_date.is_none() {
                prop_assert_eq!(produced, count, "{:?}", s);
            }
        }
        if bounded {
            let n = first_none.expect("a bounded series ends");
            for later in [n + 1, n + 2, n + 17, n + 1000, u32::MAX] {
                prop_assert_eq!(s.nth(later), None, "nth({}) of {:?}", later, s);
            }
        }
        prop_assert_eq!(s.nth(0), Some(s.start));
    }

    /// 4. index_of(d) is Some(n) with nth(n) == d exactly for occurrence
    /// dates, None for every other date of the window.
    #[test]
    fn index_of_recognises_exactly_the_occurrences(s in arb_schedule(), window in arb_window()) {
        let (from, to) = resolve_window(&s, &window);
        let occurrences = oracle_window(&s, from, to);
        let mut expected = occurrences.iter().peekable();
        let mut day = from;
        while day <= to {
            let want = match expected.peek() {
                Some(&&(n, date)) if date == day => {
                    expected.next();
                    Some(n)
                }
                _ => None,
            };
            let got = s.index_of(day);
            prop_assert_eq!(got, want, "index_of({}) of {:?}", day, s);
            if let Some(n) = got {
                prop_assert_eq!(s.nth(n), Some(day));
            }
            day = add_days(day, 1);
        }
        prop_assert!(expected.next().is_none());
        // Days just around the start are covered too.
        let near_start = oracle_window(&s, add_days(s.start, -3), add_days(s.start, 3));
        prop_assert_eq!(near_start.first().copied(), Some((0, s.start)));
        for offset in -3..=3 {
            let day = add_days(s.start, offset);
            let want = near_start.iter().find(|(_, date)| *date == day).map(|(n, _)| *n);
            prop_assert_eq!(s.index_of(day), want, "index_of({}) of {:?}", day, s);
        }
    }

    /// 5. first_on_or_after(d) and last_on_or_before(d) agree with the oracle.
    #[test]
    fn first_and_last_around_a_date_match_oracle(s in arb_schedule(), point in arb_point(), shift in -2i64..=2) {
        let d = add_days(resolve(&s, &point), shift);
        let (upto, after) = oracle_walk(&s, d);
        let last = upto.last().copied();
        let first = match last {
            Some((n, date)) if date == d => Some((n, date)),
            _ => after,
        };
        prop_assert_eq!(s.last_on_or_before(d), last, "last_on_or_before({}) of {:?}", d, s);
        prop_assert_eq!(s.first_on_or_after(d), first, "first_on_or_after({}) of {:?}", d, s);
    }

    /// 6a. Installment amounts split the total exactly: equal parts, the
    /// leftover cents (fewer than `count`) on the first.
    #[test]
    fn installment_amounts_split_exactly(total in 1i64..=100_000_000_000, count in 2u16..=420) {
        let parts: Vec<i64> = (1..=count)
            .map(|k| installment_amount(Money::from_cents(total), count, k).cents())
            .collect();
        prop_assert_eq!(parts.iter().sum::<i64>(), total);
        let first = parts[0];
        let rest = parts[1];
        prop_assert!(parts[1..].iter().all(|p| *p == rest), "{:?}", parts);
        prop_assert!(rest >= 0);
        prop_assert!(first >= rest);
        prop_assert!(first - rest < i64::from(count), "first {} rest {}", first, rest);
        prop_assert_eq!(rest, total / i64::from(count));
    }

    /// 6b. Installment k is dated k-1 months after the first, keeping its
    /// day or the month's last day when shorter; dates strictly increase.
    #[test]
    fn installment_dates_are_monthly_and_clamped(first in arb_date(1990..=2040), count in 2u16..=420) {
        prop_assert_eq!(installment_date(first, 0), None);
        prop_assert_eq!(installment_date(first, 1), Some(first));
        let mut previous: Option<Date> = None;
        for k in 1..=count {
            let date = installment_date(first, k);
            prop_assert_eq!(date, add_months_clamped(first, i64::from(k) - 1), "k = {} from {}", k, first);
            let date = date.unwrap();
            prop_assert_eq!(date.day(), first.day().min(date.days_in_month()), "k = {} from {}", k, first);
            if let Some(prev) = previous {
                prop_assert!(prev < date, "k = {}: {} not after {}", k, date, prev);
            }
            previous = Some(date);
        }
    }

    /// 6c. A plan's installments in a window, newest first, are exactly
    /// those of its whole count dated in the window (the walk starts in
    /// the window's last month and stops at its first day).
    #[test]
    fn plan_windows_hold_exactly_their_installments(
        first in arb_date(1990..=2040),
        count in 2u16..=420,
        a in arb_date(1985..=2080),
        b in arb_date(1985..=2080),
    ) {
        let plan = InstallmentPlan {
            id: PurchaseId::new(),
            user_id: UserId::new(),
            account_id: AccountId::new(),
            template: Template {
                tx_type: TxType::Debit,
                amount: Money::from_cents(100_000),
                description: "Plan".into(),
                notes: None,
                category_id: None,
                tag_ids: Vec::new(),
            },
            count,
            first_date: first,
            hidden: false,
            created_at: jiff::Timestamp::UNIX_EPOCH,
        };
        let (from, to) = (a.min(b), a.max(b));
        let walked: Vec<(u16, Date)> = plan.descending(from, to).collect();
        let every: Vec<(u16, Date)> = (1..=count)
            .rev()
            .filter_map(|k| installment_date(first, k).map(|d| (k, d)))
            .filter(|(_, d)| *d >= from && *d <= to)
            .collect();
        prop_assert_eq!(&walked, &every, "{} x{} in {}..{}", first, count, from, to);
        prop_assert!(plan.descending(to, from).next().is_none() || from == to);
    }

    /// 7. Handles round-trip through their text form.
    #[test]
    fn handles_round_trip(h in arb_handle()) {
        let text = h.to_string();
        prop_assert!(text.starts_with("mocked-"), "{}", text);
        prop_assert_eq!(Handle::parse(&text), Some(h), "{}", text);
    }
}
