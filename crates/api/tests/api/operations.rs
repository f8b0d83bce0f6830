//! Public endpoints, documentation, and what every response carries.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::json;

use cofre_api::ApiConfig;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

async fn health_readiness_and_metrics(backend: Backend) {
    let app = TestApp::start(backend).await;
    for path in ["/healthz", "/readyz"] {
        let response = app.call(Method::GET, path, None, None).await;
        assert_eq!(response.ok(200), &json!({"status": "ok"}));
    }
    app.get("/v1/me").await.ok(200);
    let metrics = app.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metrics.status, 200);
    let text = metrics.body.as_str().unwrap_or_default();
    assert!(text.contains("http_requests_total"), "{text}");
    assert!(text.contains("route=\"/v1/me\""), "{text}");
}

async fn openapi_and_docs_are_public(backend: Backend) {
    let app = TestApp::start(backend).await;
    let doc = app.call(Method::GET, "/v1/openapi.json", None, None).await;
    let body = doc.ok(200);
    assert!(body["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = body["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/v1/me", &["get", "patch"][..]),
        ("/v1/accounts", &["get", "post"]),
        ("/v1/accounts/{id}", &["get", "patch", "delete"]),
        ("/v1/categories", &["get", "post"]),
        ("/v1/categories/{id}", &["patch"]),
        ("/v1/tags", &["get", "post"]),
        ("/v1/transactions", &["get", "post"]),
        ("/v1/transactions/{id}", &["get", "patch", "delete"]),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
        ("/metrics", &["get"]),
    ] {
        for method in methods {
            let op = &paths[path][*method];
            assert!(op.is_object(), "{method} {path} undocumented");
            assert!(op["responses"].as_object().is_some_and(|r| !r.is_empty()));
        }
    }
    let list_params: Vec<&str> = paths["/v1/transactions"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in [
        "from",
        "to",
        "view",
        "status",
        "type",
        "account_id",
        "category_id",
        "include_subcategories",
        "tag_id",
        "no_category",
        "no_tags",
        "is_recurring",
        "is_installments",
        "bill_id",
        "sub_type",
        "hidden",
        "search",
        "limit",
        "cursor",
    ] {
        assert!(list_params.contains(&name), "parameter {name} undocumented");
    }
    let docs = app.call(Method::GET, "/docs/", None, None).await;
    assert_eq!(docs.status, 200);
    assert!(docs.body.as_str().unwrap_or_default().contains("swagger"));
}

async fn request_ids_are_made_or_echoed(backend: Backend) {
    let app = TestApp::start(backend).await;
    let made = app.get("/v1/me").await;
    let id = made.header("x-request-id").expect("x-request-id");
    assert_eq!(id.len(), 36);
    let request = Request::builder()
        .uri("/healthz")
        .header("x-request-id", "my-trace-42")
        .body(Body::empty())
        .unwrap();
    let echoed = app.send(request).await;
    assert_eq!(echoed.header("x-request-id"), Some("my-trace-42"));
}

async fn unknown_routes_methods_and_bodies_are_problems(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.get("/v1/nothing-here").await.problem(404, "not_found");
    app.call(Method::PUT, "/v1/accounts", Some(&app.key), None)
        .await
        .problem(405, "method_not_allowed");
    let huge = format!("{{\"title\": \"{}\"}}", "x".repeat(1_100_000));
    let request = Request::builder()
        .method(Method::POST)
        .uri("/v1/tags")
        .header("authorization", format!("Bearer {}", app.key))
        .header("content-type", "application/json")
        .body(Body::from(huge))
        .unwrap();
    app.send(request).await.problem(413, "payload_too_large");
    let form = Request::builder()
        .method(Method::POST)
        .uri("/v1/tags")
        .header("authorization", format!("Bearer {}", app.key))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("title=x"))
        .unwrap();
    app.send(form).await.problem(415, "unsupported_media_type");
    // Without a content type, the body is still read as JSON.
    let bare = Request::builder()
        .method(Method::POST)
        .uri("/v1/tags")
        .header("authorization", format!("Bearer {}", app.key))
        .body(Body::from(r##"{"title": "Bare", "color_hex": "#000000"}"##))
        .unwrap();
    assert_eq!(app.send(bare).await.status, 201);
    for body in ["", "{", "[1]", "null", "{\"title\": \"a\"} trailing"] {
        let request = Request::builder()
            .method(Method::POST)
            .uri("/v1/tags")
            .header("authorization", format!("Bearer {}", app.key))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        app.send(request).await.invalid(&["body"]);
    }
}

async fn the_front_door_points_to_the_docs(backend: Backend) {
    let app = TestApp::start(backend).await;
    let page = app.call(Method::GET, "/", None, None).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    for link in [
        "href=\"/docs\"",
        "href=\"/v1/openapi.json\"",
        "href=\"/healthz\"",
        "href=\"/readyz\"",
    ] {
        assert!(page.text.contains(link), "{link} in {}", page.text);
    }
    assert!(page.text.contains(env!("CARGO_PKG_VERSION")));
    let index = app.call(Method::GET, "/v1", None, None).await;
    assert_eq!(
        index.ok(200),
        &json!({"name": "cofre", "version": env!("CARGO_PKG_VERSION"), "docs": "/docs",
            "openapi": "/v1/openapi.json", "healthz": "/healthz", "readyz": "/readyz"})
    );
    // The links lead somewhere.
    for path in ["/docs/", "/v1/openapi.json", "/healthz", "/readyz"] {
        assert_eq!(
            app.call(Method::GET, path, None, None).await.status,
            200,
            "{path}"
        );
    }
}

async fn metrics_can_be_kept_private_with_a_token(backend: Backend) {
    let token = "a-long-metrics-token-for-prometheus";
    let config = ApiConfig {
        metrics_token: Some(token.into()),
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let bare = app.call(Method::GET, "/metrics", None, None).await;
    bare.problem(401, "unauthorized");
    assert!(bare.text.contains("metrics token"), "{}", bare.text);
    // An API key is not the metrics token.
    let key = app.key.clone();
    app.call(Method::GET, "/metrics", Some(&key), None)
        .await
        .problem(401, "unauthorized");
    let right = app.call(Method::GET, "/metrics", Some(token), None).await;
    assert_eq!(right.status, 200);
    assert_eq!(
        right.header("content-type"),
        Some("text/plain; version=0.0.4")
    );
    // Health checks stay public.
    assert_eq!(
        app.call(Method::GET, "/healthz", None, None).await.status,
        200
    );
    assert_eq!(
        app.call(Method::GET, "/readyz", None, None).await.status,
        200
    );
}

on_both_backends!(
    metrics_can_be_kept_private_with_a_token,
    the_front_door_points_to_the_docs,
    health_readiness_and_metrics,
    openapi_and_docs_are_public,
    request_ids_are_made_or_echoed,
    unknown_routes_methods_and_bodies_are_problems,
);

/// The committed `docs/openapi.json` is what the code generates. Run with
/// `UPDATE_OPENAPI=1` to rewrite it after changing the API.
#[test]
fn committed_openapi_matches_the_code() {
    let generated = cofre_api::openapi().to_pretty_json().expect("openapi json") + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    if std::env::var("UPDATE_OPENAPI").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write docs/openapi.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is out of date: run `UPDATE_OPENAPI=1 cargo test -p cofre-api --test api committed_openapi` and commit it"
    );
}
