//! A card's money bucketed by bill: the sums of its stored rows and of its
//! projected entries per bill month, and the payments registered against
//! each bill. Every bill, the open ones and the used limit follow from it.
//!
//! The two sums are built apart, each once from its own source, and shared
//! by every book made while that source is unchanged: the stored rows'
//! while the card's money is (a write to the card brings them up to date
//! month by month, [`BillSums::with_days_changed`]), the projected
//! entries' while the projection sources are. So a book of the whole
//! history costs nothing to make again, and a write to one card leaves the
//! others' books as they were.

use jiff::civil::Date;
use std::collections::BTreeMap;
use std::iter::Peekable;
use std::ops::Bound::{Excluded, Unbounded};
use std::sync::Arc;

use super::{Bill, Charge, DayTotal, Payment, open_total};
use crate::Money;
use crate::card::{BillMonth, Cycle, Cycles, outstanding, status};
use crate::transaction::TxType;

fn signed(tx_type: TxType, amount: Money) -> i64 {
    match tx_type {
        TxType::Debit => amount.cents(),
        TxType::Credit => -amount.cents(),
    }
}

/// One card's money per bill month under one set of cycles: the net of
/// its charges (DEBITs less CREDITs) and its installment DEBITs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BillSums {
    cycles: Cycles,
    /// Every month with something dated in its cycle, even when it nets to
    /// zero.
    net: BTreeMap<BillMonth, i64>,
    /// The months with installment DEBITs: the used limit counts those of
    /// bills not started yet.
    installments: BTreeMap<BillMonth, i64>,
}

/// Consecutive stored days of one bill, summed before they reach the sums.
struct Run {
    month: BillMonth,
    /// The days `month_of` gives `month`: its cycle.
    start: Date,
    close: Date,
    net: i64,
    /// Installment DEBITs, when there was one.
    installments: Option<i64>,
}

impl Run {
    fn of(cycles: &Cycles, date: Date) -> Self {
        let month = cycles.month_of(date);
        // A cycle that does not hold the day (none should) takes that day
        // alone.
        let (start, close) = match cycles.cycle(month) {
            Some(c) if c.start <= date && date <= c.close => (c.start, c.close),
            _ => (date, date),
        };
        Run {
            month,
            start,
            close,
            net: 0,
            installments: None,
        }
    }

    fn holds(&self, date: Date) -> bool {
        self.start <= date && date <= self.close
    }

    fn add(&mut self, day: &DayTotal) {
        self.net = self.net.saturating_add(signed(day.tx_type, day.amount));
        if day.installment && day.tx_type == TxType::Debit {
            let sum = self.installments.get_or_insert(0);
            *sum = sum.saturating_add(day.amount.cents());
        }
    }
}

impl BillSums {
    /// Nothing yet.
    pub fn empty(cycles: Cycles) -> Self {
        BillSums {
            cycles,
            net: BTreeMap::new(),
            installments: BTreeMap::new(),
        }
    }

    /// The sums of a card's stored days. They come sorted: those of one
    /// bill are summed before they reach the maps, so a day costs a
    /// comparison rather than a month lookup and two map searches (a year
    /// of three cards' days is about a thousand of them). Out of order, a
    /// day starts a run of its own.
    pub fn of_days(cycles: Cycles, days: &[DayTotal]) -> Self {
        let mut sums = Self::empty(cycles);
        let mut run: Option<Run> = None;
        for d in days {
            let current = match run.take() {
                Some(current) if current.holds(d.date) => run.insert(current),
                ended => {
                    if let Some(ended) = ended {
                        sums.add_run(ended);
                    }
                    run.insert(Run::of(&cycles, d.date))
                }
            };
            current.add(d);
        }
        if let Some(ended) = run {
            sums.add_run(ended);
        }
        sums
    }

    /// The sums of projected entries.
    pub fn of_charges(cycles: Cycles, charges: &[Charge]) -> Self {
        let mut sums = Self::empty(cycles);
        sums.add_charges(charges);
        sums
    }

    pub fn cycles(&self) -> &Cycles {
        &self.cycles
    }

    /// These sums (of [`Self::of_days`]) after the card's days dated on
    /// `changed` took the values they have in `days`, all the card's days
    /// now, sorted by date: each month a changed day falls in is summed
    /// again from `days`, the others are kept. The same sums
    /// [`Self::of_days`] of `days` gives, for the cost of the months
    /// changed. None when a changed day lies outside its month's cycle
    /// (cycles never leave one out), for the caller to build afresh.
    pub fn with_days_changed(
        &self,
        days: &[DayTotal],
        changed: impl IntoIterator<Item = Date>,
    ) -> Option<Self> {
        let mut cycles: Vec<Cycle> = Vec::new();
        for date in changed {
            let cycle = self.cycles.cycle(self.cycles.month_of(date))?;
            if !cycle.contains(date) {
                return None;
            }
            if !cycles.iter().any(|c| c.month == cycle.month) {
                cycles.push(cycle);
            }
        }
        let mut sums = self.clone();
        for cycle in cycles {
            let first = days.partition_point(|d| d.date < cycle.start);
            let end = days.partition_point(|d| d.date <= cycle.close).max(first);
            let mut run = Run {
                month: cycle.month,
                start: cycle.start,
                close: cycle.close,
                net: 0,
                installments: None,
            };
            for d in &days[first..end] {
                run.add(d);
            }
            sums.net.remove(&cycle.month);
            sums.installments.remove(&cycle.month);
            if end > first {
                sums.add_run(run);
            }
        }
        Some(sums)
    }

