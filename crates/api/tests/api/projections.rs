//! Recurrence rules and installment purchases: creation, their projected
//! entries in the merged list (filters and pagination across stored and
//! projected entries), projection handles, scoped PATCH and DELETE, and
//! isolation between users.

use axum::http::Method;
use serde_json::{Value, json};
use std::collections::HashSet;

use crate::on_both_backends;
use crate::support::{Backend, TODAY, TestApp};

const ZERO_ID: &str = "00000000-0000-4000-8000-000000000000";

fn path(id: &str) -> String {
    format!("/v1/transactions/{id}")
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_owned()
}

fn rec(rule: &str, date: &str) -> String {
    format!("mocked-recurrence:{rule}:{date}")
}

fn inst(purchase: &str, number: u32) -> String {
    format!("mocked-installment:{purchase}:{number}")
}

fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn is_uuid(text: &str) -> bool {
    uuid::Uuid::parse_str(text).is_ok()
}

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
    keys.sort();
    keys
}

fn cents(value: &Value) -> i64 {
    (value.as_f64().expect("number") * 100.0).round() as i64
}

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter().map(id_of).collect()
}

fn sorted(mut list: Vec<String>) -> Vec<String> {
    list.sort();
    list
}

fn find<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not listed"))
}

fn has(rows: &[Value], id: &str) -> bool {
    rows.iter().any(|r| r["id"] == id)
}

/// Entries that belong to a recurrence rule (stored or projected), oldest
/// first, as (date, id).
fn of_rule(rows: &[Value], rule: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r["recurrence_id"] == rule)
        .map(|r| (r["date"].as_str().unwrap().to_owned(), id_of(r)))
        .collect();
    out.sort();
    out
}

fn dates_of_rule(rows: &[Value], rule: &str) -> Vec<String> {
    of_rule(rows, rule).into_iter().map(|(d, _)| d).collect()
}

/// Entries of an installment purchase by number.
fn of_purchase(rows: &[Value], purchase: &str) -> Vec<(u64, Value)> {
    let mut out: Vec<(u64, Value)> = rows
        .iter()
        .filter(|r| r["installment"]["purchase_id"] == purchase)
        .map(|r| (r["installment"]["number"].as_u64().unwrap(), r.clone()))
        .collect();
    out.sort_by_key(|(n, _)| *n);
    out
}

/// Every entry of a query (pages of 100).
async fn list(app: &TestApp, query: &str) -> Vec<Value> {
    app.all_pages(query, 100).await
}

/// Newest day first, ids ascending within a day, no id twice.
#[track_caller]
fn assert_list_order(rows: &[Value]) {
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (da, db) = (a["date"].as_str().unwrap(), b["date"].as_str().unwrap());
        let (ia, ib) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
        assert!(
            da > db || (da == db && ia < ib),
            "out of order: ({da}, {ia}) before ({db}, {ib})"
        );
    }
    let unique: HashSet<String> = ids(rows).into_iter().collect();
    assert_eq!(unique.len(), rows.len(), "an id is listed twice");
}

async fn read(app: &TestApp, id: &str) -> Value {
    let response = app.get(&path(id)).await;
    let body = response.ok(200);
    assert_eq!(keys(body), ["transaction"]);
    body["transaction"].clone()
}

async fn balance(app: &TestApp, account: &str) -> f64 {
    let response = app.get(&format!("/v1/accounts/{account}")).await;
    response.ok(200)["balance"]
        .as_f64()
        .expect("numeric balance")
}

/// Creates a rule (201) and returns its id and the response body.
async fn rule(app: &TestApp, body: Value) -> (String, Value) {
    let response = app.post("/v1/transactions", body.clone()).await;
    let created = response.ok(201).clone();
    assert_eq!(
        keys(&created),
        ["next_occurrence", "recurrence_id", "reused"],
        "{body}"
    );
    assert_eq!(created["reused"], json!(false));
    let id = created["recurrence_id"]
        .as_str()
        .expect("recurrence_id")
        .to_owned();
    assert!(is_uuid(&id), "{id}");
    (id, created)
}

/// Creates an installment purchase (201) and returns installment 1 and the
/// purchase id.
async fn purchase(app: &TestApp, body: Value) -> (Value, String) {
    let response = app.post("/v1/transactions", body).await;
    let created = response.ok(201);
    assert_eq!(created["deduped"], json!(false));
    let first = created["transaction"].clone();
    let purchase = first["installment"]["purchase_id"]
        .as_str()
        .expect("purchase_id")
        .to_owned();
    (first, purchase)
}

/// A PATCH that succeeds; returns the update result.
async fn patch_ok(app: &TestApp, id: &str, body: Value) -> Value {
    let response = app.patch(&path(id), body.clone()).await;
    let result = response.ok(200).clone();
    assert_eq!(
        keys(&result),
        ["affected_ids", "message", "updated_transaction_id"],
        "PATCH {id} {body}"
    );
    result
}

/// A DELETE that succeeds; returns the result.
async fn delete_ok(app: &TestApp, url: &str) -> Value {
    let response = app.delete(url).await;
    let result = response.ok(200).clone();
    assert_eq!(
        keys(&result),
        ["affected_ids", "deleted_transaction_id"],
        "DELETE {url}"
    );
    result
}

fn affected(result: &Value) -> Vec<String> {
    result["affected_ids"]
        .as_array()
        .expect("affected_ids")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

// ------------------------------------------------------------ installments

async fn installment_purchase_is_split_and_projected(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let response = app
        .post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 1200.05,
                   "description": "Notebook", "installments": {"count": 12}}),
        )
        .await;
    let body = response.ok(201).clone();
    assert_eq!(keys(&body), ["deduped", "transaction"]);
    assert_eq!(body["deduped"], json!(false));
    let first = body["transaction"].clone();
    let purchase = first["installment"]["purchase_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(is_uuid(&purchase));
    assert!(is_uuid(&id_of(&first)));
    assert_eq!(
        first["installment"],
        json!({"purchase_id": purchase, "number": 1, "count": 12, "total_amount": 1200.05})
    );
    assert_eq!(first["amount"], json!(100.05));
    assert!(
        response.text.contains("\"amount\":100.05"),
        "{}",
        response.text
    );
    assert!(
        response.text.contains("\"total_amount\":1200.05"),
        "{}",
        response.text
    );
    assert_eq!(first["projected"], json!(false));
    assert_eq!(first["projection"], Value::Null);
    assert_eq!(first["date"], TODAY);
    assert_eq!(first["status"], "POSTED");
    assert_eq!(first["recurrence_id"], Value::Null);
    assert_eq!(read(&app, &id_of(&first)).await, first);
    // Installment 1 is a POSTED row: it moves the balance, the others do not.
    assert_eq!(balance(&app, &account).await, -100.05);

    // The next twelve months: installment 1 stored, 2..12 projected.
    let window = "from=2026-11-01&to=2027-10-31";
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 12);
    assert_list_order(&rows);
    let mut expected_ids: Vec<String> = (2..=12).rev().map(|k| inst(&purchase, k)).collect();
    expected_ids.push(id_of(&first));
    assert_eq!(ids(&rows), expected_ids);
    assert_eq!(find(&rows, &id_of(&first)), &first);
    let mut total = cents(&first["amount"]);
    for k in 2..=12u32 {
        let handle = inst(&purchase, k);
        let entry = find(&rows, &handle);
        let (year, month) = if k == 2 { (2026, 12) } else { (2027, k - 2) };
        assert_eq!(entry["date"], format!("{year}-{month:02}-22"), "{handle}");
        assert_eq!(entry["projected"], json!(true));
        assert_eq!(
            entry["projection"],
            json!({"kind": "installment", "purchase_id": purchase, "number": k, "count": 12})
        );
        assert_eq!(
            entry["installment"],
            json!({"purchase_id": purchase, "number": k, "count": 12, "total_amount": 1200.05})
        );
        assert_eq!(entry["status"], "PENDING");
        assert_eq!(entry["amount"], json!(100.0));
        assert_eq!(entry["type"], "DEBIT");
        assert_eq!(entry["description"], "Notebook");
        assert_eq!(entry["account_id"], account);
        assert_eq!(entry["currency"], first["currency"]);
        assert_eq!(entry["recurrence_id"], Value::Null);
        assert_eq!(entry["recurrence_period_date"], Value::Null);
        total += cents(&entry["amount"]);
        // GET by handle gives the list's entry.
        assert_eq!(&read(&app, &handle).await, entry);
    }
    assert_eq!(total, 120_005, "the parts add up to the total");
    let page = app
        .get(&format!("/v1/transactions?{window}&limit=100"))
        .await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.text.matches("\"amount\":100.00,").count(),
        11,
        "{}",
        page.text
    );
    assert_eq!(page.text.matches("\"amount\":100.05,").count(), 1);
    // The projections stay PENDING: the balance is unchanged.
    assert_eq!(balance(&app, &account).await, -100.05);
}

