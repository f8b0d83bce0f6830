//! The running totals that triggers keep (account balances, per-day sums
//! that card bills are made of (on PostgreSQL kept for cards only, and
//! made afresh when an account becomes one), the per-month sums of
//! visible rows the overview's month reads, the per-category and per-day
//! sums budgets and reports read, per account and over each user's
//! accounts) always equal a fresh sum over the rows, whatever path changed
//! them; and what the store keeps in memory under the versions those
//! triggers bump (each card's money, brought up to date by the days a
//! write changed; the projection sources) always equals what a store with
//! nothing in memory reads.

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
    FROM day_totals d JOIN accounts a ON a.id = d.account_id WHERE a.type = 'CREDIT' \
    UNION ALL \
    SELECT 'missing day', t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL, 0, \
        CAST(SUM(t.amount_cents) AS BIGINT) \
    FROM transactions t JOIN accounts a ON a.id = t.account_id \
    WHERE a.type = 'CREDIT' AND t.bill_month IS NULL AND NOT EXISTS (SELECT 1 FROM day_totals d \
        WHERE d.account_id = t.account_id AND d.date = t.date AND d.type = t.type \
        AND d.installment = (t.installment_purchase_id IS NOT NULL)) \
    GROUP BY t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL \
    UNION ALL \
    SELECT 'month', m.account_id, m.month || ' ' || m.status || ' ' || m.kind, m.type, FALSE, \
        CAST(m.cents AS BIGINT), \
        CAST(COALESCE((SELECT SUM(t.amount_cents) FROM transactions t WHERE t.account_id = m.account_id \
            AND substr(t.date, 1, 7) = m.month AND t.type = m.type AND t.status = m.status \
            AND t.hide_from_results = FALSE AND (CASE WHEN t.installment_purchase_id IS NOT NULL \
                THEN 'installment' WHEN t.recurrence_id IS NOT NULL THEN 'recurrence' \
                ELSE 'plain' END) = m.kind), 0) AS BIGINT) \
    FROM month_totals m \
    UNION ALL \
    SELECT 'missing month', t.account_id, substr(t.date, 1, 7) || ' ' || t.status || ' ' || t.kind, \
        t.type, FALSE, 0, CAST(SUM(t.amount_cents) AS BIGINT) \
    FROM (SELECT account_id, date, type, status, amount_cents, \
            CASE WHEN installment_purchase_id IS NOT NULL THEN 'installment' \
                 WHEN recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END AS kind \
          FROM transactions WHERE hide_from_results = FALSE) t \
    WHERE NOT EXISTS (SELECT 1 FROM month_totals m WHERE m.account_id = t.account_id \
        AND m.month = substr(t.date, 1, 7) AND m.type = t.type AND m.status = t.status \
        AND m.kind = t.kind) \
    GROUP BY t.account_id, substr(t.date, 1, 7), t.type, t.status, t.kind \
    UNION ALL \
    SELECT 'category', c.account_id, c.month || ' ' || c.category_id || ' ' || c.status || ' ' \
        || CASE WHEN c.transfer THEN 'transfer' ELSE 'entry' END, c.type, FALSE, \
        CAST(c.cents AS BIGINT), \
        CAST(COALESCE((SELECT SUM(t.amount_cents) FROM transactions t \
            WHERE t.account_id = c.account_id AND substr(t.date, 1, 7) = c.month \
            AND COALESCE(t.category_id, '') = c.category_id AND t.type = c.type \
            AND t.status = c.status AND (t.transfer_group_id IS NOT NULL) = c.transfer \
            AND t.hide_from_results = FALSE), 0) AS BIGINT) \
    FROM category_month_totals c \
    UNION ALL \
    SELECT 'missing category', t.account_id, substr(t.date, 1, 7) || ' ' \
        || COALESCE(t.category_id, ''), t.type, FALSE, 0, CAST(SUM(t.amount_cents) AS BIGINT) \
    FROM transactions t WHERE t.hide_from_results = FALSE AND NOT EXISTS (SELECT 1 \
        FROM category_month_totals c WHERE c.account_id = t.account_id \
        AND c.month = substr(t.date, 1, 7) AND c.category_id = COALESCE(t.category_id, '') \
        AND c.type = t.type AND c.status = t.status \
        AND c.transfer = (t.transfer_group_id IS NOT NULL)) \
    GROUP BY t.account_id, substr(t.date, 1, 7), COALESCE(t.category_id, ''), t.type, t.status, \
        t.transfer_group_id IS NOT NULL \
    UNION ALL \
    SELECT 'day balance', d.account_id, d.date, '', FALSE, CAST(d.cents AS BIGINT), \
        CAST(COALESCE((SELECT SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents \
            ELSE -t.amount_cents END) FROM transactions t WHERE t.account_id = d.account_id \
            AND t.date = d.date AND t.status = 'POSTED'), 0) AS BIGINT) \
    FROM day_balances d \
    UNION ALL \
    SELECT 'missing day balance', t.account_id, t.date, '', FALSE, 0, \
        CAST(SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END) AS BIGINT) \
    FROM transactions t WHERE t.status = 'POSTED' AND NOT EXISTS (SELECT 1 FROM day_balances d \
        WHERE d.account_id = t.account_id AND d.date = t.date) \
    GROUP BY t.account_id, t.date \
    UNION ALL \
    SELECT 'user category', u.user_id, u.month || ' ' || u.category_id || ' ' || u.status || ' ' \
        || CASE WHEN u.transfer THEN 'transfer' ELSE 'entry' END \
        || CASE WHEN u.card THEN ' card' ELSE '' END, u.type, FALSE, CAST(u.cents AS BIGINT), \
        CAST(COALESCE((SELECT SUM(c.cents) FROM category_month_totals c \
            JOIN accounts a ON a.id = c.account_id WHERE a.user_id = u.user_id \
            AND c.month = u.month AND c.category_id = u.category_id AND c.type = u.type \
            AND c.status = u.status AND c.transfer = u.transfer \
            AND (a.type = 'CREDIT') = u.card), 0) AS BIGINT) \
    FROM user_category_month_totals u \
    UNION ALL \
    SELECT 'missing user category', a.user_id, c.month || ' ' || c.category_id, c.type, FALSE, 0, \
        CAST(SUM(c.cents) AS BIGINT) \
    FROM category_month_totals c JOIN accounts a ON a.id = c.account_id \
    WHERE NOT EXISTS (SELECT 1 FROM user_category_month_totals u WHERE u.user_id = a.user_id \
        AND u.month = c.month AND u.category_id = c.category_id AND u.type = c.type \
        AND u.status = c.status AND u.transfer = c.transfer AND u.card = (a.type = 'CREDIT')) \
    GROUP BY a.user_id, c.month, c.category_id, c.type, c.status, c.transfer, a.type = 'CREDIT' \
    UNION ALL \
    SELECT 'user day', u.user_id, u.currency || ' ' || u.date, side.name, FALSE, \
        CAST(CASE WHEN side.name = 'CREDIT' THEN u.cards ELSE u.banks END AS BIGINT), \
        CAST(COALESCE((SELECT SUM(d.cents) FROM day_balances d JOIN accounts a ON a.id = d.account_id \
            WHERE a.user_id = u.user_id AND a.currency = u.currency AND d.date = u.date \
            AND a.type = side.name AND NOT a.archived AND NOT a.exclude_from_totals), 0) AS BIGINT) \
    FROM user_day_balances u, (SELECT 'BANK' AS name UNION ALL SELECT 'CREDIT') side \
    UNION ALL \
    SELECT 'missing user day', a.user_id, a.currency || ' ' || d.date, a.type, FALSE, 0, \
        CAST(SUM(d.cents) AS BIGINT) \
    FROM day_balances d JOIN accounts a ON a.id = d.account_id \
    WHERE NOT a.archived AND NOT a.exclude_from_totals AND NOT EXISTS (SELECT 1 \
        FROM user_day_balances u WHERE u.user_id = a.user_id AND u.currency = a.currency \
        AND u.date = d.date) \
    GROUP BY a.user_id, a.currency, d.date, a.type";

