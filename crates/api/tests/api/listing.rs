//! GET /v1/transactions: window, filters alone and combined, and cursor
//! pagination that never repeats or skips a row.

use serde_json::{Value, json};
use std::collections::HashSet;

use crate::on_both_backends;
use crate::support::{Backend, TestApp};

const WINDOW: &str = "from=2026-01-01&to=2026-12-31";

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn pages_cover_every_row_once_in_order(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Main").await;
    let mut created = Vec::new();
    // Seven rows on one day, three on another, two on a third.
    for (date, n) in [("2026-03-15", 7), ("2026-03-14", 3), ("2026-02-01", 2)] {
        for i in 0..n {
            let tx = app
                .tx(json!({"account_id": account, "type": "DEBIT", "amount": 1 + i, "description": format!("row {date} {i}"), "date": date}))
                .await;
            created.push(tx);
        }
    }
    let all = app.all_pages(WINDOW, 100).await;
    assert_eq!(all.len(), 12);
    // Newest day first, id ascending within a day.
    for pair in all.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (da, db) = (a["date"].as_str().unwrap(), b["date"].as_str().unwrap());
        assert!(
            da > db || (da == db && a["id"].as_str() < b["id"].as_str()),
            "{da} {db}"
        );
    }
    for limit in [1, 2, 3, 5, 7, 11, 12] {
        let paged = app.all_pages(WINDOW, limit).await;
        assert_eq!(ids(&paged), ids(&all), "limit {limit}");
    }
    let unique: HashSet<String> = ids(&all).into_iter().collect();
    assert_eq!(unique.len(), 12);
    let expected: HashSet<String> = ids(&created).into_iter().collect();
    assert_eq!(unique, expected);

    // Default page size is 50.
    let body = app.get(&format!("/v1/transactions?{WINDOW}")).await;
    assert_eq!(body.ok(200)["data"].as_array().unwrap().len(), 12);
    assert_eq!(body.body["has_more"], json!(false));
}