async fn installment_dates_keep_the_day_clamped(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (first, sofa) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 1000, "description": "Sofá",
               "date": "2026-01-31", "installments": {"count": 12}}),
    )
    .await;
    assert_eq!(first["date"], "2026-01-31");
    assert_eq!(first["amount"], json!(83.37));
    let rows = list(&app, "from=2026-01-01&to=2026-12-31").await;
    let parts = of_purchase(&rows, &sofa);
    let dates: Vec<&str> = parts
        .iter()
        .map(|(_, r)| r["date"].as_str().unwrap())
        .collect();
    assert_eq!(
        dates,
        [
            "2026-01-31",
            "2026-02-28",
            "2026-03-31",
            "2026-04-30",
            "2026-05-31",
            "2026-06-30",
            "2026-07-31",
            "2026-08-31",
            "2026-09-30",
            "2026-10-31",
            "2026-11-30",
            "2026-12-31"
        ]
    );
    let numbers: Vec<u64> = parts.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, (1..=12).collect::<Vec<u64>>());
    let amounts: Vec<i64> = parts.iter().map(|(_, r)| cents(&r["amount"])).collect();
    assert_eq!(amounts[0], 8337);
    assert!(amounts[1..].iter().all(|a| *a == 8333), "{amounts:?}");
    assert_eq!(amounts.iter().sum::<i64>(), 100_000);
    // Past installments are projected too, PENDING until paid.
    let past = find(&rows, &inst(&sofa, 2));
    assert_eq!(past["projected"], json!(true));
    assert_eq!(past["status"], "PENDING");
    assert_eq!(read(&app, &inst(&sofa, 2)).await["date"], "2026-02-28");

    // Into a leap year.
    let (_, leap) = purchase(
        &app,
        json!({"account_id": account, "type": "CREDIT", "amount": 0.03, "description": "Centavos",
               "date": "2027-12-31", "installments": {"count": 3}}),
    )
    .await;
    let rows = list(&app, "from=2027-12-01&to=2028-11-30").await;
    let parts = of_purchase(&rows, &leap);
    let got: Vec<(String, i64)> = parts
        .iter()
        .map(|(_, r)| (r["date"].as_str().unwrap().to_owned(), cents(&r["amount"])))
        .collect();
    assert_eq!(
        got,
        [
            ("2027-12-31".to_owned(), 1),
            ("2028-01-31".to_owned(), 1),
            ("2028-02-29".to_owned(), 1)
        ]
    );
    assert_eq!(
        parts[0].1["status"], "PENDING",
        "a future installment 1 is PENDING"
    );
}

async fn installment_creation_is_validated(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let base = json!({"account_id": account, "type": "DEBIT", "amount": 1200, "description": "TV"});
    let with = |extra: Value| {
        let mut body = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    for count in [0, 1, 421, 1000] {
        app.post(
            "/v1/transactions",
            with(json!({"installments": {"count": count}})),
        )
        .await
        .invalid(&["installments.count"]);
    }
    app.post("/v1/transactions", with(json!({"installments": {}})))
        .await
        .invalid(&["installments.count"]);
    // Too small to give every part at least one cent.
    app.post(
        "/v1/transactions",
        with(json!({"amount": 0.05, "installments": {"count": 12}})),
    )
    .await
    .invalid(&["amount"]);
    app.post(
        "/v1/transactions",
        with(json!({"amount": 0.11, "installments": {"count": 12}})),
    )
    .await
    .invalid(&["amount"]);
    // Installments and recurrence together.
    let both = app
        .post(
            "/v1/transactions",
            with(json!({"installments": {"count": 3}, "recurrence": {"frequency": "MONTHLY"}})),
        )
        .await;
    both.problem(400, "validation_error");
    let fields: Vec<&str> = both.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(
        !fields.is_empty()
            && fields
                .iter()
                .all(|f| *f == "installments" || *f == "recurrence"),
        "{}",
        both.body
    );
    // Nothing was stored by any of them.
    let everything = "from=2026-11-01&to=2027-10-31";
    assert_eq!(list(&app, everything).await.len(), 0);
    assert_eq!(balance(&app, &account).await, 0.0);

    // The edges are accepted: 0.12 in 12 parts of 0.01, 2 and 420 parts.
    let (_, cents_purchase) = purchase(
        &app,
        with(json!({"amount": 0.12, "installments": {"count": 12}, "date": "2026-12-01"})),
    )
    .await;
    let rows = list(&app, "from=2026-12-01&to=2027-11-30").await;
    let parts = of_purchase(&rows, &cents_purchase);
    assert_eq!(parts.len(), 12);
    assert!(parts.iter().all(|(_, r)| cents(&r["amount"]) == 1));
    let (two, _) = purchase(&app, with(json!({"installments": {"count": 2}}))).await;
    assert_eq!(two["installment"]["count"], 2);
    assert_eq!(two["amount"], json!(600.0));
    let (many, many_id) = purchase(&app, with(json!({"installments": {"count": 420}}))).await;
    assert_eq!(many["installment"]["count"], 420);
    // 1200 / 420 = 2.857...: 2.85 each, the 3.00 left over on the first.
    assert_eq!(many["amount"], json!(5.85));
    let last = read(&app, &inst(&many_id, 420)).await;
    assert_eq!(last["date"], "2061-10-22");
    assert_eq!(last["amount"], json!(2.85));
    app.get(&path(&inst(&many_id, 421)))
        .await
        .problem(404, "projection_not_found");
}

// ------------------------------------------------------------- recurrences

async fn recurrence_rule_is_created_and_projected(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let other_account = app.bank("Outra").await;
    let base = json!({"account_id": account, "type": "DEBIT", "amount": 59.90,
                      "description": "Academia", "date": "2026-01-31",
                      "recurrence": {"frequency": "MONTHLY"}});
    let response = app.post("/v1/transactions", base.clone()).await;
    let created = response.ok(201).clone();
    assert_eq!(
        keys(&created),
        ["next_occurrence", "recurrence_id", "reused"]
    );
    assert_eq!(created["reused"], json!(false));
    let rule_id = created["recurrence_id"].as_str().unwrap().to_owned();
    assert!(is_uuid(&rule_id));
    let next = created["next_occurrence"].clone();
    assert_eq!(next["id"], rec(&rule_id, "2026-11-30"));
    assert_eq!(next["date"], "2026-11-30");
    assert_eq!(next["projected"], json!(true));
    assert_eq!(next["projection"]["kind"], "recurrence");
    assert_eq!(next["projection"]["rule_id"], rule_id);
    assert_eq!(next["status"], "PENDING");
    assert_eq!(next["amount"], json!(59.9));
    assert_eq!(next["type"], "DEBIT");
    assert_eq!(next["description"], "Academia");
    assert_eq!(next["account_id"], account);
    assert_eq!(next["recurrence_id"], rule_id);
    assert_eq!(next["recurrence_period_date"], "2026-11-30");
    assert_eq!(next["installment"], Value::Null);
    assert!(
        response.text.contains("\"amount\":59.90"),
        "{}",
        response.text
    );
    assert_eq!(read(&app, &rec(&rule_id, "2026-11-30")).await, next);

    // Every occurrence from the start is projected, past ones included.
    let rows = list(&app, "from=2026-01-01&to=2026-12-31").await;
    assert_eq!(rows.len(), 12);
    assert_list_order(&rows);
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        [
            "2026-01-31",
            "2026-02-28",
            "2026-03-31",
            "2026-04-30",
            "2026-05-31",
            "2026-06-30",
            "2026-07-31",
            "2026-08-31",
            "2026-09-30",
            "2026-10-31",
            "2026-11-30",
            "2026-12-31"
        ]
    );
    for row in &rows {
        let date = row["date"].as_str().unwrap();
        assert_eq!(row["id"], rec(&rule_id, date));
        assert_eq!(row["status"], "PENDING");
        assert_eq!(row["projected"], json!(true));
        assert_eq!(row["recurrence_period_date"], date);
    }
    assert_eq!(&next, find(&rows, &rec(&rule_id, "2026-11-30")));
    // No row is stored and nothing is POSTED.
    assert_eq!(
        list(&app, "from=2026-01-01&to=2026-12-31&status=POSTED")
            .await
            .len(),
        0
    );
    assert_eq!(balance(&app, &account).await, 0.0);

    // An equivalent request reuses the rule: 200, same id.
    let mut same = base.clone();
    same["description"] = json!("  ACADEMIA ");
    same["amount"] = json!(59.9);
    let again = app.post("/v1/transactions", same).await;
    let reused = again.ok(200).clone();
    assert_eq!(reused["reused"], json!(true));
    assert_eq!(reused["recurrence_id"], rule_id);
    assert_eq!(reused["next_occurrence"], next);
    let mut same_case = base.clone();
    same_case["description"] = json!("academia");
    let again = app.post("/v1/transactions", same_case).await;
    assert_eq!(again.ok(200)["recurrence_id"], rule_id);
    let rows = list(&app, "from=2026-01-01&to=2026-12-31").await;
    assert_eq!(rows.len(), 12, "no second rule was stored");

    // Any other difference makes a new rule.
    let variants = [
        json!({"amount": 59.91}),
        json!({"type": "CREDIT"}),
        json!({"description": "Academia 2"}),
        json!({"account_id": other_account}),
        json!({"date": "2026-01-30"}),
        json!({"recurrence": {"frequency": "WEEKLY"}}),
        json!({"recurrence": {"frequency": "MONTHLY", "interval": 2}}),
    ];
    let mut seen = HashSet::from([rule_id.clone()]);
    for variant in variants {
        let mut body = base.clone();
        for (k, v) in variant.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (id, _) = rule(&app, body).await;
        assert!(seen.insert(id), "{variant} reused a rule");
    }

    // With 2026-11-30 deleted, the next occurrence is 2026-12-31.
    delete_ok(&app, &path(&rec(&rule_id, "2026-11-30"))).await;
    let again = app.post("/v1/transactions", base.clone()).await;
    let reused = again.ok(200);
    assert_eq!(reused["recurrence_id"], rule_id);
    assert_eq!(reused["next_occurrence"]["id"], rec(&rule_id, "2026-12-31"));
    assert_eq!(reused["next_occurrence"]["date"], "2026-12-31");
}

