//! One error type for every handler, rendered as an RFC 9457 problem
//! document. [`ApiError::meta`] is the single table of status, code and
//! title; internal errors are logged and never shown.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use cofre_domain::{DomainError, FieldError};
use cofre_store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    Validation(Vec<FieldError>),
    Unauthorized,
    /// `/metrics` without the token `COFRE_METRICS_TOKEN` asks for.
    MetricsUnauthorized,
    InsufficientScope(&'static str),
    NotFound,
    ProjectionNotFound,
    IdConflict,
    TitleConflict,
    /// Another budget of the category covers one of the months.
    BudgetConflict,
    TransferConflict(String),
    NotACreditCard,
    ExpectedCountMismatch {
        expected: u64,
        matched: u64,
    },
    /// A bill payment found nothing left to pay on the bill.
    NothingToPay,
    /// The user's data kept changing while a write was deciding; retry.
    Busy,
    /// The database rolled the request's transaction back whole on a
    /// serialization failure or deadlock: the request may run again
    /// ([`crate::retry`] does so, a bounded number of times).
    Conflicted,
    /// The database does not answer or dropped the connection; nothing
    /// uncommitted was kept.
    DatabaseUnavailable,
    /// Readiness: writes have not moved through the way into the database
    /// for longer than a request may run (reads may still be answered).
    WritesStuck {
        stalled_s: u64,
    },
    /// Receipt storage (the directory or the bucket) failed or does not
    /// answer; no row points at a file that was not stored.
    StorageUnavailable,
    /// The request line's URI is longer than the HTTP layer reads.
    UriTooLong,
    /// More headers, or longer ones, than the HTTP layer reads.
    HeadersTooLarge,
    /// A request line or header the HTTP layer could not read.
    MalformedRequest,
    /// The user has the most of something a user may have.
    LimitReached {
        what: &'static str,
        limit: u64,
    },
    RateLimited {
        retry_after: u64,
    },
    PayloadTooLarge {
        limit: usize,
    },
    UnsupportedMediaType(String),
    MethodNotAllowed,
    /// The request ran past the server's deadline and was cut off; what it
    /// was writing was rolled back unless it had already committed.
    DeadlineExceeded {
        seconds: u64,
    },
    Internal(String),
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem: `urn:cofre:problem:<code>`.
    #[serde(rename = "type")]
    pub problem_type: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// Stable snake_case code, e.g. `validation_error`, `not_found`.
    pub code: &'static str,
    /// Present on validation errors: every bad field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ProblemField>>,
    /// On `expected_count_mismatch`: how many rows the selection matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_count: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemField {
    pub field: String,
    pub message: String,
}

