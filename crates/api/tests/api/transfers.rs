//! Transfers: POST /v1/transfers (both legs or neither), mark-transfer and
//! unmark-transfer, including legacy transfer rows.

use axum::http::Method;
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// The seeded system category "Transferência".
const TRANSFERENCIA: &str = "037e8e7f-50d7-5892-ad50-75570da8c0ec";
/// The seeded system category "Mercado".
const MERCADO: &str = "ed3eb088-9c3c-517a-b01a-f1d78fb4b16d";
const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";
const WINDOW: &str = "from=2026-01-01&to=2026-12-31";

async fn row(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/transactions/{id}")).await.ok(200)["transaction"].clone()
}

/// How many stored rows (hidden ones included) the user has in the window.
async fn row_count(app: &TestApp) -> usize {
    app.all_pages(WINDOW, 100).await.len()
        + app
            .all_pages(&format!("{WINDOW}&hidden=true"), 100)
            .await
            .len()
}

fn transfer(from: &str, to: &str, amount: Value) -> Value {
    json!({"from_account_id": from, "to_account_id": to, "amount": amount, "description": "Reserva"})
}

async fn transfer_moves_money_in_two_hidden_legs(backend: Backend) {
    let app = TestApp::start(backend).await;
    let from = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
        .await;
    let to = app.bank("Poupança").await;
    let body = app
        .post("/v1/transfers", transfer(&from, &to, json!(250.10)))
        .await;
    let created = body.ok(201).clone();
    let sent = created["transfer_sent_transaction_id"].as_str().unwrap();
    let received = created["transfer_received_transaction_id"]
        .as_str()
        .unwrap();
    let (sent_row, received_row) = (row(&app, sent).await, row(&app, received).await);
    assert_eq!(sent_row["account_id"], from.as_str());
    assert_eq!(sent_row["type"], "DEBIT");
    assert_eq!(received_row["account_id"], to.as_str());
    assert_eq!(received_row["type"], "CREDIT");
    for leg in [&sent_row, &received_row] {
        assert_eq!(leg["amount"], 250.1);
        assert_eq!(leg["hide_from_results"], true);
        assert_eq!(leg["category_id"], TRANSFERENCIA);
        assert_eq!(leg["status"], "POSTED");
        assert_eq!(leg["description"], "Reserva");
        assert_eq!(leg["transfer_group_id"], created["transfer_group_id"]);
    }
    assert_eq!(app.balance(&from).await, 749.9);
    assert_eq!(app.balance(&to).await, 250.1);
    // Hidden from results; listed with hidden=true.
    let visible = app.all_pages(WINDOW, 50).await;
    assert!(visible.iter().all(|r| r["transfer_group_id"].is_null()));
    let hidden = app.all_pages(&format!("{WINDOW}&hidden=true"), 50).await;
    let grouped = hidden
        .iter()
        .filter(|r| !r["transfer_group_id"].is_null())
        .count();
    assert_eq!(grouped, 2);
}

async fn a_future_transfer_is_pending(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (from, to) = (app.bank("A").await, app.bank("B").await);
    let mut body = transfer(&from, &to, json!(10));
    body["date"] = json!("2026-12-05");
    body["notes"] = json!("para a viagem");
    let created = app.post("/v1/transfers", body).await.ok(201).clone();
    let leg = row(
        &app,
        created["transfer_sent_transaction_id"].as_str().unwrap(),
    )
    .await;
    assert_eq!(leg["status"], "PENDING");
    assert_eq!(leg["date"], "2026-12-05");
    assert_eq!(leg["notes"], "para a viagem");
    assert_eq!(app.balance(&from).await, 0.0);
}