async fn recurrence_interval_end_and_count_limit_occurrences(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let body = |date: &str, recurrence: Value| {
        json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Regra",
               "date": date, "recurrence": recurrence})
    };
    let year = "from=2026-01-01&to=2026-12-31";

    // Every three months, until an inclusive end date.
    let (quarterly, created) = rule(
        &app,
        body(
            "2026-01-15",
            json!({"frequency": "MONTHLY", "interval": 3, "end_date": "2026-10-15"}),
        ),
    )
    .await;
    assert_eq!(
        created["next_occurrence"],
        Value::Null,
        "the rule has ended"
    );
    let rows = list(&app, year).await;
    assert_eq!(
        dates_of_rule(&rows, &quarterly),
        ["2026-01-15", "2026-04-15", "2026-07-15", "2026-10-15"]
    );

    // Daily, five occurrences.
    let (daily, created) = rule(
        &app,
        body("2026-11-20", json!({"frequency": "DAILY", "count": 5})),
    )
    .await;
    assert_eq!(created["next_occurrence"]["date"], TODAY);
    assert_eq!(created["next_occurrence"]["id"], rec(&daily, TODAY));
    let rows = list(&app, year).await;
    assert_eq!(
        dates_of_rule(&rows, &daily),
        [
            "2026-11-20",
            "2026-11-21",
            "2026-11-22",
            "2026-11-23",
            "2026-11-24"
        ]
    );

    // Every other week, ending on an occurrence (inclusive).
    let (weekly, _) = rule(
        &app,
        body(
            "2026-02-02",
            json!({"frequency": "WEEKLY", "interval": 2, "end_date": "2026-03-16"}),
        ),
    )
    .await;
    let rows = list(&app, year).await;
    assert_eq!(
        dates_of_rule(&rows, &weekly),
        ["2026-02-02", "2026-02-16", "2026-03-02", "2026-03-16"]
    );

    // Weekly without an end reaches past today.
    let (open_weekly, created) =
        rule(&app, body("2026-11-02", json!({"frequency": "WEEKLY"}))).await;
    assert_eq!(created["next_occurrence"]["date"], "2026-11-23");
    let rows = list(&app, "from=2026-11-01&to=2026-12-31").await;
    assert_eq!(
        dates_of_rule(&rows, &open_weekly),
        [
            "2026-11-02",
            "2026-11-09",
            "2026-11-16",
            "2026-11-23",
            "2026-11-30",
            "2026-12-07",
            "2026-12-14",
            "2026-12-21",
            "2026-12-28"
        ]
    );

    // Yearly from a leap day.
    let (yearly, created) = rule(&app, body("2024-02-29", json!({"frequency": "YEARLY"}))).await;
    assert_eq!(created["next_occurrence"]["date"], "2027-02-28");
    assert_eq!(created["next_occurrence"]["id"], rec(&yearly, "2027-02-28"));
    let rows = list(&app, year).await;
    assert_eq!(dates_of_rule(&rows, &yearly), ["2026-02-28"]);
    let rows = list(&app, "from=2028-01-01&to=2028-12-31").await;
    assert_eq!(dates_of_rule(&rows, &yearly), ["2028-02-29"]);

    // Monthly with a count; the count is of occurrences from the start.
    let (counted, created) = rule(
        &app,
        body("2026-09-30", json!({"frequency": "MONTHLY", "count": 4})),
    )
    .await;
    assert_eq!(created["next_occurrence"]["date"], "2026-11-30");
    let rows = list(&app, "from=2026-09-01&to=2027-08-31").await;
    assert_eq!(
        dates_of_rule(&rows, &counted),
        ["2026-09-30", "2026-10-30", "2026-11-30", "2026-12-30"]
    );
}

async fn recurrence_creation_is_validated(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let base = json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Regra",
                      "date": "2026-11-10"});
    let cases: Vec<(Value, &[&str])> = vec![
        (
            json!({"recurrence": {"frequency": "HOURLY"}}),
            &["recurrence.frequency"],
        ),
        (
            json!({"recurrence": {"frequency": "monthly"}}),
            &["recurrence.frequency"],
        ),
        (json!({"recurrence": {}}), &["recurrence.frequency"]),
        (
            json!({"recurrence": {"frequency": "MONTHLY", "interval": 0}}),
            &["recurrence.interval"],
        ),
        (
            json!({"recurrence": {"frequency": "MONTHLY", "end_date": "2026-11-09"}}),
            &["recurrence.end_date"],
        ),
        (
            json!({"recurrence": {"frequency": "MONTHLY", "end_date": "2026-13-01"}}),
            &["recurrence.end_date"],
        ),
        (
            json!({"recurrence": {"frequency": "MONTHLY", "count": 0}}),
            &["recurrence.count"],
        ),
        (
            json!({"recurrence": {"frequency": "MONTHLY", "every": 2}}),
            &["recurrence.every"],
        ),
        (
            json!({"id": new_uuid(), "recurrence": {"frequency": "MONTHLY"}}),
            &["id"],
        ),
        (
            json!({"status": "POSTED", "recurrence": {"frequency": "MONTHLY"}}),
            &["status"],
        ),
        (
            json!({"status": "PENDING", "recurrence": {"frequency": "MONTHLY"}}),
            &["status"],
        ),
    ];
    for (extra, fields) in cases {
        let mut body = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let response = app.post("/v1/transactions", body.clone()).await;
        assert_eq!(response.status, 400, "{body}: {}", response.body);
        response.invalid(fields);
    }
    // Nothing was stored.
    assert_eq!(list(&app, "from=2026-01-01&to=2026-12-31").await.len(), 0);
    // The end date may be the start date: one occurrence.
    let mut one = base.clone();
    one["recurrence"] = json!({"frequency": "DAILY", "end_date": "2026-11-10"});
    let (id, _) = rule(&app, one).await;
    let rows = list(&app, "from=2026-01-01&to=2026-12-31").await;
    assert_eq!(dates_of_rule(&rows, &id), ["2026-11-10"]);
}

// ----------------------------------------------------------------- handles

