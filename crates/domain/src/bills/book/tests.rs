//! The book's bills and used limit, and its sums built in one go, day by
//! day, or brought up to date month by month: all the same.

use super::*;
use crate::TransactionId;
use crate::bills::{Charge, DayTotal, Payment, open_total};
use crate::card::BillStatus;
use jiff::civil::date;
use proptest::prelude::*;

fn m(year: i16, month: i8) -> BillMonth {
    BillMonth::new(year, month).unwrap()
}

fn day(date: Date, tx_type: TxType, cents: i64) -> DayTotal {
    DayTotal {
        date,
        tx_type,
        installment: false,
        amount: Money::from_cents(cents),
    }
}

fn book() -> CardBook {
    // Close 3, due 10. October bill: Sep 4..Oct 3; November: Oct 4..Nov 3.
    CardBook::new(
        Cycles::new(3, 10),
        &[
            day(date(2026, 9, 20), TxType::Debit, 10_000),
            day(date(2026, 10, 3), TxType::Debit, 5_000), // close day: October bill
            day(date(2026, 10, 4), TxType::Debit, 20_000),
            day(date(2026, 10, 20), TxType::Credit, 2_000), // a refund
            day(date(2026, 11, 10), TxType::Debit, 7_000),
        ],
        &[Charge {
            date: date(2027, 1, 15),
            tx_type: TxType::Debit,
            installment: true,
            amount: Money::from_cents(3_000),
        }],
        vec![Payment {
            id: TransactionId::new(),
            month: m(2026, 10),
            amount: Money::from_cents(15_000),
        }],
    )
}

#[test]
fn amounts_net_refunds_and_skip_payments() {
    let today = date(2026, 11, 22);
    let october = book().bill(m(2026, 10), today).unwrap();
    assert_eq!(october.amount, Money::from_cents(15_000));
    assert_eq!(october.status, BillStatus::Paga);
    assert_eq!(october.outstanding, Money::ZERO);
    assert!(!october.amount_is_estimate);
    let november = book().bill(m(2026, 11), today).unwrap();
    assert_eq!(november.amount, Money::from_cents(18_000));
    assert_eq!(november.status, BillStatus::Vencida);
    let december = book().bill(m(2026, 12), today).unwrap();
    assert_eq!(december.status, BillStatus::Aberta);
    assert!(december.amount_is_estimate);
    let february = book().bill(m(2027, 2), today).unwrap();
    assert!(february.amount_is_estimate, "holds a projection");
    assert_eq!(february.amount, Money::from_cents(3_000));
}

#[test]
fn used_limit_is_open_bills_plus_later_installments() {
    let today = date(2026, 11, 22);
    let b = book();
    // Unpaid: November 180.00 (overdue) + December 70.00 (open).
    assert_eq!(open_total(&b.started(today)), Money::from_cents(25_000));
    assert_eq!(b.used_limit(today), Money::from_cents(28_000));
    let months: Vec<BillMonth> = b.started(today).iter().map(|x| x.cycle.month).collect();
    assert_eq!(months, [m(2026, 10), m(2026, 11), m(2026, 12)]);
}

#[test]
fn paying_a_later_bill_ahead_frees_the_limit() {
    let today = date(2026, 11, 22);
    let mut b = book();
    let pay_ahead = |b: &mut CardBook, cents| {
        Arc::make_mut(&mut b.payments)
            .entry(m(2027, 2))
            .or_default()
            .push(Payment {
                id: TransactionId::new(),
                month: m(2027, 2),
                amount: Money::from_cents(cents),
            })
    };
    pay_ahead(&mut b, 1_000);
    assert_eq!(b.used_limit(today), Money::from_cents(27_000));
    pay_ahead(&mut b, 9_000);
    assert_eq!(
        b.used_limit(today),
        Money::from_cents(25_000),
        "never below zero"
    );
}

#[test]
fn due_between_lists_every_cycle_even_empty_ones() {
    let bills = book().due_between(date(2026, 10, 1), date(2027, 1, 31), date(2026, 11, 22));
    let months: Vec<BillMonth> = bills.iter().map(|b| b.cycle.month).collect();
    assert_eq!(months, [m(2026, 10), m(2026, 11), m(2026, 12), m(2027, 1)]);
    assert_eq!(bills[3].amount, Money::ZERO);
}

