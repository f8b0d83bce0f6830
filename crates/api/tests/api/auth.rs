//! Cross-user isolation of lists and body references, rate limits, and
//! keys revoked by another server after this one read them; keys and
//! scopes on every route are the matrix in `authz.rs`.

use axum::http::Method;
use serde_json::json;
use std::sync::Arc;

use cofre_api::ApiConfig;
use cofre_domain::auth::{Scope, split_key};

use crate::concurrency::{Sent, sent_together};
use crate::on_both_backends;
use crate::support::{Backend, NOW, TestApp, with};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

async fn another_users_data_is_invisible(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (_, other) = app.new_user().await;
    let account = app.bank("Mine").await;
    let tx = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Mine"}))
        .await;
    let tx_id = tx["id"].as_str().unwrap();
    let tag = app
        .post("/v1/tags", json!({"title": "Mine", "color_hex": "#112233"}))
        .await;
    let tag_id = tag.ok(201)["id"].as_str().unwrap().to_owned();
    let category = app.post("/v1/categories", json!({"title": "Mine"})).await;
    let category_id = category.ok(201)["id"].as_str().unwrap().to_owned();

    // Reads and writes by id answer exactly like a missing id.
    let missing = app
        .call(
            Method::GET,
            &format!("/v1/accounts/{ZERO_ID}"),
            Some(&other),
            None,
        )
        .await;
    for (method, path, body) in [
        (Method::GET, format!("/v1/accounts/{account}"), None),
        (
            Method::PATCH,
            format!("/v1/accounts/{account}"),
            Some(json!({"title": "x"})),
        ),
        (Method::DELETE, format!("/v1/accounts/{account}"), None),
        (Method::GET, format!("/v1/transactions/{tx_id}"), None),
        (
            Method::PATCH,
            format!("/v1/transactions/{tx_id}"),
            Some(json!({"amount": 1})),
        ),
        (Method::DELETE, format!("/v1/transactions/{tx_id}"), None),
        (
            Method::PATCH,
            format!("/v1/categories/{category_id}"),
            Some(json!({"title": "x"})),
        ),
    ] {
        let response = app.call(method.clone(), &path, Some(&other), body).await;
        response.problem(404, "not_found");
        assert_eq!(
            response.body["detail"], missing.body["detail"],
            "{method} {path}"
        );
    }

    // Lists show none of it.
    for path in [
        "/v1/accounts",
        "/v1/tags",
        "/v1/transactions?from=2026-11-01&to=2026-11-30",
    ] {
        let response = app.call(Method::GET, path, Some(&other), None).await;
        assert_eq!(response.ok(200)["data"], json!([]), "{path}");
    }
    let categories = app
        .call(Method::GET, "/v1/categories", Some(&other), None)
        .await;
    assert!(
        !categories.ok(200)["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == category_id.as_str())
    );

    // References in bodies are refused as unknown.
    let (other_user, _) = (app.user, ());
    let _ = other_user;
    let by_other = app
        .call(
            Method::POST,
            "/v1/transactions",
            Some(&other),
            Some(json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": "x"})),
        )
        .await;
    by_other.invalid(&["account_id"]);
    let other_account = {
        let r = app
            .call(
                Method::POST,
                "/v1/accounts",
                Some(&other),
                Some(json!({"type": "BANK"})),
            )
            .await;
        r.ok(201)["id"].as_str().unwrap().to_owned()
    };
    app.call(
        Method::POST,
        "/v1/transactions",
        Some(&other),
        Some(
            json!({"account_id": other_account, "type": "DEBIT", "amount": 1, "description": "x",
            "tag_ids": [tag_id], "category_id": category_id}),
        ),
    )
    .await
    .problem(400, "validation_error");
    app.call(
        Method::POST,
        "/v1/categories",
        Some(&other),
        Some(json!({"title": "Child", "parent_id": category_id})),
    )
    .await
    .invalid(&["parent_id"]);

    // A client id already used by another user is a conflict, never a leak.
    app.call(
        Method::POST,
        "/v1/transactions",
        Some(&other),
        Some(json!({"id": tx_id, "account_id": other_account, "type": "DEBIT", "amount": 10, "description": "Mine"})),
    )
    .await
    .problem(409, "id_conflict");

    // And the owner still sees everything unchanged.
    assert_eq!(
        app.get(&format!("/v1/transactions/{tx_id}")).await.ok(200)["transaction"],
        tx
    );
}

async fn rate_limit_is_enforced_and_reported(backend: Backend) {
    let config = ApiConfig {
        rate_limit_per_minute: 3,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let me = app.get("/v1/me").await;
    let minute = &me.ok(200)["limits"]["rate"]["minute"];
    assert_eq!(
        (
            &minute["limit"],
            &minute["window_sec"],
            &minute["remaining"]
        ),
        (&json!(3), &json!(60), &json!(2))
    );
    let day = &me.body["limits"]["rate"]["day"];
    assert_eq!(
        (&day["limit"], &day["window_sec"], &day["remaining"]),
        (&json!(50000), &json!(86400), &json!(49999))
    );
    assert_eq!(me.header("ratelimit-limit"), Some("3"));
    assert_eq!(me.header("ratelimit-remaining"), Some("2"));
    app.get("/v1/accounts").await.ok(200);
    let last = app.get("/v1/tags").await;
    assert_eq!(last.header("ratelimit-remaining"), Some("0"));
    let refused = app.get("/v1/me").await;
    refused.problem(429, "rate_limited");
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(refused.header("ratelimit-remaining"), Some("0"));
    assert!(refused.header("ratelimit-reset").is_some());

    // The budget is per key: another key of the same user still works.
    let second = app.key_for(app.user, &[Scope::Read]).await;
    app.call(Method::GET, "/v1/me", Some(&second), None)
        .await
        .ok(200);
}

/// A key of the app's user with `scopes`, used once here (so a store
/// that remembers keys has it), then revoked through another store on the
/// same database, as by another server.
async fn revoked_elsewhere(app: &TestApp, scopes: &[Scope]) -> String {
    let key = app.key_for(app.user, scopes).await;
    let (id, _) = split_key(&key).unwrap();
    let me = app.call(Method::GET, "/v1/me", Some(&key), None).await;
    me.ok(200);
    // Remembered where reading a key is a round trip of its own.
    let remembered = app.store.recalled_api_key(id).await.is_some();
    assert_eq!(remembered, app.url.starts_with("postgres"), "{}", app.url);
    let other = cofre_store::connect(&app.url).await.unwrap();
    assert!(
        other
            .revoke_api_key(id, NOW.parse().unwrap())
            .await
            .unwrap()
    );
    key
}

/// Creations authenticated with a key as this server last read it
/// (PostgreSQL) check it as they commit: one revoked by another server
/// since stores nothing, alone or among others' creations, on every path
/// of a creation, and is answered 401 (not 403 for a scope it lacks).
async fn a_key_revoked_elsewhere_stores_nothing(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let account = app.bank("Conta").await;
    let row = |n: i64| {
        json!({"account_id": account, "type": "DEBIT", "amount": n,
            "description": format!("Compra {n}"), "date": "2026-11-20"})
    };
    let revoked = revoked_elsewhere(&app, &[Scope::Read, Scope::Write]).await;
    let sent = |key: &str, n: i64, status: u16, names: &'static str| Sent {
        key: key.to_owned(),
        body: row(n),
        status,
        names,
    };
    sent_together(
        &app,
        &[
            sent(&revoked, 1, 401, "unauthorized"),
            sent(&app.key, 2, 201, ""),
            sent(&revoked, 3, 401, "unauthorized"),
            sent(&app.key, 4, 201, ""),
        ],
    )
    .await;
    // Refused in a write, the key is forgotten: its next request reads it.
    let (id, _) = split_key(&revoked).unwrap();
    assert!(app.store.recalled_api_key(id).await.is_none());
    for body in [
        row(5),
        with(
            &row(6),
            json!({"id": "3f0c2a4e-8b1d-4c6e-9a2f-5d7b1e3c9a40"}),
        ),
        with(&row(7), json!({"installments": {"count": 3}})),
        with(&row(8), json!({"recurrence": {"frequency": "MONTHLY"}})),
    ] {
        let key = revoked_elsewhere(&app, &[Scope::Read, Scope::Write]).await;
        app.call(Method::POST, "/v1/transactions", Some(&key), Some(body))
            .await
            .problem(401, "unauthorized");
    }
    let read_only = revoked_elsewhere(&app, &[Scope::Read]).await;
    app.call(
        Method::POST,
        "/v1/transactions",
        Some(&read_only),
        Some(row(9)),
    )
    .await
    .problem(401, "unauthorized");
    let rows = app
        .all_pages("view=ledger&from=2026-11-01&to=2027-10-31", 100)
        .await;
    let mut kept: Vec<&str> = rows
        .iter()
        .map(|r| r["description"].as_str().unwrap())
        .collect();
    kept.sort_unstable();
    assert_eq!(kept, ["Compra 2", "Compra 4"]);
    assert_eq!(app.balance(&account).await, -6.0);
}

/// A key this server has just used (and may remember), revoked through
/// another store as by another process, is refused on its very next
/// request, a read as well as a write; the user's other key still works.
async fn a_key_revoked_elsewhere_is_refused_on_its_next_read(backend: Backend) {
    let app = TestApp::start(backend).await;
    for path in ["/v1/me", "/v1/accounts", "/v1/overview"] {
        let revoked = revoked_elsewhere(&app, &[Scope::Read]).await;
        app.call(Method::GET, path, Some(&revoked), None)
            .await
            .problem(401, "unauthorized");
        app.call(Method::GET, path, Some(&app.key), None)
            .await
            .ok(200);
    }
}

on_both_backends!(
    another_users_data_is_invisible,
    rate_limit_is_enforced_and_reported,
    a_key_revoked_elsewhere_stores_nothing,
    a_key_revoked_elsewhere_is_refused_on_its_next_read,
);