async fn handles_resolve_like_the_list_or_404(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let tx = |description: &str, date: &str, extra: Value| {
        let mut body = json!({"account_id": account, "type": "DEBIT", "amount": 25,
                              "description": description, "date": date});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let (monthly, _) = rule(
        &app,
        tx(
            "Mensal",
            "2026-01-31",
            json!({"recurrence": {"frequency": "MONTHLY"}}),
        ),
    )
    .await;
    let (daily, _) = rule(
        &app,
        tx(
            "Diária",
            "2026-03-01",
            json!({"recurrence": {"frequency": "DAILY", "count": 5}}),
        ),
    )
    .await;
    let (weekly, _) = rule(
        &app,
        tx(
            "Semanal",
            "2026-02-02",
            json!({"recurrence": {"frequency": "WEEKLY", "end_date": "2026-03-16"}}),
        ),
    )
    .await;
    let (first, plan) = purchase(
        &app,
        tx(
            "Parcelado",
            "2026-01-31",
            json!({"installments": {"count": 12}}),
        ),
    )
    .await;

    // Every projection of the list reads back as listed.
    let rows = list(&app, "from=2026-01-01&to=2026-12-31").await;
    let projected: Vec<&Value> = rows
        .iter()
        .filter(|r| r["projected"] == json!(true))
        .collect();
    assert_eq!(projected.len(), 12 + 5 + 7 + 11);
    for entry in projected {
        assert_eq!(&read(&app, &id_of(entry)).await, entry);
    }
    assert_eq!(read(&app, &id_of(&first)).await, first);

    let not_found = |id: String| {
        let app = &app;
        async move {
            let response = app.get(&path(&id)).await;
            assert_eq!(response.status, 404, "{id}: {}", response.body);
            response.problem(404, "projection_not_found");
        }
    };
    // Dates the rules do not produce.
    not_found(rec(&monthly, "2026-02-27")).await;
    not_found(rec(&monthly, "2026-03-30")).await;
    not_found(rec(&monthly, "2025-12-31")).await;
    not_found(rec(&daily, "2026-02-28")).await;
    not_found(rec(&daily, "2026-03-06")).await; // beyond count
    not_found(rec(&weekly, "2026-03-23")).await; // past end_date
    not_found(rec(&weekly, "2026-02-03")).await;
    // Installment numbers outside 1..=count.
    not_found(inst(&plan, 0)).await;
    not_found(inst(&plan, 13)).await;
    not_found(inst(&plan, 65535)).await;
    // Unknown rule or purchase, and ids of the other kind.
    not_found(rec(&new_uuid(), "2026-02-28")).await;
    not_found(inst(&new_uuid(), 2)).await;
    not_found(rec(&plan, "2026-02-28")).await;
    not_found(inst(&monthly, 2)).await;
    // Malformed handles.
    for malformed in [
        "mocked-".to_owned(),
        "mocked-recurrence".to_owned(),
        "mocked-recurrence:".to_owned(),
        format!("mocked-recurrence:{monthly}"),
        format!("mocked-recurrence:{monthly}:2026-02-30"),
        format!("mocked-recurrence:{monthly}:20260228"),
        format!("mocked-recurrence:{monthly}:2026-02-28:x"),
        "mocked-recurrence:abc:2026-02-28".to_owned(),
        format!("mocked-installment:{plan}:02"),
        format!("mocked-installment:{plan}:-1"),
        format!("mocked-installment:{plan}:x"),
        format!("mocked-installment:{plan}:65536"),
        format!("mocked-subscription:{plan}:2"),
        format!("mocked-bill:{account}:2026"),
    ] {
        not_found(malformed).await;
    }

    // Tombstoned.
    let tomb = rec(&monthly, "2026-04-30");
    delete_ok(&app, &path(&tomb)).await;
    not_found(tomb).await;
    let tomb = inst(&plan, 4);
    delete_ok(&app, &path(&tomb)).await;
    not_found(tomb).await;
    // Materialised.
    let stored = rec(&monthly, "2026-05-31");
    let result = patch_ok(&app, &stored, json!({"scope": "this", "notes": "feito"})).await;
    not_found(stored).await;
    let row = read(&app, result["updated_transaction_id"].as_str().unwrap()).await;
    assert_eq!(row["recurrence_period_date"], "2026-05-31");
    let stored = inst(&plan, 5);
    patch_ok(&app, &stored, json!({"scope": "this", "notes": "feito"})).await;
    not_found(stored).await;
    // The neighbours still resolve.
    read(&app, &rec(&monthly, "2026-03-31")).await;
    read(&app, &rec(&monthly, "2026-06-30")).await;
    read(&app, &inst(&plan, 3)).await;
    read(&app, &inst(&plan, 6)).await;

    // Another user's handles are missing for this user, and theirs for them.
    let (_, other_key) = app.new_user().await;
    let other_get = |id: String| {
        let app = &app;
        let key = other_key.clone();
        async move { app.call(Method::GET, &path(&id), Some(&key), None).await }
    };
    other_get(rec(&monthly, "2026-03-31"))
        .await
        .problem(404, "projection_not_found");
    other_get(inst(&plan, 3))
        .await
        .problem(404, "projection_not_found");
}

// ------------------------------------------------- filters and pagination

async fn filters_apply_to_projections(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let savings = app
        .account(json!({"type": "BANK", "sub_type": "SAVINGS_ACCOUNT", "title": "Poupança"}))
        .await;
    let categories = app.get("/v1/categories").await;
    let category = |title: &str| {
        categories.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["title"] == title)
            .map(id_of)
            .unwrap_or_else(|| panic!("no category {title}"))
    };
    let (food, restaurants) = (category("Alimentação"), category("Restaurantes"));
    let tag = id_of(
        app.post(
            "/v1/tags",
            json!({"title": "Fixas", "color_hex": "#112233"}),
        )
        .await
        .ok(201),
    );
    let (gym, _) = rule(
        &app,
        json!({"account_id": bank, "type": "DEBIT", "amount": 50, "description": "Academia Fit",
               "date": "2026-11-05", "tag_ids": [tag], "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let (salary, _) = rule(
        &app,
        json!({"account_id": savings, "type": "CREDIT", "amount": 1000, "description": "Salário",
               "notes": "Empresa ACME", "date": "2026-11-10",
               "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let (fridge1, fridge) = purchase(
        &app,
        json!({"account_id": bank, "type": "DEBIT", "amount": 300, "description": "Geladeira",
               "date": "2026-11-20", "category_id": restaurants,
               "installments": {"count": 3}}),
    )
    .await;
    let bakery = app
        .tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": 20, "description": "Padaria",
                   "date": "2026-11-05", "category_id": food}),
        )
        .await;
    let refund = app
        .tx(
            json!({"account_id": bank, "type": "CREDIT", "amount": 10, "description": "Reembolso",
                   "date": "2026-12-10"}),
        )
        .await;
    let hidden = app
        .tx(
            json!({"account_id": bank, "type": "DEBIT", "amount": 5, "description": "Oculto",
                   "date": "2026-11-06"}),
        )
        .await;
    app.patch(&path(&id_of(&hidden)), json!({"hide_from_results": true}))
        .await
        .ok(200);

    let window = "from=2026-11-01&to=2027-01-31";
    let gym_ids: Vec<String> = ["2026-11-05", "2026-12-05", "2027-01-05"]
        .iter()
        .map(|d| rec(&gym, d))
        .collect();
    let salary_ids: Vec<String> = ["2026-11-10", "2026-12-10", "2027-01-10"]
        .iter()
        .map(|d| rec(&salary, d))
        .collect();
    let fridge_projected = vec![inst(&fridge, 2), inst(&fridge, 3)];
    let (fridge1, bakery, refund, hidden) = (
        id_of(&fridge1),
        id_of(&bakery),
        id_of(&refund),
        id_of(&hidden),
    );
    let select = |query: String| {
        let app = &app;
        async move { sorted(ids(&list(app, &format!("{window}&{query}")).await)) }
    };
    let set = |parts: &[&[String]]| sorted(parts.iter().flat_map(|p| p.iter().cloned()).collect());
    let one = |id: &String| vec![id.clone()];

    let everything = list(&app, window).await;
    assert_list_order(&everything);
    assert_eq!(
        sorted(ids(&everything)),
        set(&[
            &gym_ids,
            &salary_ids,
            &fridge_projected,
            &one(&fridge1),
            &one(&bakery),
            &one(&refund)
        ])
    );
    assert_eq!(
        select("is_recurring=true".into()).await,
        set(&[&gym_ids, &salary_ids])
    );
    assert_eq!(
        select("is_installments=true".into()).await,
        set(&[&fridge_projected, &one(&fridge1)])
    );
    assert_eq!(
        select("status=POSTED".into()).await,
        set(&[&one(&fridge1), &one(&bakery)])
    );
    assert_eq!(
        select("status=PENDING".into()).await,
        set(&[&gym_ids, &salary_ids, &fridge_projected, &one(&refund)])
    );
    assert_eq!(
        select("type=CREDIT".into()).await,
        set(&[&salary_ids, &one(&refund)])
    );
    assert_eq!(
        select("type=DEBIT".into()).await,
        set(&[&gym_ids, &fridge_projected, &one(&fridge1), &one(&bakery)])
    );
    assert_eq!(
        select(format!("account_id={savings}")).await,
        sorted(salary_ids.clone())
    );
    assert_eq!(
        select(format!("account_id={bank}")).await,
        set(&[
            &gym_ids,
            &fridge_projected,
            &one(&fridge1),
            &one(&bakery),
            &one(&refund)
        ])
    );
    assert_eq!(
        select("sub_type=SAVINGS_ACCOUNT".into()).await,
        sorted(salary_ids.clone())
    );
    // A parent category selects its subcategories' projections too.
    assert_eq!(
        select(format!("category_id={food}")).await,
        set(&[&fridge_projected, &one(&fridge1), &one(&bakery)])
    );
    assert_eq!(
        select(format!("category_id={food}&include_subcategories=false")).await,
        one(&bakery)
    );
    assert_eq!(
        select(format!("category_id={restaurants}")).await,
        set(&[&fridge_projected, &one(&fridge1)])
    );
    assert_eq!(
        select("no_category=true".into()).await,
        set(&[&gym_ids, &salary_ids, &one(&refund)])
    );
    assert_eq!(
        select(format!("tag_id={tag}")).await,
        sorted(gym_ids.clone())
    );
    assert_eq!(
        select("no_tags=true".into()).await,
        set(&[
            &salary_ids,
            &fridge_projected,
            &one(&fridge1),
            &one(&bakery),
            &one(&refund)
        ])
    );
    // Search: description and notes, case-insensitive.
    assert_eq!(
        select("search=acme".into()).await,
        sorted(salary_ids.clone())
    );
    assert_eq!(
        select("search=GELADEIRA".into()).await,
        set(&[&fridge_projected, &one(&fridge1)])
    );
    assert_eq!(select("search=fit".into()).await, sorted(gym_ids.clone()));
    // Hidden rows only: projections are never hidden.
    assert_eq!(select("hidden=true".into()).await, one(&hidden));
    // Combined filters intersect.
    assert_eq!(
        select(format!("account_id={bank}&type=DEBIT&status=PENDING")).await,
        set(&[&gym_ids, &fridge_projected])
    );
    assert_eq!(
        select("is_recurring=true&type=CREDIT&status=POSTED".into()).await,
        Vec::<String>::new()
    );

    // A materialised occurrence still counts as recurring, now stored.
    let result = patch_ok(
        &app,
        &rec(&gym, "2026-12-05"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await;
    let paid = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let recurring = list(&app, &format!("{window}&is_recurring=true")).await;
    assert_eq!(recurring.len(), 6);
    assert!(has(&recurring, &paid));
    assert!(!has(&recurring, &rec(&gym, "2026-12-05")));
    assert_eq!(find(&recurring, &paid)["projected"], json!(false));
    assert_eq!(
        select("is_recurring=true&status=POSTED".into()).await,
        one(&paid)
    );
    assert_eq!(
        select("status=POSTED".into()).await,
        set(&[&one(&fridge1), &one(&bakery), &one(&paid)])
    );
}

async fn pages_merge_stored_and_projected_entries(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let other = app.bank("Outra").await;
    let (daily, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 3, "description": "Café",
               "date": "2026-11-01", "recurrence": {"frequency": "DAILY", "count": 10}}),
    )
    .await;
    let (weekly, _) = rule(
        &app,
        json!({"account_id": other, "type": "CREDIT", "amount": 80, "description": "Aula",
               "date": "2026-11-03", "recurrence": {"frequency": "WEEKLY"}}),
    )
    .await;
    let (_, plan) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 400, "description": "Bicicleta",
               "date": "2026-10-05", "installments": {"count": 4}}),
    )
    .await;
    let mut stored = Vec::new();
    for (date, n) in [
        ("2026-11-05", 3),
        ("2026-11-10", 2),
        ("2026-11-03", 1),
        ("2026-11-24", 1),
        ("2026-11-30", 1),
    ] {
        for i in 0..n {
            let row = app
                .tx(
                    json!({"account_id": account, "type": "DEBIT", "amount": 1 + i,
                           "description": format!("row {date} {i}"), "date": date}),
                )
                .await;
            stored.push(id_of(&row));
        }
    }
    // One occurrence deleted, one materialised.
    delete_ok(&app, &path(&rec(&daily, "2026-11-07"))).await;
    let result = patch_ok(
        &app,
        &rec(&daily, "2026-11-04"),
        json!({"scope": "this", "notes": "com leite"}),
    )
    .await;
    let materialised = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    stored.push(materialised.clone());

    let window = "from=2026-11-01&to=2026-11-30";
    let mut expected: Vec<String> = stored.clone();
    for day in 1..=10 {
        if day != 4 && day != 7 {
            expected.push(rec(&daily, &format!("2026-11-{day:02}")));
        }
    }
    for date in ["2026-11-03", "2026-11-10", "2026-11-17", "2026-11-24"] {
        expected.push(rec(&weekly, date));
    }
    expected.push(inst(&plan, 2));
    let all = list(&app, window).await;
    assert_eq!(all.len(), 22);
    assert_list_order(&all);
    assert_eq!(sorted(ids(&all)), sorted(expected));
    // Days shared by stored rows and projections.
    let on = |date: &str| all.iter().filter(|r| r["date"] == date).collect::<Vec<_>>();
    let nov5 = on("2026-11-05");
    assert_eq!(nov5.len(), 5);
    assert_eq!(
        nov5.iter()
            .filter(|r| r["projected"] == json!(true))
            .count(),
        2
    );
    let nov10 = on("2026-11-10");
    assert_eq!(nov10.len(), 4);
    assert_eq!(
        nov10
            .iter()
            .filter(|r| r["projected"] == json!(true))
            .count(),
        2
    );
    assert_eq!(on("2026-11-04").len(), 1);
    assert_eq!(on("2026-11-07").len(), 0);

    for limit in [1, 2, 3, 5, 7, 21, 22] {
        let paged = app.all_pages(window, limit).await;
        assert_eq!(ids(&paged), ids(&all), "limit {limit}");
    }
    // Filtered pages too.
    let recurring: Vec<String> = all
        .iter()
        .filter(|r| r["recurrence_id"] != Value::Null)
        .map(id_of)
        .collect();
    assert_eq!(recurring.len(), 13);
    for limit in [1, 2, 3, 5] {
        let paged = app
            .all_pages(&format!("{window}&is_recurring=true"), limit)
            .await;
        assert_eq!(ids(&paged), recurring, "limit {limit}");
        let pending = app
            .all_pages(&format!("{window}&status=PENDING"), limit)
            .await;
        let expected: Vec<String> = all
            .iter()
            .filter(|r| r["status"] == "PENDING")
            .map(id_of)
            .collect();
        assert_eq!(ids(&pending), expected, "limit {limit}");
        let on_account = app
            .all_pages(&format!("{window}&account_id={account}"), limit)
            .await;
        let expected: Vec<String> = all
            .iter()
            .filter(|r| r["account_id"] == account)
            .map(id_of)
            .collect();
        assert_eq!(expected.len(), 18);
        assert_eq!(ids(&on_account), expected, "limit {limit}");
    }
    // The first page of three holds the newest day: Nov 30 stored, then
    // Nov 24 (stored before projected).
    let first = app.get(&format!("/v1/transactions?{window}&limit=3")).await;
    let first = first.ok(200);
    let dates: Vec<&str> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["date"].as_str().unwrap())
        .collect();
    assert_eq!(dates, ["2026-11-30", "2026-11-24", "2026-11-24"]);
    assert_eq!(first["data"][2]["id"], rec(&weekly, "2026-11-24"));
    assert_eq!(first["has_more"], json!(true));
}

