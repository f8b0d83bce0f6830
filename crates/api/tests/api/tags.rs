//! `/v1/tags`: creation, per-user case-insensitive uniqueness, validation,
//! ordering, and the short form of a tag inside a transaction.

use axum::http::Method;
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

async fn list_as(app: &TestApp, key: &str) -> Vec<Value> {
    let response = app.call(Method::GET, "/v1/tags", Some(key), None).await;
    let body = response.ok(200);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["data"]
    );
    body["data"].as_array().expect("data array").clone()
}

async fn list(app: &TestApp) -> Vec<Value> {
    list_as(app, &app.key).await
}

async fn create(app: &TestApp, title: &str, color: &str) -> Value {
    app.post("/v1/tags", json!({"title": title, "color_hex": color}))
        .await
        .ok(201)
        .clone()
}

fn titles(list: &[Value]) -> Vec<&str> {
    list.iter().map(|t| t["title"].as_str().unwrap()).collect()
}

async fn creates_a_tag(backend: Backend) {
    let app = TestApp::start(backend).await;
    assert_eq!(list(&app).await, Vec::<Value>::new());

    let response = app
        .post(
            "/v1/tags",
            json!({"title": "  Viagem  ", "color_hex": "#00ff7f"}),
        )
        .await;
    assert_eq!(response.status, 201, "{}", response.body);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let tag = response.body.clone();
    let id = tag["id"].as_str().expect("id").to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    assert_eq!(
        tag,
        json!({
            "id": id,
            "title": "Viagem",
            "color_hex": "#00FF7F",
            "created_at": "2026-11-22T15:00:00.000Z",
        })
    );
    assert_eq!(list(&app).await, vec![tag.clone()]);

    // 200 characters (not bytes) is the limit.
    let long = "ç".repeat(200);
    assert_eq!(create(&app, &long, "#000000").await["title"], long);
    let second = create(&app, "Trabalho", "#ABCDEF").await;
    assert_ne!(second["id"], tag["id"]);
    assert_eq!(list(&app).await.len(), 3);
}

async fn titles_are_unique_per_user_ignoring_case(backend: Backend) {
    let app = TestApp::start(backend).await;
    let original = create(&app, "Viagem", "#112233").await;

    for title in ["Viagem", "viagem", "VIAGEM", "  vIaGeM "] {
        let response = app
            .post("/v1/tags", json!({"title": title, "color_hex": "#445566"}))
            .await;
        response.problem(409, "title_conflict");
        assert!(response.body.get("errors").is_none(), "{}", response.body);
    }
    assert_eq!(list(&app).await, vec![original.clone()]);

    // Another user may use the same title.
    let (_, other) = app.new_user().await;
    let theirs = app
        .call(
            Method::POST,
            "/v1/tags",
            Some(&other),
            Some(json!({"title": "VIAGEM", "color_hex": "#445566"})),
        )
        .await;
    let theirs = theirs.ok(201).clone();
    assert_eq!(theirs["title"], "VIAGEM");
    assert_ne!(theirs["id"], original["id"]);
    assert_eq!(list_as(&app, &other).await, vec![theirs]);
    assert_eq!(list(&app).await, vec![original]);

    // Case is folded beyond ASCII too.
    create(&app, "Época", "#112233").await;
    app.post(
        "/v1/tags",
        json!({"title": "ÉPOCA", "color_hex": "#112233"}),
    )
    .await
    .problem(409, "title_conflict");

    // A title that only starts the same is a different tag.
    create(&app, "Viagem 2027", "#112233").await;
    assert_eq!(
        titles(&list(&app).await),
        ["Época", "Viagem", "Viagem 2027"]
    );
}

