//! `/v1/accounts`: bank accounts and credit cards with computed balances.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::account::{AccountChanges, AccountType, Patch, SubType};
use cofre_domain::time::format_timestamp;
use cofre_domain::{AccountId, DomainError, FieldErrors};
use cofre_store::{AccountView, WriteContext};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiResult, Problem};
use crate::extract::{AppJson, AppPath, path_id, uuid_patch};
use crate::json::{CardDay, JsonMoney, NonNegativeAmount, Title, map_patch, patch};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_accounts, create_account))
        .routes(routes!(get_account, update_account, delete_account))
}

#[derive(Serialize, ToSchema)]
pub struct CreditBody {
    pub close_day: u8,
    pub due_day: u8,
    /// Same value as `due_day`.
    pub due_day_of_month: u8,
    pub cycle_auto: bool,
    pub limit: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct OpenFinanceBody {
    pub connected: bool,
    pub connector_name: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct AccountBody {
    pub id: String,
    #[serde(rename = "type")]
    pub account_type: AccountType,
    pub sub_type: SubType,
    pub title: String,
    pub archived: bool,
    pub exclude_from_totals: bool,
    pub currency: String,
    /// Sum of POSTED rows; null for archived accounts; negative for a card with debt.
    pub balance: Option<JsonMoney>,
    pub credit: Option<CreditBody>,
    pub pay_bill_from_account_id: Option<String>,
    pub icon_id: Option<String>,
    pub card_icon_id: Option<String>,
    pub open_finance: OpenFinanceBody,
    pub card_holders: Option<BTreeMap<String, String>>,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<AccountView> for AccountBody {
    fn from(view: AccountView) -> Self {
        let AccountView { account, balance } = view;
        let state = account.state;
        Self {
            id: account.id.to_string(),
            account_type: state.account_type,
            sub_type: state.sub_type,
            title: state.title,
            archived: state.archived,
            exclude_from_totals: state.exclude_from_totals,
            currency: state.currency,
            balance: (!state.archived).then_some(JsonMoney(balance)),
            credit: state.credit.map(|c| CreditBody {
                close_day: c.close_day,
                due_day: c.due_day,
                due_day_of_month: c.due_day,
                cycle_auto: c.cycle_auto,
                limit: JsonMoney(c.limit),
            }),
            pay_bill_from_account_id: state.pay_bill_from_account_id.map(|id| id.to_string()),
            icon_id: state.icon_id,
            card_icon_id: state.card_icon_id,
            open_finance: OpenFinanceBody {
                connected: account.open_finance_connected,
                connector_name: account.connector_name,
            },
            card_holders: account.card_holders,
            created_at: format_timestamp(account.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct AccountList {
    pub data: Vec<AccountBody>,
}

#[derive(Serialize, ToSchema)]
pub struct CreatedAccount {
    #[serde(flatten)]
    pub account: AccountBody,
    /// Id of the opening-balance row; null when no (or a zero) initial balance was given.
    pub initial_balance_transaction_id: Option<String>,
}

/// A new manual account. Card settings apply to `type: CREDIT` only.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAccount {
    #[serde(rename = "type")]
    #[schema(required = true, value_type = AccountType)]
    account_type: Option<AccountType>,
    sub_type: Option<SubType>,
    #[schema(value_type = Option<Title>)]
    title: Option<String>,
    icon_id: Option<String>,
    /// Resolves an icon of the catalogue by name.
    icon_name: Option<String>,
    card_icon_id: Option<String>,
    /// 3-letter code; default the base currency (BRL).
    #[schema(pattern = "^[A-Za-z]{3}$")]
    currency_code: Option<String>,
    /// Creates an opening-balance row dated today when not zero.
    initial_balance: Option<JsonMoney>,
    #[schema(value_type = Option<NonNegativeAmount>)]
    credit_limit: Option<JsonMoney>,
    credit_close_day: Option<CardDay>,
    credit_due_day: Option<CardDay>,
    credit_due_day_of_month: Option<CardDay>,
    credit_cycle_auto: Option<bool>,
    #[schema(format = Uuid)]
    pay_bill_from_account_id: Option<String>,
    exclude_from_totals: Option<bool>,
}

/// Changes an account; only the fields sent change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAccount {
    #[serde(rename = "type")]
    account_type: Option<AccountType>,
    sub_type: Option<SubType>,
    #[schema(value_type = Option<Title>)]
    title: Option<String>,
    icon_id: Option<String>,
    icon_name: Option<String>,
    card_icon_id: Option<String>,
    #[schema(pattern = "^[A-Za-z]{3}$")]
    currency_code: Option<String>,
    /// `null` sets the limit to 0.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<NonNegativeAmount>)]
    credit_limit: Patch<JsonMoney>,
    credit_close_day: Option<CardDay>,
    credit_due_day: Option<CardDay>,
    credit_due_day_of_month: Option<CardDay>,
    credit_cycle_auto: Option<bool>,
    /// `null` removes the paying account.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, format = Uuid)]
    pay_bill_from_account_id: Patch<String>,
    exclude_from_totals: Option<bool>,
    archived: Option<bool>,
}

impl UpdateAccount {
    fn into_changes(self) -> Result<AccountChanges, DomainError> {
        let mut errors = FieldErrors::new();
        let pay_bill_from_account_id = uuid_patch(
            &mut errors,
            "pay_bill_from_account_id",
            self.pay_bill_from_account_id,
            AccountId::parse,
        );
        errors.finish()?;
        Ok(AccountChanges {
            account_type: self.account_type,
            sub_type: self.sub_type,
            title: self.title,
            icon_id: self.icon_id,
            icon_name: self.icon_name,
            card_icon_id: self.card_icon_id,
            currency_code: self.currency_code,
            credit_limit: map_patch(self.credit_limit, |m| m.0),
            credit_close_day: self.credit_close_day.map(|d| d.0),
            credit_due_day: self.credit_due_day.map(|d| d.0),
            credit_due_day_of_month: self.credit_due_day_of_month.map(|d| d.0),
            credit_cycle_auto: self.credit_cycle_auto,
            pay_bill_from_account_id,
            exclude_from_totals: self.exclude_from_totals,
            archived: self.archived,
        })
    }
}

impl CreateAccount {
    /// Creation is a PATCH of nothing plus an initial balance.
    fn split(self) -> (UpdateAccount, Option<JsonMoney>) {
        let update = UpdateAccount {
            account_type: self.account_type,
            sub_type: self.sub_type,
            title: self.title,
            icon_id: self.icon_id,
            icon_name: self.icon_name,
            card_icon_id: self.card_icon_id,
            currency_code: self.currency_code,
            credit_limit: self.credit_limit.map_or(Patch::Keep, Patch::Set),
            credit_close_day: self.credit_close_day,
            credit_due_day: self.credit_due_day,
            credit_due_day_of_month: self.credit_due_day_of_month,
            credit_cycle_auto: self.credit_cycle_auto,
            pay_bill_from_account_id: self
                .pay_bill_from_account_id
                .map_or(Patch::Keep, Patch::Set),
            exclude_from_totals: self.exclude_from_totals,
            archived: None,
        };
        (update, self.initial_balance)
    }
}

/// Every account of the user, oldest first.
#[utoipa::path(get, path = "/v1/accounts", tag = "accounts",
    responses((status = 200, body = AccountList), CommonErrors))]
async fn list_accounts(
    State(state): State<AppState>,
    auth: Auth<Read>,
) -> ApiResult<AppJson<AccountList>> {
    let accounts = state.store.list_accounts(auth.user()).await?;
    Ok(AppJson(AccountList {
        data: accounts.into_iter().map(Into::into).collect(),
    }))
}

/// Creates a manual account (and its opening-balance row).
#[utoipa::path(post, path = "/v1/accounts", tag = "accounts", request_body = CreateAccount,
    responses((status = 201, body = CreatedAccount),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_account(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateAccount>,
) -> ApiResult<(StatusCode, AppJson<CreatedAccount>)> {
    let (update, initial_balance) = body.split();
    let changes = update.into_changes()?;
    let ctx = WriteContext {
        now: state.clock.now(),
        today: state.clock.today(),
    };
    let (view, opening) = state
        .store
        .create_account(
            auth.user(),
            &changes,
            initial_balance.map(|m| m.0),
            &state.config.base_currency,
            ctx,
        )
        .await?;
    Ok(created(CreatedAccount {
        account: view.into(),
        initial_balance_transaction_id: opening.map(|id| id.to_string()),
    }))
}

/// One account.
#[utoipa::path(get, path = "/v1/accounts/{id}", tag = "accounts",
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = AccountBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn get_account(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<AccountBody>> {
    let id = path_id(&id, AccountId::parse)?;
    Ok(AppJson(
        state.store.get_account(auth.user(), id).await?.into(),
    ))
}

/// Changes an account; `archived: true` hides its balance.
#[utoipa::path(patch, path = "/v1/accounts/{id}", tag = "accounts", request_body = UpdateAccount,
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = AccountBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_account(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<UpdateAccount>,
) -> ApiResult<AppJson<AccountBody>> {
    let id = path_id(&id, AccountId::parse)?;
    let changes = body.into_changes()?;
    let view = state
        .store
        .update_account(auth.user(), id, &changes)
        .await?;
    Ok(AppJson(view.into()))
}

/// Deletes the account with all its transactions and their receipt files.
#[utoipa::path(delete, path = "/v1/accounts/{id}", tag = "accounts",
    params(("id" = String, Path, format = Uuid)),
    responses((status = 204, description = "Deleted"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_account(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, AccountId::parse)?;
    let receipts = state.store.delete_account(auth.user(), id).await?;
    state.config.receipts.remove(&receipts).await;
    Ok(StatusCode::NO_CONTENT)
}
