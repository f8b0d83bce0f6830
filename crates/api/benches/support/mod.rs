//! What the benchmarks share: the demo "heavy" user at a given number of
//! stored rows in a fresh SQLite file, behind the whole router with a
//! read key and rate limits off, and one criterion configuration.

use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode};
use criterion::BenchmarkGroup;
use criterion::measurement::Measurement;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use cofre_api::rate_limit::MemoryLimiter;
use cofre_api::{ApiConfig, AppState, Services, admin};
use cofre_demo::{self as demo, DEFAULT_SEED, Profile, Spec};
use cofre_domain::account::AccountType;
use cofre_domain::auth::Scope;
use cofre_domain::time::Clock;
use cofre_domain::{AccountId, UserId};
use cofre_store::{SqliteStore, Store};

/// Stored rows of the three datasets.
const SIZES: [usize; 3] = [10_000, 50_000, 100_000];

pub struct Heavy {
    pub store: Arc<dyn Store>,
    pub user: UserId,
    pub app: axum::Router,
    /// The `authorization` header of a key with both scopes.
    pub auth: String,
}

/// The heavy profile scaled to `rows` stored rows, in `dir/<name>-<rows>.db`.
pub async fn heavy(dir: &Path, name: &str, rows: usize, clock: &Clock) -> Heavy {
    let (now, today) = (clock.now(), clock.today());
    let url = format!(
        "sqlite://{}",
        dir.join(format!("{name}-{rows}.db")).display()
    );
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::connect(&url, cofre_store::DEFAULT_CACHE_BYTES)
            .await
            .expect("open SQLite"),
    );
    let user = store
        .create_user(Some("Bench"), now)
        .await
        .expect("create user")
        .id;
    let spec = Spec {
        rows,
        ..Profile::Heavy.spec()
    };
    let started = Instant::now();
    let summary = demo::fill(store.as_ref(), user, &spec, DEFAULT_SEED, now, today)
        .await
        .expect("demo data");
    eprintln!(
        "dataset: {} stored rows, {} cards, {} bill payments, {} rules, {} plans written in {:.1}s",
        summary.rows,
        summary.cards,
        summary.bill_payments,
        summary.rules,
        summary.plans,
        started.elapsed().as_secs_f64()
    );
    let key = admin::issue_key(
        store.as_ref(),
        user,
        vec![Scope::Read, Scope::Write],
        None,
        now,
    )
    .await
    .expect("api key");
    let state = AppState::new(Services {
        store: store.clone(),
        clock: clock.clone(),
        limiter: Arc::new(MemoryLimiter::new()),
        config: Arc::new(ApiConfig {
            rate_limit_per_minute: 0,
            rate_limit_per_day: 0,
            // The benchmarks measure the work of answering: with the read
            // cache on, every repeat would be answered from memory.
            read_cache_bytes: 0,
            ..ApiConfig::default()
        }),
    });
    Heavy {
        store,
        user,
        app: cofre_api::router(state),
        auth: format!("Bearer {}", key.token),
    }
}

/// What every bench runs on: a runtime, a clock pinned to one instant (so
/// every dataset and request share one "today"), and a temporary directory
/// for the datasets' files.
pub struct Bench {
    pub rt: tokio::runtime::Runtime,
    pub clock: Clock,
    dir: tempfile::TempDir,
}

impl Bench {
    pub fn new() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let zone = TimeZone::get("America/Sao_Paulo").expect("time zone");
        Self {
            rt,
            clock: Clock::new(Some(Timestamp::now()), zone),
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// One dataset of each of [`SIZES`], made by `make(dir, rows, clock)`.
    pub fn datasets<D>(&self, make: impl AsyncFn(&Path, usize, &Clock) -> D) -> Vec<D> {
        SIZES
            .iter()
            .map(|&rows| self.rt.block_on(make(self.dir.path(), rows, &self.clock)))
            .collect()
    }
}

/// One request through `app` with the `authorization` header `auth`, as a
/// client sends it but without a socket: its status and body.
pub async fn send(
    app: &axum::Router,
    auth: &str,
    method: Method,
    uri: &str,
    body: Option<String>,
) -> (StatusCode, Bytes) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", auth);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    let request = request
        .body(body.map_or_else(Body::empty, Body::from))
        .expect("request");
    let response = app.clone().oneshot(request).await.expect("response");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, bytes)
}

pub fn configure<M: Measurement>(group: &mut BenchmarkGroup<'_, M>) {
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
}

/// The user's busiest credit card: the first one the demo creates.
// Each bench compiles this module on its own; `merged_view` has no cards.
#[allow(dead_code)]
pub async fn first_card(store: &dyn Store, user: UserId) -> AccountId {
    store
        .list_accounts(user)
        .await
        .expect("accounts")
        .into_iter()
        .find(|view| view.account.state.account_type == AccountType::Credit)
        .expect("a card")
        .account
        .id
}

/// A purchase of 42.90 on `card`, dated `today`, posted through `app`: the
/// write the after-write benchmarks read behind. Gives the new row's id.
// Each bench compiles this module on its own; not all of them write.
#[allow(dead_code)]
pub async fn add_purchase(app: &axum::Router, auth: &str, card: AccountId, today: &str) -> String {
    let body = serde_json::json!({
        "account_id": card.to_string(),
        "type": "DEBIT",
        "amount": 42.9,
        "description": "Padaria",
        "date": today,
    });
    let (status, answer) = send(
        app,
        auth,
        Method::POST,
        "/v1/transactions",
        Some(body.to_string()),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let answer: serde_json::Value = serde_json::from_slice(&answer).expect("JSON");
    answer["transaction"]["id"]
        .as_str()
        .expect("the new row's id")
        .to_owned()
}
