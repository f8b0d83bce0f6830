//! `/v1/cards/{id}`: a credit card's bills per billing cycle and its used
//! limit.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::bills::{Bill, CardInfo, bill_handle, card_info};
use cofre_domain::card::BillStatus;
use cofre_domain::time::{date_field, format_date};
use cofre_domain::transaction::check_window;
use cofre_domain::{AccountId, FieldErrors, Money};

use super::CommonErrors;
use crate::AppState;
use crate::auth::{Auth, Read};
use crate::cards::{bills_range, books, whole_books};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, AppQuery, path_id};
use crate::json::JsonMoney;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_bills))
        .routes(routes!(used_limit))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BillsQuery {
    /// Bills due from this day, `YYYY-MM-DD` (required).
    #[param(required = true, value_type = String, format = Date)]
    from: Option<String>,
    /// Bills due up to this day, `YYYY-MM-DD` (required); at most 366 days
    /// counting both ends.
    #[param(required = true, value_type = String, format = Date)]
    to: Option<String>,
}

/// One billing cycle's bill.
#[derive(Serialize, ToSchema)]
pub struct BillBody {
    #[schema(format = Date)]
    pub cycle_start_date: String,
    #[schema(format = Date)]
    pub close_date: String,
    #[schema(format = Date)]
    pub due_date: String,
    /// Card DEBITs minus card CREDITs other than payments, stored and
    /// projected, dated in the cycle.
    pub amount: JsonMoney,
    /// True while the cycle is open or when projected entries are in it.
    pub amount_is_estimate: bool,
    /// `aberta`, `fechada`, `vencida` or `paga`.
    #[schema(value_type = String)]
    pub status: &'static str,
    /// What is still to pay.
    pub outstanding_amount: JsonMoney,
    /// The bill's `mocked-bill:` handle; null once paid.
    pub projected_bill_id: Option<String>,
    /// Bank-side rows of the payments made against this bill.
    pub settled_payment_ids: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct BillsBody {
    pub card_id: String,
    /// Bills due in the window, oldest first.
    pub bills: Vec<BillBody>,
}

#[derive(Serialize, ToSchema)]
pub struct UsedLimitBody {
    pub card_id: String,
    /// Every unpaid bill whose cycle has started plus every installment of
    /// later bills.
    pub used_limit: JsonMoney,
    pub limit: JsonMoney,
    /// `limit - used_limit` (negative when over the limit).
    pub available: JsonMoney,
}

pub fn bill_body(card_id: AccountId, bill: &Bill) -> BillBody {
    let paid = bill.status == BillStatus::Paga;
    BillBody {
        cycle_start_date: format_date(bill.cycle.start),
        close_date: format_date(bill.cycle.close),
        due_date: format_date(bill.cycle.due),
        amount: JsonMoney(bill.amount),
        amount_is_estimate: bill.amount_is_estimate,
        status: bill.status.as_str(),
        outstanding_amount: JsonMoney(bill.outstanding),
        projected_bill_id: (!paid).then(|| bill_handle(card_id, bill.cycle.month).to_string()),
        settled_payment_ids: bill.payment_ids.iter().map(ToString::to_string).collect(),
    }
}

/// The user's card named by the path: 404 when there is none, 400 for a
/// bank account.
async fn card(
    state: &AppState,
    user: cofre_domain::UserId,
    id: &str,
) -> ApiResult<(AccountId, CardInfo)> {
    let id = path_id(id, AccountId::parse)?;
    let view = state.store.get_account(user, id).await?;
    let info = card_info(&view.account).ok_or(ApiError::NotACreditCard)?;
    Ok((id, info))
}

/// The bills of a credit card whose due date lies in the window, one per
/// billing cycle, oldest first.
#[utoipa::path(get, path = "/v1/cards/{id}/bills", tag = "cards", params(
        ("id" = String, Path, format = Uuid, description = "The card's account id"), BillsQuery),
    responses((status = 200, body = BillsBody),
        (status = 400, description = "Invalid window, or `not_a_credit_card`", body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn list_bills(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
    AppQuery(query): AppQuery<BillsQuery>,
) -> ApiResult<AppJson<BillsBody>> {
    let mut errors = FieldErrors::new();
    let mut required = |field: &str, value: Option<&str>| match value {
        Some(text) => errors.check(date_field(field, text)),
        None => {
            errors.add(field, "is required (YYYY-MM-DD)");
            None
        }
    };
    let from = required("from", query.from.as_deref());
    let to = required("to", query.to.as_deref());
    if let (Some(from), Some(to)) = (from, to) {
        errors.check(check_window(from, to));
    }
    errors.finish()?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(ApiError::field("from", "is required"));
    };
    let (card_id, info) = card(&state, auth.user(), &id).await?;
    let (start, end) = bills_range(&info, from, to);
    let books = books(
        state.store.as_ref(),
        auth.user(),
        (start, end),
        Some(card_id),
        None,
    )
    .await?;
    let today = state.clock.today();
    let bills = books
        .get(card_id)
        .map(|(_, _, book)| book.due_between(from, to, today))
        .unwrap_or_default();
    Ok(AppJson(BillsBody {
        card_id: card_id.to_string(),
        bills: bills.iter().map(|b| bill_body(card_id, b)).collect(),
    }))
}

/// How much of a card's limit is in use: every unpaid bill whose cycle has
/// started (closed or open) plus every installment still to come.
#[utoipa::path(get, path = "/v1/cards/{id}/used-limit", tag = "cards",
    params(("id" = String, Path, format = Uuid, description = "The card's account id")),
    responses((status = 200, body = UsedLimitBody),
        (status = 400, description = "`not_a_credit_card`", body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn used_limit(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<UsedLimitBody>> {
    let (card_id, info) = card(&state, auth.user(), &id).await?;
    let today = state.clock.today();
    let books = whole_books(state.store.as_ref(), auth.user(), today).await?;
    let used = books
        .get(card_id)
        .map_or(Money::ZERO, |(_, _, book)| book.used_limit(today));
    let available = info
        .limit
        .checked_sub(used)
        .ok_or_else(|| ApiError::Internal("used limit out of range".into()))?;
    Ok(AppJson(UsedLimitBody {
        card_id: card_id.to_string(),
        used_limit: JsonMoney(used),
        limit: JsonMoney(info.limit),
        available: JsonMoney(available),
    }))
}