async fn transfer_validation_stores_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (a, b) = (app.bank("A").await, app.bank("B").await);
    let archived = app.archived_bank("Antiga").await;
    let dollars = app
        .account(json!({"type": "BANK", "title": "USD", "currency_code": "USD"}))
        .await;
    let (other_user, other_key) = app.new_user().await;
    let _ = other_user;
    let foreign = app
        .account_as(&other_key, json!({"type": "BANK", "title": "Dele"}))
        .await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({}),
            vec!["from_account_id", "to_account_id", "amount", "description"],
        ),
        (transfer(&a, &a, json!(10)), vec!["to_account_id"]),
        (transfer(&a, &b, json!(0)), vec!["amount"]),
        (transfer(&a, &b, json!(-5)), vec!["amount"]),
        (transfer(&a, &b, json!(1.234)), vec!["amount"]),
        (transfer(&a, &b, json!("10")), vec!["amount"]),
        (transfer("nope", &b, json!(10)), vec!["from_account_id"]),
        (transfer(ZERO_ID, &b, json!(10)), vec!["from_account_id"]),
        (transfer(&a, &foreign, json!(10)), vec!["to_account_id"]),
        (transfer(&archived, &b, json!(10)), vec!["from_account_id"]),
        (transfer(&a, &dollars, json!(10)), vec!["to_account_id"]),
        (
            json!({"from_account_id": a, "to_account_id": b, "amount": 1, "description": "x", "fee": 1}),
            vec!["fee"],
        ),
    ];
    for (body, fields) in cases {
        let response = app.post("/v1/transfers", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(&fields);
    }
    assert_eq!(
        row_count(&app).await,
        0,
        "a refused transfer stores nothing"
    );
    let read_only = app
        .key_for(app.user, &[cofre_domain::auth::Scope::Read])
        .await;
    app.call(
        Method::POST,
        "/v1/transfers",
        Some(&read_only),
        Some(transfer(&a, &b, json!(1))),
    )
    .await
    .problem(403, "insufficient_scope");
}

async fn mark_transfer_pairs_rows_and_keeps_chosen_categories(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, card_bank) = (app.bank("Conta").await, app.bank("Outra").await);
    let debit = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 500, "description": "TED enviada"}))
        .await;
    let credit = app
        .tx(
            json!({"account_id": card_bank, "type": "CREDIT", "amount": 500,
            "description": "TED recebida", "category_id": MERCADO}),
        )
        .await;
    let (d, c) = (
        debit["id"].as_str().unwrap(),
        credit["id"].as_str().unwrap(),
    );
    let marked = app
        .post(
            &format!("/v1/transactions/{d}/mark-transfer"),
            json!({"counterpart_id": c}),
        )
        .await;
    let body = marked.ok(200).clone();
    let group = body["transfer_group_id"].as_str().unwrap().to_owned();
    let mut ids: Vec<&str> = body["transaction_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected = vec![d, c];
    expected.sort();
    assert_eq!(ids, expected);
    let (d_row, c_row) = (row(&app, d).await, row(&app, c).await);
    assert_eq!(d_row["transfer_group_id"], group.as_str());
    assert_eq!(c_row["transfer_group_id"], group.as_str());
    assert_eq!(d_row["hide_from_results"], true);
    assert_eq!(c_row["hide_from_results"], true);
    assert_eq!(
        d_row["category_id"], TRANSFERENCIA,
        "no category: Transferência"
    );
    assert_eq!(c_row["category_id"], MERCADO, "the user's category stays");

    // Either leg already grouped: 409, nothing changes.
    let third = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 1, "description": "Outra"}))
        .await;
    let t = third["id"].as_str().unwrap();
    app.post(&format!("/v1/transactions/{d}/mark-transfer"), json!({}))
        .await
        .problem(409, "transfer_conflict");
    app.post(
        &format!("/v1/transactions/{t}/mark-transfer"),
        json!({"counterpart_id": c}),
    )
    .await
    .problem(409, "transfer_conflict");
    assert_eq!(row(&app, t).await["hide_from_results"], false);

    // Without a body the row is marked alone.
    let alone = app
        .call(
            Method::POST,
            &format!("/v1/transactions/{t}/mark-transfer"),
            Some(&app.key),
            None,
        )
        .await;
    assert_eq!(alone.ok(200)["transaction_ids"], json!([t]));
}

