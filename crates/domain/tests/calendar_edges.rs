//! Property tests at the ends of the supported calendar (0001-01-01 and
//! 9999-12-31): card cycles tile it to its last day, `due_between` ends
//! and agrees with a day-by-day oracle, schedules and installments stop
//! at its end, and whatever a series is allowed to hold lies inside it.
//! Every walk here is bounded: a regression to an endless loop shows up
//! as a test that never ends, so each oracle walks a few hundred days.

use cofre_domain::card::{BillMonth, Cycles};
use cofre_domain::projection::{
    Frequency, Handle, MAX_INSTALLMENTS, RecurrenceRule, Schedule, Template, installment_date,
    installments_that_fit,
};
use cofre_domain::series::{Creation, Scope, Series, SeriesState, Target, creation, patch};
use cofre_domain::time::{MAX_DATE, MIN_DATE};
use cofre_domain::transaction::{NewTransactionInput, RecurrenceInput, TransactionChanges, TxType};
use cofre_domain::{AccountId, DomainError, Money, RuleId, UserId};
use jiff::civil::Date;
use jiff::{Timestamp, ToSpan};
use proptest::prelude::*;

/// A day within `days` of one end of the calendar (or anywhere, now and
/// then), so the edges get most of the cases.
fn near_an_end(days: i64) -> impl Strategy<Value = Date> {
    prop_oneof![
        (0..days).prop_map(|n| MIN_DATE.checked_add(n.days()).unwrap()),
        (0..days).prop_map(|n| MAX_DATE.checked_sub(n.days()).unwrap()),
        (0i64..3_652_058).prop_map(|n| MIN_DATE.checked_add(n.days()).unwrap()),
    ]
}

/// A window `[from, to]` of up to `len` days inside the calendar.
fn window(len: i64) -> impl Strategy<Value = (Date, Date)> {
    (near_an_end(800), 0..len).prop_map(|(from, n)| {
        let to = from
            .checked_add(n.days())
            .map_or(MAX_DATE, |d| d.min(MAX_DATE));
        (from, to)
    })
}

fn cards() -> impl Strategy<Value = Cycles> {
    (1u8..=31, 1u8..=31).prop_map(|(close, due)| Cycles::new(close, due))
}

