//! Reports and budgets status (issue 13) rebuilt from the list endpoint:
//! on the overview's generated user (many accounts and cards, bills paid
//! and unpaid, transfers, rules and plans) with categorised and tagged
//! rows added, every figure of `/v1/reports/*` and `/v1/budgets/status`
//! equals the sums of `GET /v1/transactions` over the same entries.
//! Money is compared exactly, as integer cents.

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::on_both_backends;
use crate::overview::{
    Generated, cents, generated_user, get_exact, list, overview, pay_bills, text, windows,
};
use crate::support::{Backend, TODAY};

const ALIMENTACAO: &str = "30b679d8-1fd0-5798-9807-ef2de0278a88";
const RESTAURANTES: &str = "59d30ba9-d83c-5466-9d40-eea54f663061";
const MERCADO: &str = "ed3eb088-9c3c-517a-b01a-f1d78fb4b16d";

/// The months the reports are checked over: history, this month, ahead.
const FROM_MONTH: &str = "2026-08";
const TO_MONTH: &str = "2027-01";
const MONTHS: [&str; 6] = [
    "2026-08", "2026-09", "2026-10", "2026-11", "2026-12", "2027-01",
];

fn month_window(month: &str) -> (String, String) {
    let first = crate::overview::date(&format!("{month}-01"));
    (first.to_string(), first.last_of_month().to_string())
}

/// Every entry of `month` a list query gives.
async fn month_entries(g: &Generated, month: &str, query: &str) -> Vec<Value> {
    let (from, to) = month_window(month);
    list(&g.app, &format!("from={from}&to={to}&{query}"), 100).await
}

fn signed(entry: &Value) -> i64 {
    let amount = cents(&entry["amount"]);
    if text(entry, "type") == "CREDIT" {
        amount
    } else {
        -amount
    }
}

/// Categorised and tagged rows the generated user lacks: on a card (one
/// refunded, one in 3 installments), on a bank (PENDING ahead, two
/// tags), and a weekly rule; so every grouping has keys to compare.
async fn add_categorised(g: &Generated) -> (String, String) {
    let app = &g.app;
    let (casa, lazer) = (
        app.tag("Casa", "#112233").await,
        app.tag("Lazer", "#112233").await,
    );
    let nubank = &g.cards[0].0;
    for body in [
        json!({"account_id": nubank, "type": "DEBIT", "amount": 120.5, "description": "Jantar",
            "date": "2026-11-05", "category_id": RESTAURANTES, "tag_ids": [lazer]}),
        json!({"account_id": nubank, "type": "CREDIT", "amount": 20, "description": "Estorno jantar",
            "date": "2026-11-06", "category_id": RESTAURANTES}),
        json!({"account_id": nubank, "type": "DEBIT", "amount": 300, "description": "Panelas",
            "date": "2026-10-20", "category_id": ALIMENTACAO, "installments": {"count": 3}}),
        json!({"account_id": g.corrente, "type": "DEBIT", "amount": 300, "description": "Atacado",
            "date": "2026-10-10", "category_id": MERCADO, "tag_ids": [casa, lazer]}),
        json!({"account_id": g.corrente, "type": "DEBIT", "amount": 45.9, "description": "Feira futura",
            "date": "2026-11-27", "category_id": MERCADO}),
        json!({"account_id": g.corrente, "type": "DEBIT", "amount": 33.33, "description": "Hortifruti",
            "date": "2026-11-02", "category_id": MERCADO, "recurrence": {"frequency": "WEEKLY",
            "count": 8}, "tag_ids": [casa]}),
    ] {
        let response = app.post("/v1/transactions", body).await;
        assert_eq!(response.status, 201, "{}", response.text);
    }
    (casa, lazer)
}

async fn generated(backend: Backend) -> (Generated, [String; 2]) {
    let g = generated_user(backend).await;
    pay_bills(&g).await;
    let (casa, lazer) = add_categorised(&g).await;
    (g, [casa, lazer])
}

type Cells = BTreeMap<(String, Option<String>), (i64, i64)>;

fn add_cell(cells: &mut Cells, month: &str, key: Option<String>, entry: &Value) {
    let slot = cells.entry((month.to_owned(), key)).or_default();
    if text(entry, "type") == "DEBIT" {
        slot.0 += cents(&entry["amount"]);
    } else {
        slot.1 += cents(&entry["amount"]);
    }
}

