//! `TestApp`: a fresh database (SQLite temp file, or a new PostgreSQL
//! database dropped afterwards), the real router, and typed request helpers.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request};
use serde_json::Value;
use sqlx::Connection;
use std::sync::Arc;
use tower::ServiceExt;

use cofre_api::admin::issue_key;
use cofre_api::rate_limit::{Limiter, MemoryLimiter};
use cofre_api::{ApiConfig, AppState, Services};
use cofre_domain::UserId;
use cofre_domain::auth::Scope;
use cofre_domain::time::Clock;
use cofre_store::Store;

/// Today in the tests: 2026-11-22 in São Paulo.
pub const NOW: &str = "2026-11-22T15:00:00Z";
pub const TODAY: &str = "2026-11-22";

#[derive(Clone, Debug)]
pub enum Backend {
    Sqlite,
    Postgres(String),
}

impl Backend {
    /// The PostgreSQL backend when `COFRE_TEST_POSTGRES_URL` is set. Without
    /// it the test is skipped with a notice, except under `CI=true`, where
    /// skipping is a failure.
    pub fn postgres() -> Option<Backend> {
        server_url("COFRE_TEST_POSTGRES_URL", "PostgreSQL").map(Backend::Postgres)
    }
}

/// The URL of a server the tests need, from the variable `var` (the repo's
/// scripts set it); without it the test is skipped with a notice, except
/// under `CI=true`, where skipping is a failure.
pub fn server_url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but {var} is not set: the {what} tests must run")
        }
        _ => {
            eprintln!("SKIPPED ({what}): set {var} (scripts/test sets it) to run this test");
            None
        }
    }
}

/// Runs each named scenario `async fn name(backend: Backend)` once per
/// backend, as `<module>::sqlite::name` and `<module>::postgres::name`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::Backend::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(backend) = $crate::support::Backend::postgres() {
                        super::$name(backend).await
                    }
                }
            )*
        }
    };
}

/// `Shared`: another app's database, which that app removes.
enum Database {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
    Shared,
}

pub struct TestApp {
    pub router: Router,
    pub store: Arc<dyn Store>,
    /// The database URL, for tests that reach into the database itself.
    pub url: String,
    /// A read,write key of the first user.
    pub key: String,
    pub user: UserId,
    database: Database,
    /// This app's own receipts directory, removed with it.
    receipts: tempfile::TempDir,
    /// Where the app keeps receipt files: that directory, or the bucket
    /// the caller's configuration named.
    pub storage: cofre_api::receipts::ReceiptStorage,
    state: AppState,
}

pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    /// The body as sent, to check the exact digits of amounts (`body`
    /// reads JSON numbers as f64).
    pub text: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a problem document with this status and code.
    #[track_caller]
    pub fn problem(&self, status: u16, code: &str) -> &Self {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        assert_eq!(self.body["code"], code, "body: {}", self.body);
        assert_eq!(self.body["status"], status);
        assert!(self.body["title"].is_string() && self.body["detail"].is_string());
        assert!(
            self.body["type"]
                .as_str()
                .is_some_and(|t| t.ends_with(code))
        );
        self
    }

    /// Asserts a 400 validation error naming exactly these fields.
    #[track_caller]
    pub fn invalid(&self, fields: &[&str]) -> &Self {
        self.problem(400, "validation_error");
        let named: Vec<&str> = self.body["errors"]
            .as_array()
            .expect("errors array")
            .iter()
            .map(|e| e["field"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(named, fields, "body: {}", self.body);
        self
    }

    #[track_caller]
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "body: {}", self.body);
        &self.body
    }
}

impl TestApp {
    pub async fn start(backend: Backend) -> TestApp {
        Self::start_with(backend, ApiConfig::default()).await
    }

    pub async fn start_with(backend: Backend, config: ApiConfig) -> TestApp {
        Self::start_at(backend, config, NOW).await
    }

    /// An app whose clock is pinned to `now` (an RFC 3339 instant) instead
    /// of [`NOW`].
    pub async fn start_at(backend: Backend, config: ApiConfig, now: &str) -> TestApp {
        Self::start_limited(backend, config, now, Arc::new(MemoryLimiter::new())).await
    }

