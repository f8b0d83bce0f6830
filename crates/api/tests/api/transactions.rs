//! Single transactions: create (defaults, references, idempotency,
//! validation), get, patch, delete, and the account balance they make.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TODAY, TestApp, with};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";
/// A window holding every date these tests use.
const WINDOW: &str = "from=2026-01-01&to=2026-12-31";

fn path(id: &str) -> String {
    format!("/v1/transactions/{id}")
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_owned()
}

fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `base` without `key`.
fn without(base: &Value, key: &str) -> Value {
    let mut out = base.clone();
    out.as_object_mut().unwrap().remove(key);
    out
}

async fn read(app: &TestApp, id: &str) -> Value {
    let response = app.get(&path(id)).await;
    let body = response.ok(200);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["transaction"]
    );
    body["transaction"].clone()
}

async fn balance(app: &TestApp, account: &str) -> f64 {
    let response = app.get(&format!("/v1/accounts/{account}")).await;
    response.ok(200)["balance"]
        .as_f64()
        .expect("numeric balance")
}

/// Ids of the visible stored rows in the test window.
async fn listed_ids(app: &TestApp) -> Vec<String> {
    let response = app
        .get(&format!("/v1/transactions?{WINDOW}&limit=100"))
        .await;
    response.ok(200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect()
}

async fn category_id(app: &TestApp, title: &str) -> String {
    let response = app.get("/v1/categories").await;
    let list = response.ok(200)["data"].as_array().unwrap().clone();
    let found = list
        .iter()
        .find(|c| c["title"] == title)
        .unwrap_or_else(|| panic!("no category {title}"));
    id_of(found)
}

async fn tag(app: &TestApp, title: &str, color: &str) -> Value {
    app.post("/v1/tags", json!({"title": title, "color_hex": color}))
        .await
        .ok(201)
        .clone()
}

fn short_tag(tag: &Value) -> Value {
    json!({"id": tag["id"], "title": tag["title"], "color_hex": tag["color_hex"]})
}

async fn post_raw(app: &TestApp, uri: &str, body: &str) -> crate::support::Response {
    app.send(
        Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("authorization", format!("Bearer {}", app.key))
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap(),
    )
    .await
}

async fn create_minimal_returns_every_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta corrente").await;
    let response = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 12.5, "description": "Padaria"}),
        )
        .await;
    assert_eq!(response.status, 201, "{}", response.body);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let id = response.body["transaction"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    let expected = json!({
        "id": id,
        "projected": false,
        "projection": null,
        "date": "2026-11-22",
        "type": "DEBIT",
        "status": "POSTED",
        "amount": 12.5,
        "currency": "BRL",
        "description": "Padaria",
        "notes": null,
        "account_id": account,
        "bill_to_account_id": null,
        "category_id": null,
        "tags": [],
        "recurrence_id": null,
        "recurrence_period_date": null,
        "installment": null,
        "transfer_group_id": null,
        "created_by_user": true,
        "source": "API",
        "hide_from_results": false,
        "card_number": null,
        "holder": null,
        "holder_is_me": false,
        "original_description": null,
        "receipt_url": null,
        "open_finance": false,
    });
    assert_eq!(
        response.body,
        json!({"transaction": expected, "deduped": false})
    );
    assert_eq!(read(&app, &id).await, expected);

    // Each creation without a client id is a new row.
    let again = app
        .tx(json!({"account_id": account, "type": "CREDIT", "amount": 3, "description": "Padaria"}))
        .await;
    assert_ne!(again["id"], expected["id"]);
    assert_eq!(again["type"], "CREDIT");
    assert_eq!(again["amount"], json!(3.0));
    let mut ids = listed_ids(&app).await;
    ids.sort();
    let mut want = vec![id, id_of(&again)];
    want.sort();
    assert_eq!(ids, want);
}

