//! `/v1/budgets`: a monthly limit per category, and how much of it each
//! month has used (`/v1/budgets/status`).

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::budget::{
    Budget, BudgetInput, BudgetPatch, MonthStatus, Usage, apply_patch, new_budget, parse_month,
};
use cofre_domain::card::BillMonth;
use cofre_domain::time::format_timestamp;
use cofre_domain::{BudgetId, Money};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiResult, Problem};
use crate::extract::{AppJson, AppPath, AppQuery, path_id};
use crate::json::{Amount, JsonMoney, patch};
use crate::reports::budgets_status;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_budgets, create_budget))
        .routes(routes!(budget_status))
        .routes(routes!(get_budget, update_budget, delete_budget))
}

#[derive(Serialize, ToSchema)]
pub struct LimitBody {
    /// `YYYY-MM`: the limit holds from this month until the next change.
    pub from_month: String,
    pub amount: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct BudgetBody {
    pub id: String,
    pub category_id: String,
    /// The limit of the newest change (see `limits` for earlier months).
    pub amount: JsonMoney,
    /// Rows of the category's subcategories count too.
    pub include_subcategories: bool,
    /// What a month leaves (or overspends) carries into the next.
    pub rollover: bool,
    /// `YYYY-MM`
    pub starts_on: String,
    /// `YYYY-MM`, inclusive; null: no end.
    pub ends_on: Option<String>,
    /// Every change of the limit, oldest first.
    pub limits: Vec<LimitBody>,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<Budget> for BudgetBody {
    fn from(b: Budget) -> Self {
        Self {
            id: b.id.to_string(),
            category_id: b.category_id.to_string(),
            amount: JsonMoney(b.amount()),
            include_subcategories: b.include_subcategories,
            rollover: b.rollover,
            starts_on: b.starts_on.key(),
            ends_on: b.ends_on.map(BillMonth::key),
            limits: b
                .limits
                .iter()
                .map(|l| LimitBody {
                    from_month: l.from_month.key(),
                    amount: JsonMoney(l.amount),
                })
                .collect(),
            created_at: format_timestamp(b.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct BudgetList {
    pub data: Vec<BudgetBody>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBudget {
    /// One of the categories the user sees (own or system).
    #[schema(required = true, format = Uuid)]
    category_id: Option<String>,
    /// The monthly limit.
    #[schema(required = true, value_type = Amount)]
    amount: Option<JsonMoney>,
    /// Default `true`.
    include_subcategories: Option<bool>,
    /// Default `false`.
    rollover: Option<bool>,
    /// `YYYY-MM`; default the current month.
    #[schema(pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    starts_on: Option<String>,
    /// `YYYY-MM`, inclusive; default no end.
    #[schema(pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    ends_on: Option<String>,
}

/// The user's budgets, oldest first.
#[utoipa::path(get, path = "/v1/budgets", tag = "budgets",
    responses((status = 200, body = BudgetList), CommonErrors))]
async fn list_budgets(
    State(state): State<AppState>,
    auth: Auth<Read>,
) -> ApiResult<AppJson<BudgetList>> {
    let budgets = state.store.list_budgets(auth.user()).await?;
    Ok(AppJson(BudgetList {
        data: budgets.into_iter().map(Into::into).collect(),
    }))
}

/// Sets a monthly limit for a category. 409 `budget_conflict` when
/// another budget of the category covers one of the months.
#[utoipa::path(post, path = "/v1/budgets", tag = "budgets", request_body = CreateBudget,
    responses((status = 201, body = BudgetBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_budget(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateBudget>,
) -> ApiResult<(StatusCode, AppJson<BudgetBody>)> {
    let budget = new_budget(
        auth.user(),
        &BudgetInput {
            category_id: body.category_id.as_deref(),
            amount: body.amount.map(|a| a.0),
            include_subcategories: body.include_subcategories,
            rollover: body.rollover,
            starts_on: body.starts_on.as_deref(),
            ends_on: body.ends_on.as_deref(),
        },
        BillMonth::of(state.clock.today()),
        state.clock.now(),
    )?;
    let budget = state.store.create_budget(auth.user(), &budget).await?;
    Ok(created(budget.into()))
}

/// One budget.
#[utoipa::path(get, path = "/v1/budgets/{id}", tag = "budgets",
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = BudgetBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn get_budget(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<BudgetBody>> {
    let id = path_id(&id, BudgetId::parse)?;
    let budget = state.store.get_budget(auth.user(), id).await?;
    Ok(AppJson(budget.into()))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1)]
pub struct UpdateBudget {
    #[schema(format = Uuid)]
    category_id: Option<String>,
    /// The new limit: of every month, or with `from_month` from that month
    /// on (earlier months keep theirs).
    #[schema(value_type = Option<Amount>)]
    amount: Option<JsonMoney>,
    /// `YYYY-MM`, a month the budget covers; needs `amount`.
    #[schema(pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    from_month: Option<String>,
    include_subcategories: Option<bool>,
    rollover: Option<bool>,
    /// `YYYY-MM`
    #[schema(pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    starts_on: Option<String>,
    /// `YYYY-MM`, inclusive; `null`: no end.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    ends_on: cofre_domain::account::Patch<String>,
}

/// Changes a budget. `amount` with `from_month` changes the limit from
/// that month on and keeps earlier months at theirs. 409
/// `budget_conflict` when the new months or category clash with another
/// budget.
#[utoipa::path(patch, path = "/v1/budgets/{id}", tag = "budgets", request_body = UpdateBudget,
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = BudgetBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_budget(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<UpdateBudget>,
) -> ApiResult<AppJson<BudgetBody>> {
    use cofre_domain::account::Patch;
    let id = path_id(&id, BudgetId::parse)?;
    let ends_on = match body.ends_on {
        Patch::Keep => None,
        Patch::Clear => Some(None),
        Patch::Set(text) => Some(Some(text)),
    };
    let op = Box::new(move |current: &Budget| {
        apply_patch(
            current,
            &BudgetPatch {
                category_id: body.category_id.as_deref(),
                amount: body.amount.map(|a| a.0),
                from_month: body.from_month.as_deref(),
                include_subcategories: body.include_subcategories,
                rollover: body.rollover,
                starts_on: body.starts_on.as_deref(),
                ends_on: ends_on.as_ref().map(Option::as_deref),
            },
        )
    });
    let budget = state.store.update_budget(auth.user(), id, op).await?;
    Ok(AppJson(budget.into()))
}

/// Deletes a budget; the rows it counted are untouched.
#[utoipa::path(delete, path = "/v1/budgets/{id}", tag = "budgets",
    params(("id" = String, Path, format = Uuid)),
    responses((status = 204, description = "Deleted"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_budget(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, BudgetId::parse)?;
    state.store.delete_budget(auth.user(), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A percentage with two decimals, as a JSON number.
#[derive(Clone, Copy, Debug)]
pub struct JsonPercent(i64);

impl PartialSchema for JsonPercent {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::Number))
            .multiple_of(Some(0.01))
            .description(Some("A percentage with at most 2 decimal places"))
            .into()
    }
}

impl ToSchema for JsonPercent {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Percent")
    }
}

impl Serialize for JsonPercent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Hundredths of a percent print exactly as money prints cents.
        let text = Money::from_cents(self.0).to_string();
        let raw = RawValue::from_string(text).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatusQuery {
    /// `YYYY-MM`; default the current month in `COFRE_TIMEZONE`.
    #[param(value_type = Option<String>, pattern = "^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$")]
    month: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct BudgetStatusBody {
    pub budget_id: String,
    pub category_id: String,
    /// The month's limit.
    pub limit: JsonMoney,
    /// What earlier months left (negative: overspent); 0 without rollover.
    pub rollover_in: JsonMoney,
    /// limit + rollover_in.
    pub available: JsonMoney,
    /// POSTED DEBITs minus refund CREDITs of the month in the categories,
    /// card purchases in the month they were made, and projected
    /// recurrences and installments dated before today (they have
    /// happened); no transfers, bill payments or hidden rows.
    pub spent: JsonMoney,
    /// The same for what is still to come: PENDING rows and projected
    /// recurrences and installments dated today or later in the month.
    pub committed: JsonMoney,
    /// available - spent - committed.
    pub remaining: JsonMoney,
    /// (spent + committed) / available x 100, two decimals; null when
    /// nothing is available.
    pub percent_used: Option<JsonPercent>,
    /// `over` past what is available, `warning` from
    /// `COFRE_BUDGET_WARNING_PERCENT` (default 80) of it, else `ok`.
    #[schema(pattern = "^(ok|warning|over)$")]
    pub status: &'static str,
}

#[derive(Serialize, ToSchema)]
pub struct BudgetTotalsBody {
    pub limit: JsonMoney,
    pub rollover_in: JsonMoney,
    pub available: JsonMoney,
    pub spent: JsonMoney,
    pub committed: JsonMoney,
    pub remaining: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct UnbudgetedBody {
    /// Spending of the month in categories no budget covers (rows without
    /// a category as one more), each category's DEBITs minus CREDITs; a
    /// category whose CREDITs exceed its DEBITs (income) counts as 0.
    pub spent: JsonMoney,
    pub committed: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct BudgetsStatusBody {
    /// `YYYY-MM`
    pub month: String,
    /// One per budget covering the month, oldest budget first.
    pub budgets: Vec<BudgetStatusBody>,
    /// Sums over the budgets (a row counted by two budgets counts twice).
    pub totals: BudgetTotalsBody,
    pub unbudgeted: UnbudgetedBody,
}

fn status_body(budget: &Budget, s: &MonthStatus) -> BudgetStatusBody {
    BudgetStatusBody {
        budget_id: budget.id.to_string(),
        category_id: budget.category_id.to_string(),
        limit: JsonMoney(s.limit),
        rollover_in: JsonMoney(s.rollover_in),
        available: JsonMoney(s.available),
        spent: JsonMoney(s.usage.spent),
        committed: JsonMoney(s.usage.committed),
        remaining: JsonMoney(s.remaining),
        percent_used: s.percent_used_bp.map(JsonPercent),
        status: s.level.as_str(),
    }
}

fn total(values: impl Iterator<Item = Money>) -> JsonMoney {
    JsonMoney(cofre_domain::bills::sum(values))
}

/// Each budget's month: its limit, what rolled over, what was spent and
/// is still to come, and what remains; with totals and the spending no
/// budget covers.
#[utoipa::path(get, path = "/v1/budgets/status", tag = "budgets", params(StatusQuery),
    responses((status = 200, body = BudgetsStatusBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn budget_status(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<StatusQuery>,
) -> ApiResult<AppJson<BudgetsStatusBody>> {
    let today = state.clock.today();
    let month = match query.month.as_deref() {
        Some(text) => parse_month("month", text)?,
        None => BillMonth::of(today),
    };
    let status = budgets_status(
        state.store.as_ref(),
        auth.user(),
        month,
        today,
        state.config.budget_warning_percent,
    )
    .await?;
    let rows = &status.budgets;
    let unbudgeted: Usage = status.unbudgeted;
    Ok(AppJson(BudgetsStatusBody {
        month: month.key(),
        totals: BudgetTotalsBody {
            limit: total(rows.iter().map(|b| b.status.limit)),
            rollover_in: total(rows.iter().map(|b| b.status.rollover_in)),
            available: total(rows.iter().map(|b| b.status.available)),
            spent: total(rows.iter().map(|b| b.status.usage.spent)),
            committed: total(rows.iter().map(|b| b.status.usage.committed)),
            remaining: total(rows.iter().map(|b| b.status.remaining)),
        },
        budgets: rows
            .iter()
            .map(|b| status_body(&b.budget, &b.status))
            .collect(),
        unbudgeted: UnbudgetedBody {
            spent: JsonMoney(unbudgeted.spent),
            committed: JsonMoney(unbudgeted.committed),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_print_with_two_decimals() {
        let text =
            serde_json::to_string(&[JsonPercent(12_345), JsonPercent(-5), JsonPercent(0)]).unwrap();
        assert_eq!(text, "[123.45,-0.05,0.00]");
    }
}