    /// An app counting its rate limits with `limiter`.
    pub async fn start_limited(
        backend: Backend,
        mut config: ApiConfig,
        now: &str,
        limiter: Arc<dyn Limiter>,
    ) -> TestApp {
        let receipts = tempfile::tempdir().expect("receipts dir");
        if config.receipts.is_memory() {
            config.receipts =
                cofre_api::receipts::ReceiptStorage::local(receipts.path()).expect("receipts");
        }
        let storage = config.receipts.clone();
        let (url, database) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("test.db").display());
                (url, Database::Sqlite(dir))
            }
            Backend::Postgres(admin_url) => {
                let name = format!("cofre_test_{}", uuid_simple());
                let mut admin = sqlx::PgConnection::connect(&admin_url)
                    .await
                    .expect("connect to COFRE_TEST_POSTGRES_URL");
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin)
                    .await
                    .expect("create test database");
                let url = with_database(&admin_url, &name);
                (url, Database::Postgres { admin_url, name })
            }
        };
        let store = cofre_store::connect(&url).await.expect("open store");
        let database_url = url.clone();
        let now: jiff::Timestamp = now.parse().expect("now");
        let zone = jiff::tz::TimeZone::get("America/Sao_Paulo").expect("zone");
        let state = AppState::new(Services {
            store: store.clone(),
            clock: Clock::new(Some(now), zone),
            limiter,
            config: Arc::new(config),
        });
        let router = cofre_api::router(state.clone());
        let mut app = TestApp {
            router,
            store,
            url: database_url,
            key: String::new(),
            user: UserId::new(),
            database,
            receipts,
            storage,
            state,
        };
        let (user, key) = app.new_user().await;
        app.user = user;
        app.key = key;
        app
    }

    /// A new user with a read,write key.
    pub async fn new_user(&self) -> (UserId, String) {
        let now = NOW.parse().expect("NOW");
        let user = self
            .store
            .create_user(Some("Test"), now)
            .await
            .expect("user");
        let key = self.key_for(user.id, &[Scope::Read, Scope::Write]).await;
        (user.id, key)
    }

    pub async fn key_for(&self, user: UserId, scopes: &[Scope]) -> String {
        let now = NOW.parse().expect("NOW");
        issue_key(self.store.as_ref(), user, scopes.to_vec(), None, now)
            .await
            .expect("key")
            .token
    }

    pub async fn send(&self, request: Request<Body>) -> Response {
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(text.clone()))
        };
        Response {
            status,
            headers,
            body,
            text,
        }
    }

    /// A request with `key` (none when `None`) and an optional JSON body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Response {
        let mut builder = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        let request = match body {
            Some(json) => builder
                .header("content-type", "application/json")
                .body(Body::from(json.to_string())),
            None => builder.body(Body::empty()),
        }
        .expect("request");
        self.send(request).await
    }

    /// Status and raw body text of a request with the default key.
    pub async fn raw(&self, method: Method, path: &str, body: Option<Value>) -> (u16, String) {
        let response = self.call(method, path, Some(&self.key), body).await;
        (response.status, response.text)
    }

    pub async fn get(&self, path: &str) -> Response {
        self.call(Method::GET, path, Some(&self.key), None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.call(Method::POST, path, Some(&self.key), Some(body))
            .await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Response {
        self.call(Method::PATCH, path, Some(&self.key), Some(body))
            .await
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.call(Method::DELETE, path, Some(&self.key), None).await
    }

    /// Every entry of a list query, following `next_cursor` page by page,
    /// checking that each page with more after it is full.
    pub async fn all_pages(&self, query: &str, limit: usize) -> Vec<Value> {
        pages_of(query, limit, |url| async move { self.get(&url).await }).await
    }

    /// A bank account "Conta" with 1,000.00 and a card "Nubank" (due on the
    /// 10th, so it closes on the 3rd; limit 5,000.00) paid from it: their
    /// ids.
    pub async fn bank_and_card(&self) -> (String, String) {
        let bank = self
            .account(serde_json::json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
            .await;
        let card = self
            .account(
                serde_json::json!({"type": "CREDIT", "title": "Nubank", "credit_due_day": 10,
                "credit_limit": 5000, "pay_bill_from_account_id": bank}),
            )
            .await;
        (bank, card)
    }

    /// An account's balance (the sum of its POSTED rows), as the API says.
    pub async fn balance(&self, account: &str) -> f64 {
        let response = self.get(&format!("/v1/accounts/{account}")).await;
        response.ok(200)["balance"].as_f64().expect("balance")
    }

    /// Creates an account from `body` (201) and returns its id.
    pub async fn account(&self, body: Value) -> String {
        self.account_as(&self.key, body).await
    }

    /// Creates an account from `body` with `key`, another user's say
    /// (201), and returns its id.
    pub async fn account_as(&self, key: &str, body: Value) -> String {
        self.created_as(key, "/v1/accounts", body).await
    }

    /// POSTs `body` to `path` with `key`, another user's say, expecting
    /// 201, and returns the created resource's id.
    pub async fn created_as(&self, key: &str, path: &str, body: Value) -> String {
        let response = self.call(Method::POST, path, Some(key), Some(body)).await;
        response.ok(201)["id"].as_str().expect("id").to_owned()
    }

    /// Creates a bank account and returns its id.
    pub async fn bank(&self, title: &str) -> String {
        self.account(serde_json::json!({"type": "BANK", "title": title}))
            .await
    }

    /// Creates a tag (201) and returns its id.
    pub async fn tag(&self, title: &str, color_hex: &str) -> String {
        let body = serde_json::json!({"title": title, "color_hex": color_hex});
        let response = self.post("/v1/tags", body).await;
        response.ok(201)["id"].as_str().expect("id").to_owned()
    }

    /// Creates a category of the user's own (201) and returns its id.
    pub async fn category(&self, title: &str) -> String {
        let response = self
            .post("/v1/categories", serde_json::json!({"title": title}))
            .await;
        response.ok(201)["id"].as_str().expect("id").to_owned()
    }

    /// Creates a bank account and archives it; returns its id.
    pub async fn archived_bank(&self, title: &str) -> String {
        let id = self.bank(title).await;
        self.patch(
            &format!("/v1/accounts/{id}"),
            serde_json::json!({"archived": true}),
        )
        .await
        .ok(200);
        id
    }

    /// Creates a transaction (201) and returns it.
    pub async fn tx(&self, body: Value) -> Value {
        let response = self.post("/v1/transactions", body).await;
        response.ok(201)["transaction"].clone()
    }
}

impl TestApp {
    /// Where this app keeps receipt files.
    pub fn receipts_dir(&self) -> &std::path::Path {
        self.receipts.path()
    }

    /// Status, headers and raw bytes of a response (files are not JSON).
    pub async fn send_bytes(&self, request: Request<Body>) -> (u16, HeaderMap, Vec<u8>) {
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, headers, bytes.to_vec())
    }
}

impl TestApp {
    /// A second server on this app's database and receipt storage, with
    /// the same users and keys, counting its rate limits with `limiter`.
    /// Keep this app alive while it is used.
    pub fn server_with(&self, limiter: Arc<dyn Limiter>) -> TestApp {
        let state = AppState::new(Services {
            limiter,
            store: self.state.store.clone(),
            clock: self.state.clock.clone(),
            config: self.state.config.clone(),
        });
        TestApp {
            router: cofre_api::router(state.clone()),
            store: self.store.clone(),
            url: self.url.clone(),
            key: self.key.clone(),
            user: self.user,
            database: Database::Shared,
            receipts: tempfile::tempdir().expect("receipts dir"),
            storage: self.storage.clone(),
            state,
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Database::Postgres { admin_url, name } = &self.database {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            // Drop runs outside async; a helper thread does the cleanup.
            let done = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(async move {
                    if let Ok(mut admin) = sqlx::PgConnection::connect(&admin_url).await {
                        let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                        )))
                        .execute(&mut admin)
                        .await;
                    }
                });
            });
            let _ = done.join();
        }
    }
}

