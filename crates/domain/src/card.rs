//! Credit-card billing cycles and bill statuses, as a Brazilian card user
//! knows them: purchases up to the close day fall into that month's bill,
//! due some days later; days beyond a short month's end clamp to its last
//! day. A bill is named by the year and month of its due date.

use jiff::civil::Date;

use crate::account::CreditSettings;
use crate::time::{MAX_DATE, MIN_DATE};
use crate::{AccountId, Money};

/// A calendar year and month of the supported calendar (0001-01 to
/// 9999-12): a bill is named by its due date's, and the overview sums one
/// whole month. Only [`BillMonth::new`] and [`BillMonth::of`] make one, so
/// every month has days, and walking months ends at either end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BillMonth {
    year: i16,
    month: i8,
}

impl BillMonth {
    pub const FIRST: BillMonth = BillMonth { year: 1, month: 1 };
    pub const LAST: BillMonth = BillMonth {
        year: 9999,
        month: 12,
    };

    /// A month written in the code: a constant outside the supported
    /// calendar fails the build.
    pub const fn known(year: i16, month: i8) -> Self {
        assert!(year >= 1 && year <= 9999 && month >= 1 && month <= 12);
        BillMonth { year, month }
    }

    /// The month, when it lies in the supported calendar.
    pub fn new(year: i16, month: i8) -> Option<Self> {
        let candidate = BillMonth { year, month };
        ((1..=12).contains(&month) && (Self::FIRST..=Self::LAST).contains(&candidate))
            .then_some(candidate)
    }

    /// The month of `date`; a date outside the supported calendar (jiff
    /// reaches further) counts as its first or last month.
    pub fn of(date: Date) -> Self {
        let date = date.clamp(MIN_DATE, MAX_DATE);
        BillMonth {
            year: date.year(),
            month: date.month(),
        }
    }

    pub fn year(self) -> i16 {
        self.year
    }

    pub fn month(self) -> i8 {
        self.month
    }

    /// Months since 0001-01 (0 for it, 119 987 for 9999-12).
    pub fn index(self) -> i32 {
        (i32::from(self.year) - 1) * 12 + i32::from(self.month) - 1
    }

    /// The month `index` months after 0001-01, if in the calendar.
    pub fn from_index(index: i32) -> Option<Self> {
        let year = i16::try_from(index.div_euclid(12) + 1).ok()?;
        let month = i8::try_from(index.rem_euclid(12) + 1).ok()?;
        Self::new(year, month)
    }

    /// The month after; none after 9999-12.
    pub fn next(self) -> Option<Self> {
        Self::from_index(self.index() + 1)
    }

    /// The month before; none before 0001-01.
    pub fn prev(self) -> Option<Self> {
        Self::from_index(self.index() - 1)
    }

    /// The months from `first` to `last`, both included: a range whose
    /// length is known before it starts.
    pub fn range(first: BillMonth, last: BillMonth) -> impl DoubleEndedIterator<Item = BillMonth> {
        (first.index()..=last.index()).filter_map(Self::from_index)
    }

