//! Pages of the merged view kept past a write: served again while no
//! write since touched what they show (their days' rows and tags, the
//! projections' sources, the categories, the cards' bills), and never once
//! one did, from this process or another one sharing the database.

use axum::http::Method;
use serde_json::{Value, json};

use cofre_domain::TransactionId;
use cofre_domain::transaction::TransactionChanges;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

/// Pages of 3, newest first, over rows dated the 10th to the 18th of
/// November (one a day): page 1 holds the 18th to the 16th, so the second
/// page's cursor is the 16th and it shows rows of days up to that one.
const LEDGER: &str = "/v1/transactions?view=ledger&from=2026-10-01&to=2026-11-22&limit=3";

/// The `read_cache_revalidated_total` counter in `/metrics`.
async fn revalidated(app: &TestApp) -> u64 {
    let text = app.call(Method::GET, "/metrics", None, None).await.text;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("read_cache_revalidated_total")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// A bank account with a row a day from the 10th to the 18th of November
/// ("Dia 10" to "Dia 18"), and the path of the ledger's second page.
async fn days(app: &TestApp) -> (String, String) {
    let bank = app.bank("Conta").await;
    for day in 10..=18 {
        app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": day,
            "description": format!("Dia {day}"), "date": format!("2026-11-{day}")}))
            .await;
    }
    let first = app.get(LEDGER).await;
    let cursor = first.ok(200)["next_cursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    (bank, format!("{LEDGER}&cursor={cursor}"))
}

fn rows(page: &Value) -> &Vec<Value> {
    page["data"].as_array().expect("rows")
}

/// The stored row described `text` on the page.
fn row<'a>(page: &'a Value, text: &str) -> &'a Value {
    rows(page)
        .iter()
        .find(|r| r["description"] == text)
        .unwrap_or_else(|| panic!("no {text} in {page}"))
}

async fn a_page_is_kept_past_writes_to_other_days(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, second) = days(&app).await;
    let before = app.get(&second).await;
    let shown: Vec<_> = rows(before.ok(200))
        .iter()
        .map(|r| r["description"].clone())
        .collect();
    assert_eq!(shown, ["Dia 15", "Dia 14", "Dia 13"]);
    // A row today is newer than the page's cursor: not on it.
    let kept = revalidated(&app).await;
    app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 1,
        "description": "Hoje", "date": "2026-11-22"}))
        .await;
    let after = app.get(&second).await;
    assert_eq!(after.text, before.text);
    // The recorder is shared by tests running at once: at least this one.
    assert!(
        revalidated(&app).await > kept,
        "the page was computed again"
    );
    // The first page shows today, so it was not kept.
    assert_eq!(
        rows(app.get(LEDGER).await.ok(200))[0]["description"],
        "Hoje"
    );
}

async fn a_kept_page_never_outlives_a_change_to_its_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, second) = days(&app).await;
    let page = app.get(&second).await;
    let id = |text: &str| row(page.ok(200), text)["id"].as_str().unwrap().to_owned();
    let (fourteen, thirteen) = (id("Dia 14"), id("Dia 13"));

    // A row's own fields.
    app.patch(
        &format!("/v1/transactions/{fourteen}"),
        json!({"description": "Feira"}),
    )
    .await
    .ok(200);
    let page = app.get(&second).await;
    assert_eq!(row(page.ok(200), "Feira")["id"], fourteen.as_str());

    // The tags on a row.
    let tag = app.tag("Casa", "#112233").await;
    app.patch(
        &format!("/v1/transactions/{thirteen}"),
        json!({"tag_ids": [tag]}),
    )
    .await
    .ok(200);
    let page = app.get(&second).await;
    assert_eq!(row(page.ok(200), "Dia 13")["tags"][0]["title"], "Casa");

    // A tag's title, which the rows carrying it show (not a row change).
    app.patch(&format!("/v1/tags/{tag}"), json!({"title": "Lar"}))
        .await
        .ok(200);
    let page = app.get(&second).await;
    assert_eq!(row(page.ok(200), "Dia 13")["tags"][0]["title"], "Lar");

    // A row added on one of its days.
    app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 2,
        "description": "Atrasada", "date": "2026-11-15"}))
        .await;
    let page = app.get(&second).await;
    row(page.ok(200), "Atrasada");

    // A row deleted.
    app.delete(&format!("/v1/transactions/{fourteen}"))
        .await
        .ok(200);
    let page = app.get(&second).await;
    assert!(
        rows(page.ok(200))
            .iter()
            .all(|r| r["id"] != fourteen.as_str())
    );

    // A row changed by another process (a second store on the database).
    let other = cofre_store::connect(&app.url).await.expect("second store");
    let changes = TransactionChanges {
        description: Some("Outro processo".into()),
        ..TransactionChanges::default()
    };
    let thirteen_id: TransactionId = thirteen.parse().expect("an id");
    other
        .update_transaction(app.user, thirteen_id, &changes, jiff::Timestamp::now())
        .await
        .expect("update");
    let page = app.get(&second).await;
    assert_eq!(row(page.ok(200), "Outro processo")["id"], thirteen.as_str());
}

async fn a_kept_page_follows_its_categories_and_its_cards(backend: Backend) {
    let app = TestApp::start(backend).await;
    // Categories: a row filed under a category that later becomes a
    // subcategory of the one the page filters by.
    let (bank, card) = app.bank_and_card().await;
    let (home, garden) = (app.category("Casa").await, app.category("Jardim").await);
    app.tx(json!({"account_id": bank, "type": "DEBIT", "amount": 30,
        "description": "Mudas", "date": "2026-11-12", "category_id": garden}))
        .await;
    let filtered = format!("{LEDGER}&category_id={home}");
    assert!(rows(app.get(&filtered).await.ok(200)).is_empty());
    app.patch(
        &format!("/v1/categories/{garden}"),
        json!({"parent_id": home}),
    )
    .await
    .ok(200);
    row(app.get(&filtered).await.ok(200), "Mudas");

    // Cards: a purchase dated before the page's window still changes the
    // bill that falls due inside it (the card closes on the 3rd and is due
    // on the 10th).
    let cashflow = "/v1/transactions?from=2026-11-05&to=2026-11-22&limit=50";
    app.tx(json!({"account_id": card, "type": "DEBIT", "amount": 100,
        "description": "Loja", "date": "2026-10-28"}))
        .await;
    let bill = |page: &Value| {
        rows(page)
            .iter()
            .find(|r| r["id"].as_str().unwrap().starts_with("mocked-bill:"))
            .map(|r| r["amount"].as_f64().unwrap())
    };
    assert_eq!(bill(app.get(cashflow).await.ok(200)), Some(100.0));
    app.tx(json!({"account_id": card, "type": "DEBIT", "amount": 50,
        "description": "Outra loja", "date": "2026-10-25"}))
        .await;
    assert_eq!(bill(app.get(cashflow).await.ok(200)), Some(150.0));
}

on_both_backends!(
    a_page_is_kept_past_writes_to_other_days,
    a_kept_page_never_outlives_a_change_to_its_rows,
    a_kept_page_follows_its_categories_and_its_cards,
);