fn report_cells(report: &Value) -> Cells {
    let mut cells = Cells::new();
    for row in report["rows"].as_array().expect("rows") {
        let key = row["key"].as_str().map(str::to_owned);
        let (debit, credit) = (cents(&row["debit"]), cents(&row["credit"]));
        assert_eq!(cents(&row["net"]), debit - credit, "{row}");
        assert!(!text(row, "title").is_empty() || key.is_some(), "{row}");
        cells.insert((text(row, "month").to_owned(), key), (debit, credit));
    }
    cells
}

/// The spending report of `query` against the list over the same months,
/// grouped by `key` (which gives every key an entry counts under).
async fn check_spending(
    g: &Generated,
    report_query: &str,
    list_query: &str,
    key: impl Fn(&Value) -> Vec<Option<String>>,
) {
    let report = get_exact(
        &g.app,
        &format!("/v1/reports/spending?from={FROM_MONTH}&to={TO_MONTH}&{report_query}"),
    )
    .await;
    let (mut expected, mut totals) = (Cells::new(), Cells::new());
    for month in MONTHS {
        for entry in month_entries(g, month, list_query).await {
            for k in key(&entry) {
                add_cell(&mut expected, month, k, &entry);
            }
            add_cell(&mut totals, month, None, &entry);
        }
    }
    assert_eq!(report_cells(&report), expected, "{report_query}");
    let reported: Cells = report["totals"]
        .as_array()
        .expect("totals")
        .iter()
        .map(|t| {
            assert_eq!(cents(&t["net"]), cents(&t["debit"]) - cents(&t["credit"]));
            (
                (text(t, "month").to_owned(), None),
                (cents(&t["debit"]), cents(&t["credit"])),
            )
        })
        .collect();
    assert_eq!(reported, totals, "totals of {report_query}");
}

fn category_of(entry: &Value) -> Vec<Option<String>> {
    vec![entry["category_id"].as_str().map(str::to_owned)]
}

async fn spending_equals_the_list(backend: Backend) {
    let (g, [casa, lazer]) = generated(backend).await;
    for view in ["ledger", "cashflow"] {
        check_spending(
            &g,
            &format!("view={view}"),
            &format!("view={view}"),
            category_of,
        )
        .await;
        check_spending(
            &g,
            &format!("view={view}&group_by=account"),
            &format!("view={view}"),
            |e| vec![Some(text(e, "account_id").to_owned())],
        )
        .await;
        check_spending(
            &g,
            &format!("view={view}&group_by=tag"),
            &format!("view={view}"),
            |e| {
                let tags = e["tags"].as_array().expect("tags");
                if tags.is_empty() {
                    vec![None]
                } else {
                    tags.iter()
                        .map(|t| Some(text(t, "id").to_owned()))
                        .collect()
                }
            },
        )
        .await;
    }
    // Filters are the list's.
    let filters = [
        format!("category_id={ALIMENTACAO}"),
        format!("category_id={ALIMENTACAO}&include_subcategories=false"),
        format!("tag_id={casa},{lazer}"),
        format!("account_id={},{}", g.corrente, g.cards[0].0),
    ];
    for filter in &filters {
        check_spending(
            &g,
            &format!("view=ledger&{filter}"),
            &format!("view=ledger&{filter}"),
            category_of,
        )
        .await;
    }
    // Rolled up, a subcategory's entries count under its parent.
    check_spending(&g, "view=ledger&rollup=true", "view=ledger", |e| {
        let category = e["category_id"].as_str();
        vec![category.map(|c| if c == RESTAURANTES { ALIMENTACAO } else { c }.to_owned())]
    })
    .await;
    // The card purchase in installments counts one part in each month.
    let report = get_exact(
        &g.app,
        &format!("/v1/reports/spending?from=2026-10&to=2026-12&view=ledger&category_id={ALIMENTACAO}&include_subcategories=false"),
    )
    .await;
    let parts: Vec<i64> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| cents(&r["debit"]))
        .collect();
    assert_eq!(parts, [10_000, 10_000, 10_000]);
}

/// Balances at the end of `day` rebuilt from the list: POSTED rows (hidden
/// ones too) of the accounts that count in totals, dated up to it.
async fn posted_until(g: &Generated, accounts: &[&String], day: &str) -> i64 {
    let ids: Vec<&str> = accounts.iter().map(|a| a.as_str()).collect();
    let mut total = 0;
    for hidden in ["false", "true"] {
        for (from, to) in windows("2025-01-01", day) {
            let query = format!(
                "from={from}&to={to}&view=ledger&status=POSTED&hidden={hidden}&account_id={}",
                ids.join(",")
            );
            total += list(&g.app, &query, 100)
                .await
                .iter()
                .map(signed)
                .sum::<i64>();
        }
    }
    total
}

