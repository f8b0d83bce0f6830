//! `/v1/budgets` and `/v1/budgets/status` (issue 13): the budget's life
//! (create, read, change from a month on, delete), every validation and
//! conflict, what counts in a month (card installments each in their own
//! month, refunds, transfers and bill payments left out), rollover, the
//! warning threshold, ownership and scopes. The report and status
//! figures against the list endpoint are in `reports.rs`.

use axum::http::Method;
use serde_json::{Value, json};

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::overview::{cents, exact_json, text};
use crate::support::{Backend, TestApp};

const ALIMENTACAO: &str = "30b679d8-1fd0-5798-9807-ef2de0278a88";
const RESTAURANTES: &str = "59d30ba9-d83c-5466-9d40-eea54f663061";
const MERCADO: &str = "ed3eb088-9c3c-517a-b01a-f1d78fb4b16d";

async fn budget(app: &TestApp, body: Value) -> Value {
    let response = app.post("/v1/budgets", body).await;
    response.ok(201).clone()
}

async fn status(app: &TestApp, month: &str) -> Value {
    let response = app.get(&format!("/v1/budgets/status?month={month}")).await;
    assert_eq!(response.status, 200, "{}", response.text);
    exact_json(&response.text)
}

/// The status row of a budget.
fn row<'a>(status: &'a Value, id: &str) -> &'a Value {
    status["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["budget_id"] == id)
        .unwrap_or_else(|| panic!("budget {id} in {status}"))
}

