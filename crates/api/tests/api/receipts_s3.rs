//! Receipt files in an S3 bucket, against a real S3-protocol server
//! (`scripts/ensure-s3` starts moto and exports `COFRE_TEST_S3_ENDPOINT`).
//! The receipt scenarios of `receipts` run here too (`receipts::s3::*`);
//! this file adds the bucket helpers and the fleet: several servers on one
//! database and one bucket.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use cofre_api::ApiConfig;
use cofre_api::rate_limit::MemoryLimiter;
use cofre_api::receipts::{AmazonS3Builder, ReceiptStorage};

use crate::receipts::{file_part, fixture, new_tx, upload};
use crate::support::{Backend, TestApp, server_url};

/// The S3 endpoint to test against. Without it the S3 tests are skipped
/// with a notice, except under `CI=true`, where skipping is a failure.
pub fn endpoint() -> Option<String> {
    server_url("COFRE_TEST_S3_ENDPOINT", "S3").map(|url| url.trim_end_matches('/').to_owned())
}

/// One raw HTTP/1.1 request to the S3 server (moto takes unsigned
/// requests): its status and body. Only for what `object_store` has no
/// call for (creating a bucket, listing unfinished multipart uploads).
async fn raw_s3(method: &str, path: &str) -> (u16, String) {
    let endpoint = endpoint().expect("COFRE_TEST_S3_ENDPOINT");
    let host = endpoint
        .strip_prefix("http://")
        .expect("an http:// endpoint")
        .split('/')
        .next()
        .expect("host");
    let mut stream = tokio::net::TcpStream::connect(host)
        .await
        .expect("connect to the S3 server");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// The storage of bucket `bucket` under the prefix `receipts/`.
fn storage_of(bucket: &str) -> ReceiptStorage {
    storage_at(&endpoint().expect("COFRE_TEST_S3_ENDPOINT"), bucket)
}

fn storage_at(endpoint: &str, bucket: &str) -> ReceiptStorage {
    let builder = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_access_key_id("cofre-test")
        .with_secret_access_key("cofre-test")
        .with_virtual_hosted_style_request(false);
    ReceiptStorage::s3(&format!("s3://{bucket}/receipts"), builder).expect("S3 storage")
}

/// A new, empty bucket with a random name, as receipt storage.
pub async fn fresh_bucket() -> ReceiptStorage {
    let bucket = format!("cofre-test-{}", uuid::Uuid::new_v4().simple());
    let (status, body) = raw_s3("PUT", &format!("/{bucket}")).await;
    assert_eq!(status, 200, "creating bucket {bucket}: {body}");
    let storage = storage_of(&bucket);
    storage.prepare().await.expect("the bucket answers");
    storage
}

/// Every object under the storage's prefix, and every multipart upload
/// not completed or aborted (as `upload:KEY`): what a bucket holds.
pub async fn everything_in(storage: &ReceiptStorage) -> Vec<String> {
    let mut names = storage.list().await.expect("list the bucket");
    let url = storage.describe();
    let bucket = url
        .strip_prefix("s3://")
        .and_then(|rest| rest.split('/').next())
        .expect("an s3:// storage");
    let (status, body) = raw_s3("GET", &format!("/{bucket}?uploads")).await;
    assert_eq!(status, 200, "{body}");
    for upload in body.split("<Upload>").skip(1) {
        let key = upload
            .split("<Key>")
            .nth(1)
            .and_then(|rest| rest.split("</Key>").next())
            .unwrap_or("?");
        names.push(format!("upload:{key}"));
    }
    names.sort();
    names
}

async fn status_and_bytes(router: &Router, request: Request<Body>) -> (u16, Vec<u8>) {
    let response = router.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, bytes.to_vec())
}

fn get(path: &str) -> Request<Body> {
    Request::builder()
        .uri(path)
        .body(Body::empty())
        .expect("request")
}

/// Uploaded through server A, served by server B, removed through server
/// C: then gone from the bucket and a 404 on every server.
async fn a_fleet_shares_one_bucket(db: Backend) {
    let Some(_) = endpoint() else { return };
    let storage = fresh_bucket().await;
    let config = ApiConfig {
        receipts: storage.clone(),
        ..ApiConfig::default()
    };
    let a = TestApp::start_with(db, config).await;
    let b = a.server_with(Arc::new(MemoryLimiter::new())).router.clone();
    let c = a.server_with(Arc::new(MemoryLimiter::new())).router.clone();

    let account = a.bank("Conta").await;
    let id = new_tx(&a, &account, "Táxi").await;
    let pdf = fixture("receipt.pdf");
    let uploaded = upload(&a, &id, &[file_part("receipt.pdf", &pdf)]).await;
    let url = uploaded.ok(200)["receipt_url"]
        .as_str()
        .expect("receipt_url")
        .to_owned();
    let name = url.rsplit('/').next().expect("name").to_owned();
    let path = format!("/receipts/{name}");
    assert_eq!(storage.list().await.unwrap(), std::slice::from_ref(&name));

    // Served by B (and C), which never saw the upload.
    assert_eq!(status_and_bytes(&b, get(&path)).await, (200, pdf.clone()));
    let ranged = Request::builder()
        .uri(&path)
        .header("range", "bytes=0-3")
        .body(Body::empty())
        .expect("request");
    assert_eq!(status_and_bytes(&c, ranged).await, (206, pdf[..4].to_vec()));

    // Removed through C.
    let remove = Request::builder()
        .method(Method::DELETE)
        .uri(format!("/v1/transactions/{id}/receipt"))
        .header("authorization", format!("Bearer {}", a.key))
        .body(Body::empty())
        .expect("request");
    assert_eq!(status_and_bytes(&c, remove).await.0, 200);
    assert!(everything_in(&storage).await.is_empty());
    for server in [&b, &c] {
        assert_eq!(status_and_bytes(server, get(&path)).await.0, 404);
    }
    a.call(Method::GET, &path, None, None)
        .await
        .problem(404, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_shares_one_bucket_on_sqlite() {
    a_fleet_shares_one_bucket(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_shares_one_bucket_on_postgres() {
    if let Some(db) = Backend::postgres() {
        a_fleet_shares_one_bucket(db).await;
    }
}

/// A bucket that does not exist fails at start-up, not at the first
/// upload.
#[tokio::test]
async fn a_missing_bucket_is_refused_at_start() {
    let Some(_) = endpoint() else { return };
    let storage = storage_of(&format!("cofre-missing-{}", uuid::Uuid::new_v4().simple()));
    let err = storage.prepare().await.expect_err("no such bucket");
    assert!(err.contains("does not answer"), "{err}");
}

/// A bucket that stops answering is a 503 `storage_unavailable` with
/// `Retry-After` within seconds (bounded retries, inside the request
/// deadline), never a 500, and the row keeps no receipt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_bucket_is_a_503_within_seconds() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let config = ApiConfig {
        receipts: storage_at(&format!("http://127.0.0.1:{port}"), "gone"),
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(Backend::Sqlite, config).await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Táxi").await;
    let started = std::time::Instant::now();
    let answer = upload(
        &app,
        &id,
        &[file_part("receipt.png", &fixture("receipt.png"))],
    )
    .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer.header("retry-after"), Some("2"));
    answer.problem(503, "storage_unavailable");
    let row = app.get(&format!("/v1/transactions/{id}")).await;
    assert!(row.ok(200)["transaction"]["receipt_url"].is_null());
    app.call(
        Method::GET,
        "/receipts/0123456789abcdef0123456789abcdef.png",
        None,
        None,
    )
    .await
    .problem(503, "storage_unavailable");
}
