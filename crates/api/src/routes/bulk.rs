//! Clean-up tools over many stored rows: `POST /v1/transactions/bulk`
//! (one change or a deletion for a selection, all or nothing) and
//! `GET /v1/transactions/duplicates` (rows that look entered twice).

use axum::extract::State;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::bulk::{BulkAction, BulkSet, MAX_ROWS, OPEN_FINANCE_LOCKED};
use cofre_domain::duplicates;
use cofre_domain::time::{date_field, format_date};
use cofre_domain::transaction::{
    EntryId, PageRequest, Transaction, TransactionChanges, TransactionFilter, TxType, check_window,
};
use cofre_domain::{AccountId, FieldErrors, TransactionId};
use cofre_store::BulkRequest;

use super::CommonErrors;
use super::transactions::{ListQuery, ParsedList, UpdateTransaction, entry_id, resolve_filter};
use crate::AppState;
use crate::auth::{Auth, BulkQuota, Read, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppQuery, parse_value, uuid_field};
use crate::json::JsonMoney;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(bulk))
        .routes(routes!(find_duplicates))
}

/// Most rows the duplicate finder reads in one call.
const DUPLICATES_ROW_LIMIT: usize = 50_000;

/// Parameters of the list that do not select rows.
const NOT_IN_FILTER: [&str; 2] = ["limit", "cursor"];

/// A change or a deletion for the rows named by `ids` and/or matched by
/// `filter` (both: the rows in both).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkBody {
    /// Stored transaction ids (no projection handles), at most 5,000.
    ids: Option<Vec<String>>,
    /// The list's query parameters as an object, e.g. `{"from": "2026-01-01",
    /// "to": "2026-01-31", "search": "uber"}` (`from` and `to` required;
    /// `limit` and `cursor` not accepted). Values are strings, booleans or
    /// arrays of ids.
    #[schema(value_type = Option<Object>)]
    filter: Option<Map<String, Value>>,
    /// The fields of PATCH (`date`, `type`, `status`, `amount`,
    /// `description`, `notes`, `category_id`, `tag_ids`,
    /// `hide_from_results`) plus `account_id` to move rows; no `scope`.
    #[schema(value_type = Option<SetSchema>)]
    set: Option<Map<String, Value>>,
    /// `true` deletes the selected rows.
    delete: Option<bool>,
    /// Guard: when the selection matches another number of rows, nothing
    /// changes and the answer is 409 `expected_count_mismatch`.
    expected_count: Option<u64>,
}

#[derive(Serialize, ToSchema)]
pub struct SkippedRow {
    pub id: String,
    /// `open_finance_locked` (a bank-connection row keeps the bank's
    /// fields) or `transfer_leg_locked` (a transfer leg keeps its type and
    /// account)
    #[schema(example = "open_finance_locked")]
    pub reason: &'static str,
    /// Fields that could not be changed; empty when a deletion was refused.
    pub fields: Vec<&'static str>,
}

#[derive(Serialize, ToSchema)]
pub struct BulkResult {
    /// Rows the selection matched.
    pub matched_count: u64,
    /// Rows changed (or, for `delete`, deleted): the contract's one count
    /// of the rows acted on, whichever the action.
    pub updated_count: u64,
    /// Rows deleted: for `delete`, the same as `updated_count`; 0 for `set`.
    pub deleted_count: u64,
    /// Rows left (in whole or in part) as they were.
    pub skipped: Vec<SkippedRow>,
    /// Of `skipped`, rows from a bank connection.
    pub skipped_open_finance: u64,
}

/// Reads the `filter` object through the list's own parameter rules.
fn parse_filter(map: Map<String, Value>) -> ApiResult<ParsedList> {
    let mut errors = FieldErrors::new();
    let mut query = Map::new();
    for (key, value) in map {
        let field = format!("filter.{key}");
        if NOT_IN_FILTER.contains(&key.as_str()) {
            errors.add(field, "selects no rows; a bulk call takes every match");
            continue;
        }
        let text = match value {
            Value::String(s) => s,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Array(items) => {
                let parts: Option<Vec<String>> = items
                    .into_iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect();
                match parts {
                    Some(parts) => parts.join(","),
                    None => {
                        errors.add(field, "must be an array of strings");
                        continue;
                    }
                }
            }
            _ => {
                errors.add(field, "must be a string, a boolean or an array of strings");
                continue;
            }
        };
        query.insert(key, Value::String(text));
    }
    errors.finish()?;
    let query: ListQuery = parse_value(Value::Object(query), "filter")?;
    query
        .parse()
        .map_err(|e| cofre_domain::bulk::prefix_fields(e, "filter.").into())
}

/// The schema of `set`, made from PATCH's: its fields but `scope`, plus
/// `account_id`; at least one.
pub struct SetSchema;

