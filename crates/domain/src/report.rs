//! Reports: the figures behind a client's charts, summed by the server
//! from the same entries the list endpoint shows. Spending per month and
//! group, and balances at the end of each interval of a period.

use jiff::ToSpan;
use jiff::civil::Date;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

use crate::card::BillMonth;
use crate::category::Category;
use crate::transaction::TxType;
use crate::{CategoryId, DomainError, Money};

/// Most months one report covers.
pub const MAX_REPORT_MONTHS: i32 = 36;

/// Most points of one balance series.
pub const MAX_POINTS: usize = 366;

/// What a spending report groups entries by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    Category,
    Tag,
    Account,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "category" => Some(GroupBy::Category),
            "tag" => Some(GroupBy::Tag),
            "account" => Some(GroupBy::Account),
            _ => None,
        }
    }
}

/// Money in and out of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub debit: Money,
    pub credit: Money,
}

impl Flow {
    /// Net spending: debit - credit.
    pub fn net(self) -> Money {
        self.debit.saturating_sub(self.credit)
    }

    fn add(&mut self, tx_type: TxType, amount: Money) {
        let slot = match tx_type {
            TxType::Debit => &mut self.debit,
            TxType::Credit => &mut self.credit,
        };
        *slot = slot.saturating_add(amount);
    }
}

/// Flows per month and group key (`None`: no category, no tag).
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    cells: BTreeMap<(BillMonth, Option<Uuid>), Flow>,
}

impl FlowTable {
    pub fn add(&mut self, month: BillMonth, key: Option<Uuid>, tx_type: TxType, amount: Money) {
        if amount == Money::ZERO {
            return;
        }
        self.cells
            .entry((month, key))
            .or_default()
            .add(tx_type, amount);
    }

    /// Non-empty cells, by month, then key (no key first).
    pub fn cells(&self) -> impl Iterator<Item = (BillMonth, Option<Uuid>, Flow)> + '_ {
        self.cells
            .iter()
            .filter(|(_, f)| *f != &Flow::default())
            .map(|((m, k), f)| (*m, *k, *f))
    }

    /// Each month's flows over every key.
    pub fn month_totals(&self) -> BTreeMap<BillMonth, Flow> {
        let mut out: BTreeMap<BillMonth, Flow> = BTreeMap::new();
        for ((month, _), flow) in &self.cells {
            let slot = out.entry(*month).or_default();
            slot.add(TxType::Debit, flow.debit);
            slot.add(TxType::Credit, flow.credit);
        }
        out
    }
}

/// Maps each category to the top of its tree, for reports that roll
/// subcategories into their parent. Walks are bounded by the number of
/// categories, so a cycle (never stored) cannot hang it.
pub fn top_categories(visible: &[Category]) -> HashMap<CategoryId, CategoryId> {
    let parents: HashMap<CategoryId, Option<CategoryId>> =
        visible.iter().map(|c| (c.id, c.parent_id)).collect();
    visible
        .iter()
        .map(|c| {
            let mut top = c.id;
            for _ in 0..visible.len() {
                match parents.get(&top).copied().flatten() {
                    Some(parent) if parents.contains_key(&parent) => top = parent,
                    _ => break,
                }
            }
            (c.id, top)
        })
        .collect()
}

/// The months from `from` to `to`, both included: at most
/// [`MAX_REPORT_MONTHS`], `to` not before `from`.
pub fn report_months(from: BillMonth, to: BillMonth) -> Result<(), DomainError> {
    if to < from {
        return Err(DomainError::field("to", "must not be before from"));
    }
    if to.index() - from.index() >= MAX_REPORT_MONTHS {
        return Err(DomainError::field(
            "to",
            format!("a report covers at most {MAX_REPORT_MONTHS} months"),
        ));
    }
    Ok(())
}

/// How far apart the points of a balance series are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    Day,
    Week,
    Month,
}

impl Interval {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "day" => Some(Interval::Day),
            "week" => Some(Interval::Week),
            "month" => Some(Interval::Month),
            _ => None,
        }
    }
}

/// The last day of each interval from `from` to `to` (the last one cut at
/// `to`): every day, every 7th day counted from `from`, or every month's
/// last day. At most [`MAX_POINTS`], else a validation error on `to`.
pub fn series_points(from: Date, to: Date, interval: Interval) -> Result<Vec<Date>, DomainError> {
    if to < from {
        return Err(DomainError::field("to", "must not be before from"));
    }
    let too_many = || {
        DomainError::field(
            "to",
            format!("the series would have more than {MAX_POINTS} points; widen the interval"),
        )
    };
    let mut points = Vec::new();
    let mut start = from;
    while start <= to {
        if points.len() == MAX_POINTS {
            return Err(too_many());
        }
        let end = match interval {
            Interval::Day => start,
            Interval::Week => start.checked_add(6.days()).unwrap_or(to),
            Interval::Month => start.last_of_month(),
        }
        .min(to);
        points.push(end);
        match end.tomorrow() {
            Ok(next) if end < to => start = next,
            _ => break,
        }
    }
    Ok(points)
}

/// A change of the balances on one day: money in the bank and card debt,
/// each a signed amount in cents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DayChange {
    pub date: Date,
    pub bank: i64,
    pub card_debt: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub date: Date,
    pub bank_balance: Money,
    pub card_debt: Money,
    pub net_worth: Money,
}

