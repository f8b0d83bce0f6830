//! The ends of the supported calendar, 0001-01-01 and 9999-12-31: every
//! request that walks days, months, cycles, occurrences or installments
//! answers promptly and correctly there, and a series whose entries would
//! fall outside the calendar is refused when it is created or moved.
//!
//! Each request near an end runs on a runtime of its own and is awaited
//! under `tokio::time::timeout`: a loop that stops progressing then fails
//! the test instead of hanging it (the stuck thread is left behind).

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use cofre_api::ApiConfig;

use crate::on_both_backends;
use crate::support::{Backend, Response, TestApp};

/// Far more than any of these requests takes, even unoptimised on a busy
/// machine; a request that loops forever never gets there.
const PROMPT: Duration = Duration::from_secs(20);

/// Where the requests run: a handler that spins holds a worker of this
/// runtime, not the test's own thread (so the timeout still fires), and
/// this runtime is never dropped (dropping one waits for its workers).
/// Database connections opened here stay usable: it outlives every app.
fn requests() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .thread_name("bounds-requests")
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// Sends a request on [`requests`] and waits at most [`PROMPT`] for it.
async fn prompt(app: &Arc<TestApp>, method: Method, path: &str, body: Option<Value>) -> Response {
    let (app, owned) = (Arc::clone(app), path.to_owned());
    let task =
        requests().spawn(async move { app.call(method, &owned, Some(&app.key), body).await });
    match tokio::time::timeout(PROMPT, task).await {
        Ok(response) => response.expect("the request task ended"),
        Err(_) => panic!("{path} did not answer within {PROMPT:?}"),
    }
}

async fn get(app: &Arc<TestApp>, path: &str) -> Response {
    prompt(app, Method::GET, path, None).await
}

async fn post(app: &Arc<TestApp>, path: &str, body: Value) -> Response {
    prompt(app, Method::POST, path, Some(body)).await
}

/// Every entry of a list query, page by page, each page under the timeout.
async fn all_pages(app: &Arc<TestApp>, query: &str, limit: usize) -> Vec<Value> {
    crate::support::pages_of(query, limit, |url| async move { get(app, &url).await }).await
}

fn cents(value: &Value) -> i64 {
    // Amounts are JSON numbers with two decimals; round to whole cents.
    (value.as_f64().expect("amount") * 100.0).round() as i64
}

fn dates(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|r| r["date"].as_str().unwrap()).collect()
}

struct Wallet {
    app: Arc<TestApp>,
    bank: String,
    /// Due 10, so it closes on the 3rd, paid from the bank.
    card: String,
    /// Due 5, closing on the 29th of the month before.
    late: String,
}

async fn wallet_at(backend: Backend, now: &str) -> Wallet {
    let app = TestApp::start_at(backend, ApiConfig::default(), now).await;
    let bank = app.bank("Conta").await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Nubank", "credit_due_day": 10,
            "credit_limit": 5000, "pay_bill_from_account_id": bank}),
        )
        .await;
    let late = app
        .account(
            json!({"type": "CREDIT", "title": "Itaú", "credit_due_day": 5,
            "credit_close_day": 29, "credit_limit": 5000}),
        )
        .await;
    Wallet {
        app: Arc::new(app),
        bank,
        card,
        late,
    }
}

async fn wallet(backend: Backend) -> Wallet {
    wallet_at(backend, crate::support::NOW).await
}

async fn spend(app: &Arc<TestApp>, account: &str, date: &str, amount: i64) {
    post(
        app,
        "/v1/transactions",
        json!({"account_id": account, "type": "DEBIT", "amount": amount,
            "description": "Compra", "date": date}),
    )
    .await
    .ok(201);
}

async fn bills(app: &Arc<TestApp>, card: &str, from: &str, to: &str) -> Vec<Value> {
    let response = get(app, &format!("/v1/cards/{card}/bills?from={from}&to={to}")).await;
    response.ok(200)["bills"].as_array().expect("bills").clone()
}

fn cycle(bill: &Value) -> (&str, &str, &str, i64) {
    (
        bill["cycle_start_date"].as_str().unwrap(),
        bill["close_date"].as_str().unwrap(),
        bill["due_date"].as_str().unwrap(),
        cents(&bill["amount"]),
    )
}

