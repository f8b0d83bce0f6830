//! `/v1/categories`: the seeded system categories, the user's own ones,
//! ordering, creation, edits, cycles and per-user archiving.

use axum::http::Method;
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, NOW, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

/// Titles the decisions promise among the seeded system categories, all
/// top-level.
const SEEDED_TOP_LEVEL: &[&str] = &[
    "Alimentação",
    "Mercado",
    "Transporte",
    "Moradia",
    "Saúde",
    "Educação",
    "Lazer",
    "Compras",
    "Assinaturas",
    "Salário",
    "Outras receitas",
    "Investimentos",
    "Impostos e taxas",
    "Transferência",
    "Pagamento de fatura",
];

/// Lower case with the accents of Portuguese removed: the order the list
/// promises, independent of any database collation.
fn folded(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            other => other,
        })
        .collect()
}

async fn list_as(app: &TestApp, key: &str) -> Vec<Value> {
    let response = app
        .call(Method::GET, "/v1/categories", Some(key), None)
        .await;
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

#[track_caller]
fn by_title<'a>(list: &'a [Value], title: &str) -> &'a Value {
    let found: Vec<&Value> = list.iter().filter(|c| c["title"] == title).collect();
    assert_eq!(found.len(), 1, "exactly one {title:?} in {list:?}");
    found[0]
}

#[track_caller]
fn by_id<'a>(list: &'a [Value], id: &str) -> &'a Value {
    list.iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("category {id} not listed"))
}

fn id_of(category: &Value) -> String {
    category["id"].as_str().expect("id").to_owned()
}

/// Creates an own category (201) and returns it.
async fn create(app: &TestApp, body: Value) -> Value {
    app.post("/v1/categories", body).await.ok(201).clone()
}

async fn system_id(app: &TestApp, title: &str) -> String {
    let all = list(app).await;
    let found = by_title(&all, title);
    assert_eq!(found["system"], true);
    id_of(found)
}

async fn lists_system_categories(backend: Backend) {
    let app = TestApp::start(backend).await;
    let all = list(&app).await;
    assert!(all.len() >= SEEDED_TOP_LEVEL.len(), "{all:?}");
    for category in &all {
        let object = category.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "archived",
                "color_hex",
                "created_at",
                "icon_id",
                "id",
                "parent_id",
                "system",
                "title"
            ]
        );
        // A brand-new user has only system categories, none archived.
        assert_eq!(category["system"], true, "{category}");
        assert_eq!(category["archived"], false, "{category}");
        assert!(uuid::Uuid::parse_str(category["id"].as_str().unwrap()).is_ok());
        // Every parent is itself in the flat list.
        if let Some(parent) = category["parent_id"].as_str() {
            by_id(&all, parent);
        }
    }
    for title in SEEDED_TOP_LEVEL {
        assert_eq!(by_title(&all, title)["parent_id"], Value::Null, "{title}");
    }

    let food = by_title(&all, "Alimentação");
    assert_eq!(food["icon_id"], "ic-food");
    assert_eq!(food["color_hex"], "#E67E22");
    let restaurants = by_title(&all, "Restaurantes");
    assert_eq!(restaurants["parent_id"], food["id"]);
    assert_eq!(restaurants["system"], true);
    assert_eq!(
        by_title(&all, "Água")["parent_id"],
        by_title(&all, "Moradia")["id"]
    );

    // The same system categories, with the same ids, for every user.
    let (_, other) = app.new_user().await;
    let theirs = list_as(&app, &other).await;
    assert_eq!(theirs, all);
}

async fn list_mixes_own_categories_ordered_by_folded_title(backend: Backend) {
    let app = TestApp::start(backend).await;
    // Titles a byte-wise or case-sensitive sort would misplace.
    for title in [
        "zelador",
        "Ábaco",
        "bolsa de estudos",
        "ÉPOCA",
        "emprestimo",
    ] {
        create(&app, json!({ "title": title })).await;
    }
    let (_, other) = app.new_user().await;
    app.call(
        Method::POST,
        "/v1/categories",
        Some(&other),
        Some(json!({"title": "Segredo do outro"})),
    )
    .await
    .ok(201);

    let all = list(&app).await;
    let titles: Vec<&str> = all.iter().map(|c| c["title"].as_str().unwrap()).collect();
    let keys: Vec<String> = titles.iter().map(|t| folded(t)).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "titles: {titles:?}");

    let position = |title: &str| titles.iter().position(|t| *t == title).unwrap();
    assert_eq!(position("Ábaco"), 0, "{titles:?}");
    assert_eq!(position("Água") + 1, position("Alimentação"), "{titles:?}");
    assert!(position("bolsa de estudos") < position("Cinema e shows"));
    assert!(position("Educação") < position("emprestimo"));
    assert!(position("emprestimo") < position("Energia"));
    assert!(position("Energia") < position("ÉPOCA"));
    assert_eq!(position("zelador"), titles.len() - 1, "{titles:?}");

    for title in [
        "zelador",
        "Ábaco",
        "bolsa de estudos",
        "ÉPOCA",
        "emprestimo",
    ] {
        let own = by_title(&all, title);
        assert_eq!(own["system"], false);
        assert_eq!(own["archived"], false);
    }
    assert!(!titles.contains(&"Segredo do outro"));
}

