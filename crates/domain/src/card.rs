//! Credit-card billing cycles and bill statuses, as a Brazilian card user
//! knows them: purchases up to the close day fall into that month's bill,
//! due some days later; days beyond a short month's end clamp to its last
//! day. A bill is named by the year and month of its due date.

use jiff::ToSpan;
use jiff::civil::Date;

use crate::account::CreditSettings;
use crate::{AccountId, Money};

/// A calendar year and month: a bill is named by its due date's, and the
/// overview sums one whole month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BillMonth {
    pub year: i16,
    pub month: i8,
}

impl BillMonth {
    pub fn of(date: Date) -> Self {
        BillMonth {
            year: date.year(),
            month: date.month(),
        }
    }

    pub fn next(self) -> Self {
        if self.month == 12 {
            BillMonth {
                year: self.year.saturating_add(1),
                month: 1,
            }
        } else {
            BillMonth {
                year: self.year,
                month: self.month + 1,
            }
        }
    }

    pub fn prev(self) -> Self {
        if self.month == 1 {
            BillMonth {
                year: self.year.saturating_sub(1),
                month: 12,
            }
        } else {
            BillMonth {
                year: self.year,
                month: self.month - 1,
            }
        }
    }

    /// `day` of this month, clamped to its last day (31 -> Feb 28).
    pub fn day(self, day: u8) -> Date {
        let first = Date::new(self.year, self.month, 1).unwrap_or(Date::MIN);
        let last = first.last_of_month().day();
        let day = i8::try_from(day).unwrap_or(i8::MAX).clamp(1, last);
        Date::new(self.year, self.month, day).unwrap_or(first)
    }
}

impl BillMonth {
    /// `YYYY-MM`, as stored on payment rows.
    pub fn key(self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }

    pub fn parse_key(text: &str) -> Option<Self> {
        let (year, month) = text.split_once('-')?;
        let (year, month): (i16, i8) = (year.parse().ok()?, month.parse().ok()?);
        (text.len() == 7 && (1..=12).contains(&month)).then_some(BillMonth { year, month })
    }
}

/// What makes a stored row one leg of a bill payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaymentLeg {
    pub card_id: AccountId,
    pub month: BillMonth,
    pub group: uuid::Uuid,
    /// The bank-side leg (it carries `bill_to_account_id` = the card); the
    /// other is the hidden CREDIT on the card.
    pub bank_side: bool,
}

/// One billing cycle: purchases dated `start..=close` make the bill due on
/// `due`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub month: BillMonth,
    pub start: Date,
    pub close: Date,
    pub due: Date,
}

impl Cycle {
    pub fn contains(&self, date: Date) -> bool {
        self.start <= date && date <= self.close
    }
}

/// The cycles of one card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycles {
    close_day: u8,
    due_day: u8,
}

impl Cycles {
    pub fn new(close_day: u8, due_day: u8) -> Self {
        Cycles {
            close_day: close_day.clamp(1, 31),
            due_day: due_day.clamp(1, 31),
        }
    }

    pub fn of(settings: &CreditSettings) -> Self {
        Self::new(settings.close_day, settings.due_day)
    }

    /// Whether the bill closes in the month before its due month (close day
    /// on or after the due day, e.g. close 29, due 5).
    fn closes_month_before(&self) -> bool {
        self.close_day >= self.due_day
    }

    fn close_of(&self, month: BillMonth) -> Date {
        let close_month = if self.closes_month_before() {
            month.prev()
        } else {
            month
        };
        close_month.day(self.close_day)
    }

    /// The cycle of the bill due in `month`.
    pub fn cycle(&self, month: BillMonth) -> Cycle {
        let close = self.close_of(month);
        let previous_close = self.close_of(month.prev());
        Cycle {
            month,
            start: previous_close
                .checked_add(1.day())
                .unwrap_or(previous_close),
            close,
            due: month.day(self.due_day),
        }
    }

