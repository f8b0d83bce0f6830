//! `/v1/accounts`: creation defaults, opening balances, card settings,
//! validation, computed balances, PATCH, archive and DELETE.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TODAY, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

/// The keys of an Account, sorted.
const ACCOUNT_KEYS: [&str; 15] = [
    "archived",
    "balance",
    "card_holders",
    "card_icon_id",
    "created_at",
    "credit",
    "currency",
    "exclude_from_totals",
    "icon_id",
    "id",
    "open_finance",
    "pay_bill_from_account_id",
    "sub_type",
    "title",
    "type",
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

fn id_of(value: &Value) -> String {
    value["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an id: {value}"))
        .to_owned()
}

/// POST /v1/accounts expecting 201; returns the body.
async fn create(app: &TestApp, body: Value) -> Value {
    let response = app.post("/v1/accounts", body.clone()).await;
    assert_eq!(response.status, 201, "{body}: {}", response.body);
    response.body.clone()
}

async fn get_account(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/accounts/{id}")).await.ok(200).clone()
}

async fn list_accounts(app: &TestApp) -> Vec<Value> {
    app.get("/v1/accounts").await.ok(200)["data"]
        .as_array()
        .expect("data array")
        .clone()
}

async fn patch_account(app: &TestApp, id: &str, body: Value) -> Value {
    let response = app.patch(&format!("/v1/accounts/{id}"), body.clone()).await;
    assert_eq!(response.status, 200, "{body}: {}", response.body);
    response.body.clone()
}

/// The hidden rows of today (where opening balances live).
async fn hidden_today(app: &TestApp) -> Vec<Value> {
    let path = format!("/v1/transactions?from={TODAY}&to={TODAY}&hidden=true");
    app.get(&path).await.ok(200)["data"]
        .as_array()
        .expect("data array")
        .clone()
}

async fn visible_today(app: &TestApp) -> Vec<Value> {
    let path = format!("/v1/transactions?from={TODAY}&to={TODAY}");
    app.get(&path).await.ok(200)["data"]
        .as_array()
        .expect("data array")
        .clone()
}

fn balance(account: &Value) -> f64 {
    account["balance"]
        .as_f64()
        .unwrap_or_else(|| panic!("a numeric balance: {account}"))
}

async fn raw_account(app: &TestApp, id: &str) -> String {
    let (status, text) = app
        .raw(Method::GET, &format!("/v1/accounts/{id}"), None)
        .await;
    assert_eq!(status, 200, "{text}");
    text
}

// ---------------------------------------------------------------------------
// Creation: opening balance

