//! `/v1/transactions`: stored rows (ledger entries), with the list's
//! filters and cursor pagination.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::account::{Patch, SubType};
use cofre_domain::text::{lower, max_chars};
use cofre_domain::time::{date_field, format_date, parse_date};
use cofre_domain::transaction::{
    NewTransactionInput, PagePosition, PageRequest, Transaction, TransactionChanges,
    TransactionFilter, TxStatus, TxType, check_window, new_transaction,
};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors, TagId, TransactionId};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, AppQuery, uuid_field, uuid_patch};
use crate::json::{JsonMoney, patch};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_transactions, create_transaction))
        .routes(routes!(
            get_transaction,
            update_transaction,
            delete_transaction
        ))
}

pub const DEFAULT_PAGE: usize = 50;
/// Most ids one list parameter may name.
pub const MAX_LIST: usize = 100;
pub const MAX_PAGE: usize = 100;

#[derive(Serialize, ToSchema)]
pub struct TagInTransaction {
    pub id: String,
    pub title: String,
    pub color_hex: String,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionBody {
    /// A UUID for stored rows.
    pub id: String,
    pub projected: bool,
    #[schema(value_type = Option<Object>)]
    pub projection: Option<serde_json::Value>,
    /// `YYYY-MM-DD`
    pub date: String,
    #[serde(rename = "type")]
    pub tx_type: TxType,
    pub status: TxStatus,
    /// Always positive; `type` gives the direction.
    pub amount: JsonMoney,
    pub currency: String,
    pub description: String,
    pub notes: Option<String>,
    pub account_id: String,
    pub bill_to_account_id: Option<String>,
    pub category_id: Option<String>,
    pub tags: Vec<TagInTransaction>,
    pub recurrence_id: Option<String>,
    pub recurrence_period_date: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub installment: Option<serde_json::Value>,
    pub transfer_group_id: Option<String>,
    pub created_by_user: bool,
    /// `API`, `OPEN_FINANCE` or `MANUAL`
    pub source: &'static str,
    pub hide_from_results: bool,
    pub card_number: Option<String>,
    pub holder: Option<String>,
    pub holder_is_me: bool,
    pub original_description: Option<String>,
    pub receipt_url: Option<String>,
    pub open_finance: bool,
}

impl TransactionBody {
    fn from_row(t: Transaction, public_url: &str) -> Self {
        Self {
            id: t.id.to_string(),
            projected: false,
            projection: None,
            date: format_date(t.state.date),
            tx_type: t.state.tx_type,
            status: t.state.status,
            amount: JsonMoney(t.state.amount),
            currency: t.currency,
            description: t.state.description,
            notes: t.state.notes,
            account_id: t.account_id.to_string(),
            bill_to_account_id: t.bill_to_account_id.map(|a| a.to_string()),
            category_id: t.state.category_id.map(|c| c.to_string()),
            tags: t
                .tags
                .into_iter()
                .map(|g| TagInTransaction {
                    id: g.id.to_string(),
                    title: g.title,
                    color_hex: g.color_hex,
                })
                .collect(),
            recurrence_id: t.recurrence_id.map(|r| r.to_string()),
            recurrence_period_date: t.recurrence_period_date.map(format_date),
            installment: None,
            transfer_group_id: t.transfer_group_id.map(|g| g.to_string()),
            created_by_user: t.created_by_user,
            source: t.source.as_str(),
            hide_from_results: t.state.hide_from_results,
            card_number: t.card_number,
            holder: t.holder,
            holder_is_me: t.holder_is_me,
            original_description: t.original_description,
            receipt_url: t
                .receipt_name
                .map(|name| format!("{}/receipts/{name}", public_url.trim_end_matches('/'))),
            open_finance: t.open_finance,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct TransactionEnvelope {
    pub transaction: TransactionBody,
}

#[derive(Serialize, ToSchema)]
pub struct CreatedTransaction {
    pub transaction: TransactionBody,
    /// True when this replays an earlier creation with the same `id`.
    pub deduped: bool,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionPage {
    pub data: Vec<TransactionBody>,
    pub has_more: bool,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct UpdateResult {
    pub updated_transaction_id: String,
    pub affected_ids: Vec<String>,
    pub message: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DeleteResult {
    pub deleted_transaction_id: String,
    pub affected_ids: Vec<String>,
}

/// A simple transaction. `id` (a client-chosen UUID) makes the creation
/// idempotent: the same request again answers 200 with `deduped: true`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTransaction {
    #[schema(format = Uuid)]
    id: Option<String>,
    #[schema(required = true, format = Uuid)]
    account_id: Option<String>,
    #[serde(rename = "type")]
    #[schema(required = true)]
    tx_type: Option<TxType>,
    /// Positive, at most 2 decimal places.
    #[schema(required = true, value_type = f64)]
    amount: Option<JsonMoney>,
    #[schema(required = true, max_length = 500)]
    description: Option<String>,
    /// `YYYY-MM-DD`; default today.
    #[schema(format = Date)]
    date: Option<String>,
    /// Default POSTED up to today, PENDING after.
    status: Option<TxStatus>,
    #[schema(max_length = 5000)]
    notes: Option<String>,
    #[schema(format = Uuid)]
    category_id: Option<String>,
    tag_ids: Option<Vec<String>>,
    /// Installment purchases: not available in this version.
    #[schema(value_type = Option<Object>)]
    installments: Option<serde_json::Value>,
    /// Recurrence rules: not available in this version.
    #[schema(value_type = Option<Object>)]
    recurrence: Option<serde_json::Value>,
}

/// Changes a stored row; only the fields sent change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTransaction {
    #[schema(format = Date)]
    date: Option<String>,
    #[serde(rename = "type")]
    tx_type: Option<TxType>,
    status: Option<TxStatus>,
    #[schema(value_type = Option<f64>)]
    amount: Option<JsonMoney>,
    #[schema(max_length = 500)]
    description: Option<String>,
    /// `null` clears the notes.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, max_length = 5000)]
    notes: Patch<String>,
    /// `null` removes the category.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, format = Uuid)]
    category_id: Patch<String>,
    /// Replaces the tags.
    tag_ids: Option<Vec<String>>,
    hide_from_results: Option<bool>,
    /// `this`, `future` or `all`: for entries of a series. A row outside a
    /// series is the only entry it changes.
    scope: Option<String>,
}

fn parse_tag_ids(errors: &mut FieldErrors, ids: &[String]) -> Vec<TagId> {
    ids.iter()
        .enumerate()
        .filter_map(|(i, text)| uuid_field(errors, &format!("tag_ids[{i}]"), text, TagId::parse))
        .collect()
}

fn parse_scope(errors: &mut FieldErrors, scope: Option<&str>) {
    if let Some(scope) = scope
        && !matches!(scope, "this" | "future" | "all")
    {
        errors.add("scope", "must be this, future or all");
    }
}

impl CreateTransaction {
    fn into_input(self) -> Result<NewTransactionInput, DomainError> {
        let mut errors = FieldErrors::new();
        if self.installments.is_some() {
            errors.add(
                "installments",
                "installment purchases are not available in this version",
            );
        }
        if self.recurrence.is_some() {
            errors.add(
                "recurrence",
                "recurrence rules are not available in this version",
            );
        }
        let id = self
            .id
            .as_deref()
            .and_then(|t| uuid_field(&mut errors, "id", t, TransactionId::parse));
        let account_id = self
            .account_id
            .as_deref()
            .and_then(|t| uuid_field(&mut errors, "account_id", t, AccountId::parse));
        let category_id = self
            .category_id
            .as_deref()
            .and_then(|t| uuid_field(&mut errors, "category_id", t, CategoryId::parse));
        let date = self
            .date
            .as_deref()
            .and_then(|d| errors.check(date_field("date", d)));
        let tag_ids = parse_tag_ids(&mut errors, self.tag_ids.as_deref().unwrap_or_default());
        errors.finish()?;
        Ok(NewTransactionInput {
            id,
            // Required fields are checked by the domain rule, which names them.
            account_id,
            tx_type: self.tx_type,
            amount: self.amount.map(|m| m.0),
            description: self.description,
            date,
            status: self.status,
            notes: self.notes,
            category_id,
            tag_ids,
        })
    }
}

impl UpdateTransaction {
    fn into_changes(self) -> Result<TransactionChanges, DomainError> {
        let mut errors = FieldErrors::new();
        parse_scope(&mut errors, self.scope.as_deref());
        let date = self
            .date
            .as_deref()
            .and_then(|d| errors.check(date_field("date", d)));
        let category_id = uuid_patch(
            &mut errors,
            "category_id",
            self.category_id,
            CategoryId::parse,
        );
        let tag_ids = self
            .tag_ids
            .as_deref()
            .map(|ids| parse_tag_ids(&mut errors, ids));
        errors.finish()?;
        let changes = TransactionChanges {
            date,
            tx_type: self.tx_type,
            status: self.status,
            amount: self.amount.map(|m| m.0),
            description: self.description,
            notes: self.notes,
            category_id,
            tag_ids,
            hide_from_results: self.hide_from_results,
        };
        if changes.is_empty() {
            return Err(DomainError::field(
                "body",
                "send at least one field to change",
            ));
        }
        Ok(changes)
    }
}

/// Query of the list. Values are taken as text and validated one by one,
/// so every bad parameter is named.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Window start, `YYYY-MM-DD` (required).
    #[param(required = true, format = Date)]
    from: Option<String>,
    /// Window end, `YYYY-MM-DD` (required); at most 366 days from `from`.
    #[param(required = true, format = Date)]
    to: Option<String>,
    /// `cashflow` (default) or `ledger`.
    view: Option<String>,
    /// `PENDING` or `POSTED`.
    status: Option<String>,
    /// `DEBIT` or `CREDIT`.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    tx_type: Option<String>,
    /// Comma-separated account ids.
    account_id: Option<String>,
    /// Comma-separated category ids.
    category_id: Option<String>,
    /// `true` (default): a category also selects its subcategories.
    include_subcategories: Option<String>,
    /// Comma-separated tag ids: rows with any of them.
    tag_id: Option<String>,
    /// `true`: only rows without a category.
    no_category: Option<String>,
    /// `true`: only rows without tags.
    no_tags: Option<String>,
    /// `true`: only entries of recurrence rules.
    is_recurring: Option<String>,
    /// `true`: only installments.
    is_installments: Option<String>,
    /// A `mocked-bill:` handle: not available in this version.
    bill_id: Option<String>,
    /// Comma-separated account sub types.
    sub_type: Option<String>,
    /// `true`: only hidden rows; `false` (default): only visible rows.
    hidden: Option<String>,
    /// Case-insensitive text in description, notes or original description.
    search: Option<String>,
    /// Page size, 1-100, default 50.
    limit: Option<String>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
}

fn flag(errors: &mut FieldErrors, field: &str, value: Option<&str>, default: bool) -> bool {
    match value {
        None => default,
        Some("true") => true,
        Some("false") => false,
        Some(_) => {
            errors.add(field, "must be true or false");
            default
        }
    }
}

fn id_list<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<Vec<T>> {
    let value = value?;
    let mut out = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match parse(part) {
            Some(id) => out.push(id),
            None => {
                errors.add(field, format!("{part:?} is not valid here"));
                return None;
            }
        }
    }
    if out.is_empty() {
        errors.add(field, "must list at least one value");
        return None;
    }
    if out.len() > MAX_LIST {
        errors.add(field, format!("may list at most {MAX_LIST} values"));
        return None;
    }
    Some(out)
}

fn encode_cursor(position: &PagePosition) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}|{}", format_date(position.date), position.id))
}

fn decode_cursor(text: &str) -> Option<PagePosition> {
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (date, id) = text.split_once('|')?;
    // Ids are UUIDs or projection handles: nothing else reaches the database.
    let id_chars = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '_');
    if id.is_empty() || id.len() > 200 || !id.chars().all(id_chars) {
        return None;
    }
    Some(PagePosition {
        date: parse_date(date)?,
        id: id.to_owned(),
    })
}