    /// The bill a card entry dated `date` belongs to (a purchase on the
    /// close day still makes that bill).
    pub fn month_of(&self, date: Date) -> BillMonth {
        let calendar = BillMonth::of(date);
        let closing_here = if self.closes_month_before() {
            calendar.next()
        } else {
            calendar
        };
        if date <= calendar.day(self.close_day) {
            closing_here
        } else {
            closing_here.next()
        }
    }

    /// The cycle holding `date`.
    pub fn cycle_of(&self, date: Date) -> Cycle {
        self.cycle(self.month_of(date))
    }

    /// Cycles whose due date lies in `[from, to]`, oldest first.
    pub fn due_between(&self, from: Date, to: Date) -> Vec<Cycle> {
        let mut out = Vec::new();
        // The bill due in from's month, or the month before, may be the first.
        let mut month = BillMonth::of(from).prev();
        loop {
            let cycle = self.cycle(month);
            if cycle.due > to {
                return out;
            }
            if cycle.due >= from {
                out.push(cycle);
            }
            month = month.next();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum BillStatus {
    /// Open: the cycle has not closed.
    Aberta,
    /// Closed, not due yet.
    Fechada,
    /// Past its due date and not paid.
    Vencida,
    /// Payments cover the amount.
    Paga,
}

impl BillStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BillStatus::Aberta => "aberta",
            BillStatus::Fechada => "fechada",
            BillStatus::Vencida => "vencida",
            BillStatus::Paga => "paga",
        }
    }
}

/// A bill's status on `today`: `paga` once payments reach the amount
/// (an empty bill only once its cycle has closed: purchases may still come
/// in); otherwise by the calendar.
pub fn status(cycle: &Cycle, amount: Money, paid: Money, today: Date) -> BillStatus {
    if paid >= amount && (paid.is_positive() || cycle.close < today) {
        BillStatus::Paga
    } else if today <= cycle.close {
        BillStatus::Aberta
    } else if today <= cycle.due {
        BillStatus::Fechada
    } else {
        BillStatus::Vencida
    }
}

