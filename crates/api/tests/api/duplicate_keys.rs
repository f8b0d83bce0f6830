//! A JSON body that gives one key twice in an object is ambiguous: it is
//! refused with 400 naming the key, on every route that takes JSON, and
//! nothing is stored.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::json;

use crate::on_both_backends;
use crate::support::{Backend, Response, TestApp};

/// `body`, as written (serde_json's values cannot hold a key twice).
async fn send(app: &TestApp, method: Method, path: &str, body: &str) -> Response {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {}", app.key))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .expect("request");
    app.send(request).await
}

async fn a_key_given_twice_is_refused_everywhere(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let savings = app.bank("Poupança").await;
    let category = app.category("Mercado").await;
    let tag = app.tag("Casa", "#112233").await;
    let row = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 10.0,
            "description": "Padaria", "date": "2026-11-20"}))
        .await;
    let row = row["id"].as_str().expect("id").to_owned();
    let budget = app
        .post(
            "/v1/budgets",
            json!({"category_id": category, "amount": 500, "starts_on": "2026-11"}),
        )
        .await;
    let budget = budget.ok(201)["id"].as_str().expect("budget id").to_owned();

    let cases = [
        (
            Method::PATCH,
            format!("/v1/transactions/{row}"),
            r#"{"amount": 10.00, "amount": 99.00}"#.to_owned(),
            "amount",
        ),
        (
            Method::POST,
            "/v1/transactions".into(),
            format!(
                r#"{{"account_id": "{bank}", "type": "DEBIT", "amount": 1, "amount": 2, "description": "x"}}"#
            ),
            "amount",
        ),
        (
            Method::POST,
            "/v1/transactions/bulk".into(),
            format!(
                r#"{{"ids": ["{row}"], "set": {{"hide_from_results": true, "hide_from_results": false}}}}"#
            ),
            "set.hide_from_results",
        ),
        (
            Method::POST,
            "/v1/transfers".into(),
            format!(
                r#"{{"from_account_id": "{bank}", "to_account_id": "{savings}", "amount": 5, "amount": 50, "description": "Reserva"}}"#
            ),
            "amount",
        ),
        (
            Method::POST,
            "/v1/budgets".into(),
            format!(
                r#"{{"category_id": "{category}", "amount": 1, "amount": 2, "starts_on": "2026-12"}}"#
            ),
            "amount",
        ),
        (
            Method::PATCH,
            format!("/v1/budgets/{budget}"),
            r#"{"amount": 1, "amount": 2}"#.to_owned(),
            "amount",
        ),
        (
            Method::POST,
            "/v1/accounts".into(),
            r#"{"type": "BANK", "title": "A", "title": "B"}"#.to_owned(),
            "title",
        ),
        (
            Method::PATCH,
            format!("/v1/accounts/{bank}"),
            r#"{"title": "A", "title": "B"}"#.to_owned(),
            "title",
        ),
        (
            Method::POST,
            "/v1/categories".into(),
            r#"{"title": "A", "title": "B"}"#.to_owned(),
            "title",
        ),
        (
            Method::PATCH,
            format!("/v1/categories/{category}"),
            r#"{"title": "A", "title": "B"}"#.to_owned(),
            "title",
        ),
        (
            Method::POST,
            "/v1/tags".into(),
            r##"{"title": "A", "color_hex": "#112233", "title": "B"}"##.to_owned(),
            "title",
        ),
        (
            Method::PATCH,
            format!("/v1/tags/{tag}"),
            r#"{"title": "A", "title": "B"}"#.to_owned(),
            "title",
        ),
        (
            Method::PATCH,
            "/v1/me".into(),
            r#"{"name": "A", "name": "B"}"#.to_owned(),
            "name",
        ),
    ];
    let before = app
        .get("/v1/transactions?view=ledger&from=2026-01-01&to=2026-12-31")
        .await;
    for (method, path, body, field) in cases {
        let answer = send(&app, method.clone(), &path, &body).await;
        assert_eq!(answer.status, 400, "{method} {path}: {}", answer.text);
        answer.invalid(&[field]);
    }
    // Nothing changed: the row, the accounts, the categories, the tags,
    // the budget and the profile are as they were.
    let after = app
        .get("/v1/transactions?view=ledger&from=2026-01-01&to=2026-12-31")
        .await;
    assert_eq!(before.body, after.body);
    let accounts = app.get("/v1/accounts").await;
    let titles: Vec<&str> = accounts.body["data"]
        .as_array()
        .expect("accounts")
        .iter()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert!(
        !titles.contains(&"A") && !titles.contains(&"B"),
        "{titles:?}"
    );
    let stored = app.get(&format!("/v1/budgets/{budget}")).await;
    assert_eq!(
        stored.ok(200)["amount"].as_f64(),
        Some(500.0),
        "{}",
        stored.text
    );
    let tags = app.get("/v1/tags").await;
    assert!(
        !tags.text.contains("\"A\"") && !tags.text.contains("\"B\""),
        "{}",
        tags.text
    );
}

on_both_backends!(a_key_given_twice_is_refused_everywhere);
