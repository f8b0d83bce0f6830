//! `GET /v1/me` and `PATCH /v1/me`: the profile, plan, scopes and limits;
//! partial updates, null clearing, exact amounts and validation.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// The keys of the profile answered by PATCH /v1/me, sorted.
const PROFILE_KEYS: [&str; 7] = [
    "has_children",
    "has_spouse",
    "id",
    "is_entrepreneur",
    "monthly_living_cost",
    "name",
    "wage",
];

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .unwrap_or_else(|| panic!("an object: {value}"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// The profile of a fresh test user (created with the name "Test").
fn fresh_profile(app: &TestApp) -> Value {
    json!({
        "id": app.user.to_string(),
        "name": "Test",
        "wage": null,
        "monthly_living_cost": null,
        "has_spouse": null,
        "has_children": null,
        "is_entrepreneur": null,
    })
}

/// The profile part of a GET /v1/me body.
fn profile_part(me: &Value) -> Value {
    let mut map = me.as_object().expect("object").clone();
    map.retain(|k, _| PROFILE_KEYS.contains(&k.as_str()));
    Value::Object(map)
}

/// A PATCH /v1/me with a hand-written body and content type.
async fn patch_raw(
    app: &TestApp,
    content_type: Option<&str>,
    body: &str,
) -> crate::support::Response {
    let mut builder = Request::builder()
        .method(Method::PATCH)
        .uri("/v1/me")
        .header("authorization", format!("Bearer {}", app.key));
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    app.send(builder.body(Body::from(body.to_owned())).expect("request"))
        .await
}

async fn me_has_the_full_shape(backend: Backend) {
    let app = TestApp::start(backend).await;
    let response = app.get("/v1/me").await;
    let mut me = response.ok(200).clone();
    assert_eq!(response.header("content-type"), Some("application/json"));
    for window in ["minute", "day"] {
        let reset = me["limits"]["rate"][window]["reset"].take();
        assert!(reset.as_u64().is_some_and(|s| s > 0), "{window}: {reset}");
    }
    assert_eq!(
        me,
        json!({
            "id": app.user.to_string(),
            "name": "Test",
            "wage": null,
            "monthly_living_cost": null,
            "has_spouse": null,
            "has_children": null,
            "is_entrepreneur": null,
            "plan": {"premium_access": true, "ultra_access": true, "frequency": "MONTHLY"},
            "scopes": ["read", "write"],
            "limits": {"rate": {
                "minute": {"limit": 300, "window_sec": 60, "remaining": 299, "reset": null},
                "day": {"limit": 50000, "window_sec": 86400, "remaining": 49999, "reset": null},
            }},
        })
    );

    // The scopes are those of the calling key.
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    let me = app
        .call(Method::GET, "/v1/me", Some(&read_only), None)
        .await;
    assert_eq!(me.ok(200)["scopes"], json!(["read"]));
    assert_eq!(me.body["id"], app.user.to_string());

    // Each user sees their own profile.
    let (other, other_key) = app.new_user().await;
    let theirs = app
        .call(Method::GET, "/v1/me", Some(&other_key), None)
        .await;
    assert_eq!(theirs.ok(200)["id"], other.to_string());
    assert_ne!(theirs.body["id"], app.user.to_string());
}

async fn me_reports_the_configured_rate_limits(backend: Backend) {
    let config = ApiConfig {
        rate_limit_per_minute: 7,
        rate_limit_per_day: 1234,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend.clone(), config).await;
    let me = app.get("/v1/me").await;
    let mut limits = me.ok(200)["limits"].clone();
    // What is left counts this request; the resets move with the clock.
    for (window, len) in [("minute", 60), ("day", 86_400)] {
        let reset = limits["rate"][window]["reset"].take().as_u64().unwrap();
        assert!((1..=len).contains(&reset), "{window} resets in {reset}");
    }
    assert_eq!(
        limits,
        json!({"rate": {
            "minute": {"limit": 7, "window_sec": 60, "remaining": 6, "reset": null},
            "day": {"limit": 1234, "window_sec": 86400, "remaining": 1233, "reset": null},
        }})
    );
    assert_eq!(me.header("ratelimit-remaining"), Some("6"));
    // Never answered from the read cache: the figures move on.
    let again = app.get("/v1/me").await;
    assert_eq!(again.ok(200)["limits"]["rate"]["minute"]["remaining"], 5);
    // A window turned off has nothing left to report.
    let off = TestApp::start_with(
        backend,
        ApiConfig {
            rate_limit_per_minute: 0,
            ..ApiConfig::default()
        },
    )
    .await;
    let off_me = off.get("/v1/me").await;
    assert_eq!(
        off_me.ok(200)["limits"]["rate"]["minute"],
        json!({"limit": 0, "window_sec": 60, "remaining": null, "reset": null})
    );
}

async fn patch_changes_only_the_fields_sent(backend: Backend) {
    let app = TestApp::start(backend).await;

    let response = app.patch("/v1/me", json!({"wage": 5000})).await;
    let body = response.ok(200);
    assert_eq!(keys(body), PROFILE_KEYS, "no plan, scopes or limits");
    let mut expected = fresh_profile(&app);
    expected["wage"] = json!(5000.0);
    assert_eq!(*body, expected);

    let response = app
        .patch(
            "/v1/me",
            json!({"has_spouse": true, "monthly_living_cost": 1234.56, "is_entrepreneur": false}),
        )
        .await;
    expected["has_spouse"] = json!(true);
    expected["monthly_living_cost"] = json!(1234.56);
    expected["is_entrepreneur"] = json!(false);
    assert_eq!(*response.ok(200), expected);

    let response = app
        .patch("/v1/me", json!({"name": "Ana Souza", "has_children": true}))
        .await;
    expected["name"] = json!("Ana Souza");
    expected["has_children"] = json!(true);
    assert_eq!(*response.ok(200), expected);

    // An empty body changes nothing.
    assert_eq!(*app.patch("/v1/me", json!({})).await.ok(200), expected);

    // The changes are stored: GET shows them beside plan, scopes, limits.
    let me = app.get("/v1/me").await;
    assert_eq!(profile_part(me.ok(200)), expected);
    assert_eq!(me.body["scopes"], json!(["read", "write"]));
    assert_eq!(me.body["plan"]["frequency"], "MONTHLY");
}

async fn patch_null_clears_a_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    let full = json!({
        "name": "Ana",
        "wage": 8000.5,
        "monthly_living_cost": 3000,
        "has_spouse": true,
        "has_children": false,
        "is_entrepreneur": true,
    });
    app.patch("/v1/me", full).await.ok(200);

    let response = app
        .patch(
            "/v1/me",
            json!({"name": null, "wage": null, "has_spouse": null}),
        )
        .await;
    let expected = json!({
        "id": app.user.to_string(),
        "name": null,
        "wage": null,
        "monthly_living_cost": 3000.0,
        "has_spouse": null,
        "has_children": false,
        "is_entrepreneur": true,
    });
    assert_eq!(*response.ok(200), expected);
    assert_eq!(profile_part(app.get("/v1/me").await.ok(200)), expected);

    let response = app
        .patch(
            "/v1/me",
            json!({"monthly_living_cost": null, "has_children": null, "is_entrepreneur": null}),
        )
        .await;
    let mut cleared = fresh_profile(&app);
    cleared["name"] = Value::Null;
    assert_eq!(*response.ok(200), cleared);
    assert_eq!(profile_part(app.get("/v1/me").await.ok(200)), cleared);
}

async fn patch_amounts_are_exact(backend: Backend) {
    let app = TestApp::start(backend).await;
    let response = app
        .patch(
            "/v1/me",
            json!({"wage": 1234.56, "monthly_living_cost": 0.1}),
        )
        .await;
    assert_eq!(response.ok(200)["wage"], json!(1234.56));
    assert_eq!(response.body["monthly_living_cost"], json!(0.1));

    // The digits on the wire: two decimals, no binary-float noise.
    let (status, text) = app.raw(Method::GET, "/v1/me", None).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""wage":1234.56"#), "{text}");
    assert!(text.contains(r#""monthly_living_cost":0.10"#), "{text}");

    for (sent, printed) in [
        ("5000", "5000.00"),
        ("0", "0.00"),
        ("0.01", "0.01"),
        ("1500.5", "1500.50"),
        ("99999999.99", "99999999.99"),
        ("0.29", "0.29"),
    ] {
        let value: Value = serde_json::from_str(sent).unwrap();
        let (status, text) = app
            .raw(Method::PATCH, "/v1/me", Some(json!({"wage": value})))
            .await;
        assert_eq!(status, 200, "{sent}: {text}");
        assert!(
            text.contains(&format!(r#""wage":{printed}"#)),
            "{sent} should print as {printed}: {text}"
        );
        let (_, text) = app.raw(Method::GET, "/v1/me", None).await;
        assert!(
            text.contains(&format!(r#""wage":{printed}"#)),
            "{sent} should be stored as {printed}: {text}"
        );
    }
}

async fn patch_name_limits(backend: Backend) {
    let app = TestApp::start(backend).await;
    // 200 characters is the limit, counted in characters, not bytes.
    let longest = "é".repeat(200);
    let response = app.patch("/v1/me", json!({"name": longest})).await;
    assert_eq!(response.ok(200)["name"], longest);

    let too_long = "a".repeat(201);
    app.patch("/v1/me", json!({"name": too_long}))
        .await
        .invalid(&["name"]);
    app.patch("/v1/me", json!({"name": "é".repeat(201)}))
        .await
        .invalid(&["name"]);
    app.patch("/v1/me", json!({"name": ""}))
        .await
        .invalid(&["name"]);
    app.patch("/v1/me", json!({"name": "   "}))
        .await
        .invalid(&["name"]);
    // The refused changes left the name as it was.
    assert_eq!(app.get("/v1/me").await.ok(200)["name"], longest);
}

async fn patch_invalid_values_name_the_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"wage": -1}), vec!["wage"]),
        (json!({"wage": -0.01}), vec!["wage"]),
        (
            json!({"monthly_living_cost": -100}),
            vec!["monthly_living_cost"],
        ),
        (json!({"wage": 10.123}), vec!["wage"]),
        (
            json!({"monthly_living_cost": 0.001}),
            vec!["monthly_living_cost"],
        ),
        (json!({"wage": "1000"}), vec!["wage"]),
        (json!({"wage": true}), vec!["wage"]),
        (json!({"has_spouse": "yes"}), vec!["has_spouse"]),
        (json!({"has_spouse": "true"}), vec!["has_spouse"]),
        (json!({"has_children": 1}), vec!["has_children"]),
        (json!({"is_entrepreneur": [true]}), vec!["is_entrepreneur"]),
        (json!({"name": 5}), vec!["name"]),
        (json!({"nome": "Ana"}), vec!["nome"]),
        (json!({"plan": {"premium_access": false}}), vec!["plan"]),
        (json!({"name": "Ana", "scopes": ["read"]}), vec!["scopes"]),
        // Every bad value is named, not just the first.
        (
            json!({"name": "x".repeat(201), "wage": -5, "monthly_living_cost": -1}),
            vec!["name", "wage", "monthly_living_cost"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.patch("/v1/me", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    // None of them changed anything.
    assert_eq!(
        profile_part(app.get("/v1/me").await.ok(200)),
        fresh_profile(&app)
    );
}

async fn patch_malformed_json_is_a_400(backend: Backend) {
    let app = TestApp::start(backend).await;
    for body in [
        r#"{"name": "#,
        r#"{"name": "Ana",}"#,
        r#"{name: "Ana"}"#,
        r#"{"name": "Ana"} trailing"#,
        "[]",
        r#""Ana""#,
        "",
        "   ",
    ] {
        let response = patch_raw(&app, Some("application/json"), body).await;
        assert_eq!(response.status, 400, "{body:?}: {}", response.body);
        response.invalid(&["body"]);
    }
    assert_eq!(
        profile_part(app.get("/v1/me").await.ok(200)),
        fresh_profile(&app)
    );
}

async fn patch_needs_a_json_content_type(backend: Backend) {
    let app = TestApp::start(backend).await;
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
    ] {
        let response = patch_raw(&app, Some(content_type), r#"{"name": "Ana"}"#).await;
        response.problem(415, "unsupported_media_type");
    }
    let response = patch_raw(&app, Some("application/x-www-form-urlencoded"), "name=Ana").await;
    response.problem(415, "unsupported_media_type");
    assert_eq!(app.get("/v1/me").await.ok(200)["name"], "Test");

    // JSON with parameters, or a +json type, is fine.
    let response = patch_raw(
        &app,
        Some("application/json; charset=utf-8"),
        r#"{"name": "Ana"}"#,
    )
    .await;
    assert_eq!(response.ok(200)["name"], "Ana");
    let response = patch_raw(
        &app,
        Some("application/merge-patch+json"),
        r#"{"name": "Bia"}"#,
    )
    .await;
    assert_eq!(response.ok(200)["name"], "Bia");
}

async fn patch_needs_the_write_scope(backend: Backend) {
    let app = TestApp::start(backend).await;
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    app.call(
        Method::PATCH,
        "/v1/me",
        Some(&read_only),
        Some(json!({"name": "Ana", "wage": 10})),
    )
    .await
    .problem(403, "insufficient_scope");
    assert_eq!(
        profile_part(app.get("/v1/me").await.ok(200)),
        fresh_profile(&app)
    );
}

on_both_backends!(
    me_has_the_full_shape,
    me_reports_the_configured_rate_limits,
    patch_changes_only_the_fields_sent,
    patch_null_clears_a_field,
    patch_amounts_are_exact,
    patch_name_limits,
    patch_invalid_values_name_the_field,
    patch_malformed_json_is_a_400,
    patch_needs_a_json_content_type,
    patch_needs_the_write_scope,
    deleting_a_user_takes_everything_of_theirs,
);

/// The operator's `users delete`: everything of the user goes in one
/// transaction (cards pointing at banks, transfers, bill payments, rules,
/// tags, categories), and nothing of another user.
async fn deleting_a_user_takes_everything_of_theirs(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    let savings = app.bank("Poupança").await;
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 80, "description": "Mercado",
        "date": "2026-10-15"}),
    )
    .await;
    app.patch(
        &format!("/v1/transactions/mocked-bill:{card}:202611"),
        json!({}),
    )
    .await
    .ok(200);
    app.post(
        "/v1/transfers",
        json!({"from_account_id": bank, "to_account_id": savings,
        "amount": 10, "description": "Reserva"}),
    )
    .await
    .ok(201);
    app.post(
        "/v1/transactions",
        json!({"account_id": bank, "type": "DEBIT", "amount": 5,
        "description": "Assinatura", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await
    .ok(201);
    app.post("/v1/tags", json!({"title": "Casa", "color_hex": "#112233"}))
        .await
        .ok(201);
    app.post("/v1/categories", json!({"title": "Minha"}))
        .await
        .ok(201);
    let (other, other_key) = app.new_user().await;
    app.account_as(&other_key, json!({"type": "BANK", "initial_balance": 7}))
        .await;

    app.store.delete_user(app.user).await.expect("delete");
    app.get("/v1/me").await.problem(401, "unauthorized");
    assert!(matches!(
        app.store.delete_user(app.user).await,
        Err(cofre_store::StoreError::NotFound)
    ));
    let theirs = app
        .call(Method::GET, "/v1/accounts", Some(&other_key), None)
        .await;
    assert_eq!(theirs.ok(200)["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        app.store
            .list_users()
            .await
            .unwrap()
            .iter()
            .map(|u| u.id)
            .collect::<Vec<_>>(),
        [other]
    );
}
