//! `GET /receipts/{name}` through the storage, the same on every backend:
//! validators (`ETag`, `Last-Modified`), conditional requests (304), one
//! byte range (206, or 416 outside the file), and a streamed body.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use object_store::{GetOptions, GetRange, GetResult};
use std::time::{Duration, SystemTime};

use cofre_domain::receipt::{self, ReceiptKind};

use super::ReceiptStorage;
use super::range::{self, ByteRange, RangeRequest};
use crate::error::ApiError;

/// Content at a name never changes (a new upload gets a new name); keep
/// receipts out of shared caches all the same.
const CACHE_CONTROL: &str = "private, max-age=31536000, immutable";

/// Serves a stored receipt: a 404 problem for anything that is not a
/// stored name or not stored. The content type comes from the name,
/// which carries the type sniffed at upload; it is never guessed, and
/// `nosniff` tells browsers not to guess either.
pub async fn serve(storage: &ReceiptStorage, name: &str, request: Request) -> Response {
    let (Some(kind), Some(location)) = (receipt::parse_name(name), storage.location(name)) else {
        return ApiError::NotFound.into_response();
    };
    let head = request.method() == Method::HEAD;
    let headers = request.headers();
    // Ranges are for GET; with `If-Range` the whole file is always a
    // correct answer, and simpler than checking the validator.
    let wanted = if head || headers.contains_key(header::IF_RANGE) {
        RangeRequest::Whole
    } else {
        range::parse(header_text(headers, header::RANGE))
    };
    let conditions = conditions(headers);
    let mut options = conditions.clone();
    options.head = head;
    // Not every S3 server takes a list of tags; those are checked here.
    if options
        .if_none_match
        .as_deref()
        .is_some_and(|tags| tags.contains(','))
    {
        options.if_none_match = None;
    }
    let fetched = match wanted {
        RangeRequest::One(ByteRange::Last(0)) => None,
        RangeRequest::One(one) => Some(
            storage
                .get(
                    &location,
                    GetOptions {
                        range: Some(get_range(one)),
                        ..options.clone()
                    },
                )
                .await,
        ),
        RangeRequest::Whole => Some(storage.get(&location, options.clone()).await),
    };
    let result = match fetched {
        Some(Ok(result)) => result,
        Some(Err(object_store::Error::NotFound { .. })) => {
            return ApiError::NotFound.into_response();
        }
        Some(Err(object_store::Error::NotModified { .. })) => {
            return not_modified(kind);
        }
        Some(Err(err)) if wanted == RangeRequest::Whole => {
            return ApiError::storage(format!("reading receipt {name}: {err}")).into_response();
        }
        // A range the store refused (or `-0`, which selects nothing):
        // with the file's length, either a 416 or the range made exact.
        Some(Err(_)) | None => {
            let RangeRequest::One(one) = wanted else {
                unreachable!("only ranges get here")
            };
            match storage.head(&location).await {
                Err(object_store::Error::NotFound { .. }) => {
                    return ApiError::NotFound.into_response();
                }
                Err(err) => {
                    return ApiError::storage(format!("reading receipt {name}: {err}"))
                        .into_response();
                }
                Ok(meta) => match one.resolve(meta.size) {
                    None => return unsatisfiable(meta.size),
                    Some(exact) => {
                        let options = GetOptions {
                            range: Some(GetRange::Bounded(exact)),
                            ..options
                        };
                        match storage.get(&location, options).await {
                            Ok(result) => result,
                            Err(object_store::Error::NotFound { .. }) => {
                                return ApiError::NotFound.into_response();
                            }
                            Err(object_store::Error::NotModified { .. }) => {
                                return not_modified(kind);
                            }
                            Err(err) => {
                                return ApiError::storage(format!("reading receipt {name}: {err}"))
                                    .into_response();
                            }
                        }
                    }
                },
            }
        }
    };
    if let Err(object_store::Error::NotModified { .. }) =
        conditions.check_preconditions(&result.meta)
    {
        return not_modified(kind);
    }
    respond(kind, result, wanted != RangeRequest::Whole, head)
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `If-None-Match` and `If-Modified-Since` as the store takes them; the
/// store answers `NotModified` when they hold.
fn conditions(headers: &HeaderMap) -> GetOptions {
    let mut options = GetOptions::default();
    if let Some(tags) = header_text(headers, header::IF_NONE_MATCH) {
        // A weak comparison (RFC 9110, 13.1.2): `W/"x"` matches `"x"`.
        let tags: Vec<&str> = tags
            .split(',')
            .map(|tag| tag.trim().trim_start_matches("W/"))
            .collect();
        options.if_none_match = Some(tags.join(", "));
    } else if let Some(since) = header_text(headers, header::IF_MODIFIED_SINCE)
        .and_then(|text| httpdate::parse_http_date(text).ok())
    {
        // An HTTP date has whole seconds; the file's time may have a
        // fraction. Modified since second S means at or after S + 1.
        let since = since + Duration::from_nanos(999_999_999);
        options.if_modified_since = Some(since.into());
    }
    options
}

fn get_range(range: ByteRange) -> GetRange {
    match range {
        ByteRange::FromTo(a, b) => GetRange::Bounded(a..b.saturating_add(1)),
        ByteRange::From(a) => GetRange::Offset(a),
        ByteRange::Last(n) => GetRange::Suffix(n),
    }
}

/// Headers every answer about an existing file carries.
fn common(headers: &mut HeaderMap, kind: ReceiptKind) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(kind.content_type()),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
}

fn respond(kind: ReceiptKind, result: GetResult, partial: bool, head: bool) -> Response {
    let size = result.meta.size;
    let range = result.range.clone();
    let mut response = Response::new(Body::empty());
    let headers = response.headers_mut();
    common(headers, kind);
    if let Some(tag) = result
        .meta
        .e_tag
        .as_deref()
        .and_then(|tag| HeaderValue::from_str(tag).ok())
    {
        headers.insert(header::ETAG, tag);
    }
    let modified = httpdate::fmt_http_date(SystemTime::from(result.meta.last_modified));
    if let Ok(value) = HeaderValue::from_str(&modified) {
        headers.insert(header::LAST_MODIFIED, value);
    }
    let length = if partial {
        if let Ok(value) = HeaderValue::from_str(&range::content_range(&range, size)) {
            headers.insert(header::CONTENT_RANGE, value);
        }
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        range.end - range.start
    } else {
        size
    };
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    if !head {
        *response.body_mut() = Body::from_stream(result.into_stream());
    }
    response
}

fn not_modified(kind: ReceiptKind) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    common(response.headers_mut(), kind);
    response
}

fn unsatisfiable(size: u64) -> Response {
    let mut response = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&range::unsatisfied(size)) {
        headers.insert(header::CONTENT_RANGE, value);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
