//! The authorization matrix, generated from the OpenAPI document the router
//! itself produces: every operation is called with no key, bad keys, a
//! revoked key, a key lacking the scope, and another user's ids. What each
//! must answer is derived from the document (public or secured, GET or a
//! write), so a new route is covered without editing this test; a path
//! parameter with no known substitution fails it loudly.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};

use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::receipts::{BOUNDARY, file_part, fixture, form, put};
use crate::support::{Backend, Response, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

/// One operation of the document.
struct Operation {
    method: Method,
    /// The path template, e.g. `/v1/accounts/{id}`.
    path: String,
    /// No key needed (`security: []`).
    public: bool,
    /// The body is a multipart form (receipt uploads).
    multipart: bool,
    /// Required query parameters, with values that pass validation.
    query: String,
}

impl Operation {
    fn scope(&self) -> Scope {
        if self.method == Method::GET {
            Scope::Read
        } else {
            Scope::Write
        }
    }

    fn has_body(&self) -> bool {
        [Method::POST, Method::PATCH, Method::PUT].contains(&self.method)
    }
}

fn operations() -> Vec<Operation> {
    let doc = serde_json::to_value(cofre_api::openapi()).expect("document");
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (name, op) in item.as_object().expect("path item") {
            let Ok(method) = name.to_uppercase().parse::<Method>() else {
                continue;
            };
            // No `security` inherits the document's (a bearer key); an
            // empty list needs none, and a requirement with no scheme in it
            // makes the key optional.
            let public = op["security"].as_array().is_some_and(|reqs| {
                reqs.is_empty()
                    || reqs
                        .iter()
                        .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
            });
            let multipart = op["requestBody"]["content"]
                .as_object()
                .is_some_and(|c| c.contains_key("multipart/form-data"));
            let query: Vec<String> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .map(|p| {
                    let name = p["name"].as_str().unwrap_or_default();
                    // Reports of whole months take months.
                    let months =
                        ["/v1/reports/spending", "/v1/reports/cashflow"].contains(&path.as_str());
                    let value = match name {
                        "from" if months => "2026-11",
                        "to" if months => "2026-11",
                        "from" => "2026-11-01",
                        "to" => "2026-11-30",
                        other => panic!(
                            "{path}: no value known for the required query parameter {other}"
                        ),
                    };
                    format!("{name}={value}")
                })
                .collect();
            out.push(Operation {
                method,
                path: path.clone(),
                public,
                multipart,
                query: if query.is_empty() {
                    String::new()
                } else {
                    format!("?{}", query.join("&"))
                },
            });
        }
    }
    assert!(
        out.len() >= 25,
        "the document lists {} operations",
        out.len()
    );
    out
}

/// The values path parameters take, per resource (the first segment after
/// `/v1/`) and parameter name.
struct Ids {
    by_resource: Vec<(&'static str, &'static str, Vec<String>)>,
}

impl Ids {
    /// Syntactically valid ids that name nothing.
    fn nobody() -> Ids {
        Ids {
            by_resource: vec![
                ("accounts", "id", vec![ZERO_ID.into()]),
                ("budgets", "id", vec![ZERO_ID.into()]),
                ("cards", "id", vec![ZERO_ID.into()]),
                ("categories", "id", vec![ZERO_ID.into()]),
                ("tags", "id", vec![ZERO_ID.into()]),
                ("transactions", "id", vec![ZERO_ID.into()]),
                (
                    "receipts",
                    "name",
                    vec![format!("{}.png", ZERO_ID.replace('-', ""))],
                ),
            ],
        }
    }

    /// Ids of the same shapes as `theirs`, one for one, that name nothing.
    fn missing_like(theirs: &Ids) -> Ids {
        let zero = |id: &String| {
            if let Some(rest) = id.strip_prefix("mocked-installment:") {
                format!(
                    "mocked-installment:{ZERO_ID}:{}",
                    rest.rsplit(':').next().unwrap()
                )
            } else if let Some(rest) = id.strip_prefix("mocked-bill:") {
                format!("mocked-bill:{ZERO_ID}:{}", rest.rsplit(':').next().unwrap())
            } else if id.ends_with(".png") {
                format!("{}.png", ZERO_ID.replace('-', ""))
            } else {
                ZERO_ID.to_owned()
            }
        };
        Ids {
            by_resource: theirs
                .by_resource
                .iter()
                .map(|(r, p, ids)| (*r, *p, ids.iter().map(zero).collect()))
                .collect(),
        }
    }

