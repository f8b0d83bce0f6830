//! Receipts of stored rows: `PUT` and `DELETE /v1/transactions/{id}/receipt`,
//! and the public, unguessable file URLs `GET /receipts/{name}`.

use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::TransactionId;
use cofre_domain::projection::HANDLE_PREFIX;

use super::CommonErrors;
use crate::AppState;
use crate::auth::{Auth, Write};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppJson, AppPath, path_id};
use crate::receipts;

/// Upload and removal, under `/v1`. Uploads get their own body limit.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_receipt, delete_receipt))
        .layer(DefaultBodyLimit::max(receipts::BODY_LIMIT))
}

/// The public file route, outside `/v1`.
pub fn public() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_receipt))
}

#[derive(Serialize, ToSchema)]
pub struct ReceiptResult {
    pub transaction_id: String,
    /// Public URL of the file (no key needed); null once removed.
    pub receipt_url: Option<String>,
}

/// The upload form: `file` and nothing else.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ReceiptForm {
    /// JPEG, PNG, PDF, HEIC or WebP, at most 10 MB (10,485,760 bytes). The
    /// type is read from the file's content, not its name.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// The bytes of a receipt file.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct ReceiptFile(Vec<u8>);

/// The stored row a receipt path names.
fn row_id(text: &str) -> ApiResult<TransactionId> {
    if text.starts_with(HANDLE_PREFIX) {
        return Err(ApiError::field(
            "id",
            "is a projected entry, which cannot hold a receipt: store the entry first \
             (PATCH it with scope=this), then attach the receipt to the stored row",
        ));
    }
    path_id(text, TransactionId::parse)
}

/// Attaches a receipt file to a stored row, replacing an earlier one (whose
/// file is deleted). Multipart form with the file in the field `file`; the
/// type is decided by the file's bytes: JPEG, PNG, PDF, HEIC or WebP, at
/// most 10 MB. The answer carries the public URL of the file.
#[utoipa::path(put, path = "/v1/transactions/{id}/receipt", tag = "transactions",
    params(("id" = String, Path, format = Uuid, description = "A stored row's UUID")),
    request_body(content = inline(ReceiptForm), content_type = "multipart/form-data"),
    responses((status = 200, body = ReceiptResult),
        (status = 400, description = "`validation_error`: a malformed id, a projected entry, or a missing, empty, over-size or not accepted `file`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such stored row", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "`unsupported_media_type`: the body is not multipart/form-data", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn put_receipt(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
) -> ApiResult<AppJson<ReceiptResult>> {
    let id = row_id(&id)?;
    receipts::check_upload_headers(&headers)?;
    let user = auth.user();
    // Unknown rows are refused before any of the body is read.
    state.store.get_transaction(user, id).await?;
    let mut form = form.map_err(receipts::form_rejection)?;
    let storage = &state.config.receipts;
    let stored = receipts::receive(&mut form, storage).await?;
    let previous = match state
        .store
        .set_receipt(user, id, Some(stored.name()), state.clock.now())
        .await
    {
        Ok(previous) => previous,
        Err(err) => {
            stored.discard().await;
            return Err(err.into());
        }
    };
    let name = stored.keep();
    storage.remove(previous.as_slice()).await;
    Ok(AppJson(ReceiptResult {
        transaction_id: id.to_string(),
        receipt_url: Some(receipts::url(&state.config.public_url, &name)),
    }))
}

/// Removes a stored row's receipt and deletes its file. A row without a
/// receipt answers the same (the request is idempotent).
#[utoipa::path(delete, path = "/v1/transactions/{id}/receipt", tag = "transactions",
    params(("id" = String, Path, format = Uuid, description = "A stored row's UUID")),
    responses((status = 200, body = ReceiptResult),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such stored row", body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_receipt(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
) -> ApiResult<AppJson<ReceiptResult>> {
    let id = row_id(&id)?;
    let previous = state
        .store
        .set_receipt(auth.user(), id, None, state.clock.now())
        .await?;
    state.config.receipts.remove(previous.as_slice()).await;
    Ok(AppJson(ReceiptResult {
        transaction_id: id.to_string(),
        receipt_url: None,
    }))
}

/// A receipt file, at the `receipt_url` of its row. No key: the name
/// (128 random bits) is the secret. Declared as bytes
/// (`application/octet-stream`, which client generators turn into a
/// download); served with the type sniffed at upload in `Content-Type`
/// (`image/jpeg`, `image/png`, `application/pdf`, `image/heic` or
/// `image/webp`) and `X-Content-Type-Options: nosniff`, with `ETag` and
/// `Last-Modified`; one byte range (`Range: bytes=a-b`, `a-` or `-n`) is
/// answered with 206, several with the whole file.
#[utoipa::path(get, path = "/receipts/{name}", tag = "operations",
    params(("name" = String, Path, pattern = r"^[0-9a-f]{32}\.(jpg|png|pdf|heic|webp)$",
        description = "32 hex digits, a dot and jpg, png, pdf, heic or webp")),
    responses((status = 200, description = "The file; `Content-Type` gives its type (`image/jpeg`, `image/png`, `application/pdf`, `image/heic` or `image/webp`)",
            body = ReceiptFile, content_type = "application/octet-stream"),
        (status = 206, description = "The bytes a `Range` header asked for; `Content-Type` gives the file's type",
            body = ReceiptFile, content_type = "application/octet-stream"),
        (status = 304, description = "Not modified: the `If-None-Match` (an `ETag` of an earlier answer) or `If-Modified-Since` sent still holds"),
        (status = 404, description = "No such receipt", body = Problem, content_type = "application/problem+json"),
        (status = 416, description = "The `Range` asked for lies outside the file; `Content-Range: bytes */LENGTH` gives its length"),
        (status = 503, description = "`storage_unavailable`: receipt storage does not answer; retry after `Retry-After`", body = Problem, content_type = "application/problem+json")))]
async fn get_receipt(
    State(state): State<AppState>,
    AppPath(name): AppPath<String>,
    request: Request,
) -> Response {
    receipts::serve(&state.config.receipts, &name, request).await
}