impl ListQuery {
    fn parse(self) -> Result<(TransactionFilter, PageRequest), DomainError> {
        let mut errors = FieldErrors::new();
        let from = match self.from.as_deref() {
            Some(d) => errors.check(date_field("from", d)),
            None => {
                errors.add("from", "is required (YYYY-MM-DD)");
                None
            }
        };
        let to = match self.to.as_deref() {
            Some(d) => errors.check(date_field("to", d)),
            None => {
                errors.add("to", "is required (YYYY-MM-DD)");
                None
            }
        };
        if let (Some(from), Some(to)) = (from, to) {
            errors.check(check_window(from, to));
        }
        if let Some(view) = self.view.as_deref()
            && !matches!(view, "cashflow" | "ledger")
        {
            errors.add("view", "must be cashflow or ledger");
        }
        let status = self.status.as_deref().and_then(|s| {
            let parsed = TxStatus::parse(s);
            if parsed.is_none() {
                errors.add("status", "must be PENDING or POSTED");
            }
            parsed
        });
        let tx_type = self.tx_type.as_deref().and_then(|s| {
            let parsed = TxType::parse(s);
            if parsed.is_none() {
                errors.add("type", "must be DEBIT or CREDIT");
            }
            parsed
        });
        let account_ids = id_list(
            &mut errors,
            "account_id",
            self.account_id.as_deref(),
            AccountId::parse,
        );
        let category_ids = id_list(
            &mut errors,
            "category_id",
            self.category_id.as_deref(),
            CategoryId::parse,
        );
        let tag_ids = id_list(&mut errors, "tag_id", self.tag_id.as_deref(), TagId::parse);
        let sub_types = id_list(
            &mut errors,
            "sub_type",
            self.sub_type.as_deref(),
            SubType::parse,
        );
        let include_subcategories = flag(
            &mut errors,
            "include_subcategories",
            self.include_subcategories.as_deref(),
            true,
        );
        let no_category = flag(
            &mut errors,
            "no_category",
            self.no_category.as_deref(),
            false,
        );
        let no_tags = flag(&mut errors, "no_tags", self.no_tags.as_deref(), false);
        let is_recurring = flag(
            &mut errors,
            "is_recurring",
            self.is_recurring.as_deref(),
            false,
        );
        let is_installments = flag(
            &mut errors,
            "is_installments",
            self.is_installments.as_deref(),
            false,
        );
        let hidden = flag(&mut errors, "hidden", self.hidden.as_deref(), false);
        if self.bill_id.is_some() {
            errors.add("bill_id", "card bills are not available in this version");
        }
        let search = self
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(lower);
        if let Some(text) = &search {
            errors.check(max_chars("search", text, 200));
        }
        let limit = match self.limit.as_deref() {
            None => DEFAULT_PAGE,
            Some(text) => match text.parse::<usize>() {
                Ok(n @ 1..=MAX_PAGE) => n,
                _ => {
                    errors.add("limit", format!("must be an integer from 1 to {MAX_PAGE}"));
                    DEFAULT_PAGE
                }
            },
        };
        let after = self.cursor.as_deref().and_then(|c| {
            let position = decode_cursor(c);
            if position.is_none() {
                errors.add("cursor", "is not a cursor this API gave out");
            }
            position
        });
        errors.finish()?;
        let (Some(from), Some(to)) = (from, to) else {
            return Err(DomainError::field("from", "is required"));
        };
        Ok((
            TransactionFilter {
                from,
                to,
                status,
                tx_type,
                account_ids,
                category_ids,
                include_subcategories,
                tag_ids,
                no_category,
                no_tags,
                is_recurring,
                is_installments,
                sub_types,
                hidden,
                search,
            },
            PageRequest { limit, after },
        ))
    }
}

