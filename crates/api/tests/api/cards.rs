//! Credit cards: bills per cycle and their statuses (today is pinned to
//! 2026-11-22), the used limit, the cashflow view with bill entries, the
//! bill_id filter, and bill handles (GET, PATCH = payment, DELETE).

use axum::http::Method;
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";
const PAGAMENTO_DE_FATURA: &str = "8af325d4-0dc3-5e04-8d45-879337802f65";

struct Wallet {
    app: TestApp,
    bank: String,
    card: String,
}

/// A bank account with 1,000.00 and a card (due 10, so it closes on the
/// 3rd; limit 5,000.00) paid from it, with:
/// - 100.00 on Sep 20 (the October bill),
/// - 200.00 on Oct 15 (November),
/// - 50.00 on Nov 10 and installment 1 of 3 x 100.00 on Nov 5 (December),
/// - installments 2 and 3 projected (January and February bills).
async fn wallet(backend: Backend) -> Wallet {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    for (amount, date, description) in [
        (100, "2026-09-20", "Mercado"),
        (200, "2026-10-15", "Restaurante"),
        (50, "2026-11-10", "Uber"),
    ] {
        app.tx(
            json!({"account_id": card, "type": "DEBIT", "amount": amount,
            "description": description, "date": date}),
        )
        .await;
    }
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 300, "description": "Fone",
        "date": "2026-11-05", "installments": {"count": 3}}),
    )
    .await;
    Wallet { app, bank, card }
}

fn handle(card: &str, yyyymm: &str) -> String {
    format!("mocked-bill:{card}:{yyyymm}")
}

async fn bills(app: &TestApp, card: &str, from: &str, to: &str) -> Vec<Value> {
    let response = app
        .get(&format!("/v1/cards/{card}/bills?from={from}&to={to}"))
        .await;
    let body = response.ok(200);
    assert_eq!(body["card_id"], card);
    body["bills"].as_array().unwrap().clone()
}

/// The exact text of a field of a JSON object in a raw body.
fn raw(text: &str, key: &str) -> String {
    let label = format!("\"{key}\":");
    let start = text
        .find(&label)
        .unwrap_or_else(|| panic!("{key} in {text}"))
        + label.len();
    let end = start + text[start..].find([',', '}']).unwrap();
    text[start..end].to_owned()
}