/// Every kept total that differs from a fresh sum: (kind, account, date
/// (for a month: month, status and kind), kept, fresh).
pub(crate) async fn drift(app: &TestApp) -> Vec<(String, String, String, i64, i64)> {
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
    let drifted: Vec<_> = rows.into_iter().filter(|r| r.3 != r.4).collect();
    if drifted.is_empty() {
        assert_kept_equals_fresh(app).await;
    }
    drifted
}

/// The app's store, which has kept the user's card money and projection
/// sources since the last check and brought them up to date by version,
/// gives what a new store on the same database (nothing kept) reads.
async fn assert_kept_equals_fresh(app: &TestApp) {
    let fresh = cofre_store::connect(&app.url).await.unwrap();
    let kept_money = app.store.card_money(app.user).await.unwrap();
    let fresh_money = fresh.card_money(app.user).await.unwrap();
    let mut cards: Vec<_> = kept_money.keys().collect();
    cards.sort();
    let mut fresh_cards: Vec<_> = fresh_money.keys().collect();
    fresh_cards.sort();
    assert_eq!(cards, fresh_cards, "the same cards");
    let (from, to) = (
        jiff::civil::date(2026, 1, 1),
        jiff::civil::date(2027, 12, 31),
    );
    let kept = app.store.view_sources(app.user, from, to).await.unwrap();
    for card in cards {
        let (kept_card, fresh_card) = (&kept_money[card], &fresh_money[card]);
        assert_eq!(kept_card.days, fresh_card.days, "day totals of card {card}");
        assert_eq!(
            kept_card.payments, fresh_card.payments,
            "payments of card {card}"
        );
        // The kept bill sums were brought up to date month by month since
        // the last check (which built them): the fresh store sums them all.
        let cycles = kept.accounts[card].card.as_ref().expect("a card").cycles;
        assert_eq!(
            kept_card.stored_sums(cycles),
            fresh_card.stored_sums(cycles),
            "bill sums of card {card}"
        );
    }
    let fresh = fresh.view_sources(app.user, from, to).await.unwrap();
    assert_eq!(kept.rules, fresh.rules, "rules");
    assert_eq!(kept.plans, fresh.plans, "plans");
    assert_eq!(kept.materialized, fresh.materialized, "stored entries");
    assert_eq!(kept.tombstones, fresh.tombstones, "tombstones");
    assert_eq!(
        described(&kept.accounts),
        described(&fresh.accounts),
        "accounts"
    );
    assert_eq!(described(&kept.tags), described(&fresh.tags), "tags");
}