/// Query of DELETE.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// `this`, `future` or `all`, for entries of a series.
    scope: Option<String>,
    /// `true` (default): POSTED occurrences of a series are kept.
    preserve_posted: Option<String>,
    /// `true`: hides the whole installment series.
    hide_series: Option<String>,
    /// `YYYY-MM-DD`: the occurrence or cut-off day, for a rule given by id.
    #[param(format = Date)]
    date: Option<String>,
}

impl DeleteQuery {
    fn validate(&self) -> Result<(), DomainError> {
        let mut errors = FieldErrors::new();
        parse_scope(&mut errors, self.scope.as_deref());
        flag(
            &mut errors,
            "preserve_posted",
            self.preserve_posted.as_deref(),
            true,
        );
        flag(
            &mut errors,
            "hide_series",
            self.hide_series.as_deref(),
            false,
        );
        if let Some(d) = self.date.as_deref() {
            errors.check(date_field("date", d));
        }
        errors.finish()
    }
}

/// Resolves the `{id}` of a transaction path: a stored row's UUID. Handles
/// of projected entries (`mocked-...`) name nothing in this version.
fn stored_id(text: &str) -> ApiResult<TransactionId> {
    if text.starts_with("mocked-") {
        return Err(ApiError::ProjectionNotFound);
    }
    TransactionId::parse(text)
        .ok_or_else(|| ApiError::field("id", "must be a transaction UUID or a projection handle"))
}