async fn initial_balance_creates_a_hidden_posted_opening_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (status, text) = app
        .raw(
            Method::POST,
            "/v1/accounts",
            Some(json!({"type": "BANK", "title": "Nubank", "initial_balance": 1500.50})),
        )
        .await;
    assert_eq!(status, 201, "{text}");
    assert!(text.contains(r#""balance":1500.50"#), "{text}");
    let created: Value = serde_json::from_str(&text).unwrap();
    let account = id_of(&created);
    assert_eq!(created["balance"], json!(1500.5));
    let opening = created["initial_balance_transaction_id"]
        .as_str()
        .unwrap_or_else(|| panic!("an opening row id: {created}"))
        .to_owned();
    assert!(uuid::Uuid::try_parse(&opening).is_ok(), "{opening}");

    // The row, read by its id.
    let response = app.get(&format!("/v1/transactions/{opening}")).await;
    let row = response.ok(200)["transaction"].clone();
    assert_eq!(row["id"], opening.as_str());
    assert_eq!(row["account_id"], account.as_str());
    assert_eq!(row["description"], "Saldo inicial");
    assert_eq!(row["type"], "CREDIT");
    assert_eq!(row["status"], "POSTED");
    assert_eq!(row["amount"], json!(1500.5));
    assert_eq!(row["date"], TODAY);
    assert_eq!(row["currency"], "BRL");
    assert_eq!(row["hide_from_results"], true);
    assert_eq!(row["projected"], false);
    assert_eq!(row["transfer_group_id"], Value::Null);
    let (_, text) = app
        .raw(Method::GET, &format!("/v1/transactions/{opening}"), None)
        .await;
    assert!(text.contains(r#""amount":1500.50"#), "{text}");

    // It is among today's hidden rows, and not among the visible ones.
    let hidden = hidden_today(&app).await;
    assert_eq!(hidden.len(), 1, "{hidden:?}");
    assert_eq!(hidden[0], row);
    assert!(
        visible_today(&app)
            .await
            .iter()
            .all(|t| t["id"] != opening.as_str()),
        "the opening row is not income and stays hidden"
    );

    // The stored account carries the balance.
    let stored = get_account(&app, &account).await;
    assert_eq!(stored["balance"], json!(1500.5));
    assert!(
        raw_account(&app, &account)
            .await
            .contains(r#""balance":1500.50"#)
    );
}

async fn negative_initial_balance_is_a_debit_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = create(
        &app,
        json!({"type": "BANK", "title": "Overdraft", "initial_balance": -250.75}),
    )
    .await;
    assert_eq!(created["balance"], json!(-250.75));
    let opening = created["initial_balance_transaction_id"]
        .as_str()
        .expect("opening row id")
        .to_owned();
    let row = app.get(&format!("/v1/transactions/{opening}")).await;
    let row = row.ok(200)["transaction"].clone();
    assert_eq!(row["type"], "DEBIT");
    assert_eq!(row["amount"], json!(250.75), "amounts are positive");
    assert_eq!(row["status"], "POSTED");
    assert_eq!(row["description"], "Saldo inicial");
    assert_eq!(row["hide_from_results"], true);
    assert_eq!(row["date"], TODAY);
    let account = id_of(&created);
    assert_eq!(get_account(&app, &account).await["balance"], json!(-250.75));
    assert!(
        raw_account(&app, &account)
            .await
            .contains(r#""balance":-250.75"#)
    );

    // A card can open with a debt too.
    let card = create(&app, json!({"type": "CREDIT", "initial_balance": -99.9})).await;
    assert_eq!(card["balance"], json!(-99.9));
    assert!(card["initial_balance_transaction_id"].is_string());
}

async fn zero_or_absent_initial_balance_creates_no_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let zero = create(&app, json!({"type": "BANK", "initial_balance": 0})).await;
    assert_eq!(zero["initial_balance_transaction_id"], Value::Null);
    assert_eq!(zero["balance"], json!(0.0));
    let zero_decimals = create(&app, json!({"type": "BANK", "initial_balance": 0.00})).await;
    assert_eq!(zero_decimals["initial_balance_transaction_id"], Value::Null);
    let absent = create(&app, json!({"type": "BANK"})).await;
    assert_eq!(absent["initial_balance_transaction_id"], Value::Null);
    assert_eq!(absent["balance"], json!(0.0));
    assert!(
        raw_account(&app, &id_of(&zero))
            .await
            .contains(r#""balance":0.00"#)
    );
    assert_eq!(hidden_today(&app).await, Vec::<Value>::new());
}

async fn initial_balance_is_validated(backend: Backend) {
    let app = TestApp::start(backend).await;
    for value in [json!(10.001), json!("100"), json!(true)] {
        app.post(
            "/v1/accounts",
            json!({"type": "BANK", "initial_balance": value}),
        )
        .await
        .invalid(&["initial_balance"]);
    }
    assert_eq!(list_accounts(&app).await, Vec::<Value>::new());
    assert_eq!(hidden_today(&app).await, Vec::<Value>::new());
}

// ---------------------------------------------------------------------------
// Creation: defaults and shape

async fn bank_account_defaults_and_shape(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = create(&app, json!({"type": "BANK"})).await;
    let mut with_opening: Vec<&str> = ACCOUNT_KEYS.to_vec();
    with_opening.push("initial_balance_transaction_id");
    with_opening.sort();
    assert_eq!(keys(&created), with_opening);
    let id = id_of(&created);
    assert!(uuid::Uuid::try_parse(&id).is_ok(), "{id}");
    let expected = json!({
        "id": id,
        "type": "BANK",
        "sub_type": "CHECKING_ACCOUNT",
        "title": "Conta corrente",
        "archived": false,
        "exclude_from_totals": false,
        "currency": "BRL",
        "balance": 0.0,
        "credit": null,
        "pay_bill_from_account_id": null,
        "icon_id": null,
        "card_icon_id": null,
        "open_finance": {"connected": false, "connector_name": null},
        "card_holders": null,
        "created_at": "2026-11-22T15:00:00.000Z",
        "initial_balance_transaction_id": null,
    });
    assert_eq!(created, expected);

    // GET answers the Account, without the creation-only field.
    let stored = get_account(&app, &id).await;
    assert_eq!(keys(&stored), ACCOUNT_KEYS);
    let mut account = expected.clone();
    account
        .as_object_mut()
        .unwrap()
        .remove("initial_balance_transaction_id");
    assert_eq!(stored, account);

    // Explicit values instead of the defaults.
    let savings = create(
        &app,
        json!({"type": "BANK", "sub_type": "SAVINGS_ACCOUNT", "title": "Reserva",
               "exclude_from_totals": true}),
    )
    .await;
    assert_eq!(savings["sub_type"], "SAVINGS_ACCOUNT");
    assert_eq!(savings["title"], "Reserva");
    assert_eq!(savings["exclude_from_totals"], true);
    assert_eq!(savings["type"], "BANK");
    assert_eq!(savings["credit"], Value::Null);
}

async fn credit_card_defaults(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (status, text) = app
        .raw(
            Method::POST,
            "/v1/accounts",
            Some(json!({"type": "CREDIT"})),
        )
        .await;
    assert_eq!(status, 201, "{text}");
    assert!(text.contains(r#""limit":0.00"#), "{text}");
    let created: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(created["type"], "CREDIT");
    assert_eq!(created["sub_type"], "CREDIT_CARD");
    assert_eq!(created["title"], "Cartão de crédito");
    assert_eq!(created["balance"], json!(0.0));
    assert_eq!(created["currency"], "BRL");
    assert_eq!(created["pay_bill_from_account_id"], Value::Null);
    assert_eq!(created["card_icon_id"], Value::Null);
    assert_eq!(created["archived"], false);
    assert_eq!(
        created["credit"],
        json!({"close_day": 3, "due_day": 10, "due_day_of_month": 10,
               "cycle_auto": true, "limit": 0.0})
    );
    assert_eq!(
        created["open_finance"],
        json!({"connected": false, "connector_name": null})
    );
    assert_eq!(created["created_at"], "2026-11-22T15:00:00.000Z");

    let stored = get_account(&app, &id_of(&created)).await;
    assert_eq!(stored["credit"], created["credit"]);

    // Given values replace the defaults.
    let (status, text) = app
        .raw(
            Method::POST,
            "/v1/accounts",
            Some(
                json!({"type": "CREDIT", "sub_type": "CREDIT_CARD", "title": "Nubank",
                    "credit_limit": 5000.5, "credit_due_day": 15}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{text}");
    assert!(text.contains(r#""limit":5000.50"#), "{text}");
    let card: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        card["credit"],
        json!({"close_day": 8, "due_day": 15, "due_day_of_month": 15,
               "cycle_auto": true, "limit": 5000.5})
    );
}

async fn card_days_accept_strings_and_the_synonym(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT", "credit_due_day": "5"})).await;
    assert_eq!(card["credit"]["due_day"], 5);
    assert_eq!(card["credit"]["due_day_of_month"], 5);
    // Seven days before the 5th wraps into the previous month.
    assert_eq!(card["credit"]["close_day"], 29);
    assert_eq!(card["credit"]["cycle_auto"], true);

    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_due_day_of_month": 20}),
    )
    .await;
    assert_eq!(card["credit"]["due_day"], 20);
    assert_eq!(card["credit"]["due_day_of_month"], 20);
    assert_eq!(card["credit"]["close_day"], 13);

    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_due_day_of_month": "12"}),
    )
    .await;
    assert_eq!(card["credit"]["due_day"], 12);
    assert_eq!(card["credit"]["due_day_of_month"], 12);

    // Both synonyms with the same value (one as a string) are fine.
    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_due_day": 25, "credit_due_day_of_month": "25"}),
    )
    .await;
    assert_eq!(card["credit"]["due_day"], 25);
    assert_eq!(card["credit"]["due_day_of_month"], 25);

    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_close_day": "28", "credit_due_day": "7"}),
    )
    .await;
    assert_eq!(
        card["credit"],
        json!({"close_day": 28, "due_day": 7, "due_day_of_month": 7,
               "cycle_auto": false, "limit": 0.0})
    );

    // The bounds 1 and 31 are days.
    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_close_day": 31, "credit_due_day": 1}),
    )
    .await;
    assert_eq!(card["credit"]["close_day"], 31);
    assert_eq!(card["credit"]["due_day"], 1);
    let card = create(&app, json!({"type": "CREDIT", "credit_due_day": 31})).await;
    assert_eq!(card["credit"]["due_day"], 31);
    assert_eq!(card["credit"]["close_day"], 24);
}

async fn mismatched_due_day_synonyms_are_refused(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "credit_due_day": 10, "credit_due_day_of_month": 11}),
    )
    .await
    .invalid(&["credit_due_day_of_month"]);
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "credit_due_day": "5", "credit_due_day_of_month": 15}),
    )
    .await
    .invalid(&["credit_due_day_of_month"]);

    let card = create(&app, json!({"type": "CREDIT"})).await;
    app.patch(
        &format!("/v1/accounts/{}", id_of(&card)),
        json!({"credit_due_day": 8, "credit_due_day_of_month": 9}),
    )
    .await
    .invalid(&["credit_due_day_of_month"]);
    assert_eq!(
        get_account(&app, &id_of(&card)).await["credit"]["due_day"],
        10
    );
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn card_days_out_of_range_name_the_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT"})).await;
    let card_path = format!("/v1/accounts/{}", id_of(&card));
    for field in [
        "credit_close_day",
        "credit_due_day",
        "credit_due_day_of_month",
    ] {
        for value in [
            json!(0),
            json!(32),
            json!(-1),
            json!("x"),
            json!("0"),
            json!("32"),
            json!(""),
            json!(1.5),
            json!(true),
        ] {
            let mut body = json!({"type": "CREDIT"});
            body[field] = value.clone();
            let response = app.post("/v1/accounts", body.clone()).await;
            assert_eq!(response.status, 400, "{body}: {}", response.body);
            response.invalid(&[field]);

            let mut body = json!({});
            body[field] = value;
            let response = app.patch(&card_path, body.clone()).await;
            assert_eq!(response.status, 400, "PATCH {body}: {}", response.body);
            response.invalid(&[field]);
        }
    }
    assert_eq!(list_accounts(&app).await.len(), 1);
    assert_eq!(
        get_account(&app, &id_of(&card)).await["credit"],
        card["credit"]
    );
}