// ------------------------------------------------------------------- PATCH

async fn patch_installments_by_scope(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (first, plan) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 1200, "description": "Notebook",
               "date": "2026-12-01", "installments": {"count": 12}}),
    )
    .await;
    assert_eq!(first["status"], "PENDING");
    let window = "from=2026-12-01&to=2027-11-30";
    let before = list(&app, window).await;
    assert_eq!(before.len(), 12);

    // A projection needs a scope.
    app.patch(&path(&inst(&plan, 2)), json!({"notes": "x"}))
        .await
        .invalid(&["scope"]);
    app.patch(
        &path(&inst(&plan, 2)),
        json!({"notes": "x", "scope": "some"}),
    )
    .await
    .invalid(&["scope"]);
    // `date` only for one entry.
    for scope in ["future", "all"] {
        app.patch(
            &path(&inst(&plan, 3)),
            json!({"scope": scope, "date": "2027-02-10"}),
        )
        .await
        .invalid(&["date"]);
    }
    assert_eq!(list(&app, window).await, before, "nothing changed");

    // this: only installment 2 becomes a stored row.
    let result = patch_ok(
        &app,
        &inst(&plan, 2),
        json!({"scope": "this", "notes": "segunda"}),
    )
    .await;
    let second = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(is_uuid(&second));
    assert_eq!(affected(&result), std::slice::from_ref(&second));
    assert!(result["message"].is_string());
    app.get(&path(&inst(&plan, 2)))
        .await
        .problem(404, "projection_not_found");
    let row = read(&app, &second).await;
    assert_eq!(row["projected"], json!(false));
    assert_eq!(row["projection"], Value::Null);
    assert_eq!(
        row["installment"],
        json!({"purchase_id": plan, "number": 2, "count": 12, "total_amount": 1200.0})
    );
    assert_eq!(row["notes"], "segunda");
    assert_eq!(row["date"], "2027-01-01");
    assert_eq!(row["amount"], json!(100.0));
    assert_eq!(row["status"], "PENDING");
    assert_eq!(row["description"], "Notebook");
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 12);
    assert!(!has(&rows, &inst(&plan, 2)));
    assert_eq!(find(&rows, &second), &row);
    // The others are untouched.
    for k in 3..=12 {
        assert_eq!(find(&rows, &inst(&plan, k)), find(&before, &inst(&plan, k)));
    }

    // this with a new date.
    let result = patch_ok(
        &app,
        &inst(&plan, 4),
        json!({"scope": "this", "date": "2027-03-20"}),
    )
    .await;
    let fourth = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = read(&app, &fourth).await;
    assert_eq!(row["date"], "2027-03-20");
    assert_eq!(row["installment"]["number"], 4);
    app.get(&path(&inst(&plan, 4)))
        .await
        .problem(404, "projection_not_found");

    // future from 6: 6..12 stored with the new amount; 3, 5 stay projected.
    let result = patch_ok(
        &app,
        &inst(&plan, 6),
        json!({"scope": "future", "amount": 90}),
    )
    .await;
    let changed = affected(&result);
    assert_eq!(changed.len(), 7, "{result}");
    assert!(changed.iter().all(|id| is_uuid(id)), "{result}");
    assert_eq!(result["updated_transaction_id"], json!(changed[0]));
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 12);
    let parts = of_purchase(&rows, &plan);
    let summary: Vec<(u64, bool, i64)> = parts
        .iter()
        .map(|(n, r)| (*n, r["projected"] == json!(true), cents(&r["amount"])))
        .collect();
    assert_eq!(
        summary,
        [
            (1, false, 10000),
            (2, false, 10000),
            (3, true, 10000),
            (4, false, 10000),
            (5, true, 10000),
            (6, false, 9000),
            (7, false, 9000),
            (8, false, 9000),
            (9, false, 9000),
            (10, false, 9000),
            (11, false, 9000),
            (12, false, 9000)
        ]
    );
    let mut stored_later: Vec<String> = parts[5..].iter().map(|(_, r)| id_of(r)).collect();
    stored_later.sort();
    assert_eq!(sorted(changed.clone()), stored_later);
    for k in 6..=12 {
        app.get(&path(&inst(&plan, k)))
            .await
            .problem(404, "projection_not_found");
    }
    assert_eq!(parts[1].1["notes"], "segunda");
    assert_eq!(parts[0].1, first, "installment 1 is untouched");

    // all from a projection: every installment gets the change.
    let result = patch_ok(
        &app,
        &inst(&plan, 3),
        json!({"scope": "all", "description": "Notebook Pro"}),
    )
    .await;
    assert_eq!(affected(&result).len(), 12, "{result}");
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 12);
    assert!(
        rows.iter().all(|r| r["projected"] == json!(false)),
        "all stored now"
    );
    assert!(rows.iter().all(|r| r["description"] == "Notebook Pro"));
    let parts = of_purchase(&rows, &plan);
    let amounts: Vec<i64> = parts.iter().map(|(_, r)| cents(&r["amount"])).collect();
    assert_eq!(
        amounts,
        [
            10000, 10000, 10000, 10000, 10000, 9000, 9000, 9000, 9000, 9000, 9000, 9000
        ]
    );
    assert_eq!(parts[1].1["notes"], "segunda", "other fields are kept");
    assert_eq!(parts[3].1["date"], "2027-03-20");

    // A stored row of the series accepts future and all; this edits only it.
    let result = patch_ok(
        &app,
        &id_of(&first),
        json!({"scope": "this", "notes": "só a primeira"}),
    )
    .await;
    assert_eq!(affected(&result), [id_of(&first)]);
    let rows = list(&app, window).await;
    assert_eq!(
        rows.iter()
            .filter(|r| r["notes"] == "só a primeira")
            .count(),
        1
    );
    let tenth = id_of(&of_purchase(&rows, &plan)[9].1);
    let result = patch_ok(
        &app,
        &tenth,
        json!({"scope": "future", "category_id": null, "notes": "fim"}),
    )
    .await;
    assert_eq!(affected(&result).len(), 3);
    let rows = list(&app, window).await;
    let notes: Vec<Value> = of_purchase(&rows, &plan)
        .iter()
        .map(|(_, r)| r["notes"].clone())
        .collect();
    assert_eq!(notes[9..], [json!("fim"), json!("fim"), json!("fim")]);
    assert_eq!(notes[8], Value::Null);
    let result = patch_ok(&app, &tenth, json!({"scope": "all", "amount": 100})).await;
    assert_eq!(affected(&result).len(), 12);
    let rows = list(&app, window).await;
    assert!(
        of_purchase(&rows, &plan)
            .iter()
            .all(|(_, r)| r["amount"] == json!(100.0))
    );
    app.patch(&path(&tenth), json!({"scope": "all", "date": "2027-10-02"}))
        .await
        .invalid(&["date"]);
}