async fn status_defaults_by_date_and_can_be_chosen(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let base = json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": "x"});
    for (changes, date, status) in [
        (json!({"date": "2026-11-23"}), "2026-11-23", "PENDING"),
        (json!({"date": "2027-03-01"}), "2027-03-01", "PENDING"),
        (json!({"date": TODAY}), TODAY, "POSTED"),
        (json!({"date": "2026-11-21"}), "2026-11-21", "POSTED"),
        (json!({"date": "2024-02-29"}), "2024-02-29", "POSTED"),
        (json!({}), TODAY, "POSTED"),
        (
            json!({"date": "2026-11-23", "status": "POSTED"}),
            "2026-11-23",
            "POSTED",
        ),
        (json!({"status": "PENDING"}), TODAY, "PENDING"),
        (
            json!({"date": "2026-01-10", "status": "PENDING"}),
            "2026-01-10",
            "PENDING",
        ),
    ] {
        let tx = app.tx(with(&base, changes.clone())).await;
        assert_eq!(tx["date"], date, "{changes}");
        assert_eq!(tx["status"], status, "{changes}");
        let stored = read(&app, tx["id"].as_str().unwrap()).await;
        assert_eq!(stored, tx, "{changes}");
    }
}

async fn create_with_notes_category_and_tags(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let market = category_id(&app, "Mercado").await;
    let own = app
        .post("/v1/categories", json!({"title": "Feira livre"}))
        .await;
    let own = id_of(own.ok(201));
    let food = tag(&app, "Comida", "#ff0000").await;
    let home = tag(&app, "Casa", "#00ff00").await;

    let tx = app
        .tx(json!({
            "account_id": account,
            "type": "DEBIT",
            "amount": 230.1,
            "description": "  Compra do mês  ",
            "date": "2026-11-15",
            "notes": "  arroz, feijão  ",
            "category_id": market,
            "tag_ids": [food["id"], home["id"]],
        }))
        .await;
    assert_eq!(tx["description"], "Compra do mês");
    assert_eq!(tx["notes"], "arroz, feijão");
    assert_eq!(tx["category_id"], market.as_str());
    assert_eq!(tx["amount"], json!(230.1));
    assert_eq!(tx["date"], "2026-11-15");
    assert_eq!(tx["status"], "POSTED");
    assert_eq!(tx["tags"], json!([short_tag(&home), short_tag(&food)]));
    assert_eq!(read(&app, &id_of(&tx)).await, tx);

    let credit = app
        .tx(json!({
            "account_id": account,
            "type": "CREDIT",
            "amount": 50,
            "description": "Venda na feira",
            "category_id": own,
        }))
        .await;
    assert_eq!(credit["category_id"], own.as_str());
    assert_eq!(credit["type"], "CREDIT");
    assert_eq!(credit["tags"], json!([]));
    assert_eq!(credit["notes"], Value::Null);
    assert_eq!(read(&app, &id_of(&credit)).await, credit);

    // The longest description and notes, counted in characters.
    let description = "é".repeat(500);
    let notes = "ç".repeat(5000);
    let long = app
        .tx(json!({
            "account_id": account,
            "type": "DEBIT",
            "amount": 0.01,
            "description": description,
            "notes": notes,
        }))
        .await;
    assert_eq!(long["description"], description);
    assert_eq!(long["notes"], notes);
    assert_eq!(long["amount"], json!(0.01));
}

async fn currency_comes_from_the_account(backend: Backend) {
    let app = TestApp::start(backend).await;
    let dollars = app
        .account(json!({"type": "BANK", "title": "Conta em dólar", "currency_code": "USD"}))
        .await;
    let reais = app.bank("Conta em real").await;
    let tx = app
        .tx(json!({"account_id": dollars, "type": "DEBIT", "amount": 9.99, "description": "Coffee"}))
        .await;
    assert_eq!(tx["currency"], "USD");
    assert_eq!(tx["account_id"], dollars.as_str());
    assert_eq!(read(&app, &id_of(&tx)).await["currency"], "USD");
    let tx = app
        .tx(json!({"account_id": reais, "type": "DEBIT", "amount": 9.99, "description": "Café"}))
        .await;
    assert_eq!(tx["currency"], "BRL");
}