/// A map's entries as sorted text, to compare maps of values that cannot
/// be compared themselves.
fn described<K: std::fmt::Debug, V: std::fmt::Debug, S>(
    map: &std::collections::HashMap<K, V, S>,
) -> Vec<String> {
    let mut all: Vec<String> = map.iter().map(|entry| format!("{entry:?}")).collect();
    all.sort();
    all
}

/// Each column the triggers watch, changed alone straight in SQL (`$1` the
/// row, `$2` another account): the API's writes set several at once, so a
/// column missing from a trigger's `UPDATE OF` list would pass through them.
const EACH_COLUMN_ALONE: [&str; 12] = [
    "UPDATE transactions SET status = CASE WHEN status = 'POSTED' THEN 'PENDING' ELSE 'POSTED' END \
     WHERE id = $1",
    "UPDATE transactions SET type = CASE WHEN type = 'DEBIT' THEN 'CREDIT' ELSE 'DEBIT' END WHERE id = $1",
    "UPDATE transactions SET amount_cents = amount_cents + 1 WHERE id = $1",
    "UPDATE transactions SET date = '2026-09-30' WHERE id = $1",
    "UPDATE transactions SET account_id = $2 WHERE id = $1",
    "UPDATE transactions SET recurrence_id = 'rule' WHERE id = $1",
    "UPDATE transactions SET installment_purchase_id = 'plan' WHERE id = $1",
    "UPDATE transactions SET installment_purchase_id = NULL WHERE id = $1",
    "UPDATE transactions SET hide_from_results = TRUE WHERE id = $1",
    "UPDATE transactions SET hide_from_results = FALSE WHERE id = $1",
    "UPDATE transactions SET bill_month = '2026-11' WHERE id = $1",
    "UPDATE transactions SET bill_month = NULL WHERE id = $1",
];

