//! Demo data: a user with a lived-in history (bank accounts, credit cards,
//! tags, years of rows, recurrence rules, installment purchases and paid
//! card bills), so a newcomer sees a realistic account and benchmarks share
//! one dataset. Everything is built with the domain types and written
//! through the [`Store`]: the accounts and tags one by one, the rest in one
//! [`Store::import`] (all or nothing).
//!
//! Content is deterministic for a seed (a small splitmix64 generator, no
//! dependency); ids are fresh, so two runs differ only in ids.
//!
//! - `setup`: the accounts, cards and tags, and the categories read back;
//! - `catalogue`: merchants, monthly bills, rules, purchases, cards;
//! - `generate`: the rows, rules and plans of the history;
//! - `cards`: the card bills (DECISIONS §11) and their payments.

use jiff::Timestamp;
use jiff::civil::Date;

use cofre_domain::UserId;
use cofre_domain::transaction::SeriesLink;
use cofre_store::{ImportBatch, Store, StoreError};

mod budgets;
mod builder;
mod cards;
mod catalogue;
mod generate;
mod rng;
mod setup;
#[cfg(test)]
mod tests;

pub use cards::{BillAmounts, bill_amounts};
pub use catalogue::TAGS;
pub use generate::generate;
pub use setup::{DemoAccounts, DemoCard, Setup, prepare};

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 0x00C0_FFEE_2026;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Checking and one card, about 300 rows over a year (card purchases in
    /// the last 6 months), 5 rules, 4 plans.
    Small,
    /// 3 bank accounts and 3 cards, 50,000 rows over 10 years (card
    /// purchases in the last 5), 40 rules, 60 plans on the cards.
    Heavy,
}

impl Profile {
    pub fn spec(self) -> Spec {
        match self {
            Profile::Small => Spec {
                all_accounts: false,
                rows: 300,
                years: 1,
                rules: 5,
                plans: 4,
                cards: 1,
                card_months: 6,
            },
            Profile::Heavy => Spec {
                all_accounts: true,
                rows: 50_000,
                years: 10,
                rules: 40,
                plans: 60,
                cards: 3,
                card_months: 60,
            },
        }
    }
}

/// How much to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Checking, savings and a second bank; otherwise checking only.
    pub all_accounts: bool,
    /// Stored rows, all kinds included (hidden opening balances, rows of
    /// rules and plans, both legs of bill payments).
    pub rows: usize,
    /// Years of history up to today.
    pub years: i16,
    /// Active recurrence rules (monthly and weekly).
    pub rules: usize,
    /// Installment purchases, on the cards (on checking without cards).
    pub plans: usize,
    /// Credit cards (at most 3), each paid from checking.
    pub cards: usize,
    /// Months of card purchases up to today (at most the history).
    pub card_months: i16,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("no user with id {0}")]
    NoSuchUser(UserId),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Bank accounts and cards.
    pub accounts: usize,
    pub cards: usize,
    pub tags: usize,
    pub rows: usize,
    /// Of `rows`, those that are an occurrence of a rule or an installment.
    pub linked_rows: usize,
    /// Bill payments (each two of `rows`: the bank DEBIT and the card CREDIT).
    pub bill_payments: usize,
    pub rules: usize,
    pub plans: usize,
    pub budgets: usize,
    pub first_date: Option<Date>,
    pub last_date: Option<Date>,
}

/// Fills `user` with demo data. Fails before writing anything when the user
/// does not exist; the rows, rules and plans are written in one transaction.
pub async fn fill(
    store: &dyn Store,
    user: UserId,
    spec: &Spec,
    seed: u64,
    now: Timestamp,
    today: Date,
) -> Result<Summary, DemoError> {
    match store.get_profile(user).await {
        Err(StoreError::NotFound) => return Err(DemoError::NoSuchUser(user)),
        other => other?,
    };
    let setup = prepare(store, user, spec, now, today).await?;
    let batch = generate(spec, seed, user, &setup, now, today)?;
    store.import(user, &batch, now).await?;
    let mut summary = summarize(&setup, &batch);
    let tops = cofre_domain::report::top_categories(&store.list_categories(user).await?);
    for budget in budgets::demo_budgets(user, &batch, &tops, now, today) {
        match store.create_budget(user, &budget).await {
            Ok(_) => summary.budgets += 1,
            // A category the user already budgets keeps its budget.
            Err(StoreError::BudgetConflict) => {}
            Err(other) => return Err(other.into()),
        }
    }
    Ok(summary)
}

fn summarize(setup: &Setup, batch: &ImportBatch) -> Summary {
    let a = &setup.accounts;
    Summary {
        accounts: 1
            + usize::from(a.savings.is_some())
            + usize::from(a.second_bank.is_some())
            + a.cards.len(),
        cards: a.cards.len(),
        tags: setup.tags.len(),
        rows: batch.rows.len(),
        linked_rows: batch
            .rows
            .iter()
            .filter(|r| r.link != SeriesLink::None)
            .count(),
        bill_payments: batch
            .rows
            .iter()
            .filter(|r| r.payment.is_some_and(|p| p.bank_side))
            .count(),
        rules: batch.rules.len(),
        plans: batch.plans.len(),
        budgets: 0,
        first_date: batch.rows.iter().map(|r| r.state.date).min(),
        last_date: batch.rows.iter().map(|r| r.state.date).max(),
    }
}