async fn patch_recurrence_by_scope(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 99.90, "description": "Internet",
               "date": "2026-09-10", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let window = "from=2026-09-01&to=2027-08-31";
    let before = list(&app, window).await;
    assert_eq!(before.len(), 12);

    app.patch(
        &path(&rec(&rule_id, "2026-10-10")),
        json!({"status": "POSTED"}),
    )
    .await
    .invalid(&["scope"]);
    app.patch(
        &path(&rec(&rule_id, "2026-10-10")),
        json!({"scope": "all", "date": "2026-10-11"}),
    )
    .await
    .invalid(&["date"]);
    assert_eq!(list(&app, window).await, before);
    assert_eq!(balance(&app, &account).await, 0.0);

    // this: the occurrence is stored; paying it moves the balance.
    let result = patch_ok(
        &app,
        &rec(&rule_id, "2026-10-10"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await;
    let october = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(is_uuid(&october));
    assert_eq!(affected(&result), std::slice::from_ref(&october));
    let row = read(&app, &october).await;
    assert_eq!(row["recurrence_id"], rule_id);
    assert_eq!(row["recurrence_period_date"], "2026-10-10");
    assert_eq!(row["date"], "2026-10-10");
    assert_eq!(row["status"], "POSTED");
    assert_eq!(row["amount"], json!(99.9));
    assert_eq!(row["projected"], json!(false));
    assert_eq!(balance(&app, &account).await, -99.9);
    app.get(&path(&rec(&rule_id, "2026-10-10")))
        .await
        .problem(404, "projection_not_found");
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 12);
    assert_eq!(find(&rows, &october), &row);

    // A pending stored occurrence, for `all` later.
    let result = patch_ok(
        &app,
        &rec(&rule_id, "2026-11-10"),
        json!({"scope": "this", "notes": "atrasada"}),
    )
    .await;
    let november = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(read(&app, &november).await["status"], "PENDING");

    // A date the rule does not produce.
    app.patch(
        &path(&rec(&rule_id, "2026-10-11")),
        json!({"scope": "this", "notes": "x"}),
    )
    .await
    .problem(404, "projection_not_found");
    // A deleted occurrence after the split point stays deleted after it.
    delete_ok(&app, &path(&rec(&rule_id, "2027-03-10"))).await;

    // future: the rule is split at 2027-01-10.
    let result = patch_ok(
        &app,
        &rec(&rule_id, "2027-01-10"),
        json!({"scope": "future", "amount": 49.90}),
    )
    .await;
    let message = result["message"].as_str().expect("message");
    assert!(message.to_lowercase().contains("split"), "{message}");
    let target = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let new_rule = target
        .strip_prefix("mocked-recurrence:")
        .and_then(|rest| rest.strip_suffix(":2027-01-10"))
        .unwrap_or_else(|| panic!("{target}"))
        .to_owned();
    assert!(is_uuid(&new_rule) && new_rule != rule_id, "{target}");
    assert!(message.contains(&new_rule), "{message}");
    let forked = read(&app, &target).await;
    assert_eq!(forked["amount"], json!(49.9));
    assert_eq!(forked["recurrence_id"], new_rule);
    assert_eq!(forked["description"], "Internet");
    app.get(&path(&rec(&rule_id, "2027-01-10")))
        .await
        .problem(404, "projection_not_found");
    app.get(&path(&rec(&rule_id, "2027-02-10")))
        .await
        .problem(404, "projection_not_found");
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 11);
    assert_list_order(&rows);
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        ["2026-09-10", "2026-10-10", "2026-11-10", "2026-12-10"]
    );
    assert_eq!(
        dates_of_rule(&rows, &new_rule),
        [
            "2027-01-10",
            "2027-02-10",
            "2027-04-10",
            "2027-05-10",
            "2027-06-10",
            "2027-07-10",
            "2027-08-10"
        ]
    );
    app.get(&path(&rec(&new_rule, "2027-03-10")))
        .await
        .problem(404, "projection_not_found");
    for row in &rows {
        let expected = if row["recurrence_id"] == new_rule {
            4990
        } else {
            9990
        };
        assert_eq!(cents(&row["amount"]), expected, "{row}");
    }
    assert_eq!(find(&rows, &october), &read(&app, &october).await);

    // all on the old rule: its projections and its pending row change,
    // the POSTED row and the new rule do not.
    let result = patch_ok(
        &app,
        &rec(&rule_id, "2026-09-10"),
        json!({"scope": "all", "description": "Internet Fibra"}),
    )
    .await;
    let changed = affected(&result);
    assert!(changed.contains(&november), "{result}");
    assert!(!changed.contains(&october), "{result}");
    let rows = list(&app, window).await;
    let description = |id: &str| find(&rows, id)["description"].clone();
    assert_eq!(description(&rec(&rule_id, "2026-09-10")), "Internet Fibra");
    assert_eq!(description(&rec(&rule_id, "2026-12-10")), "Internet Fibra");
    assert_eq!(description(&november), "Internet Fibra");
    assert_eq!(find(&rows, &november)["notes"], "atrasada");
    assert_eq!(description(&october), "Internet");
    assert_eq!(description(&target), "Internet");
    assert_eq!(
        read(&app, &rec(&rule_id, "2026-12-10")).await["description"],
        "Internet Fibra"
    );

    // future from a stored row of the series: split there.
    let result = patch_ok(&app, &november, json!({"scope": "future", "amount": 79.90})).await;
    assert_eq!(result["updated_transaction_id"], november);
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("split")
    );
    let rows = list(&app, window).await;
    assert_eq!(rows.len(), 11);
    assert_eq!(dates_of_rule(&rows, &rule_id), ["2026-09-10", "2026-10-10"]);
    let moved = read(&app, &november).await;
    assert_eq!(moved["amount"], json!(79.9));
    let third_rule = moved["recurrence_id"].as_str().unwrap().to_owned();
    assert!(third_rule != rule_id && third_rule != new_rule);
    assert_eq!(moved["recurrence_period_date"], "2026-11-10");
    assert_eq!(
        dates_of_rule(&rows, &third_rule),
        ["2026-11-10", "2026-12-10"]
    );
    assert_eq!(
        cents(&find(&rows, &rec(&third_rule, "2026-12-10"))["amount"]),
        7990
    );
    assert_eq!(dates_of_rule(&rows, &new_rule).len(), 7);
    assert_eq!(balance(&app, &account).await, -99.9);
}

// ------------------------------------------------------------------ DELETE