impl PartialSchema for SetSchema {
    fn schema() -> RefOr<Schema> {
        let mut schema = UpdateTransaction::schema();
        if let RefOr::T(Schema::Object(object)) = &mut schema {
            object.properties.remove("scope");
            object.properties.insert(
                "account_id".into(),
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
                    .description(Some("Moves the rows to this account"))
                    .into(),
            );
            object.min_properties = Some(1);
            object.description =
                Some("The fields of PATCH, without `scope`, plus `account_id`".into());
        }
        schema
    }
}

impl ToSchema for SetSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("BulkSet")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        UpdateTransaction::schemas(schemas);
    }
}

/// Reads `set`: the fields of PATCH, plus `account_id`.
fn parse_set(mut map: Map<String, Value>) -> ApiResult<BulkSet> {
    if map.contains_key("scope") {
        return Err(ApiError::field(
            "set.scope",
            "is not accepted: a bulk change applies to each selected row alone",
        ));
    }
    let account_id = match map.remove("account_id") {
        None => None,
        Some(Value::String(text)) => Some(
            AccountId::parse(&text)
                .ok_or_else(|| ApiError::field("set.account_id", "must be an account UUID"))?,
        ),
        Some(_) => return Err(ApiError::field("set.account_id", "must be an account UUID")),
    };
    let changes = if map.is_empty() {
        TransactionChanges::default()
    } else {
        let update: UpdateTransaction = parse_value(Value::Object(map), "set")?;
        update
            .into_changes()
            .map_err(|e| cofre_domain::bulk::prefix_fields(e, "set."))?
    };
    let set = BulkSet {
        changes,
        account_id,
    };
    set.validate()?;
    Ok(set)
}

fn parse_ids(texts: &[String]) -> ApiResult<Vec<TransactionId>> {
    if texts.is_empty() {
        return Err(ApiError::field("ids", "must list at least one id"));
    }
    if texts.len() > MAX_ROWS {
        return Err(ApiError::field(
            "ids",
            format!("may list at most {MAX_ROWS} ids"),
        ));
    }
    let mut errors = FieldErrors::new();
    let mut ids = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let field = format!("ids[{i}]");
        match entry_id(text) {
            Ok(EntryId::Stored(id)) => ids.push(id),
            Ok(EntryId::Projected(_)) | Err(ApiError::ProjectionNotFound) => errors.add(
                field,
                "is a projection handle: bulk edits change stored rows only",
            ),
            Err(_) => {
                uuid_field(&mut errors, &field, text, TransactionId::parse);
            }
        }
    }
    errors.finish()?;
    // Kept in the client's order (repeats included), so errors name the
    // positions the client sent.
    Ok(ids)
}

impl BulkBody {
    async fn into_request(self, state: &AppState, auth: &Auth<Write>) -> ApiResult<BulkRequest> {
        let action = match (self.set, self.delete) {
            (Some(_), Some(true)) => {
                return Err(ApiError::field(
                    "delete",
                    "send either set or delete: true, not both",
                ));
            }
            (Some(set), _) => BulkAction::Set(parse_set(set)?),
            (None, Some(true)) => BulkAction::Delete,
            (None, _) => {
                return Err(ApiError::field("set", "is required (or send delete: true)"));
            }
        };
        let ids = self.ids.as_deref().map(parse_ids).transpose()?;
        let filter = match self.filter {
            Some(map) => {
                let mut parsed = parse_filter(map)?;
                // Bulk edits change stored rows, card rows included.
                parsed.filter.cashflow = false;
                let filter = resolve_filter(state, auth.user(), parsed)
                    .await
                    .map_err(|err| match err {
                        ApiError::Validation(list) => cofre_domain::bulk::prefix_fields(
                            cofre_domain::DomainError::Validation(list),
                            "filter.",
                        )
                        .into(),
                        other => other,
                    })?;
                Some(filter)
            }
            None => None,
        };
        if ids.is_none() && filter.is_none() {
            return Err(ApiError::field(
                "ids",
                "name the rows with ids and/or filter",
            ));
        }
        Ok(BulkRequest {
            ids,
            filter,
            action,
            expected_count: self.expected_count,
        })
    }
}

