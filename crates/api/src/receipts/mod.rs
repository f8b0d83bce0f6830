//! Receipt files. An upload is streamed chunk by chunk to the storage
//! (never held in memory whole): its type is decided by its first bytes
//! before anything is stored, it gets its unguessable final name at once,
//! and its size is checked as it arrives; the upload is completed only
//! when the whole file is in, and aborted otherwise. The store keeps only
//! the name. Files of rows that are deleted, or of receipts that are
//! replaced or removed, are deleted after the database write commits.
//! Where the files live is [`ReceiptStorage`]'s business: a local
//! directory or an S3-compatible bucket shared by a fleet of servers.

mod range;
mod serve;
mod storage;

pub use object_store::aws::AmazonS3Builder;
pub use serve::serve;
pub use storage::{ReceiptStorage, StorageError, Stored};

use axum::body::Bytes;
use axum::extract::multipart::{Field, Multipart, MultipartError, MultipartRejection};
use axum::http::{HeaderMap, StatusCode, header};

use cofre_domain::receipt::{
    self, ACCEPTED, MAX_BYTES, NAME_RANDOM_BYTES, ReceiptKind, SNIFF_BYTES,
};

use crate::error::{ApiError, ApiResult};

/// Body limit of the upload route: the file plus room for the multipart
/// framing around it.
pub const BODY_LIMIT: usize = MAX_BYTES as usize + 64 * 1024;

/// The form field that carries the file.
pub const FIELD: &str = "file";

/// The public URL of a stored receipt.
pub fn url(public_url: &str, name: &str) -> String {
    format!("{}/receipts/{name}", public_url.trim_end_matches('/'))
}

fn too_large() -> ApiError {
    ApiError::field(
        FIELD,
        format!(
            "is larger than {} MB; receipts may have at most {MAX_BYTES} bytes",
            MAX_BYTES / (1024 * 1024)
        ),
    )
}

fn not_accepted() -> ApiError {
    ApiError::field(
        FIELD,
        format!(
            "is not an accepted receipt: send a {ACCEPTED} file (the type is read from \
             the file's content, not from its name or declared type)"
        ),
    )
}

fn storage_error(doing: &'static str) -> impl FnOnce(StorageError) -> ApiError {
    move |err| ApiError::storage(format!("{doing}: {err}"))
}

/// A part of the form that could not be read: over the body limit, cut
/// short, or not valid multipart.
fn form_error(err: MultipartError) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large()
    } else {
        ApiError::field(
            FIELD,
            format!("the multipart form could not be read: {}", err.body_text()),
        )
    }
}

/// The form had no usable boundary (its content type was already checked).
pub fn form_rejection(rejection: MultipartRejection) -> ApiError {
    ApiError::field(
        FIELD,
        format!(
            "the multipart form could not be read: {}",
            rejection.body_text()
        ),
    )
}

/// Refuses, before any of the body is read, a request that is not a
/// multipart form or whose declared length is already over the limit.
pub fn check_upload_headers(headers: &HeaderMap) -> ApiResult<()> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mime = content_type.split(';').next().unwrap_or("").trim();
    if !mime.eq_ignore_ascii_case("multipart/form-data") {
        return Err(ApiError::UnsupportedMediaType(format!(
            "send the receipt as multipart/form-data with the file in the field '{FIELD}' \
             (got {content_type:?})"
        )));
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > BODY_LIMIT as u64) {
        return Err(too_large());
    }
    Ok(())
}

fn random_bytes<const N: usize>() -> ApiResult<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|err| ApiError::Internal(format!("no randomness for a receipt name: {err}")))?;
    Ok(bytes)
}

/// Reads the form: exactly one field, `file`, streamed to `storage`.
/// The file is complete under its final name when this returns; should
/// anything after fail, [`Stored::discard`] removes it. A form refused
/// after its file was stored (a second file, another field) removes the
/// file before answering.
pub async fn receive(multipart: &mut Multipart, storage: &ReceiptStorage) -> ApiResult<Stored> {
    let mut upload = None;
    match read_form(multipart, storage, &mut upload).await {
        Ok(()) => upload.ok_or_else(|| {
            ApiError::field(
                FIELD,
                "is required: send the receipt in the multipart field 'file'",
            )
        }),
        Err(err) => {
            if let Some(stored) = upload {
                stored.discard().await;
            }
            Err(err)
        }
    }
}