async fn budgets_are_created_read_changed_and_deleted(backend: Backend) {
    let app = TestApp::start(backend).await;
    let created = budget(
        &app,
        json!({"category_id": ALIMENTACAO, "amount": 800, "starts_on": "2026-01"}),
    )
    .await;
    let id = text(&created, "id").to_owned();
    assert_eq!(created["amount"], json!(800.0));
    assert_eq!(created["include_subcategories"], true);
    assert_eq!(created["rollover"], false);
    assert_eq!(created["starts_on"], "2026-01");
    assert!(created["ends_on"].is_null());
    assert_eq!(
        created["limits"],
        json!([{"from_month": "2026-01", "amount": 800.0}])
    );
    // Default start: the current month.
    let mercado = budget(&app, json!({"category_id": MERCADO, "amount": 100.5})).await;
    assert_eq!(mercado["starts_on"], "2026-11");
    let listed = app.get("/v1/budgets").await;
    let ids: Vec<&str> = listed.ok(200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| text(b, "id"))
        .collect();
    assert_eq!(ids, [id.as_str(), text(&mercado, "id")]);
    assert_eq!(
        app.get(&format!("/v1/budgets/{id}")).await.ok(200)["id"],
        id.as_str()
    );

    // A new limit from a month on keeps the earlier months.
    let changed = app
        .patch(
            &format!("/v1/budgets/{id}"),
            json!({"amount": 1000, "from_month": "2026-06"}),
        )
        .await;
    let changed = changed.ok(200);
    assert_eq!(changed["amount"], json!(1000.0));
    assert_eq!(
        changed["limits"],
        json!([{"from_month": "2026-01", "amount": 800.0}, {"from_month": "2026-06", "amount": 1000.0}])
    );
    assert_eq!(
        cents(&row(&status(&app, "2026-05").await, &id)["limit"]),
        80_000
    );
    assert_eq!(
        cents(&row(&status(&app, "2026-06").await, &id)["limit"]),
        100_000
    );
    // Before its start, or after its end, a budget is not in the month.
    let ended = app
        .patch(
            &format!("/v1/budgets/{id}"),
            json!({"ends_on": "2026-09", "rollover": true}),
        )
        .await;
    assert_eq!(ended.ok(200)["ends_on"], "2026-09");
    assert!(
        status(&app, "2026-10").await["budgets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["budget_id"] != id.as_str())
    );
    assert!(
        status(&app, "2025-12").await["budgets"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let open = app
        .patch(&format!("/v1/budgets/{id}"), json!({"ends_on": null}))
        .await;
    assert!(open.ok(200)["ends_on"].is_null());

    app.delete(&format!("/v1/budgets/{id}")).await.ok(204);
    app.get(&format!("/v1/budgets/{id}"))
        .await
        .problem(404, "not_found");
    app.delete(&format!("/v1/budgets/{id}"))
        .await
        .problem(404, "not_found");
}

async fn bad_budgets_are_refused_field_by_field(backend: Backend) {
    let app = TestApp::start(backend).await;
    app.post("/v1/budgets", json!({}))
        .await
        .invalid(&["category_id", "amount"]);
    app.post(
        "/v1/budgets",
        json!({"category_id": "x", "amount": -1, "starts_on": "2026-13", "ends_on": "1800-01"}),
    )
    .await
    .invalid(&["category_id", "amount", "starts_on", "ends_on"]);
    app.post(
        "/v1/budgets",
        json!({"category_id": ALIMENTACAO, "amount": 10.001}),
    )
    .await
    .invalid(&["amount"]);
    app.post(
        "/v1/budgets",
        json!({"category_id": ALIMENTACAO, "amount": 10, "starts_on": "2026-05", "ends_on": "2026-04"}),
    )
    .await
    .invalid(&["ends_on"]);
    app.post(
        "/v1/budgets",
        json!({"category_id": ALIMENTACAO, "amount": 10, "colour": "red"}),
    )
    .await
    .invalid(&["colour"]);
    // A category nobody has, and another user's own category.
    app.post(
        "/v1/budgets",
        json!({"category_id": "00000000-0000-4000-8000-000000000000", "amount": 10}),
    )
    .await
    .invalid(&["category_id"]);
    let (_, theirs) = app.new_user().await;
    let their_category = app
        .call(
            Method::POST,
            "/v1/categories",
            Some(&theirs),
            Some(json!({"title": "Deles"})),
        )
        .await;
    let their_category = text(their_category.ok(201), "id").to_owned();
    app.post(
        "/v1/budgets",
        json!({"category_id": their_category, "amount": 10}),
    )
    .await
    .invalid(&["category_id"]);

    let id = text(
        &budget(
            &app,
            json!({"category_id": ALIMENTACAO, "amount": 10, "starts_on": "2026-03"}),
        )
        .await,
        "id",
    )
    .to_owned();
    let path = format!("/v1/budgets/{id}");
    app.patch(&path, json!({})).await.invalid(&["body"]);
    app.patch(&path, json!({"from_month": "2026-05"}))
        .await
        .invalid(&["from_month"]);
    app.patch(&path, json!({"amount": 5, "from_month": "2026-01"}))
        .await
        .invalid(&["from_month"]);
    app.patch(&path, json!({"amount": 0}))
        .await
        .invalid(&["amount"]);
    app.patch(&path, json!({"ends_on": "2026-02"}))
        .await
        .invalid(&["ends_on"]);
    app.get("/v1/budgets/not-a-uuid").await.invalid(&["id"]);
    app.get("/v1/budgets/status?month=2026-1")
        .await
        .invalid(&["month"]);
    app.get("/v1/budgets/status?mes=2026-01")
        .await
        .invalid(&["mes"]);
}

async fn one_budget_per_category_and_month(backend: Backend) {
    let app = TestApp::start(backend).await;
    let first = budget(
        &app,
        json!({"category_id": ALIMENTACAO, "amount": 100, "starts_on": "2026-01", "ends_on": "2026-06"}),
    )
    .await;
    // Overlapping months of the same category: 409.
    app.post(
        "/v1/budgets",
        json!({"category_id": ALIMENTACAO, "amount": 100, "starts_on": "2026-06"}),
    )
    .await
    .problem(409, "budget_conflict");
    // The months after it are free, and so is a subcategory.
    let later = budget(
        &app,
        json!({"category_id": ALIMENTACAO, "amount": 100, "starts_on": "2026-07"}),
    )
    .await;
    budget(
        &app,
        json!({"category_id": RESTAURANTES, "amount": 50, "starts_on": "2026-01"}),
    )
    .await;
    // A change that would overlap is refused and changes nothing.
    let path = format!("/v1/budgets/{}", text(&first, "id"));
    app.patch(&path, json!({"ends_on": "2026-07"}))
        .await
        .problem(409, "budget_conflict");
    app.patch(&path, json!({"ends_on": null}))
        .await
        .problem(409, "budget_conflict");
    assert_eq!(app.get(&path).await.ok(200)["ends_on"], "2026-06");
    // Another user may budget the same category.
    let (_, theirs) = app.new_user().await;
    let response = app
        .call(
            Method::POST,
            "/v1/budgets",
            Some(&theirs),
            Some(json!({"category_id": ALIMENTACAO, "amount": 1, "starts_on": "2026-01"})),
        )
        .await;
    response.ok(201);
    // Ownership: another user's budget is missing for them.
    for method in [Method::GET, Method::PATCH, Method::DELETE] {
        let body = (method == Method::PATCH).then(|| json!({"amount": 1}));
        let response = app
            .call(
                method,
                &format!("/v1/budgets/{}", text(&later, "id")),
                Some(&theirs),
                body,
            )
            .await;
        response.problem(404, "not_found");
    }
    // Writing needs the write scope.
    let user = app.new_user().await.0;
    let reader = app.key_for(user, &[Scope::Read]).await;
    let response = app
        .call(
            Method::POST,
            "/v1/budgets",
            Some(&reader),
            Some(json!({"category_id": ALIMENTACAO, "amount": 1})),
        )
        .await;
    response.problem(403, "insufficient_scope");
    let response = app
        .call(Method::GET, "/v1/budgets/status", Some(&reader), None)
        .await;
    response.ok(200);
}

/// A fresh app with a bank account and a card, and a budget of 500.00 a
/// month for ALIMENTACAO from October 2026: the app, the account, the
/// card and the budget's id.
async fn food_budget_with_accounts(backend: Backend) -> (TestApp, String, String, String) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    let id = text(
        &budget(
            &app,
            json!({"category_id": ALIMENTACAO, "amount": 500, "starts_on": "2026-10"}),
        )
        .await,
        "id",
    )
    .to_owned();
    (app, bank, card, id)
}

async fn installments_count_in_their_own_months(backend: Backend) {
    let (app, bank, card, id) = food_budget_with_accounts(backend).await;
    // 3 x 100.00 on the card from October; a refund and a restaurant
    // (subcategory) in November; a transfer and a bill payment that carry
    // the category count nowhere.
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 300, "description": "Panelas",
        "date": "2026-10-20", "category_id": ALIMENTACAO, "installments": {"count": 3}}),
    )
    .await;
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 80, "description": "Jantar",
        "date": "2026-11-03", "category_id": RESTAURANTES}),
    )
    .await;
    app.tx(
        json!({"account_id": card, "type": "CREDIT", "amount": 30, "description": "Estorno",
        "date": "2026-11-04", "category_id": RESTAURANTES}),
    )
    .await;
    let hidden = app
        .tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": 999, "description": "Oculta",
            "date": "2026-11-05", "category_id": ALIMENTACAO}),
        )
        .await;
    app.patch(
        &format!("/v1/transactions/{}", text(&hidden, "id")),
        json!({"hide_from_results": true}),
    )
    .await
    .ok(200);
    let leg = app
        .tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": 77, "description": "Para reserva",
            "date": "2026-11-06", "category_id": ALIMENTACAO}),
        )
        .await;
    app.post(
        &format!("/v1/transactions/{}/mark-transfer", text(&leg, "id")),
        json!({}),
    )
    .await
    .ok(200);
    let figures = |s: &Value| {
        let r = row(s, &id);
        (cents(&r["spent"]), cents(&r["committed"]))
    };
    assert_eq!(figures(&status(&app, "2026-10").await), (10_000, 0));
    // November: the second installment (projected, dated the 20th, before
    // today, the 22nd) has happened: spent, not still to come.
    assert_eq!(figures(&status(&app, "2026-11").await), (15_000, 0));
    assert_eq!(figures(&status(&app, "2026-12").await), (0, 10_000));
    let november = status(&app, "2026-11").await;
    let r = row(&november, &id);
    assert_eq!(cents(&r["remaining"]), 50_000 - 15_000);
    assert_eq!(r["percent_used"], json!("30.00"));
    assert_eq!(r["status"], "ok");
    // Without subcategories the restaurant leaves the budget and counts
    // as unbudgeted.
    app.patch(
        &format!("/v1/budgets/{id}"),
        json!({"include_subcategories": false}),
    )
    .await
    .ok(200);
    let november = status(&app, "2026-11").await;
    assert_eq!(figures(&november), (10_000, 0));
    assert_eq!(cents(&november["unbudgeted"]["spent"]), 5_000);
}

