//! A card's stored money as the store keeps it between reads: its day
//! sums, its bills' payments, and the book built from them.

use std::sync::OnceLock;

use cofre_domain::bills::{CardBook, DayTotal, Payment};
use cofre_domain::card::Cycles;

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
    /// The book of all of it, built by the first [`Self::stored_book`].
    book: OnceLock<CardBook>,
}

impl CardMoney {
    pub fn new(version: i64, days: Vec<DayTotal>, payments: Vec<Payment>) -> Self {
        Self {
            version,
            days,
            payments,
            book: OnceLock::new(),
        }
    }

    /// The book of all this money (no projected entries) under `cycles`:
    /// built once and kept with the money, so the whole history is bucketed
    /// into bills once per change of the card, not on every read.
    pub fn stored_book(&self, cycles: Cycles) -> CardBook {
        let build = || CardBook::stored(cycles, &self.days, self.payments.clone());
        let kept = self.book.get_or_init(build);
        if *kept.cycles() == cycles {
            kept.clone()
        } else {
            // The card's cycles changed since: rare, built afresh.
            build()
        }
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
    use cofre_domain::bills::{CardBook, DayTotal};
    use cofre_domain::card::{BillMonth, Cycles};
    use cofre_domain::transaction::TxType;
    use jiff::civil::date;

    use super::CardMoney;

    #[test]
    fn the_kept_book_is_the_one_of_the_cycles_asked_for() {
        let day = |d, cents| DayTotal {
            date: d,
            tx_type: TxType::Debit,
            installment: false,
            amount: Money::from_cents(cents),
        };
        let days = vec![
            day(date(2026, 10, 3), 5_000),
            day(date(2026, 10, 20), 7_000),
        ];
        let money = CardMoney::new(1, days.clone(), Vec::new());
        let today = date(2026, 11, 22);
        let (october, november) = (
            BillMonth::new(2026, 10).unwrap(),
            BillMonth::new(2026, 11).unwrap(),
        );
        let amounts = |book: &CardBook| {
            [october, november].map(|month| book.bill(month, today).unwrap().amount)
        };
        // Close 3: both days fall in different bills; close 25: one bill.
        for cycles in [Cycles::new(3, 10), Cycles::new(25, 5), Cycles::new(3, 10)] {
            let fresh = CardBook::stored(cycles, &days, Vec::new());
            assert_eq!(amounts(&money.stored_book(cycles)), amounts(&fresh));
        }
        assert_eq!(
            amounts(&money.stored_book(Cycles::new(3, 10))),
            [Money::from_cents(5_000), Money::from_cents(7_000)]
        );
    }
}