async fn bills_follow_cycles_and_statuses(backend: Backend) {
    let w = wallet(backend).await;
    let list = bills(&w.app, &w.card, "2026-10-01", "2027-02-28").await;
    let summary: Vec<(&str, &str, &str, &str, f64, bool)> = list
        .iter()
        .map(|b| {
            (
                b["cycle_start_date"].as_str().unwrap(),
                b["close_date"].as_str().unwrap(),
                b["due_date"].as_str().unwrap(),
                b["status"].as_str().unwrap(),
                b["amount"].as_f64().unwrap(),
                b["amount_is_estimate"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "2026-09-04",
                "2026-10-03",
                "2026-10-10",
                "vencida",
                100.0,
                false
            ),
            (
                "2026-10-04",
                "2026-11-03",
                "2026-11-10",
                "vencida",
                200.0,
                false
            ),
            (
                "2026-11-04",
                "2026-12-03",
                "2026-12-10",
                "aberta",
                150.0,
                true
            ),
            (
                "2026-12-04",
                "2027-01-03",
                "2027-01-10",
                "aberta",
                100.0,
                true
            ),
            (
                "2027-01-04",
                "2027-02-03",
                "2027-02-10",
                "aberta",
                100.0,
                true
            ),
        ]
    );
    assert_eq!(list[0]["projected_bill_id"], handle(&w.card, "202610"));
    assert_eq!(list[0]["settled_payment_ids"], json!([]));
    // Amounts carry two decimals.
    let response = w
        .app
        .get(&format!(
            "/v1/cards/{}/bills?from=2026-12-01&to=2026-12-31",
            w.card
        ))
        .await;
    assert_eq!(raw(&response.text, "amount"), "150.00");
}

async fn close_after_due_closes_the_month_before(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Itaú", "credit_due_day": 5,
            "credit_close_day": 29}),
        )
        .await;
    for (amount, date) in [(10, "2026-11-29"), (20, "2026-11-30"), (40, "2027-02-28")] {
        app.tx(
            json!({"account_id": card, "type": "DEBIT", "amount": amount,
            "description": "Compra", "date": date}),
        )
        .await;
    }
    let list = bills(&app, &card, "2026-12-01", "2027-03-31").await;
    let cycles: Vec<(&str, &str, &str, f64)> = list
        .iter()
        .map(|b| {
            (
                b["cycle_start_date"].as_str().unwrap(),
                b["close_date"].as_str().unwrap(),
                b["due_date"].as_str().unwrap(),
                b["amount"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cycles,
        [
            ("2026-10-30", "2026-11-29", "2026-12-05", 10.0),
            ("2026-11-30", "2026-12-29", "2027-01-05", 20.0),
            ("2026-12-30", "2027-01-29", "2027-02-05", 0.0),
            // February has no 29th in 2027: the March bill closes on the 28th.
            ("2027-01-30", "2027-02-28", "2027-03-05", 40.0),
        ]
    );
    // Today (Nov 22) is before the close on the 29th: still open.
    assert_eq!(list[0]["status"], "aberta");
    // Due 25 closes on the 18th: on Nov 22 the November bill is closed,
    // not yet due.
    let closed = app
        .account(json!({"type": "CREDIT", "title": "Inter", "credit_due_day": 25}))
        .await;
    app.tx(json!({"account_id": closed, "type": "DEBIT", "amount": 15,
        "description": "Compra", "date": "2026-11-10"}))
        .await;
    let list = bills(&app, &closed, "2026-11-01", "2026-11-30").await;
    assert_eq!(list[0]["close_date"], "2026-11-18");
    assert_eq!(list[0]["status"], "fechada");
}

async fn paying_a_bill_through_its_handle(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    // Full payment of October (defaults: outstanding, today, the paying account).
    let paid = app
        .patch(
            &format!("/v1/transactions/{}", handle(&w.card, "202610")),
            json!({}),
        )
        .await;
    let body = paid.ok(200).clone();
    let payment = body["updated_transaction_id"].as_str().unwrap().to_owned();
    assert_eq!(body["affected_ids"].as_array().unwrap().len(), 2);
    assert!(body["message"].as_str().unwrap().contains("is paid"));
    let row = app.get(&format!("/v1/transactions/{payment}")).await;
    let row = row.ok(200)["transaction"].clone();
    assert_eq!(row["account_id"], w.bank.as_str());
    assert_eq!(row["type"], "DEBIT");
    assert_eq!(row["amount"], 100.0);
    assert_eq!(row["bill_to_account_id"], w.card.as_str());
    assert_eq!(row["category_id"], PAGAMENTO_DE_FATURA);
    assert_eq!(row["hide_from_results"], false);
    assert_eq!(row["date"], "2026-11-22");
    assert!(row["transfer_group_id"].is_string());
    // Partial payment of November from an explicit account and date.
    let partial = app
        .patch(
            &format!("/v1/transactions/{}", handle(&w.card, "202611")),
            json!({"amount": 80, "date": "2026-11-21", "account_id": w.bank}),
        )
        .await;
    assert!(
        partial.ok(200)["message"]
            .as_str()
            .unwrap()
            .contains("120.00")
    );
    let list = bills(app, &w.card, "2026-10-01", "2026-11-30").await;
    assert_eq!(list[0]["status"], "paga");
    assert_eq!(list[0]["projected_bill_id"], Value::Null);
    assert_eq!(list[0]["settled_payment_ids"], json!([payment]));
    assert_eq!(list[1]["status"], "vencida");
    assert_eq!(list[1]["outstanding_amount"], 120.0);
    // The bank paid 180.00; the card's debt went down by as much.
    let bank = app.get(&format!("/v1/accounts/{}", w.bank)).await;
    assert_eq!(bank.ok(200)["balance"], 820.0);
    let card = app.get(&format!("/v1/accounts/{}", w.card)).await;
    assert_eq!(card.ok(200)["balance"], -(350.0 + 100.0 - 180.0));
    // A paid bill is no projection any more.
    app.get(&format!("/v1/transactions/{}", handle(&w.card, "202610")))
        .await
        .problem(404, "projection_not_found");
    let again = app
        .patch(
            &format!("/v1/transactions/{}", handle(&w.card, "202610")),
            json!({}),
        )
        .await;
    again.problem(409, "nothing_to_pay");
}

async fn bill_payment_errors(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    let path = format!("/v1/transactions/{}", handle(&w.card, "202611"));
    app.patch(&path, json!({"amount": 0}))
        .await
        .invalid(&["amount"]);
    app.patch(&path, json!({"amount": 1.234}))
        .await
        .invalid(&["amount"]);
    app.patch(&path, json!({"date": "2026-13-01"}))
        .await
        .invalid(&["date"]);
    app.patch(&path, json!({"account_id": ZERO_ID}))
        .await
        .invalid(&["account_id"]);
    app.patch(&path, json!({"account_id": w.card}))
        .await
        .invalid(&["account_id"]);
    app.patch(&path, json!({"scope": "this"}))
        .await
        .invalid(&["scope"]);
    // A card without a paying account needs one named.
    let lone = app
        .account(json!({"type": "CREDIT", "title": "Sem conta"}))
        .await;
    app.tx(
        json!({"account_id": lone, "type": "DEBIT", "amount": 10, "description": "x",
        "date": "2026-10-20"}),
    )
    .await;
    let lone_path = format!("/v1/transactions/{}", handle(&lone, "202611"));
    app.patch(&lone_path, json!({}))
        .await
        .invalid(&["account_id"]);
    app.patch(&lone_path, json!({"account_id": w.bank}))
        .await
        .ok(200);
    // Handles of no card of the user's.
    for bad in [handle(ZERO_ID, "202611"), handle(&w.bank, "202611")] {
        app.patch(&format!("/v1/transactions/{bad}"), json!({}))
            .await
            .problem(404, "projection_not_found");
    }
    let (_, other) = app.new_user().await;
    let response = app
        .call(Method::PATCH, &path, Some(&other), Some(json!({})))
        .await;
    response.problem(404, "projection_not_found");
    app.get(&format!("/v1/transactions/mocked-bill:{}:202613", w.card))
        .await
        .problem(404, "projection_not_found");
}

async fn cashflow_shows_bills_on_the_paying_account(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    app.patch(
        &format!("/v1/transactions/{}", handle(&w.card, "202610")),
        json!({}),
    )
    .await
    .ok(200);
    let window = "from=2026-10-01&to=2027-02-28";
    let cashflow = app.all_pages(window, 2).await;
    assert!(cashflow.iter().all(|r| r["account_id"] != w.card.as_str()));
    let bill_entries: Vec<(&str, &str, f64)> = cashflow
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with("mocked-bill:"))
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["date"].as_str().unwrap(),
                r["amount"].as_f64().unwrap(),
            )
        })
        .collect();
    let (nov, dec, jan, feb) = (
        handle(&w.card, "202611"),
        handle(&w.card, "202612"),
        handle(&w.card, "202701"),
        handle(&w.card, "202702"),
    );
    assert_eq!(
        bill_entries,
        [
            (feb.as_str(), "2027-02-10", 100.0),
            (jan.as_str(), "2027-01-10", 100.0),
            (dec.as_str(), "2026-12-10", 150.0),
            (nov.as_str(), "2026-11-10", 200.0),
        ]
    );
    let entry = cashflow.iter().find(|r| r["id"] == dec.as_str()).unwrap();
    assert_eq!(entry["account_id"], w.bank.as_str());
    assert_eq!(entry["bill_to_account_id"], w.card.as_str());
    assert_eq!(entry["type"], "DEBIT");
    assert_eq!(entry["status"], "PENDING");
    assert_eq!(entry["projected"], true);
    assert_eq!(entry["projection"]["kind"], "bill");
    assert_eq!(entry["description"], "Fatura Nubank");
    // The October payment shows as its stored bank row.
    assert!(
        cashflow
            .iter()
            .any(|r| r["bill_to_account_id"] == w.card.as_str() && r["projected"] == false)
    );
    // GET by handle gives the same entry.
    let got = app.get(&format!("/v1/transactions/{dec}")).await;
    assert_eq!(&got.ok(200)["transaction"], entry);
    // The ledger view has the card's rows and no bills.
    let ledger = app.all_pages(&format!("{window}&view=ledger"), 50).await;
    assert!(
        ledger
            .iter()
            .all(|r| !r["id"].as_str().unwrap().starts_with("mocked-bill:"))
    );
    let on_card = ledger
        .iter()
        .filter(|r| r["account_id"] == w.card.as_str())
        .count();
    assert_eq!(
        on_card, 5,
        "3 rows stored in the window + 2 projected: {ledger:?}"
    );
    // Filters apply to bill entries like to any entry.
    let credits = app.all_pages(&format!("{window}&type=CREDIT"), 50).await;
    assert!(credits.iter().all(|r| r["type"] == "CREDIT"));
    let cards_only = app
        .all_pages(&format!("{window}&view=ledger&sub_type=CREDIT_CARD"), 50)
        .await;
    assert_eq!(cards_only.len(), 5);
}

