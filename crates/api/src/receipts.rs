//! Receipt files on disk. An upload is streamed chunk by chunk to a
//! temporary file in the receipts directory (never held in memory whole),
//! its type decided by its first bytes and its size checked as it arrives;
//! it then gets its unguessable name by an atomic rename. The store keeps
//! only the name. Files of rows that are deleted, or of receipts that are
//! replaced or removed, are deleted after the database write commits.

use axum::body::Body;
use axum::extract::Request;
use axum::extract::multipart::{Field, Multipart, MultipartError, MultipartRejection};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;
use tower_http::services::ServeFile;

use cofre_domain::receipt::{
    self, ACCEPTED, MAX_BYTES, NAME_RANDOM_BYTES, ReceiptKind, SNIFF_BYTES,
};

use crate::error::{ApiError, ApiResult};

/// Body limit of the upload route: the file plus room for the multipart
/// framing around it.
pub const BODY_LIMIT: usize = MAX_BYTES as usize + 64 * 1024;

/// The form field that carries the file.
pub const FIELD: &str = "file";

/// Temporary uploads start with this; no stored name does.
const TEMP_PREFIX: &str = ".upload-";

/// A temporary upload older than this is left over from a crash.
const STALE_UPLOAD: Duration = Duration::from_secs(3600);

/// Content at a name never changes (a new upload gets a new name); keep
/// receipts out of shared caches all the same.
const CACHE_CONTROL: &str = "private, max-age=31536000, immutable";

/// The public URL of a stored receipt.
pub fn url(public_url: &str, name: &str) -> String {
    format!("{}/receipts/{name}", public_url.trim_end_matches('/'))
}

/// Creates the receipts directory if missing and removes temporary
/// uploads a crash left behind. Only those older than an hour go, so
/// uploads in flight in another process sharing the directory are spared.
pub fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cutoff = SystemTime::now() - STALE_UPLOAD;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let stale = entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX)
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified < cutoff);
        if stale && let Err(err) = std::fs::remove_file(entry.path()) {
            tracing::warn!(error = %err, path = %entry.path().display(), "could not remove a stale upload");
        }
    }
    Ok(())
}

/// Removes receipt files by name, best effort: callers run it after the
/// database write that dropped the names has committed, so a failure is
/// logged and never fails the request. A name not of the stored form is
/// never turned into a path.
pub async fn remove_files(dir: &Path, names: &[String]) {
    for name in names {
        if receipt::parse_name(name).is_none() {
            tracing::warn!(receipt = %name, "not a receipt file name; nothing removed");
            continue;
        }
        match tokio::fs::remove_file(dir.join(name)).await {
            Ok(()) => {}
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => {
                tracing::warn!(error = %err, receipt = %name, "could not remove a receipt file");
            }
        }
    }
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

fn io_error(doing: &'static str) -> impl FnOnce(std::io::Error) -> ApiError {
    move |err| ApiError::Internal(format!("{doing}: {err}"))
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

/// A file that is removed when this is dropped, unless disarmed: every
/// early return, failed write or dropped request leaves nothing behind.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take()
            && let Err(err) = std::fs::remove_file(&path)
            && err.kind() != ErrorKind::NotFound
        {
            tracing::warn!(error = %err, path = %path.display(), "could not remove an unused receipt file");
        }
    }
}

/// A received file of an accepted type, still under its temporary name.
pub struct Upload {
    temp: RemoveOnDrop,
    path: PathBuf,
    kind: ReceiptKind,
}

/// A file under its final name; removed again when dropped before
/// [`Stored::keep`], so a failed database write leaves no file.
pub struct Stored {
    file: RemoveOnDrop,
    name: String,
}

impl Stored {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, once the database holds it: the file stays.
    pub fn keep(mut self) -> String {
        self.file.disarm();
        self.name
    }
}

