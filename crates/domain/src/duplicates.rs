//! The duplicate finder: stored rows that look like the same entry typed
//! (or imported) twice. Rows match when their descriptions are equal once
//! trimmed and case-folded, and their amounts and types are equal; a group
//! holds such rows whose dates lie at most [`MAX_DAYS_APART`] days apart.

use jiff::ToSpan;
use jiff::civil::Date;
use std::collections::BTreeMap;

use crate::text::lower;
use crate::time::{MAX_DATE, MIN_DATE};
use crate::transaction::Transaction;

/// The widest gap, in days, between any two rows of one group.
pub const MAX_DAYS_APART: i32 = 3;

/// Days analysed when the client names no period: the last 90, today included.
pub const DEFAULT_PERIOD_DAYS: i32 = 90;

/// The period analysed when `from` and/or `to` are omitted: `to` defaults
/// to today (or to `from` + 89 days when only `from` is given), `from` to
/// 89 days before `to`.
pub fn period(from: Option<Date>, to: Option<Date>, today: Date) -> (Date, Date) {
    let back = (DEFAULT_PERIOD_DAYS - 1).days();
    match (from, to) {
        (Some(from), Some(to)) => (from, to),
        (None, Some(to)) => (days_before(to, back), to),
        (Some(from), None) if from > today => (from, days_after(from, back)),
        (Some(from), None) => (from, today),
        (None, None) => (days_before(today, back), today),
    }
}

/// `date` minus `span`, stopping at the first day of the calendar.
fn days_before(date: Date, span: jiff::Span) -> Date {
    date.checked_sub(span).map_or(MIN_DATE, |d| d.max(MIN_DATE))
}

/// `date` plus `span`, stopping at the last day of the calendar.
fn days_after(date: Date, span: jiff::Span) -> Date {
    date.checked_add(span).map_or(MAX_DATE, |d| d.min(MAX_DATE))
}

/// The rows of one group, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateGroup {
    pub rows: Vec<Transaction>,
}

