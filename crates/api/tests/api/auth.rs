//! Keys, scopes, cross-user isolation and rate limits on every route.

use axum::http::Method;
use serde_json::json;

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

/// Every route of the API with the scope it needs.
fn routes() -> Vec<(Method, String, Scope)> {
    let id = ZERO_ID;
    vec![
        (Method::GET, "/v1/me".into(), Scope::Read),
        (Method::PATCH, "/v1/me".into(), Scope::Write),
        (Method::GET, "/v1/accounts".into(), Scope::Read),
        (Method::POST, "/v1/accounts".into(), Scope::Write),
        (Method::GET, format!("/v1/accounts/{id}"), Scope::Read),
        (Method::PATCH, format!("/v1/accounts/{id}"), Scope::Write),
        (Method::DELETE, format!("/v1/accounts/{id}"), Scope::Write),
        (Method::GET, "/v1/categories".into(), Scope::Read),
        (Method::POST, "/v1/categories".into(), Scope::Write),
        (Method::PATCH, format!("/v1/categories/{id}"), Scope::Write),
        (Method::GET, "/v1/tags".into(), Scope::Read),
        (Method::POST, "/v1/tags".into(), Scope::Write),
        (
            Method::GET,
            "/v1/transactions?from=2026-01-01&to=2026-01-31".into(),
            Scope::Read,
        ),
        (Method::POST, "/v1/transactions".into(), Scope::Write),
        (Method::GET, format!("/v1/transactions/{id}"), Scope::Read),
        (
            Method::PATCH,
            format!("/v1/transactions/{id}"),
            Scope::Write,
        ),
        (
            Method::DELETE,
            format!("/v1/transactions/{id}"),
            Scope::Write,
        ),
        (
            Method::PUT,
            format!("/v1/transactions/{id}/receipt"),
            Scope::Write,
        ),
        (
            Method::DELETE,
            format!("/v1/transactions/{id}/receipt"),
            Scope::Write,
        ),
    ]
}

fn body_for(method: &Method) -> Option<serde_json::Value> {
    (method == Method::POST || method == Method::PATCH).then(|| json!({}))
}

async fn every_route_needs_a_valid_key(backend: Backend) {
    let app = TestApp::start(backend).await;
    let revoked = app.key_for(app.user, &[Scope::Read, Scope::Write]).await;
    let (key_id, _) = cofre_domain::auth::split_key(&revoked).unwrap();
    app.store
        .revoke_api_key(key_id, crate::support::NOW.parse().unwrap())
        .await
        .unwrap();
    let wrong_secret = format!("{}x", &app.key[..app.key.len() - 1]);
    for (method, path, _) in routes() {
        for key in [
            None,
            Some("nonsense"),
            Some(wrong_secret.as_str()),
            Some(revoked.as_str()),
        ] {
            let response = app
                .call(method.clone(), &path, key, body_for(&method))
                .await;
            response.problem(401, "unauthorized");
            assert_eq!(
                response.header("www-authenticate"),
                Some("Bearer"),
                "{method} {path}"
            );
        }
    }
}

async fn scopes_are_enforced_on_every_route(backend: Backend) {
    let app = TestApp::start(backend).await;
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    let write_only = app.key_for(app.user, &[Scope::Write]).await;
    for (method, path, scope) in routes() {
        let (lacking, holding) = match scope {
            Scope::Read => (&write_only, &read_only),
            Scope::Write => (&read_only, &write_only),
        };
        app.call(method.clone(), &path, Some(lacking), body_for(&method))
            .await
            .problem(403, "insufficient_scope");
        let allowed = app
            .call(method.clone(), &path, Some(holding), body_for(&method))
            .await;
        assert_ne!(allowed.status, 403, "{method} {path}: {}", allowed.body);
        assert_ne!(allowed.status, 401, "{method} {path}: {}", allowed.body);
    }
}

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
    assert_eq!(
        me.ok(200)["limits"]["rate"]["minute"],
        json!({"limit": 3, "window_sec": 60})
    );
    assert_eq!(
        me.body["limits"]["rate"]["day"],
        json!({"limit": 50000, "window_sec": 86400})
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

on_both_backends!(
    every_route_needs_a_valid_key,
    scopes_are_enforced_on_every_route,
    another_users_data_is_invisible,
    rate_limit_is_enforced_and_reported,
);
