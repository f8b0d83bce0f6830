//! POST /v1/transactions/bulk (selection, set, delete, the expected-count
//! guard, the row cap, its own rate limit, all-or-nothing) and
//! GET /v1/transactions/duplicates.

use axum::http::Method;
use serde_json::{Value, json};
use sqlx::Connection;

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;
use cofre_domain::transaction::{SeriesLink, TransactionState, TxStatus, TxType};
use cofre_domain::{AccountId, Money, TransactionId};
use cofre_store::{ImportBatch, ImportRow, WriteContext};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

const MERCADO: &str = "ed3eb088-9c3c-517a-b01a-f1d78fb4b16d";
const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";
const WINDOW: &str = "from=2026-01-01&to=2026-12-31";
const BULK: &str = "/v1/transactions/bulk";

async fn row(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/transactions/{id}")).await.ok(200)["transaction"].clone()
}

/// Creates rows `(description, amount, date)` on `account`; returns ids.
async fn rows(app: &TestApp, account: &str, specs: &[(&str, f64, &str)]) -> Vec<String> {
    let mut ids = Vec::new();
    for (description, amount, date) in specs {
        let tx = app
            .tx(
                json!({"account_id": account, "type": "DEBIT", "amount": amount,
                "description": description, "date": date}),
            )
            .await;
        ids.push(tx["id"].as_str().unwrap().to_owned());
    }
    ids
}

/// Runs one statement on the test database, outside the API.
async fn execute(app: &TestApp, sql: &str) {
    if app.url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(&app.url).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .unwrap();
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.url).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .unwrap();
    }
}

async fn set_by_ids_changes_every_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let tag = app
        .post("/v1/tags", json!({"title": "Casa", "color_hex": "#112233"}))
        .await
        .ok(201)["id"]
        .clone();
    let ids = rows(
        &app,
        &bank,
        &[
            ("Feira", 30.0, "2026-11-01"),
            ("Açougue", 80.5, "2026-11-02"),
            ("Outro", 9.0, "2026-11-03"),
        ],
    )
    .await;
    let response = app
        .post(
            BULK,
            json!({"ids": [ids[0], ids[1]], "set": {"category_id": MERCADO, "tag_ids": [tag],
                "notes": "compras do mês"}}),
        )
        .await;
    let body = response.ok(200).clone();
    assert_eq!(body["matched_count"], 2);
    assert_eq!(body["updated_count"], 2);
    assert_eq!(body["skipped"], json!([]));
    assert_eq!(body["skipped_open_finance"], 0);
    assert_eq!(response.header("ratelimit-limit"), Some("10"));
    assert_eq!(response.header("ratelimit-remaining"), Some("9"));
    for id in &ids[..2] {
        let r = row(&app, id).await;
        assert_eq!(r["category_id"], MERCADO);
        assert_eq!(r["tags"][0]["id"], tag);
        assert_eq!(r["notes"], "compras do mês");
    }
    let untouched = row(&app, &ids[2]).await;
    assert_eq!(untouched["category_id"], Value::Null);
    assert_eq!(untouched["notes"], Value::Null);

    // Amounts and dates too; moving rows to another account moves balances.
    let savings = app.bank("Poupança").await;
    let response = app
        .post(
            BULK,
            json!({"ids": [ids[2]], "set": {"amount": 12.34, "date": "2026-10-01",
                "account_id": savings}}),
        )
        .await;
    response.ok(200);
    let moved = row(&app, &ids[2]).await;
    assert_eq!(moved["amount"], 12.34);
    assert_eq!(moved["date"], "2026-10-01");
    assert_eq!(moved["account_id"], savings.as_str());
    let balance = app.get(&format!("/v1/accounts/{savings}")).await;
    assert_eq!(balance.ok(200)["balance"], -12.34);
}