async fn cashflow_and_net_worth_equal_the_list(backend: Backend) {
    let (g, _) = generated(backend).await;
    let report = get_exact(
        &g.app,
        &format!("/v1/reports/cashflow?from={FROM_MONTH}&to={TO_MONTH}"),
    )
    .await;
    // The accounts that count in totals (as in the overview): Corrente,
    // Reserva, Antiga; cards Nubank, Inter, XP, Velho.
    let reserva = g.cards[1].1.clone().unwrap();
    let banks = [&g.corrente, &reserva, &g.antiga];
    let cards: Vec<&String> = [0, 1, 2, 5].iter().map(|&i| &g.cards[i].0).collect();
    let cards = &cards;
    // A bill entry counts when its card counts too (the overview's rule).
    let counted = |e: &Value| {
        let card_counts = || {
            let card = text(e, "bill_to_account_id");
            cards.iter().any(|c| c.as_str() == card)
        };
        // A card that pays its own bills (XP) shows them on itself.
        let account = text(e, "account_id");
        banks
            .iter()
            .chain(cards.iter())
            .any(|a| a.as_str() == account)
            && (!text(e, "id").starts_with("mocked-bill:") || card_counts())
    };
    let months = report["months"].as_array().expect("months");
    assert_eq!(months.len(), MONTHS.len());
    for (row, month) in months.iter().zip(MONTHS) {
        assert_eq!(text(row, "month"), month);
        let entries = month_entries(&g, month, "view=cashflow").await;
        let sum = |kind: &str| -> i64 {
            entries
                .iter()
                .filter(|e| text(e, "type") == kind && counted(e))
                .map(|e| cents(&e["amount"]))
                .sum()
        };
        let (receitas, despesas) = (sum("CREDIT"), sum("DEBIT"));
        assert_eq!(cents(&row["receitas"]), receitas, "{month}");
        assert_eq!(cents(&row["despesas"]), despesas, "{month}");
        assert_eq!(cents(&row["resultado"]), receitas - despesas, "{month}");
    }
    // This month is the overview's month.
    let o = overview(&g.app).await;
    let now = months.iter().find(|m| m["month"] == "2026-11").unwrap();
    for field in ["receitas", "despesas", "resultado"] {
        assert_eq!(cents(&now[field]), cents(&o["month"][field]), "{field}");
    }

    // Net worth: past points are the POSTED history of the accounts that
    // count; today's bank balance is the overview's.
    let series = get_exact(
        &g.app,
        "/v1/reports/net-worth?from=2026-09-01&to=2027-02-28&interval=month",
    )
    .await;
    let points = series["points"].as_array().expect("points");
    assert_eq!(points.len(), 6);
    for point in points.iter().take(2) {
        let day = text(point, "date");
        let bank = posted_until(&g, &banks, day).await;
        let debt = -posted_until(&g, cards, day).await;
        assert_eq!(cents(&point["bank_balance"]), bank, "{day}");
        assert_eq!(cents(&point["card_debt"]), debt, "{day}");
        assert_eq!(cents(&point["net_worth"]), bank - debt, "{day}");
    }
    // Cashflow's month-end balances are the series' bank balances.
    for point in points {
        let month = &text(point, "date")[..7];
        if let Some(row) = months.iter().find(|m| m["month"] == month) {
            assert_eq!(row["bank_balance"], point["bank_balance"], "{month}");
        }
    }
    let daily = get_exact(
        &g.app,
        &format!("/v1/reports/net-worth?from=2026-01-01&to={TODAY}&interval=day"),
    )
    .await;
    let days = daily["points"].as_array().unwrap();
    assert_eq!(text(days.last().unwrap(), "date"), TODAY);
    assert_eq!(
        cents(&days.last().unwrap()["bank_balance"]),
        cents(&o["bank_balance"])
    );
    // Ahead of today, what is to come moves the balances: the month-end
    // point after today differs from today's by the cashflow entries not
    // yet POSTED between them, on the banks that count.
    let month_end = points.iter().find(|p| p["date"] == "2026-11-30").unwrap();
    let mut ahead = 0;
    for entry in list(&g.app, "from=2026-11-23&to=2026-11-30&view=cashflow", 100).await {
        let on_bank = banks
            .iter()
            .any(|b| b.as_str() == text(&entry, "account_id"));
        if text(&entry, "status") != "POSTED" && on_bank && counted(&entry) {
            ahead += signed(&entry);
        }
    }
    // Hidden PENDING legs (a transfer ahead) move money too.
    for entry in list(
        &g.app,
        "from=2026-11-23&to=2026-11-30&view=ledger&hidden=true&status=PENDING",
        100,
    )
    .await
    {
        if banks
            .iter()
            .any(|b| b.as_str() == text(&entry, "account_id"))
        {
            ahead += signed(&entry);
        }
    }
    assert_eq!(
        cents(&month_end["bank_balance"]),
        cents(&o["bank_balance"]) + ahead
    );
}