    /// `day` of this month, clamped to its last day (31 -> Feb 28).
    pub fn day(self, day: u8) -> Date {
        let day = i8::try_from(day).unwrap_or(i8::MAX).max(1);
        // Every BillMonth is a month of the calendar, so its first day
        // exists; the fallback is never taken.
        let first = Date::new(self.year, self.month, 1).unwrap_or(MIN_DATE);
        let day = day.min(first.days_in_month());
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
        (text.len() == 7).then_some(())?;
        Self::new(year, month)
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

    /// The close of the bill due in `month`; none when it would fall
    /// before the calendar (the bill due in 0001-01 of a card that closes
    /// the month before).
    fn close_of(&self, month: BillMonth) -> Option<Date> {
        let close_month = if self.closes_month_before() {
            month.prev()?
        } else {
            month
        };
        Some(close_month.day(self.close_day))
    }

    /// The cycle of the bill due in `month`; none for a bill whose cycle
    /// lies wholly before 0001-01-01. The calendar's ends bound the cycles
    /// at its edges: the first starts on 0001-01-01, and the last, due in
    /// 9999-12, closes on 9999-12-31 (the bill after it would be due in
    /// year 10000), so every day of the calendar is in exactly one cycle.
    pub fn cycle(&self, month: BillMonth) -> Option<Cycle> {
        let close = if month == BillMonth::LAST {
            MAX_DATE
        } else {
            self.close_of(month)?
        };
        let start = match month.prev().and_then(|prev| self.close_of(prev)) {
            Some(previous_close) => previous_close.tomorrow().ok()?,
            None => MIN_DATE,
        };
        Some(Cycle {
            month,
            start,
            close,
            due: month.day(self.due_day),
        })
    }

    /// The bill a card entry dated `date` belongs to (a purchase on the
    /// close day still makes that bill); days after the last close of
    /// the calendar belong to its last bill.
    pub fn month_of(&self, date: Date) -> BillMonth {
        let calendar = BillMonth::of(date);
        let closing_here = if self.closes_month_before() {
            calendar.next()
        } else {
            Some(calendar)
        };
        let month = if date <= calendar.day(self.close_day) {
            closing_here
        } else {
            closing_here.and_then(BillMonth::next)
        };
        month.unwrap_or(BillMonth::LAST)
    }

    /// The cycle holding `date`.
    pub fn cycle_of(&self, date: Date) -> Cycle {
        let month = self.month_of(date);
        // month_of names only bills with a cycle: the first day's bill is
        // the first one that has one.
        self.cycle(month).unwrap_or(Cycle {
            month,
            start: MIN_DATE,
            close: MAX_DATE,
            due: month.day(self.due_day),
        })
    }

    /// Cycles whose due date lies in `[from, to]`, oldest first. A bill is
    /// due in its own month, so only the months from `from`'s to `to`'s
    /// can hold one: the walk is that many months, counted up front.
    pub fn due_between(&self, from: Date, to: Date) -> Vec<Cycle> {
        if to < from {
            return Vec::new();
        }
        BillMonth::range(BillMonth::of(from), BillMonth::of(to))
            .filter_map(|month| self.cycle(month))
            .filter(|cycle| from <= cycle.due && cycle.due <= to)
            .collect()
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
        BillMonth::new(year, month).unwrap()
    }

    #[test]
    fn close_before_due_closes_in_the_due_month() {
        let c = Cycles::new(3, 10);
        let cycle = c.cycle(m(2026, 11)).unwrap();
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
        let cycle = c.cycle(m(2026, 12)).unwrap();
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
        assert_eq!(c.cycle(m(2026, 3)).unwrap().close, date(2026, 2, 28));
        assert_eq!(
            c.cycle(m(2028, 3)).unwrap().close,
            date(2028, 2, 29),
            "leap year"
        );
        assert_eq!(c.cycle(m(2026, 3)).unwrap().start, date(2026, 2, 1));
        assert_eq!(c.cycle(m(2026, 4)).unwrap().start, date(2026, 3, 1));
        assert_eq!(c.month_of(date(2026, 2, 28)), m(2026, 3));
        assert_eq!(c.month_of(date(2026, 3, 1)), m(2026, 4));
        // Due 31 clamps too.
        let d = Cycles::new(24, 31);
        assert_eq!(d.cycle(m(2026, 2)).unwrap().due, date(2026, 2, 28));
        assert_eq!(d.cycle(m(2026, 4)).unwrap().due, date(2026, 4, 30));
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
                assert!(!c.cycle(cycle.month.next().unwrap()).unwrap().contains(day));
                assert!(!c.cycle(cycle.month.prev().unwrap()).unwrap().contains(day));
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
        let c = Cycles::new(3, 10).cycle(m(2026, 11)).unwrap();
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
        let c = Cycles::new(3, 10).cycle(m(2026, 12)).unwrap();
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
