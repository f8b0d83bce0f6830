//! Money-moving requests fired at once from several connections: nothing
//! is paid twice, no row is stored twice, and balances equal their rows.

use serde_json::{Value, json};
use std::sync::Arc;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// How many copies of one request race each other.
const RACERS: usize = 6;

/// Sends the same PATCH from `RACERS` tasks at once; the statuses, sorted.
async fn race_patch(app: &Arc<TestApp>, path: &str, body: Value) -> Vec<(u16, String)> {
    let tasks: Vec<_> = (0..RACERS)
        .map(|_| {
            let (app, path, body) = (app.clone(), path.to_owned(), body.clone());
            tokio::spawn(async move { app.patch(&path, body).await })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        let response = task.await.expect("racer");
        let code = response.body["code"].as_str().unwrap_or("").to_owned();
        out.push((response.status, code));
    }
    out.sort();
    out
}

/// A bank account with 1,000.00 paying a card (due 10, closes on the 3rd)
/// with 100.00 on the October bill and 200.00 on the November one; today
/// is 2026-11-22, so both are closed and unpaid.
async fn wallet(backend: Backend) -> (Arc<TestApp>, String, String) {
    let app = TestApp::start(backend).await;
    let bank = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
        .await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Nubank", "credit_due_day": 10,
            "credit_limit": 5000, "pay_bill_from_account_id": bank}),
        )
        .await;
    for (amount, date) in [(100, "2026-09-20"), (200, "2026-10-15")] {
        app.tx(
            json!({"account_id": card, "type": "DEBIT", "amount": amount,
            "description": "Mercado", "date": date}),
        )
        .await;
    }
    (Arc::new(app), bank, card)
}

async fn a_bill_paid_at_once_from_many_connections_is_paid_once(backend: Backend) {
    let (app, bank, card) = wallet(backend).await;
    let october = format!("/v1/transactions/mocked-bill:{card}:202610");
    let mut expected = vec![(200, String::new())];
    expected.extend((1..RACERS).map(|_| (409, "nothing_to_pay".to_owned())));
    assert_eq!(race_patch(&app, &october, json!({})).await, expected);
    assert_eq!(app.balance(&bank).await, 900.0);

    // The same with an explicit amount equal to the bill.
    let november = format!("/v1/transactions/mocked-bill:{card}:202611");
    assert_eq!(
        race_patch(&app, &november, json!({"amount": 200})).await,
        expected
    );
    assert_eq!(app.balance(&bank).await, 700.0);

    let bills = app
        .get(&format!(
            "/v1/cards/{card}/bills?from=2026-10-01&to=2026-11-30"
        ))
        .await
        .ok(200)
        .clone();
    for bill in bills["bills"].as_array().unwrap() {
        assert_eq!(bill["status"], "paga", "{bill}");
        assert_eq!(bill["outstanding_amount"].as_f64(), Some(0.0));
        assert_eq!(bill["settled_payment_ids"].as_array().unwrap().len(), 1);
    }
}

async fn part_payments_at_once_never_pay_more_than_is_owed(backend: Backend) {
    let (app, bank, card) = wallet(backend).await;
    // 150.00 of the 200.00 November bill, six times at once: the first
    // pays; after it only 50.00 is left, so the others are refused.
    let november = format!("/v1/transactions/mocked-bill:{card}:202611");
    let statuses = race_patch(&app, &november, json!({"amount": 150})).await;
    assert_eq!(statuses[0], (200, String::new()), "{statuses:?}");
    assert!(
        statuses[1..]
            .iter()
            .all(|(status, code)| *status == 400 && code == "validation_error"),
        "{statuses:?}"
    );
    assert_eq!(app.balance(&bank).await, 850.0);
    // What is left can still be paid, once.
    app.patch(&november, json!({})).await.ok(200);
    app.patch(&november, json!({}))
        .await
        .problem(409, "nothing_to_pay");
    assert_eq!(app.balance(&bank).await, 800.0);
}

async fn a_bill_the_card_never_had_cannot_be_paid(backend: Backend) {
    let (app, bank, card) = wallet(backend).await;
    for month in ["000001", "000201", "202001", "203001", "999912"] {
        let path = format!("/v1/transactions/mocked-bill:{card}:{month}");
        app.patch(&path, json!({"amount": 1}))
            .await
            .problem(404, "projection_not_found");
        app.patch(&path, json!({}))
            .await
            .problem(404, "projection_not_found");
    }
    assert_eq!(app.balance(&bank).await, 1000.0);
    // The open bill (due in December) can still be paid ahead.
    app.patch(
        &format!("/v1/transactions/mocked-bill:{card}:202612"),
        json!({"amount": 10}),
    )
    .await
    .ok(200);
    assert_eq!(app.balance(&bank).await, 990.0);
}

on_both_backends!(
    a_bill_paid_at_once_from_many_connections_is_paid_once,
    part_payments_at_once_never_pay_more_than_is_owed,
    a_bill_the_card_never_had_cannot_be_paid,
);