fn days(from: Date, to: Date) -> impl Iterator<Item = Date> {
    let n = from.until(to).unwrap().get_days();
    (0..=i64::from(n)).map(move |k| from.checked_add(k.days()).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every day of a window is in exactly the cycle `month_of` names, and
    /// the cycle of the next day is the same or starts the day after.
    #[test]
    fn cycles_tile_the_calendar_to_its_ends(cycles in cards(), (from, to) in window(120)) {
        for day in days(from, to) {
            let cycle = cycles.cycle_of(day);
            prop_assert!(cycle.contains(day), "{day} not in {cycle:?}");
            prop_assert_eq!(cycles.cycle(cycle.month), Some(cycle));
            prop_assert!(cycle.due.year() == cycle.month.year() && cycle.due.month() == cycle.month.month());
            if let Ok(next_day) = day.tomorrow() && next_day <= MAX_DATE {
                let next = cycles.cycle_of(next_day);
                if next != cycle {
                    prop_assert_eq!(next.start, next_day);
                    prop_assert_eq!(Some(next.month), cycle.month.next());
                }
            } else {
                prop_assert_eq!(cycle.month, BillMonth::LAST);
                prop_assert_eq!(cycle.close, MAX_DATE);
            }
        }
    }

    /// `due_between` lists exactly the cycles whose due day a day-by-day
    /// walk of the window finds, oldest first, at either end.
    #[test]
    fn due_between_matches_a_day_by_day_oracle(cycles in cards(), (from, to) in window(800)) {
        let listed: Vec<Date> = cycles.due_between(from, to).iter().map(|c| c.due).collect();
        let oracle: Vec<Date> = days(from, to)
            .filter(|day| {
                let month = BillMonth::of(*day);
                cycles.cycle(month).is_some_and(|c| c.due == *day)
            })
            .collect();
        prop_assert_eq!(listed, oracle);
        prop_assert!(cycles.due_between(to, from).len() <= 1, "a reversed window");
    }

    /// A schedule's occurrences end at the calendar's end: an ascending
    /// walk over the last days stops, and every date it yields is `nth`.
    #[test]
    fn schedules_stop_at_the_end_of_the_calendar(
        start in near_an_end(400),
        frequency in prop_oneof![
            Just(Frequency::Daily), Just(Frequency::Weekly),
            Just(Frequency::Monthly), Just(Frequency::Yearly)
        ],
        interval in 1u32..=3,
        count in proptest::option::of(1u32..=400),
    ) {
        let s = Schedule { frequency, interval, start, end_date: None, count };
        let all: Vec<(u32, Date)> = s.ascending(start, MAX_DATE).take(5_000).collect();
        prop_assert!(all.len() < 5_000 || start < MAX_DATE.checked_sub(4_000.days()).unwrap());
        for (n, date) in &all {
            prop_assert_eq!(s.nth(*n), Some(*date));
            prop_assert!(*date <= MAX_DATE);
        }
        if let Some(&(n, last)) = all.last() && all.len() < 5_000 {
            prop_assert_eq!(s.last_on_or_before(MAX_DATE), Some((n, last)));
            prop_assert_eq!(s.nth(n + 1), None);
            let back: Vec<(u32, Date)> = s.descending(start, MAX_DATE).collect();
            prop_assert_eq!(back.len(), all.len());
        }
        // A count is allowed only when all its occurrences are days of
        // the calendar.
        if let Some(count) = count {
            let every = (0..count).all(|n| s.nth(n).is_some());
            prop_assert_eq!(s.stays_in_calendar(), every);
            prop_assert_eq!(s.validate().is_ok(), every);
        }
    }

    /// `installments_that_fit` is exactly how many monthly installments
    /// have a date, from any first day.
    #[test]
    fn installments_fit_exactly(first in near_an_end(15_000)) {
        let fit = installments_that_fit(first);
        let limit = u32::from(MAX_INSTALLMENTS);
        let check = fit.min(limit);
        for number in 1..=u16::try_from(check).unwrap() {
            prop_assert!(installment_date(first, number).is_some_and(|d| d <= MAX_DATE));
        }
        if fit < limit {
            prop_assert_eq!(installment_date(first, u16::try_from(fit + 1).unwrap()), None);
        }
    }
}

#[test]
fn bill_months_stop_at_both_ends() {
    assert_eq!(BillMonth::LAST.next(), None);
    assert_eq!(BillMonth::FIRST.prev(), None);
    assert_eq!(BillMonth::new(0, 12), None);
    assert_eq!(BillMonth::new(10_000, 1), None);
    assert_eq!(BillMonth::new(2026, 13), None);
    assert_eq!(BillMonth::of(MAX_DATE), BillMonth::LAST);
    assert_eq!(BillMonth::of(Date::MIN), BillMonth::FIRST, "clamped");
    assert_eq!(
        BillMonth::range(BillMonth::FIRST, BillMonth::LAST).count(),
        9999 * 12
    );
    assert_eq!(BillMonth::parse_key("0000-12"), None);
    assert_eq!(BillMonth::parse_key("9999-12"), Some(BillMonth::LAST));
}

/// The bug that froze the server: bills due in a window of year 9999.
#[test]
fn due_between_ends_in_year_9999() {
    let from = Date::new(9999, 1, 1).unwrap();
    for (close, due) in [(3, 10), (29, 5), (31, 31), (1, 1)] {
        let cycles = Cycles::new(close, due).due_between(from, MAX_DATE);
        assert_eq!(cycles.len(), 12, "{close}/{due}");
        let last = cycles.last().unwrap();
        assert_eq!((last.month, last.close), (BillMonth::LAST, MAX_DATE));
    }
    // Close 29, due 5: the January bill of year 1 would close in year 0.
    let late = Cycles::new(29, 5);
    assert_eq!(late.cycle(BillMonth::FIRST), None);
    let first = late.cycle_of(MIN_DATE);
    assert_eq!((first.month.month(), first.start), (2, MIN_DATE));
    assert_eq!(late.due_between(MIN_DATE, Date::new(1, 1, 31).unwrap()), []);
}

#[test]
fn the_last_installments_fit() {
    // 420 monthly installments from 9965-01-31 end on 9999-12-31.
    let first = Date::new(9965, 1, 31).unwrap();
    assert_eq!(installments_that_fit(first), 420);
    assert_eq!(installment_date(first, 420), Some(MAX_DATE));
    let june = Date::new(9999, 6, 15).unwrap();
    assert_eq!(installments_that_fit(june), 7);
    assert_eq!(installments_that_fit(MAX_DATE), 1);
}

fn fields(error: DomainError) -> Vec<String> {
    match error {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("not a validation error: {other:?}"),
    }
}

fn purchase(
    date: Date,
    count: Option<u16>,
    recurrence: Option<RecurrenceInput>,
) -> NewTransactionInput {
    NewTransactionInput {
        account_id: Some(AccountId::new()),
        tx_type: Some(TxType::Debit),
        amount: Some(Money::from_cents(120_000)),
        description: Some("TV".into()),
        date: Some(date),
        installments: count,
        recurrence,
        ..Default::default()
    }
}

fn create(input: &NewTransactionInput) -> Result<Creation, DomainError> {
    creation(input, UserId::new(), MIN_DATE, Timestamp::UNIX_EPOCH)
}

/// A 12-installment purchase dated 9999-06-15 used to keep 7 of its
/// installments (700.00 of 1,200.00): it is refused, and 7 fit.
#[test]
fn creation_refuses_entries_past_the_calendar() {
    let june = Date::new(9999, 6, 15).unwrap();
    let error = create(&purchase(june, Some(12), None)).unwrap_err();
    assert_eq!(fields(error), ["installments.count"]);
    let Ok(Creation::Installments { plan, .. }) = create(&purchase(june, Some(7), None)) else {
        panic!("7 installments fit");
    };
    let total: i64 = (1..=7).map(|k| plan.amount_of(k).cents()).sum();
    assert_eq!(total, 120_000);
    assert_eq!(plan.date_of(7), Some(Date::new(9999, 12, 15).unwrap()));

    let monthly = |count, end_date| RecurrenceInput {
        frequency: Frequency::Monthly,
        interval: None,
        end_date,
        count,
    };
    let error = create(&purchase(june, None, Some(monthly(Some(8), None)))).unwrap_err();
    assert_eq!(fields(error), ["recurrence.count"]);
    for fits in [
        monthly(Some(7), None),
        monthly(Some(8), Some(MAX_DATE)),
        monthly(None, None),
    ] {
        assert!(matches!(
            create(&purchase(june, None, Some(fits))),
            Ok(Creation::Recurrence(_))
        ));
    }
}

/// PATCH scope=future with a later date moves the rest of a rule: it may
/// not push its last occurrence past the calendar.
#[test]
fn moving_the_rest_of_a_rule_stays_in_the_calendar() {
    let january = Date::new(9999, 1, 15).unwrap();
    let rule = RecurrenceRule {
        id: RuleId::new(),
        user_id: UserId::new(),
        account_id: AccountId::new(),
        template: Template {
            tx_type: TxType::Debit,
            amount: Money::from_cents(1_000),
            description: "Aluguel".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
        },
        schedule: Schedule {
            frequency: Frequency::Monthly,
            interval: 1,
            start: january,
            end_date: None,
            count: Some(6),
        },
        created_at: Timestamp::UNIX_EPOCH,
    };
    let state = SeriesState {
        series: Series::Rule(rule.clone()),
        rows: Vec::new(),
        tombstones: Vec::new(),
    };
    let march = Target::Projected(Handle::Recurrence {
        rule_id: rule.id,
        date: Date::new(9999, 3, 15).unwrap(),
    });
    let to = |month| TransactionChanges {
        date: Some(Date::new(9999, month, 15).unwrap()),
        ..Default::default()
    };
    let error = patch(&state, march, Scope::Future, &to(10)).unwrap_err();
    assert_eq!(fields(error), ["date"]);
    let (write, _) = patch(&state, march, Scope::Future, &to(9)).unwrap();
    let moved = write.put_rules.iter().find(|r| r.id != rule.id).unwrap();
    assert_eq!(
        moved.schedule.nth(3),
        Some(Date::new(9999, 12, 15).unwrap())
    );
    assert!(moved.schedule.stays_in_calendar());
}
