//! `POST /v1/transactions`: a simple transaction, an installment purchase
//! or a recurrence rule.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::ToSchema;

use cofre_domain::projection::Frequency;
use cofre_domain::series::{Creation, creation};
use cofre_domain::time::date_field;
use cofre_domain::transaction::{NewTransactionInput, RecurrenceInput, TxStatus, TxType};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors, TransactionId};

use super::bodies::CreationResult;
use super::body_json::{write_created, write_rule};
use super::parse_tag_ids;
use crate::AppState;
use crate::auth::{Auth, WriteCheckedOnCommit};
use crate::error::{ApiResult, Problem};
use crate::extract::{AppJson, json_response, uuid_field};
use crate::json::{Amount, Description, JsonMoney, Notes};
use crate::ledger;
use crate::routes::CommonErrors;

/// A simple transaction. `id` (a client-chosen UUID) makes the creation
/// idempotent: the same request again answers 200 with `deduped: true`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTransaction {
    #[schema(format = Uuid)]
    id: Option<String>,
    #[schema(required = true, value_type = String, format = Uuid)]
    account_id: Option<String>,
    #[serde(rename = "type")]
    #[schema(required = true, value_type = TxType)]
    tx_type: Option<TxType>,
    /// For installments, the total.
    #[schema(required = true, value_type = Amount)]
    amount: Option<JsonMoney>,
    #[schema(required = true, value_type = Description)]
    description: Option<String>,
    /// `YYYY-MM-DD`; default today.
    #[schema(format = Date)]
    date: Option<String>,
    /// Default POSTED up to today, PENDING after.
    status: Option<TxStatus>,
    #[schema(value_type = Option<Notes>)]
    notes: Option<String>,
    #[schema(format = Uuid)]
    category_id: Option<String>,
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
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
    #[schema(required = true, value_type = u16, minimum = 2, maximum = 420)]
    count: Option<u16>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecurrenceBody {
    #[schema(required = true, value_type = Frequency)]
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

/// Creates a simple transaction, an installment purchase (`installments`:
/// the plan is stored, installment 1 is stored and returned, the others are
/// projected) or a recurrence rule (`recurrence`: no row is stored). 201;
/// 200 for a replay of a simple creation with the same `id` (`deduped`) or
/// when an equivalent rule is reused (`reused`).
#[utoipa::path(post, path = "/v1/transactions", tag = "transactions", request_body = CreateTransaction,
    responses((status = 201, body = CreationResult),
        (status = 200, description = "Replay of an earlier creation, or an equivalent rule reused", body = CreationResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`id_conflict`: the id was used for another request; `limit_reached`: the user has the most recurrence rules (1,000) or installment purchases (10,000) a user may have", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
pub(super) async fn create_transaction(
    State(state): State<AppState>,
    auth: Auth<WriteCheckedOnCommit>,
    AppJson(body): AppJson<CreateTransaction>,
) -> ApiResult<Response> {
    let input = body.into_input()?;
    let today = state.clock.today();
    let store = state.store.as_ref();
    let (new, plan) = match creation(&input, auth.user(), today, state.clock.now())? {
        Creation::Simple(new) => (new, None),
        Creation::Installments { plan, first } => (first, Some(plan)),
        Creation::Recurrence(rule) => {
            // Storing a rule does not check a recalled key: read it now.
            let auth = auth.confirmed(&state).await?;
            let created_rule = store.create_rule(auth.user(), &rule).await?;
            let next =
                ledger::next_occurrence(store, auth.user(), &created_rule.value, today).await?;
            let body = write_rule(
                created_rule.value.id,
                next.as_ref(),
                created_rule.deduped,
                &state.config.public_url,
            );
            let status = if created_rule.deduped {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            return Ok((status, json_response(body)).into_response());
        }
    };
    let created_row = store
        .create_transaction(
            auth.user(),
            &new,
            plan.as_ref(),
            state.clock.now(),
            auth.key_to_check(),
        )
        .await?;
    let body = write_created(
        &created_row.value,
        created_row.deduped,
        &state.config.public_url,
    );
    let status = if created_row.deduped {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, json_response(body)).into_response())
}
