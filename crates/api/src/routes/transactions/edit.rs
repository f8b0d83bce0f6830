//! `GET` and `PATCH /v1/transactions/{id}`: one entry read, changed (alone
//! or with its series), or, for a card bill, paid.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use std::borrow::Cow;
use utoipa::openapi::schema::{AnyOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use cofre_domain::account::Patch;
use cofre_domain::bills::{PaymentDecision, decide_payment};
use cofre_domain::projection::Handle;
use cofre_domain::series::{self, Scope, Target};
use cofre_domain::time::{date_field, format_date};
use cofre_domain::transaction::{EntryId, TransactionChanges, TxStatus, TxType};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors};
use cofre_store::{References, SeriesOp, StoreError};

use super::bodies::{TransactionEnvelope, UpdateResult};
use super::body_json::write_envelope;
use super::series::{run_series, series_exists, series_of_handle, series_of_row};
use super::{entry_id, parse_scope, parse_tag_ids};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, json_response, parse_value, uuid_field, uuid_patch};
use crate::json::{Amount, Description, JsonMoney, Notes, patch};
use crate::routes::CommonErrors;
use crate::{cards, ledger};

/// Changes a stored row; only the fields sent change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1)]
pub struct UpdateTransaction {
    #[schema(format = Date)]
    date: Option<String>,
    #[serde(rename = "type")]
    tx_type: Option<TxType>,
    status: Option<TxStatus>,
    #[schema(value_type = Option<Amount>)]
    amount: Option<JsonMoney>,
    #[schema(value_type = Option<Description>)]
    description: Option<String>,
    /// `null` clears the notes.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<Notes>)]
    notes: Patch<String>,
    /// `null` removes the category.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, format = Uuid)]
    category_id: Patch<String>,
    /// Replaces the tags.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    tag_ids: Option<Vec<String>>,
    hide_from_results: Option<bool>,
    /// For entries of a series: this entry, this and later ones, or all. A
    /// row outside a series is the only entry it changes.
    #[schema(value_type = Option<Scope>)]
    scope: Option<String>,
}

/// PATCH on a `mocked-bill:` handle: a payment of the bill.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PayBill {
    /// Default: what is left to pay.
    #[schema(value_type = Option<Amount>)]
    amount: Option<JsonMoney>,
    /// `YYYY-MM-DD`; default today.
    #[schema(format = Date)]
    date: Option<String>,
    /// The bank account paying; default the card's `pay_bill_from_account_id`.
    #[schema(format = Uuid)]
    account_id: Option<String>,
}

/// The body of PATCH, declared as what a client sends: the changes of an
/// entry, or (on a `mocked-bill:` handle) the payment of a bill. Any of
/// the two, since `{"amount": 10}` is both.
pub struct PatchBody;

impl PartialSchema for PatchBody {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(UpdateTransaction::name()))
            .item(Ref::from_schema_name(PayBill::name()))
            .description(Some(
                "`UpdateTransaction` for a row or projection; `PayBill` for a `mocked-bill:` handle",
            ))
            .into()
    }
}

impl ToSchema for PatchBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("PatchTransaction")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((
            UpdateTransaction::name().into(),
            UpdateTransaction::schema(),
        ));
        UpdateTransaction::schemas(schemas);
        schemas.push((PayBill::name().into(), PayBill::schema()));
        PayBill::schemas(schemas);
    }
}

impl UpdateTransaction {
    pub(in crate::routes) fn into_changes(self) -> Result<TransactionChanges, DomainError> {
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

/// How many times a bill payment decides again when other writes of the
/// same user commit while it decides, before answering 503 `busy`.
const PAYMENT_ATTEMPTS: u32 = 8;

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
    let month =
        cofre_domain::card::BillMonth::new(year, month).ok_or(ApiError::ProjectionNotFound)?;
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
    let store = state.store.as_ref();
    // What may be paid is decided from the bill at a known version of the
    // user's data, and the store writes only if that version is still the
    // newest under its write lock; otherwise decide again. Concurrent
    // payments of one bill thus never both pay what was owed once.
    let mut decided_at = auth.principal.view_version;
    let mut attempts = 0;
    let (bill, amount, payment) = loop {
        let (info, _, bill) = cards::bill(store, user, card_id, month, today)
            .await?
            .ok_or(ApiError::ProjectionNotFound)?;
        let amount = match decide_payment(&bill, body.amount.map(|a| a.0), today) {
            PaymentDecision::Pay(amount) => amount,
            PaymentDecision::NoSuchBill => return Err(ApiError::ProjectionNotFound),
            PaymentDecision::NothingToPay => return Err(ApiError::NothingToPay),
            PaymentDecision::MoreThanOwed { left } => {
                return Err(ApiError::field(
                    "amount",
                    format!("is more than the {left} left to pay on this closed bill"),
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
        match store
            .pay_bill(user, &payment, decided_at, state.clock.now())
            .await
        {
            Ok(()) => break (bill, amount, payment),
            Err(StoreError::NotFound) => return Err(ApiError::ProjectionNotFound),
            Err(StoreError::Stale) if attempts < PAYMENT_ATTEMPTS => {
                attempts += 1;
                decided_at = store.view_version(user).await?;
            }
            Err(other) => return Err(other.into()),
        }
    };
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

/// One entry by id: a stored row, or a projected entry by its handle
/// (`mocked-recurrence:<rule>:<YYYY-MM-DD>`, `mocked-installment:<purchase>:<k>`).
#[utoipa::path(get, path = "/v1/transactions/{id}", tag = "transactions",
    params(("id" = String, Path, pattern = r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|mocked-(recurrence|installment|bill):[^/]+)$", description = "A stored row's UUID or a projection handle")),
    responses((status = 200, body = TransactionEnvelope),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
pub(super) async fn get_transaction(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppPath(id): AppPath<String>,
) -> ApiResult<Response> {
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
    Ok(json_response(write_envelope(
        &entry,
        &state.config.public_url,
    )))
}

/// Edits a stored row or a projected entry. For projected entries `scope`
/// is required: `this` stores the entry with the change; `future` changes it
/// and every later one (installments are stored; a rule is split, the new
/// rule carrying the change); `all` changes every installment, or the rule
/// and its pending stored rows. Rows of a series accept `future` and `all`
/// too.
#[utoipa::path(patch, path = "/v1/transactions/{id}", tag = "transactions", request_body = PatchBody,
    params(("id" = String, Path, pattern = r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|mocked-(recurrence|installment|bill):[^/]+)$", description = "A stored row's UUID or a projection handle")),
    responses((status = 200, body = UpdateResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`nothing_to_pay`: the bill a `mocked-bill:` handle names is paid; `transfer_conflict`: the `type` of one transfer leg cannot change alone; `limit_reached`: splitting a rule (`scope=future`) would pass the 1,000 rules a user may have", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
pub(super) async fn update_transaction(
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
                    let changed = state
                        .store
                        .update_transaction(user, id, &changes, state.clock.now())
                        .await?;
                    return Ok(AppJson(UpdateResult {
                        updated_transaction_id: id.to_string(),
                        affected_ids: changed.iter().map(ToString::to_string).collect(),
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
