//! The request deadline: a request that cannot finish (here: a write
//! waiting on a lock another client holds) is cut off with a 503 problem
//! at `request_timeout`, leaves nothing half-written, and the server keeps
//! answering everything else meanwhile.

use serde_json::json;
use std::time::{Duration, Instant};

use cofre_api::ApiConfig;

use crate::on_both_backends;
use crate::support::{Backend, TestApp, hold_write_lock, release};

async fn a_stuck_request_is_cut_off_at_its_deadline(backend: Backend) {
    let config = ApiConfig {
        request_timeout: Duration::from_millis(400),
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let account = app.bank("Conta").await;
    let body = json!({
        "id": "5f0c9a52-3b8e-4c1e-9d55-0a4f3e6b7c10",
        "account_id": account, "type": "DEBIT", "amount": 12.34,
        "description": "Padaria", "date": "2026-11-20"
    });

    let lock = hold_write_lock(&app).await;
    let started = Instant::now();
    // Without a deadline the write waits on the lock (SQLite's busy
    // timeout is 10 s, PostgreSQL waits for ever): the outer timeout
    // turns that into a failure instead of a hung test.
    let stuck = tokio::time::timeout(
        Duration::from_secs(5),
        app.post("/v1/transactions", body.clone()),
    )
    .await
    .expect("the request must be cut off at its deadline, not hang");
    stuck.problem(503, "deadline_exceeded");
    assert_eq!(stuck.header("retry-after"), Some("1"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "cut off after {:?}",
        started.elapsed()
    );
    // Reads do not need the lock and are answered meanwhile.
    app.get("/v1/accounts").await.ok(200);
    release(lock).await;

    // Nothing of the cut-off write was kept, and a retry with the same
    // client id creates the row once.
    let rows = app
        .all_pages("view=ledger&from=2026-11-01&to=2026-11-30", 50)
        .await;
    assert!(rows.is_empty(), "a cut-off write left rows: {rows:?}");
    let retried = app.post("/v1/transactions", body).await;
    retried.ok(201);
    let rows = app
        .all_pages("view=ledger&from=2026-11-01&to=2026-11-30", 50)
        .await;
    assert_eq!(rows.len(), 1);
}

on_both_backends!(a_stuck_request_is_cut_off_at_its_deadline);