async fn bill_id_lists_the_rows_of_one_cycle(backend: Backend) {
    let w = wallet(backend).await;
    let rows = w
        .app
        .all_pages(
            &format!(
                "from=2026-01-01&to=2026-12-31&bill_id={}",
                handle(&w.card, "202612")
            ),
            50,
        )
        .await;
    let mut found: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["date"].as_str().unwrap(),
                r["description"].as_str().unwrap(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(found, [("2026-11-05", "Fone"), ("2026-11-10", "Uber")]);
    let bad = w
        .app
        .get("/v1/transactions?from=2026-01-01&to=2026-12-31&bill_id=123")
        .await;
    bad.invalid(&["bill_id"]);
    let foreign = w
        .app
        .get(&format!(
            "/v1/transactions?from=2026-01-01&to=2026-12-31&bill_id={}",
            handle(&w.bank, "202612")
        ))
        .await;
    foreign.invalid(&["bill_id"]);
}

async fn deleting_a_bill_hides_it(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    let nov = handle(&w.card, "202611");
    let deleted = app.delete(&format!("/v1/transactions/{nov}")).await;
    assert_eq!(deleted.ok(200)["deleted_transaction_id"], nov.as_str());
    app.get(&format!("/v1/transactions/{nov}"))
        .await
        .problem(404, "projection_not_found");
    let cashflow = app.all_pages("from=2026-11-01&to=2026-11-30", 50).await;
    assert!(cashflow.iter().all(|r| r["id"] != nov.as_str()));
    app.delete(&format!("/v1/transactions/{nov}"))
        .await
        .problem(404, "projection_not_found");
    // The December bill (due in 18 days) leaves next_bills once hidden.
    let dec = handle(&w.card, "202612");
    let next = |body: &Value| -> Vec<String> {
        body["next_bills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["projected_bill_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(next(app.get("/v1/overview").await.ok(200)), [dec.as_str()]);
    app.delete(&format!("/v1/transactions/{dec}")).await.ok(200);
    assert!(next(app.get("/v1/overview").await.ok(200)).is_empty());
}

async fn used_limit_counts_unpaid_bills_and_future_installments(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    app.patch(
        &format!("/v1/transactions/{}", handle(&w.card, "202610")),
        json!({}),
    )
    .await
    .ok(200);
    app.patch(
        &format!("/v1/transactions/{}", handle(&w.card, "202611")),
        json!({"amount": 80}),
    )
    .await
    .ok(200);
    let response = app.get(&format!("/v1/cards/{}/used-limit", w.card)).await;
    response.ok(200);
    // November 120.00 + December 150.00 + installments 2 and 3 (200.00).
    assert_eq!(raw(&response.text, "used_limit"), "470.00");
    assert_eq!(raw(&response.text, "limit"), "5000.00");
    assert_eq!(raw(&response.text, "available"), "4530.00");
    assert_eq!(response.body["card_id"], w.card.as_str());
}

async fn card_endpoints_refuse_bank_accounts_and_bad_windows(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    for path in ["bills?from=2026-01-01&to=2026-12-31", "used-limit"] {
        app.get(&format!("/v1/cards/{}/{path}", w.bank))
            .await
            .problem(400, "not_a_credit_card");
        app.get(&format!("/v1/cards/{ZERO_ID}/{path}"))
            .await
            .problem(404, "not_found");
        app.get(&format!("/v1/cards/nope/{path}"))
            .await
            .invalid(&["id"]);
    }
    let base = format!("/v1/cards/{}/bills", w.card);
    app.get(&base).await.invalid(&["from", "to"]);
    app.get(&format!("{base}?from=2026-01-01&to=2027-01-02"))
        .await
        .invalid(&["to"]);
    app.get(&format!("{base}?from=2026-01-01&to=2026-02-30"))
        .await
        .invalid(&["to"]);
    app.get(&format!("{base}?from=2026-01-01&to=2026-12-31&x=1"))
        .await
        .invalid(&["x"]);
    let (_, other) = app.new_user().await;
    let response = app
        .call(
            Method::GET,
            &format!("{base}?from=2026-01-01&to=2026-12-31"),
            Some(&other),
            None,
        )
        .await;
    response.problem(404, "not_found");
}

/// The cards' projected entries are kept until what they are made of
/// changes: a new plan or rule on the card shows in the very next bills
/// and used limit.
async fn new_plans_and_rules_show_in_the_next_bills(backend: Backend) {
    let w = wallet(backend).await;
    let app = &w.app;
    let amount = |bills: &[Value], due: &str| {
        bills
            .iter()
            .find(|b| b["due_date"] == due)
            .map_or(0.0, |b| b["amount"].as_f64().unwrap())
    };
    let used = async || {
        let response = app.get(&format!("/v1/cards/{}/used-limit", w.card)).await;
        raw(&response.text, "used_limit")
    };
    let before = bills(app, &w.card, "2027-01-01", "2027-03-31").await;
    assert_eq!(amount(&before, "2027-01-10"), 100.0);
    // Oct 100 + Nov 200 + Dec 150 + installments 2 and 3.
    assert_eq!(used().await, "650.00");
    // 2 x 60.00 after December's close: 60 stored in January's bill, 60
    // projected in February's.
    app.tx(
        json!({"account_id": w.card, "type": "DEBIT", "amount": 120, "description": "Livros",
        "date": "2026-12-05", "installments": {"count": 2}}),
    )
    .await;
    let after = bills(app, &w.card, "2027-01-01", "2027-03-31").await;
    assert_eq!(amount(&after, "2027-01-10"), 160.0);
    assert_eq!(amount(&after, "2027-02-10"), 160.0);
    assert_eq!(used().await, "770.00");
    // A monthly rule from January: its occurrences are projected.
    app.tx(
        json!({"account_id": w.card, "type": "DEBIT", "amount": 30, "description": "Streaming",
        "date": "2027-01-15", "recurrence": {"frequency": "MONTHLY", "count": 3}}),
    )
    .await;
    let ruled = bills(app, &w.card, "2027-01-01", "2027-03-31").await;
    assert_eq!(amount(&ruled, "2027-02-10"), 190.0);
    assert_eq!(amount(&ruled, "2027-03-10"), 30.0);
}

on_both_backends!(
    new_plans_and_rules_show_in_the_next_bills,
    bills_follow_cycles_and_statuses,
    close_after_due_closes_the_month_before,
    paying_a_bill_through_its_handle,
    bill_payment_errors,
    cashflow_shows_bills_on_the_paying_account,
    bill_id_lists_the_rows_of_one_cycle,
    deleting_a_bill_hides_it,
    used_limit_counts_unpaid_bills_and_future_installments,
    card_endpoints_refuse_bank_accounts_and_bad_windows,
);
