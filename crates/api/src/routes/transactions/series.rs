//! How an entry reaches the rule or installment purchase it belongs to,
//! shared by PATCH and DELETE.

use cofre_domain::projection::Handle;
use cofre_domain::series::{Outcome, SeriesRef};
use cofre_domain::transaction::Transaction;
use cofre_store::{References, SeriesOp, StoreError};

use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// The series a projection handle belongs to.
pub(super) fn series_of_handle(handle: &Handle) -> ApiResult<SeriesRef> {
    match *handle {
        Handle::Recurrence { rule_id, .. } => Ok(SeriesRef::Rule(rule_id)),
        Handle::Installment { purchase_id, .. } => Ok(SeriesRef::Plan(purchase_id)),
        Handle::Bill { .. } => Err(ApiError::ProjectionNotFound),
    }
}

/// The series a stored row belongs to, if any.
pub(super) fn series_of_row(row: &Transaction) -> Option<SeriesRef> {
    match (row.recurrence_id, row.installment) {
        (Some(rule), _) => Some(SeriesRef::Rule(rule)),
        (None, Some(i)) => Some(SeriesRef::Plan(i.purchase_id)),
        _ => None,
    }
}

/// Whether the user still has this rule or purchase.
pub(super) async fn series_exists(
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
pub(super) async fn run_series(
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
    state
        .config
        .receipts
        .remove(&applied.removed_receipts)
        .await;
    Ok(applied.outcome)
}
