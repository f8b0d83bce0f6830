//! `GET /v1/export`: everything of one user, as JSON or as CSV, streamed
//! page by page; nothing of another user.

use axum::http::Method;
use serde_json::{Value, json};

use cofre_api::{ApiConfig, CSV_COLUMNS};
use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// More stored rows than one page of the export, so it pages.
const ROWS: usize = 520;

async fn exports_every_resource_and_row(backend: Backend) {
    let unlimited = ApiConfig {
        rate_limit_per_minute: 0,
        rate_limit_per_day: 0,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, unlimited).await;
    app.patch("/v1/me", json!({"name": "Ana"})).await.ok(200);
    let (bank, card) = app.bank_and_card().await;
    let tag = app
        .post(
            "/v1/tags",
            json!({"title": "Viagem", "color_hex": "#112233"}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let category = app
        .post("/v1/categories", json!({"title": "Pets"}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tagged = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 10.5, "description": "Ração, \"boa\"",
            "date": "2026-11-20", "tag_ids": [tag], "category_id": category}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for i in 0..ROWS - 1 {
        app.tx(json!({"account_id": bank, "type": "CREDIT", "amount": 1, "description": format!("row {i}"),
            "date": "2026-10-01"}))
            .await;
    }
    let hidden = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 2, "description": "oculta", "date": "2026-09-01"}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.patch(
        &format!("/v1/transactions/{hidden}"),
        json!({"hide_from_results": true}),
    )
    .await
    .ok(200);
    app.post(
        "/v1/transactions",
        json!({"account_id": bank, "type": "DEBIT", "amount": 30, "description": "Aluguel",
            "date": "2026-12-05", "recurrence": {"frequency": "MONTHLY", "count": 3}}),
    )
    .await
    .ok(201);
    app.post(
        "/v1/transactions",
        json!({"account_id": card, "type": "DEBIT", "amount": 90, "description": "TV",
            "date": "2026-11-10", "installments": {"count": 3}}),
    )
    .await
    .ok(201);
    let budget = app
        .post(
            "/v1/budgets",
            json!({"category_id": category, "amount": 250, "starts_on": "2026-01"}),
        )
        .await;
    let budget = budget.ok(201)["id"].as_str().unwrap().to_owned();
    // Another user's data never shows.
    let (_, other) = app.new_user().await;
    app.call(
        Method::POST,
        "/v1/tags",
        Some(&other),
        Some(json!({"title": "Deles", "color_hex": "#000000"})),
    )
    .await
    .ok(201);

    // A read-only key is enough.
    let reader = app.key_for(app.user, &[Scope::Read]).await;
    let export = app
        .call(Method::GET, "/v1/export", Some(&reader), None)
        .await;
    assert_eq!(export.status, 200, "{}", export.text);
    assert_eq!(export.header("content-type"), Some("application/json"));
    let doc = &export.body;
    assert_eq!(doc["format"], "cofre-export");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["profile"]["name"], "Ana");
    assert_eq!(doc["accounts"].as_array().unwrap().len(), 2);
    assert_eq!(
        doc["tags"],
        json!([{"id": tag, "title": "Viagem", "color_hex": "#112233",
        "created_at": doc["tags"][0]["created_at"]}])
    );
    assert!(
        doc["categories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == category.as_str())
    );
    assert_eq!(doc["recurrence_rules"][0]["description"], "Aluguel");
    assert_eq!(doc["recurrence_rules"][0]["count"], 3);
    assert_eq!(doc["installment_plans"][0]["amount"], 90.0);
    assert_eq!(doc["installment_plans"][0]["count"], 3);
    assert_eq!(doc["budgets"][0]["id"], budget.as_str());
    assert_eq!(
        doc["budgets"][0]["limits"],
        json!([{"from_month": "2026-01", "amount": 250.0}])
    );
    let rows = doc["transactions"].as_array().unwrap();
    // Every stored row once: the plain ones, the hidden one, the opening
    // balance and the first installment (the others are projected, from
    // the plan).
    let ids: std::collections::HashSet<&str> =
        rows.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), rows.len());
    assert_eq!(rows.len(), ROWS + 3);
    assert!(rows.iter().all(|t| t["projected"] == false));
    let row = rows.iter().find(|t| t["id"] == tagged.as_str()).unwrap();
    assert_eq!(row["tags"][0]["title"], "Viagem");
    assert_eq!(row["category_id"], category.as_str());
    assert_eq!(rows.last().unwrap()["id"], hidden.as_str());

    let csv = app.get("/v1/export?format=csv").await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let mut lines = csv.text.split("\r\n");
    assert_eq!(lines.next().unwrap(), CSV_COLUMNS.join(","));
    let quoted = csv.text.lines().find(|l| l.starts_with(&tagged)).unwrap();
    assert!(quoted.contains("\"Ração, \"\"boa\"\"\""), "{quoted}");
    assert!(quoted.contains(",Pets,Viagem,false,"), "{quoted}");
    // Header, every row, and the empty string after the last line break.
    assert_eq!(csv.text.split("\r\n").count(), 1 + ROWS + 3 + 1);

    app.get("/v1/export?format=xml").await.invalid(&["format"]);
    app.get("/v1/export?formats=csv")
        .await
        .problem(400, "validation_error");
    let theirs = app
        .call(Method::GET, "/v1/export", Some(&other), None)
        .await;
    let theirs: &Value = theirs.ok(200);
    assert_eq!(theirs["transactions"], json!([]));
    assert_eq!(theirs["tags"][0]["title"], "Deles");
}

on_both_backends!(exports_every_resource_and_row);