fn uuid_simple() -> String {
    cofre_domain::UserId::new().0.simple().to_string()
}

/// Replaces the database name of a PostgreSQL URL.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{name}?{q}"),
        None => format!("{host_part}/{name}"),
    }
}

/// Every entry of a list query, each page asked through `fetch` (a URL
/// in, the page out), checking that each page with more after it is full.
pub async fn pages_of<F, Fut>(query: &str, limit: usize, mut fetch: F) -> Vec<Value>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let mut url = format!("/v1/transactions?{query}&limit={limit}");
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let page = fetch(url).await;
        let body = page.ok(200);
        let data = body["data"].as_array().expect("data");
        assert!(data.len() <= limit);
        rows.extend(data.iter().cloned());
        if body["has_more"] == Value::Bool(true) {
            assert_eq!(data.len(), limit, "a page with more after it is full");
            cursor = Some(
                body["next_cursor"]
                    .as_str()
                    .expect("next_cursor")
                    .to_owned(),
            );
        } else {
            assert_eq!(body["next_cursor"], Value::Null);
            return rows;
        }
    }
    panic!("pagination did not end");
}

/// `base` with `changes` merged in (a `null` value is sent as `null`).
pub fn with(base: &Value, changes: Value) -> Value {
    let mut out = base.clone();
    for (key, value) in changes.as_object().unwrap() {
        out[key] = value.clone();
    }
    out
}

/// A connection holding the lock every write of `app`'s first user needs:
/// SQLite's write lock, or the user's row on PostgreSQL.
pub enum Holder {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

pub async fn hold_write_lock(app: &TestApp) -> Holder {
    if app.url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(&app.url)
            .await
            .expect("second connection");
        sqlx::raw_sql("BEGIN IMMEDIATE")
            .execute(&mut conn)
            .await
            .expect("take the write lock");
        Holder::Sqlite(conn)
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.url)
            .await
            .expect("second connection");
        sqlx::raw_sql("BEGIN")
            .execute(&mut conn)
            .await
            .expect("begin");
        sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
            .bind(app.user.to_string())
            .execute(&mut conn)
            .await
            .expect("lock the user's row");
        Holder::Postgres(conn)
    }
}

pub async fn release(holder: Holder) {
    let released = match holder {
        Holder::Sqlite(mut conn) => sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.map(drop),
        Holder::Postgres(mut conn) => sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.map(drop),
    };
    released.expect("release the lock");
}