async fn explicit_close_day_turns_cycle_auto_off(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT", "credit_close_day": 20})).await;
    assert_eq!(
        card["credit"],
        json!({"close_day": 20, "due_day": 10, "due_day_of_month": 10,
               "cycle_auto": false, "limit": 0.0})
    );
    // The explicit close day stays when the due day changes later.
    let patched = patch_account(&app, &id_of(&card), json!({"credit_due_day": 28})).await;
    assert_eq!(patched["credit"]["close_day"], 20);
    assert_eq!(patched["credit"]["due_day"], 28);
    assert_eq!(patched["credit"]["cycle_auto"], false);

    // cycle_auto false with no close day keeps the derived day, fixed.
    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_cycle_auto": false, "credit_due_day": 15}),
    )
    .await;
    assert_eq!(card["credit"]["cycle_auto"], false);
    assert_eq!(card["credit"]["close_day"], 8);

    // cycle_auto true with the close day it would derive anyway is fine.
    let card = create(
        &app,
        json!({"type": "CREDIT", "credit_cycle_auto": true, "credit_close_day": 3}),
    )
    .await;
    assert_eq!(card["credit"]["cycle_auto"], true);
    assert_eq!(card["credit"]["close_day"], 3);
}

async fn cycle_auto_with_a_contradicting_close_day_is_refused(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "credit_cycle_auto": true, "credit_close_day": 20}),
    )
    .await
    .invalid(&["credit_close_day"]);
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "credit_cycle_auto": true, "credit_close_day": 3,
               "credit_due_day": 15}),
    )
    .await
    .invalid(&["credit_close_day"]);

    let card = create(&app, json!({"type": "CREDIT"})).await;
    let path = format!("/v1/accounts/{}", id_of(&card));
    app.patch(
        &path,
        json!({"credit_cycle_auto": true, "credit_close_day": 25}),
    )
    .await
    .invalid(&["credit_close_day"]);
    assert_eq!(
        get_account(&app, &id_of(&card)).await["credit"],
        card["credit"]
    );
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn patch_card_billing_days(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT", "credit_limit": 1000})).await;
    let id = id_of(&card);
    // While automatic, the close day follows a new due day.
    let patched = patch_account(&app, &id, json!({"credit_due_day_of_month": "15"})).await;
    assert_eq!(
        patched["credit"],
        json!({"close_day": 8, "due_day": 15, "due_day_of_month": 15,
               "cycle_auto": true, "limit": 1000.0})
    );
    // A close day turns automatic off.
    let patched = patch_account(&app, &id, json!({"credit_close_day": 1})).await;
    assert_eq!(
        patched["credit"],
        json!({"close_day": 1, "due_day": 15, "due_day_of_month": 15,
               "cycle_auto": false, "limit": 1000.0})
    );
    // Turning it on again derives the close day from the due day.
    let patched = patch_account(&app, &id, json!({"credit_cycle_auto": true})).await;
    assert_eq!(patched["credit"]["close_day"], 8);
    assert_eq!(patched["credit"]["cycle_auto"], true);
    assert_eq!(get_account(&app, &id).await["credit"], patched["credit"]);
}

// ---------------------------------------------------------------------------
// Creation: validation