async fn filter_selects_what_the_list_shows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (a, b) = (app.bank("A").await, app.bank("B").await);
    let on_a = rows(
        &app,
        &a,
        &[
            ("Uber centro", 20.0, "2026-11-01"),
            ("UBER aeroporto", 55.0, "2026-11-05"),
            ("Padaria", 7.0, "2026-11-05"),
        ],
    )
    .await;
    let on_b = rows(
        &app,
        &b,
        &[("Uber", 15.0, "2026-11-02"), ("Uber", 15.0, "2026-09-01")],
    )
    .await;
    let filter = json!({"from": "2026-10-01", "to": "2026-11-30", "search": "uber"});
    let listed = app
        .all_pages("from=2026-10-01&to=2026-11-30&search=uber", 50)
        .await
        .len();
    let response = app
        .post(
            BULK,
            json!({"filter": filter, "set": {"category_id": MERCADO}}),
        )
        .await;
    assert_eq!(response.ok(200)["matched_count"], listed as u64);
    assert_eq!(listed, 3);
    for id in [&on_a[0], &on_a[1], &on_b[0]] {
        assert_eq!(row(&app, id).await["category_id"], MERCADO);
    }
    for id in [&on_a[2], &on_b[1]] {
        assert_eq!(row(&app, id).await["category_id"], Value::Null);
    }
    // Arrays of ids and booleans are accepted; ids and filter intersect.
    let response = app
        .post(
            BULK,
            json!({"ids": [on_a[0], on_a[2], on_b[0]],
                "filter": {"from": "2026-01-01", "to": "2026-12-31", "account_id": [a],
                    "no_tags": true},
                "set": {"notes": "conferido"}}),
        )
        .await;
    assert_eq!(response.ok(200)["matched_count"], 2);
    assert_eq!(row(&app, &on_a[0]).await["notes"], "conferido");
    assert_eq!(row(&app, &on_a[2]).await["notes"], "conferido");
    assert_eq!(row(&app, &on_b[0]).await["notes"], Value::Null);
}

async fn expected_count_guards_the_selection(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let ids = rows(
        &app,
        &bank,
        &[("X", 1.0, "2026-11-01"), ("Y", 2.0, "2026-11-02")],
    )
    .await;
    let filter = json!({"from": "2026-11-01", "to": "2026-11-30"});
    let response = app
        .post(
            BULK,
            json!({"filter": filter, "delete": true, "expected_count": 3}),
        )
        .await;
    response.problem(409, "expected_count_mismatch");
    assert_eq!(response.body["matched_count"], 2);
    for id in &ids {
        row(&app, id).await;
    }
    let response = app
        .post(
            BULK,
            json!({"filter": filter, "delete": true, "expected_count": 2}),
        )
        .await;
    let body = response.ok(200);
    assert_eq!(body["deleted_count"], 2);
    assert_eq!(body["updated_count"], 2);
    for id in &ids {
        app.get(&format!("/v1/transactions/{id}"))
            .await
            .problem(404, "not_found");
    }
}

async fn deleted_series_rows_do_not_come_back(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = app.bank("Conta").await;
    let purchase = app
        .tx(
            json!({"account_id": card, "type": "DEBIT", "amount": 300, "description": "Geladeira",
            "date": "2026-11-10", "installments": {"count": 3}}),
        )
        .await;
    let first = purchase["id"].as_str().unwrap();
    let purchase_id = purchase["installment"]["purchase_id"].as_str().unwrap();
    app.post(BULK, json!({"ids": [first], "delete": true}))
        .await
        .ok(200);
    let listed = app.all_pages(WINDOW, 50).await;
    let numbers: Vec<&Value> = listed.iter().map(|r| &r["installment"]["number"]).collect();
    assert_eq!(
        numbers,
        [&json!(2)],
        "installment 1 stays deleted: {listed:?}"
    );
    app.get(&format!(
        "/v1/transactions/mocked-installment:{purchase_id}:1"
    ))
    .await
    .problem(404, "projection_not_found");
}