/// Merged view of the user's entries inside a window, newest day first,
/// ids ascending within a day.
#[utoipa::path(get, path = "/v1/transactions", tag = "transactions", params(ListQuery),
    responses((status = 200, body = TransactionPage),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn list_transactions(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<ListQuery>,
) -> ApiResult<AppJson<TransactionPage>> {
    let (filter, page) = query.parse()?;
    let result = state
        .store
        .list_transactions(auth.user(), &filter, &page)
        .await?;
    let next_cursor = match (result.has_more, result.items.last()) {
        (true, Some(last)) => Some(encode_cursor(&PagePosition {
            date: last.state.date,
            id: last.id.to_string(),
        })),
        _ => None,
    };
    let public_url = &state.config.public_url;
    Ok(AppJson(TransactionPage {
        data: result
            .items
            .into_iter()
            .map(|t| TransactionBody::from_row(t, public_url))
            .collect(),
        has_more: result.has_more,
        next_cursor,
    }))
}

/// Creates a simple transaction (201), or replays an earlier creation with
/// the same `id` and payload (200, `deduped: true`).
#[utoipa::path(post, path = "/v1/transactions", tag = "transactions", request_body = CreateTransaction,
    responses((status = 201, body = CreatedTransaction),
        (status = 200, description = "Replay of an earlier creation", body = CreatedTransaction),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`id_conflict`: the id was used for another request", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_transaction(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateTransaction>,
) -> ApiResult<Response> {
    let input = body.into_input()?;
    let new = new_transaction(&input, state.clock.today())?;
    let created_row = state
        .store
        .create_transaction(auth.user(), &new, state.clock.now())
        .await?;
    let body = CreatedTransaction {
        transaction: TransactionBody::from_row(created_row.value, &state.config.public_url),
        deduped: created_row.deduped,
    };
    Ok(if created_row.deduped {
        (StatusCode::OK, AppJson(body)).into_response()
    } else {
        created(body).into_response()
    })
}

/// One entry by id.
#[utoipa::path(get, path = "/v1/transactions/{id}", tag = "transactions",
    params(("id" = String, Path, description = "A stored row's UUID or a projection handle")),
    responses((status = 200, body = TransactionEnvelope),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn get_transaction(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<TransactionEnvelope>> {
    let id = stored_id(&id)?;
    let row = state.store.get_transaction(auth.user(), id).await?;
    Ok(AppJson(TransactionEnvelope {
        transaction: TransactionBody::from_row(row, &state.config.public_url),
    }))
}

/// Edits a stored row.
#[utoipa::path(patch, path = "/v1/transactions/{id}", tag = "transactions", request_body = UpdateTransaction,
    params(("id" = String, Path, description = "A stored row's UUID or a projection handle")),
    responses((status = 200, body = UpdateResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_transaction(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<UpdateTransaction>,
) -> ApiResult<AppJson<UpdateResult>> {
    let id = stored_id(&id)?;
    let changes = body.into_changes()?;
    let row = state
        .store
        .update_transaction(auth.user(), id, &changes, state.clock.now())
        .await?;
    Ok(AppJson(UpdateResult {
        updated_transaction_id: row.id.to_string(),
        affected_ids: vec![row.id.to_string()],
        message: None,
    }))
}

/// Deletes a stored row. Answers 200 with the deleted id.
#[utoipa::path(delete, path = "/v1/transactions/{id}", tag = "transactions", params(
        ("id" = String, Path, description = "A stored row's UUID or a projection handle"),
        DeleteQuery),
    responses((status = 200, body = DeleteResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_transaction(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppQuery(query): AppQuery<DeleteQuery>,
) -> ApiResult<AppJson<DeleteResult>> {
    let id = stored_id(&id)?;
    query.validate()?;
    state.store.delete_transaction(auth.user(), id).await?;
    Ok(AppJson(DeleteResult {
        deleted_transaction_id: id.to_string(),
        affected_ids: vec![id.to_string()],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        let position = PagePosition {
            date: date(2026, 11, 22),
            id: TransactionId::new().to_string(),
        };
        assert_eq!(decode_cursor(&encode_cursor(&position)), Some(position));
        assert_eq!(decode_cursor("not-a-cursor"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("2026-13-01|x")), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|")), None);
        assert_eq!(
            decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|a\0b")),
            None
        );
        assert_eq!(
            decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|a'b")),
            None
        );
    }
}