/// Runs `EACH_COLUMN_ALONE` on row `id`, checking the totals after each.
async fn edit_each_column_alone(app: &TestApp, id: &str, account: &str) {
    macro_rules! run {
        ($conn:expr) => {
            for sql in EACH_COLUMN_ALONE {
                let mut query = sqlx::query(sql).bind(id);
                if sql.contains("$2") {
                    query = query.bind(account);
                }
                query.execute(&mut $conn).await.unwrap();
                assert_eq!(drift(app).await, [], "after {sql}");
            }
        };
    }
    if app.url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(&app.url).await.unwrap();
        run!(conn);
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.url).await.unwrap();
        run!(conn);
    }
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
    // What decides where an account counts changes after it has rows:
    // each change moves its whole contribution to the user's totals.
    for (account, change) in [
        (&bank, json!({"archived": true})),
        (&bank, json!({"archived": false})),
        (&card, json!({"exclude_from_totals": true})),
        (&card, json!({"exclude_from_totals": false})),
        (&bank, json!({"currency_code": "USD"})),
        (&bank, json!({"currency_code": "BRL"})),
        (&savings, json!({"type": "CREDIT"})),
        (&savings, json!({"archived": true})),
        (&savings, json!({"type": "BANK", "archived": false})),
    ] {
        app.patch(&format!("/v1/accounts/{account}"), change.clone())
            .await
            .ok(200);
        assert_eq!(drift(&app).await, [], "after {change}");
    }
    // Visibility and series links, which only the month's sums depend on:
    // hide a row, mark two as a transfer (both hidden), store a rule's
    // occurrence and split the rule from it (the row is relinked).
    app.patch(&path(&ids[4]), json!({"hide_from_results": true}))
        .await
        .ok(200);
    let leg = |account: &String, kind: &str| {
        json!({"account_id": account, "type": kind, "amount": 15, "description": "Guardar",
            "date": "2026-11-08"})
    };
    let sent = app.tx(leg(&bank, "DEBIT")).await["id"].clone();
    let received = app.tx(leg(&savings, "CREDIT")).await["id"].clone();
    let sent = sent.as_str().unwrap();
    app.post(
        &format!("/v1/transactions/{sent}/mark-transfer"),
        json!({"counterpart_id": received}),
    )
    .await
    .ok(200);
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": bank, "type": "DEBIT", "amount": 40, "description": "Assinatura",
                "date": "2026-10-03", "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await
        .ok(201)["recurrence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let stored = app
        .patch(
            &format!("/v1/transactions/mocked-recurrence:{rule}:2026-11-03"),
            json!({"scope": "this", "amount": 41}),
        )
        .await
        .ok(200)["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.patch(&path(&stored), json!({"scope": "future", "amount": 45}))
        .await
        .ok(200);
    assert_eq!(drift(&app).await, []);
    // Savings, a card before, got rows while a bank account (a transfer's
    // leg, marked and hidden); as a card again its days are its rows'. A
    // row taken off it while a bank account leaves its day at zero.
    let passing = app
        .tx(
            json!({"account_id": savings, "type": "DEBIT", "amount": 7, "description": "Passa",
            "date": "2026-11-27"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let to_type = |kind: &str| {
        let (app, savings) = (&app, &savings);
        let change = json!({ "type": kind });
        async move {
            app.patch(&format!("/v1/accounts/{savings}"), change.clone())
                .await
                .ok(200);
            assert_eq!(drift(app).await, [], "after {change}");
        }
    };
    to_type("CREDIT").await;
    to_type("BANK").await;
    app.delete(&path(&passing)).await.ok(200);
    to_type("CREDIT").await;
    to_type("BANK").await;
    // A rule with a tag, one of its entries hidden (a tombstone), the tag
    // renamed.
    let tag = app
        .post("/v1/tags", json!({"title": "Casa", "color_hex": "#336699"}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let gym = app
        .post(
            "/v1/transactions",
            json!({"account_id": bank, "type": "DEBIT", "amount": 90, "description": "Academia",
                "date": "2026-10-10", "tag_ids": [tag], "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await
        .ok(201)["recurrence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(drift(&app).await, []);
    app.delete(&format!(
        "/v1/transactions/mocked-recurrence:{gym}:2026-12-10"
    ))
    .await
    .ok(200);
    assert_eq!(drift(&app).await, []);
    app.patch(&format!("/v1/tags/{tag}"), json!({"title": "Lar"}))
        .await
        .ok(200);
    assert_eq!(drift(&app).await, []);
    app.patch(&path(&ids[4]), json!({"hide_from_results": false}))
        .await
        .ok(200);
    app.post(
        &format!("/v1/transactions/{sent}/unmark-transfer"),
        json!({}),
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
    // ids[1] is on savings since the bulk move.
    edit_each_column_alone(&app, &ids[1], &bank).await;
}

on_both_backends!(kept_totals_match_fresh_sums);