    /// Every concrete path of `op`: each parameter replaced by each value.
    fn paths(&self, op: &Operation) -> Vec<String> {
        let mut paths = vec![op.path.clone()];
        let resource = op
            .path
            .trim_start_matches("/v1")
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default();
        while let Some(start) = paths[0].find('{') {
            let end = paths[0][start..].find('}').expect("closing brace") + start;
            let param = paths[0][start + 1..end].to_owned();
            let values = self
                .by_resource
                .iter()
                .find(|(r, p, _)| *r == resource && *p == param)
                .map(|(_, _, v)| v)
                .unwrap_or_else(|| {
                    panic!(
                        "{} {}: no substitution for {{{param}}}: add one to the authorization matrix",
                        op.method, op.path
                    )
                });
            let placeholder = format!("{{{param}}}");
            paths = paths
                .iter()
                .flat_map(|p| values.iter().map(|v| p.replacen(&placeholder, v, 1)))
                .collect();
        }
        paths.into_iter().map(|p| p + &op.query).collect()
    }
}

/// A body that passes validation, so the answer comes from authorization
/// and ownership; a write whose body is not known fails the test.
fn body_of(op: &Operation, path: &str) -> Option<Value> {
    if !op.has_body() || op.multipart {
        return None;
    }
    Some(match (op.method.as_str(), op.path.as_str()) {
        ("PATCH", "/v1/budgets/{id}") => json!({"amount": 1}),
        ("PATCH", "/v1/accounts/{id}")
        | ("PATCH", "/v1/categories/{id}")
        | ("PATCH", "/v1/tags/{id}") => {
            json!({"title": "x"})
        }
        ("PATCH", "/v1/transactions/{id}") if path.contains("mocked-bill:") => json!({"amount": 1}),
        ("PATCH", "/v1/transactions/{id}") if path.contains("mocked-") => {
            json!({"amount": 1, "scope": "this"})
        }
        ("PATCH", "/v1/transactions/{id}") => json!({"amount": 1}),
        ("POST", "/v1/transactions/{id}/mark-transfer") => json!({}),
        ("POST", "/v1/transactions/{id}/unmark-transfer") => json!({}),
        (_, template) if !template.contains('{') => json!({}),
        (method, template) => {
            panic!("{method} {template}: no body known: add one to the authorization matrix")
        }
    })
}

async fn call(app: &TestApp, op: &Operation, path: &str, key: Option<&str>) -> Response {
    if op.multipart {
        let png = fixture("receipt.png");
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let request: Request<Body> = put(
            path,
            key,
            Some(&content_type),
            form(&[file_part("r.png", &png)]),
        );
        return app.send(request).await;
    }
    app.call(op.method.clone(), path, key, body_of(op, path))
        .await
}