/// A creation refused for what it names (a missing tag, category or
/// account, an id another request took) says what, and stores nothing:
/// on PostgreSQL one statement does the whole creation, and its refusal
/// must undo all of it.
async fn refused_creations_name_what_is_missing_and_store_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let label = tag(&app, "Mercado", "#123456").await;
    let taken = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 5, "description": "Pão",
                   "date": "2026-11-20", "id": new_uuid()}),
        )
        .await;
    let base = json!({"account_id": account, "type": "DEBIT", "amount": 7, "date": "2026-11-20",
                      "description": "Feira", "tag_ids": [label["id"]]});
    let refused = [
        (
            json!({"tag_ids": [label["id"], ZERO_ID]}),
            "tag_ids",
            format!("no such tag: {ZERO_ID}"),
        ),
        (
            json!({"category_id": ZERO_ID}),
            "category_id",
            "no such category".to_owned(),
        ),
        (
            json!({"account_id": ZERO_ID}),
            "account_id",
            "no such account".to_owned(),
        ),
    ];
    for (changes, field, message) in refused {
        let response = app.post("/v1/transactions", with(&base, changes)).await;
        response.invalid(&[field]);
        assert_eq!(
            response.body["errors"][0]["message"],
            message.as_str(),
            "{}",
            response.body
        );
    }
    app.post("/v1/transactions", with(&base, json!({"id": taken["id"]})))
        .await
        .problem(409, "id_conflict");
    assert_eq!(listed_ids(&app).await, vec![id_of(&taken)]);
    assert_eq!(balance(&app, &account).await, -5.0);
    let tagged = app
        .get(&format!(
            "/v1/transactions?{WINDOW}&tag_id={}",
            label["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(tagged.ok(200)["data"], json!([]));
    // The same body, nothing missing, is stored whole.
    let made = app.tx(base.clone()).await;
    assert_eq!(made["tags"], json!([short_tag(&label)]));
    assert_eq!(read(&app, &id_of(&made)).await, made);
}

/// A row or a purchase in installments posted into another user's
/// account is refused as a missing account is, and leaves nothing behind:
/// no row, no plan, nothing changed on their side.
async fn creation_in_another_users_account_stores_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (_, theirs) = app.new_user().await;
    let their_account = app
        .account_as(
            &theirs,
            json!({"type": "BANK", "title": "Dela", "initial_balance": 500}),
        )
        .await;
    let their_view = || async {
        let accounts = app
            .call(Method::GET, "/v1/accounts", Some(&theirs), None)
            .await;
        let ledger = app
            .call(
                Method::GET,
                &format!("/v1/transactions?view=ledger&{WINDOW}&limit=100"),
                Some(&theirs),
                None,
            )
            .await;
        (accounts.text, ledger.text)
    };
    let before = their_view().await;
    let plain = json!({"account_id": their_account, "type": "DEBIT", "amount": 10,
        "description": "Padaria", "date": "2026-11-20"});
    let plan = with(&plain, json!({"installments": {"count": 3}}));
    for body in [plain, plan] {
        let response = app.post("/v1/transactions", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&["account_id"]);
    }
    let mine = app
        .get(&format!("/v1/transactions?view=ledger&{WINDOW}&limit=100"))
        .await;
    assert_eq!(mine.ok(200)["data"], json!([]));
    assert_eq!(their_view().await, before);
}

async fn replay_with_the_same_id_is_deduplicated(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let label = tag(&app, "Mercado", "#123456").await;
    let id = new_uuid();
    let body = json!({
        "id": id,
        "account_id": account,
        "type": "DEBIT",
        "amount": 25.4,
        "description": "Supermercado",
        "date": "2026-11-20",
        "notes": "semanal",
        "tag_ids": [label["id"]],
    });

    let first = app.post("/v1/transactions", body.clone()).await;
    let created = first.ok(201).clone();
    assert_eq!(created["deduped"], false);
    assert_eq!(created["transaction"]["id"], id.as_str());

    for _ in 0..2 {
        let replay = app.post("/v1/transactions", body.clone()).await;
        assert_eq!(
            replay.ok(200),
            &json!({"transaction": created["transaction"], "deduped": true})
        );
    }
    assert_eq!(listed_ids(&app).await, vec![id.clone()]);
    assert_eq!(balance(&app, &account).await, -25.4);

    // A fresh id with the same payload is a new row.
    let other_id = new_uuid();
    let fresh = app
        .post("/v1/transactions", with(&body, json!({"id": other_id})))
        .await;
    assert_eq!(fresh.ok(201)["deduped"], false);
    assert_eq!(fresh.body["transaction"]["id"], other_id.as_str());
    assert_eq!(listed_ids(&app).await.len(), 2);
    assert_eq!(balance(&app, &account).await, -50.8);
}

async fn concurrent_replays_store_one_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let id = new_uuid();
    let body = json!({"id": id, "account_id": account, "type": "DEBIT", "amount": 8,
                      "description": "Corrida"});
    let (a, b, c, d) = tokio::join!(
        app.post("/v1/transactions", body.clone()),
        app.post("/v1/transactions", body.clone()),
        app.post("/v1/transactions", body.clone()),
        app.post("/v1/transactions", body.clone()),
    );
    let mut statuses: Vec<u16> = [&a, &b, &c, &d].iter().map(|r| r.status).collect();
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [200, 200, 200, 201],
        "{} {} {} {}",
        a.body,
        b.body,
        c.body,
        d.body
    );
    for response in [&a, &b, &c, &d] {
        assert_eq!(response.body["deduped"], response.status == 200);
        assert_eq!(response.body["transaction"], a.body["transaction"]);
    }
    assert_eq!(listed_ids(&app).await, vec![id]);
    assert_eq!(balance(&app, &account).await, -8.0);
}

