//! The demo user's budgets: up to a dozen monthly limits over the top
//! categories it spends most in (subcategories included), set near what those categories spent lately (some a
//! little above, some below), so the budgets status and the reports show
//! every level: ok, warning and over.

use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::HashMap;

use cofre_domain::budget::{Budget, LimitChange};
use cofre_domain::card::BillMonth;
use cofre_domain::transaction::{TxStatus, TxType};
use cofre_domain::{BudgetId, CategoryId, Money, UserId};
use cofre_store::ImportBatch;

/// How many budgets the demo sets.
pub(super) const DEMO_BUDGETS: usize = 12;

/// Limits as a share (percent) of the recent monthly average, in turn.
const SHARES: [i64; 4] = [130, 95, 110, 80];

/// Months of history the limits are set from.
const RECENT_MONTHS: i32 = 3;

/// `tops` maps each category to the top of its tree: a budget covers its
/// subcategories, so the limits are set from their spending too.
pub(super) fn demo_budgets(
    user: UserId,
    batch: &ImportBatch,
    tops: &HashMap<CategoryId, CategoryId>,
    now: Timestamp,
    today: Date,
) -> Vec<Budget> {
    let current = BillMonth::of(today);
    let Some(first) = BillMonth::from_index(current.index() - RECENT_MONTHS) else {
        return Vec::new();
    };
    // Spending per top category, and per subcategory on its own: a small
    // history may spend in fewer than a dozen top categories, and then its
    // busiest subcategories get a budget of their own too.
    let mut spent: HashMap<CategoryId, i64> = HashMap::new();
    let mut sub_spent: HashMap<CategoryId, i64> = HashMap::new();
    for row in &batch.rows {
        let s = &row.state;
        let month = BillMonth::of(s.date);
        if s.tx_type == TxType::Debit
            && s.status == TxStatus::Posted
            && !s.hide_from_results
            && row.payment.is_none()
            && month >= first
            && month < current
            && let Some(category) = s.category_id
        {
            let top = tops.get(&category).copied().unwrap_or(category);
            *spent.entry(top).or_default() += s.amount.cents();
            if top != category {
                *sub_spent.entry(category).or_default() += s.amount.cents();
            }
        }
    }
    let by_spending = |map: HashMap<CategoryId, i64>| {
        let mut list: Vec<(CategoryId, i64)> = map.into_iter().collect();
        list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        list
    };
    let mut ranked = by_spending(spent);
    ranked.extend(by_spending(sub_spent));
    let starts_on = BillMonth::from_index(current.index() - 12).unwrap_or(current);
    ranked
        .into_iter()
        .take(DEMO_BUDGETS)
        .enumerate()
        .map(|(i, (category_id, total))| {
            let average = total / i64::from(RECENT_MONTHS);
            // Rounded up to whole tens of reais.
            let share = average * SHARES[i % SHARES.len()] / 100;
            let limit = (share + 999) / 1_000 * 1_000;
            Budget {
                id: BudgetId::new(),
                user_id: user,
                category_id,
                include_subcategories: true,
                rollover: i % 3 == 2,
                starts_on,
                ends_on: None,
                limits: vec![LimitChange {
                    from_month: starts_on,
                    amount: Money::from_cents(limit.max(1_000)),
                }],
                created_at: now,
            }
        })
        .collect()
}