async fn creation_rejects_bad_input(backend: Backend) {
    let app = TestApp::start(backend).await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"color_hex": "#112233"}), vec!["title"]),
        (json!({"title": "Casa"}), vec!["color_hex"]),
        (json!({}), vec!["title", "color_hex"]),
        (
            json!({"title": null, "color_hex": null}),
            vec!["title", "color_hex"],
        ),
        (json!({"title": "", "color_hex": "#112233"}), vec!["title"]),
        (
            json!({"title": "   ", "color_hex": "#112233"}),
            vec!["title"],
        ),
        (
            json!({"title": "ç".repeat(201), "color_hex": "#112233"}),
            vec!["title"],
        ),
        (
            json!({"title": "Casa", "color_hex": "red"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Casa", "color_hex": "112233"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Casa", "color_hex": "#11223"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Casa", "color_hex": "#1122334"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Casa", "color_hex": "#11223G"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "", "color_hex": "nope"}),
            vec!["title", "color_hex"],
        ),
        (json!({"title": 1, "color_hex": "#112233"}), vec!["title"]),
        (
            json!({"title": "Casa", "color_hex": "#112233", "icon_id": "ic-home"}),
            vec!["icon_id"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.post("/v1/tags", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    let malformed = app
        .send(
            axum::http::Request::builder()
                .method(Method::POST)
                .uri("/v1/tags")
                .header("authorization", format!("Bearer {}", app.key))
                .header("content-type", "application/json")
                .body(axum::body::Body::from("{\"title\": "))
                .unwrap(),
        )
        .await;
    malformed.invalid(&["body"]);
    assert_eq!(list(&app).await, Vec::<Value>::new());
}

async fn list_is_ordered_by_title(backend: Backend) {
    let app = TestApp::start(backend).await;
    // Created in an order that is neither the answer nor its reverse, with
    // titles a byte-wise or case-sensitive sort would misplace.
    for title in [
        "zebra",
        "Casa",
        "Ébano",
        "Água",
        "banco",
        "Educação",
        "eletro",
    ] {
        create(&app, title, "#123456").await;
    }
    let all = list(&app).await;
    assert_eq!(
        titles(&all),
        [
            "Água",
            "banco",
            "Casa",
            "Ébano",
            "Educação",
            "eletro",
            "zebra"
        ]
    );
    for tag in &all {
        let mut keys: Vec<&str> = tag
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["color_hex", "created_at", "id", "title"]);
    }
}

async fn tags_appear_inside_transactions_in_short_form(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let work = create(&app, "Trabalho", "#aa0000").await;
    let trip = create(&app, "Álbum de viagem", "#00AA00").await;
    let short = |tag: &Value| json!({"id": tag["id"], "title": tag["title"], "color_hex": tag["color_hex"]});

    let tx = app
        .tx(json!({
            "account_id": account,
            "type": "DEBIT",
            "amount": 10,
            "description": "Táxi",
            "tag_ids": [work["id"], trip["id"], work["id"]],
        }))
        .await;
    // Exactly {id, title, color_hex}, each tag once, ordered by title.
    assert_eq!(tx["tags"], json!([short(&trip), short(&work)]));
    let id = tx["id"].as_str().unwrap();
    let read = app.get(&format!("/v1/transactions/{id}")).await;
    assert_eq!(read.ok(200)["transaction"]["tags"], tx["tags"]);

    // Replacing the tags by PATCH shows the new set.
    app.patch(
        &format!("/v1/transactions/{id}"),
        json!({"tag_ids": [work["id"]]}),
    )
    .await
    .ok(200);
    let read = app.get(&format!("/v1/transactions/{id}")).await;
    assert_eq!(read.ok(200)["transaction"]["tags"], json!([short(&work)]));

    // And the listing carries the same short form.
    let listed = app
        .get("/v1/transactions?from=2026-11-22&to=2026-11-22")
        .await;
    assert_eq!(listed.ok(200)["data"][0]["tags"], json!([short(&work)]));
}

async fn tags_are_renamed_and_recoloured(backend: Backend) {
    let app = TestApp::start(backend).await;
    let viagem = create(&app, "Viagem", "#00FF00").await;
    create(&app, "Casa", "#112233").await;
    let id = viagem["id"].as_str().unwrap();
    let account = app.bank("Conta").await;
    let row = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Hotel",
            "tag_ids": [id]}),
        )
        .await;
    let renamed = app
        .patch(&format!("/v1/tags/{id}"), json!({"title": " Férias "}))
        .await;
    assert_eq!(renamed.ok(200)["title"], "Férias");
    assert_eq!(renamed.body["color_hex"], "#00FF00");
    let recoloured = app
        .patch(&format!("/v1/tags/{id}"), json!({"color_hex": "#abcdef"}))
        .await;
    assert_eq!(recoloured.ok(200)["color_hex"], "#ABCDEF");
    assert_eq!(recoloured.body["title"], "Férias");
    // The row shows the tag as it is now.
    let stored = app
        .get(&format!("/v1/transactions/{}", row["id"].as_str().unwrap()))
        .await;
    assert_eq!(stored.ok(200)["transaction"]["tags"][0]["title"], "Férias");
    // Another tag's title (any case), nothing sent, bad values, unknown ids.
    app.patch(&format!("/v1/tags/{id}"), json!({"title": "CASA"}))
        .await
        .problem(409, "title_conflict");
    app.patch(&format!("/v1/tags/{id}"), json!({}))
        .await
        .invalid(&["body"]);
    app.patch(
        &format!("/v1/tags/{id}"),
        json!({"title": " ", "color_hex": "red"}),
    )
    .await
    .invalid(&["title", "color_hex"]);
    app.patch(
        "/v1/tags/00000000-0000-4000-8000-000000000000",
        json!({"title": "x"}),
    )
    .await
    .problem(404, "not_found");
    // Its own title in another case is fine.
    app.patch(&format!("/v1/tags/{id}"), json!({"title": "FÉRIAS"}))
        .await
        .ok(200);
}

