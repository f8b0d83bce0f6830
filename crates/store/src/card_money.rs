//! A card's stored money as the store keeps it between reads: its day
//! sums, its bills' payments, and the bill sums built from them.

use std::sync::{Arc, OnceLock};

use cofre_domain::bills::{BillPayments, BillSums, DayTotal, Payment, by_bill};
use cofre_domain::card::Cycles;
use jiff::civil::Date;

/// A card's money: its rows summed per day (payment legs apart) and the
/// payments registered against its bills.
#[derive(Clone, Debug, Default)]
pub struct CardMoney {
    /// The card's money version these figures hold (at least): every
    /// change to a row on the card or billed to it bumps it.
    pub version: i64,
    /// Sorted by date, then type, then kind; no zero totals.
    pub days: Vec<DayTotal>,
    pub payments: Vec<Payment>,
    /// The bill sums of all the days, built by the first
    /// [`Self::stored_sums`] or brought over from the money before.
    sums: OnceLock<Arc<BillSums>>,
    /// The payments by bill, built by the first [`Self::bill_payments`].
    by_bill: OnceLock<Arc<BillPayments>>,
}

impl CardMoney {
    pub fn new(version: i64, days: Vec<DayTotal>, payments: Vec<Payment>) -> Self {
        Self {
            version,
            days,
            payments,
            sums: OnceLock::new(),
            by_bill: OnceLock::new(),
        }
    }

    /// The money `before` became when the days dated on `changed` took the
    /// values they have in `days` (all of them now): the bill sums
    /// `before` had built are brought up to date for the months of those
    /// days, not built again from the whole history.
    pub fn after(
        before: &CardMoney,
        version: i64,
        days: Vec<DayTotal>,
        changed: impl IntoIterator<Item = Date>,
        payments: Vec<Payment>,
    ) -> Self {
        let money = Self::new(version, days, payments);
        if let Some(sums) = before
            .sums
            .get()
            .and_then(|sums| sums.with_days_changed(&money.days, changed))
        {
            let _ = money.sums.set(Arc::new(sums));
        }
        money
    }

    /// The bill sums of all this money under `cycles`: built once and kept
    /// with the money, so the whole history is bucketed into bills once,
    /// and brought up to date by a change of the card, not on every read.
    pub fn stored_sums(&self, cycles: Cycles) -> Arc<BillSums> {
        let build = || Arc::new(BillSums::of_days(cycles, &self.days));
        let kept = self.sums.get_or_init(build);
        if *kept.cycles() == cycles {
            kept.clone()
        } else {
            // The card's cycles changed since: rare, built afresh.
            build()
        }
    }

    /// The payments by the bill each pays, built once.
    pub fn bill_payments(&self) -> Arc<BillPayments> {
        self.by_bill
            .get_or_init(|| Arc::new(by_bill(self.payments.clone())))
            .clone()
    }

    /// About how many bytes this holds, the book it builds included.
    pub fn approx_bytes(&self) -> usize {
        use std::mem::size_of;
        // The book holds up to three entries per month the days touch
        // (bills fall within a month of their days).
        let months = self
            .days
            .windows(2)
            .filter(|pair| {
                (pair[0].date.year(), pair[0].date.month())
                    != (pair[1].date.year(), pair[1].date.month())
            })
            .count()
            + 2;
        size_of::<Self>()
            + self.days.capacity() * size_of::<DayTotal>()
            + self.payments.capacity() * size_of::<Payment>() * 2
            + (months + self.payments.len()) * 3 * 64
    }
}

#[cfg(test)]
mod tests {
    use cofre_domain::Money;
    use cofre_domain::bills::{BillSums, DayTotal};
    use cofre_domain::card::Cycles;
    use cofre_domain::transaction::TxType;
    use jiff::civil::date;

    use super::CardMoney;

    fn day(d: jiff::civil::Date, cents: i64) -> DayTotal {
        DayTotal {
            date: d,
            tx_type: TxType::Debit,
            installment: false,
            amount: Money::from_cents(cents),
        }
    }

    #[test]
    fn the_kept_sums_are_those_of_the_cycles_asked_for() {
        let days = vec![
            day(date(2026, 10, 3), 5_000),
            day(date(2026, 10, 20), 7_000),
        ];
        let money = CardMoney::new(1, days.clone(), Vec::new());
        // Close 3: both days fall in different bills; close 25: one bill.
        for cycles in [Cycles::new(3, 10), Cycles::new(25, 5), Cycles::new(3, 10)] {
            assert_eq!(*money.stored_sums(cycles), BillSums::of_days(cycles, &days));
        }
        assert_ne!(
            money.stored_sums(Cycles::new(3, 10)),
            money.stored_sums(Cycles::new(25, 5))
        );
    }

    #[test]
    fn money_after_a_change_brings_the_built_sums_up_to_date() {
        let cycles = Cycles::new(3, 10);
        let before = CardMoney::new(1, vec![day(date(2026, 10, 20), 7_000)], Vec::new());
        let days = vec![
            day(date(2026, 10, 20), 7_000),
            day(date(2026, 11, 20), 1_000),
        ];
        // Nothing built before: nothing brought over, built when asked.
        let lazy = CardMoney::after(&before, 2, days.clone(), [date(2026, 11, 20)], Vec::new());
        assert!(lazy.sums.get().is_none());
        before.stored_sums(cycles);
        let after = CardMoney::after(&before, 2, days.clone(), [date(2026, 11, 20)], Vec::new());
        assert_eq!(
            after.sums.get().map(|s| (**s).clone()),
            Some(BillSums::of_days(cycles, &days))
        );
        assert_eq!(*after.stored_sums(cycles), *lazy.stored_sums(cycles));
    }
}