/// `committed` is what is still to come: a projected entry (an
/// installment, an occurrence of a rule) dated before today is spent in
/// its month, stored or not; from today on it is committed. Today is
/// 2026-11-22.
async fn projected_entries_before_today_are_spent(backend: Backend) {
    let (app, bank, card, id) = food_budget_with_accounts(backend).await;
    // 100.00 in 3 installments from 2026-09-05: 33.34 on Sep 5 (stored,
    // with the cent left over), 33.33 on Oct 5 and Nov 5 (projected).
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 100, "description": "Panelas",
        "date": "2026-09-05", "category_id": ALIMENTACAO, "installments": {"count": 3}}),
    )
    .await;
    // 60.00 in 2 from 2026-10-30: Oct 30 (stored), Nov 30 (after today).
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 60, "description": "Forno",
        "date": "2026-10-30", "category_id": ALIMENTACAO, "installments": {"count": 2}}),
    )
    .await;
    // A monthly 10.00 from 2026-11-10: Nov 10 before today, Dec 10 after.
    app.tx(
        json!({"account_id": bank, "type": "DEBIT", "amount": 10, "description": "Feira",
        "date": "2026-11-10", "category_id": ALIMENTACAO,
        "recurrence": {"frequency": "MONTHLY", "count": 2}}),
    )
    .await;
    let figures = |s: &Value| {
        let r = row(s, &id);
        (cents(&r["spent"]), cents(&r["committed"]))
    };
    // A past month: its installment happened.
    assert_eq!(figures(&status(&app, "2026-10").await), (3_333 + 3_000, 0));
    // This month: Nov 5 and Nov 10 happened; Nov 30 is still to come.
    assert_eq!(
        figures(&status(&app, "2026-11").await),
        (3_333 + 1_000, 3_000)
    );
    // A future month: all still to come.
    assert_eq!(figures(&status(&app, "2026-12").await), (0, 1_000));
    // What the month's ledger lists in the category is spent + committed.
    let listed: i64 = app
        .all_pages(
            &format!("view=ledger&from=2026-11-01&to=2026-11-30&category_id={ALIMENTACAO}"),
            100,
        )
        .await
        .iter()
        .map(|t| (t["amount"].as_f64().expect("amount") * 100.0).round() as i64)
        .sum();
    assert_eq!(listed, 3_333 + 1_000 + 3_000);
    // The overview counts the same month's figures.
    let overview = app.get("/v1/overview").await;
    assert_eq!(overview.ok(200)["budgets"]["count"], json!(1));
}