async fn delete_recurrence_projections(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 39.90, "description": "Streaming",
               "date": "2026-06-15", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let window = "from=2026-06-01&to=2027-05-31";
    assert_eq!(dates_of_rule(&list(&app, window).await, &rule_id).len(), 12);

    // this (the default): a tombstone.
    let handle = rec(&rule_id, "2026-08-15");
    let result = delete_ok(&app, &path(&handle)).await;
    assert_eq!(
        result,
        json!({"deleted_transaction_id": handle, "affected_ids": [handle]})
    );
    app.get(&path(&handle))
        .await
        .problem(404, "projection_not_found");
    app.delete(&path(&handle))
        .await
        .problem(404, "projection_not_found");
    app.patch(&path(&handle), json!({"scope": "this", "notes": "x"}))
        .await
        .problem(404, "projection_not_found");
    let rows = list(&app, window).await;
    let dates = dates_of_rule(&rows, &rule_id);
    assert_eq!(dates.len(), 11);
    assert!(!dates.contains(&"2026-08-15".to_owned()));
    assert!(has(&rows, &rec(&rule_id, "2026-07-15")));
    assert!(has(&rows, &rec(&rule_id, "2026-09-15")));
    // scope=this explicitly.
    let handle = rec(&rule_id, "2026-12-15");
    delete_ok(&app, &format!("{}?scope=this", path(&handle))).await;
    app.get(&path(&handle))
        .await
        .problem(404, "projection_not_found");

    // One paid, one pending stored occurrence.
    let paid = patch_ok(
        &app,
        &rec(&rule_id, "2026-09-15"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pending = patch_ok(
        &app,
        &rec(&rule_id, "2026-10-15"),
        json!({"scope": "this", "notes": "pendente"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(balance(&app, &account).await, -39.9);

    // A stored occurrence deleted by its id does not come back as a projection.
    let stored_nov = patch_ok(
        &app,
        &rec(&rule_id, "2026-11-15"),
        json!({"scope": "this", "notes": "apagar"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    delete_ok(&app, &path(&stored_nov)).await;
    app.get(&path(&stored_nov)).await.problem(404, "not_found");
    app.get(&path(&rec(&rule_id, "2026-11-15")))
        .await
        .problem(404, "projection_not_found");
    let rows = list(&app, window).await;
    assert!(!dates_of_rule(&rows, &rule_id).contains(&"2026-11-15".to_owned()));
    assert!(has(&rows, &rec(&rule_id, "2027-01-15")));

    // future ends the rule: nothing from that date on.
    delete_ok(
        &app,
        &format!("{}?scope=future", path(&rec(&rule_id, "2027-03-15"))),
    )
    .await;
    let rows = list(&app, window).await;
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        [
            "2026-06-15",
            "2026-07-15",
            "2026-09-15",
            "2026-10-15",
            "2027-01-15",
            "2027-02-15"
        ]
    );
    for date in ["2027-03-15", "2027-04-15", "2028-03-15"] {
        app.get(&path(&rec(&rule_id, date)))
            .await
            .problem(404, "projection_not_found");
    }
    assert_eq!(
        dates_of_rule(&list(&app, "from=2027-03-01&to=2028-02-29").await, &rule_id),
        Vec::<String>::new()
    );

    // all deletes the rule; the POSTED row stays (preserve_posted default).
    delete_ok(
        &app,
        &format!("{}?scope=all", path(&rec(&rule_id, "2026-07-15"))),
    )
    .await;
    let rows = list(&app, window).await;
    assert_eq!(ids(&rows), std::slice::from_ref(&paid));
    assert!(rows.iter().all(|r| r["projected"] == json!(false)));
    app.get(&path(&pending)).await.problem(404, "not_found");
    read(&app, &paid).await;
    app.get(&path(&rec(&rule_id, "2026-11-15")))
        .await
        .problem(404, "projection_not_found");
    assert_eq!(balance(&app, &account).await, -39.9);

    // preserve_posted=false takes the POSTED rows too.
    let (second, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 10, "description": "Jornal",
               "date": "2026-06-01", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let paid2 = patch_ok(
        &app,
        &rec(&second, "2026-07-01"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(balance(&app, &account).await, -49.9);
    let result = delete_ok(
        &app,
        &format!(
            "{}?scope=all&preserve_posted=false",
            path(&rec(&second, "2026-08-01"))
        ),
    )
    .await;
    assert!(affected(&result).contains(&paid2), "{result}");
    app.get(&path(&paid2)).await.problem(404, "not_found");
    assert_eq!(balance(&app, &account).await, -39.9);
    assert_eq!(ids(&list(&app, window).await), [paid]);
}

async fn delete_installment_projections(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let window = "from=2026-11-01&to=2027-10-31";
    let body = |description: &str, date: &str, count: u32| {
        json!({"account_id": account, "type": "DEBIT", "amount": 600, "description": description,
               "date": date, "installments": {"count": count}})
    };
    let numbers = |rows: &[Value], plan: &str| -> Vec<(u64, bool)> {
        of_purchase(rows, plan)
            .iter()
            .map(|(n, r)| (*n, r["projected"] == json!(true)))
            .collect()
    };

    // this: a tombstone for one installment.
    let (_, a) = purchase(&app, body("A", "2026-12-05", 6)).await;
    let result = delete_ok(&app, &path(&inst(&a, 2))).await;
    assert_eq!(affected(&result), [inst(&a, 2)]);
    app.get(&path(&inst(&a, 2)))
        .await
        .problem(404, "projection_not_found");
    // future from 4: 4..6 gone, 1 and 3 stay.
    let result = delete_ok(&app, &format!("{}?scope=future", path(&inst(&a, 4)))).await;
    assert_eq!(
        sorted(affected(&result)),
        sorted(vec![inst(&a, 4), inst(&a, 5), inst(&a, 6)])
    );
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &a), [(1, false), (3, true)]);
    for k in 4..=6 {
        app.get(&path(&inst(&a, k)))
            .await
            .problem(404, "projection_not_found");
    }
    read(&app, &inst(&a, 3)).await;

    // all with a POSTED installment 1: projections go, the POSTED row stays.
    let (b1, b) = purchase(&app, body("B", "2026-11-05", 6)).await;
    assert_eq!(b1["status"], "POSTED");
    let b2 = patch_ok(&app, &inst(&b, 2), json!({"scope": "this", "notes": "x"})).await
        ["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(balance(&app, &account).await, -100.0);
    delete_ok(&app, &format!("{}?scope=all", path(&inst(&b, 3)))).await;
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &b), [(1, false)]);
    app.get(&path(&b2)).await.problem(404, "not_found");
    for k in 2..=6 {
        app.get(&path(&inst(&b, k)))
            .await
            .problem(404, "projection_not_found");
    }
    assert_eq!(balance(&app, &account).await, -100.0);
    // preserve_posted=false: nothing of the purchase is left.
    let (c1, c) = purchase(&app, body("C", "2026-11-06", 3)).await;
    assert_eq!(balance(&app, &account).await, -300.0);
    delete_ok(
        &app,
        &format!("{}?scope=all&preserve_posted=false", path(&inst(&c, 2))),
    )
    .await;
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &c), []);
    app.get(&path(&id_of(&c1))).await.problem(404, "not_found");
    assert_eq!(balance(&app, &account).await, -100.0);
    // hide_series: projections gone, stored ones only with hidden=true.
    let (e1, e) = purchase(&app, body("E", "2026-11-10", 4)).await;
    let e2 = patch_ok(&app, &inst(&e, 2), json!({"scope": "this", "notes": "z"})).await
        ["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    delete_ok(&app, &format!("{}?hide_series=true", path(&inst(&e, 3)))).await;
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &e), []);
    for k in 3..=4 {
        app.get(&path(&inst(&e, k)))
            .await
            .problem(404, "projection_not_found");
    }
    let hidden = list(&app, &format!("{window}&hidden=true")).await;
    assert_eq!(sorted(ids(&hidden)), sorted(vec![id_of(&e1), e2.clone()]));
    assert!(hidden.iter().all(|r| r["hide_from_results"] == json!(true)));
    // Still stored: readable and counted in the balance.
    assert_eq!(read(&app, &e2).await["hide_from_results"], json!(true));
    assert_eq!(balance(&app, &account).await, -250.0);
    // A stored installment deleted by its id does not come back either.
    let (_, f) = purchase(&app, body("F", "2026-12-09", 3)).await;
    let f2 = patch_ok(&app, &inst(&f, 2), json!({"scope": "this", "notes": "w"})).await
        ["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    delete_ok(&app, &path(&f2)).await;
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &f), [(1, false), (3, true)]);
    app.get(&path(&inst(&f, 2)))
        .await
        .problem(404, "projection_not_found");
    // Purchase A is unaffected by all of this.
    let rows = list(&app, window).await;
    assert_eq!(numbers(&rows, &a), [(1, false), (3, true)]);
}

async fn delete_by_rule_id(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 15, "description": "Seguro",
               "date": "2026-01-20", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let window = "from=2026-11-01&to=2027-10-31";
    let rule_path = path(&rule_id);
    assert_eq!(dates_of_rule(&list(&app, window).await, &rule_id).len(), 12);

    // Without a date, this and future are 400 naming `date`.
    for query in ["", "?scope=this", "?scope=future"] {
        app.delete(&format!("{rule_path}{query}"))
            .await
            .invalid(&["date"]);
    }
    app.delete(&format!("{rule_path}?scope=this&date=2026-12-21"))
        .await
        .invalid(&["date"]);
    app.delete(&format!("{rule_path}?scope=this&date=2026-12-32"))
        .await
        .invalid(&["date"]);
    app.delete(&format!("{rule_path}?scope=every&date=2026-12-20"))
        .await
        .invalid(&["scope"]);
    assert_eq!(dates_of_rule(&list(&app, window).await, &rule_id).len(), 12);

    // this + date: that occurrence is tombstoned.
    let result = delete_ok(&app, &format!("{rule_path}?scope=this&date=2026-12-20")).await;
    assert_eq!(result["deleted_transaction_id"], rule_id);
    app.get(&path(&rec(&rule_id, "2026-12-20")))
        .await
        .problem(404, "projection_not_found");
    let rows = list(&app, window).await;
    let dates = dates_of_rule(&rows, &rule_id);
    assert_eq!(dates.len(), 11);
    assert!(dates.contains(&"2026-11-20".to_owned()));
    assert!(dates.contains(&"2027-01-20".to_owned()));
    assert!(!dates.contains(&"2026-12-20".to_owned()));

    // future + date: the rule ends the day before.
    delete_ok(&app, &format!("{rule_path}?scope=future&date=2027-03-20")).await;
    let rows = list(&app, window).await;
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        ["2026-11-20", "2027-01-20", "2027-02-20"]
    );
    app.get(&path(&rec(&rule_id, "2027-03-20")))
        .await
        .problem(404, "projection_not_found");

    // all: gone entirely, even the past.
    delete_ok(&app, &format!("{rule_path}?scope=all")).await;
    assert_eq!(list(&app, window).await, Vec::<Value>::new());
    assert_eq!(
        dates_of_rule(&list(&app, "from=2026-01-01&to=2026-10-31").await, &rule_id),
        Vec::<String>::new()
    );
    app.get(&path(&rec(&rule_id, "2026-01-20")))
        .await
        .problem(404, "projection_not_found");
    app.delete(&format!("{rule_path}?scope=all"))
        .await
        .problem(404, "not_found");

    // Unknown ids.
    app.delete(&format!("{}?scope=all", path(&new_uuid())))
        .await
        .problem(404, "not_found");
    app.delete(&format!("{}?scope=this&date=2026-12-20", path(ZERO_ID)))
        .await
        .problem(404, "not_found");
    app.delete(&path(&new_uuid()))
        .await
        .problem(404, "not_found");
}

async fn split_rule_keeps_its_count(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "CREDIT", "amount": 500, "description": "Aluguel recebido",
               "date": "2026-09-05", "recurrence": {"frequency": "MONTHLY", "count": 6}}),
    )
    .await;
    let window = "from=2026-09-01&to=2027-08-31";
    let rows = list(&app, window).await;
    assert_eq!(dates_of_rule(&rows, &rule_id).len(), 6);
    let result = patch_ok(
        &app,
        &rec(&rule_id, "2026-11-05"),
        json!({"scope": "future", "amount": 550}),
    )
    .await;
    let target = result["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let new_rule = read(&app, &target).await["recurrence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let rows = list(&app, window).await;
    // Still six occurrences in all: two old, four new.
    assert_eq!(rows.len(), 6);
    assert_eq!(dates_of_rule(&rows, &rule_id), ["2026-09-05", "2026-10-05"]);
    assert_eq!(
        dates_of_rule(&rows, &new_rule),
        ["2026-11-05", "2026-12-05", "2027-01-05", "2027-02-05"]
    );
    assert!(
        of_rule(&rows, &new_rule)
            .iter()
            .all(|(_, id)| find(&rows, id)["amount"] == json!(550.0))
    );
}

