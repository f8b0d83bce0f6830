//! Budgets' month figures and the reports, computed from the entries the
//! list endpoint shows: stored rows summed by the store (from totals the
//! triggers keep), the projected entries of rules and plans, and in the
//! cashflow view the card bills. Every figure is a sum of list entries.

use jiff::civil::Date;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cofre_domain::account::AccountType;
use cofre_domain::budget::{Budget, MonthStatus, Spending, month_status};
use cofre_domain::card::BillMonth;
use cofre_domain::category::CategoryTree;
use cofre_domain::projection::Handle;
use cofre_domain::report::{DayChange, Point, balance_series};
use cofre_domain::transaction::{EntryId, Transaction, TransactionFilter, TxStatus, TxType};
use cofre_domain::view::{Hashing, MAX_PROJECTED, bills_page, each_projected};
use cofre_domain::{AccountId, CategoryId, Money, TagId, UserId};
use cofre_store::{AccountView, EntryTotal, Store, TotalsBy};

use crate::cards;
use crate::error::{ApiError, ApiResult};

/// Which entries a figure sums: the list endpoint's filter over whole
/// months.
#[derive(Clone, Debug)]
pub struct Scope {
    pub from: BillMonth,
    pub to: BillMonth,
    /// The cashflow view (bills on the paying account, no card rows).
    pub cashflow: bool,
    pub account_ids: Option<Vec<AccountId>>,
    /// Already expanded to subcategories when asked.
    pub category_ids: Option<Vec<CategoryId>>,
    pub tag_ids: Option<Vec<TagId>>,
    /// One item per tag an entry carries (none: one with no tag).
    pub per_tag: bool,
    /// Items per account; without it stored sums may come summed over
    /// accounts (`account_id` none).
    pub per_account: bool,
}

impl Scope {
    /// Every visible entry of the months, in one view.
    pub fn months(from: BillMonth, to: BillMonth, cashflow: bool) -> Self {
        Scope {
            from,
            to,
            cashflow,
            account_ids: None,
            category_ids: None,
            tag_ids: None,
            per_tag: false,
            per_account: false,
        }
    }

    /// Whole months and nothing else: no view but the ledger, no filter,
    /// one item per account rather than per tag.
    fn is_whole(&self) -> bool {
        !self.cashflow
            && self.account_ids.is_none()
            && self.category_ids.is_none()
            && self.tag_ids.is_none()
            && !self.per_tag
    }

    fn filter(&self) -> TransactionFilter {
        TransactionFilter {
            cashflow: self.cashflow,
            account_ids: self.account_ids.clone(),
            category_ids: self.category_ids.clone(),
            tag_ids: self.tag_ids.clone(),
            ..TransactionFilter::window(self.from.day(1), self.to.day(31))
        }
    }
}

/// Entries of one account, month, category (and tag), type and status,
/// summed; or one card bill's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    pub total: EntryTotal,
    /// The card of a bill entry (which stands on the paying account).
    pub bill_of: Option<AccountId>,
}

impl From<EntryTotal> for Item {
    fn from(total: EntryTotal) -> Self {
        Item {
            total,
            bill_of: None,
        }
    }
}

fn item_of(entry: &Transaction, tag_id: Option<TagId>) -> Item {
    let bill_of = match entry.id {
        EntryId::Projected(Handle::Bill { card_id, .. }) => Some(card_id),
        _ => None,
    };
    Item {
        total: EntryTotal {
            account_id: Some(entry.account_id),
            month: BillMonth::of(entry.state.date),
            category_id: entry.state.category_id,
            tag_id,
            tx_type: entry.state.tx_type,
            status: entry.state.status,
            // A bill entry stands for the bill's payment.
            transfer: bill_of.is_some(),
            amount: entry.state.amount,
        },
        bill_of,
    }
}

fn too_many() -> ApiError {
    ApiError::field(
        "to",
        format!("the months hold more than {MAX_PROJECTED} projected entries; ask for fewer"),
    )
}

