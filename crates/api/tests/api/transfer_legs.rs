//! The legs of a transfer group stay one transfer: a change of amount,
//! date or status to one leg reaches every leg in the same transaction, a
//! leg's type (or, in bulk, account) cannot change alone, and deleting a
//! leg deletes the transfer. The same for bill payments and bulk edits.

use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

async fn row(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/transactions/{id}")).await.ok(200)["transaction"].clone()
}

/// Two banks (1,000.00 and 0) and a transfer of 100.00 between them;
/// returns the app, both accounts and the sent and received legs.
async fn transferred(backend: Backend) -> (TestApp, [String; 2], [String; 2]) {
    let app = TestApp::start(backend).await;
    let from = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
        .await;
    let to = app.bank("Poupança").await;
    let created = app
        .post(
            "/v1/transfers",
            json!({"from_account_id": from, "to_account_id": to, "amount": 100,
                "description": "Reserva", "date": "2026-11-20"}),
        )
        .await;
    let body = created.ok(201).clone();
    let legs = [
        body["transfer_sent_transaction_id"]
            .as_str()
            .unwrap()
            .to_owned(),
        body["transfer_received_transaction_id"]
            .as_str()
            .unwrap()
            .to_owned(),
    ];
    (app, [from, to], legs)
}

async fn amount_date_and_status_of_one_leg_reach_the_other(backend: Backend) {
    let (app, [from, to], [sent, received]) = transferred(backend).await;
    let changed = app
        .patch(
            &format!("/v1/transactions/{received}"),
            json!({"amount": 150.25, "date": "2026-11-21", "description": "Reserva de emergência"}),
        )
        .await;
    let body = changed.ok(200).clone();
    assert_eq!(body["updated_transaction_id"], received.as_str());
    assert_eq!(body["affected_ids"], json!([received, sent]));
    let (s, r) = (row(&app, &sent).await, row(&app, &received).await);
    for leg in [&s, &r] {
        assert_eq!(leg["amount"], 150.25, "{leg}");
        assert_eq!(leg["date"], "2026-11-21", "{leg}");
    }
    // The description is each leg's own.
    assert_eq!(s["description"], "Reserva");
    assert_eq!(r["description"], "Reserva de emergência");
    assert_eq!(app.balance(&from).await, 849.75);
    assert_eq!(app.balance(&to).await, 150.25);

    // A status change posts (or un-posts) both sides at once.
    app.patch(
        &format!("/v1/transactions/{sent}"),
        json!({"status": "PENDING"}),
    )
    .await
    .ok(200);
    assert_eq!(row(&app, &received).await["status"], "PENDING");
    assert_eq!(app.balance(&from).await, 1000.0);
    assert_eq!(app.balance(&to).await, 0.0);
}

async fn a_legs_type_cannot_change_alone(backend: Backend) {
    let (app, [from, to], [sent, _]) = transferred(backend).await;
    app.patch(
        &format!("/v1/transactions/{sent}"),
        json!({"type": "CREDIT"}),
    )
    .await
    .problem(409, "transfer_conflict");
    // Nothing of a refused change is kept, not even its other fields.
    app.patch(
        &format!("/v1/transactions/{sent}"),
        json!({"type": "CREDIT", "amount": 5}),
    )
    .await
    .problem(409, "transfer_conflict");
    assert_eq!(row(&app, &sent).await["amount"], 100.0);
    // Sending the type it already has is no change.
    app.patch(
        &format!("/v1/transactions/{sent}"),
        json!({"type": "DEBIT", "notes": "ok"}),
    )
    .await
    .ok(200);
    assert_eq!(app.balance(&from).await, 900.0);
    assert_eq!(app.balance(&to).await, 100.0);
}