async fn a_deleted_tag_leaves_rows_and_series(backend: Backend) {
    let app = TestApp::start(backend).await;
    let gone = create(&app, "Viagem", "#00FF00").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let kept = create(&app, "Casa", "#112233").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let account = app.bank("Conta").await;
    let row = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Hotel",
            "date": "2026-11-20", "tag_ids": [gone, kept]}),
        )
        .await;
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 30, "description": "Aluguel",
                "date": "2026-12-05", "tag_ids": [gone, kept], "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await;
    let rule_id = rule.ok(201)["recurrence_id"].as_str().unwrap().to_owned();

    assert_eq!(app.delete(&format!("/v1/tags/{gone}")).await.status, 204);
    let titles: Vec<Value> = list(&app)
        .await
        .iter()
        .map(|t| t["title"].clone())
        .collect();
    assert_eq!(titles, [json!("Casa")]);
    let stored = app
        .get(&format!("/v1/transactions/{}", row["id"].as_str().unwrap()))
        .await;
    let tags = stored.ok(200)["transaction"]["tags"].clone();
    assert_eq!(tags.as_array().unwrap().len(), 1);
    assert_eq!(tags[0]["id"], kept.as_str());
    // The rule's occurrences carry only the kept tag, and storing one
    // (which writes its tags) works.
    let handle = format!("mocked-recurrence:{rule_id}:2026-12-05");
    let projected = app.get(&format!("/v1/transactions/{handle}")).await;
    assert_eq!(
        projected.ok(200)["transaction"]["tags"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.patch(
        &format!("/v1/transactions/{handle}"),
        json!({"amount": 31, "scope": "this"}),
    )
    .await
    .ok(200);
    // Gone is gone.
    app.delete(&format!("/v1/tags/{gone}"))
        .await
        .problem(404, "not_found");
}

/// A row's tags as the row and the list show them after every kind of
/// change: tags replaced, all removed, added again, one deleted. The
/// store keeps a count of each row's tags (the schema baseline) and looks
/// them up only when it is above zero; a count gone wrong hides tags or
/// lists a tagged row among those without.
async fn a_rows_tags_follow_every_change(backend: Backend) {
    let app = TestApp::start(backend).await;
    let a = create(&app, "Alfa", "#111111").await["id"].clone();
    let b = create(&app, "Beta", "#222222").await["id"].clone();
    let account = app.bank("Conta").await;
    let row = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Feira",
            "date": "2026-11-20", "tag_ids": [a, b]}),
        )
        .await;
    let id = row["id"].as_str().unwrap().to_owned();
    let check = |expected: Vec<Value>| {
        let app = &app;
        let id = &id;
        async move {
            let read = app.get(&format!("/v1/transactions/{id}")).await;
            let tags: Vec<Value> = read.ok(200)["transaction"]["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].clone())
                .collect();
            assert_eq!(tags, expected, "the row by id");
            let page = app
                .get("/v1/transactions?from=2026-11-01&to=2026-11-30")
                .await;
            let listed = page.ok(200)["data"][0]["tags"].clone();
            assert_eq!(listed.as_array().unwrap().len(), expected.len(), "the list");
            let untagged = app
                .get("/v1/transactions?from=2026-11-01&to=2026-11-30&no_tags=true")
                .await;
            let count = untagged.ok(200)["data"].as_array().unwrap().len();
            assert_eq!(count, usize::from(expected.is_empty()), "no_tags");
        }
    };
    check(vec![a.clone(), b.clone()]).await;
    let edit = |tags: Value| {
        let app = &app;
        let id = &id;
        async move {
            app.patch(
                &format!("/v1/transactions/{id}"),
                json!({"tag_ids": tags, "scope": "this"}),
            )
            .await
            .ok(200);
        }
    };
    edit(json!([b])).await;
    check(vec![b.clone()]).await;
    edit(json!([])).await;
    check(vec![]).await;
    edit(json!([a, b])).await;
    check(vec![a.clone(), b.clone()]).await;
    assert_eq!(
        app.delete(&format!("/v1/tags/{}", a.as_str().unwrap()))
            .await
            .status,
        204
    );
    check(vec![b.clone()]).await;
    assert_eq!(
        app.delete(&format!("/v1/tags/{}", b.as_str().unwrap()))
            .await
            .status,
        204
    );
    check(vec![]).await;
}

on_both_backends!(
    a_rows_tags_follow_every_change,
    tags_are_renamed_and_recoloured,
    a_deleted_tag_leaves_rows_and_series,
    creates_a_tag,
    titles_are_unique_per_user_ignoring_case,
    creation_rejects_bad_input,
    list_is_ordered_by_title,
    tags_appear_inside_transactions_in_short_form,
);