impl ApiError {
    /// Receipt storage failed: logged here (the detail is never shown) and
    /// answered 503 `storage_unavailable`.
    pub fn storage(detail: String) -> Self {
        metrics::counter!("receipt_storage_errors_total").increment(1);
        tracing::warn!(error = %detail, "receipt storage failed");
        ApiError::StorageUnavailable
    }

    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }

    /// Status, code and title of each variant: the one table.
    fn meta(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            ApiError::Validation(_) => (
                StatusCode::BAD_REQUEST,
                "validation_error",
                "Invalid request",
            ),
            ApiError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Missing or invalid API key",
            ),
            ApiError::MetricsUnauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Missing or invalid metrics token",
            ),
            ApiError::InsufficientScope(_) => (
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "Insufficient scope",
            ),
            ApiError::NotFound => (StatusCode::NOT_FOUND, "not_found", "Not found"),
            ApiError::ProjectionNotFound => (
                StatusCode::NOT_FOUND,
                "projection_not_found",
                "Projection not found",
            ),
            ApiError::IdConflict => (StatusCode::CONFLICT, "id_conflict", "Id already used"),
            ApiError::TitleConflict => (
                StatusCode::CONFLICT,
                "title_conflict",
                "Title already in use",
            ),
            ApiError::BudgetConflict => (
                StatusCode::CONFLICT,
                "budget_conflict",
                "Budget already set for these months",
            ),
            ApiError::NotACreditCard => (
                StatusCode::BAD_REQUEST,
                "not_a_credit_card",
                "Not a credit card",
            ),
            ApiError::TransferConflict(_) => (
                StatusCode::CONFLICT,
                "transfer_conflict",
                "Transfer conflict",
            ),
            ApiError::ExpectedCountMismatch { .. } => (
                StatusCode::CONFLICT,
                "expected_count_mismatch",
                "Expected count mismatch",
            ),
            ApiError::NothingToPay => (StatusCode::CONFLICT, "nothing_to_pay", "Nothing to pay"),
            ApiError::LimitReached { .. } => {
                (StatusCode::CONFLICT, "limit_reached", "Limit reached")
            }
            ApiError::Busy | ApiError::Conflicted => (
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "Data changing, retry",
            ),
            ApiError::DatabaseUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "database_unavailable",
                "Database unavailable",
            ),
            ApiError::UriTooLong => (StatusCode::URI_TOO_LONG, "uri_too_long", "URI too long"),
            ApiError::HeadersTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "headers_too_large",
                "Request headers too large",
            ),
            ApiError::MalformedRequest => (
                StatusCode::BAD_REQUEST,
                "malformed_request",
                "Malformed request",
            ),
            ApiError::WritesStuck { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "writes_stuck",
                "Writes are not moving",
            ),
            ApiError::StorageUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "storage_unavailable",
                "Receipt storage unavailable",
            ),
            ApiError::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "Rate limit exceeded",
            ),
            ApiError::PayloadTooLarge { .. } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "Payload too large",
            ),
            ApiError::UnsupportedMediaType(_) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Unsupported media type",
            ),
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed",
            ),
            ApiError::DeadlineExceeded { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "deadline_exceeded",
                "Request took too long",
            ),
            ApiError::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "Internal server error",
            ),
        }
    }

    fn detail(&self) -> String {
        match self {
            ApiError::Validation(errors) => errors
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect::<Vec<_>>()
                .join("; "),
            ApiError::Unauthorized => {
                "send a valid key as 'Authorization: Bearer cofre_<id>_<secret>'".into()
            }
            ApiError::MetricsUnauthorized => {
                "send the server's metrics token as 'Authorization: Bearer <token>'".into()
            }
            ApiError::InsufficientScope(scope) => {
                format!("this operation needs a key with the '{scope}' scope")
            }
            ApiError::NotFound => "the resource does not exist".into(),
            ApiError::ProjectionNotFound => "no projected entry is produced for this handle".into(),
            ApiError::IdConflict => "this id was already used for a different request".into(),
            ApiError::TitleConflict => "another item already has this title".into(),
            ApiError::BudgetConflict => {
                "another budget of this category already covers one of these months".into()
            }
            ApiError::NotACreditCard => {
                "this account is not a credit card: bills and limits exist only for cards".into()
            }
            ApiError::TransferConflict(detail) => detail.clone(),
            ApiError::ExpectedCountMismatch { expected, matched } => format!(
                "expected_count is {expected} but the selection matches {matched} rows; nothing was changed"
            ),
            ApiError::NothingToPay => {
                "the bill has nothing left to pay (it is paid); nothing was registered".into()
            }
            ApiError::LimitReached { what, limit } => {
                format!("a user may have at most {limit} {what}; delete some before adding more")
            }
            ApiError::Busy | ApiError::Conflicted => {
                "the data this request depends on kept changing under concurrent writes; \
                 nothing was changed, retry"
                    .into()
            }
            ApiError::DatabaseUnavailable => {
                "the database does not answer; nothing uncommitted was kept: retry after \
                 Retry-After (a write sent with a client `id` is safe to retry)"
                    .into()
            }
            ApiError::UriTooLong => "the path and query are longer than 65,534 bytes: send \
                 fewer or shorter query parameters; nothing was done"
                .into(),
            ApiError::HeadersTooLarge => "more than 100 headers, or longer headers than the \
                 server reads (about 400 KB in all): send fewer or shorter ones; nothing was done"
                .into(),
            ApiError::MalformedRequest => "the request line or a header is not readable \
                 HTTP/1.1; nothing was done"
                .into(),
            ApiError::WritesStuck { stalled_s } => format!(
                "writes have not moved for {stalled_s} s, longer than a request may run \
                 (reads may still be answered)"
            ),
            ApiError::StorageUnavailable => {
                "receipt storage failed or does not answer; nothing was changed: retry after \
                 Retry-After"
                    .into()
            }
            ApiError::RateLimited { retry_after } => {
                format!("too many requests; retry in {retry_after} s")
            }
            ApiError::PayloadTooLarge { limit } => {
                format!("the request body is larger than {limit} bytes")
            }
            ApiError::UnsupportedMediaType(detail) => detail.clone(),
            ApiError::MethodNotAllowed => "this path does not accept this method".into(),
            ApiError::DeadlineExceeded { seconds } => format!(
                "the request was cut off after {seconds} s; retry it (a write sent with a client \
                 `id` is safe to retry)"
            ),
            ApiError::Internal(_) => "an unexpected error occurred; it has been logged".into(),
        }
    }

    pub fn into_problem(self) -> (StatusCode, Problem) {
        let (status, code, title) = self.meta();
        if let ApiError::Internal(message) = &self {
            tracing::error!(error = %message, "internal error");
        }
        let detail = self.detail();
        let matched_count = match &self {
            ApiError::ExpectedCountMismatch { matched, .. } => Some(*matched),
            _ => None,
        };
        let errors = match self {
            ApiError::Validation(list) => Some(
                list.into_iter()
                    .map(|e| ProblemField {
                        field: e.field,
                        message: e.message,
                    })
                    .collect(),
            ),
            _ => None,
        };
        (
            status,
            Problem {
                problem_type: format!("urn:cofre:problem:{code}"),
                title,
                status: status.as_u16(),
                detail,
                code,
                errors,
                matched_count,
            },
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let retry_after = match &self {
            ApiError::RateLimited { retry_after } => Some(*retry_after),
            ApiError::DeadlineExceeded { .. } | ApiError::Busy | ApiError::Conflicted => Some(1),
            ApiError::DatabaseUnavailable
            | ApiError::StorageUnavailable
            | ApiError::WritesStuck { .. } => Some(2),
            _ => None,
        };
        let replayable = matches!(self, ApiError::Conflicted);
        let unauthorized = matches!(self, ApiError::Unauthorized | ApiError::MetricsUnauthorized);
        let (status, problem) = self.into_problem();
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if unauthorized {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if replayable {
            response.extensions_mut().insert(crate::retry::RolledBack);
        }
        response
    }
}

impl From<DomainError> for ApiError {
    fn from(err: DomainError) -> Self {
        match err {
            DomainError::Validation(list) => ApiError::Validation(list),
            DomainError::ProjectionNotFound => ApiError::ProjectionNotFound,
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ApiError::NotFound,
            StoreError::Invalid(domain) => domain.into(),
            StoreError::IdConflict => ApiError::IdConflict,
            StoreError::TitleConflict => ApiError::TitleConflict,
            StoreError::BudgetConflict => ApiError::BudgetConflict,
            StoreError::TransferConflict(detail) => ApiError::TransferConflict(detail),
            StoreError::ExpectedCountMismatch { expected, matched } => {
                ApiError::ExpectedCountMismatch { expected, matched }
            }
            StoreError::Stale => ApiError::Busy,
            StoreError::KeyRevoked => ApiError::Unauthorized,
            StoreError::Conflict(detail) => {
                tracing::info!(error = %detail, "transaction rolled back on a conflict");
                ApiError::Conflicted
            }
            StoreError::Unavailable(detail) => {
                metrics::counter!("database_unavailable_total").increment(1);
                tracing::warn!(error = %detail, "database unavailable");
                ApiError::DatabaseUnavailable
            }
            StoreError::LimitReached { what, limit } => ApiError::LimitReached { what, limit },
            other => ApiError::Internal(other.to_string()),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The reason phrase and problem document (JSON) of a request the HTTP
/// layer refused before routing it, by its `status` (414, 431, else 400):
/// the server sends them in place of the HTTP layer's empty answer.
pub fn refused_head(status: u16) -> (&'static str, Vec<u8>) {
    let error = match status {
        414 => ApiError::UriTooLong,
        431 => ApiError::HeadersTooLarge,
        _ => ApiError::MalformedRequest,
    };
    let (status, problem) = error.into_problem();
    (
        status.canonical_reason().unwrap_or(""),
        serde_json::to_vec(&problem).unwrap_or_default(),
    )
}