async fn deleting_one_leg_deletes_the_transfer(backend: Backend) {
    let (app, [from, to], [sent, received]) = transferred(backend).await;
    let deleted = app.delete(&format!("/v1/transactions/{received}")).await;
    let body = deleted.ok(200).clone();
    assert_eq!(body["deleted_transaction_id"], received.as_str());
    assert_eq!(body["affected_ids"], json!([received, sent]));
    app.get(&format!("/v1/transactions/{sent}"))
        .await
        .problem(404, "not_found");
    assert_eq!(app.balance(&from).await, 1000.0);
    assert_eq!(app.balance(&to).await, 0.0);
}

async fn a_bill_payments_legs_move_together(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    app.tx(json!({"account_id": card, "type": "DEBIT", "amount": 300,
        "description": "Mercado", "date": "2026-10-15"}))
        .await;
    let bill = format!("/v1/transactions/mocked-bill:{card}:202611");
    let paid = app
        .patch(&bill, json!({"amount": 100}))
        .await
        .ok(200)
        .clone();
    let ids = paid["affected_ids"].as_array().unwrap().clone();
    let bank_leg = ids[0].as_str().unwrap();
    assert_eq!(app.balance(&card).await, -200.0);

    // Correcting the amount of the bank row corrects the card's credit.
    app.patch(
        &format!("/v1/transactions/{bank_leg}"),
        json!({"amount": 120}),
    )
    .await
    .ok(200);
    assert_eq!(app.balance(&bank).await, 880.0);
    assert_eq!(app.balance(&card).await, -180.0);
    let get_bill = app.get(&bill).await.ok(200).clone();
    assert_eq!(get_bill["transaction"]["amount"], 180.0);

    // Deleting the bank row undoes the payment on both sides.
    app.delete(&format!("/v1/transactions/{bank_leg}"))
        .await
        .ok(200);
    assert_eq!(app.balance(&bank).await, 1000.0);
    assert_eq!(app.balance(&card).await, -300.0);
    assert_eq!(app.get(&bill).await.ok(200)["transaction"]["amount"], 300.0);
}

async fn bulk_edits_follow_the_same_rule(backend: Backend) {
    let (app, [from, to], [sent, received]) = transferred(backend).await;
    // A new amount for the sent leg alone: the received leg follows.
    let set = app
        .post(
            "/v1/transactions/bulk",
            json!({"ids": [sent], "set": {"amount": 40}, "expected_count": 1}),
        )
        .await;
    assert_eq!(set.ok(200)["updated_count"], 1);
    assert_eq!(row(&app, &received).await["amount"], 40.0);
    assert_eq!(app.balance(&from).await, 960.0);
    assert_eq!(app.balance(&to).await, 40.0);

    // Type and account stay; the rest of the change applies.
    let other = app.bank("Corrente").await;
    let locked = app
        .post(
            "/v1/transactions/bulk",
            json!({"ids": [received], "set": {"type": "DEBIT", "account_id": other, "notes": "x"}}),
        )
        .await;
    let body = locked.ok(200).clone();
    assert_eq!(
        body["skipped"],
        json!([{"id": received, "reason": "transfer_leg_locked", "fields": ["type", "account_id"]}])
    );
    let r = row(&app, &received).await;
    assert_eq!(
        (r["type"].clone(), r["account_id"].clone()),
        (json!("CREDIT"), json!(to))
    );
    assert_eq!(r["notes"], "x");

    // Deleting one leg in bulk deletes the transfer.
    let deleted = app
        .post(
            "/v1/transactions/bulk",
            json!({"ids": [received], "delete": true}),
        )
        .await;
    assert_eq!(deleted.ok(200)["deleted_count"], 1);
    app.get(&format!("/v1/transactions/{sent}"))
        .await
        .problem(404, "not_found");
    assert_eq!(app.balance(&from).await, 1000.0);
    assert_eq!(app.balance(&to).await, 0.0);
}

on_both_backends!(
    amount_date_and_status_of_one_leg_reach_the_other,
    a_legs_type_cannot_change_alone,
    deleting_one_leg_deletes_the_transfer,
    a_bill_payments_legs_move_together,
    bulk_edits_follow_the_same_rule,
);
