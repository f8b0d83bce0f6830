//! `GET /v1/overview`: balance, card debt, bills and the month in one call.

use axum::extract::State;
use jiff::civil::Date;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::UserId;
use cofre_domain::account::AccountType;
use cofre_domain::bills::{bill_entry, bill_handle};
use cofre_domain::budget::Level;
use cofre_domain::card::BillMonth;
use cofre_domain::overview::{AccountTotal, MonthItem, overview};
use cofre_domain::time::format_date;
use cofre_store::{Store, StoreResult};

use super::CommonErrors;
use crate::AppState;
use crate::auth::{Auth, Read};
use crate::cards::{CardBooks, whole_books};
use crate::error::ApiResult;
use crate::extract::AppJson;
use crate::json::JsonMoney;
use crate::reports::budgets_status;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_overview))
}

#[derive(Serialize, ToSchema)]
pub struct NextBillBody {
    pub projected_bill_id: String,
    pub card_account_id: String,
    pub description: String,
    /// What is left to pay.
    pub amount: JsonMoney,
    #[schema(format = Date)]
    pub due_date: String,
    pub amount_is_estimate: bool,
}

#[derive(Serialize, ToSchema)]
pub struct MonthBody {
    /// CREDIT entries of the month (cashflow view, visible, stored and
    /// projected).
    pub receitas: JsonMoney,
    /// DEBIT entries of the month, card bills included.
    pub despesas: JsonMoney,
    pub resultado: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct CommittedBody {
    /// Unpaid bills due by the end of the month (overdue ones too).
    pub bills: JsonMoney,
    /// Installments not yet POSTED.
    pub installments: JsonMoney,
    /// Recurrence entries not yet POSTED.
    pub subscriptions: JsonMoney,
    /// Other PENDING stored DEBITs.
    pub scheduled: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct ForecastBody {
    /// The bank balance.
    pub base: JsonMoney,
    /// CREDIT entries of the month not yet POSTED.
    pub expected_in: JsonMoney,
    pub committed_out: CommittedBody,
    /// base + expected_in - every committed_out term.
    pub result: JsonMoney,
    /// One line per term, in Portuguese.
    pub explain: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct BudgetsSummaryBody {
    /// Budgets covering the current month.
    pub count: u64,
    /// Of those, how many are `over` (see `GET /v1/budgets/status`).
    pub over: u64,
    /// And how many are at `warning`.
    pub warning: u64,
}

#[derive(Serialize, ToSchema)]
pub struct OverviewBody {
    /// Balances of bank accounts (not archived, not excluded from totals,
    /// in the base currency).
    pub bank_balance: JsonMoney,
    /// Used limit of those cards: unpaid bills plus future installments.
    pub card_debt: JsonMoney,
    /// Outstanding of unpaid bills whose cycle has started.
    pub open_bills_total: JsonMoney,
    /// bank_balance - card_debt.
    pub net_worth: JsonMoney,
    /// Unpaid bills due in the next 30 days, soonest first.
    pub next_bills: Vec<NextBillBody>,
    /// This calendar month in `COFRE_TIMEZONE`.
    pub month: MonthBody,
    /// The month's forecast balance.
    pub saldo_previsto: ForecastBody,
    /// The current month's budgets at a glance.
    pub budgets: BudgetsSummaryBody,
}

/// The first and last day of `month`.
fn month_bounds(month: BillMonth) -> (Date, Date) {
    let first = month.day(1);
    (first, first.last_of_month())
}

/// The cashflow view of a calendar month as the overview sums it: stored
/// rows and projected entries off the cards, each summed by the store
/// (the projected ones kept until their sources change), and the bills
/// with something left to pay that are not hidden.
async fn month_items(
    store: &dyn Store,
    user: UserId,
    month: BillMonth,
    books: &CardBooks,
    today: Date,
) -> StoreResult<Vec<MonthItem>> {
    let (from, to) = month_bounds(month);
    let mut items = store.month_items(user, month).await?;
    items.extend_from_slice(&store.projected_month_items(user, month).await?);
    let sources = store.view_sources(user, from, to).await?;
    for (id, info, currency, book) in &books.cards {
        for bill in book.due_between(from, to, today) {
            let handle = bill_handle(*id, bill.cycle.month);
            if bill.outstanding.is_positive() && !sources.tombstones.contains(&handle) {
                items.push(MonthItem::of(&bill_entry(*id, info, currency, &bill)));
            }
        }
    }
    Ok(items)
}

/// Everything at a glance: money in the bank, card debt and open bills,
/// net worth, the bills due in the next 30 days, this month's income and
/// expenses, and the balance forecast for the end of the month.
#[utoipa::path(get, path = "/v1/overview", tag = "overview",
    responses((status = 200, body = OverviewBody), CommonErrors))]
async fn get_overview(
    State(state): State<AppState>,
    auth: Auth<Read>,
) -> ApiResult<AppJson<OverviewBody>> {
    let (store, user) = (state.store.as_ref(), auth.user());
    let today = state.clock.today();
    let month = BillMonth::of(today);
    let (_, last) = month_bounds(month);
    let base = &state.config.base_currency;
    let accounts: Vec<AccountTotal> = store
        .list_accounts(user)
        .await?
        .into_iter()
        .map(|view| {
            let a = &view.account.state;
            AccountTotal {
                id: view.account.id,
                is_card: a.account_type == AccountType::Credit,
                counts: a.counts_in_totals(base),
                balance: view.balance,
            }
        })
        .collect();
    let books = whole_books(store, user, today).await?;
    let cards: Vec<_> = books
        .cards
        .iter()
        .map(|(id, info, _, book)| (*id, info, book))
        .collect();
    let items = month_items(store, user, month, &books, today).await?;
    let mut o = overview(&accounts, &cards, &items, today, last);
    // A bill hidden from the cashflow view (DELETE on its handle) is no
    // "next bill" either: its handle names no projection any more.
    if !o.next_bills.is_empty() {
        let soon = o
            .next_bills
            .iter()
            .map(|b| b.due_date)
            .max()
            .unwrap_or(today);
        let sources = store.view_sources(user, today, soon).await?;
        o.next_bills.retain(|b| {
            let handle = bill_handle(b.card_account_id, BillMonth::of(b.due_date));
            !sources.tombstones.contains(&handle)
        });
    }
    let status = budgets_status(
        store,
        user,
        month,
        today,
        state.config.budget_warning_percent,
    )
    .await?;
    let at = |level: Level| {
        let n = status
            .budgets
            .iter()
            .filter(|b| b.status.level == level)
            .count();
        u64::try_from(n).unwrap_or(u64::MAX)
    };
    let budgets = BudgetsSummaryBody {
        count: u64::try_from(status.budgets.len()).unwrap_or(u64::MAX),
        over: at(Level::Over),
        warning: at(Level::Warning),
    };
    let m = JsonMoney;
    Ok(AppJson(OverviewBody {
        budgets,
        bank_balance: m(o.bank_balance),
        card_debt: m(o.card_debt),
        open_bills_total: m(o.open_bills_total),
        net_worth: m(o.net_worth),
        next_bills: o
            .next_bills
            .into_iter()
            .map(|b| NextBillBody {
                projected_bill_id: b.projected_bill_id,
                card_account_id: b.card_account_id.to_string(),
                description: b.description,
                amount: m(b.amount),
                due_date: format_date(b.due_date),
                amount_is_estimate: b.amount_is_estimate,
            })
            .collect(),
        month: MonthBody {
            receitas: m(o.month.receitas),
            despesas: m(o.month.despesas),
            resultado: m(o.month.resultado),
        },
        saldo_previsto: ForecastBody {
            base: m(o.saldo_previsto.base),
            expected_in: m(o.saldo_previsto.expected_in),
            committed_out: CommittedBody {
                bills: m(o.saldo_previsto.committed_out.bills),
                installments: m(o.saldo_previsto.committed_out.installments),
                subscriptions: m(o.saldo_previsto.committed_out.subscriptions),
                scheduled: m(o.saldo_previsto.committed_out.scheduled),
            },
            result: m(o.saldo_previsto.result),
            explain: o.saldo_previsto.explain,
        },
    }))
}
