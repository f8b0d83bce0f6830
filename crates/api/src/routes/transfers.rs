//! Internal transfers: `POST /v1/transfers` creates both legs at once;
//! mark-transfer and unmark-transfer turn existing rows into a transfer
//! (say, a bank debit and the card credit it paid) and back.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use cofre_domain::time::date_field;
use cofre_domain::transaction::EntryId;
use cofre_domain::transfer::{TransferInput, new_transfer};
use cofre_domain::{AccountId, FieldErrors, TransactionId};

use super::transactions::entry_id;
use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, uuid_field};
use crate::json::{Amount, Description, JsonMoney, Notes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_transfer))
        .routes(routes!(mark_transfer))
        .routes(routes!(unmark_transfer))
}

/// Money moved between two of the user's accounts.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTransfer {
    /// The account the money leaves (a DEBIT there).
    #[schema(required = true, value_type = String, format = Uuid)]
    from_account_id: Option<String>,
    /// The account the money reaches (a CREDIT there).
    #[schema(required = true, value_type = String, format = Uuid)]
    to_account_id: Option<String>,
    #[schema(required = true, value_type = Amount)]
    amount: Option<JsonMoney>,
    #[schema(required = true, value_type = Description)]
    description: Option<String>,
    /// `YYYY-MM-DD`; default today (a future date makes both legs PENDING).
    #[schema(format = Date)]
    date: Option<String>,
    #[schema(value_type = Option<Notes>)]
    notes: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct CreatedTransfer {
    /// The DEBIT on `from_account_id`.
    pub transfer_sent_transaction_id: String,
    /// The CREDIT on `to_account_id`.
    pub transfer_received_transaction_id: String,
    pub transfer_group_id: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkTransfer {
    /// The other leg (e.g. the matching credit on another account).
    #[schema(format = Uuid)]
    counterpart_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct MarkedTransfer {
    pub transfer_group_id: String,
    pub transaction_ids: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct UnmarkedTransfer {
    /// The rows released; empty when the row was not a transfer.
    pub transaction_ids: Vec<String>,
}

impl CreateTransfer {
    fn into_input(self) -> ApiResult<TransferInput> {
        let mut errors = FieldErrors::new();
        let account = |errors: &mut FieldErrors, field: &str, text: Option<String>| {
            text.as_deref()
                .and_then(|t| uuid_field(errors, field, t, AccountId::parse))
        };
        let from_account_id = account(&mut errors, "from_account_id", self.from_account_id);
        let to_account_id = account(&mut errors, "to_account_id", self.to_account_id);
        let date = self
            .date
            .as_deref()
            .and_then(|d| errors.check(date_field("date", d)));
        errors.finish()?;
        Ok(TransferInput {
            from_account_id,
            to_account_id,
            amount: self.amount.map(|m| m.0),
            description: self.description,
            date,
            notes: self.notes,
        })
    }
}

/// A stored row named by the path; a projection must be stored first.
fn stored_id(text: &str) -> ApiResult<TransactionId> {
    match entry_id(text)? {
        EntryId::Stored(id) => Ok(id),
        EntryId::Projected(_) => Err(ApiError::field(
            "id",
            "is a projected entry: store it first (PATCH it with scope this)",
        )),
    }
}

/// Creates an internal transfer: a DEBIT on the source account and a CREDIT
/// on the destination, in one transaction, with one `transfer_group_id`,
/// both hidden from results and in the category "Transferência".
#[utoipa::path(post, path = "/v1/transfers", tag = "transfers", request_body = CreateTransfer,
    responses((status = 201, body = CreatedTransfer),
        (status = 400, description = "Invalid body: same account twice, an unknown, archived or other currency account, a non-positive amount", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_transfer(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateTransfer>,
) -> ApiResult<(axum::http::StatusCode, AppJson<CreatedTransfer>)> {
    let transfer = new_transfer(&body.into_input()?, state.clock.today())?;
    state
        .store
        .create_transfer(auth.user(), &transfer, state.clock.now())
        .await?;
    Ok(created(CreatedTransfer {
        transfer_sent_transaction_id: transfer.sent_id.to_string(),
        transfer_received_transaction_id: transfer.received_id.to_string(),
        transfer_group_id: transfer.group_id.to_string(),
    }))
}

/// Marks a row (and `counterpart_id`, when sent) as an internal transfer: a
/// new `transfer_group_id`, hidden from results; rows without a category get
/// "Transferência", categories the user chose stay.
#[utoipa::path(post, path = "/v1/transactions/{id}/mark-transfer", tag = "transfers",
    request_body(content = Option<MarkTransfer>, description = "Optional; an empty body marks the row alone"),
    params(("id" = String, Path, format = Uuid, description = "A stored row's UUID")),
    responses((status = 200, body = MarkedTransfer),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such transaction", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`transfer_conflict`: the row or its counterpart already is in a transfer", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn mark_transfer(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    body: Option<AppJson<MarkTransfer>>,
) -> ApiResult<AppJson<MarkedTransfer>> {
    let id = stored_id(&id)?;
    let counterpart = match body.and_then(|AppJson(b)| b.counterpart_id) {
        None => None,
        Some(text) => {
            let parsed = TransactionId::parse(&text)
                .ok_or_else(|| ApiError::field("counterpart_id", "must be a transaction UUID"))?;
            if parsed == id {
                return Err(ApiError::field(
                    "counterpart_id",
                    "must be another transaction than the one marked",
                ));
            }
            Some(parsed)
        }
    };
    let group = Uuid::now_v7();
    let ids = state
        .store
        .mark_transfer(auth.user(), id, counterpart, group, state.clock.now())
        .await?;
    Ok(AppJson(MarkedTransfer {
        transfer_group_id: group.to_string(),
        transaction_ids: ids.iter().map(ToString::to_string).collect(),
    }))
}

/// Undoes a transfer marking: both legs of the group are released and
/// shown again; "Transferência" goes back to no category, categories the user
/// chose stay. A legacy transfer row (hidden, "Transferência", no pair)
/// reappears with its category cleared. A row that is no transfer is left
/// as it is (an empty `transaction_ids`).
#[utoipa::path(post, path = "/v1/transactions/{id}/unmark-transfer", tag = "transfers",
    params(("id" = String, Path, format = Uuid, description = "A stored row's UUID")),
    responses((status = 200, body = UnmarkedTransfer),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such transaction", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn unmark_transfer(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<UnmarkedTransfer>> {
    let id = stored_id(&id)?;
    let ids = state
        .store
        .unmark_transfer(auth.user(), id, state.clock.now())
        .await?;
    Ok(AppJson(UnmarkedTransfer {
        transaction_ids: ids.iter().map(ToString::to_string).collect(),
    }))
}
