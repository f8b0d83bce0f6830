//! The read cache: a repeated GET is answered from memory, but never once
//! the data changed (from this process or another one sharing the
//! database), never for a revoked key, and never across keys.

use axum::http::Method;
use serde_json::json;

use cofre_api::ApiConfig;
use cofre_domain::account::Patch;
use cofre_domain::auth::{Scope, split_key};
use cofre_domain::profile::ProfileChanges;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// The `read_cache_*_total` counter in `/metrics` (0 before the first).
async fn counter(app: &TestApp, name: &str) -> u64 {
    let text = app.call(Method::GET, "/metrics", None, None).await.text;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}

async fn a_repeated_read_is_served_from_memory(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.bank("Conta").await;
    let path = "/v1/transactions?from=2026-01-01&to=2026-12-31&limit=50";
    let first = app.get(path).await;
    first.ok(200);
    let hits = counter(&app, "read_cache_hits_total").await;
    let again = app.get(path).await;
    again.ok(200);
    assert_eq!(again.text, first.text);
    assert_eq!(again.header("content-type"), first.header("content-type"));
    // The general rate limit still counts and reports a kept answer.
    assert!(again.header("ratelimit-remaining").is_some());
    // The recorder is shared by tests running at once: at least this one.
    assert!(counter(&app, "read_cache_hits_total").await > hits);
}

async fn a_write_is_seen_at_once_even_from_another_process(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let path = "/v1/transactions?from=2026-01-01&to=2026-12-31&view=ledger";
    assert_eq!(
        app.get(path).await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        app.get(path).await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // Through the API.
    app.tx(
        json!({"account_id": bank, "description": "Padaria", "amount": 12.5,
        "type": "DEBIT", "date": "2026-03-02"}),
    )
    .await;
    assert_eq!(
        app.get(path).await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Through a second store on the same database: another server
    // process, or the CLI.
    // (`/v1/me` is never cached: its rate-limit figures change with every
    // request; the tags are.)
    let tags = |answer: &serde_json::Value| answer["data"].as_array().unwrap().len();
    let before = tags(app.get("/v1/tags").await.ok(200));
    assert_eq!(tags(app.get("/v1/tags").await.ok(200)), before);
    let other = cofre_store::connect(&app.url).await.expect("second store");
    let tag = cofre_domain::tag::new_tag("Outra", "#112233").expect("tag");
    other
        .create_tag(app.user, &tag, jiff::Timestamp::now())
        .await
        .expect("create tag");
    assert_eq!(tags(app.get("/v1/tags").await.ok(200)), before + 1);
    let changes = ProfileChanges {
        name: Patch::Set("Outra".into()),
        ..ProfileChanges::default()
    };
    other
        .update_profile(app.user, &changes)
        .await
        .expect("update");
    assert_eq!(app.get("/v1/me").await.ok(200)["name"], "Outra");
    // A failed write changes nothing and keeps nothing stale either.
    app.post(
        "/v1/transactions",
        json!({"account_id": bank, "amount": -1}),
    )
    .await
    .ok(400);
    assert_eq!(
        app.get(path).await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn concurrent_reads_after_a_write_all_get_the_new_answer(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let path = "/v1/transactions?from=2026-01-01&to=2026-12-31&view=ledger";
    app.get(path).await.ok(200);
    app.tx(
        json!({"account_id": bank, "description": "Mercado", "amount": 80,
        "type": "DEBIT", "date": "2026-04-10"}),
    )
    .await;
    // Eight at once: one computes, the others wait for its answer (or
    // compute their own); all see the write.
    let (a, b, c, d, e, f, g, h) = tokio::join!(
        app.get(path),
        app.get(path),
        app.get(path),
        app.get(path),
        app.get(path),
        app.get(path),
        app.get(path),
        app.get(path)
    );
    for r in [&a, &b, &c, &d, &e, &f, &g, &h] {
        assert_eq!(r.ok(200)["data"].as_array().unwrap().len(), 1);
        assert_eq!(r.text, a.text);
    }
}

async fn a_kept_answer_needs_a_valid_key_with_read(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.get("/v1/accounts").await.ok(200);
    // Another key of the same user, without read: still 403.
    let writer = app.key_for(app.user, &[Scope::Write]).await;
    app.call(Method::GET, "/v1/accounts", Some(&writer), None)
        .await
        .problem(403, "insufficient_scope");
    // Revoked: 401, though its answer is kept.
    app.get("/v1/accounts").await.ok(200);
    let (id, _) = split_key(&app.key).expect("key");
    let now = "2026-06-15T12:00:00Z".parse().expect("now");
    assert!(app.store.revoke_api_key(id, now).await.expect("revoke"));
    app.get("/v1/accounts").await.problem(401, "unauthorized");
}

async fn answers_are_kept_apart_per_user(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.bank("Minha").await;
    let (_, other) = app.new_user().await;
    app.get("/v1/accounts").await.ok(200);
    let theirs = app
        .call(Method::GET, "/v1/accounts", Some(&other), None)
        .await;
    assert_eq!(theirs.ok(200)["data"].as_array().unwrap().len(), 0);
}

async fn the_cache_can_be_turned_off(backend: Backend) {
    let config = ApiConfig {
        read_cache_bytes: 0,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let bank = app.bank("Conta").await;
    let path = format!("/v1/accounts/{bank}");
    let first = app.get(&path).await;
    first.ok(200);
    assert_eq!(app.get(&path).await.text, first.text);
    app.patch(&path, json!({"title": "Renomeada"}))
        .await
        .ok(200);
    assert_eq!(app.get(&path).await.ok(200)["title"], "Renomeada");
}

on_both_backends!(
    a_repeated_read_is_served_from_memory,
    a_write_is_seen_at_once_even_from_another_process,
    concurrent_reads_after_a_write_all_get_the_new_answer,
    a_kept_answer_needs_a_valid_key_with_read,
    answers_are_kept_apart_per_user,
    the_cache_can_be_turned_off,
);