async fn same_id_with_another_payload_conflicts(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let second_account = app.bank("Outra conta").await;
    let id = new_uuid();
    let body = json!({
        "id": id,
        "account_id": account,
        "type": "DEBIT",
        "amount": 25,
        "description": "Supermercado",
        "notes": "semanal",
    });
    let original = app.tx(body.clone()).await;

    for changed in [
        with(&body, json!({"amount": 25.01})),
        with(&body, json!({"type": "CREDIT"})),
        with(&body, json!({"description": "Hortifruti"})),
        with(&body, json!({"notes": "mensal"})),
        without(&body, "notes"),
        with(&body, json!({"date": "2026-11-21"})),
        with(&body, json!({"status": "PENDING"})),
        with(&body, json!({"account_id": second_account})),
    ] {
        let response = app.post("/v1/transactions", changed.clone()).await;
        response.problem(409, "id_conflict");
        assert!(response.body.get("errors").is_none());
    }
    // The original row is untouched and still alone.
    assert_eq!(read(&app, &id).await, original);
    assert_eq!(listed_ids(&app).await, vec![id]);
    assert_eq!(balance(&app, &account).await, -25.0);
    assert_eq!(balance(&app, &second_account).await, 0.0);
}

async fn creation_rejects_bad_input(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let label = tag(&app, "Válida", "#123456").await;
    let base =
        json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Padaria"});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (with(&base, json!({"amount": 0})), vec!["amount"]),
        (with(&base, json!({"amount": 0.0})), vec!["amount"]),
        (with(&base, json!({"amount": -5})), vec!["amount"]),
        (with(&base, json!({"amount": 1.234})), vec!["amount"]),
        (with(&base, json!({"amount": "12"})), vec!["amount"]),
        (with(&base, json!({"amount": null})), vec!["amount"]),
        (with(&base, json!({"amount": 1e20})), vec!["amount"]),
        (
            json!({}),
            vec!["account_id", "type", "amount", "description"],
        ),
        (
            json!({"notes": "só notas", "date": "2026-11-01"}),
            vec!["account_id", "type", "amount", "description"],
        ),
        (without(&base, "account_id"), vec!["account_id"]),
        (without(&base, "type"), vec!["type"]),
        (without(&base, "amount"), vec!["amount"]),
        (without(&base, "description"), vec!["description"]),
        (with(&base, json!({"type": "TRANSFER"})), vec!["type"]),
        (with(&base, json!({"type": "debit"})), vec!["type"]),
        (with(&base, json!({"status": "DONE"})), vec!["status"]),
        (with(&base, json!({"date": "2026-02-30"})), vec!["date"]),
        (with(&base, json!({"date": "22/11/2026"})), vec!["date"]),
        (
            with(&base, json!({"account_id": ZERO_ID})),
            vec!["account_id"],
        ),
        (
            with(&base, json!({"account_id": "abc"})),
            vec!["account_id"],
        ),
        (
            with(&base, json!({"category_id": ZERO_ID})),
            vec!["category_id"],
        ),
        (
            with(&base, json!({"category_id": "abc"})),
            vec!["category_id"],
        ),
        (with(&base, json!({"tag_ids": [ZERO_ID]})), vec!["tag_ids"]),
        (
            with(&base, json!({"tag_ids": [label["id"], ZERO_ID]})),
            vec!["tag_ids"],
        ),
        (with(&base, json!({"tag_ids": ["abc"]})), vec!["tag_ids[0]"]),
        (
            with(&base, json!({"tag_ids": [label["id"], "abc"]})),
            vec!["tag_ids[1]"],
        ),
        (with(&base, json!({"id": "abc"})), vec!["id"]),
        (with(&base, json!({"description": ""})), vec!["description"]),
        (
            with(&base, json!({"description": "   "})),
            vec!["description"],
        ),
        (
            with(&base, json!({"description": "é".repeat(501)})),
            vec!["description"],
        ),
        (
            with(&base, json!({"notes": "ç".repeat(5001)})),
            vec!["notes"],
        ),
        (
            with(&base, json!({"installments": {"count": 1}})),
            vec!["installments.count"],
        ),
        (
            with(&base, json!({"recurrence": {"frequency": "HOURLY"}})),
            vec!["recurrence.frequency"],
        ),
        (
            with(&base, json!({"merchant": "Padaria"})),
            vec!["merchant"],
        ),
        (
            with(&base, json!({"amount": 0, "description": ""})),
            vec!["amount", "description"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.post("/v1/transactions", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    for malformed in [
        "{\"account_id\": ",
        "{\"amount\": 10,}",
        "not json",
        "[]",
        "{} {}",
    ] {
        post_raw(&app, "/v1/transactions", malformed)
            .await
            .invalid(&["body"]);
    }
    // Nothing was stored by any of them.
    assert_eq!(listed_ids(&app).await, Vec::<String>::new());
    assert_eq!(balance(&app, &account).await, 0.0);

    // The base body itself is fine.
    app.tx(base).await;
    assert_eq!(listed_ids(&app).await.len(), 1);
}

async fn get_by_id(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let tx = app
        .tx(json!({"account_id": account, "type": "CREDIT", "amount": 1500, "description": "Salário"}))
        .await;
    let response = app.get(&path(tx["id"].as_str().unwrap())).await;
    assert_eq!(response.ok(200), &json!({"transaction": tx}));

    app.get(&path(ZERO_ID)).await.problem(404, "not_found");
    app.get(&path(&new_uuid())).await.problem(404, "not_found");
    let bill = format!("mocked-bill:{account}:202612");
    for handle in [
        "mocked-recurrence:abc",
        "mocked-recurrence:00000000-0000-4000-8000-000000000000:2026-11-22",
        "mocked-installment:00000000-0000-4000-8000-000000000000:2",
        bill.as_str(),
    ] {
        app.get(&path(handle))
            .await
            .problem(404, "projection_not_found");
    }
    app.get(&path("abc")).await.invalid(&["id"]);
    app.get(&path("12345")).await.invalid(&["id"]);
}

async fn patch_changes_each_editable_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let market = category_id(&app, "Mercado").await;
    let own = app.post("/v1/categories", json!({"title": "Minha"})).await;
    let own = id_of(own.ok(201));
    let alpha = tag(&app, "Alfa", "#AA0000").await;
    let beta = tag(&app, "Beta", "#00BB00").await;
    let mut expected = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Padaria"}))
        .await;
    let id = id_of(&expected);

    let steps: Vec<(Value, Value)> = vec![
        (json!({"date": "2026-11-20"}), json!({"date": "2026-11-20"})),
        (json!({"type": "CREDIT"}), json!({"type": "CREDIT"})),
        (json!({"status": "PENDING"}), json!({"status": "PENDING"})),
        (json!({"amount": 45.67}), json!({"amount": 45.67})),
        (
            json!({"description": "  Padaria do João "}),
            json!({"description": "Padaria do João"}),
        ),
        (
            json!({"notes": "pão e leite"}),
            json!({"notes": "pão e leite"}),
        ),
        (json!({"notes": null}), json!({"notes": null})),
        (
            json!({"category_id": market}),
            json!({"category_id": market}),
        ),
        (json!({"category_id": own}), json!({"category_id": own})),
        (json!({"category_id": null}), json!({"category_id": null})),
        (
            json!({"tag_ids": [beta["id"], alpha["id"]]}),
            json!({"tags": [short_tag(&alpha), short_tag(&beta)]}),
        ),
        (
            json!({"tag_ids": [beta["id"]]}),
            json!({"tags": [short_tag(&beta)]}),
        ),
        (json!({"tag_ids": []}), json!({"tags": []})),
        (
            json!({"hide_from_results": true}),
            json!({"hide_from_results": true}),
        ),
        (
            json!({"hide_from_results": false}),
            json!({"hide_from_results": false}),
        ),
        (
            json!({"date": "2026-12-05", "type": "DEBIT", "status": "POSTED", "amount": 0.5,
                   "description": "Tudo", "notes": "junto", "category_id": market,
                   "tag_ids": [alpha["id"]], "hide_from_results": true}),
            json!({"date": "2026-12-05", "type": "DEBIT", "status": "POSTED", "amount": 0.5,
                   "description": "Tudo", "notes": "junto", "category_id": market,
                   "tags": [short_tag(&alpha)], "hide_from_results": true}),
        ),
    ];
    for (body, change) in steps {
        let response = app.patch(&path(&id), body.clone()).await;
        assert_eq!(
            response.ok(200),
            &json!({"updated_transaction_id": id, "affected_ids": [id], "message": null}),
            "{body}"
        );
        expected = with(&expected, change);
        // The change is stored, and nothing else moved.
        assert_eq!(read(&app, &id).await, expected, "after {body}");
    }
}

async fn patch_rejects_bad_input(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let other_account = app.bank("Outra").await;
    let tx = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Padaria", "notes": "n"}))
        .await;
    let id = id_of(&tx);

    app.patch(&path(&id), json!({}))
        .await
        .problem(400, "validation_error");
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"scope": "bogus", "amount": 5}), vec!["scope"]),
        (json!({"scope": "THIS", "amount": 5}), vec!["scope"]),
        (json!({"amount": 0}), vec!["amount"]),
        (json!({"amount": -1}), vec!["amount"]),
        (json!({"amount": 1.001}), vec!["amount"]),
        (json!({"amount": "5"}), vec!["amount"]),
        (json!({"description": ""}), vec!["description"]),
        (json!({"description": "é".repeat(501)}), vec!["description"]),
        (json!({"notes": "ç".repeat(5001)}), vec!["notes"]),
        (json!({"date": "2026-02-30"}), vec!["date"]),
        (json!({"type": "SIDEWAYS"}), vec!["type"]),
        (json!({"status": "DONE"}), vec!["status"]),
        (json!({"category_id": ZERO_ID}), vec!["category_id"]),
        (json!({"category_id": "abc"}), vec!["category_id"]),
        (json!({"tag_ids": [ZERO_ID]}), vec!["tag_ids"]),
        (json!({"tag_ids": ["abc"]}), vec!["tag_ids[0]"]),
        (
            json!({"hide_from_results": "yes"}),
            vec!["hide_from_results"],
        ),
        (json!({"account_id": other_account}), vec!["account_id"]),
        (json!({"amount": 5, "currency": "USD"}), vec!["currency"]),
        (
            json!({"amount": 0, "description": ""}),
            vec!["amount", "description"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.patch(&path(&id), body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    let malformed = app
        .send(
            Request::builder()
                .method(Method::PATCH)
                .uri(path(&id))
                .header("authorization", format!("Bearer {}", app.key))
                .header("content-type", "application/json")
                .body(Body::from("{\"amount\": 5"))
                .unwrap(),
        )
        .await;
    malformed.invalid(&["body"]);
    // None of them changed anything.
    assert_eq!(read(&app, &id).await, tx);

    // A row outside a series accepts scope "this".
    let response = app
        .patch(&path(&id), json!({"scope": "this", "amount": 5}))
        .await;
    assert_eq!(
        response.ok(200),
        &json!({"updated_transaction_id": id, "affected_ids": [id], "message": null})
    );
    assert_eq!(read(&app, &id).await, with(&tx, json!({"amount": 5.0})));

    app.patch(&path(ZERO_ID), json!({"amount": 5}))
        .await
        .problem(404, "not_found");
    app.patch(&path("abc"), json!({"amount": 5}))
        .await
        .invalid(&["id"]);
    app.patch(
        &path("mocked-recurrence:abc"),
        json!({"scope": "this", "amount": 5}),
    )
    .await
    .problem(404, "projection_not_found");
}

async fn delete_removes_the_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let label = tag(&app, "Etiqueta", "#123456").await;
    let doomed = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Apagar",
                   "tag_ids": [label["id"]]}),
        )
        .await;
    let kept = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 20, "description": "Manter"}))
        .await;
    let doomed_id = id_of(&doomed);

    let response = app.delete(&path(&doomed_id)).await;
    assert_eq!(
        response.ok(200),
        &json!({"deleted_transaction_id": doomed_id, "affected_ids": [doomed_id]})
    );
    app.get(&path(&doomed_id)).await.problem(404, "not_found");
    app.delete(&path(&doomed_id))
        .await
        .problem(404, "not_found");
    app.patch(&path(&doomed_id), json!({"amount": 1}))
        .await
        .problem(404, "not_found");
    assert_eq!(listed_ids(&app).await, vec![id_of(&kept)]);
    // The tag itself survives its row.
    let tags = app.get("/v1/tags").await;
    assert_eq!(tags.ok(200)["data"][0]["id"], label["id"]);
    assert_eq!(read(&app, &id_of(&kept)).await, kept);

    // The query parameters of series deletes are accepted on a plain row.
    let kept_id = id_of(&kept);
    let response = app
        .delete(&format!(
            "{}?scope=this&preserve_posted=false&hide_series=false&date=2026-11-22",
            path(&kept_id)
        ))
        .await;
    assert_eq!(response.ok(200)["deleted_transaction_id"], kept_id.as_str());
    assert_eq!(listed_ids(&app).await, Vec::<String>::new());

    app.delete(&path(ZERO_ID)).await.problem(404, "not_found");
    app.delete(&path("abc")).await.invalid(&["id"]);
}