async fn creates_own_categories(backend: Backend) {
    let app = TestApp::start(backend).await;
    let food = system_id(&app, "Alimentação").await;

    let sushi = create(
        &app,
        json!({
            "title": "  Sushi  ",
            "parent_id": food,
            "icon_name": "Restaurant",
            "color_hex": "#a1b2c3",
        }),
    )
    .await;
    let sushi_id = id_of(&sushi);
    assert!(uuid::Uuid::parse_str(&sushi_id).is_ok());
    assert_eq!(
        sushi,
        json!({
            "id": sushi_id,
            "title": "Sushi",
            "parent_id": food,
            "icon_id": "ic-restaurant",
            "color_hex": "#A1B2C3",
            "system": false,
            "archived": false,
            "created_at": "2026-11-22T15:00:00.000Z",
        })
    );
    assert_eq!(sushi["created_at"].as_str().unwrap()[..19], NOW[..19]);

    // Nested under an own category, icon by id, no colour.
    let temaki = create(
        &app,
        json!({"title": "Temaki", "parent_id": sushi_id, "icon_id": "ic-food"}),
    )
    .await;
    assert_eq!(temaki["parent_id"], sushi_id.as_str());
    assert_eq!(temaki["icon_id"], "ic-food");
    assert_eq!(temaki["color_hex"], Value::Null);
    assert_eq!(temaki["system"], false);

    // Only a title: top level, no icon, no colour.
    let plain = create(&app, json!({"title": "Diversos"})).await;
    assert_eq!(plain["parent_id"], Value::Null);
    assert_eq!(plain["icon_id"], Value::Null);
    assert_eq!(plain["color_hex"], Value::Null);

    // 200 characters (not bytes) is the limit.
    let long = "é".repeat(200);
    assert_eq!(create(&app, json!({"title": long})).await["title"], long);

    // The list shows them as created.
    let all = list(&app).await;
    assert_eq!(by_id(&all, &sushi_id), &sushi);
    assert_eq!(by_id(&all, temaki["id"].as_str().unwrap()), &temaki);
    assert_eq!(by_id(&all, plain["id"].as_str().unwrap()), &plain);
}

