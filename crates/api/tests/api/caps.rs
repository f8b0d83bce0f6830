//! Per-user caps on what every request walks: recurrence rules and
//! installment purchases. The cap is checked inside the write, under the
//! user's lock, so creations racing at the cap never pass it together.

use serde_json::json;
use std::sync::Arc;

use cofre_api::ApiConfig;
use cofre_domain::projection::{Frequency, InstallmentPlan, RecurrenceRule, Schedule, Template};
use cofre_domain::transaction::TxType;
use cofre_domain::{AccountId, Money, PurchaseId, RuleId};
use cofre_store::{ImportBatch, MAX_PLANS_PER_USER, MAX_RULES_PER_USER};

use crate::on_both_backends;
use crate::support::{Backend, NOW, TestApp};

fn rule(account: &str, n: u64) -> serde_json::Value {
    json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": format!("Regra {n}"),
        "date": "2026-01-01", "recurrence": {"frequency": "MONTHLY"}})
}

fn template(n: u64) -> Template {
    Template {
        tx_type: TxType::Debit,
        amount: Money::from_cents(1_000),
        description: format!("Série {n}"),
        notes: None,
        category_id: None,
        tag_ids: Vec::new(),
    }
}

async fn racing_creations_stop_at_the_rule_cap(backend: Backend) {
    let unlimited = ApiConfig {
        rate_limit_per_minute: 0,
        rate_limit_per_day: 0,
        ..ApiConfig::default()
    };
    let app = Arc::new(TestApp::start_with(backend, unlimited).await);
    let bank = app.bank("Conta").await;
    // All but a few stored at once (as an import would), the rest through
    // the API.
    let now: jiff::Timestamp = NOW.parse().unwrap();
    let rules = (0..MAX_RULES_PER_USER - 4)
        .map(|n| RecurrenceRule {
            id: RuleId::new(),
            user_id: app.user,
            account_id: AccountId::parse(&bank).unwrap(),
            template: template(n),
            schedule: Schedule {
                frequency: Frequency::Monthly,
                interval: 1,
                start: jiff::civil::date(2026, 2, 1),
                end_date: None,
                count: None,
            },
            created_at: now,
        })
        .collect();
    let batch = ImportBatch {
        rules,
        ..ImportBatch::default()
    };
    app.store
        .import(app.user, &batch, now)
        .await
        .expect("import");
    for n in 0..2 {
        app.post("/v1/transactions", rule(&bank, n)).await.ok(201);
    }
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let (app, bank) = (app.clone(), bank.clone());
            tokio::spawn(async move { app.post("/v1/transactions", rule(&bank, 10_000 + i)).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for task in tasks {
        let response = task.await.expect("racer");
        if response.status == 409 {
            assert_eq!(response.body["code"], "limit_reached", "{}", response.text);
        }
        statuses.push(response.status);
    }
    statuses.sort();
    assert_eq!(statuses, [201, 201, 409, 409, 409, 409]);
    // Deleting one makes room for one.
    let listed = app
        .get("/v1/transactions?view=ledger&from=2026-01-01&to=2026-01-01&limit=1")
        .await
        .ok(200)
        .clone();
    let handle = listed["data"][0]["id"].as_str().unwrap().to_owned();
    app.delete(&format!("/v1/transactions/{handle}?scope=all"))
        .await
        .ok(200);
    app.post("/v1/transactions", rule(&bank, 20_000))
        .await
        .ok(201);
    app.post("/v1/transactions", rule(&bank, 20_001))
        .await
        .problem(409, "limit_reached");
}

async fn installment_purchases_stop_at_their_cap(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = app
        .account(json!({"type": "CREDIT", "title": "Cartão", "credit_due_day": 10, "credit_limit": 5000}))
        .await;
    let account = AccountId::parse(&card).unwrap();
    let now: jiff::Timestamp = NOW.parse().unwrap();
    // All but one stored at once (as an import would), the last through
    // the API.
    let plans = (0..MAX_PLANS_PER_USER - 1)
        .map(|n| InstallmentPlan {
            id: PurchaseId::new(),
            user_id: app.user,
            account_id: account,
            template: template(n),
            count: 2,
            first_date: jiff::civil::date(2020, 1, 1),
            hidden: false,
            created_at: now,
        })
        .collect();
    let batch = ImportBatch {
        plans,
        ..ImportBatch::default()
    };
    app.store
        .import(app.user, &batch, now)
        .await
        .expect("import");
    let purchase = |n: u32| {
        json!({"account_id": card, "type": "DEBIT", "amount": 20, "description": format!("Loja {n}"),
            "date": "2026-11-01", "installments": {"count": 2}})
    };
    app.post("/v1/transactions", purchase(1)).await.ok(201);
    app.post("/v1/transactions", purchase(2))
        .await
        .problem(409, "limit_reached");
    // A plain row is no series: still fine.
    app.post(
        "/v1/transactions",
        json!({"account_id": card, "type": "DEBIT", "amount": 5,
        "description": "Café", "date": "2026-11-01"}),
    )
    .await
    .ok(201);
}

on_both_backends!(
    racing_creations_stop_at_the_rule_cap,
    installment_purchases_stop_at_their_cap,
);
