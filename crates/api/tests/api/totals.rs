//! The running totals that triggers keep (account balances, and per-day
//! sums that card bills are made of) always equal a fresh sum over the
//! rows, whatever path changed them.

use serde_json::json;
use sqlx::{Connection, Row};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

const RECOUNT: &str = "\
    SELECT 'balance' AS kind, a.id AS account_id, '' AS date, '' AS type, FALSE AS installment, \
        CAST(COALESCE(b.posted_cents, -999999) AS BIGINT) AS kept, \
        CAST(COALESCE((SELECT SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END) \
            FROM transactions t WHERE t.account_id = a.id AND t.status = 'POSTED'), 0) AS BIGINT) AS fresh \
    FROM accounts a LEFT JOIN account_balances b ON b.account_id = a.id \
    UNION ALL \
    SELECT 'day', d.account_id, d.date, d.type, d.installment, CAST(d.cents AS BIGINT), \
        CAST(COALESCE((SELECT SUM(t.amount_cents) FROM transactions t WHERE t.account_id = d.account_id \
            AND t.date = d.date AND t.type = d.type AND t.bill_month IS NULL \
            AND (t.installment_purchase_id IS NOT NULL) = d.installment), 0) AS BIGINT) \
    FROM day_totals d \
    UNION ALL \
    SELECT 'missing day', t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL, 0, \
        CAST(SUM(t.amount_cents) AS BIGINT) \
    FROM transactions t WHERE t.bill_month IS NULL AND NOT EXISTS (SELECT 1 FROM day_totals d \
        WHERE d.account_id = t.account_id AND d.date = t.date AND d.type = t.type \
        AND d.installment = (t.installment_purchase_id IS NOT NULL)) \
    GROUP BY t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL";

/// Every kept total that differs from a fresh sum: (kind, account, date, kept, fresh).
async fn drift(app: &TestApp) -> Vec<(String, String, String, i64, i64)> {
    // The same columns from either backend's row type.
    macro_rules! read {
        ($conn:expr) => {
            sqlx::query(RECOUNT)
                .fetch_all(&mut $conn)
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r.get::<String, _>("kind"),
                        r.get::<String, _>("account_id"),
                        r.get::<String, _>("date"),
                        r.get::<i64, _>("kept"),
                        r.get::<i64, _>("fresh"),
                    )
                })
                .collect::<Vec<_>>()
        };
    }
    let rows = if app.url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(&app.url).await.unwrap();
        read!(conn)
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.url).await.unwrap();
        read!(conn)
    };
    rows.into_iter().filter(|r| r.3 != r.4).collect()
}

async fn kept_totals_match_fresh_sums(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 500}))
        .await;
    let savings = app.bank("Poupança").await;
    let card = app
        .account(json!({"type": "CREDIT", "title": "Cartão", "pay_bill_from_account_id": bank}))
        .await;
    let mut ids = Vec::new();
    for (account, kind, amount, date) in [
        (&bank, "DEBIT", 12.5, "2026-11-01"),
        (&bank, "CREDIT", 1000.0, "2026-11-05"),
        (&card, "DEBIT", 80.0, "2026-10-20"),
        (&card, "DEBIT", 45.9, "2026-11-12"),
        (&bank, "DEBIT", 30.0, "2026-12-01"),
    ] {
        let tx = app
            .tx(
                json!({"account_id": account, "type": kind, "amount": amount,
                "description": "Linha", "date": date}),
            )
            .await;
        ids.push(tx["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(drift(&app).await, []);
    // PATCH amount, type, status and date.
    let path = |id: &str| format!("/v1/transactions/{id}");
    app.patch(&path(&ids[0]), json!({"amount": 99.99, "type": "CREDIT"}))
        .await
        .ok(200);
    app.patch(
        &path(&ids[4]),
        json!({"status": "POSTED", "date": "2026-11-20"}),
    )
    .await
    .ok(200);
    app.patch(&path(&ids[2]), json!({"date": "2026-11-15"}))
        .await
        .ok(200);
    // An installment purchase, a stored installment, a scoped edit.
    let plan = app
        .tx(
            json!({"account_id": card, "type": "DEBIT", "amount": 100, "description": "Parcelado",
            "date": "2026-11-02", "installments": {"count": 4}}),
        )
        .await;
    let purchase = plan["installment"]["purchase_id"].as_str().unwrap();
    app.patch(
        &format!("/v1/transactions/mocked-installment:{purchase}:2"),
        json!({"scope": "future", "amount": 30}),
    )
    .await
    .ok(200);
    // Transfers, bulk moves and deletes, a bill payment.
    app.post(
        "/v1/transfers",
        json!({"from_account_id": bank, "to_account_id": savings, "amount": 50, "description": "T"}),
    )
    .await
    .ok(201);
    app.post(
        "/v1/transactions/bulk",
        json!({"ids": [ids[1]], "set": {"account_id": savings, "amount": 900}}),
    )
    .await
    .ok(200);
    app.patch(
        &format!("/v1/transactions/mocked-bill:{card}:202611"),
        json!({"amount": 20}),
    )
    .await
    .ok(200);
    assert_eq!(drift(&app).await, []);
    app.post(
        "/v1/transactions/bulk",
        json!({"ids": [ids[3]], "delete": true}),
    )
    .await
    .ok(200);
    app.delete(&path(&ids[0])).await.ok(200);
    app.delete(&format!(
        "/v1/transactions/{}?scope=all",
        plan["id"].as_str().unwrap()
    ))
    .await
    .ok(200);
    assert_eq!(drift(&app).await, []);
    app.delete(&format!("/v1/accounts/{card}")).await.ok(204);
    assert_eq!(drift(&app).await, []);
}

on_both_backends!(kept_totals_match_fresh_sums);
