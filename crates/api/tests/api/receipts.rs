//! Receipts: upload of every accepted type (decided by the bytes), the
//! public file URL, replacement and removal, refusals (type, size, form,
//! ids, scope, other users), files removed with their rows, ranges and
//! conditional requests. Every scenario runs with the files in a local
//! directory (on SQLite and PostgreSQL) and in an S3 bucket (moto, see
//! `receipts_s3`).

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};
use std::path::Path;

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;

use crate::support::{Backend, TestApp};

/// Where a scenario runs: a database, and receipt files in the app's own
/// directory or in a fresh bucket.
pub(crate) struct At {
    pub db: Backend,
    pub bucket: bool,
}

impl At {
    pub(crate) async fn start(self) -> TestApp {
        let mut config = ApiConfig::default();
        if self.bucket {
            config.receipts = crate::receipts_s3::fresh_bucket().await;
        }
        TestApp::start_with(self.db, config).await
    }
}

/// Runs each scenario `async fn name(at: At)` with local files on SQLite
/// and on PostgreSQL, and with the files in a bucket (on SQLite).
macro_rules! on_every_storage {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::support::Backend::Sqlite;
                    super::$name(super::At { db, bucket: false }).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(db) = $crate::support::Backend::postgres() {
                        super::$name(super::At { db, bucket: false }).await
                    }
                }
            )*
        }
        mod s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if $crate::receipts_s3::endpoint().is_some() {
                        let db = $crate::support::Backend::Sqlite;
                        super::$name(super::At { db, bucket: true }).await
                    }
                }
            )*
        }
    };
}

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";
pub(crate) const BOUNDARY: &str = "cofre-test-boundary-7MA4YWxkTrZu0gW";
const PUBLIC_URL: &str = "http://127.0.0.1:8080";
/// The documented limit: 10 MB.
const MAX_BYTES: usize = 10 * 1024 * 1024;

/// Every accepted fixture with the content type it is served with.
const TYPES: [(&str, &str); 5] = [
    ("receipt.jpg", "image/jpeg"),
    ("receipt.png", "image/png"),
    ("receipt.pdf", "application/pdf"),
    ("receipt.heic", "image/heic"),
    ("receipt.webp", "image/webp"),
];

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/receipts")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

fn receipt_path(id: &str) -> String {
    format!("/v1/transactions/{id}/receipt")
}

/// One part of a multipart form: field name, file name, declared type, bytes.
pub(crate) struct Part<'a> {
    field: &'a str,
    file_name: &'a str,
    content_type: &'a str,
    bytes: &'a [u8],
}

fn part<'a>(
    field: &'a str,
    file_name: &'a str,
    content_type: &'a str,
    bytes: &'a [u8],
) -> Part<'a> {
    Part {
        field,
        file_name,
        content_type,
        bytes,
    }
}

pub(crate) fn file_part<'a>(file_name: &'a str, bytes: &'a [u8]) -> Part<'a> {
    part("file", file_name, "application/octet-stream", bytes)
}