/// Balances at each of `points` (ascending): the stored POSTED history up
/// to each date, and after `today` the entries still to come.
/// - `posted_now`: the POSTED total of every row, whatever its date;
/// - `posted`: POSTED changes per day, every day after the first point;
/// - `future`: what is still to come (PENDING rows, projections, bills),
///   dated after `today`.
pub fn balance_series(
    points: &[Date],
    posted_now: DayChange,
    mut posted: Vec<DayChange>,
    mut future: Vec<DayChange>,
    today: Date,
) -> Vec<Point> {
    posted.sort_by_key(|c| c.date);
    future.retain(|c| c.date > today);
    future.sort_by_key(|c| c.date);
    // Balance at D = every POSTED row - those dated after D + what is to
    // come up to D. Walk both lists once, points ascending.
    let after_total = |changes: &[DayChange]| {
        changes.iter().fold((0_i64, 0_i64), |(b, d), c| {
            (b.saturating_add(c.bank), d.saturating_add(c.card_debt))
        })
    };
    let (mut after_bank, mut after_debt) = after_total(&posted);
    let (mut coming_bank, mut coming_debt) = (0_i64, 0_i64);
    let (mut p, mut f) = (0, 0);
    let mut out = Vec::with_capacity(points.len());
    for &date in points {
        while p < posted.len() && posted[p].date <= date {
            after_bank = after_bank.saturating_sub(posted[p].bank);
            after_debt = after_debt.saturating_sub(posted[p].card_debt);
            p += 1;
        }
        while f < future.len() && future[f].date <= date {
            coming_bank = coming_bank.saturating_add(future[f].bank);
            coming_debt = coming_debt.saturating_add(future[f].card_debt);
            f += 1;
        }
        let bank = posted_now
            .bank
            .saturating_sub(after_bank)
            .saturating_add(coming_bank);
        let debt = posted_now
            .card_debt
            .saturating_sub(after_debt)
            .saturating_add(coming_debt);
        out.push(Point {
            date,
            bank_balance: Money::from_cents(bank),
            card_debt: Money::from_cents(debt),
            net_worth: Money::from_cents(bank.saturating_sub(debt)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn points_end_each_interval_and_are_bounded() {
        let days = series_points(date(2026, 1, 1), date(2026, 12, 31), Interval::Day).unwrap();
        assert_eq!(days.len(), 365);
        assert!(series_points(date(2024, 1, 1), date(2025, 1, 1), Interval::Day).is_err());
        let weeks = series_points(date(2026, 1, 1), date(2026, 1, 20), Interval::Week).unwrap();
        assert_eq!(
            weeks,
            [date(2026, 1, 7), date(2026, 1, 14), date(2026, 1, 20)]
        );
        let months = series_points(date(2026, 1, 15), date(2026, 3, 10), Interval::Month).unwrap();
        assert_eq!(
            months,
            [date(2026, 1, 31), date(2026, 2, 28), date(2026, 3, 10)]
        );
        assert!(series_points(date(2026, 2, 1), date(2026, 1, 1), Interval::Day).is_err());
        let end = series_points(date(9999, 12, 30), date(9999, 12, 31), Interval::Week).unwrap();
        assert_eq!(end, [date(9999, 12, 31)]);
        assert!(series_points(date(1, 1, 1), date(9999, 12, 31), Interval::Month).is_err());
    }

    #[test]
    fn the_series_is_the_history_then_what_is_to_come() {
        let change = |d: Date, bank: i64, card_debt: i64| DayChange {
            date: d,
            bank,
            card_debt,
        };
        let today = date(2026, 3, 10);
        let points = [
            date(2026, 3, 1),
            date(2026, 3, 5),
            date(2026, 3, 10),
            date(2026, 3, 20),
        ];
        let series = balance_series(
            &points,
            change(today, 10_000, 3_000),
            vec![
                change(date(2026, 3, 5), 2_000, 500),
                change(date(2026, 3, 2), -1_000, 0),
            ],
            vec![
                change(date(2026, 3, 15), -3_000, -3_000),
                change(date(2026, 3, 9), 1, 1),
            ],
            today,
        );
        let banks: Vec<i64> = series.iter().map(|p| p.bank_balance.cents()).collect();
        assert_eq!(banks, [9_000, 10_000, 10_000, 7_000]);
        let debts: Vec<i64> = series.iter().map(|p| p.card_debt.cents()).collect();
        assert_eq!(debts, [2_500, 3_000, 3_000, 0]);
        assert_eq!(series[3].net_worth.cents(), 7_000);
    }

    #[test]
    fn flows_sum_per_month_and_key() {
        let m = BillMonth::parse_key("2026-03").unwrap();
        let key = Some(Uuid::nil());
        let mut t = FlowTable::default();
        t.add(m, key, TxType::Debit, Money::from_cents(500));
        t.add(m, key, TxType::Credit, Money::from_cents(200));
        t.add(m, None, TxType::Debit, Money::from_cents(1));
        let cells: Vec<_> = t.cells().collect();
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].2.net(), Money::from_cents(300));
        assert_eq!(t.month_totals()[&m].debit, Money::from_cents(501));
        assert!(report_months(m, BillMonth::parse_key("2029-02").unwrap()).is_ok());
        assert!(report_months(m, BillMonth::parse_key("2029-03").unwrap()).is_err());
    }
}