/// A bank account, and a budget of 100.00 a month for Mercado from
/// September 2026 that rolls over: their ids.
async fn bank_and_rollover_budget(app: &TestApp) -> (String, String) {
    let bank = app.bank("Conta").await;
    let id = text(
        &budget(
            app,
            json!({"category_id": MERCADO, "amount": 100, "starts_on": "2026-09", "rollover": true}),
        )
        .await,
        "id",
    )
    .to_owned();
    (bank, id)
}

async fn rollover_and_the_warning_threshold(backend: Backend) {
    let config = ApiConfig {
        budget_warning_percent: 50,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let (bank, id) = bank_and_rollover_budget(&app).await;
    for (day, amount) in [("2026-09-10", 40), ("2026-10-10", 180), ("2026-11-10", 35)] {
        app.tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": amount,
            "description": "Feira", "date": day, "category_id": MERCADO}),
        )
        .await;
    }
    // September leaves 60; October has 160 and spends 180 (-20);
    // November has 100 - 20 = 80 and spends 35: 43.75%, under 50%.
    let october = status(&app, "2026-10").await;
    let r = row(&october, &id);
    assert_eq!(cents(&r["rollover_in"]), 6_000);
    assert_eq!(r["status"], "over");
    let november = status(&app, "2026-11").await;
    let r = row(&november, &id);
    assert_eq!(cents(&r["rollover_in"]), -2_000);
    assert_eq!(cents(&r["available"]), 8_000);
    assert_eq!(r["percent_used"], json!("43.75"));
    assert_eq!(r["status"], "ok");
    app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 5,
        "description": "Feira", "date": "2026-11-12", "category_id": MERCADO}))
        .await;
    let r = status(&app, "2026-11").await;
    assert_eq!(row(&r, &id)["status"], "warning");
    // The overview counts this month's budgets by status.
    let o = exact_json(&app.get("/v1/overview").await.text);
    assert_eq!(
        o["budgets"],
        json!({"count": "1", "over": "0", "warning": "1"})
    );
}