/// The requests that froze the server: the bills of a window in year
/// 9999, and the cashflow list there, with a card present.
async fn bills_and_cashflow_answer_in_year_9999(backend: Backend) {
    let w = wallet(backend).await;
    spend(&w.app, &w.card, "9999-11-20", 10).await;
    // After the last close of the calendar: still in the last bill.
    spend(&w.app, &w.card, "9999-12-20", 20).await;
    spend(&w.app, &w.card, "9999-12-31", 30).await;
    spend(&w.app, &w.late, "9999-12-31", 40).await;

    let list = bills(&w.app, &w.card, "9999-01-01", "9999-12-31").await;
    assert_eq!(list.len(), 12, "{list:?}");
    assert_eq!(
        cycle(&list[10]),
        ("9999-10-04", "9999-11-03", "9999-11-10", 0)
    );
    // The bill due in December 9999 is the last one: it takes every day
    // to the end of the calendar.
    assert_eq!(
        cycle(&list[11]),
        ("9999-11-04", "9999-12-31", "9999-12-10", 6_000)
    );
    let end = bills(&w.app, &w.card, "9999-12-31", "9999-12-31").await;
    assert!(end.is_empty(), "{end:?}");
    let late = bills(&w.app, &w.late, "9999-12-01", "9999-12-31").await;
    assert_eq!(
        late.iter().map(cycle).collect::<Vec<_>>(),
        [("9999-10-30", "9999-12-31", "9999-12-05", 4_000)]
    );

    // The default (cashflow) view shows the card's bill on the bank.
    let body = get(&w.app, "/v1/transactions?from=9999-01-01&to=9999-12-31").await;
    let data = body.ok(200)["data"].as_array().unwrap().clone();
    let bill = data
        .iter()
        .find(|e| e["bill_to_account_id"] == w.card)
        .unwrap_or_else(|| panic!("no bill entry: {data:?}"));
    assert_eq!(bill["date"], "9999-12-10");
    assert_eq!(bill["account_id"], w.bank);
    assert_eq!(cents(&bill["amount"]), 6_000);
    for window in [
        "from=9999-12-31&to=9999-12-31",
        "from=9998-12-31&to=9999-12-31",
        "from=9999-12-31&to=9999-12-31&view=ledger",
    ] {
        get(&w.app, &format!("/v1/transactions?{window}"))
            .await
            .ok(200);
    }
    let used = get(&w.app, &format!("/v1/cards/{}/used-limit", w.card)).await;
    assert_eq!(cents(&used.ok(200)["used_limit"]), 0, "no bill has started");
}

/// The other end: windows starting on 0001-01-01, with a card whose first
/// cycle would begin before the calendar does.
async fn bills_and_cashflow_answer_in_year_1(backend: Backend) {
    let w = wallet(backend).await;
    spend(&w.app, &w.card, "0001-01-01", 10).await;
    spend(&w.app, &w.late, "0001-01-01", 20).await;
    spend(&w.app, &w.bank, "0001-01-01", 30).await;

    let list = bills(&w.app, &w.card, "0001-01-01", "0001-12-31").await;
    assert_eq!(list.len(), 12);
    assert_eq!(
        cycle(&list[0]),
        ("0001-01-01", "0001-01-03", "0001-01-10", 1_000)
    );
    // Due 5, closing on the 29th of the month before: the bill due in
    // January of year 1 would close in year 0, before the calendar; the
    // first bill is February's, from the first day.
    let late = bills(&w.app, &w.late, "0001-01-01", "0001-03-31").await;
    assert_eq!(
        late.iter().map(cycle).collect::<Vec<_>>(),
        [
            ("0001-01-01", "0001-01-29", "0001-02-05", 2_000),
            ("0001-01-30", "0001-02-28", "0001-03-05", 0)
        ]
    );
    let first = get(
        &w.app,
        "/v1/transactions?from=0001-01-01&to=0001-01-01&view=ledger",
    )
    .await;
    let data = first.ok(200)["data"].as_array().unwrap().clone();
    assert_eq!(dates(&data), ["0001-01-01"; 3]);
    let body = get(&w.app, "/v1/transactions?from=0001-01-01&to=0001-12-31").await;
    let data = body.ok(200)["data"].as_array().unwrap().clone();
    let bill = data
        .iter()
        .find(|e| e["bill_to_account_id"] == w.card)
        .unwrap_or_else(|| panic!("no bill entry: {data:?}"));
    assert_eq!(bill["date"], "0001-01-10");
    assert_eq!(cents(&bill["amount"]), 1_000);
    // A bill that lies wholly before the calendar names nothing.
    let gone = get(
        &w.app,
        &format!("/v1/transactions/mocked-bill:{}:000101", w.late),
    )
    .await;
    gone.problem(404, "projection_not_found");
    // Year 0 is outside the calendar.
    get(&w.app, "/v1/transactions?from=0000-12-31&to=0001-01-01")
        .await
        .invalid(&["from"]);
}