/// The entries `scope` selects, summed per account, month, category, type
/// and status (and tag), as the list endpoint would list them.
pub async fn items(
    store: &dyn Store,
    user: UserId,
    scope: &Scope,
    today: Date,
) -> ApiResult<Vec<Item>> {
    let filter = scope.filter();
    let by = match (&scope.tag_ids, scope.per_tag) {
        (_, true) => TotalsBy::Tag,
        (Some(tags), false) => TotalsBy::WithTags(tags.clone()),
        // The database leaves out what the view and the filter do, and
        // sums over the accounts unless they are asked for.
        (None, false) => TotalsBy::Category {
            over_accounts: !scope.per_account,
            only: scope.account_ids.clone(),
            without_cards: scope.cashflow,
        },
    };
    let categories: Option<HashSet<CategoryId>> = scope
        .category_ids
        .as_ref()
        .map(|c| c.iter().copied().collect());
    let tags: Option<HashSet<TagId>> = scope.tag_ids.as_ref().map(|t| t.iter().copied().collect());
    let stored = store.entry_totals(user, scope.from, scope.to, &by).await?;
    if scope.is_whole() {
        // The projected sums of whole months are kept beside their sources.
        let projected = store.projected_totals(user, filter.from, filter.to).await?;
        let projected = projected.as_ref().as_ref().ok_or_else(too_many)?;
        let projected = projected.iter().map(|t| EntryTotal {
            account_id: Some(t.account_id),
            month: t.month,
            category_id: t.category_id,
            tag_id: None,
            tx_type: t.tx_type,
            status: t.status,
            transfer: false,
            amount: t.amount,
        });
        return Ok(stored
            .into_iter()
            .chain(projected)
            .map(Item::from)
            .collect());
    }
    let sources = store.view_sources(user, filter.from, filter.to).await?;
    let mut out: Vec<Item> = stored
        .into_iter()
        .filter(|t| {
            // Sums over accounts were filtered by the database.
            let account_kept = t.account_id.is_none_or(|id| {
                let card = sources.accounts.get(&id).is_some_and(|a| a.card.is_some());
                !(scope.cashflow && card)
                    && scope
                        .account_ids
                        .as_ref()
                        .is_none_or(|ids| ids.contains(&id))
            });
            account_kept
                && categories
                    .as_ref()
                    .is_none_or(|set| t.category_id.is_some_and(|c| set.contains(&c)))
                // Grouped per tag with a tag filter: only the tags asked for.
                && (!scope.per_tag
                    || tags
                        .as_ref()
                        .is_none_or(|set| t.tag_id.is_some_and(|tag| set.contains(&tag))))
        })
        .map(Item::from)
        .collect();
    // Projected entries are summed as they are walked, so what a window
    // holds costs memory per distinct sum, not per entry.
    // Keyed by the item without its amount.
    let mut sums: HashMap<Item, Money> = HashMap::new();
    let mut add = |entry: &Transaction| {
        let mut push = |tag: Option<TagId>| {
            let mut key = item_of(entry, tag);
            let amount = std::mem::replace(&mut key.total.amount, Money::ZERO);
            let slot = sums.entry(key).or_default();
            *slot = slot.saturating_add(amount);
        };
        if !scope.per_tag {
            push(None);
            return;
        }
        if entry.state.tag_ids.is_empty() && tags.is_none() {
            push(None);
        }
        for tag in &entry.state.tag_ids {
            if tags.as_ref().is_none_or(|set| set.contains(tag)) {
                push(Some(*tag));
            }
        }
    };
    if !each_projected(&sources, &filter, MAX_PROJECTED, &mut add) {
        return Err(too_many());
    }
    if scope.cashflow {
        let bills = cards::cashflow_bills(store, user, filter.from, filter.to, today).await?;
        bills_page(&sources, &filter, None, bills)
            .iter()
            .for_each(&mut add);
    }
    out.extend(sums.into_iter().map(|(mut item, amount)| {
        item.total.amount = amount;
        item
    }));
    Ok(out)
}

/// A budget with its figures for the month.
pub struct BudgetMonth {
    pub budget: Budget,
    pub status: MonthStatus,
}

/// The month's figures of every budget that covers it, in the budgets'
/// order, and what was spent outside every one of them.
pub struct BudgetsStatus {
    pub budgets: Vec<BudgetMonth>,
    pub unbudgeted: cofre_domain::budget::Usage,
}

/// Each budget's figures for `month`: spending from the ledger view (card
/// purchases in the month they were made, each installment in its own),
/// transfers and bill payments left out.
pub async fn budgets_status(
    store: &dyn Store,
    user: UserId,
    month: BillMonth,
    today: Date,
    warning_percent: u8,
) -> ApiResult<BudgetsStatus> {
    let active: Vec<Budget> = store
        .list_budgets(user)
        .await?
        .into_iter()
        .filter(|b| b.active_in(month))
        .collect();
    // Rollover needs every month since the budget started.
    let first = active
        .iter()
        .filter(|b| b.rollover)
        .map(|b| b.starts_on)
        .min()
        .unwrap_or(month)
        .min(month);
    let mut spending = Spending::default();
    for Item { total: item, .. } in
        items(store, user, &Scope::months(first, month, false), today).await?
    {
        if !item.transfer {
            let posted = item.status == TxStatus::Posted;
            spending.add(
                item.month,
                item.category_id,
                item.tx_type,
                posted,
                item.amount,
            );
        }
    }
    // A projected entry dated before today (an installment, an occurrence
    // of a rule) has happened, stored or not: spent, not still to come.
    let last = month.day(1).last_of_month();
    if let Ok(yesterday) = today.yesterday()
        && first.day(1) <= yesterday
    {
        let happened = store
            .projected_totals(user, first.day(1), yesterday.min(last))
            .await?;
        for t in happened.as_ref().as_ref().ok_or_else(too_many)? {
            if t.status != TxStatus::Posted {
                spending.settle(t.month, t.category_id, t.tx_type, t.amount);
            }
        }
    }
    let visible = if active.is_empty() {
        Arc::default()
    } else {
        store.list_categories(user).await?
    };
    let tree = CategoryTree::of(&visible);
    let mut covered: HashSet<CategoryId, Hashing> = HashSet::default();
    let mut budgets = Vec::with_capacity(active.len());
    for budget in active {
        let set: HashSet<CategoryId, Hashing> = if budget.include_subcategories {
            tree.with_descendants(&[budget.category_id])
                .into_iter()
                .collect()
        } else {
            [budget.category_id].into_iter().collect()
        };
        covered.extend(&set);
        let usage = |m: BillMonth| spending.usage(m, &set);
        if let Some(status) = month_status(&budget, month, usage, warning_percent) {
            budgets.push(BudgetMonth { budget, status });
        }
    }
    Ok(BudgetsStatus {
        unbudgeted: spending.outside(month, &covered),
        budgets,
    })
}

