//! Demo data read back through the API: the card bills the generator paid
//! are the bills the API computes, and they are paid.

use serde_json::Value;
use std::collections::BTreeMap;

use cofre_demo::{self as demo, DEFAULT_SEED, Profile, Spec};
use cofre_domain::Money;
use cofre_domain::card::BillMonth;

use crate::on_both_backends;
use crate::support::{Backend, NOW, TODAY, TestApp};

fn money(value: &Value) -> Money {
    Money::parse(&value.to_string()).expect("an amount")
}

fn month_of(due_date: &Value) -> BillMonth {
    let text = due_date.as_str().expect("due_date");
    BillMonth::parse_key(&text[..7]).expect("YYYY-MM")
}

/// Every bill of `card` due in the windows of `years` up to `to`, in order.
async fn bills(app: &TestApp, card: &str, years: i16, to: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let end: i16 = to[..4].parse().expect("year");
    for year in end - years..=end {
        let from = format!("{year}-01-01");
        let to = format!("{year}-12-31");
        let body = app
            .get(&format!("/v1/cards/{card}/bills?from={from}&to={to}"))
            .await;
        out.extend(body.ok(200)["bills"].as_array().expect("bills").clone());
    }
    out
}

async fn paid_bills_are_the_bills_the_api_computes(backend: Backend) {
    let app = TestApp::start(backend).await;
    let now = NOW.parse().expect("NOW");
    let today: jiff::civil::Date = TODAY.parse().expect("TODAY");
    // Three cards and five years of purchases, in fewer rows.
    let spec = Spec {
        rows: 4_000,
        ..Profile::Heavy.spec()
    };
    let setup = demo::prepare(app.store.as_ref(), app.user, &spec, now, today)
        .await
        .expect("setup");
    let batch = demo::generate(&spec, DEFAULT_SEED, app.user, &setup, now, today).expect("batch");
    app.store
        .import(app.user, &batch, now)
        .await
        .expect("import");

    let (mut partial, mut split) = (0, 0);
    // Outstanding of unpaid bills whose cycle has started (DECISIONS §12).
    let mut open_total = Money::ZERO;
    let mut next_bills = 0;
    for card in &setup.accounts.cards {
        let expected = demo::bill_amounts(card, &batch, today);
        let bills = bills(&app, &card.id.to_string(), 6, "2027-12-31").await;
        let mut seen: BTreeMap<BillMonth, Money> = BTreeMap::new();
        for bill in &bills {
            let month = month_of(&bill["due_date"]);
            let amount = money(&bill["amount"]);
            let status = bill["status"].as_str().expect("status");
            let payments = bill["settled_payment_ids"].as_array().expect("ids").len();
            let due = bill["due_date"].as_str().expect("due");
            let close = bill["close_date"].as_str().expect("close");
            if close < TODAY {
                // Closed: every entry is in, so the generator's amount is exact.
                let want = expected.get(&month).copied().unwrap_or(Money::ZERO);
                assert_eq!(amount, want, "{} {bill}", card.title);
                seen.insert(month, amount);
            }
            let started = bill["cycle_start_date"].as_str().expect("start") <= TODAY;
            if started && status != "paga" {
                let paid = bill_paid(&app, bill).await;
                let left = amount.checked_sub(paid).expect("outstanding");
                open_total = open_total.checked_add(left).expect("total");
                next_bills += usize::from((TODAY..="2026-12-22").contains(&due));
            }
            if due < TODAY && amount.is_positive() {
                match (status, payments) {
                    ("paga", 1) => {}
                    ("paga", 2) => split += 1,
                    ("vencida", 1) => partial += 1,
                    other => panic!("{}: {other:?} {bill}", card.title),
                }
            } else if due >= TODAY {
                assert_eq!(payments, 0, "{} {bill}", card.title);
                let open = if close >= TODAY { "aberta" } else { "fechada" };
                assert_eq!(status, open, "{} {bill}", card.title);
            }
        }
        // The API lists every bill the generator paid.
        let paid: Vec<&BillMonth> = expected.keys().filter(|m| !seen.contains_key(m)).collect();
        assert!(
            paid.iter()
                .all(|m| card.cycles.cycle(**m).is_some_and(|c| c.close >= today)),
            "{}: bills missing from the API: {paid:?}",
            card.title
        );
    }
    assert_eq!((split, partial), (1, 1));

    // The overview adds up the same bills.
    let overview = app.get("/v1/overview").await;
    let overview = overview.ok(200);
    assert_eq!(money(&overview["open_bills_total"]), open_total);
    assert!(open_total.is_positive());
    let listed = overview["next_bills"].as_array().expect("next_bills").len();
    assert_eq!(listed, next_bills);
    assert_eq!(listed, 3, "each card has a bill due in the next 30 days");
    assert!(money(&overview["card_debt"]).is_positive());
}

/// What was paid against a bill: the amounts of its settling payments.
async fn bill_paid(app: &TestApp, bill: &Value) -> Money {
    let mut paid = Money::ZERO;
    for id in bill["settled_payment_ids"].as_array().expect("ids") {
        let id = id.as_str().expect("id");
        let body = app.get(&format!("/v1/transactions/{id}")).await;
        let amount = money(&body.ok(200)["transaction"]["amount"]);
        paid = paid.checked_add(amount).expect("sum");
    }
    paid
}

/// `cofre demo-data` gives the user a dozen budgets, set near what their
/// categories spend, so the budgets status shows more than one level.
async fn demo_user_has_a_dozen_budgets(backend: Backend) {
    let app = TestApp::start(backend).await;
    let now = NOW.parse().expect("NOW");
    let today: jiff::civil::Date = TODAY.parse().expect("TODAY");
    let summary = demo::fill(
        app.store.as_ref(),
        app.user,
        &Profile::Small.spec(),
        DEFAULT_SEED,
        now,
        today,
    )
    .await
    .expect("demo data");
    assert_eq!(summary.budgets, 12);
    let listed = app.get("/v1/budgets").await;
    assert_eq!(listed.ok(200)["data"].as_array().unwrap().len(), 12);
    let status = app.get("/v1/budgets/status?month=2026-10").await;
    let rows = status.ok(200)["budgets"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 12);
    let levels: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert!(levels.len() >= 2, "{levels:?}");
}

on_both_backends!(
    paid_bills_are_the_bills_the_api_computes,
    demo_user_has_a_dozen_budgets,
);