    /// About how many bytes this holds.
    pub fn approx_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + (self.net.len() + self.installments.len()) * 64
    }

    fn add_charges(&mut self, charges: &[Charge]) {
        for c in charges {
            let month = self.cycles.month_of(c.date);
            let net = self.net.entry(month).or_default();
            *net = net.saturating_add(signed(c.tx_type, c.amount));
            if c.installment && c.tx_type == TxType::Debit {
                let sum = self.installments.entry(month).or_default();
                *sum = sum.saturating_add(c.amount.cents());
            }
        }
    }

    fn add_run(&mut self, run: Run) {
        let net = self.net.entry(run.month).or_default();
        *net = net.saturating_add(run.net);
        if let Some(cents) = run.installments {
            let sum = self.installments.entry(run.month).or_default();
            *sum = sum.saturating_add(cents);
        }
    }
}

/// The payments registered against a card's bills, by bill month.
pub type BillPayments = BTreeMap<BillMonth, Vec<Payment>>;

/// `payments` by the month of the bill each pays, in their order.
pub fn by_bill(payments: Vec<Payment>) -> BillPayments {
    let mut by = BillPayments::new();
    for payment in payments {
        by.entry(payment.month).or_default().push(payment);
    }
    by
}

/// Each month in either of two sorted sequences, with the sum of its
/// amounts in both.
fn merged(
    a: impl Iterator<Item = (BillMonth, i64)>,
    b: impl Iterator<Item = (BillMonth, i64)>,
) -> impl Iterator<Item = (BillMonth, i64)> {
    struct Merge<A: Iterator, B: Iterator>(Peekable<A>, Peekable<B>);
    impl<A, B> Iterator for Merge<A, B>
    where
        A: Iterator<Item = (BillMonth, i64)>,
        B: Iterator<Item = (BillMonth, i64)>,
    {
        type Item = (BillMonth, i64);
        fn next(&mut self) -> Option<Self::Item> {
            use std::cmp::Ordering::{Equal, Greater, Less};
            let order = match (self.0.peek(), self.1.peek()) {
                (Some(x), Some(y)) => x.0.cmp(&y.0),
                (Some(_), None) => Less,
                (None, Some(_)) => Greater,
                (None, None) => return None,
            };
            match order {
                Less => self.0.next(),
                Greater => self.1.next(),
                Equal => {
                    let (month, cents) = self.0.next()?;
                    let (_, more) = self.1.next()?;
                    Some((month, cents.saturating_add(more)))
                }
            }
        }
    }
    Merge(a.peekable(), b.peekable())
}

/// Everything known about one card's money, bucketed by bill: its stored
/// rows' sums, its projected entries' sums and its payments, each shared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardBook {
    stored: Arc<BillSums>,
    projected: Arc<BillSums>,
    payments: Arc<BillPayments>,
}

impl CardBook {
    pub fn new(
        cycles: Cycles,
        days: &[DayTotal],
        projected: &[Charge],
        payments: Vec<Payment>,
    ) -> Self {
        Self::of_parts(
            Arc::new(BillSums::of_days(cycles, days)),
            Arc::new(BillSums::of_charges(cycles, projected)),
            Arc::new(by_bill(payments)),
        )
    }

    /// The book of the stored money alone.
    pub fn stored(cycles: Cycles, days: &[DayTotal], payments: Vec<Payment>) -> Self {
        Self::new(cycles, days, &[], payments)
    }

    /// A book of sums built before, both under the same cycles (the
    /// stored ones' are the book's).
    pub fn of_parts(
        stored: Arc<BillSums>,
        projected: Arc<BillSums>,
        payments: Arc<BillPayments>,
    ) -> Self {
        debug_assert_eq!(stored.cycles, projected.cycles, "sums of other cycles");
        CardBook {
            stored,
            projected,
            payments,
        }
    }

    pub fn cycles(&self) -> &Cycles {
        &self.stored.cycles
    }

    /// The bill due in `month`; none for a month without a cycle (one
    /// that lies wholly before the calendar).
    pub fn bill(&self, month: BillMonth, today: Date) -> Option<Bill> {
        Some(self.bill_of(self.cycles().cycle(month)?, today))
    }

