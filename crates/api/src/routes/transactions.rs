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
use cofre_domain::category::with_descendants;
use cofre_domain::projection::{Frequency, HANDLE_PREFIX, Handle};
use cofre_domain::series::Outcome;
use cofre_domain::series::{self, Creation, Scope, SeriesRef, Target, creation};
use cofre_domain::text::{lower, max_chars};
use cofre_domain::time::{date_field, format_date, parse_date};
use cofre_domain::transaction::{
    EntryId, NewTransactionInput, PagePosition, PageRequest, RecurrenceInput, Transaction,
    TransactionChanges, TransactionFilter, TxStatus, TxType, check_window,
};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors, RuleId, TagId, TransactionId};
use cofre_store::{References, SeriesOp, StoreError};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, AppQuery, parse_value, uuid_field, uuid_patch};
use crate::json::{JsonMoney, patch};
use crate::receipts;
use crate::{cards, ledger};

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
    /// A UUID for stored rows; a `mocked-` handle for projected entries.
    pub id: String,
    pub projected: bool,
    /// Null for stored rows; for projections `{kind: recurrence, rule_id,
    /// date}` or `{kind: installment, purchase_id, number, count}`.
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
    pub installment: Option<InstallmentBody>,
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

/// `installment` of an entry.
#[derive(Serialize, ToSchema)]
pub struct InstallmentBody {
    pub purchase_id: String,
    pub number: u16,
    pub count: u16,
    pub total_amount: JsonMoney,
}

