//! Hostile input at the HTTP edge: generated query strings, cursors, path
//! ids, JSON bodies and multipart forms against the real router. Every
//! answer is a success or a 4xx problem document, never a 5xx, a panic or
//! a hang.

use axum::body::Body;
use axum::http::{Method, Request};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

use cofre_api::ApiConfig;

use crate::on_both_backends;
use crate::receipts::{BOUNDARY, put};
use crate::support::{Backend, Response, TestApp};

/// Cases per kind of input, per backend.
const CASES: usize = 150;

/// No rate limits: every generated request reaches its parser.
async fn app(backend: Backend) -> TestApp {
    let config = ApiConfig {
        rate_limit_per_minute: 0,
        rate_limit_per_day: 0,
        bulk_limit_per_hour: 0,
        ..ApiConfig::default()
    };
    TestApp::start_with(backend, config).await
}

fn sample<S: Strategy>(runner: &mut TestRunner, strategy: &S) -> S::Value {
    strategy.new_tree(runner).expect("value").current()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~:,".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn clean(response: &Response, what: &str) {
    assert!(
        response.status < 500,
        "{what}: {} {}",
        response.status,
        response.text
    );
    if response.status >= 400 {
        assert!(
            response.body["code"].is_string(),
            "{what}: not a problem: {}",
            response.text
        );
    }
}

/// A value from the vocabulary a parameter expects, or garbage.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("2026-11-01".to_owned()),
        Just("9999-12-31".to_owned()),
        Just("0001-01-01".to_owned()),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        "-?[0-9]{0,25}",
        "(ledger|cashflow|POSTED|PENDING|DEBIT|CREDIT|true|false|this|future|all),?(ledger|POSTED|x)?",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(,[0-9a-f-]{0,36})?",
        "mocked-(bill|installment|recurrence):[0-9a-f-]{0,36}:[0-9-]{0,10}",
        "[A-Za-z0-9+/=_-]{0,60}",
        any::<String>(),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "(from|to|view|status|type|account_id|category_id|tag_ids|search|limit|cursor|hidden|bill_id|scope|date|preserve_posted|hide_series)",
        "[a-z_]{1,12}",
    ]
}

async fn query_strings_and_cursors(backend: Backend) {
    let app = app(backend).await;
    let bank = app.bank("Conta").await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Cartão", "credit_due_day": 10,
            "credit_limit": 1000, "pay_bill_from_account_id": bank}),
        )
        .await;
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 120, "description": "Loja",
        "date": "2026-10-20", "installments": {"count": 4}}),
    )
    .await;
    let mut runner = TestRunner::deterministic();
    let pairs = proptest::collection::vec((name(), value()), 0..6);
    for path in [
        "/v1/transactions".to_owned(),
        format!("/v1/cards/{card}/bills"),
        format!("/v1/cards/{card}/used-limit"),
        "/v1/transactions/duplicates".to_owned(),
        "/v1/overview".to_owned(),
    ] {
        for _ in 0..CASES {
            let query: Vec<String> = sample(&mut runner, &pairs)
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            let uri = format!("{path}?{}", query.join("&"));
            let response = tokio::time::timeout(std::time::Duration::from_secs(10), app.get(&uri))
                .await
                .unwrap_or_else(|_| panic!("{uri} did not answer"));
            clean(&response, &uri);
        }
    }
    // Cursors: a real one damaged, and garbage.
    let first = app
        .get("/v1/transactions?view=ledger&from=2026-01-01&to=2026-12-31&limit=1")
        .await;
    let cursor = first.ok(200)["next_cursor"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    for _ in 0..CASES {
        let (cut, junk) = sample(&mut runner, &(0..=cursor.len(), value()));
        let damaged = format!("{}{junk}", &cursor[..cut]);
        let uri = format!(
            "/v1/transactions?view=ledger&from=2026-01-01&to=2026-12-31&limit=1&cursor={}",
            encode(&damaged)
        );
        clean(&app.get(&uri).await, &uri);
    }
}

/// Arbitrary JSON, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        value().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(name(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

async fn ids_bodies_and_forms(backend: Backend) {
    let app = app(backend).await;
    let bank = app.bank("Conta").await;
    let row = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 10, "description": "Café"}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut runner = TestRunner::deterministic();
    for _ in 0..CASES {
        // Path ids.
        let id = encode(&sample(&mut runner, &value()));
        for (method, path) in [
            (Method::GET, format!("/v1/transactions/{id}")),
            (Method::DELETE, format!("/v1/accounts/{id}")),
            (
                Method::POST,
                format!("/v1/transactions/{id}/unmark-transfer"),
            ),
        ] {
            let response = app.call(method.clone(), &path, Some(&app.key), None).await;
            clean(&response, &format!("{method} {path}"));
        }
        // Bodies: arbitrary JSON, and arbitrary JSON with real field names.
        let mut body = sample(&mut runner, &json_value());
        if let Value::Object(map) = &mut body
            && map.len() % 2 == 0
        {
            map.insert("account_id".into(), json!(bank));
        }
        for (method, path) in [
            (Method::POST, "/v1/transactions".to_owned()),
            (Method::PATCH, format!("/v1/transactions/{row}")),
            (Method::POST, "/v1/transfers".to_owned()),
            (Method::POST, "/v1/transactions/bulk".to_owned()),
            (Method::POST, "/v1/accounts".to_owned()),
            (Method::PATCH, "/v1/me".to_owned()),
        ] {
            let response = app
                .call(method.clone(), &path, Some(&app.key), Some(body.clone()))
                .await;
            clean(&response, &format!("{method} {path} {body}"));
        }
        // Multipart forms: random bytes, sometimes inside a real part.
        let bytes = sample(&mut runner, &proptest::collection::vec(any::<u8>(), 0..600));
        let mut form = Vec::new();
        if bytes.len() % 2 == 0 {
            form.extend_from_slice(
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n").as_bytes(),
            );
        }
        form.extend_from_slice(&bytes);
        if bytes.len() % 3 == 0 {
            form.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        }
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let request: Request<Body> = put(
            &format!("/v1/transactions/{row}/receipt"),
            Some(&app.key),
            Some(&content_type),
            form,
        );
        clean(&app.send(request).await, "receipt upload");
    }
}

on_both_backends!(query_strings_and_cursors, ids_bodies_and_forms);