async fn pages_hold_when_rows_change_between_requests(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Main").await;
    for i in 0..6 {
        app.tx(json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": format!("r{i}"), "date": "2026-05-05"}))
            .await;
    }
    let first = app.get(&format!("/v1/transactions?{WINDOW}&limit=3")).await;
    let first_ids = ids(first.ok(200)["data"].as_array().unwrap());
    let cursor = first.body["next_cursor"].as_str().unwrap().to_owned();
    // A row added on an earlier day appears on a later page; nothing repeats.
    app.tx(json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": "late", "date": "2026-05-01"}))
        .await;
    let rest = app
        .get(&format!(
            "/v1/transactions?{WINDOW}&limit=50&cursor={cursor}"
        ))
        .await;
    let rest_ids = ids(rest.ok(200)["data"].as_array().unwrap());
    assert_eq!(rest_ids.len(), 4);
    assert!(rest_ids.iter().all(|id| !first_ids.contains(id)));
}

struct Fixture {
    app: TestApp,
    bank: String,
    savings: String,
    card: String,
    food: String,
    restaurants: String,
    tag_a: String,
    tag_b: String,
}

async fn fixture(backend: Backend) -> Fixture {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Checking").await;
    let savings = app
        .account(json!({"type": "BANK", "sub_type": "SAVINGS_ACCOUNT", "title": "Savings"}))
        .await;
    let card = app
        .account(json!({"type": "CREDIT", "title": "Card"}))
        .await;
    let categories = app.get("/v1/categories").await;
    let find = |title: &str| {
        categories.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["title"] == title)
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (food, restaurants) = (find("Alimentação"), find("Restaurantes"));
    let (tag_a, tag_b) = (
        app.tag("Viagem", "#AABBCC").await,
        app.tag("Trabalho", "#AABBCC").await,
    );
    let rows = [
        json!({"account_id": bank, "type": "DEBIT", "amount": 10, "description": "Padaria Pão Quente", "date": "2026-06-01", "category_id": food, "tag_ids": [tag_a]}),
        json!({"account_id": bank, "type": "DEBIT", "amount": 20, "description": "Sushi", "date": "2026-06-02", "category_id": restaurants, "tag_ids": [tag_a, tag_b]}),
        json!({"account_id": bank, "type": "CREDIT", "amount": 3000, "description": "Salário", "date": "2026-06-05", "notes": "Empresa ACME"}),
        json!({"account_id": savings, "type": "CREDIT", "amount": 500, "description": "Aporte", "date": "2026-06-06", "tag_ids": [tag_b]}),
        json!({"account_id": card, "type": "DEBIT", "amount": 99.9, "description": "Livraria", "date": "2026-06-07"}),
        json!({"account_id": bank, "type": "DEBIT", "amount": 150, "description": "Aluguel 50%_off", "date": "2026-12-10"}),
    ];
    for row in rows {
        app.tx(row).await;
    }
    Fixture {
        app,
        bank,
        savings,
        card,
        food,
        restaurants,
        tag_a,
        tag_b,
    }
}

/// Descriptions of the ledger view's rows (card rows included).
async fn descriptions(app: &TestApp, query: &str) -> Vec<String> {
    let response = app
        .get(&format!("/v1/transactions?{WINDOW}&view=ledger&{query}"))
        .await;
    let mut out: Vec<String> = response.ok(200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["description"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

async fn filters_select_the_right_rows(backend: Backend) {
    let f = fixture(backend).await;
    let app = &f.app;
    let d = |q: String| async move { descriptions(app, &q).await };
    assert_eq!(d("status=PENDING".into()).await, ["Aluguel 50%_off"]);
    assert_eq!(d("status=POSTED".into()).await.len(), 5);
    assert_eq!(d("type=CREDIT".into()).await, ["Aporte", "Salário"]);
    assert_eq!(d(format!("account_id={}", f.savings)).await, ["Aporte"]);
    assert_eq!(
        d(format!("account_id={},{}", f.savings, f.card)).await,
        ["Aporte", "Livraria"]
    );
    assert_eq!(
        d(format!("category_id={}", f.food)).await,
        ["Padaria Pão Quente", "Sushi"]
    );
    assert_eq!(
        d(format!(
            "category_id={}&include_subcategories=false",
            f.food
        ))
        .await,
        ["Padaria Pão Quente"]
    );
    assert_eq!(d(format!("category_id={}", f.restaurants)).await, ["Sushi"]);
    assert_eq!(
        d(format!("tag_id={}", f.tag_a)).await,
        ["Padaria Pão Quente", "Sushi"]
    );
    assert_eq!(
        d(format!("tag_id={},{}", f.tag_a, f.tag_b)).await,
        ["Aporte", "Padaria Pão Quente", "Sushi"]
    );
    assert_eq!(
        d("no_category=true".into()).await,
        ["Aluguel 50%_off", "Aporte", "Livraria", "Salário"]
    );
    assert_eq!(
        d("no_tags=true".into()).await,
        ["Aluguel 50%_off", "Livraria", "Salário"]
    );
    assert_eq!(d("sub_type=CREDIT_CARD".into()).await, ["Livraria"]);
    assert_eq!(
        d("sub_type=SAVINGS_ACCOUNT,CREDIT_CARD".into()).await,
        ["Aporte", "Livraria"]
    );
    assert_eq!(d("is_recurring=true".into()).await, Vec::<String>::new());
    assert_eq!(d("is_installments=true".into()).await, Vec::<String>::new());
    // Search: case-insensitive, accents kept, notes included, wildcards literal.
    assert_eq!(d("search=PÃO".into()).await, ["Padaria Pão Quente"]);
    assert_eq!(d("search=acme".into()).await, ["Salário"]);
    assert_eq!(d("search=50%25_".into()).await, ["Aluguel 50%_off"]);
    assert_eq!(d("search=%25".into()).await, ["Aluguel 50%_off"]);
    assert_eq!(d("search=_".into()).await, ["Aluguel 50%_off"]);
    // Combined filters intersect.
    assert_eq!(
        d(format!(
            "account_id={}&type=DEBIT&tag_id={}&status=POSTED",
            f.bank, f.tag_b
        ))
        .await,
        ["Sushi"]
    );
    assert_eq!(
        d(format!("account_id={}&no_tags=true&type=CREDIT", f.bank)).await,
        ["Salário"]
    );
    // The window bounds are inclusive.
    let june = f
        .app
        .get("/v1/transactions?from=2026-06-02&to=2026-06-06")
        .await;
    assert_eq!(june.ok(200)["data"].as_array().unwrap().len(), 3);
    // The cashflow view (the default) shows the card's bill in place of
    // its rows: the June 7 purchase is in the bill due July 10.
    let cashflow = f
        .app
        .get(&format!("/v1/transactions?{WINDOW}&view=cashflow"))
        .await;
    let rows = cashflow.ok(200)["data"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 6);
    let bill = rows
        .iter()
        .find(|r| r["description"] == "Fatura Card")
        .expect("bill entry");
    assert_eq!(bill["date"], "2026-07-10");
    assert_eq!(bill["amount"], 99.9);
    assert_eq!(bill["projected"], true);
    assert_eq!(bill["bill_to_account_id"], f.card.as_str());
    assert!(rows.iter().all(|r| r["description"] != "Livraria"));
    let default = f.app.get(&format!("/v1/transactions?{WINDOW}")).await;
    assert_eq!(default.ok(200)["data"].as_array().unwrap(), &rows);
}

async fn hidden_rows_are_listed_only_on_request(backend: Backend) {
    let app = TestApp::start(backend).await;
    let response = app
        .post(
            "/v1/accounts",
            json!({"type": "BANK", "initial_balance": 100}),
        )
        .await;
    let account = response.ok(201)["id"].as_str().unwrap().to_owned();
    let opening = response.body["initial_balance_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let visible = app
        .tx(json!({"account_id": account, "type": "DEBIT", "amount": 5, "description": "Café"}))
        .await;
    let q = "from=2026-11-01&to=2026-11-30";
    let shown = app.get(&format!("/v1/transactions?{q}")).await;
    assert_eq!(
        ids(shown.ok(200)["data"].as_array().unwrap()),
        [visible["id"].as_str().unwrap()]
    );
    let hidden = app.get(&format!("/v1/transactions?{q}&hidden=true")).await;
    assert_eq!(
        ids(hidden.ok(200)["data"].as_array().unwrap()),
        [opening.as_str()]
    );
    let explicit = app.get(&format!("/v1/transactions?{q}&hidden=false")).await;
    assert_eq!(explicit.ok(200)["data"], shown.body["data"]);
    // Hiding a row moves it between the two lists.
    let id = visible["id"].as_str().unwrap();
    app.patch(
        &format!("/v1/transactions/{id}"),
        json!({"hide_from_results": true}),
    )
    .await
    .ok(200);
    let hidden = app.get(&format!("/v1/transactions?{q}&hidden=true")).await;
    assert_eq!(hidden.ok(200)["data"].as_array().unwrap().len(), 2);
}

async fn bad_queries_name_the_parameter(backend: Backend) {
    let app = TestApp::start(backend).await;
    let cases: &[(&str, &[&str])] = &[
        ("", &["from", "to"]),
        ("from=2026-01-01", &["to"]),
        ("from=2026-1-1&to=2026-01-31", &["from"]),
        ("from=2026-02-01&to=2026-01-31", &["to"]),
        ("from=2026-01-01&to=2027-01-02", &["to"]),
        ("from=2024-01-01&to=2025-01-01", &["to"]),
        ("from=2026-01-01&to=2026-01-31&limit=0", &["limit"]),
        ("from=2026-01-01&to=2026-01-31&limit=101", &["limit"]),
        ("from=2026-01-01&to=2026-01-31&limit=ten", &["limit"]),
        ("from=2026-01-01&to=2026-01-31&cursor=garbage", &["cursor"]),
        ("from=2026-01-01&to=2026-01-31&status=DONE", &["status"]),
        ("from=2026-01-01&to=2026-01-31&type=debit", &["type"]),
        ("from=2026-01-01&to=2026-01-31&view=table", &["view"]),
        (
            "from=2026-01-01&to=2026-01-31&account_id=nope",
            &["account_id"],
        ),
        (
            "from=2026-01-01&to=2026-01-31&category_id=1,2",
            &["category_id"],
        ),
        ("from=2026-01-01&to=2026-01-31&tag_id=", &["tag_id"]),
        ("from=2026-01-01&to=2026-01-31&sub_type=CARD", &["sub_type"]),
        ("from=2026-01-01&to=2026-01-31&hidden=yes", &["hidden"]),
        ("from=2026-01-01&to=2026-01-31&no_tags=1", &["no_tags"]),
        ("from=2026-01-01&to=2026-01-31&bogus=1", &["bogus"]),
        ("from=2026-01-01&from=2026-01-02&to=2026-01-31", &["from"]),
        ("from=2026-01-01&to=2026-01-31&search=a%00b", &["search"]),
    ];
    for (query, fields) in cases {
        let response = app.get(&format!("/v1/transactions?{query}")).await;
        assert_eq!(response.status, 400, "query {query:?}: {}", response.body);
        response.invalid(fields);
    }
    let too_many = vec!["00000000-0000-4000-8000-000000000000"; 101].join(",");
    app.get(&format!(
        "/v1/transactions?from=2026-01-01&to=2026-01-31&account_id={too_many}"
    ))
    .await
    .invalid(&["account_id"]);
    // 366 days counting both ends is the largest window, also in leap years.
    app.get("/v1/transactions?from=2024-01-01&to=2024-12-31")
        .await
        .ok(200);
    app.get("/v1/transactions?from=2026-01-01&to=2027-01-01")
        .await
        .ok(200);
}

async fn older_projections_follow_a_full_page_of_stored_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Main").await;
    // A rule whose three occurrences are all older than the stored rows.
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 30, "description": "Gym",
                   "date": "2026-01-15", "recurrence": {"frequency": "MONTHLY", "count": 3}}),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.body);
    for day in ["2026-11-20", "2026-11-21"] {
        app.tx(json!({"account_id": account, "type": "DEBIT", "amount": 1, "description": "Coffee", "date": day}))
            .await;
    }
    let all = app.all_pages(WINDOW, 2).await;
    let dates: Vec<&str> = all.iter().map(|r| r["date"].as_str().unwrap()).collect();
    assert_eq!(
        dates,
        [
            "2026-11-21",
            "2026-11-20",
            "2026-03-15",
            "2026-02-15",
            "2026-01-15"
        ]
    );
}

/// A page reads only the stored rows that make it, knowing the days of
/// the projected entries and bills it shares: stored rows, a weekly
/// rule's projections, a card purchase's installments and (cashflow) the
/// card's bills, on days they share and days they do not, walked at every
/// page size, list as one page holding them all does, each entry once.
async fn pages_of_stored_and_projected_entries_cover_each_once(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    let rule = app
        .post(
            "/v1/transactions",
            json!({"account_id": bank, "type": "DEBIT", "amount": 30, "description": "Gym",
                   "date": "2026-09-07", "recurrence": {"frequency": "WEEKLY", "count": 12}}),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.body);
    let plan = app
        .post(
            "/v1/transactions",
            json!({"account_id": card, "type": "DEBIT", "amount": 90, "description": "Fone",
                   "date": "2026-09-14", "installments": {"count": 4}}),
        )
        .await;
    assert_eq!(plan.status, 201, "{}", plan.body);
    // Stored rows on the rule's Mondays and between them, two on some days.
    for (i, day) in [
        "2026-09-07",
        "2026-09-09",
        "2026-09-14",
        "2026-09-14",
        "2026-09-30",
        "2026-10-05",
        "2026-10-06",
        "2026-10-06",
        "2026-10-20",
        "2026-11-16",
    ]
    .into_iter()
    .enumerate()
    {
        let account = if i % 3 == 2 { &card } else { &bank };
        app.tx(json!({"account_id": account, "type": "DEBIT", "amount": 1 + i, "description": format!("row {i}"), "date": day}))
            .await;
    }
    let window = "from=2026-09-01&to=2026-12-31";
    for view in ["ledger", "cashflow"] {
        let query = format!("view={view}&{window}");
        let whole = app.all_pages(&query, 100).await;
        let projected = whole
            .iter()
            .filter(|e| e["projected"] == json!(true))
            .count();
        let stored = whole.len() - projected;
        assert!(
            projected >= 10 && stored >= 7,
            "{view}: {projected} projected, {stored} stored"
        );
        for limit in 1..=whole.len() + 1 {
            let paged = app.all_pages(&query, limit).await;
            assert_eq!(ids(&paged), ids(&whole), "{view}, limit {limit}");
        }
    }
}

/// A list page reads its rows many at a time, on its own path (on SQLite
/// column by column on the calling thread, on PostgreSQL as one JSON
/// value); each row must still read as reading it by id gives it,
/// whatever it holds (tags in title order, a category, notes with quotes
/// and control characters, a card purchase in installments, a transfer's
/// legs (hidden rows), pending and credit rows), in both views.
async fn listed_rows_read_as_they_do_by_id(backend: Backend) {
    let app = TestApp::start(backend).await;
    let (bank, card) = app.bank_and_card().await;
    let other = app.bank("Poupança \"extra\"").await;
    let zebra = app.tag("Zebra \"z\"", "#000000").await;
    let apple = app.tag("apple\tpie", "#ffffff").await;
    let food = app.category("Comida").await;
    let bodies = [
        json!({"account_id": bank, "type": "DEBIT", "amount": 12.34, "date": "2026-11-20",
               "description": "Feira \"livre\"\n\u{1} ✓", "notes": "nota\\com\tbarra",
               "category_id": food, "tag_ids": [zebra, apple]}),
        json!({"account_id": bank, "type": "CREDIT", "amount": 1000, "date": "2026-11-20",
               "description": "Salário", "status": "PENDING"}),
        json!({"account_id": card, "type": "DEBIT", "amount": 300.01, "date": "2026-11-18",
               "description": "Geladeira", "installments": {"count": 3}}),
    ];
    for body in bodies {
        app.post("/v1/transactions", body).await.ok(201);
    }
    app.post(
        "/v1/transfers",
        json!({"from_account_id": bank, "to_account_id": other, "amount": 250.1,
               "date": "2026-11-19", "description": "Guardar"}),
    )
    .await
    .ok(201);
    let mut seen = 0;
    for query in [
        "view=ledger&from=2026-11-01&to=2027-03-31",
        "view=cashflow&from=2026-11-01&to=2027-03-31",
        "view=ledger&from=2026-11-01&to=2027-03-31&hidden=true",
    ] {
        for item in app.all_pages(query, 2).await {
            if item["projected"] == json!(true) {
                continue;
            }
            let id = item["id"].as_str().expect("id");
            let read = app.get(&format!("/v1/transactions/{id}")).await;
            assert_eq!(item, read.ok(200)["transaction"], "{query}: {id}");
            seen += 1;
        }
    }
    // Ledger: the three rows (the card purchase's first installment among
    // them); cashflow: less the card's; hidden: the transfer's two legs
    // and the account's opening balance.
    assert_eq!(seen, 3 + 2 + 3);
}

on_both_backends!(
    listed_rows_read_as_they_do_by_id,
    pages_of_stored_and_projected_entries_cover_each_once,
    older_projections_follow_a_full_page_of_stored_rows,
    pages_cover_every_row_once_in_order,
    pages_hold_when_rows_change_between_requests,
    filters_select_the_right_rows,
    hidden_rows_are_listed_only_on_request,
    bad_queries_name_the_parameter,
);