/// Balances at each of `points` (ascending) over the accounts that count
/// in totals (as in the overview: not archived, not excluded, in the base
/// currency): the POSTED history up to each date and, after today, the
/// PENDING rows, projections and card bills still to come. A card's debt
/// is what its rows owe (purchases less payments), and a bill's payment
/// lowers it on its due date.
/// `accounts` are the user's, as `Store::list_accounts` gives them.
pub async fn balances(
    store: &dyn Store,
    user: UserId,
    accounts: &[AccountView],
    points: &[Date],
    today: Date,
    base_currency: &str,
) -> ApiResult<Vec<Point>> {
    let (Some(&first), Some(&last)) = (points.first(), points.last()) else {
        return Ok(Vec::new());
    };
    let mut kinds: HashMap<AccountId, bool> = HashMap::new();
    let mut now = DayChange::default();
    for view in accounts {
        let a = &view.account.state;
        if !a.counts_in_totals(base_currency) {
            continue;
        }
        let is_card = a.account_type == AccountType::Credit;
        kinds.insert(view.account.id, is_card);
        let cents = view.balance.cents();
        if is_card {
            now.card_debt = now.card_debt.saturating_sub(cents);
        } else {
            now.bank = now.bank.saturating_add(cents);
        }
    }
    // A signed change of an account's balance, as bank money or card debt.
    let change = |account: AccountId, date: Date, cents: i64| {
        kinds.get(&account).map(|&is_card| DayChange {
            date,
            bank: if is_card { 0 } else { cents },
            card_debt: if is_card { cents.saturating_neg() } else { 0 },
        })
    };
    // The same accounts: those that count in totals.
    let posted: Vec<DayChange> = store
        .posted_days(user, first, base_currency)
        .await?
        .into_iter()
        .map(|d| DayChange {
            date: d.date,
            bank: d.banks,
            card_debt: d.cards.saturating_neg(),
        })
        .collect();
    // What is to come, summed per day as it is found: memory per day of
    // the window, not per entry.
    let mut future: HashMap<Date, DayChange> = HashMap::new();
    let mut add = |change: Option<DayChange>| {
        if let Some(c) = change {
            let slot = future.entry(c.date).or_insert(DayChange {
                date: c.date,
                ..DayChange::default()
            });
            slot.bank = slot.bank.saturating_add(c.bank);
            slot.card_debt = slot.card_debt.saturating_add(c.card_debt);
        }
    };
    if last > today
        && let Ok(start) = today.tomorrow()
    {
        for d in store.pending_days(user, today, last).await? {
            add(change(d.account_id, d.date, d.cents));
        }
        let filter = TransactionFilter::window(start, last);
        let sources = store.view_sources(user, start, last).await?;
        let walked = each_projected(&sources, &filter, MAX_PROJECTED, |entry| {
            let cents = entry.state.amount.cents();
            let signed = match entry.state.tx_type {
                TxType::Credit => cents,
                TxType::Debit => cents.saturating_neg(),
            };
            add(change(entry.account_id, entry.state.date, signed));
        });
        if !walked {
            return Err(too_many());
        }
        let cashflow = TransactionFilter {
            cashflow: true,
            ..filter
        };
        let bills = cards::cashflow_bills(store, user, start, last, today).await?;
        for bill in bills_page(&sources, &cashflow, None, bills) {
            let cents = bill.state.amount.cents();
            let date = bill.state.date;
            // Paid from the bank, owed no more on the card; a bill is its
            // card's money, so it counts only when the card counts (as in
            // the overview).
            if let Some(card) = bill.bill_to_account_id
                && let Some(paid) = change(card, date, cents)
            {
                add(Some(paid));
                add(change(bill.account_id, date, cents.saturating_neg()));
            }
        }
    }
    let future = future.into_values().collect();
    Ok(balance_series(points, now, posted, future, today))
}