async fn every_secured_operation_refuses_missing_bad_and_revoked_keys(backend: Backend) {
    let app = TestApp::start(backend).await;
    let revoked = app.key_for(app.user, &[Scope::Read, Scope::Write]).await;
    let (key_id, _) = cofre_domain::auth::split_key(&revoked).unwrap();
    app.store
        .revoke_api_key(key_id, crate::support::NOW.parse().unwrap())
        .await
        .unwrap();
    let wrong_secret = format!("{}x", &app.key[..app.key.len() - 1]);
    let ids = Ids::nobody();
    let mut checked = 0;
    for op in operations() {
        for path in ids.paths(&op) {
            for key in [
                None,
                Some("nonsense"),
                Some(wrong_secret.as_str()),
                Some(revoked.as_str()),
            ] {
                let response = call(&app, &op, &path, key).await;
                if op.public {
                    assert!(
                        ![401, 403].contains(&response.status),
                        "public {} {path} answered {}",
                        op.method,
                        response.status
                    );
                } else {
                    assert_eq!(
                        response.status, 401,
                        "{} {path} with {key:?}: {}",
                        op.method, response.text
                    );
                    assert_eq!(response.body["code"], "unauthorized");
                    assert_eq!(
                        response.header("www-authenticate"),
                        Some("Bearer"),
                        "{} {path}",
                        op.method
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100);
}

async fn every_operation_enforces_its_scope(backend: Backend) {
    let app = TestApp::start(backend).await;
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    let write_only = app.key_for(app.user, &[Scope::Write]).await;
    let ids = Ids::nobody();
    for op in operations().into_iter().filter(|op| !op.public) {
        let (lacking, holding) = match op.scope() {
            Scope::Read => (&write_only, &read_only),
            Scope::Write => (&read_only, &write_only),
        };
        for path in ids.paths(&op) {
            call(&app, &op, &path, Some(lacking))
                .await
                .problem(403, "insufficient_scope");
            let allowed = call(&app, &op, &path, Some(holding)).await;
            assert!(
                ![401, 403].contains(&allowed.status) && allowed.status < 500,
                "{} {path}: {} {}",
                op.method,
                allowed.status,
                allowed.text
            );
        }
    }
}

/// User B's things, one of each kind a path can name.
async fn others_things(app: &TestApp, key: &str) -> Ids {
    let post = |path: &'static str, body: Value| async move {
        let r = app.call(Method::POST, path, Some(key), Some(body)).await;
        assert!(r.status == 201 || r.status == 200, "{path}: {}", r.text);
        r.body
    };
    let bank = post(
        "/v1/accounts",
        json!({"type": "BANK", "title": "Dela", "initial_balance": 500}),
    )
    .await;
    let bank = bank["id"].as_str().unwrap().to_owned();
    let card = post(
        "/v1/accounts",
        json!({"type": "CREDIT", "title": "Cartão dela", "credit_due_day": 10,
        "credit_limit": 5000, "pay_bill_from_account_id": bank}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let category = post("/v1/categories", json!({"title": "Dela"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tag = post("/v1/tags", json!({"title": "Dela", "color_hex": "#112233"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = post(
        "/v1/transactions",
        json!({"account_id": bank, "type": "DEBIT", "amount": 10,
        "description": "Dela", "date": "2026-11-20"}),
    )
    .await["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let purchase = post(
        "/v1/transactions",
        json!({"account_id": card, "type": "DEBIT", "amount": 300,
        "description": "Fone", "date": "2026-10-15", "installments": {"count": 3}}),
    )
    .await["transaction"]["installment"]["purchase_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let budget = post(
        "/v1/budgets",
        json!({"category_id": category, "amount": 100, "starts_on": "2026-01"}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let png = fixture("receipt.png");
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let upload = put(
        &format!("/v1/transactions/{row}/receipt"),
        Some(key),
        Some(&content_type),
        form(&[file_part("r.png", &png)]),
    );
    let uploaded = app.send(upload).await;
    let url = uploaded.ok(200)["receipt_url"].as_str().unwrap().to_owned();
    let name = url.rsplit('/').next().unwrap().to_owned();
    Ids {
        by_resource: vec![
            ("accounts", "id", vec![bank.clone(), card.clone()]),
            ("budgets", "id", vec![budget]),
            ("cards", "id", vec![card.clone()]),
            ("categories", "id", vec![category]),
            ("tags", "id", vec![tag]),
            (
                "transactions",
                "id",
                vec![
                    row,
                    format!("mocked-installment:{purchase}:2"),
                    format!("mocked-bill:{card}:202611"),
                ],
            ),
            ("receipts", "name", vec![name]),
        ],
    }
}

async fn no_operation_reaches_another_users_things(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (_, other_key) = app.new_user().await;
    let theirs = others_things(&app, &other_key).await;
    let their_ids: Vec<String> = theirs
        .by_resource
        .iter()
        .flat_map(|(_, _, v)| v.clone())
        .collect();
    let missing = Ids::missing_like(&theirs);
    let before = app
        .call(Method::GET, "/v1/accounts", Some(&other_key), None)
        .await
        .text;
    let mut checked = 0;
    for op in operations()
        .into_iter()
        .filter(|op| !op.public && op.path.contains('{'))
    {
        for (path, absent) in theirs.paths(&op).into_iter().zip(missing.paths(&op)) {
            // Their thing answers exactly as a thing that does not exist.
            let response = call(&app, &op, &path, Some(&app.key)).await;
            let expected = call(&app, &op, &absent, Some(&app.key)).await;
            assert!(
                (400..500).contains(&response.status),
                "{} {path} by another user: {}",
                op.method,
                response.text
            );
            assert_eq!(
                (response.status, &response.body["code"]),
                (expected.status, &expected.body["code"]),
                "{} {path} by another user differs from a missing id: {}",
                op.method,
                response.text
            );
            for id in &their_ids {
                assert!(
                    !response.text.contains(id.as_str()),
                    "{} {path} leaks {id}",
                    op.method
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} checks");
    // Nothing of theirs changed.
    let after = app
        .call(Method::GET, "/v1/accounts", Some(&other_key), None)
        .await
        .text;
    assert_eq!(before, after);
}

on_both_backends!(
    every_secured_operation_refuses_missing_bad_and_revoked_keys,
    every_operation_enforces_its_scope,
    no_operation_reaches_another_users_things,
);
