//! `DELETE /v1/transactions/{id}`: a stored row deleted, a projected entry
//! hidden, or a series cut.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;

use cofre_domain::projection::Handle;
use cofre_domain::series::{self, Scope, SeriesRef, Target};
use cofre_domain::time::date_field;
use cofre_domain::transaction::EntryId;
use cofre_domain::{DomainError, FieldErrors, RuleId};
use cofre_store::{References, SeriesOp, StoreError};

use super::bodies::DeleteResult;
use super::series::{run_series, series_exists, series_of_handle, series_of_row};
use super::{entry_id, flag, parse_scope};
use crate::AppState;
use crate::auth::{Auth, Write};
use crate::cards;
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, AppQuery};
use crate::routes::CommonErrors;

/// Query of DELETE.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// For entries of a series: this entry, this and later ones, or all.
    #[param(inline, value_type = Option<Scope>)]
    scope: Option<String>,
    /// `true` (default): POSTED occurrences of a series are kept.
    #[param(value_type = Option<bool>)]
    preserve_posted: Option<String>,
    /// `true`: hides the whole installment series.
    #[param(value_type = Option<bool>)]
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

/// Deletes a stored row, or hides a projected entry (a tombstone). With
/// `scope=future` a rule ends before the entry (installments from it on are
/// removed); `all` deletes the rule or purchase and its rows; POSTED rows
/// are kept unless `preserve_posted=false`. `hide_series=true` hides a whole
/// installment purchase. The id may also be a rule's id, with `date` naming
/// the occurrence (scope `this`) or the cut-off day (scope `future`).
#[utoipa::path(delete, path = "/v1/transactions/{id}", tag = "transactions", params(
        ("id" = String, Path, pattern = r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|mocked-(recurrence|installment|bill):[^/]+)$", description = "A stored row's UUID, a projection handle, or a rule id"),
        DeleteQuery),
    responses((status = 200, body = DeleteResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` or `projection_not_found`", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
pub(super) async fn delete_transaction(
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
                    // A transfer leg goes with the other legs of its group.
                    let deleted = state.store.delete_transaction(user, row_id).await?;
                    state.config.receipts.remove(&deleted.receipts).await;
                    return Ok(AppJson(DeleteResult {
                        deleted_transaction_id: id,
                        affected_ids: deleted.ids.iter().map(ToString::to_string).collect(),
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