type Key = (String, i64, &'static str);

fn key(row: &Transaction) -> Key {
    (
        lower(row.state.description.trim()),
        row.state.amount.cents(),
        row.state.tx_type.as_str(),
    )
}

fn days_between(earlier: Date, later: Date) -> i32 {
    earlier
        .until(later)
        .map_or(i32::MAX, |span| span.get_days())
}

/// Groups the rows. Within a key, rows are taken oldest first and a group
/// runs from its first row up to [`MAX_DAYS_APART`] days later, so every two
/// rows of a group are at most that far apart; a group needs two rows.
/// Groups come newest first.
pub fn find(rows: Vec<Transaction>) -> Vec<DuplicateGroup> {
    let mut by_key: BTreeMap<Key, Vec<Transaction>> = BTreeMap::new();
    for row in rows {
        by_key.entry(key(&row)).or_default().push(row);
    }
    let mut groups = Vec::new();
    for mut list in by_key.into_values() {
        list.sort_by_cached_key(|r| (r.state.date, r.id.to_string()));
        let mut current: Vec<Transaction> = Vec::new();
        for row in list {
            let fits = current.first().is_some_and(|first| {
                days_between(first.state.date, row.state.date) <= MAX_DAYS_APART
            });
            if !fits {
                if current.len() > 1 {
                    groups.push(DuplicateGroup {
                        rows: std::mem::take(&mut current),
                    });
                }
                current.clear();
            }
            current.push(row);
        }
        if current.len() > 1 {
            groups.push(DuplicateGroup { rows: current });
        }
    }
    groups.sort_by_cached_key(|g| {
        let first = &g.rows[0];
        (
            std::cmp::Reverse(first.state.date),
            lower(first.state.description.trim()),
            first.id.to_string(),
        )
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transaction::{EntryId, TransactionState, TxStatus, TxType};
    use crate::{AccountId, Money, TransactionId};
    use jiff::civil::date;

    fn row(description: &str, cents: i64, tx_type: TxType, day: Date) -> Transaction {
        let state = TransactionState {
            date: day,
            tx_type,
            status: TxStatus::Posted,
            amount: Money::from_cents(cents),
            description: description.into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
            hide_from_results: false,
        };
        let id = EntryId::Stored(TransactionId::new());
        Transaction::plain(id, AccountId::new(), "BRL".into(), state)
    }

    fn sizes(groups: &[DuplicateGroup]) -> Vec<usize> {
        groups.iter().map(|g| g.rows.len()).collect()
    }

    #[test]
    fn matches_description_ignoring_case_and_edge_spaces() {
        let d = date(2026, 11, 10);
        let groups = find(vec![
            row("Padaria", 1250, TxType::Debit, d),
            row("  PADARIA ", 1250, TxType::Debit, d),
            row("Padaria", 1250, TxType::Credit, d),
            row("Padaria", 1251, TxType::Debit, d),
            row("Padaria Real", 1250, TxType::Debit, d),
        ]);
        assert_eq!(sizes(&groups), [2]);
    }

    #[test]
    fn three_days_apart_match_four_do_not() {
        let groups = find(vec![
            row("Uber", 2000, TxType::Debit, date(2026, 11, 1)),
            row("Uber", 2000, TxType::Debit, date(2026, 11, 4)),
        ]);
        assert_eq!(sizes(&groups), [2]);
        let groups = find(vec![
            row("Uber", 2000, TxType::Debit, date(2026, 11, 1)),
            row("Uber", 2000, TxType::Debit, date(2026, 11, 5)),
        ]);
        assert!(groups.is_empty());
    }

    #[test]
    fn a_long_chain_splits_so_no_group_spans_more_than_three_days() {
        // Every other day for ten days: no group may hold rows 4+ days apart.
        let rows = (0..6)
            .map(|i| row("Café", 500, TxType::Debit, date(2026, 3, 1 + 2 * i)))
            .collect();
        let groups = find(rows);
        assert_eq!(sizes(&groups), [2, 2, 2]);
        for g in &groups {
            let first = g.rows.first().unwrap().state.date;
            let last = g.rows.last().unwrap().state.date;
            assert!(days_between(first, last) <= MAX_DAYS_APART);
        }
    }

    #[test]
    fn month_boundaries_count_calendar_days() {
        let groups = find(vec![
            row("Aluguel", 150_000, TxType::Debit, date(2026, 2, 27)),
            row("Aluguel", 150_000, TxType::Debit, date(2026, 3, 2)),
        ]);
        assert_eq!(sizes(&groups), [2]);
    }

    #[test]
    fn groups_come_newest_first_and_rows_oldest_first() {
        let groups = find(vec![
            row("B", 100, TxType::Debit, date(2026, 5, 2)),
            row("A", 100, TxType::Debit, date(2026, 1, 2)),
            row("B", 100, TxType::Debit, date(2026, 5, 1)),
            row("A", 100, TxType::Debit, date(2026, 1, 1)),
        ]);
        assert_eq!(groups[0].rows[0].state.description, "B");
        assert_eq!(groups[0].rows[0].state.date, date(2026, 5, 1));
        assert_eq!(groups[1].rows[0].state.date, date(2026, 1, 1));
    }

    #[test]
    fn default_period_is_the_last_90_days() {
        let today = date(2026, 11, 22);
        assert_eq!(period(None, None, today), (date(2026, 8, 25), today));
        assert_eq!(
            period(Some(date(2026, 11, 1)), None, today),
            (date(2026, 11, 1), today)
        );
        assert_eq!(
            period(None, Some(date(2026, 3, 31)), today),
            (date(2026, 1, 1), date(2026, 3, 31))
        );
        assert_eq!(
            period(Some(date(2027, 1, 1)), None, today),
            (date(2027, 1, 1), date(2027, 3, 31))
        );
        // The default period stops at the ends of the calendar.
        assert_eq!(
            period(None, Some(date(1, 1, 10)), today),
            (MIN_DATE, date(1, 1, 10))
        );
        assert_eq!(
            period(Some(date(9999, 12, 1)), None, today),
            (date(9999, 12, 1), MAX_DATE)
        );
    }
}