/// Projected entries are summed once per change of what they are made
/// from: each new rule or plan shows in the very next status.
async fn new_rules_and_plans_show_in_the_next_status(backend: Backend) {
    let (app, bank, card, id) = food_budget_with_accounts(backend).await;
    let committed = |s: &Value| cents(&row(s, &id)["committed"]);
    assert_eq!(committed(&status(&app, "2027-01").await), 0);
    app.tx(
        json!({"account_id": bank, "type": "DEBIT", "amount": 40, "description": "Feira",
        "date": "2026-12-15", "category_id": ALIMENTACAO,
        "recurrence": {"frequency": "MONTHLY", "count": 3}}),
    )
    .await;
    assert_eq!(committed(&status(&app, "2027-01").await), 4_000);
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 90, "description": "Panelas",
        "date": "2026-12-20", "category_id": ALIMENTACAO, "installments": {"count": 3}}),
    )
    .await;
    assert_eq!(committed(&status(&app, "2027-01").await), 4_000 + 3_000);
}

/// Each month's sums are kept at the month's stamp: a change to a past
/// month, from this process or another one, shows in the next rollover.
async fn past_months_changed_anywhere_show_in_the_rollover(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, id) = bank_and_rollover_budget(&app).await;
    let purchase = |day: &str, amount: i64| {
        json!({"account_id": bank, "type": "DEBIT", "amount": amount,
        "description": "Feira", "date": day, "category_id": MERCADO})
    };
    let september = app.tx(purchase("2026-09-10", 40)).await;
    let rollover_in =
        async |app: &TestApp| cents(&row(&status(app, "2026-11").await, &id)["rollover_in"]);
    // September leaves 60, October 100 more.
    assert_eq!(rollover_in(&app).await, 16_000);
    assert_eq!(rollover_in(&app).await, 16_000);
    app.tx(purchase("2026-10-05", 30)).await;
    assert_eq!(rollover_in(&app).await, 13_000);
    // Another process takes September's purchase back.
    let other = cofre_store::connect(&app.url).await.expect("second store");
    other
        .delete_transaction(app.user, text(&september, "id").parse().expect("an id"))
        .await
        .expect("delete");
    assert_eq!(rollover_in(&app).await, 17_000);
}

on_both_backends!(
    budgets_are_created_read_changed_and_deleted,
    past_months_changed_anywhere_show_in_the_rollover,
    bad_budgets_are_refused_field_by_field,
    one_budget_per_category_and_month,
    installments_count_in_their_own_months,
    projected_entries_before_today_are_spent,
    rollover_and_the_warning_threshold,
    new_rules_and_plans_show_in_the_next_status,
);