/// Reads the form: exactly one field, `file`, streamed to a temporary
/// file in `dir`.
pub async fn receive(multipart: &mut Multipart, dir: &Path) -> ApiResult<Upload> {
    let mut upload = None;
    while let Some(mut field) = multipart.next_field().await.map_err(form_error)? {
        match field.name() {
            Some(FIELD) if upload.is_none() => {
                upload = Some(receive_file(&mut field, dir).await?);
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
    upload.ok_or_else(|| {
        ApiError::field(
            FIELD,
            "is required: send the receipt in the multipart field 'file'",
        )
    })
}

/// Streams one field to a temporary file, checking the size of what has
/// arrived so far against the limit and the type as soon as enough bytes
/// are in. The file is synced to disk before it is handed on.
async fn receive_file(field: &mut Field<'_>, dir: &Path) -> ApiResult<Upload> {
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(io_error("creating the receipts directory"))?;
    let suffix: String = random_bytes::<8>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = dir.join(format!("{TEMP_PREFIX}{suffix}.tmp"));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .await
        .map_err(io_error("creating a temporary receipt file"))?;
    let temp = RemoveOnDrop(Some(path.clone()));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut kind = None;
    let mut size: u64 = 0;
    while let Some(chunk) = field.chunk().await.map_err(form_error)? {
        size += chunk.len() as u64;
        if size > MAX_BYTES {
            return Err(too_large());
        }
        if kind.is_none() {
            let take = (SNIFF_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            if head.len() == SNIFF_BYTES {
                kind = Some(ReceiptKind::sniff(&head).ok_or_else(not_accepted)?);
            }
        }
        file.write_all(&chunk)
            .await
            .map_err(io_error("writing a receipt file"))?;
    }
    if size == 0 {
        return Err(ApiError::field(FIELD, "is empty"));
    }
    let kind = match kind {
        Some(kind) => kind,
        None => ReceiptKind::sniff(&head).ok_or_else(not_accepted)?,
    };
    file.flush()
        .await
        .map_err(io_error("writing a receipt file"))?;
    file.sync_all()
        .await
        .map_err(io_error("syncing a receipt file"))?;
    Ok(Upload { temp, path, kind })
}

impl Upload {
    /// Gives the file its unguessable name (128 random bits and the
    /// extension of its type) by a rename within the directory, and makes
    /// the rename durable.
    pub async fn store(mut self, dir: &Path) -> ApiResult<Stored> {
        let name = receipt::file_name(&random_bytes::<NAME_RANDOM_BYTES>()?, self.kind);
        let path = dir.join(&name);
        tokio::fs::rename(&self.path, &path)
            .await
            .map_err(io_error("naming a receipt file"))?;
        self.temp.disarm();
        let stored = Stored {
            file: RemoveOnDrop(Some(path)),
            name,
        };
        sync_dir(dir)
            .await
            .map_err(io_error("syncing the receipts directory"))?;
        Ok(stored)
    }
}

/// Makes a rename in `dir` durable.
async fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    tokio::fs::File::open(dir).await?.sync_all().await?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Serves a stored receipt: a 404 problem for anything that is not a
/// stored name or not on disk. The content type comes from the name,
/// which carries the type sniffed at upload; it is never guessed, and
/// `nosniff` tells browsers not to guess either. Ranges and conditional
/// requests are answered as for any static file.
pub async fn serve(dir: &Path, name: &str, request: Request) -> Response {
    let Some(kind) = receipt::parse_name(name) else {
        return ApiError::NotFound.into_response();
    };
    let response = match ServeFile::new(dir.join(name)).oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let status = response.status();
    if status == StatusCode::NOT_FOUND {
        return ApiError::NotFound.into_response();
    }
    if status.is_server_error() {
        return ApiError::Internal(format!("serving receipt {name}: {status}")).into_response();
    }
    let mut response = response.map(Body::new);
    let headers = response.headers_mut();
    if status.is_success() || status == StatusCode::NOT_MODIFIED {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(kind.content_type()),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        );
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[tokio::test]
    async fn prepare_dir_creates_and_sweeps_only_stale_uploads() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        prepare_dir(&dir).unwrap();
        assert!(dir.is_dir());
        let fresh = dir.join(".upload-fresh.tmp");
        let stale = dir.join(".upload-stale.tmp");
        let kept = dir.join("0123456789abcdef0123456789abcdef.png");
        for path in [&fresh, &stale, &kept] {
            std::fs::write(path, b"x").unwrap();
        }
        let old = SystemTime::now() - 2 * STALE_UPLOAD;
        for path in [&stale, &kept] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        prepare_dir(&dir).unwrap();
        assert!(fresh.exists() && kept.exists());
        assert!(!stale.exists());
    }

    #[tokio::test]
    async fn remove_files_skips_what_is_not_a_receipt_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("receipts");
        std::fs::create_dir(&dir).unwrap();
        let outside = root.path().join("secret.pdf");
        std::fs::write(&outside, b"x").unwrap();
        let name = "0123456789abcdef0123456789abcdef.pdf".to_owned();
        std::fs::write(dir.join(&name), b"x").unwrap();
        let missing = "ffffffffffffffffffffffffffffffff.png".to_owned();
        remove_files(&dir, &["../secret.pdf".to_owned(), name.clone(), missing]).await;
        assert!(outside.exists());
        assert!(!dir.join(&name).exists());
    }
}