/// The overview, with today on the last days and on the first day of the
/// calendar (a timestamp reaches no further than 9999-12-30 in UTC-3).
async fn overview_answers_on_the_last_and_first_day(backend: Backend) {
    let w = wallet_at(backend.clone(), "9999-12-30T21:00:00Z").await;
    spend(&w.app, &w.card, "9999-12-20", 20).await;
    spend(&w.app, &w.card, "9999-11-01", 10).await;
    let body = get(&w.app, "/v1/overview").await;
    let o = body.ok(200);
    // November's bill (10.00) is overdue; December's (20.00) is still open.
    assert_eq!(cents(&o["card_debt"]), 3_000, "{o}");
    assert_eq!(cents(&o["open_bills_total"]), 3_000, "{o}");
    let used = get(&w.app, &format!("/v1/cards/{}/used-limit", w.card)).await;
    assert_eq!(cents(&used.ok(200)["used_limit"]), 3_000);

    let w = wallet_at(backend, "0001-01-01T15:00:00Z").await;
    spend(&w.app, &w.card, "0001-01-01", 10).await;
    let body = get(&w.app, "/v1/overview").await;
    let o = body.ok(200);
    assert_eq!(cents(&o["card_debt"]), 1_000, "{o}");
    assert_eq!(o["next_bills"][0]["due_date"], "0001-01-10", "{o}");
}

/// Every entry of the ledger in a window, following the cursor.
async fn ledger(app: &Arc<TestApp>, window: &str) -> Vec<Value> {
    all_pages(app, &format!("view=ledger&{window}"), 100).await
}

/// An installment purchase (or a rule) whose entries would fall after
/// 9999-12-31 is refused at creation, naming the field, and nothing is
/// stored; what fits is listed whole.
async fn series_past_the_calendar_are_refused(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app.bank("Conta").await;
    let year = "from=9999-01-01&to=9999-12-31";
    let purchase = |count: u32| {
        json!({"account_id": bank, "type": "DEBIT", "amount": 1200, "description": "TV",
            "date": "9999-06-15", "installments": {"count": count}})
    };
    let refused = post(&app, "/v1/transactions", purchase(12)).await;
    refused.invalid(&["installments.count"]);
    let message = refused.body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("at most 7"), "{message}");
    assert_eq!(
        ledger(&app, year).await,
        Vec::<Value>::new(),
        "nothing stored"
    );

    post(&app, "/v1/transactions", purchase(7)).await.ok(201);
    let listed = ledger(&app, year).await;
    assert_eq!(listed.len(), 7);
    assert_eq!(
        listed.iter().map(|e| cents(&e["amount"])).sum::<i64>(),
        120_000
    );
    assert_eq!(listed[0]["date"], "9999-12-15");

    let rule = |recurrence: Value| {
        json!({"account_id": bank, "type": "DEBIT", "amount": 10, "description": "Academia",
            "date": "9999-06-15", "recurrence": recurrence})
    };
    for recurrence in [
        json!({"frequency": "MONTHLY", "count": 8}),
        // Every other day: the 101st would be 10000-01-01.
        json!({"frequency": "DAILY", "interval": 2, "count": 101}),
        json!({"frequency": "YEARLY", "count": 2}),
    ] {
        let refused = post(&app, "/v1/transactions", rule(recurrence.clone())).await;
        refused.invalid(&["recurrence.count"]);
    }
    // What fits is accepted: a count that ends on the last month, a count
    // cut short by an end_date, and an open-ended rule, which simply stops
    // at the end of the calendar.
    for (recurrence, occurrences) in [
        (json!({"frequency": "MONTHLY", "count": 7}), 7),
        (
            json!({"frequency": "DAILY", "interval": 2, "count": 100}),
            100,
        ),
        (
            json!({"frequency": "WEEKLY", "count": 10_000, "end_date": "9999-12-31"}),
            29,
        ),
        (json!({"frequency": "DAILY"}), 200),
    ] {
        let created = post(&app, "/v1/transactions", rule(recurrence)).await;
        let id = created.ok(201)["recurrence_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let entries = ledger(&app, year).await;
        let of_rule = entries.iter().filter(|e| e["recurrence_id"] == id).count();
        assert_eq!(of_rule, occurrences, "{id}");
    }
}