/// What is left to pay (never negative: overpayment is a credit, not debt).
pub fn outstanding(amount: Money, paid: Money) -> Money {
    amount
        .checked_sub(paid)
        .filter(|left| left.is_positive())
        .unwrap_or(Money::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn m(year: i16, month: i8) -> BillMonth {
        BillMonth { year, month }
    }

    #[test]
    fn close_before_due_closes_in_the_due_month() {
        let c = Cycles::new(3, 10);
        let cycle = c.cycle(m(2026, 11));
        assert_eq!(cycle.close, date(2026, 11, 3));
        assert_eq!(cycle.due, date(2026, 11, 10));
        assert_eq!(cycle.start, date(2026, 10, 4));
        assert_eq!(c.month_of(date(2026, 11, 3)), m(2026, 11), "close day");
        assert_eq!(c.month_of(date(2026, 11, 4)), m(2026, 12));
        assert_eq!(c.month_of(date(2026, 10, 4)), m(2026, 11));
    }

    #[test]
    fn close_after_due_closes_the_month_before() {
        // Due 5, close 29 (cycle_auto): the December bill closes on Nov 29.
        let c = Cycles::new(29, 5);
        let cycle = c.cycle(m(2026, 12));
        assert_eq!(cycle.close, date(2026, 11, 29));
        assert_eq!(cycle.due, date(2026, 12, 5));
        assert_eq!(cycle.start, date(2026, 10, 30));
        assert_eq!(c.month_of(date(2026, 11, 29)), m(2026, 12));
        assert_eq!(c.month_of(date(2026, 11, 30)), m(2027, 1));
        assert_eq!(c.month_of(date(2026, 12, 29)), m(2027, 1));
        assert_eq!(c.month_of(date(2026, 12, 31)), m(2027, 2));
    }

    #[test]
    fn close_31_clamps_to_short_months() {
        let c = Cycles::new(31, 8);
        // The March bill closes on the last day of February.
        assert_eq!(c.cycle(m(2026, 3)).close, date(2026, 2, 28));
        assert_eq!(c.cycle(m(2028, 3)).close, date(2028, 2, 29), "leap year");
        assert_eq!(c.cycle(m(2026, 3)).start, date(2026, 2, 1));
        assert_eq!(c.cycle(m(2026, 4)).start, date(2026, 3, 1));
        assert_eq!(c.month_of(date(2026, 2, 28)), m(2026, 3));
        assert_eq!(c.month_of(date(2026, 3, 1)), m(2026, 4));
        // Due 31 clamps too.
        let d = Cycles::new(24, 31);
        assert_eq!(d.cycle(m(2026, 2)).due, date(2026, 2, 28));
        assert_eq!(d.cycle(m(2026, 4)).due, date(2026, 4, 30));
    }

    #[test]
    fn cycles_tile_the_calendar() {
        // Every day of four years falls into exactly one cycle, whose month
        // month_of names, for many card settings.
        for (close, due) in [
            (3, 10),
            (29, 5),
            (31, 8),
            (28, 28),
            (1, 31),
            (30, 1),
            (15, 25),
        ] {
            let c = Cycles::new(close, due);
            let mut day = date(2024, 1, 1);
            while day <= date(2027, 12, 31) {
                let cycle = c.cycle_of(day);
                assert!(cycle.contains(day), "{close}/{due}: {day} not in {cycle:?}");
                assert!(!c.cycle(cycle.month.next()).contains(day));
                assert!(!c.cycle(cycle.month.prev()).contains(day));
                assert!(cycle.close <= cycle.due, "{close}/{due}: {cycle:?}");
                day = day.tomorrow().unwrap();
            }
        }
    }

    #[test]
    fn due_between_lists_bills_by_due_date() {
        let c = Cycles::new(3, 10);
        let months: Vec<BillMonth> = c
            .due_between(date(2026, 1, 10), date(2026, 3, 9))
            .iter()
            .map(|cy| cy.month)
            .collect();
        assert_eq!(months, [m(2026, 1), m(2026, 2)]);
        assert!(
            c.due_between(date(2026, 1, 11), date(2026, 2, 9))
                .is_empty()
        );
    }

    #[test]
    fn status_follows_the_calendar_until_paid() {
        let c = Cycles::new(3, 10).cycle(m(2026, 11));
        let amount = Money::from_cents(10_000);
        let none = Money::ZERO;
        assert_eq!(
            status(&c, amount, none, date(2026, 11, 3)),
            BillStatus::Aberta
        );
        assert_eq!(
            status(&c, amount, none, date(2026, 11, 4)),
            BillStatus::Fechada
        );
        assert_eq!(
            status(&c, amount, none, date(2026, 11, 10)),
            BillStatus::Fechada
        );
        assert_eq!(
            status(&c, amount, none, date(2026, 11, 11)),
            BillStatus::Vencida
        );
        // A payment between close and due settles it.
        let paid = Money::from_cents(10_000);
        assert_eq!(
            status(&c, amount, paid, date(2026, 11, 5)),
            BillStatus::Paga
        );
        let part = Money::from_cents(4_000);
        assert_eq!(
            status(&c, amount, part, date(2026, 11, 11)),
            BillStatus::Vencida
        );
        assert_eq!(outstanding(amount, part), Money::from_cents(6_000));
        assert_eq!(outstanding(amount, Money::from_cents(12_000)), Money::ZERO);
    }

    #[test]
    fn an_empty_bill_is_paid_only_once_closed() {
        let c = Cycles::new(3, 10).cycle(m(2026, 12));
        let none = Money::ZERO;
        assert_eq!(
            status(&c, none, none, date(2026, 11, 20)),
            BillStatus::Aberta
        );
        assert_eq!(status(&c, none, none, date(2026, 12, 4)), BillStatus::Paga);
        // Paid ahead in full: paid, even while open.
        let amount = Money::from_cents(5_000);
        assert_eq!(
            status(&c, amount, amount, date(2026, 11, 20)),
            BillStatus::Paga
        );
    }
}