fn days(first: Date) -> impl Strategy<Value = Vec<DayTotal>> {
    proptest::collection::vec(
        (
            0i64..1_500,
            any::<bool>(),
            any::<bool>(),
            -50_000i64..50_000,
        ),
        0..120,
    )
    .prop_map(move |raw| {
        raw.into_iter()
            .filter_map(|(offset, debit, installment, cents)| {
                Some(DayTotal {
                    date: first.checked_add(jiff::Span::new().days(offset)).ok()?,
                    tx_type: if debit { TxType::Debit } else { TxType::Credit },
                    installment,
                    amount: Money::from_cents(cents),
                })
            })
            .collect()
    })
}

/// The days a card keeps: sorted by date, type and kind, one of each, no
/// zero.
fn kept(mut days: Vec<DayTotal>) -> Vec<DayTotal> {
    let key = |d: &DayTotal| (d.date, d.tx_type == TxType::Credit, d.installment);
    days.retain(|d| d.amount.cents() != 0);
    days.sort_by_key(key);
    days.dedup_by_key(|d| key(d));
    days
}

/// Calendars of both ends and of a leap day.
fn starts() -> impl Strategy<Value = Date> {
    prop::sample::select(vec![
        date(2024, 1, 1),
        date(2028, 2, 27),
        crate::time::MIN_DATE,
        date(9995, 12, 1),
    ])
}

fn shifted(days: Vec<DayTotal>, start: Date) -> Vec<DayTotal> {
    let shift = start - date(2024, 1, 1);
    days.into_iter()
        .filter_map(|d| {
            Some(DayTotal {
                date: d.date.checked_add(shift).ok()?,
                ..d
            })
        })
        .collect()
}

/// Days as projected entries of the same dates and amounts.
fn as_charges(days: &[DayTotal]) -> Vec<Charge> {
    days.iter()
        .map(|d| Charge {
            date: d.date,
            tx_type: d.tx_type,
            installment: d.installment,
            amount: d.amount,
        })
        .collect()
}

proptest! {
    /// Sorted or not, near the calendar's ends or not, summing the days
    /// of one bill together gives the sums of one day at a time.
    #[test]
    fn runs_give_the_sums_of_single_days(
        close in 1u8..=31,
        due in 1u8..=31,
        start in starts(),
        days in days(date(2024, 1, 1)),
        sorted in any::<bool>(),
    ) {
        let mut days = shifted(days, start);
        if sorted {
            days.sort_by_key(|d| d.date);
        }
        let cycles = Cycles::new(close, due);
        let one_by_one = as_charges(&days);
        prop_assert_eq!(BillSums::of_days(cycles, &days), BillSums::of_charges(cycles, &one_by_one));
    }

    /// Sums brought up to date month by month, for the days that changed
    /// (added, removed, changed, and some unchanged named too), are the
    /// sums of the new days built afresh.
    #[test]
    fn sums_brought_up_to_date_are_the_fresh_ones(
        close in 1u8..=31,
        due in 1u8..=31,
        start in starts(),
        before in days(date(2024, 1, 1)),
        after in days(date(2024, 1, 1)),
        kept_share in 0usize..4,
        extra in proptest::collection::vec(0usize..1_000, 0..4),
    ) {
        let cycles = Cycles::new(close, due);
        let before = kept(shifted(before, start));
        // Some of the old days stay as they were, the rest change.
        let mut now: Vec<DayTotal> = before.iter().copied().step_by(kept_share + 1).collect();
        now.extend(shifted(after, start));
        let now = kept(now);
        let mut changed: Vec<Date> = before
            .iter()
            .filter(|d| !now.contains(d))
            .chain(now.iter().filter(|d| !before.contains(d)))
            .map(|d| d.date)
            .collect();
        changed.extend(extra.iter().filter_map(|i| before.get(*i).map(|d| d.date)));
        let old = BillSums::of_days(cycles, &before);
        let fresh = BillSums::of_days(cycles, &now);
        prop_assert_eq!(old.with_days_changed(&now, changed), Some(fresh));
    }
}

