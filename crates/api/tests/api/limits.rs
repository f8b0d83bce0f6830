//! Totals stay in range: rows at the largest amount pile up until a
//! balance, day or month total would pass 10,000,000,000,000.00; the write
//! that would is refused with a 400 naming `amount`, nothing of it is
//! kept, and every read still answers with exact figures.

use serde_json::json;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// The largest amount one row may have.
const MAX_AMOUNT: &str = "99999999999.99";
/// Rows at [`MAX_AMOUNT`] that fit under the bound on totals: 100 of them
/// are 9,999,999,999,999.00, a 101st would pass 10,000,000,000,000.00.
const FIT: usize = 100;

fn max_row(account: &str, date: &str) -> serde_json::Value {
    let amount: serde_json::Value = serde_json::from_str(MAX_AMOUNT).unwrap();
    json!({"account_id": account, "type": "CREDIT", "amount": amount,
        "description": "Prêmio", "date": date})
}

async fn a_day_total_past_the_bound_is_refused(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    for _ in 0..FIT {
        app.tx(max_row(&bank, "2026-11-20")).await;
    }
    app.post("/v1/transactions", max_row(&bank, "2026-11-20"))
        .await
        .invalid(&["amount"]);
    // Every read still answers, with the exact total.
    let account = app.get(&format!("/v1/accounts/{bank}")).await;
    assert!(
        account.text.contains("\"balance\":9999999999999.00")
            || account.text.contains("\"balance\":9999999999999"),
        "{}",
        account.text
    );
    app.get("/v1/overview").await.ok(200);
    let rows = app
        .all_pages("view=ledger&from=2026-11-01&to=2026-11-30", 100)
        .await;
    assert_eq!(rows.len(), FIT);
    // A debit brings room back (another month: November's credits are
    // at their bound).
    app.tx(
        json!({"account_id": bank, "type": "DEBIT", "amount": MAX_AMOUNT.parse::<f64>().unwrap(),
        "description": "Saque", "date": "2026-11-21"}),
    )
    .await;
    app.tx(max_row(&bank, "2026-10-22")).await;
}

async fn a_balance_past_the_bound_is_refused_whatever_the_write(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    // One row a month: no day or month total nears the bound, the balance
    // does.
    for i in 0..FIT {
        let date = format!("{:04}-{:02}-10", 2000 + i / 12, i % 12 + 1);
        app.tx(max_row(&bank, &date)).await;
    }
    app.post("/v1/transactions", max_row(&bank, "2026-11-20"))
        .await
        .invalid(&["amount"]);
    // A transfer into it, an edit raising a row, a bulk edit: refused too.
    let other = app
        .account(json!({"type": "BANK", "title": "Outra", "initial_balance": 1000}))
        .await;
    app.post(
        "/v1/transfers",
        json!({"from_account_id": other, "to_account_id": bank, "amount": 1000,
            "description": "Reserva"}),
    )
    .await
    .invalid(&["amount"]);
    let small = app
        .tx(json!({"account_id": bank, "type": "DEBIT", "amount": 1000,
            "description": "Tarifa", "date": "2026-11-20"}))
        .await;
    let small = small["id"].as_str().unwrap().to_owned();
    app.patch(
        &format!("/v1/transactions/{small}"),
        json!({"type": "CREDIT"}),
    )
    .await
    .invalid(&["amount"]);
    let bulk = app
        .post(
            "/v1/transactions/bulk",
            json!({"ids": [small], "set": {"type": "CREDIT"}}),
        )
        .await;
    bulk.invalid(&["amount"]);
    // Nothing of the refused writes was kept.
    assert_eq!(app.balance(&other).await, 1000.0);
    let row = app.get(&format!("/v1/transactions/{small}")).await;
    assert_eq!(row.ok(200)["transaction"]["type"], "DEBIT");
    app.get("/v1/overview").await.ok(200);
    app.get("/v1/accounts").await.ok(200);
}

on_both_backends!(
    a_day_total_past_the_bound_is_refused,
    a_balance_past_the_bound_is_refused_whatever_the_write,
);