async fn card_fields_on_a_bank_account_are_refused(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Itaú").await;
    let bank_path = format!("/v1/accounts/{bank}");
    let before = get_account(&app, &bank).await;
    for (field, value) in [
        ("credit_limit", json!(1000)),
        ("credit_close_day", json!(5)),
        ("credit_due_day", json!(12)),
        ("credit_due_day_of_month", json!("12")),
        ("credit_cycle_auto", json!(true)),
        ("card_icon_id", json!("card-visa")),
        ("pay_bill_from_account_id", json!(bank)),
    ] {
        let mut body = json!({"type": "BANK"});
        body[field] = value.clone();
        let response = app.post("/v1/accounts", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&[field]);

        let mut body = json!({});
        body[field] = value;
        let response = app.patch(&bank_path, body.clone()).await;
        assert_eq!(response.status, 400, "PATCH {body}: {}", response.body);
        response.invalid(&[field]);
    }
    assert_eq!(list_accounts(&app).await.len(), 1);
    assert_eq!(get_account(&app, &bank).await, before);
}

async fn sub_type_must_fit_the_type(backend: Backend) {
    let app = TestApp::start(backend).await;
    for (body, field) in [
        (
            json!({"type": "BANK", "sub_type": "CREDIT_CARD"}),
            "sub_type",
        ),
        (
            json!({"type": "CREDIT", "sub_type": "SAVINGS_ACCOUNT"}),
            "sub_type",
        ),
        (
            json!({"type": "CREDIT", "sub_type": "CHECKING_ACCOUNT"}),
            "sub_type",
        ),
        (
            json!({"type": "BANK", "sub_type": "INVESTMENT"}),
            "sub_type",
        ),
        (
            json!({"type": "BANK", "sub_type": "checking_account"}),
            "sub_type",
        ),
        (json!({"type": "CASH"}), "type"),
        (json!({"type": "bank"}), "type"),
        (json!({"title": "No type"}), "type"),
        (json!({}), "type"),
    ] {
        let response = app.post("/v1/accounts", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&[field]);
    }
    assert_eq!(list_accounts(&app).await, Vec::<Value>::new());

    let bank = app.bank("Conta").await;
    app.patch(
        &format!("/v1/accounts/{bank}"),
        json!({"sub_type": "CREDIT_CARD"}),
    )
    .await
    .invalid(&["sub_type"]);
    let patched = patch_account(&app, &bank, json!({"sub_type": "SAVINGS_ACCOUNT"})).await;
    assert_eq!(patched["sub_type"], "SAVINGS_ACCOUNT");
    assert_eq!(patched["type"], "BANK");
}

async fn wrongly_typed_type_and_sub_type_name_the_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    // Well-formed JSON whose value has the wrong JSON type is a validation
    // error of that field, not "malformed JSON" of the body.
    for (body, field) in [
        (json!({"type": 1}), "type"),
        (json!({"type": ["BANK"]}), "type"),
        (json!({"type": true}), "type"),
        (json!({"type": "BANK", "sub_type": 2}), "sub_type"),
        (
            json!({"type": "BANK", "sub_type": {"CHECKING_ACCOUNT": 1}}),
            "sub_type",
        ),
    ] {
        let response = app.post("/v1/accounts", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&[field]);
    }
    let bank = app.bank("Conta").await;
    app.patch(&format!("/v1/accounts/{bank}"), json!({"sub_type": 3}))
        .await
        .invalid(&["sub_type"]);
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn currency_code_is_normalised_and_checked(backend: Backend) {
    let app = TestApp::start(backend).await;
    let usd = create(&app, json!({"type": "BANK", "currency_code": "usd"})).await;
    assert_eq!(usd["currency"], "USD");
    let eur = create(&app, json!({"type": "CREDIT", "currency_code": "EUR"})).await;
    assert_eq!(eur["currency"], "EUR");
    for code in ["US", "USDX", "", "U$D", "12A"] {
        let response = app
            .post(
                "/v1/accounts",
                json!({"type": "BANK", "currency_code": code}),
            )
            .await;
        assert_eq!(response.status, 400, "{code:?}: {}", response.body);
        response.invalid(&["currency_code"]);
    }
    app.post(
        "/v1/accounts",
        json!({"type": "BANK", "currency_code": 840}),
    )
    .await
    .invalid(&["currency_code"]);
    assert_eq!(list_accounts(&app).await.len(), 2);

    // A row on the account takes the account's currency.
    let row = app
        .tx(
            json!({"account_id": id_of(&usd), "type": "CREDIT", "amount": 10,
                   "description": "Wire"}),
        )
        .await;
    assert_eq!(row["currency"], "USD");

    let patched = patch_account(&app, &id_of(&usd), json!({"currency_code": "gbp"})).await;
    assert_eq!(patched["currency"], "GBP");
    app.patch(
        &format!("/v1/accounts/{}", id_of(&usd)),
        json!({"currency_code": "GB"}),
    )
    .await
    .invalid(&["currency_code"]);
    assert_eq!(get_account(&app, &id_of(&usd)).await["currency"], "GBP");
}