/// DELETE ?scope=future from a stored installment removes it and every
/// later one; none comes back as a projection.
async fn delete_future_installments_from_a_stored_row(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (first, plan) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 400, "description": "Cama",
               "date": "2026-12-07", "installments": {"count": 4}}),
    )
    .await;
    let second = patch_ok(
        &app,
        &inst(&plan, 2),
        json!({"scope": "this", "notes": "y"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = delete_ok(&app, &format!("{}?scope=future", path(&second))).await;
    assert!(affected(&result).contains(&second), "{result}");
    app.get(&path(&second)).await.problem(404, "not_found");
    let rows = list(&app, "from=2026-12-01&to=2027-11-30").await;
    let left: Vec<String> = of_purchase(&rows, &plan)
        .iter()
        .map(|(_, r)| id_of(r))
        .collect();
    assert_eq!(left, [id_of(&first)], "installments 2..4 are deleted");
    app.get(&path(&inst(&plan, 2)))
        .await
        .problem(404, "projection_not_found");
}

/// DELETE ?scope=future from a projected installment also removes later
/// installments that were already stored (not POSTED): they do not turn
/// back into projections.
async fn delete_future_installments_removes_stored_later_ones(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (first, plan) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 600, "description": "Mesa",
               "date": "2026-12-07", "installments": {"count": 6}}),
    )
    .await;
    let fifth = patch_ok(
        &app,
        &inst(&plan, 5),
        json!({"scope": "this", "notes": "quinta"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    delete_ok(&app, &format!("{}?scope=future", path(&inst(&plan, 3)))).await;
    app.get(&path(&fifth)).await.problem(404, "not_found");
    let rows = list(&app, "from=2026-12-01&to=2027-11-30").await;
    let left: Vec<String> = of_purchase(&rows, &plan)
        .iter()
        .map(|(_, r)| id_of(r))
        .collect();
    assert_eq!(
        left,
        [id_of(&first), inst(&plan, 2)],
        "installments 3..6 are deleted"
    );
    app.get(&path(&inst(&plan, 5)))
        .await
        .problem(404, "projection_not_found");
}

/// DELETE /v1/transactions/{rule_id}?scope=this&date=D removes occurrence D
/// also when it was stored: it does not come back as a projection.
async fn delete_rule_occurrence_by_date_when_stored(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 15, "description": "Seguro",
               "date": "2026-10-20", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let stored = patch_ok(
        &app,
        &rec(&rule_id, "2026-12-20"),
        json!({"scope": "this", "notes": "guardada"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = delete_ok(
        &app,
        &format!("{}?scope=this&date=2026-12-20", path(&rule_id)),
    )
    .await;
    assert!(affected(&result).contains(&stored), "{result}");
    app.get(&path(&stored)).await.problem(404, "not_found");
    let rows = list(&app, "from=2026-10-01&to=2027-03-31").await;
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        [
            "2026-10-20",
            "2026-11-20",
            "2027-01-20",
            "2027-02-20",
            "2027-03-20"
        ],
        "the occurrence of 2026-12-20 is gone"
    );
    app.get(&path(&rec(&rule_id, "2026-12-20")))
        .await
        .problem(404, "projection_not_found");
}

/// DELETE /v1/transactions/{rule_id}?scope=future&date=D with a cut-off
/// day that is not itself an occurrence ends the rule before D.
async fn delete_rule_future_from_any_cut_off_day(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 15, "description": "Revista",
               "date": "2026-10-20", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    delete_ok(
        &app,
        &format!("{}?scope=future&date=2027-01-01", path(&rule_id)),
    )
    .await;
    let rows = list(&app, "from=2026-10-01&to=2027-09-30").await;
    assert_eq!(
        dates_of_rule(&rows, &rule_id),
        ["2026-10-20", "2026-11-20", "2026-12-20"]
    );
}

// ------------------------------------------------------------- cross-user

async fn other_users_series_are_not_found(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Conta").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 70, "description": "Plano",
               "date": "2026-10-03", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let (first, plan) = purchase(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 900, "description": "Celular",
               "date": "2026-11-02", "installments": {"count": 3}}),
    )
    .await;
    let stored = patch_ok(
        &app,
        &rec(&rule_id, "2026-11-03"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await["updated_transaction_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let window = "from=2026-10-01&to=2027-09-30";
    let before = list(&app, window).await;
    let balance_before = balance(&app, &account).await;
    assert_eq!(before.len(), 12 + 3);

    let (_, key) = app.new_user().await;
    let as_other = |method: Method, url: String, body: Option<Value>| {
        let app = &app;
        let key = key.clone();
        async move { app.call(method, &url, Some(&key), body).await }
    };
    // What a missing projection and a missing row look like to anyone.
    let missing_handle = app
        .get(&path(&rec(&new_uuid(), "2026-12-03")))
        .await
        .body
        .clone();
    let missing_row = app.get(&path(&new_uuid())).await.body.clone();

    let handles = [rec(&rule_id, "2026-12-03"), inst(&plan, 2)];
    for handle in &handles {
        let url = path(handle);
        let r = as_other(Method::GET, url.clone(), None).await;
        r.problem(404, "projection_not_found");
        assert_eq!(r.body, missing_handle);
        for scope in ["this", "future", "all"] {
            as_other(
                Method::PATCH,
                url.clone(),
                Some(json!({"scope": scope, "amount": 1})),
            )
            .await
            .problem(404, "projection_not_found");
            as_other(Method::DELETE, format!("{url}?scope={scope}"), None)
                .await
                .problem(404, "projection_not_found");
        }
        as_other(Method::DELETE, format!("{url}?hide_series=true"), None)
            .await
            .problem(404, "projection_not_found");
    }
    // The rule and purchase ids, and stored rows of the series.
    for id in [&rule_id, &plan, &stored, &id_of(&first)] {
        let url = path(id);
        let r = as_other(Method::GET, url.clone(), None).await;
        r.problem(404, "not_found");
        assert_eq!(r.body, missing_row);
        as_other(Method::PATCH, url.clone(), Some(json!({"amount": 1})))
            .await
            .problem(404, "not_found");
        for scope in ["future", "all"] {
            as_other(
                Method::PATCH,
                url.clone(),
                Some(json!({"scope": scope, "amount": 1})),
            )
            .await
            .problem(404, "not_found");
        }
        for query in [
            "",
            "?scope=this",
            "?scope=all",
            "?scope=all&preserve_posted=false",
            "?scope=this&date=2026-12-03",
            "?scope=future&date=2026-12-03",
            "?hide_series=true",
        ] {
            as_other(Method::DELETE, format!("{url}{query}"), None)
                .await
                .problem(404, "not_found");
        }
    }
    // The other user sees none of it in their list.
    let theirs = as_other(Method::GET, format!("/v1/transactions?{window}"), None).await;
    assert_eq!(theirs.ok(200)["data"], json!([]));

    // Nothing changed for the owner.
    assert_eq!(list(&app, window).await, before);
    assert_eq!(balance(&app, &account).await, balance_before);
    for handle in &handles {
        assert_eq!(&read(&app, handle).await, find(&before, handle));
    }
}

/// A POSTED row kept after its rule was deleted stands alone: scoped
/// edits of it are plain row edits, not 404s.
async fn rows_outliving_their_rule_are_plain_rows(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Main").await;
    let (rule_id, _) = rule(
        &app,
        json!({"account_id": account, "type": "DEBIT", "amount": 80, "description": "Internet",
               "date": "2026-09-10", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let paid = patch_ok(
        &app,
        &rec(&rule_id, "2026-10-10"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await;
    let row = paid["updated_transaction_id"].as_str().unwrap().to_owned();
    delete_ok(&app, &format!("/v1/transactions/{rule_id}?scope=all")).await;
    assert_eq!(read(&app, &row).await["status"], json!("POSTED"));
    for scope in ["future", "all"] {
        let result = patch_ok(&app, &row, json!({"scope": scope, "notes": scope})).await;
        assert_eq!(result["updated_transaction_id"], json!(row));
        assert_eq!(read(&app, &row).await["notes"], json!(scope));
    }
    // The rule produces nothing any more.
    app.get(&path(&rec(&rule_id, "2026-11-10")))
        .await
        .problem(404, "projection_not_found");
    // Deleting the row is a plain delete.
    delete_ok(&app, &path(&row)).await;
    app.get(&path(&row)).await.problem(404, "not_found");
}

on_both_backends!(
    rows_outliving_their_rule_are_plain_rows,
    installment_purchase_is_split_and_projected,
    installment_dates_keep_the_day_clamped,
    installment_creation_is_validated,
    recurrence_rule_is_created_and_projected,
    recurrence_interval_end_and_count_limit_occurrences,
    recurrence_creation_is_validated,
    handles_resolve_like_the_list_or_404,
    filters_apply_to_projections,
    pages_merge_stored_and_projected_entries,
    patch_installments_by_scope,
    patch_recurrence_by_scope,
    delete_recurrence_projections,
    delete_installment_projections,
    delete_by_rule_id,
    split_rule_keeps_its_count,
    delete_future_installments_from_a_stored_row,
    delete_future_installments_removes_stored_later_ones,
    delete_rule_occurrence_by_date_when_stored,
    delete_rule_future_from_any_cut_off_day,
    other_users_series_are_not_found,
);