async fn creation_rejects_bad_input(backend: Backend) {
    let app = TestApp::start(backend).await;
    let before = list(&app).await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["title"]),
        (json!({"title": null}), vec!["title"]),
        (json!({"title": ""}), vec!["title"]),
        (json!({"title": "   "}), vec!["title"]),
        (json!({"title": "é".repeat(201)}), vec!["title"]),
        (
            json!({"title": "Cor", "color_hex": "red"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Cor", "color_hex": "#12345"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Cor", "color_hex": "#GG0000"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Cor", "color_hex": "A1B2C3"}),
            vec!["color_hex"],
        ),
        (
            json!({"title": "Ícone", "icon_name": "unicorn"}),
            vec!["icon_name"],
        ),
        (
            json!({"title": "Ícone", "icon_id": "ic-unicorn"}),
            vec!["icon_id"],
        ),
        (
            json!({"title": "Pai", "parent_id": "not-a-uuid"}),
            vec!["parent_id"],
        ),
        (
            json!({"title": "Pai", "parent_id": ZERO_ID}),
            vec!["parent_id"],
        ),
        (
            json!({"title": "Campo", "archived_at": "x"}),
            vec!["archived_at"],
        ),
        (json!({"title": 5}), vec!["title"]),
        (
            json!({"title": "", "color_hex": "nope"}),
            vec!["title", "color_hex"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.post("/v1/categories", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    // Malformed JSON is a 400, not a 500.
    let malformed = app
        .send(
            axum::http::Request::builder()
                .method(Method::POST)
                .uri("/v1/categories")
                .header("authorization", format!("Bearer {}", app.key))
                .header("content-type", "application/json")
                .body(axum::body::Body::from("{\"title\": \"x\""))
                .unwrap(),
        )
        .await;
    malformed.problem(400, "validation_error");
    // Nothing was created by any of them.
    assert_eq!(list(&app).await, before);
}

async fn patches_own_categories(backend: Backend) {
    let app = TestApp::start(backend).await;
    let food = system_id(&app, "Alimentação").await;
    let category = create(
        &app,
        json!({"title": "Sushi", "parent_id": food, "color_hex": "#111111"}),
    )
    .await;
    let id = id_of(&category);
    let path = format!("/v1/categories/{id}");
    let mut expected = category.clone();

    // Each change answers the whole updated category and is kept; the
    // fields not sent stay as they were.
    let steps: Vec<(Value, Value)> = vec![
        (json!({"title": " Japonesa "}), json!({"title": "Japonesa"})),
        (json!({"parent_id": null}), json!({"parent_id": null})),
        (
            json!({"color_hex": "#abcdef"}),
            json!({"color_hex": "#ABCDEF"}),
        ),
        (json!({"icon_name": "food"}), json!({"icon_id": "ic-food"})),
        (json!({"archived": true}), json!({"archived": true})),
        (
            json!({"title": "Comida japonesa"}),
            json!({"title": "Comida japonesa"}),
        ),
        (json!({"archived": false}), json!({"archived": false})),
        (json!({"parent_id": food}), json!({"parent_id": food})),
        (json!({"color_hex": null}), json!({"color_hex": null})),
    ];
    for (body, change) in steps {
        for (field, value) in change.as_object().unwrap() {
            expected[field] = value.clone();
        }
        let response = app.patch(&path, body.clone()).await;
        assert_eq!(response.ok(200), &expected, "after {body}");
        assert_eq!(by_id(&list(&app).await, &id), &expected, "after {body}");
    }

    // Moving under one of the user's own categories.
    let parent = create(&app, json!({"title": "Restaurantes favoritos"})).await;
    let moved = app.patch(&path, json!({"parent_id": parent["id"]})).await;
    assert_eq!(moved.ok(200)["parent_id"], parent["id"]);
    expected["parent_id"] = parent["id"].clone();

    // Invalid edits change nothing.
    for (body, fields) in [
        (json!({"title": ""}), vec!["title"]),
        (json!({"title": "x".repeat(201)}), vec!["title"]),
        (json!({"color_hex": "blue"}), vec!["color_hex"]),
        (json!({"icon_name": "unicorn"}), vec!["icon_name"]),
        (json!({"parent_id": ZERO_ID}), vec!["parent_id"]),
        (json!({"parent_id": "abc"}), vec!["parent_id"]),
        (json!({"archived": "yes"}), vec!["archived"]),
        (json!({"system": false}), vec!["system"]),
        (
            json!({"title": "Válido", "color_hex": "blue"}),
            vec!["color_hex"],
        ),
    ] {
        app.patch(&path, body.clone()).await.invalid(&fields);
    }
    assert_eq!(by_id(&list(&app).await, &id), &expected);
}

async fn patch_refuses_cycles(backend: Backend) {
    let app = TestApp::start(backend).await;
    let a = id_of(&create(&app, json!({"title": "A"})).await);
    let b = id_of(&create(&app, json!({"title": "B", "parent_id": a})).await);
    let c = id_of(&create(&app, json!({"title": "C", "parent_id": b})).await);
    let before = list(&app).await;

    // A under its own child, under its grandchild, under itself.
    for parent in [&b, &c, &a] {
        app.patch(&format!("/v1/categories/{a}"), json!({"parent_id": parent}))
            .await
            .invalid(&["parent_id"]);
    }
    // B under its child C.
    app.patch(&format!("/v1/categories/{b}"), json!({"parent_id": c}))
        .await
        .invalid(&["parent_id"]);
    assert_eq!(list(&app).await, before);

    // Moves that close no loop are fine: C directly under A, then B under C.
    app.patch(&format!("/v1/categories/{c}"), json!({"parent_id": a}))
        .await
        .ok(200);
    let b_moved = app
        .patch(&format!("/v1/categories/{b}"), json!({"parent_id": c}))
        .await;
    assert_eq!(b_moved.ok(200)["parent_id"], c.as_str());
    let after = list(&app).await;
    assert_eq!(by_id(&after, &a)["parent_id"], Value::Null);
    assert_eq!(by_id(&after, &c)["parent_id"], a.as_str());
    assert_eq!(by_id(&after, &b)["parent_id"], c.as_str());
}

async fn system_categories_can_only_be_archived_per_user(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (_, other) = app.new_user().await;
    let before = list(&app).await;
    let food = by_title(&before, "Alimentação").clone();
    let restaurants = by_title(&before, "Restaurantes").clone();
    let market = id_of(by_title(&before, "Mercado"));
    let food_path = format!("/v1/categories/{}", id_of(&food));
    let restaurants_path = format!("/v1/categories/{}", id_of(&restaurants));

    for (path, body, fields) in [
        (&food_path, json!({"title": "Comida"}), vec!["title"]),
        (&food_path, json!({"parent_id": market}), vec!["parent_id"]),
        (
            &restaurants_path,
            json!({"parent_id": null}),
            vec!["parent_id"],
        ),
        (
            &food_path,
            json!({"color_hex": "#000000"}),
            vec!["color_hex"],
        ),
        (&food_path, json!({"color_hex": null}), vec!["color_hex"]),
        (&food_path, json!({"icon_name": "car"}), vec!["icon_name"]),
        // Archiving alongside a forbidden change does neither.
        (
            &food_path,
            json!({"archived": true, "title": "Comida"}),
            vec!["title"],
        ),
    ] {
        app.patch(path, body.clone()).await.invalid(&fields);
    }
    assert_eq!(list(&app).await, before, "system categories are unchanged");

    // Archiving works, and only for this user.
    let archived = app.patch(&food_path, json!({"archived": true})).await;
    let mut expected = food.clone();
    expected["archived"] = json!(true);
    assert_eq!(archived.ok(200), &expected);
    let mine = list(&app).await;
    assert_eq!(by_id(&mine, food["id"].as_str().unwrap()), &expected);
    // Its subcategory is not archived with it.
    assert_eq!(by_title(&mine, "Restaurantes"), &restaurants);

    let theirs = list_as(&app, &other).await;
    assert_eq!(by_id(&theirs, food["id"].as_str().unwrap()), &food);
    assert_eq!(
        by_id(&theirs, food["id"].as_str().unwrap())["archived"],
        false
    );

    // The other user archiving theirs does not touch mine either way.
    app.call(
        Method::PATCH,
        &restaurants_path,
        Some(&other),
        Some(json!({"archived": true})),
    )
    .await
    .ok(200);
    assert_eq!(
        by_title(&list(&app).await, "Restaurantes")["archived"],
        false
    );

    // Unarchiving brings it back.
    let restored = app.patch(&food_path, json!({"archived": false})).await;
    assert_eq!(restored.ok(200), &food);
    assert_eq!(list(&app).await, before);
    assert_eq!(
        by_title(&list_as(&app, &other).await, "Restaurantes")["archived"],
        true
    );
}

async fn patch_unknown_or_malformed_id(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.patch(&format!("/v1/categories/{ZERO_ID}"), json!({"title": "x"}))
        .await
        .problem(404, "not_found");
    app.patch(
        &format!("/v1/categories/{ZERO_ID}"),
        json!({"archived": true}),
    )
    .await
    .problem(404, "not_found");
    app.patch("/v1/categories/not-a-uuid", json!({"title": "x"}))
        .await
        .invalid(&["id"]);

    // Another user's category is as missing as an unknown id.
    let (_, other) = app.new_user().await;
    let theirs = app
        .call(
            Method::POST,
            "/v1/categories",
            Some(&other),
            Some(json!({"title": "Deles"})),
        )
        .await;
    let theirs = id_of(theirs.ok(201));
    app.patch(
        &format!("/v1/categories/{theirs}"),
        json!({"archived": true}),
    )
    .await
    .problem(404, "not_found");
    let still = list_as(&app, &other).await;
    assert_eq!(by_id(&still, &theirs)["archived"], false);
}

async fn a_deleted_category_hands_its_rows_to_the_replacement(backend: Backend) {
    let app = TestApp::start(backend).await;
    let pets = id_of(&create(&app, json!({"title": "Pets"})).await);
    let vet = id_of(&create(&app, json!({"title": "Vet", "parent_id": pets})).await);
    let home = id_of(&create(&app, json!({"title": "Casa"})).await);
    let account = app.bank("Conta").await;
    let row = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Ração",
            "date": "2026-11-20", "category_id": pets}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 30, "description": "Plano",
                "date": "2026-12-05", "category_id": pets, "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await
        .ok(201)["recurrence_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let moved = app
        .delete(&format!("/v1/categories/{pets}?replacement_id={home}"))
        .await;
    let moved = moved.ok(200);
    assert_eq!(moved["moved_transactions"], 1);
    assert_eq!(moved["moved_rules"], 1);
    assert_eq!(moved["replacement_id"], home.as_str());
    let stored = app.get(&format!("/v1/transactions/{row}")).await;
    assert_eq!(stored.ok(200)["transaction"]["category_id"], home.as_str());
    let handle = format!("mocked-recurrence:{rule}:2026-12-05");
    let projected = app.get(&format!("/v1/transactions/{handle}")).await;
    assert_eq!(
        projected.ok(200)["transaction"]["category_id"],
        home.as_str()
    );
    let categories = list(&app).await;
    assert!(!categories.iter().any(|c| c["id"] == pets.as_str()));
    // The subcategory stays, at the top level.
    assert_eq!(by_id(&categories, &vet)["parent_id"], Value::Null);
    app.delete(&format!("/v1/categories/{pets}"))
        .await
        .problem(404, "not_found");

    // Without a replacement, the rows are left with no category.
    let moved = app.delete(&format!("/v1/categories/{home}")).await;
    assert_eq!(moved.ok(200)["replacement_id"], Value::Null);
    let stored = app.get(&format!("/v1/transactions/{row}")).await;
    assert_eq!(stored.ok(200)["transaction"]["category_id"], Value::Null);
}

async fn category_deletion_refuses_bad_input(backend: Backend) {
    let app = TestApp::start(backend).await;
    let own = id_of(&create(&app, json!({"title": "Pets"})).await);
    let system = system_id(&app, "Mercado").await;
    app.delete(&format!("/v1/categories/{system}"))
        .await
        .invalid(&["id"]);
    app.delete(&format!("/v1/categories/{own}?replacement_id={own}"))
        .await
        .invalid(&["replacement_id"]);
    app.delete(&format!("/v1/categories/{own}?replacement_id={ZERO_ID}"))
        .await
        .invalid(&["replacement_id"]);
    app.delete(&format!("/v1/categories/{own}?replacement_id=nope"))
        .await
        .invalid(&["replacement_id"]);
    app.delete(&format!("/v1/categories/{own}?other=1"))
        .await
        .problem(400, "validation_error");
    app.delete(&format!("/v1/categories/{ZERO_ID}"))
        .await
        .problem(404, "not_found");
    // Another user's category is nobody's here, as replacement or target.
    let (_, other) = app.new_user().await;
    let theirs = app
        .created_as(&other, "/v1/categories", json!({"title": "Deles"}))
        .await;
    app.delete(&format!("/v1/categories/{own}?replacement_id={theirs}"))
        .await
        .invalid(&["replacement_id"]);
    app.delete(&format!("/v1/categories/{theirs}"))
        .await
        .problem(404, "not_found");
    // A system category is a fine replacement.
    app.delete(&format!("/v1/categories/{own}?replacement_id={system}"))
        .await
        .ok(200);
}

/// The list is kept in memory until the user's categories change, from
/// this process or another one sharing the database.
async fn the_list_follows_changes_from_any_process(backend: Backend) {
    let app = TestApp::start(backend).await;
    let before = list(&app).await.len();
    assert_eq!(list(&app).await.len(), before);
    let other = cofre_store::connect(&app.url).await.expect("second store");
    let changes = |title: &str| cofre_domain::category::CategoryChanges {
        title: Some(title.into()),
        ..Default::default()
    };
    let now = jiff::Timestamp::now();
    let made = other
        .create_category(app.user, &changes("Aquário"), now)
        .await
        .expect("create");
    let all = list(&app).await;
    assert_eq!(all.len(), before + 1);
    assert_eq!(by_title(&all, "Aquário")["archived"], false);
    let archive = cofre_domain::category::CategoryChanges {
        archived: Some(true),
        ..Default::default()
    };
    other
        .update_category(app.user, made.id, &archive)
        .await
        .expect("archive");
    assert_eq!(by_title(&list(&app).await, "Aquário")["archived"], true);
    // A shared category archived by this user alone.
    let food = system_id(&app, "Alimentação").await;
    other
        .update_category(app.user, food.parse().expect("an id"), &archive)
        .await
        .expect("archive a shared one");
    assert_eq!(by_id(&list(&app).await, &food)["archived"], true);
    // Through this process: a write bumps the version as well.
    create(&app, json!({"title": "Oficina"})).await;
    assert_eq!(list(&app).await.len(), before + 2);
}

on_both_backends!(
    the_list_follows_changes_from_any_process,
    a_deleted_category_hands_its_rows_to_the_replacement,
    category_deletion_refuses_bad_input,
    lists_system_categories,
    list_mixes_own_categories_ordered_by_folded_title,
    creates_own_categories,
    creation_rejects_bad_input,
    patches_own_categories,
    patch_refuses_cycles,
    system_categories_can_only_be_archived_per_user,
    patch_unknown_or_malformed_id,
);