/// Moving the rest of a rule later (PATCH scope=future with a date) may
/// not push its occurrences past the calendar; an installment purchase
/// cannot be moved as a whole at all.
async fn moving_a_series_past_the_calendar_is_refused(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app.bank("Conta").await;
    let year = "from=9999-01-01&to=9999-12-31";
    let created = post(
        &app,
        "/v1/transactions",
        json!({"account_id": bank, "type": "DEBIT", "amount": 10, "description": "Aluguel",
            "date": "9999-01-15", "recurrence": {"frequency": "MONTHLY", "count": 6}}),
    )
    .await;
    let rule = created.ok(201)["recurrence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let third = format!("/v1/transactions/mocked-recurrence:{rule}:9999-03-15");
    let before = ledger(&app, year).await;
    assert_eq!(before.len(), 6);
    // Four occurrences left from March: from October, the last would be
    // due in January of year 10000.
    let moved = prompt(
        &app,
        Method::PATCH,
        &third,
        Some(json!({"scope": "future", "date": "9999-10-15"})),
    )
    .await;
    moved.invalid(&["date"]);
    assert_eq!(ledger(&app, year).await, before, "nothing changed");
    prompt(
        &app,
        Method::PATCH,
        &third,
        Some(json!({"scope": "future", "date": "9999-09-15"})),
    )
    .await
    .ok(200);
    assert_eq!(
        dates(&ledger(&app, year).await),
        [
            "9999-12-15",
            "9999-11-15",
            "9999-10-15",
            "9999-09-15",
            "9999-02-15",
            "9999-01-15"
        ]
    );

    let purchase = post(
        &app,
        "/v1/transactions",
        json!({"account_id": bank, "type": "DEBIT", "amount": 300, "description": "Sofá",
            "date": "9999-01-20", "installments": {"count": 3}}),
    )
    .await;
    let plan = purchase.ok(201)["transaction"]["installment"]["purchase_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for scope in ["future", "all"] {
        prompt(
            &app,
            Method::PATCH,
            &format!("/v1/transactions/mocked-installment:{plan}:2"),
            Some(json!({"scope": scope, "date": "9999-12-20"})),
        )
        .await
        .invalid(&["date"]);
    }
}

/// Rows on the first and the last day of the calendar: stored, read,
/// moved, and listed by windows at both ends.
async fn rows_on_the_first_and_last_day(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app.bank("Conta").await;
    let mut ids = Vec::new();
    for date in ["0001-01-01", "9999-12-31"] {
        let created = post(
            &app,
            "/v1/transactions",
            json!({"account_id": bank, "type": "CREDIT", "amount": 1, "description": date,
                "date": date}),
        )
        .await;
        ids.push(
            created.ok(201)["transaction"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for (window, date) in [
        ("from=0001-01-01&to=0001-01-01", "0001-01-01"),
        ("from=0001-01-01&to=0002-01-01", "0001-01-01"),
        ("from=9999-12-31&to=9999-12-31", "9999-12-31"),
        ("from=9998-12-31&to=9999-12-31", "9999-12-31"),
    ] {
        assert_eq!(dates(&all_pages(&app, window, 1).await), [date], "{window}");
    }
    // Swap them: each row moves to the other end of the calendar.
    for (id, date) in ids.iter().zip(["9999-12-31", "0001-01-01"]) {
        let path = format!("/v1/transactions/{id}");
        prompt(&app, Method::PATCH, &path, Some(json!({"date": date})))
            .await
            .ok(200);
        assert_eq!(get(&app, &path).await.ok(200)["transaction"]["date"], date);
    }
    let last = all_pages(&app, "from=9999-12-31&to=9999-12-31", 1).await;
    assert_eq!(last[0]["id"], ids[0].as_str());
    // The duplicates finder's default period stops at the calendar's ends.
    for query in ["to=0001-01-10", "from=9999-12-01"] {
        get(&app, &format!("/v1/transactions/duplicates?{query}"))
            .await
            .ok(200);
    }
    for bad in ["0000-12-31", "10000-01-01", "-001-01-01"] {
        post(
            &app,
            "/v1/transactions",
            json!({"account_id": bank, "type": "CREDIT", "amount": 1, "description": "x",
                "date": bad}),
        )
        .await
        .invalid(&["date"]);
    }
}

/// The longest purchase (420 installments) ending on the calendar's last
/// day, listed year by year over its whole span: every installment once,
/// summing to the total to the cent.
async fn the_longest_purchase_ends_on_the_last_day(backend: Backend) {
    let app = Arc::new(TestApp::start(backend).await);
    let bank = app.bank("Conta").await;
    let purchase = |date: &str| {
        json!({"account_id": bank, "type": "DEBIT", "amount": 1000.03, "description": "Casa",
            "date": date, "installments": {"count": 420}})
    };
    // From February 9965 the 420th would be due in January of year 10000.
    post(&app, "/v1/transactions", purchase("9965-02-01"))
        .await
        .invalid(&["installments.count"]);
    let created = post(&app, "/v1/transactions", purchase("9965-01-31")).await;
    let first = created.ok(201)["transaction"].clone();
    assert_eq!(cents(&first["amount"]), 281, "the leftover cents go first");
    let mut all = Vec::new();
    for year in 9965..=9999 {
        let window = format!("from={year}-01-01&to={year}-12-31&is_installments=true");
        let entries = ledger(&app, &window).await;
        assert_eq!(entries.len(), 12, "{year}");
        all.extend(entries);
    }
    assert_eq!(all.len(), 420);
    let numbers: HashSet<u64> = all
        .iter()
        .map(|e| e["installment"]["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=420).collect::<HashSet<u64>>());
    assert_eq!(
        all.iter().map(|e| cents(&e["amount"])).sum::<i64>(),
        100_003
    );
    assert_eq!(all[0]["date"], "9965-12-31");
    // Windows oldest year first, each newest day first.
    assert_eq!(all[all.len() - 1]["date"], "9999-01-31");
    let last_year = ledger(&app, "from=9999-01-01&to=9999-12-31").await;
    assert_eq!(last_year[0]["date"], "9999-12-31");
    assert_eq!(last_year[0]["installment"]["number"], 420);
}

/// A daily rule over the last 366 days of the calendar, with a card
/// present (the cashflow view), paged seven at a time to the end of the
/// list: every day once, none skipped, newest first.
async fn a_daily_rule_pages_to_the_end_of_the_calendar(backend: Backend) {
    let w = wallet(backend).await;
    post(
        &w.app,
        "/v1/transactions",
        json!({"account_id": w.bank, "type": "DEBIT", "amount": 1, "description": "Café",
            "date": "9998-06-01", "recurrence": {"frequency": "DAILY"}}),
    )
    .await
    .ok(201);
    for (view, limit) in [("", 7), ("&view=ledger", 100)] {
        let rows = all_pages(
            &w.app,
            &format!("from=9998-12-31&to=9999-12-31{view}"),
            limit,
        )
        .await;
        assert_eq!(rows.len(), 366, "{view}");
        let ids: HashSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 366, "an entry repeated");
        let days = dates(&rows);
        assert_eq!(days.first(), Some(&"9999-12-31"));
        assert_eq!(days.last(), Some(&"9998-12-31"));
        assert!(
            days.windows(2).all(|pair| pair[0] > pair[1]),
            "one a day, newest first"
        );
    }
}

on_both_backends!(
    bills_and_cashflow_answer_in_year_9999,
    bills_and_cashflow_answer_in_year_1,
    overview_answers_on_the_last_and_first_day,
    series_past_the_calendar_are_refused,
    moving_a_series_past_the_calendar_is_refused,
    rows_on_the_first_and_last_day,
    the_longest_purchase_ends_on_the_last_day,
    a_daily_rule_pages_to_the_end_of_the_calendar,
);