/// Applies one change (`set`) or a deletion (`delete: true`) to the stored
/// rows named by `ids` and/or matched by `filter`, all in one transaction:
/// every row changes or none does. At most 5,000 rows. With
/// `expected_count`, a selection of another size changes nothing (409).
/// Rows from a bank connection keep `date`, `amount`, `type`, `description`
/// and `account_id` and are never deleted here: they are listed in
/// `skipped`. Deleted rows of a series do not come back as projections;
/// deleted rows' receipt files are removed.
/// Limited to 10 calls per hour per key (`COFRE_BULK_LIMIT_PER_HOUR`).
#[utoipa::path(post, path = "/v1/transactions/bulk", tag = "transactions", request_body = BulkBody,
    responses((status = 200, body = BulkResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`expected_count_mismatch`: nothing changed; `matched_count` says how many rows matched", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn bulk(
    State(state): State<AppState>,
    auth: Auth<Write>,
    quota: BulkQuota,
    AppJson(body): AppJson<BulkBody>,
) -> ApiResult<(HeaderMap, AppJson<BulkResult>)> {
    let request = body.into_request(&state, &auth).await?;
    let outcome = state
        .store
        .bulk(auth.user(), &request, state.clock.now())
        .await?;
    state.config.receipts.remove(&outcome.receipts).await;
    let skipped_open_finance = outcome
        .skipped
        .iter()
        .filter(|s| s.reason == OPEN_FINANCE_LOCKED)
        .count() as u64;
    Ok((
        quota.headers(),
        AppJson(BulkResult {
            matched_count: outcome.matched,
            updated_count: outcome.updated,
            deleted_count: outcome.deleted,
            skipped: outcome
                .skipped
                .into_iter()
                .map(|s| SkippedRow {
                    id: s.id.to_string(),
                    reason: s.reason,
                    fields: s.fields,
                })
                .collect(),
            skipped_open_finance,
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DuplicatesQuery {
    /// `YYYY-MM-DD`; default 89 days before `to`.
    #[param(format = Date)]
    from: Option<String>,
    /// `YYYY-MM-DD`; default today. At most 366 days after `from`.
    #[param(format = Date)]
    to: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DuplicateRow {
    pub id: String,
    pub description: String,
    pub amount: JsonMoney,
    #[serde(rename = "type")]
    pub tx_type: TxType,
    pub status: cofre_domain::transaction::TxStatus,
    #[schema(format = Date)]
    pub date: String,
    pub account_id: String,
    pub category_id: Option<String>,
    pub source: &'static str,
}

#[derive(Serialize, ToSchema)]
pub struct DuplicateGroupBody {
    pub description: String,
    pub amount: JsonMoney,
    #[serde(rename = "type")]
    pub tx_type: TxType,
    /// Oldest first.
    pub transactions: Vec<DuplicateRow>,
}

#[derive(Serialize, ToSchema)]
pub struct Period {
    #[schema(format = Date)]
    pub from: String,
    #[schema(format = Date)]
    pub to: String,
}

#[derive(Serialize, ToSchema)]
pub struct DuplicatesResult {
    pub groups: Vec<DuplicateGroupBody>,
    pub group_count: usize,
    /// Rows in all groups together.
    pub duplicate_row_count: usize,
    /// The window analysed.
    pub period: Period,
}

fn duplicate_row(t: Transaction) -> DuplicateRow {
    DuplicateRow {
        id: t.id.to_string(),
        description: t.state.description,
        amount: JsonMoney(t.state.amount),
        tx_type: t.state.tx_type,
        status: t.state.status,
        date: format_date(t.state.date),
        account_id: t.account_id.to_string(),
        category_id: t.state.category_id.map(|c| c.to_string()),
        source: t.source.as_str(),
    }
}

/// Groups of visible stored rows that look entered twice: the same
/// description (trimmed, ignoring case), amount and type, on dates at most
/// 3 days apart. Without `from`/`to`, the last 90 days up to today.
#[utoipa::path(get, path = "/v1/transactions/duplicates", tag = "transactions", params(DuplicatesQuery),
    responses((status = 200, body = DuplicatesResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn find_duplicates(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<DuplicatesQuery>,
) -> ApiResult<AppJson<DuplicatesResult>> {
    let mut errors = FieldErrors::new();
    let from = query
        .from
        .as_deref()
        .and_then(|d| errors.check(date_field("from", d)));
    let to = query
        .to
        .as_deref()
        .and_then(|d| errors.check(date_field("to", d)));
    errors.finish()?;
    let (from, to) = duplicates::period(from, to, state.clock.today());
    check_window(from, to)?;
    let page = PageRequest {
        limit: DUPLICATES_ROW_LIMIT,
        after: None,
    };
    let rows = state
        .store
        .list_transactions(auth.user(), &TransactionFilter::window(from, to), &page)
        .await?;
    if rows.has_more {
        return Err(ApiError::field(
            "to",
            format!("the window holds more than {DUPLICATES_ROW_LIMIT} rows; choose a shorter one"),
        ));
    }
    let groups: Vec<DuplicateGroupBody> = duplicates::find(rows.items)
        .into_iter()
        .filter_map(|group| {
            let first = group.rows.first()?;
            Some(DuplicateGroupBody {
                description: first.state.description.trim().to_owned(),
                amount: JsonMoney(first.state.amount),
                tx_type: first.state.tx_type,
                transactions: group.rows.into_iter().map(duplicate_row).collect(),
            })
        })
        .collect();
    Ok(AppJson(DuplicatesResult {
        group_count: groups.len(),
        duplicate_row_count: groups.iter().map(|g| g.transactions.len()).sum(),
        groups,
        period: Period {
            from: format_date(from),
            to: format_date(to),
        },
    }))
}
