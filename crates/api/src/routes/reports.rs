//! `/v1/reports`: the figures behind a client's charts, summed by the
//! server from the entries the list endpoint shows.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use cofre_domain::budget::parse_month;
use cofre_domain::card::BillMonth;
use cofre_domain::category::with_descendants;
use cofre_domain::report::{
    FlowTable, GroupBy, Interval, report_months, series_points, top_categories,
};
use cofre_domain::time::{date_field, format_date};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors, TagId, UserId};

use super::CommonErrors;
use super::transactions::{View, flag, id_list};
use crate::AppState;
use crate::auth::{Auth, Read};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppQuery};
use crate::json::JsonMoney;
use crate::reports::{Item, Scope, balances, items};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(spending_report))
        .routes(routes!(cashflow_report))
        .routes(routes!(net_worth_report))
}

/// Reads `from` and `to` as months, at most 36 of them.
fn month_window(
    errors: &mut FieldErrors,
    from: Option<&str>,
    to: Option<&str>,
) -> Option<(BillMonth, BillMonth)> {
    let mut month = |field: &str, text: Option<&str>| match text {
        Some(text) => errors.check(parse_month(field, text)),
        None => {
            errors.add(field, "is required (YYYY-MM)");
            None
        }
    };
    let (from, to) = (month("from", from), month("to", to));
    let (from, to) = (from?, to?);
    errors.check(report_months(from, to))?;
    Some((from, to))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SpendingQuery {
    /// First month, `YYYY-MM` (required).
    #[param(required = true, value_type = String, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    from: Option<String>,
    /// Last month, `YYYY-MM` (required); at most 36 months in all.
    #[param(required = true, value_type = String, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    to: Option<String>,
    /// `category` (default), `tag` or `account`.
    #[param(value_type = Option<String>, pattern = "^(category|tag|account)$")]
    group_by: Option<String>,
    /// `cashflow` (default: card bills on the paying account) or `ledger`
    /// (card purchases in the month they were made).
    #[param(inline, value_type = Option<View>)]
    view: Option<String>,
    /// With `group_by=category`: `true` sums subcategories into their top
    /// category. Default `false`: every category is its own key, a parent
    /// with its direct rows only.
    #[param(value_type = Option<bool>)]
    rollup: Option<String>,
    /// Account ids, comma-separated.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    account_id: Option<String>,
    /// Category ids, comma-separated.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    category_id: Option<String>,
    /// Default `true`: a category also selects its subcategories.
    #[param(value_type = Option<bool>)]
    include_subcategories: Option<String>,
    /// Tag ids, comma-separated: entries carrying any of them.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    tag_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct SpendingRow {
    /// `YYYY-MM`
    pub month: String,
    /// The category, tag or account id; null for entries without a
    /// category (or without tags).
    #[schema(format = Uuid)]
    pub key: Option<String>,
    pub title: String,
    pub debit: JsonMoney,
    pub credit: JsonMoney,
    /// debit - credit: what the group spent, net of refunds.
    pub net: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct MonthFlow {
    /// `YYYY-MM`
    pub month: String,
    pub debit: JsonMoney,
    pub credit: JsonMoney,
    pub net: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct SpendingReport {
    /// `YYYY-MM`
    pub from: String,
    /// `YYYY-MM`
    pub to: String,
    #[schema(pattern = "^(category|tag|account)$")]
    pub group_by: String,
    #[schema(pattern = "^(cashflow|ledger)$")]
    pub view: &'static str,
    /// Groups with entries, by month then key. With `group_by=tag` an
    /// entry with two tags counts under each.
    pub rows: Vec<SpendingRow>,
    /// Each month with entries, over every entry once.
    pub totals: Vec<MonthFlow>,
}

/// Checks that every id of a filter names something of the user's: an id
/// of another user's is a validation error on its field.
fn owned<T: Copy + std::fmt::Display>(
    errors: &mut FieldErrors,
    field: &str,
    ids: Option<&Vec<T>>,
    mine: impl Fn(T) -> bool,
) {
    for id in ids.into_iter().flatten() {
        if !mine(*id) {
            errors.add(field, format!("{id} names nothing of yours"));
        }
    }
}

/// Spending per month and category, tag or account: debits, credits and
/// net, summed from the entries `GET /v1/transactions` lists for the same
/// months, view and filters (visible entries, stored and projected).
#[utoipa::path(get, path = "/v1/reports/spending", tag = "reports", params(SpendingQuery),
    responses((status = 200, body = SpendingReport),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn spending_report(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<SpendingQuery>,
) -> ApiResult<AppJson<SpendingReport>> {
    let (store, user) = (state.store.as_ref(), auth.user());
    let mut errors = FieldErrors::new();
    let window = month_window(&mut errors, query.from.as_deref(), query.to.as_deref());
    let group_by = match query.group_by.as_deref() {
        None => Some(GroupBy::Category),
        Some(text) => {
            let parsed = GroupBy::parse(text);
            if parsed.is_none() {
                errors.add("group_by", "must be category, tag or account");
            }
            parsed
        }
    };
    let view = match query.view.as_deref() {
        None => View::Cashflow,
        Some(text) => View::parse(text).unwrap_or_else(|| {
            errors.add("view", "must be cashflow or ledger");
            View::Cashflow
        }),
    };
    let rollup = flag(&mut errors, "rollup", query.rollup.as_deref(), false);
    let include_subcategories = flag(
        &mut errors,
        "include_subcategories",
        query.include_subcategories.as_deref(),
        true,
    );
    let account_ids = id_list(
        &mut errors,
        "account_id",
        query.account_id.as_deref(),
        AccountId::parse,
    );
    let category_ids = id_list(
        &mut errors,
        "category_id",
        query.category_id.as_deref(),
        CategoryId::parse,
    );
    let tag_ids = id_list(&mut errors, "tag_id", query.tag_id.as_deref(), TagId::parse);
    if rollup && group_by != Some(GroupBy::Category) {
        errors.add("rollup", "applies only with group_by=category");
    }
    errors.finish()?;
    let (Some((from, to)), Some(group_by)) = (window, group_by) else {
        return Err(DomainError::field("from", "is required").into());
    };

    let accounts = store.list_accounts(user).await?;
    let categories = store.list_categories(user).await?;
    let tags = store.list_tags(user).await?;
    let mut errors = FieldErrors::new();
    owned(&mut errors, "account_id", account_ids.as_ref(), |id| {
        accounts.iter().any(|a| a.account.id == id)
    });
    owned(&mut errors, "category_id", category_ids.as_ref(), |id| {
        categories.iter().any(|c| c.id == id)
    });
    owned(&mut errors, "tag_id", tag_ids.as_ref(), |id| {
        tags.iter().any(|t| t.id == id)
    });
    errors.finish()?;

    let category_ids = match category_ids {
        Some(roots) if include_subcategories => Some(with_descendants(&categories, &roots)),
        other => other,
    };
    let scope = Scope {
        account_ids,
        category_ids,
        tag_ids,
        per_tag: group_by == GroupBy::Tag,
        per_account: group_by == GroupBy::Account,
        ..Scope::months(from, to, view == View::Cashflow)
    };
    let today = state.clock.today();
    let tops = rollup.then(|| top_categories(&categories));
    let mut table = FlowTable::default();
    for Item { total: item, .. } in items(store, user, &scope, today).await? {
        let key = match group_by {
            GroupBy::Category => item.category_id.map(|c| {
                tops.as_ref()
                    .and_then(|t| t.get(&c).copied())
                    .unwrap_or(c)
                    .0
            }),
            GroupBy::Tag => item.tag_id.map(|t| t.0),
            GroupBy::Account => item.account_id.map(|a| a.0),
        };
        table.add(item.month, key, item.tx_type, item.amount);
    }
    // Each entry is in one group, except by tag, where an entry counts under
    // each of its tags: the totals then sum the entries once, untagged.
    let totals = if group_by == GroupBy::Tag {
        let mut once = FlowTable::default();
        let untagged = Scope {
            per_tag: false,
            ..scope.clone()
        };
        for Item { total: item, .. } in items(store, user, &untagged, today).await? {
            once.add(item.month, None, item.tx_type, item.amount);
        }
        once.month_totals()
    } else {
        table.month_totals()
    };
    let titles: HashMap<Uuid, String> = match group_by {
        GroupBy::Category => categories
            .iter()
            .map(|c| (c.id.0, c.title.clone()))
            .collect(),
        GroupBy::Tag => tags.into_iter().map(|t| (t.id.0, t.title)).collect(),
        GroupBy::Account => accounts
            .into_iter()
            .map(|a| (a.account.id.0, a.account.state.title))
            .collect(),
    };
    let none_title = match group_by {
        GroupBy::Category => "Sem categoria",
        GroupBy::Tag => "Sem tag",
        GroupBy::Account => "",
    };
    let rows = table
        .cells()
        .map(|(month, key, flow)| SpendingRow {
            month: month.key(),
            key: key.map(|k| k.hyphenated().to_string()),
            title: key
                .and_then(|k| titles.get(&k).cloned())
                .unwrap_or_else(|| none_title.to_owned()),
            debit: JsonMoney(flow.debit),
            credit: JsonMoney(flow.credit),
            net: JsonMoney(flow.net()),
        })
        .collect();
    Ok(AppJson(SpendingReport {
        from: from.key(),
        to: to.key(),
        group_by: query.group_by.unwrap_or_else(|| "category".into()),
        view: if view == View::Ledger {
            "ledger"
        } else {
            "cashflow"
        },
        rows,
        totals: month_flows(&totals),
    }))
}

fn month_flows(totals: &BTreeMap<BillMonth, cofre_domain::report::Flow>) -> Vec<MonthFlow> {
    totals
        .iter()
        .map(|(month, flow)| MonthFlow {
            month: month.key(),
            debit: JsonMoney(flow.debit),
            credit: JsonMoney(flow.credit),
            net: JsonMoney(flow.net()),
        })
        .collect()
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CashflowQuery {
    /// First month, `YYYY-MM` (required).
    #[param(required = true, value_type = String, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    from: Option<String>,
    /// Last month, `YYYY-MM` (required); at most 36 months in all.
    #[param(required = true, value_type = String, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    to: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct CashflowMonth {
    /// `YYYY-MM`
    pub month: String,
    /// CREDIT entries of the month (cashflow view, visible, stored and
    /// projected, on accounts that count in totals): the overview's
    /// `month` rule, for any month.
    pub receitas: JsonMoney,
    /// DEBIT entries of the month, card bills included.
    pub despesas: JsonMoney,
    /// receitas - despesas.
    pub resultado: JsonMoney,
    /// The bank balance at the end of the month (as in the net-worth
    /// report: POSTED history, then what is still to come).
    pub bank_balance: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct CashflowReport {
    pub months: Vec<CashflowMonth>,
}

/// Income, expenses and result of each month, past or future (future
/// months from projections and card bills), with the bank balance at the
/// end of each month.
#[utoipa::path(get, path = "/v1/reports/cashflow", tag = "reports", params(CashflowQuery),
    responses((status = 200, body = CashflowReport),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn cashflow_report(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<CashflowQuery>,
) -> ApiResult<AppJson<CashflowReport>> {
    let (store, user) = (state.store.as_ref(), auth.user());
    let mut errors = FieldErrors::new();
    let window = month_window(&mut errors, query.from.as_deref(), query.to.as_deref());
    errors.finish()?;
    let Some((from, to)) = window else {
        return Err(DomainError::field("from", "is required").into());
    };
    let today = state.clock.today();
    // The overview's rule: accounts that count in totals.
    let base = &state.config.base_currency;
    let accounts = store.list_accounts(user).await?;
    let counted: HashSet<AccountId> = accounts
        .iter()
        .filter(|view| view.account.state.counts_in_totals(base))
        .map(|view| view.account.id)
        .collect();
    let mut table = FlowTable::default();
    let scope = Scope {
        per_account: true,
        ..Scope::months(from, to, true)
    };
    for item in items(store, user, &scope, today).await? {
        // A bill is its card's money: it counts when the card counts too.
        if item.total.account_id.is_some_and(|a| counted.contains(&a))
            && item.bill_of.is_none_or(|card| counted.contains(&card))
        {
            let t = item.total;
            table.add(t.month, None, t.tx_type, t.amount);
        }
    }
    let flows = table.month_totals();
    let months: Vec<BillMonth> = BillMonth::range(from, to).collect();
    let ends: Vec<_> = months.iter().map(|m| m.day(31)).collect();
    let points = balances(store, user, &accounts, &ends, today, base).await?;
    Ok(AppJson(CashflowReport {
        months: months
            .iter()
            .zip(points)
            .map(|(month, point)| {
                let flow = flows.get(month).copied().unwrap_or_default();
                CashflowMonth {
                    month: month.key(),
                    receitas: JsonMoney(flow.credit),
                    despesas: JsonMoney(flow.debit),
                    resultado: JsonMoney(flow.credit.saturating_sub(flow.debit)),
                    bank_balance: JsonMoney(point.bank_balance),
                }
            })
            .collect(),
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NetWorthQuery {
    /// First day, `YYYY-MM-DD` (required).
    #[param(required = true, value_type = String, format = Date)]
    from: Option<String>,
    /// Last day, `YYYY-MM-DD` (required).
    #[param(required = true, value_type = String, format = Date)]
    to: Option<String>,
    /// `day`, `week` (every 7th day from `from`) or `month` (default);
    /// at most 366 points.
    #[param(value_type = Option<String>, pattern = "^(day|week|month)$")]
    interval: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct NetWorthPoint {
    /// The last day of the interval.
    #[schema(format = Date)]
    pub date: String,
    /// Bank accounts that count in totals, at the end of the day.
    pub bank_balance: JsonMoney,
    /// What the cards that count in totals owe: purchases less payments
    /// (POSTED up to the day; after today also PENDING rows, projected
    /// installments and recurrences, and bills paid on their due dates).
    pub card_debt: JsonMoney,
    /// bank_balance - card_debt.
    pub net_worth: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct NetWorthReport {
    #[schema(pattern = "^(day|week|month)$")]
    pub interval: String,
    pub points: Vec<NetWorthPoint>,
}

/// Bank balance, card debt and net worth at the end of each interval:
/// from the stored history up to each date and, for dates after today,
/// the entries still to come.
#[utoipa::path(get, path = "/v1/reports/net-worth", tag = "reports", params(NetWorthQuery),
    responses((status = 200, body = NetWorthReport),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn net_worth_report(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<NetWorthQuery>,
) -> ApiResult<AppJson<NetWorthReport>> {
    let user: UserId = auth.user();
    let mut errors = FieldErrors::new();
    let mut day = |field: &str, text: Option<&str>| match text {
        Some(text) => errors.check(date_field(field, text)),
        None => {
            errors.add(field, "is required (YYYY-MM-DD)");
            None
        }
    };
    let (from, to) = (
        day("from", query.from.as_deref()),
        day("to", query.to.as_deref()),
    );
    let interval = match query.interval.as_deref() {
        None => Some(Interval::Month),
        Some(text) => {
            let parsed = Interval::parse(text);
            if parsed.is_none() {
                errors.add("interval", "must be day, week or month");
            }
            parsed
        }
    };
    errors.finish()?;
    let (Some(from), Some(to), Some(interval)) = (from, to, interval) else {
        return Err(ApiError::field("from", "is required"));
    };
    let points = series_points(from, to, interval)?;
    let today = state.clock.today();
    let store = state.store.as_ref();
    let accounts = store.list_accounts(user).await?;
    let series = balances(
        store,
        user,
        &accounts,
        &points,
        today,
        &state.config.base_currency,
    )
    .await?;
    Ok(AppJson(NetWorthReport {
        interval: query.interval.unwrap_or_else(|| "month".into()),
        points: series
            .into_iter()
            .map(|p| NetWorthPoint {
                date: format_date(p.date),
                bank_balance: JsonMoney(p.bank_balance),
                card_debt: JsonMoney(p.card_debt),
                net_worth: JsonMoney(p.net_worth),
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_windows_name_the_bad_field() {
        let mut errors = FieldErrors::new();
        assert!(month_window(&mut errors, Some("2026-01"), Some("2026-12")).is_some());
        assert!(month_window(&mut errors, Some("2026-01"), None).is_none());
        assert!(month_window(&mut errors, Some("2026-13"), Some("2026-01")).is_none());
        assert!(month_window(&mut errors, Some("2020-01"), Some("2026-01")).is_none());
        let DomainError::Validation(fields) = errors.finish().unwrap_err() else {
            panic!("not a validation error");
        };
        let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["to", "from", "to"]);
    }
}
