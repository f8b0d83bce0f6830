//! Money-moving requests fired at once from several connections: nothing
//! is paid twice, no row is stored twice, and balances equal their rows.

use axum::http::Method;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::on_both_backends;
use crate::support::{Backend, TestApp, hold_write_lock, release, with};
use crate::totals::drift;

/// How many copies of one request race each other.
const RACERS: usize = 6;

/// Sends the same request from `RACERS` tasks at once; the statuses and
/// problem codes, sorted.
async fn race(app: &Arc<TestApp>, method: Method, path: &str, body: Value) -> Vec<(u16, String)> {
    let tasks: Vec<_> = (0..RACERS)
        .map(|_| {
            let (app, method, path, body) =
                (app.clone(), method.clone(), path.to_owned(), body.clone());
            tokio::spawn(async move {
                let key = app.key.clone();
                app.call(method, &path, Some(&key), Some(body)).await
            })
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

async fn race_patch(app: &Arc<TestApp>, path: &str, body: Value) -> Vec<(u16, String)> {
    race(app, Method::PATCH, path, body).await
}

/// One `first` answer and `RACERS - 1` of `rest`, as `race` sorts them.
fn one_then(first: (u16, &str), rest: (u16, &str)) -> Vec<(u16, String)> {
    let mut out = vec![(first.0, first.1.to_owned())];
    out.extend((1..RACERS).map(|_| (rest.0, rest.1.to_owned())));
    out.sort();
    out
}

/// Every account's balance equals the sum of its stored POSTED rows
/// (hidden ones included), as the list endpoint gives them.
async fn balances_equal_their_rows(app: &TestApp) {
    let window = "view=ledger&from=2026-01-01&to=2026-12-31";
    let mut rows = app.all_pages(window, 100).await;
    rows.extend(app.all_pages(&format!("{window}&hidden=true"), 100).await);
    let accounts = app.get("/v1/accounts").await.ok(200).clone();
    for account in accounts["data"].as_array().unwrap() {
        let id = account["id"].as_str().unwrap();
        let cents: i64 = rows
            .iter()
            .filter(|r| r["account_id"] == id && r["status"] == "POSTED" && r["projected"] != true)
            .map(|r| {
                let cents = (r["amount"].as_f64().unwrap() * 100.0).round() as i64;
                if r["type"] == "DEBIT" { -cents } else { cents }
            })
            .sum();
        let balance = (account["balance"].as_f64().unwrap() * 100.0).round() as i64;
        assert_eq!(balance, cents, "account {id}: balance vs its rows");
    }
}

/// A bank account with 1,000.00 paying a card (due 10, closes on the 3rd)
/// with 100.00 on the October bill and 200.00 on the November one; today
/// is 2026-11-22, so both are closed and unpaid.
async fn wallet(backend: Backend) -> (Arc<TestApp>, String, String) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
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
    let expected = one_then((200, ""), (409, "nothing_to_pay"));
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

async fn one_client_id_created_at_once_is_one_row(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app.bank("Conta").await;
    let body = json!({"id": "0b9f3c3e-6f0a-4d8e-9a51-3c1f1f6e2a77", "account_id": bank,
        "type": "DEBIT", "amount": 42.5, "description": "Padaria", "date": "2026-11-20"});
    assert_eq!(
        race(&app, Method::POST, "/v1/transactions", body).await,
        one_then((201, ""), (200, ""))
    );
    let rows = app
        .all_pages("view=ledger&from=2026-11-01&to=2026-11-30", 50)
        .await;
    assert_eq!(rows.len(), 1);
    assert_eq!(app.balance(&bank).await, -42.5);
    balances_equal_their_rows(&app).await;
}

/// What one creation of [`creations_at_once_are_each_answered_as_alone`]
/// sends, with whose key, and the answer it expects: a status (201 for a
/// creation with its own id, which may instead be answered 200 as the
/// replay of another send), and the problem code or the field a 400 names.
pub(crate) struct Sent {
    pub key: String,
    pub body: Value,
    pub status: u16,
    pub names: &'static str,
}

/// Sends `all` at once while `app`'s first user's writes wait for a lock,
/// so they gather (on PostgreSQL they are stored in one call once it is
/// let go), and checks each answer against what it expects: a refusal
/// names what it should, a creation reads back by id as it was answered.
pub(crate) async fn sent_together(
    app: &Arc<TestApp>,
    all: &[Sent],
) -> Vec<crate::support::Response> {
    let lock = hold_write_lock(app).await;
    let tasks: Vec<_> = all
        .iter()
        .map(|sent| {
            let (app, key, body) = (app.clone(), sent.key.clone(), sent.body.clone());
            tokio::spawn(async move {
                app.call(Method::POST, "/v1/transactions", Some(&key), Some(body))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    release(lock).await;
    let mut answers = Vec::new();
    for (sent, task) in all.iter().zip(tasks) {
        let answer = task.await.expect("creation");
        match (sent.status, sent.names) {
            (400, field) => {
                answer.invalid(&[field]);
            }
            (status, code) if status > 400 => {
                answer.problem(status, code);
            }
            (status, _) => {
                let replayed = answer.status == 200 && sent.body.get("id").is_some();
                let made = &answer.ok(if replayed { 200 } else { status })["transaction"];
                assert_eq!(made["description"], sent.body["description"], "{made}");
                let read = app
                    .call(
                        Method::GET,
                        &format!("/v1/transactions/{}", made["id"].as_str().unwrap()),
                        Some(&sent.key),
                        None,
                    )
                    .await;
                assert_eq!(read.ok(200)["transaction"], *made);
            }
        }
        answers.push(answer);
    }
    answers
}

/// Single-row creations sent at once, for two users, while the first
/// user's writes wait for a lock, with refusals of every kind among them
/// (on PostgreSQL the creations gathered meanwhile are stored in one call;
/// then again with one that takes a total out of range, which fails its
/// call as a whole): each is answered as it would be alone, the refused
/// keep nothing, the rest are kept whole, and every running total (the
/// rows of a call's INSERT are added up once) equals a fresh sum. On
/// PostgreSQL a call is stored as one set; one id twice goes in rounds.
async fn creations_at_once_are_each_answered_as_alone(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let mine = app.bank("Conta").await;
    let full = app.bank("Cheia").await;
    let most = "99999999999.99";
    let at_most = |account: &str| {
        json!({"account_id": account, "type": "CREDIT", "description": "Prêmio",
            "amount": serde_json::from_str::<Value>(most).unwrap(), "date": "2026-11-20"})
    };
    // 100 rows of the largest amount fill the day's total to its bound.
    for _ in 0..100 {
        app.tx(at_most(&full)).await;
    }
    let label = app.tag("Mercado", "#123456").await;
    let food = app.category("Feira").await;
    let (_, card) = app.bank_and_card().await;
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 7, "description": "Antes",
        "date": "2026-11-02"}),
    )
    .await;
    // The store keeps the card's money from here on, and brings it up to
    // date by the versions the calls below leave.
    assert_eq!(drift(&app).await, vec![]);
    let (_, theirs) = app.new_user().await;
    let their_account = app
        .account_as(&theirs, json!({"type": "BANK", "title": "Dela"}))
        .await;
    // Theirs, so in a refusal no foreign key stands in for the check.
    let their_tag = app
        .created_as(
            &theirs,
            "/v1/tags",
            json!({"title": "Dela", "color_hex": "#654321"}),
        )
        .await;
    let their_category = app
        .created_as(&theirs, "/v1/categories", json!({"title": "Dela"}))
        .await;
    let taken = "5d1c8f8e-2b7a-4c1e-8f3d-9a6b4c2e1f00";
    app.call(
        Method::POST,
        "/v1/transactions",
        Some(&theirs),
        Some(
            json!({"id": taken, "account_id": their_account, "type": "DEBIT", "amount": 1,
            "description": "Dela", "date": "2026-11-20"}),
        ),
    )
    .await
    .ok(201);
    let row = |account: &str, cents: i64| {
        json!({"account_id": account, "type": "DEBIT", "date": "2026-11-20",
            "amount": serde_json::from_str::<Value>(&format!("{}.{:02}", cents / 100, cents % 100)).unwrap(),
            "description": format!("Compra {cents}")})
    };
    let sent = |key: &str, body: Value, status: u16, names: &'static str| Sent {
        key: key.to_owned(),
        body,
        status,
        names,
    };
    let zero = "00000000-0000-0000-0000-000000000000";
    let twice = "7e2a4c1b-3f5d-4e6a-9b8c-1d2e3f4a5b6c";
    // Sent once before, and again among the others: a replay.
    let again = "3b9d2f4e-6a1c-4d8e-b5f7-2c4a6e8b0d13";
    app.call(
        Method::POST,
        "/v1/transactions",
        Some(&app.key),
        Some(with(&row(&mine, 600), json!({"id": again}))),
    )
    .await
    .ok(201);
    let mut all = Vec::new();
    for cents in 101..=112 {
        all.push(sent(
            &app.key,
            with(&row(&mine, cents), json!({"tag_ids": [label]})),
            201,
            "",
        ));
    }
    for cents in 201..=206 {
        all.push(sent(&theirs, row(&their_account, cents), 201, ""));
    }
    // On a card: a category's, a pending one, another month's, a refund.
    for changes in [
        json!({"category_id": food}),
        json!({"status": "PENDING"}),
        json!({"date": "2026-10-15"}),
        json!({"type": "CREDIT", "category_id": food}),
    ] {
        all.push(sent(&app.key, with(&row(&card, 121), changes), 201, ""));
    }
    all.extend([
        sent(
            &app.key,
            with(&row(&mine, 1), json!({"tag_ids": [label, zero]})),
            400,
            "tag_ids",
        ),
        sent(
            &app.key,
            with(&row(&mine, 2), json!({"category_id": zero})),
            400,
            "category_id",
        ),
        sent(
            &app.key,
            with(&row(&mine, 6), json!({"tag_ids": [their_tag]})),
            400,
            "tag_ids",
        ),
        sent(
            &app.key,
            with(&row(&mine, 7), json!({"category_id": their_category})),
            400,
            "category_id",
        ),
        sent(&app.key, row(&their_account, 3), 400, "account_id"),
        sent(
            &app.key,
            with(&row(&mine, 4), json!({"id": taken})),
            409,
            "id_conflict",
        ),
        sent(
            &app.key,
            with(&row(&mine, 600), json!({"id": again})),
            201,
            "",
        ),
    ]);
    let answers = sent_together(&app, &all).await;
    assert_eq!(drift(&app).await, vec![], "the sums after a call");
    assert_eq!(answers.last().map(|answer| answer.status), Some(200));
    for answer in &answers[..12] {
        assert_eq!(answer.body["transaction"]["tags"][0]["id"], label.as_str());
    }
    // One id sent twice at once: on PostgreSQL the second goes in a later
    // round of its call's set, so it replays the first.
    let sent_twice = sent_together(
        &app,
        &[
            sent(
                &app.key,
                with(&row(&mine, 500), json!({"id": twice})),
                201,
                "",
            ),
            sent(&theirs, row(&their_account, 207), 201, ""),
            sent(
                &app.key,
                with(&row(&mine, 500), json!({"id": twice})),
                201,
                "",
            ),
        ],
    )
    .await;
    let twice: Vec<_> = [&sent_twice[0], &sent_twice[2]]
        .iter()
        .map(|answer| (answer.status, answer.body["transaction"]["id"].clone()))
        .collect();
    assert!(
        matches!(twice[..], [(201, ref a), (200, ref b)] | [(200, ref a), (201, ref b)] if a == b),
        "{twice:?}"
    );
    // A creation taking a total out of range among others: on PostgreSQL
    // it fails their call as a whole, and each is stored again on its own.
    sent_together(
        &app,
        &[
            sent(&app.key, row(&mine, 301), 201, ""),
            sent(&app.key, at_most(&full), 400, "amount"),
            sent(
                &app.key,
                with(&row(&mine, 5), json!({"category_id": zero})),
                400,
                "category_id",
            ),
            sent(&app.key, row(&mine, 302), 201, ""),
        ],
    )
    .await;
    // Kept: twelve rows, the one sent again, the one sent twice and two
    // more in mine; nothing more in the full account; seven and the taken
    // one in theirs.
    let window = "view=ledger&from=2026-11-01&to=2026-11-30";
    let rows = app.all_pages(window, 100).await;
    let in_account = |account: &str| rows.iter().filter(|r| r["account_id"] == account).count();
    assert_eq!((in_account(&mine), in_account(&full)), (16, 100));
    let mine_cents: i64 = (101..=112).sum::<i64>() + 600 + 500 + 301 + 302;
    assert_eq!(app.balance(&mine).await, -(mine_cents as f64) / 100.0);
    assert_eq!(app.balance(&full).await, 9_999_999_999_999.0);
    let theirs_listed = app
        .call(
            Method::GET,
            &format!("/v1/transactions?{window}&limit=100"),
            Some(&theirs),
            None,
        )
        .await;
    assert_eq!(theirs_listed.ok(200)["data"].as_array().unwrap().len(), 8);
    balances_equal_their_rows(&app).await;
    assert_eq!(drift(&app).await, vec![], "the sums after a failed call");
}

async fn transfers_at_once_store_both_legs_each(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let from = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
        .await;
    let to = app.bank("Poupança").await;
    let body = json!({"from_account_id": from, "to_account_id": to, "amount": 10.01,
        "description": "Reserva", "date": "2026-11-20"});
    let answers = race(&app, Method::POST, "/v1/transfers", body).await;
    assert!(
        answers.iter().all(|(status, _)| *status == 201),
        "{answers:?}"
    );
    let moved = 10.01 * RACERS as f64;
    assert_eq!(
        app.balance(&from).await,
        ((1000.0 - moved) * 100.0).round() / 100.0
    );
    assert_eq!(app.balance(&to).await, (moved * 100.0).round() / 100.0);
    let legs = app
        .all_pages("view=ledger&hidden=true&from=2026-11-01&to=2026-11-30", 50)
        .await;
    assert_eq!(
        legs.iter()
            .filter(|r| r["transfer_group_id"].is_string())
            .count(),
        2 * RACERS
    );
    balances_equal_their_rows(&app).await;
}

async fn a_pair_marked_at_once_is_one_transfer(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let (a, b) = (app.bank("Conta").await, app.bank("Poupança").await);
    let sent = app
        .tx(
            json!({"account_id": a, "type": "DEBIT", "amount": 70, "description": "Saída",
            "date": "2026-11-20"}),
        )
        .await;
    let received = app
        .tx(
            json!({"account_id": b, "type": "CREDIT", "amount": 70, "description": "Entrada",
            "date": "2026-11-20"}),
        )
        .await;
    let (sent, received) = (
        sent["id"].as_str().unwrap().to_owned(),
        received["id"].as_str().unwrap().to_owned(),
    );
    let path = format!("/v1/transactions/{sent}/mark-transfer");
    assert_eq!(
        race(
            &app,
            Method::POST,
            &path,
            json!({"counterpart_id": received})
        )
        .await,
        one_then((200, ""), (409, "transfer_conflict"))
    );
    let group = |id: String| {
        let app = app.clone();
        async move {
            app.get(&format!("/v1/transactions/{id}")).await.ok(200)["transaction"]["transfer_group_id"].clone()
        }
    };
    let (g1, g2) = (group(sent).await, group(received).await);
    assert!(g1.is_string());
    assert_eq!(g1, g2, "both legs in one group");
    balances_equal_their_rows(&app).await;
}

async fn a_bulk_delete_sent_at_once_deletes_once(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 100}))
        .await;
    for day in 10..15 {
        app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 3,
            "description": "Café", "date": format!("2026-11-{day}")}))
            .await;
    }
    let body = json!({"filter": {"from": "2026-11-01", "to": "2026-11-30", "search": "café"},
        "delete": true, "expected_count": 5});
    assert_eq!(
        race(&app, Method::POST, "/v1/transactions/bulk", body).await,
        one_then((200, ""), (409, "expected_count_mismatch"))
    );
    assert_eq!(app.balance(&bank).await, 100.0);
    balances_equal_their_rows(&app).await;
}

on_both_backends!(
    a_bill_paid_at_once_from_many_connections_is_paid_once,
    part_payments_at_once_never_pay_more_than_is_owed,
    a_bill_the_card_never_had_cannot_be_paid,
    one_client_id_created_at_once_is_one_row,
    creations_at_once_are_each_answered_as_alone,
    transfers_at_once_store_both_legs_each,
    a_pair_marked_at_once_is_one_transfer,
    a_bulk_delete_sent_at_once_deletes_once,
);