impl TransactionBody {
    pub fn from_entry(t: Transaction, public_url: &str) -> Self {
        let projection = match &t.id {
            EntryId::Stored(_) => None,
            EntryId::Projected(Handle::Recurrence { rule_id, date }) => Some(serde_json::json!({
                "kind": "recurrence", "rule_id": rule_id.to_string(), "date": format_date(*date),
            })),
            EntryId::Projected(Handle::Installment {
                purchase_id,
                number,
            }) => Some(serde_json::json!({
                "kind": "installment", "purchase_id": purchase_id.to_string(), "number": number,
                "count": t.installment.map(|i| i.count),
            })),
            EntryId::Projected(Handle::Bill { card_id, .. }) => Some(serde_json::json!({
                "kind": "bill", "card_id": card_id.to_string(),
            })),
        };
        Self {
            id: t.id.to_string(),
            projected: projection.is_some(),
            projection,
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
            installment: t.installment.map(|i| InstallmentBody {
                purchase_id: i.purchase_id.to_string(),
                number: i.number,
                count: i.count,
                total_amount: JsonMoney(i.total_amount),
            }),
            transfer_group_id: t.transfer_group_id.map(|g| g.to_string()),
            created_by_user: t.created_by_user,
            source: t.source.as_str(),
            hide_from_results: t.state.hide_from_results,
            card_number: t.card_number,
            holder: t.holder,
            holder_is_me: t.holder_is_me,
            original_description: t.original_description,
            receipt_url: t.receipt_name.map(|name| receipts::url(public_url, &name)),
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
    /// An installment purchase: `amount` is the total.
    installments: Option<InstallmentsBody>,
    /// A recurrence rule starting at `date`; no row is stored.
    recurrence: Option<RecurrenceBody>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallmentsBody {
    /// 2 to 420 parts of equal cents, the leftover cents on the first.
    #[schema(required = true, minimum = 2, maximum = 420)]
    count: Option<u16>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecurrenceBody {
    #[schema(required = true)]
    frequency: Option<Frequency>,
    /// Default 1.
    #[schema(minimum = 1, maximum = 1000)]
    interval: Option<u32>,
    /// Last possible date, inclusive.
    #[schema(format = Date)]
    end_date: Option<String>,
    /// Number of occurrences.
    #[schema(minimum = 1, maximum = 10000)]
    count: Option<u32>,
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

/// PATCH on a `mocked-bill:` handle: a payment of the bill.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PayBill {
    /// Default: what is left to pay.
    #[schema(value_type = Option<f64>)]
    amount: Option<JsonMoney>,
    /// `YYYY-MM-DD`; default today.
    #[schema(format = Date)]
    date: Option<String>,
    /// The bank account paying; default the card's `pay_bill_from_account_id`.
    #[schema(format = Uuid)]
    account_id: Option<String>,
}

/// The body of PATCH: changes to an entry, or the payment of a bill.
#[derive(ToSchema)]
#[allow(dead_code)]
pub enum PatchBody {
    Update(UpdateTransaction),
    PayBill(PayBill),
}

/// Registers a payment of the bill a handle names: a transfer from the
/// bank account to the card, both legs naming the bill.
async fn pay_bill(
    state: &AppState,
    auth: &Auth<Write>,
    handle: Handle,
    body: PayBill,
) -> ApiResult<UpdateResult> {
    let Handle::Bill {
        card_id,
        year,
        month,
    } = handle
    else {
        return Err(ApiError::ProjectionNotFound);
    };
    let month = cofre_domain::card::BillMonth { year, month };
    let (user, today) = (auth.user(), state.clock.today());
    let mut errors = FieldErrors::new();
    let date = body
        .date
        .as_deref()
        .and_then(|d| errors.check(date_field("date", d)));
    let account = body
        .account_id
        .as_deref()
        .and_then(|t| uuid_field(&mut errors, "account_id", t, AccountId::parse));
    errors.finish()?;
    let (info, _, bill) = cards::bill(state.store.as_ref(), user, card_id, month, today)
        .await?
        .ok_or(ApiError::ProjectionNotFound)?;
    let amount = match body.amount {
        Some(amount) => amount.0,
        None if bill.outstanding.is_positive() => bill.outstanding,
        None => {
            return Err(ApiError::field(
                "amount",
                "the bill has nothing left to pay; send an amount to pay ahead",
            ));
        }
    };
    let from = account.or(info.pay_from).ok_or_else(|| {
        ApiError::field(
            "account_id",
            "the card has no paying account (pay_bill_from_account_id): name one",
        )
    })?;
    let payment = cofre_domain::bills::bill_payment(
        card_id,
        &info,
        month,
        from,
        amount,
        date.unwrap_or(today),
        today,
    )?;
    match state
        .store
        .pay_bill(user, &payment, state.clock.now())
        .await
    {
        Err(StoreError::NotFound) => return Err(ApiError::ProjectionNotFound),
        other => other?,
    }
    let left = cofre_domain::card::outstanding(bill.outstanding, amount);
    let message = if left.is_positive() {
        format!(
            "Payment of {amount} registered on the bill due {}; {left} is still to pay.",
            format_date(bill.cycle.due)
        )
    } else {
        format!(
            "Payment of {amount} registered; the bill due {} is paid.",
            format_date(bill.cycle.due)
        )
    };
    Ok(UpdateResult {
        updated_transaction_id: payment.bank_leg.to_string(),
        affected_ids: vec![payment.bank_leg.to_string(), payment.card_leg.to_string()],
        message: Some(message),
    })
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
        let installments = self.installments.and_then(|i| {
            if i.count.is_none() {
                errors.add("installments.count", "is required");
            }
            i.count
        });
        let recurrence = self.recurrence.and_then(|r| {
            let end_date = r
                .end_date
                .as_deref()
                .and_then(|d| errors.check(date_field("recurrence.end_date", d)));
            match r.frequency {
                Some(frequency) => Some(RecurrenceInput {
                    frequency,
                    interval: r.interval,
                    end_date,
                    count: r.count,
                }),
                None => {
                    errors.add(
                        "recurrence.frequency",
                        "is required (DAILY, WEEKLY, MONTHLY or YEARLY)",
                    );
                    None
                }
            }
        });
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
            installments,
            recurrence,
        })
    }
}

impl UpdateTransaction {
    pub(super) fn into_changes(self) -> Result<TransactionChanges, DomainError> {
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
    /// A `mocked-bill:` handle: the card's rows dated in that bill's cycle.
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

pub(super) fn flag(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<&str>,
    default: bool,
) -> bool {
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
    /// The filter, the page, and whether categories include their
    /// subcategories (expanded by the handler, which knows the categories).
    pub(super) fn parse(self) -> Result<ParsedList, DomainError> {
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
        let bill = self
            .bill_id
            .as_deref()
            .and_then(|text| match Handle::parse(text) {
                Some(handle @ Handle::Bill { .. }) => Some(handle),
                _ => {
                    errors.add(
                        "bill_id",
                        "must be a card bill handle, mocked-bill:<card id>:<YYYYMM>",
                    );
                    None
                }
            });
        let cashflow = self.view.as_deref() != Some("ledger");
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
        Ok(ParsedList {
            filter: TransactionFilter {
                from,
                to,
                status,
                tx_type,
                account_ids,
                category_ids,
                tag_ids,
                no_category,
                no_tags,
                is_recurring,
                is_installments,
                sub_types,
                hidden,
                search,
                cashflow,
            },
            page: PageRequest { limit, after },
            include_subcategories,
            bill,
        })
    }
}

/// A list query, validated.
pub(super) struct ParsedList {
    pub filter: TransactionFilter,
    pub page: PageRequest,
    /// Whether categories include their subcategories (expanded by
    /// [`resolve_filter`], which knows the categories).
    pub include_subcategories: bool,
    /// `bill_id`: the rows of one card cycle.
    pub bill: Option<Handle>,
}

/// Completes a parsed filter with what only stored data tells: the
/// subcategories of its categories, and the card cycle of `bill_id` (the
/// card's rows dated in it, whatever the view).
pub(super) async fn resolve_filter(
    state: &AppState,
    user: cofre_domain::UserId,
    parsed: ParsedList,
) -> ApiResult<TransactionFilter> {
    let mut filter =
        expand_categories(state, user, parsed.filter, parsed.include_subcategories).await?;
    if let Some(Handle::Bill {
        card_id,
        year,
        month,
    }) = parsed.bill
    {
        let card = cards::card_of(state.store.as_ref(), user, card_id, filter.from)
            .await?
            .ok_or_else(|| ApiError::field("bill_id", "names no card of yours"))?;
        let cycle = card
            .cycles
            .cycle(cofre_domain::card::BillMonth { year, month });
        let on_card = filter
            .account_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&card_id));
        filter.account_ids = Some(if on_card { vec![card_id] } else { Vec::new() });
        filter.cashflow = false;
        let (from, to) = (filter.from.max(cycle.start), filter.to.min(cycle.close));
        if from <= to {
            (filter.from, filter.to) = (from, to);
        } else {
            // The cycle lies outside the window: nothing to show.
            filter.account_ids = Some(Vec::new());
        }
    }
    Ok(filter)
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

/// DELETE options, validated.
struct DeleteOptions {
    scope: Option<Scope>,
    preserve_posted: bool,
    hide_series: bool,
    date: Option<jiff::civil::Date>,
}

impl DeleteQuery {
    fn validate(&self) -> Result<DeleteOptions, DomainError> {
        let mut errors = FieldErrors::new();
        parse_scope(&mut errors, self.scope.as_deref());
        let preserve_posted = flag(
            &mut errors,
            "preserve_posted",
            self.preserve_posted.as_deref(),
            true,
        );
        let hide_series = flag(
            &mut errors,
            "hide_series",
            self.hide_series.as_deref(),
            false,
        );
        let date = self
            .date
            .as_deref()
            .and_then(|d| errors.check(date_field("date", d)));
        errors.finish()?;
        Ok(DeleteOptions {
            scope: self.scope.as_deref().and_then(Scope::parse),
            preserve_posted,
            hide_series,
            date,
        })
    }
}

/// How the `{id}` of a transaction path is understood.
pub(super) fn entry_id(text: &str) -> ApiResult<EntryId> {
    if text.starts_with(HANDLE_PREFIX) {
        // A malformed handle names nothing the rules would produce.
        return Handle::parse(text)
            .map(EntryId::Projected)
            .ok_or(ApiError::ProjectionNotFound);
    }
    EntryId::parse(text)
        .ok_or_else(|| ApiError::field("id", "must be a transaction UUID or a projection handle"))
}

/// The series a projection handle belongs to.
fn series_of_handle(handle: &Handle) -> ApiResult<SeriesRef> {
    match *handle {
        Handle::Recurrence { rule_id, .. } => Ok(SeriesRef::Rule(rule_id)),
        Handle::Installment { purchase_id, .. } => Ok(SeriesRef::Plan(purchase_id)),
        Handle::Bill { .. } => Err(ApiError::ProjectionNotFound),
    }
}

/// The series a stored row belongs to, if any.
fn series_of_row(row: &Transaction) -> Option<SeriesRef> {
    match (row.recurrence_id, row.installment) {
        (Some(rule), _) => Some(SeriesRef::Rule(rule)),
        (None, Some(i)) => Some(SeriesRef::Plan(i.purchase_id)),
        _ => None,
    }
}

/// Whether the user still has this rule or purchase.
async fn series_exists(
    state: &AppState,
    user: cofre_domain::UserId,
    series: SeriesRef,
) -> ApiResult<bool> {
    let found = match series {
        SeriesRef::Rule(id) => state.store.get_rule(user, id).await.map(|_| ()),
        SeriesRef::Plan(id) => state.store.get_plan(user, id).await.map(|_| ()),
    };
    match found {
        Ok(()) => Ok(true),
        Err(StoreError::NotFound) => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// Runs a series operation; a series that is gone means the projection
/// addressed through it does not exist. Receipt files of rows it deleted
/// are removed once it has committed.
async fn run_series(
    state: &AppState,
    user: cofre_domain::UserId,
    series: SeriesRef,
    references: &References,
    op: SeriesOp,
    missing: ApiError,
) -> ApiResult<Outcome> {
    let applied = match state
        .store
        .apply_series(user, series, references, op, state.clock.now())
        .await
    {
        Err(StoreError::NotFound) => return Err(missing),
        other => other?,
    };
    receipts::remove_files(&state.config.receipts_dir, &applied.removed_receipts).await;
    Ok(applied.outcome)
}

/// Adds the subcategories of the filter's categories when asked to.
pub(super) async fn expand_categories(
    state: &AppState,
    user: cofre_domain::UserId,
    mut filter: TransactionFilter,
    include_subcategories: bool,
) -> ApiResult<TransactionFilter> {
    if include_subcategories && let Some(roots) = &filter.category_ids {
        let visible = state.store.list_categories(user).await?;
        filter.category_ids = Some(with_descendants(&visible, roots));
    }
    Ok(filter)
}

/// Merged view of the user's entries inside a window: stored rows and the
/// projected occurrences of rules and installments, newest day first, ids
/// ascending within a day.
#[utoipa::path(get, path = "/v1/transactions", tag = "transactions", params(ListQuery),
    responses((status = 200, body = TransactionPage),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn list_transactions(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<ListQuery>,
) -> ApiResult<AppJson<TransactionPage>> {
    let parsed = query.parse()?;
    let page = parsed.page.clone();
    let filter = resolve_filter(&state, auth.user(), parsed).await?;
    let today = state.clock.today();
    let result = ledger::page(state.store.as_ref(), auth.user(), &filter, &page, today).await?;
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
            .map(|t| TransactionBody::from_entry(t, public_url))
            .collect(),
        has_more: result.has_more,
        next_cursor,
    }))
}

/// A created recurrence rule.
#[derive(Serialize, ToSchema)]
pub struct CreatedRule {
    pub recurrence_id: String,
    /// The first occurrence on or after today; null when the rule has ended.
    pub next_occurrence: Option<TransactionBody>,
    /// True when an equivalent rule existed and was reused (status 200).
    pub reused: bool,
}

/// What POST /v1/transactions answers.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum CreationResult {
    Transaction(CreatedTransaction),
    Rule(CreatedRule),
}

/// Creates a simple transaction, an installment purchase (`installments`:
/// the plan is stored, installment 1 is stored and returned, the others are
/// projected) or a recurrence rule (`recurrence`: no row is stored). 201;
/// 200 for a replay of a simple creation with the same `id` (`deduped`) or
/// when an equivalent rule is reused (`reused`).
#[utoipa::path(post, path = "/v1/transactions", tag = "transactions", request_body = CreateTransaction,
    responses((status = 201, body = CreationResult),
        (status = 200, description = "Replay of an earlier creation, or an equivalent rule reused", body = CreationResult),
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
    let today = state.clock.today();
    let store = state.store.as_ref();
    let (new, plan) = match creation(&input, auth.user(), today, state.clock.now())? {
        Creation::Simple(new) => (new, None),
        Creation::Installments { plan, first } => (first, Some(plan)),
        Creation::Recurrence(rule) => {
            let created_rule = store.create_rule(auth.user(), &rule).await?;
            let next =
                ledger::next_occurrence(store, auth.user(), &created_rule.value, today).await?;
            let body = CreatedRule {
                recurrence_id: created_rule.value.id.to_string(),
                next_occurrence: next
                    .map(|t| TransactionBody::from_entry(t, &state.config.public_url)),
                reused: created_rule.deduped,
            };
            let status = if created_rule.deduped {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            return Ok((status, AppJson(CreationResult::Rule(body))).into_response());
        }
    };
    let created_row = store
        .create_transaction(auth.user(), &new, plan.as_ref(), state.clock.now())
        .await?;
    let (result, repeated) = (
        CreationResult::Transaction(CreatedTransaction {
            transaction: TransactionBody::from_entry(created_row.value, &state.config.public_url),
            deduped: created_row.deduped,
        }),
        created_row.deduped,
    );
    Ok(if repeated {
        (StatusCode::OK, AppJson(result)).into_response()
    } else {
        created(result).into_response()
    })
}

/// One entry by id: a stored row, or a projected entry by its handle
/// (`mocked-recurrence:<rule>:<YYYY-MM-DD>`, `mocked-installment:<purchase>:<k>`).
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
    let entry = match entry_id(&id)? {
        EntryId::Stored(id) => state.store.get_transaction(auth.user(), id).await?,
        EntryId::Projected(handle @ Handle::Bill { .. }) => {
            cards::resolve_bill(
                state.store.as_ref(),
                auth.user(),
                &handle,
                state.clock.today(),
            )
            .await?
            .ok_or(ApiError::ProjectionNotFound)?
            .0
        }
        EntryId::Projected(handle) => ledger::resolve(state.store.as_ref(), auth.user(), &handle)
            .await?
            .ok_or(ApiError::ProjectionNotFound)?,
    };
    Ok(AppJson(TransactionEnvelope {
        transaction: TransactionBody::from_entry(entry, &state.config.public_url),
    }))
}

/// Edits a stored row or a projected entry. For projected entries `scope`
/// is required: `this` stores the entry with the change; `future` changes it
/// and every later one (installments are stored; a rule is split, the new
/// rule carrying the change); `all` changes every installment, or the rule
/// and its pending stored rows. Rows of a series accept `future` and `all`
/// too.
#[utoipa::path(patch, path = "/v1/transactions/{id}", tag = "transactions", request_body = PatchBody,
    params(("id" = String, Path, description = "A stored row's UUID or a projection handle")),
    responses((status = 200, body = UpdateResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_transaction(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<serde_json::Map<String, serde_json::Value>>,
) -> ApiResult<AppJson<UpdateResult>> {
    let entry = entry_id(&id)?;
    if let EntryId::Projected(handle @ Handle::Bill { .. }) = entry {
        let body: PayBill = parse_value(serde_json::Value::Object(body), "")?;
        return pay_bill(&state, &auth, handle, body).await.map(AppJson);
    }
    let body: UpdateTransaction = parse_value(serde_json::Value::Object(body), "")?;
    let scope = body.scope.as_deref().and_then(Scope::parse);
    let changes = body.into_changes()?;
    let references = References {
        category: match changes.category_id {
            Patch::Set(id) => Some(id),
            _ => None,
        },
        tags: changes.tag_ids.clone().unwrap_or_default(),
    };
    let user = auth.user();
    let (series, target, scope, missing) = match entry {
        EntryId::Stored(id) => {
            let row = state.store.get_transaction(user, id).await?;
            match (series_of_row(&row), scope) {
                // A row whose series was deleted stands alone.
                (Some(series), Some(scope @ (Scope::Future | Scope::All)))
                    if series_exists(&state, user, series).await? =>
                {
                    (series, Target::Stored(id), scope, ApiError::NotFound)
                }
                _ => {
                    let row = state
                        .store
                        .update_transaction(user, id, &changes, state.clock.now())
                        .await?;
                    return Ok(AppJson(UpdateResult {
                        updated_transaction_id: row.id.to_string(),
                        affected_ids: vec![row.id.to_string()],
                        message: None,
                    }));
                }
            }
        }
        EntryId::Projected(handle) => {
            let series = series_of_handle(&handle)?;
            let scope = scope.ok_or_else(|| {
                ApiError::field(
                    "scope",
                    "is required for a projected entry: this, future or all",
                )
            })?;
            (
                series,
                Target::Projected(handle),
                scope,
                ApiError::ProjectionNotFound,
            )
        }
    };
    let op: SeriesOp = Box::new(move |loaded| series::patch(loaded, target, scope, &changes));
    let outcome = run_series(&state, user, series, &references, op, missing).await?;
    Ok(AppJson(UpdateResult {
        updated_transaction_id: outcome.target_id,
        affected_ids: outcome.affected_ids,
        message: outcome.message,
    }))
}

/// Deletes a stored row, or hides a projected entry (a tombstone). With
/// `scope=future` a rule ends before the entry (installments from it on are
/// removed); `all` deletes the rule or purchase and its rows; POSTED rows
/// are kept unless `preserve_posted=false`. `hide_series=true` hides a whole
/// installment purchase. The id may also be a rule's id, with `date` naming
/// the occurrence (scope `this`) or the cut-off day (scope `future`).
#[utoipa::path(delete, path = "/v1/transactions/{id}", tag = "transactions", params(
        ("id" = String, Path, description = "A stored row's UUID, a projection handle, or a rule id"),
        DeleteQuery),
    responses((status = 200, body = DeleteResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_transaction(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppQuery(query): AppQuery<DeleteQuery>,
) -> ApiResult<AppJson<DeleteResult>> {
    let entry = entry_id(&id)?;
    let options = query.validate()?;
    let user = auth.user();
    if let EntryId::Projected(handle @ Handle::Bill { .. }) = entry {
        let today = state.clock.today();
        let (_, bill) = cards::resolve_bill(state.store.as_ref(), user, &handle, today)
            .await?
            .ok_or(ApiError::ProjectionNotFound)?;
        state
            .store
            .hide_bill(user, &handle, bill.cycle.due, state.clock.now())
            .await?;
        return Ok(AppJson(DeleteResult {
            deleted_transaction_id: id.clone(),
            affected_ids: vec![id],
        }));
    }
    let (series, target, missing) = match entry {
        EntryId::Stored(row_id) => match state.store.get_transaction(user, row_id).await {
            Ok(row) => match series_of_row(&row) {
                // A row of a series goes through the series (its slot gets
                // a tombstone), unless the series itself is gone.
                Some(series) if series_exists(&state, user, series).await? => {
                    (series, Target::Stored(row_id), ApiError::NotFound)
                }
                _ => {
                    let receipt = state.store.delete_transaction(user, row_id).await?;
                    receipts::remove_files(&state.config.receipts_dir, receipt.as_slice()).await;
                    return Ok(AppJson(DeleteResult {
                        deleted_transaction_id: id.clone(),
                        affected_ids: vec![id],
                    }));
                }
            },
            // Not a row: maybe a rule, addressed by its id.
            Err(StoreError::NotFound) => (
                SeriesRef::Rule(RuleId(row_id.0)),
                Target::RuleDate(options.date),
                ApiError::NotFound,
            ),
            Err(err) => return Err(err.into()),
        },
        EntryId::Projected(handle) => (
            series_of_handle(&handle)?,
            Target::Projected(handle),
            ApiError::ProjectionNotFound,
        ),
    };
    let scope = options.scope.unwrap_or(Scope::This);
    let (preserve, hide) = (options.preserve_posted, options.hide_series);
    let op: SeriesOp =
        Box::new(move |loaded| series::delete(loaded, target, scope, preserve, hide));
    let outcome = run_series(&state, user, series, &References::default(), op, missing).await?;
    Ok(AppJson(DeleteResult {
        deleted_transaction_id: id,
        affected_ids: outcome.affected_ids,
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