    /// The month's net amount and whether projected entries are in it.
    fn amount(&self, month: BillMonth) -> (Money, bool) {
        let stored = self.stored.net.get(&month).copied().unwrap_or(0);
        let projected = self.projected.net.get(&month).copied();
        let net = stored.saturating_add(projected.unwrap_or(0));
        (Money::from_cents(net), projected.is_some())
    }

    fn payments(&self, month: BillMonth) -> &[Payment] {
        self.payments.get(&month).map_or(&[][..], Vec::as_slice)
    }

    fn paid(&self, month: BillMonth) -> Money {
        Money::from_cents(
            self.payments(month)
                .iter()
                .fold(0_i64, |sum, p| sum.saturating_add(p.amount.cents())),
        )
    }

    fn bill_of(&self, cycle: Cycle, today: Date) -> Bill {
        let month = cycle.month;
        let (amount, projected) = self.amount(month);
        let paid = self.paid(month);
        Bill {
            cycle,
            amount,
            paid,
            outstanding: outstanding(amount, paid),
            amount_is_estimate: today <= cycle.close || projected,
            status: status(&cycle, amount, paid, today),
            payment_ids: self.payments(month).iter().map(|p| p.id).collect(),
        }
    }

    /// Bills whose due date lies in `[from, to]`, oldest first.
    pub fn due_between(&self, from: Date, to: Date, today: Date) -> Vec<Bill> {
        self.cycles()
            .due_between(from, to)
            .into_iter()
            .map(|cycle| self.bill_of(cycle, today))
            .collect()
    }

    /// The months with money or payments whose cycle has started by
    /// `today`, oldest first, each with its net amount (stored and
    /// projected) and what was paid against it: one walk over the three
    /// maps in step, each read once.
    fn started_months(&self, today: Date) -> impl Iterator<Item = (BillMonth, Money, Money)> {
        let current = self.cycles().month_of(today);
        let mut stored = self.stored.net.range(..=current).peekable();
        let mut projected = self.projected.net.range(..=current).peekable();
        let mut payments = self.payments.range(..=current).peekable();
        std::iter::from_fn(move || {
            let month = [
                stored.peek().map(|(m, _)| **m),
                projected.peek().map(|(m, _)| **m),
                payments.peek().map(|(m, _)| **m),
            ]
            .into_iter()
            .flatten()
            .min()?;
            let net = stored.next_if(|(m, _)| **m == month).map_or(0, |(_, c)| *c);
            let more = projected
                .next_if(|(m, _)| **m == month)
                .map_or(0, |(_, c)| *c);
            let paid = payments
                .next_if(|(m, _)| **m == month)
                .map_or(0, |(_, list)| {
                    list.iter()
                        .fold(0_i64, |sum, p| sum.saturating_add(p.amount.cents()))
                });
            Some((
                month,
                Money::from_cents(net.saturating_add(more)),
                Money::from_cents(paid),
            ))
        })
    }

    /// Every bill with money or payments whose cycle has started by
    /// `today` (past ones and the open one), oldest first: only the months
    /// that hold something, never a walk over the months between.
    pub fn started(&self, today: Date) -> Vec<Bill> {
        self.started_months(today)
            .filter_map(|(month, ..)| self.bill(month, today))
            .collect()
    }

    /// The bills of [`Self::started`] with something left to pay, all that
    /// the used limit and the open bills' total count: a paid bill is
    /// passed over before its cycle is worked out (ten years of history
    /// are a few hundred paid bills a card).
    pub fn unpaid_started(&self, today: Date) -> Vec<Bill> {
        self.started_months(today)
            .filter(|(_, amount, paid)| outstanding(*amount, *paid).is_positive())
            .filter_map(|(month, ..)| self.bill(month, today))
            .collect()
    }

    /// The used limit: every unpaid bill whose cycle has started, plus
    /// every installment of the bills after the open one (less what was
    /// already paid against such a bill: paying ahead frees the limit).
    pub fn used_limit(&self, today: Date) -> Money {
        self.used_limit_of(&self.unpaid_started(today), today)
    }

    /// [`Self::used_limit`] from the bills [`Self::started`] (or
    /// [`Self::unpaid_started`]) gave for `today`, for a caller that needs
    /// them for other figures too.
    pub fn used_limit_of(&self, started: &[Bill], today: Date) -> Money {
        let current = self.cycles().month_of(today);
        let after = (Excluded(current), Unbounded);
        let later: i64 = merged(
            self.stored.installments.range(after).map(|(m, c)| (*m, *c)),
            self.projected
                .installments
                .range(after)
                .map(|(m, c)| (*m, *c)),
        )
        .map(|(month, cents)| cents.saturating_sub(self.paid(month).cents()).max(0))
        .fold(0_i64, i64::saturating_add);
        Money::from_cents(open_total(started).cents().saturating_add(later))
    }
}

#[cfg(test)]
mod tests;