/// Whether an entry of a list counts as spent in a budget: a POSTED row,
/// or a projected entry dated before today (it has happened, stored or
/// not); the rest is still to come (`committed`).
fn happened(entry: &Value) -> bool {
    entry["status"] == "POSTED"
        || (entry["projected"] == true && entry["date"].as_str().is_some_and(|d| d < TODAY))
}

async fn budgets_status_equals_the_list(backend: Backend) {
    let (g, _) = generated(backend).await;
    let app = &g.app;
    let mut budgets = HashMap::new();
    for (category, amount, rollover) in [
        (ALIMENTACAO, 500, true),
        (MERCADO, 200, false),
        ("8af325d4-0dc3-5e04-8d45-879337802f65", 100, false),
    ] {
        let body = json!({"category_id": category, "amount": amount, "rollover": rollover,
            "starts_on": "2026-10"});
        let created = app.post("/v1/budgets", body).await;
        budgets.insert(text(created.ok(201), "id").to_owned(), category);
    }
    let categories = get_exact(app, "/v1/categories").await;
    let children = |root: &str| -> HashSet<String> {
        let mut set: HashSet<String> = [root.to_owned()].into();
        for c in categories["data"].as_array().unwrap() {
            if c["parent_id"] == root {
                set.insert(text(c, "id").to_owned());
            }
        }
        set
    };
    let mut carried: HashMap<String, i64> = HashMap::new();
    for month in ["2026-10", "2026-11", "2026-12"] {
        let status = get_exact(app, &format!("/v1/budgets/status?month={month}")).await;
        assert_eq!(status["month"], month);
        let entries = month_entries(&g, month, "view=ledger").await;
        // Transfers and bill payments never count.
        let counted: Vec<&Value> = entries
            .iter()
            .filter(|e| e["transfer_group_id"].is_null())
            .collect();
        let mut covered = HashSet::new();
        let rows = status["budgets"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        for row in rows {
            let category = budgets[text(row, "budget_id")];
            let set = children(category);
            covered.extend(set.clone());
            let in_set: Vec<&&Value> = counted
                .iter()
                .filter(|e| e["category_id"].as_str().is_some_and(|c| set.contains(c)))
                .collect();
            let spent: i64 = in_set
                .iter()
                .filter(|e| happened(e))
                .map(|e| -signed(e))
                .sum();
            let committed: i64 = in_set
                .iter()
                .filter(|e| !happened(e))
                .map(|e| -signed(e))
                .sum();
            assert_eq!(cents(&row["spent"]), spent, "{month} {category}");
            assert_eq!(cents(&row["committed"]), committed, "{month} {category}");
            let rollover_in = carried.get(category).copied().unwrap_or(0);
            assert_eq!(
                cents(&row["rollover_in"]),
                rollover_in,
                "{month} {category}"
            );
            let available = cents(&row["limit"]) + rollover_in;
            assert_eq!(cents(&row["available"]), available);
            let remaining = available - spent - committed;
            assert_eq!(cents(&row["remaining"]), remaining);
            if category == ALIMENTACAO {
                carried.insert(category.to_owned(), remaining);
            }
            let level = if spent + committed > available {
                "over"
            } else if (spent + committed) * 100 >= available * 80 {
                "warning"
            } else {
                "ok"
            };
            assert_eq!(row["status"], level, "{month} {category}: {row}");
        }
        // Outside the budgets, category by category (none as one), a
        // category whose credits exceed its debits counts as nothing.
        let mut outside: HashMap<(Option<&str>, bool), i64> = HashMap::new();
        for e in &counted {
            let category = e["category_id"].as_str();
            if category.is_none_or(|c| !covered.contains(c)) {
                *outside.entry((category, happened(e))).or_default() -= signed(e);
            }
        }
        let floor_sum = |posted: bool| -> i64 {
            outside
                .iter()
                .filter(|((_, p), _)| *p == posted)
                .map(|(_, v)| (*v).max(0))
                .sum()
        };
        assert_eq!(
            cents(&status["unbudgeted"]["spent"]),
            floor_sum(true),
            "{month}"
        );
        assert_eq!(
            cents(&status["unbudgeted"]["committed"]),
            floor_sum(false),
            "{month}"
        );
        let total: i64 = rows.iter().map(|r| cents(&r["spent"])).sum();
        assert_eq!(cents(&status["totals"]["spent"]), total);
    }
    // The current month's budgets in the overview.
    let o = overview(app).await;
    let now = get_exact(app, "/v1/budgets/status").await;
    let rows = now["budgets"].as_array().unwrap();
    let count = |level: &str| rows.iter().filter(|r| r["status"] == level).count();
    assert_eq!(now["month"], "2026-11");
    assert_eq!(o["budgets"]["count"], json!(rows.len().to_string()));
    assert_eq!(o["budgets"]["over"], json!(count("over").to_string()));
    assert_eq!(o["budgets"]["warning"], json!(count("warning").to_string()));
}

async fn bad_report_queries_name_the_field(backend: Backend) {
    let app = crate::support::TestApp::start(backend).await;
    let spending = "/v1/reports/spending";
    app.get(spending).await.invalid(&["from", "to"]);
    app.get(&format!("{spending}?from=2026-01&to=2029-01"))
        .await
        .invalid(&["to"]);
    app.get(&format!("{spending}?from=2026-05&to=2026-04"))
        .await
        .invalid(&["to"]);
    app.get(&format!(
        "{spending}?from=2026-01&to=2026-02&group_by=x&view=y&rollup=1"
    ))
    .await
    .invalid(&["group_by", "view", "rollup"]);
    app.get(&format!(
        "{spending}?from=2026-01&to=2026-02&group_by=tag&rollup=true"
    ))
    .await
    .invalid(&["rollup"]);
    app.get(&format!("{spending}?from=2026-01&to=2026-02&account_id=x"))
        .await
        .invalid(&["account_id"]);
    // Another user's ids are a validation error on their field.
    let (_, theirs) = app.new_user().await;
    let call = |path: &str, body: Value| {
        let (app, theirs) = (&app, &theirs);
        let path = path.to_owned();
        async move {
            let response = app
                .call(axum::http::Method::POST, &path, Some(theirs), Some(body))
                .await;
            text(response.ok(201), "id").to_owned()
        }
    };
    let account = call("/v1/accounts", json!({"type": "BANK", "title": "Deles"})).await;
    let category = call("/v1/categories", json!({"title": "Deles"})).await;
    let tag = call(
        "/v1/tags",
        json!({"title": "Deles", "color_hex": "#000000"}),
    )
    .await;
    app.get(&format!(
        "{spending}?from=2026-01&to=2026-02&account_id={account}&category_id={category}&tag_id={tag}"
    ))
    .await
    .invalid(&["account_id", "category_id", "tag_id"]);
    app.get("/v1/reports/cashflow?from=2026-01")
        .await
        .invalid(&["to"]);
    let net_worth = "/v1/reports/net-worth";
    app.get(&format!(
        "{net_worth}?from=2024-01-01&to=2025-12-31&interval=day"
    ))
    .await
    .invalid(&["to"]);
    app.get(&format!(
        "{net_worth}?from=2024-01-01&to=2025-12-31&interval=year"
    ))
    .await
    .invalid(&["interval"]);
    app.get(&format!("{net_worth}?to=2025-13-01"))
        .await
        .invalid(&["from", "to"]);
    // A user without data gets zeros, not errors.
    let empty = get_exact(&app, &format!("{net_worth}?from=2026-01-01&to=2026-12-31")).await;
    let points = empty["points"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    assert!(points.iter().all(|p| cents(&p["net_worth"]) == 0));
    let empty = get_exact(&app, &format!("{spending}?from=2026-01&to=2026-12")).await;
    assert_eq!(empty["rows"], json!([]));
}

on_both_backends!(
    bad_report_queries_name_the_field,
    spending_equals_the_list,
    cashflow_and_net_worth_equal_the_list,
    budgets_status_equals_the_list,
);