proptest! {
    /// The started bills are those of every month up to today's bill that
    /// holds a stored day, a projected entry or a payment, oldest first,
    /// each as the book gives it alone; the unpaid ones are those with
    /// something left to pay.
    #[test]
    fn started_bills_are_every_month_holding_something(
        close in 1u8..=31,
        due in 1u8..=31,
        stored in days(date(2024, 1, 1)),
        projected in days(date(2025, 6, 1)),
        paid in proptest::collection::vec((0i64..60, 1i64..30_000), 0..12),
        today in 0i64..1_200,
    ) {
        let cycles = Cycles::new(close, due);
        let today = date(2024, 1, 1).checked_add(jiff::Span::new().days(today)).unwrap();
        let charges = as_charges(&projected);
        let first = cycles.month_of(date(2024, 1, 1));
        let payments: Vec<Payment> = paid
            .iter()
            .filter_map(|(months, cents)| {
                let mut month = first;
                for _ in 0..*months {
                    month = month.next()?;
                }
                Some(Payment { id: TransactionId::new(), month, amount: Money::from_cents(*cents) })
            })
            .collect();
        let book = CardBook::new(cycles, &stored, &charges, payments.clone());
        let current = cycles.month_of(today);
        let mut months: Vec<BillMonth> = stored
            .iter()
            .map(|d| cycles.month_of(d.date))
            .chain(charges.iter().map(|c| cycles.month_of(c.date)))
            .chain(payments.iter().map(|p| p.month))
            .filter(|m| *m <= current)
            .collect();
        months.sort_unstable();
        months.dedup();
        let expected: Vec<Bill> = months.iter().filter_map(|m| book.bill(*m, today)).collect();
        prop_assert_eq!(&book.started(today), &expected);
        let unpaid: Vec<Bill> = expected.into_iter().filter(|b| b.outstanding.is_positive()).collect();
        prop_assert_eq!(book.unpaid_started(today), unpaid);
    }
}

#[test]
fn an_emptied_month_leaves_the_sums_and_a_month_netting_to_zero_stays() {
    let cycles = Cycles::new(3, 10);
    let purchase = day(date(2026, 10, 20), TxType::Debit, 5_000);
    let refund = day(date(2026, 10, 21), TxType::Credit, 5_000);
    let old = BillSums::of_days(cycles, &[purchase]);
    assert!(old.net.contains_key(&m(2026, 11)));
    let emptied = old.with_days_changed(&[], [purchase.date]).unwrap();
    assert_eq!(emptied, BillSums::empty(cycles));
    let netted = old
        .with_days_changed(&[purchase, refund], [refund.date])
        .unwrap();
    assert_eq!(netted.net.get(&m(2026, 11)), Some(&0));
    assert_eq!(netted, BillSums::of_days(cycles, &[purchase, refund]));
}

#[test]
fn unpaid_started_bills_are_the_started_ones_left_to_pay() {
    let today = date(2026, 11, 22);
    let b = book();
    let unpaid: Vec<Bill> = b
        .started(today)
        .into_iter()
        .filter(|bill| bill.outstanding.is_positive())
        .collect();
    assert_eq!(b.unpaid_started(today), unpaid);
    assert_eq!(unpaid.len(), 2, "October is paid");
    assert_eq!(
        b.used_limit_of(&b.started(today), today),
        b.used_limit_of(&unpaid, today)
    );
}

#[test]
fn later_installments_of_both_sums_count_in_the_limit() {
    let today = date(2026, 11, 22);
    let cycles = Cycles::new(3, 10);
    let installment = |d, cents| DayTotal {
        installment: true,
        ..day(d, TxType::Debit, cents)
    };
    let stored = [
        installment(date(2027, 1, 10), 1_000),
        installment(date(2027, 3, 10), 4_000),
    ];
    let projected = [
        Charge {
            date: date(2027, 1, 11),
            tx_type: TxType::Debit,
            installment: true,
            amount: Money::from_cents(2_000),
        },
        Charge {
            date: date(2027, 2, 11),
            tx_type: TxType::Debit,
            installment: true,
            amount: Money::from_cents(300),
        },
    ];
    let b = CardBook::new(cycles, &stored, &projected, Vec::new());
    assert_eq!(b.used_limit(today), Money::from_cents(7_300));
    let february = b.bill(m(2027, 2), today).unwrap();
    assert_eq!(february.amount, Money::from_cents(1_000 + 2_000));
    assert!(february.amount_is_estimate);
}