async fn mark_transfer_errors(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let tx = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 5, "description": "Pix"}))
        .await;
    let id = tx["id"].as_str().unwrap();
    let mark = |target: String| format!("/v1/transactions/{target}/mark-transfer");
    app.post(&mark(ZERO_ID.into()), json!({}))
        .await
        .problem(404, "not_found");
    app.post(&mark("nope".into()), json!({}))
        .await
        .invalid(&["id"]);
    app.post(&mark(format!("mocked-installment:{ZERO_ID}:2")), json!({}))
        .await
        .invalid(&["id"]);
    app.post(&mark(id.into()), json!({"counterpart_id": ZERO_ID}))
        .await
        .invalid(&["counterpart_id"]);
    app.post(&mark(id.into()), json!({"counterpart_id": id}))
        .await
        .invalid(&["counterpart_id"]);
    app.post(&mark(id.into()), json!({"counterpart_id": 5}))
        .await
        .invalid(&["counterpart_id"]);
    app.post(&mark(id.into()), json!({"other": 1}))
        .await
        .invalid(&["other"]);
    // Another user's row is as missing as an unknown one.
    let (_, other_key) = app.new_user().await;
    let response = app
        .call(
            Method::POST,
            &mark(id.into()),
            Some(&other_key),
            Some(json!({})),
        )
        .await;
    response.problem(404, "not_found");
    assert_eq!(row(&app, id).await["transfer_group_id"], Value::Null);
    app.post(
        &format!("/v1/transactions/{ZERO_ID}/unmark-transfer"),
        json!({}),
    )
    .await
    .problem(404, "not_found");
}

async fn unmark_releases_both_legs_and_legacy_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (from, to) = (app.bank("A").await, app.bank("B").await);
    let created = app
        .post("/v1/transfers", transfer(&from, &to, json!(80)))
        .await
        .ok(201)
        .clone();
    let sent = created["transfer_sent_transaction_id"].as_str().unwrap();
    let received = created["transfer_received_transaction_id"]
        .as_str()
        .unwrap();
    // The user re-categorised one leg: that choice survives unmarking.
    app.patch(
        &format!("/v1/transactions/{received}"),
        json!({"category_id": MERCADO}),
    )
    .await
    .ok(200);
    let unmark = |id: &str| format!("/v1/transactions/{id}/unmark-transfer");
    let response = app
        .call(Method::POST, &unmark(sent), Some(&app.key), None)
        .await;
    let mut released: Vec<String> = response.ok(200)["transaction_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    released.sort();
    let mut both = vec![sent.to_owned(), received.to_owned()];
    both.sort();
    assert_eq!(released, both);
    let (s, r) = (row(&app, sent).await, row(&app, received).await);
    for leg in [&s, &r] {
        assert_eq!(leg["transfer_group_id"], Value::Null);
        assert_eq!(leg["hide_from_results"], false);
    }
    assert_eq!(s["category_id"], Value::Null, "Transferência is cleared");
    assert_eq!(r["category_id"], MERCADO, "the user's category stays");
    // Unmarking again changes nothing.
    let again = app.post(&unmark(sent), json!({})).await;
    assert_eq!(again.ok(200)["transaction_ids"], json!([]));

    // A legacy transfer row: hidden, in Transferência, no group.
    let legacy = app
        .tx(json!({"account_id": from, "type": "DEBIT", "amount": 30,
            "description": "Transferência antiga", "category_id": TRANSFERENCIA}))
        .await;
    let l = legacy["id"].as_str().unwrap();
    app.patch(
        &format!("/v1/transactions/{l}"),
        json!({"hide_from_results": true}),
    )
    .await
    .ok(200);
    let response = app.post(&unmark(l), json!({})).await;
    assert_eq!(response.ok(200)["transaction_ids"], json!([l]));
    let l_row = row(&app, l).await;
    assert_eq!(l_row["hide_from_results"], false);
    assert_eq!(l_row["category_id"], Value::Null);
    let listed = app.all_pages(WINDOW, 50).await;
    assert!(listed.iter().any(|r| r["id"] == l));
}

on_both_backends!(
    transfer_moves_money_in_two_hidden_legs,
    a_future_transfer_is_pending,
    transfer_validation_stores_nothing,
    mark_transfer_pairs_rows_and_keeps_chosen_categories,
    mark_transfer_errors,
    unmark_releases_both_legs_and_legacy_rows,
);