async fn delete_rejects_bad_query(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let tx = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Fica"}))
        .await;
    let id = id_of(&tx);
    for (query, fields) in [
        ("scope=bogus", vec!["scope"]),
        ("preserve_posted=maybe", vec!["preserve_posted"]),
        ("hide_series=1", vec!["hide_series"]),
        ("date=2026-13-01", vec!["date"]),
        ("date=2026-02-30", vec!["date"]),
        ("bogus=1", vec!["bogus"]),
        (
            "scope=bogus&preserve_posted=maybe",
            vec!["scope", "preserve_posted"],
        ),
    ] {
        let response = app.delete(&format!("{}?{query}", path(&id))).await;
        assert_eq!(response.status, 400, "{query}: {}", response.body);
        response.invalid(&fields);
    }
    // The row is still there.
    assert_eq!(read(&app, &id).await, tx);
    assert_eq!(balance(&app, &account).await, -10.0);
}

async fn patch_ok(app: &TestApp, id: &Value, body: Value) {
    let response = app.patch(&path(id.as_str().unwrap()), body.clone()).await;
    assert_eq!(response.status, 200, "{body}: {}", response.body);
}

async fn balance_follows_creates_patches_deletes(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let bystander = app.bank("Outra").await;
    assert_eq!(balance(&app, &account).await, 0.0);
    app.tx(json!({"account_id": bystander, "type": "CREDIT", "amount": 7, "description": "Outra"}))
        .await;

    let salary = app
        .tx(json!({"account_id": account, "type": "CREDIT", "amount": 100, "description": "Salário"}))
        .await;
    assert_eq!(balance(&app, &account).await, 100.0);
    let bakery = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 30.25, "description": "Padaria"}))
        .await;
    assert_eq!(balance(&app, &account).await, 69.75);
    // PENDING rows, by default (future) or by choice, do not count.
    let future = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 50, "description": "Futuro",
                   "date": "2026-12-10"}),
        )
        .await;
    assert_eq!(future["status"], "PENDING");
    let pending = app
        .tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 20, "description": "Pendente",
                   "status": "PENDING"}),
        )
        .await;
    assert_eq!(balance(&app, &account).await, 69.75);

    patch_ok(&app, &bakery["id"], json!({"amount": 40})).await;
    assert_eq!(balance(&app, &account).await, 60.0);
    patch_ok(&app, &bakery["id"], json!({"status": "PENDING"})).await;
    assert_eq!(balance(&app, &account).await, 100.0);
    patch_ok(&app, &pending["id"], json!({"status": "POSTED"})).await;
    assert_eq!(balance(&app, &account).await, 80.0);
    // Hidden rows still move money.
    patch_ok(&app, &salary["id"], json!({"hide_from_results": true})).await;
    assert_eq!(balance(&app, &account).await, 80.0);
    patch_ok(&app, &salary["id"], json!({"type": "DEBIT"})).await;
    assert_eq!(balance(&app, &account).await, -120.0);
    // Changing only the date or the description moves nothing.
    patch_ok(
        &app,
        &salary["id"],
        json!({"date": "2026-06-01", "description": "Acerto"}),
    )
    .await;
    assert_eq!(balance(&app, &account).await, -120.0);

    app.delete(&path(pending["id"].as_str().unwrap()))
        .await
        .ok(200);
    assert_eq!(balance(&app, &account).await, -100.0);
    app.delete(&path(salary["id"].as_str().unwrap()))
        .await
        .ok(200);
    assert_eq!(balance(&app, &account).await, 0.0);
    // Deleting a PENDING row leaves the balance alone.
    app.delete(&path(future["id"].as_str().unwrap()))
        .await
        .ok(200);
    assert_eq!(balance(&app, &account).await, 0.0);
    patch_ok(&app, &bakery["id"], json!({"status": "POSTED"})).await;
    assert_eq!(balance(&app, &account).await, -40.0);

    assert_eq!(balance(&app, &bystander).await, 7.0);
}

on_both_backends!(
    create_minimal_returns_every_field,
    status_defaults_by_date_and_can_be_chosen,
    create_with_notes_category_and_tags,
    currency_comes_from_the_account,
    creation_in_another_users_account_stores_nothing,
    refused_creations_name_what_is_missing_and_store_nothing,
    replay_with_the_same_id_is_deduplicated,
    concurrent_replays_store_one_row,
    same_id_with_another_payload_conflicts,
    creation_rejects_bad_input,
    get_by_id,
    patch_changes_each_editable_field,
    patch_rejects_bad_input,
    delete_removes_the_row,
    delete_rejects_bad_query,
    balance_follows_creates_patches_deletes,
);
