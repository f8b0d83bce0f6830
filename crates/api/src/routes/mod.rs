//! One module per resource, each exposing its routes.

mod accounts;
mod budgets;
mod bulk;
mod cards;
mod categories;
pub(crate) mod export;
mod front;
mod me;
mod operations;
mod overview;
mod receipts;
mod reports;
mod tags;
mod transactions;
mod transfers;

use axum::http::StatusCode;
use utoipa::IntoResponses;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::Problem;

pub fn v1() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(me::router())
        .merge(accounts::router())
        .merge(categories::router())
        .merge(tags::router())
        .merge(transactions::router())
        .merge(bulk::router())
        .merge(cards::router())
        .merge(overview::router())
        .merge(budgets::router())
        .merge(reports::router())
        .merge(transfers::router())
        .merge(receipts::router())
        .merge(export::router())
}

/// The public routes: operations and receipt files.
pub fn operations() -> OpenApiRouter<AppState> {
    operations::router()
        .merge(front::router())
        .merge(receipts::public())
}

/// Errors every authenticated route can answer.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum CommonErrors {
    /// Missing, unknown or revoked API key.
    #[response(status = 401, content_type = "application/problem+json")]
    Unauthorized(Problem),
    /// `insufficient_scope`: the key lacks the scope the route needs (`read` for
    /// GET, `write` for everything else).
    #[response(status = 403, content_type = "application/problem+json")]
    Forbidden(Problem),
    /// `uri_too_long`: the path and query are longer than 65,534 bytes.
    #[response(status = 414, content_type = "application/problem+json")]
    UriTooLong(Problem),
    /// Rate limit exceeded; see `Retry-After`.
    #[response(status = 429, content_type = "application/problem+json")]
    RateLimited(Problem),
    /// `headers_too_large`: more than 100 headers, or about 400 KB of them.
    #[response(status = 431, content_type = "application/problem+json")]
    HeadersTooLarge(Problem),
    /// Unexpected error; details are logged, never shown.
    #[response(status = 500, content_type = "application/problem+json")]
    Internal(Problem),
    /// `deadline_exceeded`: cut off at the server's request deadline,
    /// `busy`: the data kept changing under concurrent writes,
    /// `database_unavailable`: the database does not answer, or
    /// `storage_unavailable`: receipt storage does not. Nothing uncommitted
    /// was kept; retry after `Retry-After`.
    #[response(status = 503, content_type = "application/problem+json")]
    Unavailable(Problem),
}

/// `201 Created` with a JSON body.
pub fn created<T: serde::Serialize>(body: T) -> (StatusCode, crate::extract::AppJson<T>) {
    (StatusCode::CREATED, crate::extract::AppJson(body))
}