async fn title_is_limited_to_200_characters(backend: Backend) {
    let app = TestApp::start(backend).await;
    // Counted in characters, not bytes.
    let longest = "ç".repeat(200);
    let created = create(&app, json!({"type": "BANK", "title": longest})).await;
    assert_eq!(created["title"], longest);
    for title in [
        "a".repeat(201),
        "ç".repeat(201),
        String::new(),
        "   ".into(),
    ] {
        let response = app
            .post("/v1/accounts", json!({"type": "BANK", "title": title}))
            .await;
        assert_eq!(response.status, 400, "{title:?}: {}", response.body);
        response.invalid(&["title"]);
    }
    app.post("/v1/accounts", json!({"type": "BANK", "title": 7}))
        .await
        .invalid(&["title"]);
    let path = format!("/v1/accounts/{}", id_of(&created));
    app.patch(&path, json!({"title": "b".repeat(201)}))
        .await
        .invalid(&["title"]);
    assert_eq!(get_account(&app, &id_of(&created)).await["title"], longest);
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn icon_name_resolves_to_an_icon_id(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = create(&app, json!({"type": "BANK", "icon_name": "wallet"})).await;
    assert_eq!(account["icon_id"], "ic-wallet");
    assert_eq!(
        get_account(&app, &id_of(&account)).await["icon_id"],
        "ic-wallet"
    );
    let by_id = create(&app, json!({"type": "BANK", "icon_id": "ic-wallet"})).await;
    assert_eq!(by_id["icon_id"], "ic-wallet");

    app.post(
        "/v1/accounts",
        json!({"type": "BANK", "icon_name": "no-such-icon"}),
    )
    .await
    .invalid(&["icon_name"]);
    app.post(
        "/v1/accounts",
        json!({"type": "BANK", "icon_id": "no-such-icon"}),
    )
    .await
    .invalid(&["icon_id"]);
    assert_eq!(list_accounts(&app).await.len(), 2);

    app.patch(
        &format!("/v1/accounts/{}", id_of(&by_id)),
        json!({"icon_name": "no-such-icon"}),
    )
    .await
    .invalid(&["icon_name"]);
    assert_eq!(
        get_account(&app, &id_of(&by_id)).await["icon_id"],
        "ic-wallet"
    );
}

async fn card_icon_only_on_cards(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT", "card_icon_id": "card-visa"})).await;
    assert_eq!(card["card_icon_id"], "card-visa");
    assert_eq!(
        get_account(&app, &id_of(&card)).await["card_icon_id"],
        "card-visa"
    );
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "card_icon_id": "card-nope"}),
    )
    .await
    .invalid(&["card_icon_id"]);
    app.post(
        "/v1/accounts",
        json!({"type": "BANK", "card_icon_id": "card-visa"}),
    )
    .await
    .invalid(&["card_icon_id"]);
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn pay_bill_from_must_be_the_users_bank_account(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Itaú").await;
    let card = create(
        &app,
        json!({"type": "CREDIT", "pay_bill_from_account_id": bank}),
    )
    .await;
    assert_eq!(card["pay_bill_from_account_id"], bank.as_str());
    assert_eq!(
        get_account(&app, &id_of(&card)).await["pay_bill_from_account_id"],
        bank.as_str()
    );

    let (_, other_key) = app.new_user().await;
    let foreign = app
        .call(
            Method::POST,
            "/v1/accounts",
            Some(&other_key),
            Some(json!({"type": "BANK"})),
        )
        .await;
    let foreign = id_of(foreign.ok(201));

    for value in [
        json!(id_of(&card)),
        json!(ZERO_ID),
        json!(foreign),
        json!("not-a-uuid"),
        json!(""),
        json!(42),
    ] {
        let response = app
            .post(
                "/v1/accounts",
                json!({"type": "CREDIT", "pay_bill_from_account_id": value}),
            )
            .await;
        assert_eq!(response.status, 400, "{value}: {}", response.body);
        response.invalid(&["pay_bill_from_account_id"]);
    }
    assert_eq!(list_accounts(&app).await.len(), 2);

    // The same rules on PATCH, including the card itself.
    let path = format!("/v1/accounts/{}", id_of(&card));
    for value in [
        json!(id_of(&card)),
        json!(ZERO_ID),
        json!(foreign),
        json!("nope"),
    ] {
        let response = app
            .patch(&path, json!({"pay_bill_from_account_id": value}))
            .await;
        assert_eq!(response.status, 400, "{value}: {}", response.body);
        response.invalid(&["pay_bill_from_account_id"]);
    }
    assert_eq!(
        get_account(&app, &id_of(&card)).await["pay_bill_from_account_id"],
        bank.as_str()
    );
}

