//! `/v1/transactions`: stored rows (ledger entries), with the list's
//! filters and cursor pagination.

mod bodies;
mod body_json;
mod create;
mod delete;
mod edit;
mod list;
mod series;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::projection::{HANDLE_PREFIX, Handle};
use cofre_domain::transaction::EntryId;
use cofre_domain::{FieldErrors, TagId};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::uuid_field;

pub(super) use bodies::TransactionBody;
pub(super) use body_json::write_entry;
pub(super) use edit::UpdateTransaction;
pub(super) use list::{ListQuery, ParsedList, View, id_list, resolve_filter};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list::list_transactions, create::create_transaction))
        .routes(routes!(
            edit::get_transaction,
            edit::update_transaction,
            delete::delete_transaction
        ))
}

// Reading of inputs shared by the handlers of several submodules (and by
// the bulk and transfer routes).

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

pub(in crate::routes) fn flag(
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