async fn bulk_validation_changes_nothing(backend: Backend) {
    // Every refused call counts against the hourly budget: turn it off.
    let config = ApiConfig {
        bulk_limit_per_hour: 0,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let bank = app.bank("Conta").await;
    let ids = rows(&app, &bank, &[("X", 1.0, "2026-11-01")]).await;
    let id = ids[0].as_str();
    let window = json!({"from": "2026-01-01", "to": "2026-12-31"});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"set": {"notes": "a"}}), vec!["ids"]),
        (json!({"ids": []}), vec!["set"]),
        (
            json!({"ids": [id], "set": {"notes": "a"}, "delete": true}),
            vec!["delete"],
        ),
        (json!({"ids": [id], "delete": false}), vec!["set"]),
        (json!({"ids": [], "delete": true}), vec!["ids"]),
        (json!({"ids": ["nope"], "delete": true}), vec!["ids[0]"]),
        (
            json!({"ids": [id, ZERO_ID], "delete": true}),
            vec!["ids[1]"],
        ),
        (
            json!({"ids": [format!("mocked-recurrence:{ZERO_ID}:2026-11-01")], "delete": true}),
            vec!["ids[0]"],
        ),
        (
            json!({"filter": {"to": "2026-12-31"}, "delete": true}),
            vec!["filter.from"],
        ),
        (
            json!({"filter": {"from": "2026-01-01", "to": "2027-06-01"}, "delete": true}),
            vec!["filter.to"],
        ),
        (
            json!({"filter": {"from": "2026-01-01", "to": "2026-12-31", "limit": "5"}, "delete": true}),
            vec!["filter.limit"],
        ),
        (
            json!({"filter": {"from": "2026-01-01", "to": "2026-12-31", "colour": "red"}, "delete": true}),
            vec!["filter.colour"],
        ),
        (
            json!({"filter": {"from": "2026-01-01", "to": "2026-12-31", "status": "DONE"}, "delete": true}),
            vec!["filter.status"],
        ),
        (
            json!({"filter": {"from": "2026-01-01", "to": "2026-12-31", "search": {"a": 1}}, "delete": true}),
            vec!["filter.search"],
        ),
        (json!({"ids": [id], "set": {}}), vec!["set"]),
        (
            json!({"ids": [id], "set": {"scope": "all", "notes": "x"}}),
            vec!["set.scope"],
        ),
        (
            json!({"ids": [id], "set": {"amount": 0}}),
            vec!["set.amount"],
        ),
        (
            json!({"ids": [id], "set": {"amount": 1.001}}),
            vec!["set.amount"],
        ),
        (
            json!({"ids": [id], "set": {"description": "  "}}),
            vec!["set.description"],
        ),
        (
            json!({"ids": [id], "set": {"colour": "red"}}),
            vec!["set.colour"],
        ),
        (
            json!({"ids": [id], "set": {"category_id": ZERO_ID}}),
            vec!["set.category_id"],
        ),
        (
            json!({"ids": [id], "set": {"tag_ids": [ZERO_ID]}}),
            vec!["set.tag_ids"],
        ),
        (
            json!({"ids": [id], "set": {"account_id": ZERO_ID}}),
            vec!["set.account_id"],
        ),
        (
            json!({"ids": [id], "set": {"account_id": 7}}),
            vec!["set.account_id"],
        ),
        (
            json!({"filter": window, "delete": true, "expected_count": -1}),
            vec!["expected_count"],
        ),
        (
            json!({"ids": [id], "delete": true, "force": true}),
            vec!["force"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.post(BULK, body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    let r = row(&app, id).await;
    assert_eq!(r["notes"], Value::Null);
}

async fn more_than_5000_rows_is_refused(backend: Backend) {
    // This checks the cap, not the speed: 5,000 row updates in one request
    // may pass the default deadline on a slow CI machine (per-row writes;
    // issue 12 is about making them cheap), so the deadline is raised here.
    let config = ApiConfig {
        request_timeout: std::time::Duration::from_secs(120),
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let bank = app.bank("Conta").await;
    let account = AccountId::parse(&bank).unwrap();
    let state = TransactionState {
        date: jiff::civil::date(2026, 11, 1),
        tx_type: TxType::Debit,
        status: TxStatus::Posted,
        amount: Money::from_cents(100),
        description: "Café".into(),
        notes: None,
        category_id: None,
        tag_ids: Vec::new(),
        hide_from_results: false,
    };
    let batch = ImportBatch {
        rows: (0..5_001)
            .map(|_| ImportRow {
                id: TransactionId::new(),
                account_id: account,
                state: state.clone(),
                link: SeriesLink::None,
                payment: None,
            })
            .collect(),
        ..ImportBatch::default()
    };
    let now = crate::support::NOW.parse().unwrap();
    app.store.import(app.user, &batch, now).await.unwrap();
    let filter = json!({"from": "2026-11-01", "to": "2026-11-01"});
    app.post(BULK, json!({"filter": filter, "delete": true}))
        .await
        .invalid(&["filter"]);
    let many: Vec<String> = batch.rows.iter().map(|r| r.id.to_string()).collect();
    app.post(BULK, json!({"ids": many, "delete": true}))
        .await
        .invalid(&["ids"]);
    // 5,000 exactly is allowed.
    let response = app
        .post(BULK, json!({"ids": many[..5_000], "set": {"notes": "ok"}}))
        .await;
    assert_eq!(response.ok(200)["updated_count"], 5_000);
}

async fn bulk_has_its_own_hourly_limit(backend: Backend) {
    let config = ApiConfig {
        bulk_limit_per_hour: 2,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let bank = app.bank("Conta").await;
    let ids = rows(&app, &bank, &[("X", 1.0, "2026-11-01")]).await;
    let body = json!({"ids": ids, "set": {"notes": "a"}});
    app.post(BULK, body.clone()).await.ok(200);
    // A refused call counts too: the limit is applied before any work.
    app.post(BULK, json!({}))
        .await
        .problem(400, "validation_error");
    let limited = app.post(BULK, body.clone()).await;
    limited.problem(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
    assert_eq!(limited.header("ratelimit-limit"), Some("2"));
    assert_eq!(limited.header("ratelimit-remaining"), Some("0"));
    // Other routes keep their own budget.
    app.get("/v1/me").await.ok(200);
    // The budget is per key.
    let other = app.key_for(app.user, &[Scope::Read, Scope::Write]).await;
    let response = app.call(Method::POST, BULK, Some(&other), Some(body)).await;
    response.ok(200);
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    app.call(Method::POST, BULK, Some(&read_only), Some(json!({})))
        .await
        .problem(403, "insufficient_scope");
}

/// A failure injected part-way through (a trigger refusing the third row)
/// leaves every row as it was.
async fn a_failure_part_way_changes_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let ids = rows(
        &app,
        &bank,
        &[
            ("A", 1.0, "2026-11-05"),
            ("B", 2.0, "2026-11-04"),
            ("C", 3.0, "2026-11-03"),
            ("D", 4.0, "2026-11-02"),
        ],
    )
    .await;
    // Rows are changed newest first: A, B, then C fails.
    let victim = &ids[2];
    if app.url.starts_with("sqlite:") {
        execute(
            &app,
            &format!(
                "CREATE TRIGGER boom BEFORE UPDATE ON transactions WHEN OLD.id = '{victim}' \
                 BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            ),
        )
        .await;
    } else {
        execute(
            &app,
            &format!(
                "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF OLD.id = '{victim}' THEN RAISE EXCEPTION 'injected failure'; END IF; \
                 RETURN NEW; END $$; \
                 CREATE TRIGGER boom BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION boom()"
            ),
        )
        .await;
    }
    let response = app
        .post(
            BULK,
            json!({"ids": ids, "set": {"notes": "lote", "category_id": MERCADO}}),
        )
        .await;
    response.problem(500, "internal_error");
    for id in &ids {
        let r = row(&app, id).await;
        assert_eq!(r["notes"], Value::Null, "row {id} changed: {r}");
        assert_eq!(r["category_id"], Value::Null);
    }
    let response = app
        .post(
            BULK,
            json!({"filter": {"from": "2026-11-01", "to": "2026-11-30"}, "delete": true}),
        )
        .await;
    // Deleting does not fire the UPDATE trigger: this one goes through.
    assert_eq!(response.ok(200)["deleted_count"], 4);
}

/// Rows from a bank connection (imported the way `cofre import-ofx` does)
/// keep the bank's fields and are never deleted by a bulk call.
async fn open_finance_rows_keep_the_banks_fields(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta conectada").await;
    let ctx = WriteContext {
        now: crate::support::NOW.parse().unwrap(),
        today: jiff::civil::date(2026, 11, 22),
    };
    let statement = include_bytes!("../fixtures/ofx/bank-checking-sgml.ofx");
    let imported = cofre_api::import::import_ofx(
        app.store.as_ref(),
        AccountId::parse(&bank).unwrap(),
        statement,
        ctx,
    )
    .await
    .unwrap();
    let own = rows(&app, &bank, &[("Lançamento manual", 10.0, "2026-11-15")]).await;
    let november = "from=2026-11-01&to=2026-11-30";
    let before = app.all_pages(november, 100).await;
    let banked: Vec<&Value> = before
        .iter()
        .filter(|r| r["open_finance"] == true)
        .collect();
    assert_eq!(banked.len(), imported.added);
    let filter = json!({"from": "2026-11-01", "to": "2026-11-30"});

    // Unlocked fields change; locked ones are reported per row.
    let response = app
        .post(
            BULK,
            json!({"filter": filter, "set": {"category_id": MERCADO, "amount": 1}}),
        )
        .await;
    let body = response.ok(200).clone();
    let total = before.len() as u64;
    assert_eq!(body["matched_count"], total);
    assert_eq!(body["updated_count"], total);
    assert_eq!(body["skipped_open_finance"], banked.len() as u64);
    for skipped in body["skipped"].as_array().unwrap() {
        assert_eq!(skipped["reason"], "open_finance_locked");
        assert_eq!(skipped["fields"], json!(["amount"]));
    }
    for original in &banked {
        let now = row(&app, original["id"].as_str().unwrap()).await;
        assert_eq!(now["category_id"], MERCADO);
        assert_eq!(now["amount"], original["amount"], "the bank's amount stays");
    }
    let mine = row(&app, &own[0]).await;
    assert_eq!(mine["amount"], 1.0);
    assert_eq!(mine["category_id"], MERCADO);

    // Only locked fields: bank rows are skipped whole.
    let response = app
        .post(
            BULK,
            json!({"filter": filter, "set": {"description": "Renomeado", "date": "2026-11-20"}}),
        )
        .await;
    let body = response.ok(200).clone();
    assert_eq!(body["updated_count"], 1);
    assert_eq!(body["skipped"][0]["fields"], json!(["date", "description"]));
    for original in &banked {
        let now = row(&app, original["id"].as_str().unwrap()).await;
        assert_eq!(now["description"], original["description"]);
        assert_eq!(now["date"], original["date"]);
    }

    // Deletion: bank rows stay, listed with no fields.
    let response = app
        .post(BULK, json!({"filter": filter, "delete": true}))
        .await;
    let body = response.ok(200).clone();
    assert_eq!(body["deleted_count"], 1);
    assert_eq!(body["skipped_open_finance"], banked.len() as u64);
    assert_eq!(body["skipped"][0]["fields"], json!([]));
    let after = app.all_pages(november, 100).await;
    assert_eq!(after.len(), banked.len());
    assert!(after.iter().all(|r| r["open_finance"] == true));
}

async fn duplicates_groups_look_alike_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (a, b) = (app.bank("A").await, app.bank("B").await);
    let on_a = rows(
        &app,
        &a,
        &[
            ("Netflix", 39.9, "2026-11-10"),
            ("Mercado Extra", 250.0, "2026-11-01"),
            ("Netflix", 39.9, "2026-10-10"), // a month earlier: no duplicate
            ("Old", 5.0, "2026-08-01"),
        ],
    )
    .await;
    let on_b = rows(
        &app,
        &b,
        &[
            ("  NETFLIX ", 39.9, "2026-11-12"),
            ("Mercado extra", 250.0, "2026-11-04"),
            ("Old", 5.0, "2026-08-02"),
        ],
    )
    .await;
    // A credit of the same amount is no duplicate of a debit; hidden rows
    // are not considered.
    app.tx(
        json!({"account_id": a, "type": "CREDIT", "amount": 39.9, "description": "Netflix",
        "date": "2026-11-11"}),
    )
    .await;
    let hidden = rows(&app, &a, &[("Mercado Extra", 250.0, "2026-11-02")]).await;
    app.patch(
        &format!("/v1/transactions/{}", hidden[0]),
        json!({"hide_from_results": true}),
    )
    .await
    .ok(200);

    let response = app.get("/v1/transactions/duplicates").await;
    let body = response.ok(200);
    assert_eq!(
        body["period"],
        json!({"from": "2026-08-25", "to": "2026-11-22"})
    );
    assert_eq!(body["group_count"], 2);
    assert_eq!(body["duplicate_row_count"], 4);
    let groups = body["groups"].as_array().unwrap();
    assert_eq!(groups[0]["description"], "Netflix");
    assert_eq!(groups[0]["amount"], 39.9);
    assert_eq!(groups[0]["type"], "DEBIT");
    let first_ids: Vec<&Value> = groups[0]["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(first_ids, [&json!(on_a[0]), &json!(on_b[0])]);
    let sample = &groups[0]["transactions"][1];
    assert_eq!(sample["account_id"], b.as_str());
    assert_eq!(sample["date"], "2026-11-12");
    assert_eq!(sample["status"], "POSTED");
    assert_eq!(sample["source"], "API");
    assert_eq!(sample["category_id"], Value::Null);
    assert_eq!(groups[1]["description"], "Mercado Extra");
    assert_eq!(groups[1]["transactions"].as_array().unwrap().len(), 2);

    // An explicit period reaches the August pair.
    let response = app
        .get("/v1/transactions/duplicates?from=2026-07-01&to=2026-08-31")
        .await;
    let body = response.ok(200);
    assert_eq!(body["group_count"], 1);
    assert_eq!(body["groups"][0]["transactions"][0]["id"], on_a[3].as_str());
    assert_eq!(body["groups"][0]["transactions"][1]["id"], on_b[2].as_str());
    assert_eq!(
        body["period"],
        json!({"from": "2026-07-01", "to": "2026-08-31"})
    );
}

async fn duplicates_validates_its_period(backend: Backend) {
    let app = TestApp::start(backend).await;
    let base = "/v1/transactions/duplicates";
    app.get(&format!("{base}?from=2026-02-30"))
        .await
        .invalid(&["from"]);
    app.get(&format!("{base}?from=2025-01-01&to=2026-06-01"))
        .await
        .invalid(&["to"]);
    app.get(&format!("{base}?from=2026-06-01&to=2026-05-01"))
        .await
        .invalid(&["to"]);
    app.get(&format!("{base}?since=2026-01-01"))
        .await
        .invalid(&["since"]);
    let body = app.get(&format!("{base}?to=2026-03-31")).await;
    assert_eq!(
        body.ok(200)["period"],
        json!({"from": "2026-01-01", "to": "2026-03-31"})
    );
    let empty = app.get(base).await;
    assert_eq!(empty.ok(200)["groups"], json!([]));
}

on_both_backends!(
    set_by_ids_changes_every_row,
    filter_selects_what_the_list_shows,
    expected_count_guards_the_selection,
    deleted_series_rows_do_not_come_back,
    bulk_validation_changes_nothing,
    more_than_5000_rows_is_refused,
    bulk_has_its_own_hourly_limit,
    a_failure_part_way_changes_nothing,
    open_finance_rows_keep_the_banks_fields,
    duplicates_groups_look_alike_rows,
    duplicates_validates_its_period,
);