/// A multipart/form-data body written by hand.
pub(crate) fn form(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\n\
                 Content-Type: {}\r\n\r\n",
                part.field, part.file_name, part.content_type
            )
            .as_bytes(),
        );
        body.extend_from_slice(part.bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// A PUT with an optional key and content type.
pub(crate) fn put(
    path: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Request<Body> {
    let mut builder = Request::builder().method(Method::PUT).uri(path);
    if let Some(key) = key {
        builder = builder.header("authorization", format!("Bearer {key}"));
    }
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    builder.body(Body::from(body)).expect("request")
}

fn upload_request(path: &str, key: &str, body: Vec<u8>) -> Request<Body> {
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    put(path, Some(key), Some(&content_type), body)
}

async fn upload_as(
    app: &TestApp,
    key: &str,
    id: &str,
    parts: &[Part<'_>],
) -> crate::support::Response {
    app.send(upload_request(&receipt_path(id), key, form(parts)))
        .await
}

pub(crate) async fn upload(
    app: &TestApp,
    id: &str,
    parts: &[Part<'_>],
) -> crate::support::Response {
    upload_as(app, &app.key, id, parts).await
}

/// Uploads a fixture (200) and returns the receipt URL.
async fn attach(app: &TestApp, id: &str, fixture_name: &str) -> String {
    let bytes = fixture(fixture_name);
    let response = upload(app, id, &[file_part(fixture_name, &bytes)]).await;
    let body = response.ok(200);
    assert_eq!(body["transaction_id"], id);
    body["receipt_url"]
        .as_str()
        .expect("receipt_url")
        .to_owned()
}

/// The path part of a receipt URL, checking the URL's form.
fn url_path(url: &str) -> String {
    let path = url
        .strip_prefix(PUBLIC_URL)
        .unwrap_or_else(|| panic!("{url} is not under {PUBLIC_URL}"));
    let name = path.strip_prefix("/receipts/").expect("/receipts/ path");
    let (stem, _) = name.split_once('.').expect("extension");
    assert_eq!(stem.len(), 32, "{name}");
    assert!(
        stem.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    path.to_owned()
}

/// GET of a receipt path without any key.
async fn fetch(app: &TestApp, path: &str) -> (u16, axum::http::HeaderMap, Vec<u8>) {
    let request = Request::builder()
        .uri(path)
        .body(Body::empty())
        .expect("request");
    app.send_bytes(request).await
}

/// What the app's storage holds: every file in its receipts directory
/// (staging files included), or every object and unfinished multipart
/// upload in its bucket.
pub(crate) async fn files(app: &TestApp) -> Vec<String> {
    if app.storage.local_dir().is_none() {
        return crate::receipts_s3::everything_in(&app.storage).await;
    }
    let mut names: Vec<String> = std::fs::read_dir(app.receipts_dir())
        .expect("receipts dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn name_of(url: &str) -> String {
    url.rsplit('/').next().expect("name").to_owned()
}

pub(crate) async fn new_tx(app: &TestApp, account: &str, description: &str) -> String {
    app.tx(
        json!({"account_id": account, "type": "DEBIT", "amount": 12.5,
                  "description": description, "date": "2026-11-20"}),
    )
    .await["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// The row's receipt URL, as reading it by id gives it; the list (which
/// reads rows on its own path) must give the same row.
async fn receipt_url_of(app: &TestApp, id: &str) -> Value {
    let response = app.get(&format!("/v1/transactions/{id}")).await;
    let read = response.ok(200)["transaction"].clone();
    let day = read["date"].as_str().expect("date");
    let listed = app
        .all_pages(&format!("view=ledger&from={day}&to={day}"), 100)
        .await;
    let item = listed.iter().find(|row| row["id"] == id).expect("listed");
    assert_eq!(item, &read, "the list shows the row as reading it does");
    read["receipt_url"].clone()
}

async fn uploads_every_type_and_serves_it_publicly(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let mut stored = Vec::new();
    for (fixture_name, content_type) in TYPES {
        let id = new_tx(&app, &account, fixture_name).await;
        let url = attach(&app, &id, fixture_name).await;
        let path = url_path(&url);
        assert_eq!(receipt_url_of(&app, &id).await, json!(url));
        let (status, headers, bytes) = fetch(&app, &path).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(bytes, fixture(fixture_name), "{path}");
        assert_eq!(headers["content-type"], content_type);
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(
            headers["cache-control"]
                .to_str()
                .unwrap()
                .starts_with("private")
        );
        // HEAD answers like GET, without the body.
        let head = Request::builder()
            .method(Method::HEAD)
            .uri(&path)
            .body(Body::empty())
            .unwrap();
        let (status, headers, bytes) = app.send_bytes(head).await;
        assert_eq!((status, bytes.len()), (200, 0));
        assert_eq!(headers["content-type"], content_type);
        stored.push(name_of(&url));
        if app.storage.local_dir().is_some() {
            let on_disk = std::fs::read(app.receipts_dir().join(name_of(&url))).unwrap();
            assert_eq!(on_disk, fixture(fixture_name));
        }
    }
    stored.sort();
    assert_eq!(
        files(&app).await,
        stored,
        "one file per receipt, nothing else"
    );
}

/// The name and the declared type of the upload mean nothing: the bytes do.
async fn the_type_comes_from_the_bytes(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Mercado").await;
    let png = fixture("receipt.png");
    let response = upload(
        &app,
        &id,
        &[part("file", "nota.pdf", "application/pdf", &png)],
    )
    .await;
    let url = response.ok(200)["receipt_url"].as_str().unwrap().to_owned();
    assert!(url.ends_with(".png"), "{url}");
    let (_, headers, _) = fetch(&app, &url_path(&url)).await;
    assert_eq!(headers["content-type"], "image/png");

    let text = fixture("not-really.jpg");
    let declared_jpeg = part("file", "not-really.jpg", "image/jpeg", &text);
    upload(&app, &id, &[declared_jpeg]).await.invalid(&["file"]);
    // The refused upload left the earlier receipt and no stray file.
    assert_eq!(receipt_url_of(&app, &id).await, json!(url));
    assert_eq!(files(&app).await, [name_of(&url)]);
}

async fn replacing_a_receipt_removes_the_old_file(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Farmácia").await;
    let first = attach(&app, &id, "receipt.jpg").await;
    assert_eq!(files(&app).await, [name_of(&first)]);
    let second = attach(&app, &id, "receipt.pdf").await;
    assert_ne!(first, second);
    assert_eq!(files(&app).await, [name_of(&second)]);
    assert_eq!(receipt_url_of(&app, &id).await, json!(second));
    let (status, headers, _) = fetch(&app, &url_path(&first)).await;
    assert_eq!(status, 404);
    assert_eq!(headers["content-type"], "application/problem+json");
    assert_eq!(fetch(&app, &url_path(&second)).await.0, 200);
}

async fn deleting_a_receipt(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Padaria").await;
    let url = attach(&app, &id, "receipt.webp").await;
    let response = app.delete(&receipt_path(&id)).await;
    assert_eq!(
        response.ok(200),
        &json!({"transaction_id": id, "receipt_url": null})
    );
    assert!(files(&app).await.is_empty());
    assert_eq!(receipt_url_of(&app, &id).await, Value::Null);
    app.call(Method::GET, &url_path(&url), None, None)
        .await
        .problem(404, "not_found");
    // Removing a receipt that is not there answers the same.
    let again = app.delete(&receipt_path(&id)).await;
    assert_eq!(
        again.ok(200),
        &json!({"transaction_id": id, "receipt_url": null})
    );
    // The row itself is untouched.
    app.get(&format!("/v1/transactions/{id}")).await.ok(200);

    app.delete(&receipt_path(ZERO_ID))
        .await
        .problem(404, "not_found");
    app.delete(&receipt_path("not-a-uuid"))
        .await
        .invalid(&["id"]);
    app.delete(&receipt_path(&format!("mocked-installment:{ZERO_ID}:2")))
        .await
        .invalid(&["id"]);
}

async fn refuses_what_is_not_one_accepted_file(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Posto").await;
    let text = fixture("not-really.jpg");
    let png = fixture("receipt.png");

    let renamed = upload(&app, &id, &[file_part("not-really.jpg", &text)]).await;
    renamed.invalid(&["file"]);
    assert!(
        renamed.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("JPEG, PNG, PDF, HEIC or WebP")
    );
    let empty = upload(&app, &id, &[file_part("empty.jpg", b"")]).await;
    empty.invalid(&["file"]);
    assert!(empty.body["detail"].as_str().unwrap().contains("empty"));
    // A form without the field.
    upload(&app, &id, &[]).await.invalid(&["file"]);
    // Any other field is named.
    upload(
        &app,
        &id,
        &[part("attachment", "receipt.png", "image/png", &png)],
    )
    .await
    .invalid(&["attachment"]);
    upload(
        &app,
        &id,
        &[file_part("a.png", &png), file_part("b.png", &png)],
    )
    .await
    .invalid(&["file"]);
    // A truncated form: no closing boundary.
    let mut cut = form(&[file_part("receipt.png", &png)]);
    cut.truncate(cut.len() - BOUNDARY.len() - 8);
    app.send(upload_request(&receipt_path(&id), &app.key, cut))
        .await
        .invalid(&["file"]);
    // Not a multipart form.
    let json_body = app
        .call(
            Method::PUT,
            &receipt_path(&id),
            Some(&app.key),
            Some(json!({"file": "x"})),
        )
        .await;
    json_body.problem(415, "unsupported_media_type");
    let no_type = put(&receipt_path(&id), Some(&app.key), None, png.clone());
    app.send(no_type)
        .await
        .problem(415, "unsupported_media_type");
    // Multipart without a boundary.
    let body = form(&[file_part("receipt.png", &png)]);
    let no_boundary = put(
        &receipt_path(&id),
        Some(&app.key),
        Some("multipart/form-data"),
        body,
    );
    app.send(no_boundary).await.invalid(&["file"]);

    assert_eq!(receipt_url_of(&app, &id).await, Value::Null);
    assert!(
        files(&app).await.is_empty(),
        "no temporary file is left behind"
    );
}

/// A JPEG header followed by `size - 3` bytes of padding.
fn jpeg_of_size(size: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; size];
    bytes[..3].copy_from_slice(&[0xFF, 0xD8, 0xFF]);
    bytes
}

async fn refuses_files_over_ten_megabytes(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Hotel").await;

    // Exactly at the limit is accepted.
    let at_limit = jpeg_of_size(MAX_BYTES);
    let url = upload(&app, &id, &[file_part("big.jpg", &at_limit)])
        .await
        .ok(200)["receipt_url"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, bytes) = fetch(&app, &url_path(&url)).await;
    assert_eq!((status, bytes.len()), (200, MAX_BYTES));
    assert_eq!(bytes, at_limit);

    // One byte more is refused while streaming (no Content-Length is sent).
    let over = jpeg_of_size(MAX_BYTES + 1);
    let response = upload(&app, &id, &[file_part("bigger.jpg", &over)]).await;
    response.invalid(&["file"]);
    assert!(response.body["detail"].as_str().unwrap().contains("10 MB"));

    // A declared length clearly over the limit is refused before the body
    // is read: this body is a small valid form.
    let png = fixture("receipt.png");
    let mut request = upload_request(
        &receipt_path(&id),
        &app.key,
        form(&[file_part("receipt.png", &png)]),
    );
    request
        .headers_mut()
        .insert("content-length", (12 * 1024 * 1024).into());
    app.send(request).await.invalid(&["file"]);

    // The first receipt stays; nothing else was kept.
    assert_eq!(receipt_url_of(&app, &id).await, json!(url));
    assert_eq!(files(&app).await, [name_of(&url)]);
}

async fn receipts_only_for_the_callers_stored_rows(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Cinema").await;
    let png = fixture("receipt.png");
    let parts = [file_part("receipt.png", &png)];

    upload(&app, ZERO_ID, &parts)
        .await
        .problem(404, "not_found");
    upload(&app, "not-a-uuid", &parts).await.invalid(&["id"]);
    // A projected entry must be stored first.
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 50, "description": "Academia",
                   "date": "2026-12-01", "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await;
    let handle = rule.ok(201)["next_occurrence"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(handle.starts_with("mocked-recurrence:"), "{handle}");
    let projected = upload(&app, &handle, &parts).await;
    projected.invalid(&["id"]);
    assert!(
        projected.body["detail"]
            .as_str()
            .unwrap()
            .contains("store the entry first")
    );

    // Another user's row is exactly a missing one.
    let (_, other_key) = app.new_user().await;
    let foreign = upload_as(&app, &other_key, &id, &parts).await;
    foreign.problem(404, "not_found");
    let missing = upload_as(&app, &other_key, ZERO_ID, &parts).await;
    assert_eq!(foreign.body, missing.body);
    app.call(Method::DELETE, &receipt_path(&id), Some(&other_key), None)
        .await
        .problem(404, "not_found");

    // Writing needs the write scope; a key is needed at all.
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    upload_as(&app, &read_only, &id, &parts)
        .await
        .problem(403, "insufficient_scope");
    app.call(Method::DELETE, &receipt_path(&id), Some(&read_only), None)
        .await
        .problem(403, "insufficient_scope");
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let anonymous = put(&receipt_path(&id), None, Some(&content_type), form(&parts));
    app.send(anonymous).await.problem(401, "unauthorized");

    assert_eq!(receipt_url_of(&app, &id).await, Value::Null);
    assert!(files(&app).await.is_empty());
}

async fn deleting_rows_and_accounts_removes_their_files(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let kept_account = app.bank("Outra").await;

    // A single row.
    let single = new_tx(&app, &account, "Uber").await;
    let single_url = attach(&app, &single, "receipt.jpg").await;
    app.delete(&format!("/v1/transactions/{single}"))
        .await
        .ok(200);
    assert!(files(&app).await.is_empty());
    assert_eq!(fetch(&app, &url_path(&single_url)).await.0, 404);

    // An account with two receipts; another account's receipt stays.
    let a = new_tx(&app, &account, "A").await;
    let b = new_tx(&app, &account, "B").await;
    let other = new_tx(&app, &kept_account, "C").await;
    attach(&app, &a, "receipt.png").await;
    attach(&app, &b, "receipt.heic").await;
    let other_url = attach(&app, &other, "receipt.pdf").await;
    assert_eq!(files(&app).await.len(), 3);
    let deleted = app.delete(&format!("/v1/accounts/{account}")).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert_eq!(files(&app).await, [name_of(&other_url)]);
    assert_eq!(fetch(&app, &url_path(&other_url)).await.0, 200);
}

async fn bulk_deletes_remove_their_files(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let gone = new_tx(&app, &account, "Feira").await;
    let kept = new_tx(&app, &account, "Feira").await;
    attach(&app, &gone, "receipt.jpg").await;
    let kept_url = attach(&app, &kept, "receipt.png").await;
    let response = app
        .post(
            "/v1/transactions/bulk",
            json!({"ids": [gone], "delete": true, "expected_count": 1}),
        )
        .await;
    assert_eq!(response.ok(200)["deleted_count"], 1);
    assert_eq!(files(&app).await, [name_of(&kept_url)]);
}

async fn deleting_series_rows_removes_their_files(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let created = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 400, "description": "Cama",
                   "date": "2026-12-07", "installments": {"count": 4}}),
        )
        .await;
    let first = created.ok(201)["transaction"].clone();
    let first_id = first["id"].as_str().unwrap().to_owned();
    let plan = first["installment"]["purchase_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Store installment 2 so it can hold a receipt.
    let stored = app
        .patch(
            &format!("/v1/transactions/mocked-installment:{plan}:2"),
            json!({"scope": "this", "notes": "entregue"}),
        )
        .await;
    let second_id = stored.ok(200)["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let first_url = attach(&app, &first_id, "receipt.jpg").await;
    let second_url = attach(&app, &second_id, "receipt.png").await;
    assert_eq!(files(&app).await.len(), 2);

    // scope=future from installment 2 deletes it (and later ones).
    app.delete(&format!("/v1/transactions/{second_id}?scope=future"))
        .await
        .ok(200);
    assert_eq!(files(&app).await, [name_of(&first_url)]);
    assert_eq!(fetch(&app, &url_path(&second_url)).await.0, 404);

    // scope=all deletes the purchase with its remaining row.
    app.delete(&format!("/v1/transactions/{first_id}?scope=all"))
        .await
        .ok(200);
    assert!(files(&app).await.is_empty());

    // A recurrence: a stored occurrence with a receipt goes with the rule.
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 90, "description": "Internet",
                   "date": "2026-12-10", "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await;
    let rule_id = rule.ok(201)["recurrence_id"].as_str().unwrap().to_owned();
    let occurrence = app
        .patch(
            &format!("/v1/transactions/mocked-recurrence:{rule_id}:2027-01-10"),
            json!({"scope": "this", "amount": 95}),
        )
        .await;
    let occurrence_id = occurrence.ok(200)["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    attach(&app, &occurrence_id, "receipt.webp").await;
    app.delete(&format!(
        "/v1/transactions/mocked-recurrence:{rule_id}:2026-12-10?scope=all"
    ))
    .await
    .ok(200);
    app.get(&format!("/v1/transactions/{occurrence_id}"))
        .await
        .problem(404, "not_found");
    assert!(files(&app).await.is_empty());
}

async fn only_stored_names_are_served(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Livro").await;
    let url = attach(&app, &id, "receipt.png").await;
    let name = name_of(&url);
    let stem = name.trim_end_matches(".png");
    // Files that exist but are not receipts: a temporary upload, and one
    // beside the receipts directory.
    let temp = format!(".upload-{stem}.tmp");
    std::fs::write(app.receipts_dir().join(&temp), b"secret").unwrap();
    std::fs::write(app.receipts_dir().join(format!("{stem}.txt")), b"secret").unwrap();
    std::fs::write(app.receipts_dir().join(format!("{name}#1")), b"secret").unwrap();
    for path in [
        "/receipts/".to_owned(),
        "/receipts/x".to_owned(),
        format!("/receipts/{temp}"),
        format!("/receipts/{name}%231"),
        format!("/receipts/{stem}.txt"),
        format!("/receipts/{stem}.jpg"),
        format!("/receipts/{}.png", stem.to_uppercase()),
        format!("/receipts/{stem}"),
        format!("/receipts/{stem}.png.png"),
        format!("/receipts/{}.png", &stem[1..]),
        format!("/receipts/{stem}0.png"),
        "/receipts/ffffffffffffffffffffffffffffffff.png".to_owned(),
        "/receipts/..%2f..%2fCargo.toml".to_owned(),
        "/receipts/..%2F..%2FCargo.toml".to_owned(),
        format!("/receipts/..%2F{name}"),
        format!("/receipts/%2e%2e%2f{name}"),
        "/receipts/%2e%2e".to_owned(),
        format!("/receipts/{stem}%00.png"),
        format!("/receipts/{stem}.png%2f"),
        "/receipts/../Cargo.toml".to_owned(),
        format!("/receipts/{name}/x"),
    ] {
        let response = app.call(Method::GET, &path, None, None).await;
        response.problem(404, "not_found");
    }
    assert_eq!(fetch(&app, &format!("/receipts/{name}")).await.0, 200);
}

/// A GET of `path` with extra headers.
async fn fetch_with(
    app: &TestApp,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, axum::http::HeaderMap, Vec<u8>) {
    let mut builder = Request::builder().uri(path);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    app.send_bytes(builder.body(Body::empty()).expect("request"))
        .await
}

async fn ranges_and_conditional_requests(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Consulta").await;
    let pdf = fixture("receipt.pdf");
    let len = pdf.len();
    assert!(len > 20, "the fixture is long enough to cut");
    let path = url_path(&attach(&app, &id, "receipt.pdf").await);

    let (status, headers, bytes) = fetch(&app, &path).await;
    assert_eq!(status, 200);
    assert_eq!(bytes, pdf);
    assert_eq!(headers["accept-ranges"], "bytes");
    assert_eq!(headers["content-length"], len.to_string().as_str());
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let modified = headers["last-modified"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

    // One range, in each of its three forms.
    for (range, from, to) in [
        ("bytes=0-9".to_owned(), 0, 10),
        (format!("bytes={}-", len - 7), len - 7, len),
        ("bytes=-5".to_owned(), len - 5, len),
        (format!("bytes=10-{}", len + 100), 10, len),
        (format!("bytes=-{}", len + 100), 0, len),
    ] {
        let (status, headers, bytes) = fetch_with(&app, &path, &[("range", &range)]).await;
        assert_eq!(status, 206, "{range}");
        assert_eq!(bytes, &pdf[from..to], "{range}");
        assert_eq!(
            headers["content-range"],
            format!("bytes {from}-{}/{len}", to - 1).as_str(),
            "{range}"
        );
        assert_eq!(headers["content-length"], (to - from).to_string().as_str());
        assert_eq!(headers["content-type"], "application/pdf");
        assert_eq!(headers["x-content-type-options"], "nosniff");
    }
    // Outside the file: 416 with the length.
    for range in [
        format!("bytes={len}-"),
        format!("bytes={}-{}", len + 5, len + 9),
        "bytes=-0".to_owned(),
    ] {
        let (status, headers, _) = fetch_with(&app, &path, &[("range", &range)]).await;
        assert_eq!(status, 416, "{range}");
        assert_eq!(headers["content-range"], format!("bytes */{len}").as_str());
    }
    // Several ranges, another unit, or nonsense: the whole file.
    for range in ["bytes=0-1,5-6", "items=0-1", "bytes=9-2"] {
        let (status, _, bytes) = fetch_with(&app, &path, &[("range", range)]).await;
        assert_eq!((status, bytes.len()), (200, len), "{range}");
    }

    // Conditional requests.
    let (status, headers, bytes) = fetch_with(&app, &path, &[("if-none-match", &etag)]).await;
    assert_eq!((status, bytes.len()), (304, 0));
    assert_eq!(
        headers["cache-control"],
        "private, max-age=31536000, immutable"
    );
    let weak = format!("\"other\", W/{etag}");
    assert_eq!(
        fetch_with(&app, &path, &[("if-none-match", &weak)]).await.0,
        304
    );
    let other = fetch_with(&app, &path, &[("if-none-match", "\"other\"")]).await;
    assert_eq!((other.0, other.2.len()), (200, len));
    let (status, _, _) = fetch_with(&app, &path, &[("if-modified-since", &modified)]).await;
    assert_eq!(status, 304);
    let long_ago = "Mon, 01 Jan 2001 00:00:00 GMT";
    let (status, _, bytes) = fetch_with(&app, &path, &[("if-modified-since", long_ago)]).await;
    assert_eq!((status, bytes.len()), (200, len));
    // Unknown names stay a 404 problem, ranged or not.
    let missing = "/receipts/ffffffffffffffffffffffffffffffff.pdf";
    let (status, headers, _) = fetch_with(&app, missing, &[("range", "bytes=0-1")]).await;
    assert_eq!(status, 404);
    assert_eq!(headers["content-type"], "application/problem+json");
    let (status, _, _) = fetch_with(&app, missing, &[("if-none-match", &etag)]).await;
    assert_eq!(status, 404);
}

/// Makes every write of a receipt name fail in the database, as a lost
/// connection or a full disk would.
async fn refuse_receipt_writes(app: &TestApp) {
    use sqlx::Connection;
    if app.url.starts_with("sqlite") {
        let mut db = sqlx::SqliteConnection::connect(&app.url).await.unwrap();
        sqlx::query(
            "CREATE TRIGGER refuse_receipts BEFORE UPDATE OF receipt_name ON transactions \
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
        )
        .execute(&mut db)
        .await
        .unwrap();
    } else {
        let mut db = sqlx::PgConnection::connect(&app.url).await.unwrap();
        sqlx::query(
            "CREATE FUNCTION refuse_receipts() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$",
        )
        .execute(&mut db)
        .await
        .unwrap();
        sqlx::query(
            "CREATE TRIGGER refuse_receipts BEFORE UPDATE OF receipt_name ON transactions \
             FOR EACH ROW EXECUTE FUNCTION refuse_receipts()",
        )
        .execute(&mut db)
        .await
        .unwrap();
    }
}

async fn a_failed_database_write_leaves_no_file(at: At) {
    let app = at.start().await;
    let account = app.bank("Conta").await;
    let id = new_tx(&app, &account, "Oficina").await;
    refuse_receipt_writes(&app).await;
    let png = fixture("receipt.png");
    let response = upload(&app, &id, &[file_part("receipt.png", &png)]).await;
    assert_eq!(response.status, 500, "{}", response.body);
    assert_eq!(receipt_url_of(&app, &id).await, Value::Null);
    // The local file goes before the answer; an object in a bucket is
    // deleted in the background just after.
    for _ in 0..50 {
        if files(&app).await.is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("left behind: {:?}", files(&app).await);
}

async fn receipt_routes_are_documented(backend: Backend) {
    let app = TestApp::start(backend).await;
    let doc = app.call(Method::GET, "/v1/openapi.json", None, None).await;
    let paths = doc.ok(200)["paths"].clone();
    let put = &paths["/v1/transactions/{id}/receipt"]["put"];
    let form = &put["requestBody"]["content"]["multipart/form-data"]["schema"];
    assert_eq!(form["properties"]["file"]["format"], "binary", "{put}");
    assert!(put["responses"]["200"].is_object() && put["responses"]["415"].is_object());
    assert!(paths["/v1/transactions/{id}/receipt"]["delete"].is_object());
    let get = &paths["/receipts/{name}"]["get"];
    // No key: clients send none to the public file URL.
    assert_eq!(get["security"], json!([]), "{get}");
    // Declared as bytes, which client generators turn into a download;
    // the real type comes in Content-Type, and the document names each.
    for status in ["200", "206"] {
        let content = &get["responses"][status]["content"];
        let schema = &content["application/octet-stream"]["schema"];
        assert_eq!(schema["$ref"], "#/components/schemas/ReceiptFile", "{get}");
        assert_eq!(content.as_object().map(|c| c.len()), Some(1), "{get}");
    }
    let described = get["responses"]["200"]["description"]
        .as_str()
        .unwrap_or("");
    for content_type in TYPES.map(|(_, t)| t) {
        assert!(described.contains(content_type), "{get}");
    }
    assert!(get["responses"]["304"].is_object(), "{get}");
}

on_every_storage!(
    uploads_every_type_and_serves_it_publicly,
    the_type_comes_from_the_bytes,
    replacing_a_receipt_removes_the_old_file,
    deleting_a_receipt,
    refuses_what_is_not_one_accepted_file,
    refuses_files_over_ten_megabytes,
    receipts_only_for_the_callers_stored_rows,
    deleting_rows_and_accounts_removes_their_files,
    bulk_deletes_remove_their_files,
    deleting_series_rows_removes_their_files,
    only_stored_names_are_served,
    ranges_and_conditional_requests,
    a_failed_database_write_leaves_no_file,
);

mod documented {
    use super::receipt_routes_are_documented;
    use crate::on_both_backends;

    on_both_backends!(receipt_routes_are_documented);
}