/// The fields of the form, the file stored into `upload`.
async fn read_form(
    multipart: &mut Multipart,
    storage: &ReceiptStorage,
    upload: &mut Option<Stored>,
) -> ApiResult<()> {
    while let Some(mut field) = multipart.next_field().await.map_err(form_error)? {
        match field.name() {
            Some(FIELD) if upload.is_none() => {
                *upload = Some(receive_file(&mut field, storage).await?);
            }
            Some(FIELD) => return Err(ApiError::field(FIELD, "send one file only")),
            Some(other) => {
                let name: String = other.chars().take(64).collect();
                return Err(ApiError::field(
                    name,
                    format!("unknown field; the form takes only '{FIELD}'"),
                ));
            }
            None => {
                return Err(ApiError::field(
                    FIELD,
                    "every part of the form needs a name; send the file as 'file'",
                ));
            }
        }
    }
    Ok(())
}

/// Streams one field to the storage. The first bytes are held until the
/// type is known, so a file of the wrong type stores nothing; then the
/// upload starts under the final name (128 random bits and the extension
/// of the type) and every chunk goes on as it arrives, the size checked
/// against the limit on the way.
async fn receive_file(field: &mut Field<'_>, storage: &ReceiptStorage) -> ApiResult<Stored> {
    let mut head: Vec<Bytes> = Vec::new();
    let mut head_len = 0;
    let mut size: u64 = 0;
    let mut ended = false;
    while head_len < SNIFF_BYTES {
        let Some(chunk) = field.chunk().await.map_err(form_error)? else {
            ended = true;
            break;
        };
        size += chunk.len() as u64;
        if size > MAX_BYTES {
            return Err(too_large());
        }
        head_len += chunk.len();
        head.push(chunk);
    }
    if size == 0 {
        return Err(ApiError::field(FIELD, "is empty"));
    }
    let first: Vec<u8> = head.iter().flatten().copied().take(SNIFF_BYTES).collect();
    let kind = ReceiptKind::sniff(&first).ok_or_else(not_accepted)?;
    let name = receipt::file_name(&random_bytes::<NAME_RANDOM_BYTES>()?, kind);
    let mut upload = storage
        .begin(name)
        .await
        .map_err(storage_error("starting a receipt upload"))?;
    match send_rest(field, &mut upload, head, ended, size).await {
        Ok(()) => upload
            .finish()
            .await
            .map_err(storage_error("completing a receipt upload")),
        Err(err) => {
            upload.abort().await;
            Err(err)
        }
    }
}

/// Sends the held first chunks and then the rest of the field.
async fn send_rest(
    field: &mut Field<'_>,
    upload: &mut storage::PendingUpload,
    head: Vec<Bytes>,
    ended: bool,
    mut size: u64,
) -> ApiResult<()> {
    for chunk in head {
        upload
            .write(chunk)
            .await
            .map_err(storage_error("writing a receipt file"))?;
    }
    if !ended {
        while let Some(chunk) = field.chunk().await.map_err(form_error)? {
            size += chunk.len() as u64;
            if size > MAX_BYTES {
                return Err(too_large());
            }
            upload
                .write(chunk)
                .await
                .map_err(storage_error("writing a receipt file"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn urls_join_the_public_base() {
        let name = "0123456789abcdef0123456789abcdef.png";
        assert_eq!(
            url("https://cofre.example/", name),
            format!("https://cofre.example/receipts/{name}")
        );
        assert_eq!(
            url("http://127.0.0.1:8080", name),
            format!("http://127.0.0.1:8080/receipts/{name}")
        );
    }

    #[test]
    fn upload_headers_are_checked_before_the_body() {
        let mut headers = HeaderMap::new();
        assert!(matches!(
            check_upload_headers(&headers),
            Err(ApiError::UnsupportedMediaType(_))
        ));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        assert!(matches!(
            check_upload_headers(&headers),
            Err(ApiError::UnsupportedMediaType(_))
        ));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("Multipart/Form-Data; boundary=x"),
        );
        assert!(check_upload_headers(&headers).is_ok());
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(BODY_LIMIT));
        assert!(check_upload_headers(&headers).is_ok());
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(BODY_LIMIT + 1));
        assert!(matches!(
            check_upload_headers(&headers),
            Err(ApiError::Validation(list)) if list[0].field == FIELD
        ));
    }
}