async fn unknown_fields_and_malformed_bodies_are_refused(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.post("/v1/accounts", json!({"type": "BANK", "colour": "red"}))
        .await
        .invalid(&["colour"]);
    app.post("/v1/accounts", json!({"type": "BANK", "balance": 10}))
        .await
        .invalid(&["balance"]);
    app.post("/v1/accounts", json!({"type": "BANK", "archived": true}))
        .await
        .invalid(&["archived"]);
    let bank = app.bank("Conta").await;
    let path = format!("/v1/accounts/{bank}");
    app.patch(&path, json!({"initial_balance": 10}))
        .await
        .invalid(&["initial_balance"]);
    app.patch(&path, json!({"archived": "yes"}))
        .await
        .invalid(&["archived"]);
    let request = Request::builder()
        .method(Method::POST)
        .uri("/v1/accounts")
        .header("authorization", format!("Bearer {}", app.key))
        .header("content-type", "application/json")
        .body(Body::from(r#"{"type": "BANK""#))
        .unwrap();
    app.send(request).await.invalid(&["body"]);
    let request = Request::builder()
        .method(Method::POST)
        .uri("/v1/accounts")
        .header("authorization", format!("Bearer {}", app.key))
        .header("content-type", "text/plain")
        .body(Body::from(r#"{"type": "BANK"}"#))
        .unwrap();
    app.send(request)
        .await
        .problem(415, "unsupported_media_type");
    assert_eq!(list_accounts(&app).await.len(), 1);
}

// ---------------------------------------------------------------------------
// Balances

async fn balance_counts_posted_rows_only(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = create(&app, json!({"type": "BANK", "initial_balance": 1000})).await;
    let bank = id_of(&created);

    let spent = app
        .tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": 200.25,
                   "description": "Mercado"}),
        )
        .await;
    assert_eq!(spent["status"], "POSTED");
    app.tx(
        json!({"account_id": bank, "type": "CREDIT", "amount": 50.10,
                  "description": "Pix recebido"}),
    )
    .await;
    // An older posted row counts as well.
    app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 0.20,
                  "description": "Tarifa", "date": "2026-10-01"}))
        .await;
    // Future-dated: PENDING, not in the balance.
    let future = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 999,
                   "description": "Aluguel", "date": "2026-12-10"}))
        .await;
    assert_eq!(future["status"], "PENDING");
    // Explicitly PENDING today: not in the balance either.
    let pending = app
        .tx(json!({"account_id": bank, "type": "CREDIT", "amount": 77,
                   "description": "A receber", "status": "PENDING"}))
        .await;
    assert_eq!(pending["status"], "PENDING");

    // 1000 - 200.25 + 50.10 - 0.20 = 849.65, with no float drift.
    let text = raw_account(&app, &bank).await;
    assert!(text.contains(r#""balance":849.65"#), "{text}");
    let listed = list_accounts(&app).await;
    assert_eq!(listed[0]["balance"], json!(849.65));

    // Posting the pending row moves the balance; deleting a row moves it back.
    let pending_id = id_of(&pending);
    app.patch(
        &format!("/v1/transactions/{pending_id}"),
        json!({"status": "POSTED"}),
    )
    .await
    .ok(200);
    assert!(
        raw_account(&app, &bank)
            .await
            .contains(r#""balance":926.65"#)
    );
    app.delete(&format!("/v1/transactions/{}", id_of(&spent)))
        .await
        .ok(200);
    assert!(
        raw_account(&app, &bank)
            .await
            .contains(r#""balance":1126.90"#)
    );

    // A card: purchases make it negative, a refund brings it back up.
    let card = id_of(&create(&app, json!({"type": "CREDIT", "credit_limit": 5000})).await);
    app.tx(json!({"account_id": card, "type": "DEBIT", "amount": 300,
                  "description": "Loja"}))
        .await;
    assert_eq!(balance(&get_account(&app, &card).await), -300.0);
    app.tx(
        json!({"account_id": card, "type": "CREDIT", "amount": 100.5,
                  "description": "Estorno"}),
    )
    .await;
    assert!(
        raw_account(&app, &card)
            .await
            .contains(r#""balance":-199.50"#)
    );
    app.tx(json!({"account_id": card, "type": "DEBIT", "amount": 40,
                  "description": "Parcelado", "date": "2027-01-05"}))
        .await;
    assert_eq!(balance(&get_account(&app, &card).await), -199.5);

    // Each account's balance counts its own rows only.
    assert!(
        raw_account(&app, &bank)
            .await
            .contains(r#""balance":1126.90"#)
    );
}

// ---------------------------------------------------------------------------
// Reading

async fn list_is_ordered_by_creation(backend: Backend) {
    let app = TestApp::start(backend).await;
    let mut created = Vec::new();
    // Titles and types in no sorted order, so that only creation order fits.
    for (kind, title) in [
        ("BANK", "Zeta"),
        ("CREDIT", "Mastercard"),
        ("BANK", "Alfa"),
        ("BANK", "Kappa"),
        ("CREDIT", "Black"),
        ("BANK", "Beta"),
        ("CREDIT", "Yellow"),
        ("BANK", "Omega"),
    ] {
        let mut account = create(&app, json!({"type": kind, "title": title})).await;
        account
            .as_object_mut()
            .unwrap()
            .remove("initial_balance_transaction_id");
        created.push(account);
    }
    let titles = |list: &[Value]| -> Vec<String> {
        list.iter()
            .map(|a| a["title"].as_str().unwrap().to_owned())
            .collect()
    };
    let listed = list_accounts(&app).await;
    assert_eq!(titles(&listed), titles(&created), "creation order");
    assert_eq!(listed, created);

    // Archiving does not move an account in the list.
    patch_account(&app, &id_of(&created[2]), json!({"archived": true})).await;
    let listed = list_accounts(&app).await;
    assert_eq!(titles(&listed), titles(&created), "creation order");
}

/// The accounts are kept in memory until one changes, from this process or
/// another one sharing the database, and their balances are read afresh.
async fn the_list_follows_changes_from_any_process(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = id_of(&create(&app, json!({"type": "BANK", "title": "Conta"})).await);
    assert_eq!(list_accounts(&app).await[0]["balance"], 0.0);
    // A row moves the balance; the account itself is as it was.
    app.tx(json!({"account_id": bank, "type": "CREDIT", "amount": 25.5, "description": "Pix"}))
        .await;
    assert_eq!(list_accounts(&app).await[0]["balance"], 25.5);
    let other = cofre_store::connect(&app.url).await.expect("second store");
    let id: cofre_domain::AccountId = cofre_domain::AccountId(bank.parse().expect("an id"));
    let renamed = cofre_domain::account::AccountChanges {
        title: Some("Renomeada".into()),
        ..Default::default()
    };
    other
        .update_account(app.user, id, &renamed)
        .await
        .expect("rename");
    let listed = list_accounts(&app).await;
    assert_eq!(listed[0]["title"], "Renomeada");
    assert_eq!(listed[0]["balance"], 25.5);
    let ctx = cofre_store::WriteContext {
        now: jiff::Timestamp::now(),
        today: jiff::civil::date(2026, 11, 22),
    };
    let made = cofre_domain::account::AccountChanges {
        account_type: Some(cofre_domain::account::AccountType::Bank),
        title: Some("Poupança".into()),
        ..Default::default()
    };
    let (savings, _) = other
        .create_account(
            app.user,
            &made,
            Some(cofre_domain::Money::from_cents(700)),
            "BRL",
            ctx,
        )
        .await
        .expect("create");
    let listed = list_accounts(&app).await;
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1]["title"], "Poupança");
    assert_eq!(listed[1]["balance"], 7.0);
    other
        .delete_account(app.user, savings.account.id)
        .await
        .expect("delete");
    assert_eq!(list_accounts(&app).await.len(), 1);
}

async fn list_shows_every_account_of_the_user(backend: Backend) {
    let app = TestApp::start(backend).await;
    assert_eq!(list_accounts(&app).await, Vec::<Value>::new());
    let mut bank = create(&app, json!({"type": "BANK", "initial_balance": 12.3})).await;
    let mut card = create(&app, json!({"type": "CREDIT", "credit_limit": 800})).await;
    let mut old = create(&app, json!({"type": "BANK", "title": "Antiga"})).await;
    for account in [&mut bank, &mut card, &mut old] {
        account
            .as_object_mut()
            .unwrap()
            .remove("initial_balance_transaction_id");
    }
    let old = patch_account(&app, &id_of(&old), json!({"archived": true})).await;

    let listed = list_accounts(&app).await;
    assert_eq!(listed.len(), 3, "{listed:?}");
    for account in &listed {
        assert_eq!(keys(account), ACCOUNT_KEYS);
    }
    let find = |id: String| {
        listed
            .iter()
            .find(|a| a["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} listed"))
            .clone()
    };
    assert_eq!(find(id_of(&bank)), bank);
    assert_eq!(find(id_of(&bank))["balance"], json!(12.3));
    assert_eq!(find(id_of(&card)), card);
    // Archived accounts stay listed, with a null balance.
    let archived = find(id_of(&old));
    assert_eq!(archived, old);
    assert_eq!(archived["archived"], true);
    assert_eq!(archived["balance"], Value::Null);

    // Another user's list is their own.
    let (_, other_key) = app.new_user().await;
    let theirs = app
        .call(Method::GET, "/v1/accounts", Some(&other_key), None)
        .await;
    assert_eq!(theirs.ok(200)["data"], json!([]));
}

async fn get_one_account(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Itaú").await;
    let mut card = create(
        &app,
        json!({"type": "CREDIT", "title": "Visa", "credit_limit": 2500,
               "credit_close_day": 2, "credit_due_day": 9, "pay_bill_from_account_id": bank,
               "icon_name": "wallet", "card_icon_id": "card-visa", "initial_balance": -10}),
    )
    .await;
    card.as_object_mut()
        .unwrap()
        .remove("initial_balance_transaction_id");
    let stored = get_account(&app, &id_of(&card)).await;
    assert_eq!(stored, card);
    assert_eq!(stored["balance"], json!(-10.0));

    app.get("/v1/accounts/not-a-uuid").await.invalid(&["id"]);
    app.get("/v1/accounts/12345").await.invalid(&["id"]);
    let missing = app.get(&format!("/v1/accounts/{ZERO_ID}")).await;
    missing.problem(404, "not_found");
}

// ---------------------------------------------------------------------------
// PATCH

async fn archiving_hides_the_balance(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = create(&app, json!({"type": "BANK", "initial_balance": 100.5})).await;
    let id = id_of(&created);

    let archived = patch_account(&app, &id, json!({"archived": true})).await;
    assert_eq!(archived["archived"], true);
    assert_eq!(archived["balance"], Value::Null);
    assert!(archived.as_object().unwrap().contains_key("balance"));
    let stored = get_account(&app, &id).await;
    assert_eq!(stored["archived"], true);
    assert_eq!(stored["balance"], Value::Null);
    assert_eq!(list_accounts(&app).await[0]["balance"], Value::Null);

    // Other changes keep it archived.
    let renamed = patch_account(&app, &id, json!({"title": "Antiga"})).await;
    assert_eq!(renamed["archived"], true);
    assert_eq!(renamed["balance"], Value::Null);

    let restored = patch_account(&app, &id, json!({"archived": false})).await;
    assert_eq!(restored["archived"], false);
    assert_eq!(restored["balance"], json!(100.5));
    assert!(raw_account(&app, &id).await.contains(r#""balance":100.50"#));
    assert_eq!(list_accounts(&app).await[0]["balance"], json!(100.5));
}

async fn patch_credit_limit(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = create(&app, json!({"type": "CREDIT", "credit_limit": 5000})).await;
    assert_eq!(card["credit"]["limit"], json!(5000.0));
    let id = id_of(&card);
    let path = format!("/v1/accounts/{id}");

    let (status, text) = app
        .raw(Method::PATCH, &path, Some(json!({"credit_limit": 1234.56})))
        .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""limit":1234.56"#), "{text}");

    let cleared = patch_account(&app, &id, json!({"credit_limit": null})).await;
    assert_eq!(cleared["credit"]["limit"], json!(0.0));
    assert!(cleared["credit"]["limit"].is_number());
    assert!(raw_account(&app, &id).await.contains(r#""limit":0.00"#));

    for value in [json!(-1), json!(10.005), json!("100")] {
        let response = app.patch(&path, json!({"credit_limit": value})).await;
        assert_eq!(response.status, 400, "{value}: {}", response.body);
        response.invalid(&["credit_limit"]);
    }
    app.post(
        "/v1/accounts",
        json!({"type": "CREDIT", "credit_limit": -5}),
    )
    .await
    .invalid(&["credit_limit"]);
    assert_eq!(get_account(&app, &id).await["credit"]["limit"], json!(0.0));
}

async fn patch_pay_bill_from_null_clears_it(backend: Backend) {
    let app = TestApp::start(backend).await;
    let first = app.bank("Itaú").await;
    let second = app.bank("Inter").await;
    let card = create(
        &app,
        json!({"type": "CREDIT", "pay_bill_from_account_id": first}),
    )
    .await;
    let id = id_of(&card);
    let moved = patch_account(&app, &id, json!({"pay_bill_from_account_id": second})).await;
    assert_eq!(moved["pay_bill_from_account_id"], second.as_str());
    // Not sending it keeps it.
    let kept = patch_account(&app, &id, json!({"title": "Card"})).await;
    assert_eq!(kept["pay_bill_from_account_id"], second.as_str());
    let cleared = patch_account(&app, &id, json!({"pay_bill_from_account_id": null})).await;
    assert_eq!(cleared["pay_bill_from_account_id"], Value::Null);
    assert_eq!(
        get_account(&app, &id).await["pay_bill_from_account_id"],
        Value::Null
    );
}

async fn patch_keeps_the_fields_not_sent(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Itaú").await;
    let mut card = create(
        &app,
        json!({"type": "CREDIT", "title": "Nubank", "credit_limit": 7500.25,
               "credit_close_day": 2, "credit_due_day": 9, "pay_bill_from_account_id": bank,
               "icon_name": "wallet", "card_icon_id": "card-visa", "currency_code": "usd",
               "exclude_from_totals": true, "initial_balance": -42.1}),
    )
    .await;
    card.as_object_mut()
        .unwrap()
        .remove("initial_balance_transaction_id");
    let id = id_of(&card);

    let unchanged = patch_account(&app, &id, json!({})).await;
    assert_eq!(unchanged, card);

    let renamed = patch_account(&app, &id, json!({"title": "Roxinho"})).await;
    let mut expected = card.clone();
    expected["title"] = json!("Roxinho");
    assert_eq!(renamed, expected);

    let excluded = patch_account(&app, &id, json!({"exclude_from_totals": false})).await;
    expected["exclude_from_totals"] = json!(false);
    assert_eq!(excluded, expected);

    let limit = patch_account(&app, &id, json!({"credit_limit": 9000})).await;
    expected["credit"]["limit"] = json!(9000.0);
    assert_eq!(limit, expected);

    assert_eq!(get_account(&app, &id).await, expected);
    let listed = list_accounts(&app).await;
    let in_list = listed.iter().find(|a| a["id"] == id.as_str());
    assert_eq!(in_list, Some(&expected));
}

async fn patch_and_delete_need_an_existing_account(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.patch(&format!("/v1/accounts/{ZERO_ID}"), json!({"title": "x"}))
        .await
        .problem(404, "not_found");
    app.patch("/v1/accounts/not-a-uuid", json!({"title": "x"}))
        .await
        .invalid(&["id"]);
    app.delete(&format!("/v1/accounts/{ZERO_ID}"))
        .await
        .problem(404, "not_found");
    app.delete("/v1/accounts/not-a-uuid").await.invalid(&["id"]);
    assert_eq!(list_accounts(&app).await, Vec::<Value>::new());
}

// ---------------------------------------------------------------------------
// DELETE

async fn delete_removes_the_account_and_its_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = create(&app, json!({"type": "BANK", "initial_balance": 500})).await;
    let doomed = id_of(&created);
    let opening = created["initial_balance_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = id_of(
        &app.tx(json!({"account_id": doomed, "type": "DEBIT", "amount": 10,
                       "description": "Café"}))
            .await,
    );
    let pending = id_of(
        &app.tx(json!({"account_id": doomed, "type": "DEBIT", "amount": 20,
                       "description": "Futuro", "date": "2026-12-01"}))
            .await,
    );
    let survivor = app.bank("Fica").await;
    let kept = id_of(
        &app.tx(
            json!({"account_id": survivor, "type": "CREDIT", "amount": 30,
                       "description": "Salário"}),
        )
        .await,
    );

    let response = app.delete(&format!("/v1/accounts/{doomed}")).await;
    assert_eq!(response.status, 204, "{}", response.body);
    assert_eq!(response.body, Value::Null, "204 has no body");
    app.get(&format!("/v1/accounts/{doomed}"))
        .await
        .problem(404, "not_found");
    for id in [&opening, &row, &pending] {
        app.get(&format!("/v1/transactions/{id}"))
            .await
            .problem(404, "not_found");
    }
    assert_eq!(hidden_today(&app).await, Vec::<Value>::new());
    let listed = list_accounts(&app).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], survivor.as_str());

    // The other account and its rows are untouched.
    app.get(&format!("/v1/transactions/{kept}")).await.ok(200);
    assert_eq!(balance(&get_account(&app, &survivor).await), 30.0);

    app.delete(&format!("/v1/accounts/{doomed}"))
        .await
        .problem(404, "not_found");
}

async fn deleting_the_paying_account_clears_the_card_link(backend: Backend) {
    let app = TestApp::start(backend).await;
    let payer = app.bank("Itaú").await;
    let other = app.bank("Inter").await;
    let card = create(
        &app,
        json!({"type": "CREDIT", "title": "Visa", "pay_bill_from_account_id": payer}),
    )
    .await;
    let untouched = create(
        &app,
        json!({"type": "CREDIT", "title": "Master", "pay_bill_from_account_id": other}),
    )
    .await;

    let response = app.delete(&format!("/v1/accounts/{payer}")).await;
    assert_eq!(response.status, 204, "{}", response.body);

    let stored = get_account(&app, &id_of(&card)).await;
    assert_eq!(stored["pay_bill_from_account_id"], Value::Null);
    assert_eq!(stored["title"], "Visa");
    assert_eq!(stored["credit"], card["credit"]);
    assert_eq!(
        get_account(&app, &id_of(&untouched)).await["pay_bill_from_account_id"],
        other.as_str()
    );
    // The card can be pointed at another bank account again.
    let repointed = patch_account(
        &app,
        &id_of(&card),
        json!({"pay_bill_from_account_id": other}),
    )
    .await;
    assert_eq!(repointed["pay_bill_from_account_id"], other.as_str());
}

on_both_backends!(
    the_list_follows_changes_from_any_process,
    initial_balance_creates_a_hidden_posted_opening_row,
    negative_initial_balance_is_a_debit_row,
    zero_or_absent_initial_balance_creates_no_row,
    initial_balance_is_validated,
    bank_account_defaults_and_shape,
    credit_card_defaults,
    card_days_accept_strings_and_the_synonym,
    mismatched_due_day_synonyms_are_refused,
    card_days_out_of_range_name_the_field,
    explicit_close_day_turns_cycle_auto_off,
    cycle_auto_with_a_contradicting_close_day_is_refused,
    patch_card_billing_days,
    card_fields_on_a_bank_account_are_refused,
    sub_type_must_fit_the_type,
    wrongly_typed_type_and_sub_type_name_the_field,
    currency_code_is_normalised_and_checked,
    title_is_limited_to_200_characters,
    icon_name_resolves_to_an_icon_id,
    card_icon_only_on_cards,
    pay_bill_from_must_be_the_users_bank_account,
    unknown_fields_and_malformed_bodies_are_refused,
    balance_counts_posted_rows_only,
    list_is_ordered_by_creation,
    list_shows_every_account_of_the_user,
    get_one_account,
    archiving_hides_the_balance,
    patch_credit_limit,
    patch_pay_bill_from_null_clears_it,
    patch_keeps_the_fields_not_sent,
    patch_and_delete_need_an_existing_account,
    delete_removes_the_account_and_its_rows,
    deleting_the_paying_account_clears_the_card_link,
);
