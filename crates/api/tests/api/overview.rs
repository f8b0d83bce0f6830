//! GET /v1/overview (DECISIONS §12): every figure equals what the list,
//! bills and used-limit endpoints give for the same entries, on a generated
//! user with many accounts and cards; plus focused scenarios (empty user,
//! one card, bill payments, future installments, accounts left out of the
//! totals, the month in São Paulo) and the scopes the endpoint needs.
//!
//! Money is compared exactly: bodies are read from their raw text with
//! every JSON number kept as its digits (see [`exact_json`]), then summed as
//! integer cents.

use axum::http::Method;
use jiff::ToSpan;
use jiff::civil::Date;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};

use cofre_api::ApiConfig;
use cofre_domain::auth::Scope;

use crate::on_both_backends;
use crate::support::{Backend, TODAY, TestApp};

/// The current month with the pinned clock, and `next_bills`' horizon
/// (today + 30 days).
pub(crate) const MONTH_FROM: &str = "2026-11-01";
pub(crate) const MONTH_TO: &str = "2026-11-30";
const NEXT_BILLS_TO: &str = "2026-12-22";
/// Everything the generated user holds lies between these days.
const HISTORY_FROM: &str = "2025-01-01";
const HISTORY_TO: &str = "2029-12-31";

// ------------------------------------------------------------- exact money

/// Parses a JSON body keeping every number as a string of its exact digits
/// (`"amount": 12.30` becomes `"amount": "12.30"`), so that amounts are
/// never read through f64.
pub(crate) fn exact_json(text: &str) -> Value {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut chars = text.chars().peekable();
    let (mut in_string, mut escaped) = (false, false);
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '-' || c.is_ascii_digit() {
            out.push('"');
            out.push(c);
            while let Some(&n) = chars.peek() {
                if n.is_ascii_digit() || matches!(n, '.' | 'e' | 'E' | '+' | '-') {
                    out.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push('"');
        } else {
            out.push(c);
        }
    }
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Integer cents of an exact amount (`"-1234.5"` -> -123450); at most two
/// decimals.
#[track_caller]
pub(crate) fn cents(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not an exact amount: {value}"));
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (units, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(
        fraction.len() <= 2 && !units.is_empty(),
        "not an amount with at most 2 decimals: {text}"
    );
    let units: i64 = units.parse().unwrap_or_else(|_| panic!("amount {text}"));
    let fraction: i64 = format!("{fraction:0<2}")
        .parse()
        .unwrap_or_else(|_| panic!("amount {text}"));
    let value = units * 100 + fraction;
    if negative { -value } else { value }
}

/// A request amount from cents (the shortest decimal of `cents / 100`).
pub(crate) fn money(cents: i64) -> Value {
    json!(cents as f64 / 100.0)
}

/// `R$ 1.234,56`, written independently of the server's formatter.
fn brl(cents: i64) -> String {
    let abs = cents.unsigned_abs();
    let units = (abs / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in units.chars().enumerate() {
        if i > 0 && (units.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(digit);
    }
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}R$ {grouped},{:02}", abs % 100)
}

#[test]
fn helpers_read_and_write_money_exactly() {
    let body = exact_json(
        r#"{"a": 1234.50, "b": -0.07, "c": [1, 2.5], "s": "x\"1.5", "t": true, "n": null}"#,
    );
    assert_eq!(cents(&body["a"]), 123_450);
    assert_eq!(cents(&body["b"]), -7);
    assert_eq!(cents(&body["c"][1]), 250);
    assert_eq!(body["s"], "x\"1.5");
    assert_eq!(body["t"], true);
    assert_eq!(body["n"], Value::Null);
    assert_eq!(brl(123_456), "R$ 1.234,56");
    assert_eq!(brl(-100_000_005), "-R$ 1.000.000,05");
    assert_eq!(brl(0), "R$ 0,00");
    assert_eq!(money(1_999).to_string(), "19.99");
}

// ------------------------------------------------------------ HTTP helpers

pub(crate) fn date(text: &str) -> Date {
    text.parse().expect("date")
}

/// `[from, to]` cut into windows the list endpoints take (to - from <=
/// 365 days).
pub(crate) fn windows(from: &str, to: &str) -> Vec<(Date, Date)> {
    let (mut start, end) = (date(from), date(to));
    let mut out = Vec::new();
    while start <= end {
        let stop = start.checked_add(365.days()).unwrap().min(end);
        out.push((start, stop));
        start = stop.tomorrow().unwrap();
    }
    out
}

/// A 200 body, read exactly.
pub(crate) async fn get_exact(app: &TestApp, path: &str) -> Value {
    let response = app.get(path).await;
    assert_eq!(response.status, 200, "{path}: {}", response.text);
    exact_json(&response.text)
}

pub(crate) async fn overview(app: &TestApp) -> Value {
    get_exact(app, "/v1/overview").await
}

/// Every entry of a transaction list query, page by page, read exactly.
pub(crate) async fn list(app: &TestApp, query: &str, limit: usize) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10_000 {
        let mut url = format!("/v1/transactions?{query}&limit={limit}");
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let page = get_exact(app, &url).await;
        let data = page["data"].as_array().expect("data");
        rows.extend(data.iter().cloned());
        if page["has_more"] == json!(true) {
            assert_eq!(data.len(), limit, "a page with more after it is full");
            cursor = Some(page["next_cursor"].as_str().expect("cursor").to_owned());
        } else {
            return rows;
        }
    }
    panic!("pagination did not end: {query}");
}

/// Every entry of a query over the whole history, window by window.
async fn list_history(app: &TestApp, query: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    for (from, to) in windows(HISTORY_FROM, HISTORY_TO) {
        rows.extend(list(app, &format!("from={from}&to={to}&{query}"), 100).await);
    }
    rows
}

/// Every bill of a card over the whole history, oldest first.
async fn bills(app: &TestApp, card: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (from, to) in windows(HISTORY_FROM, HISTORY_TO) {
        let body = get_exact(app, &format!("/v1/cards/{card}/bills?from={from}&to={to}")).await;
        assert_eq!(body["card_id"], card);
        out.extend(body["bills"].as_array().expect("bills").iter().cloned());
    }
    for pair in out.windows(2) {
        assert!(
            pair[0]["due_date"].as_str() < pair[1]["due_date"].as_str(),
            "bills oldest first, once each: {pair:?}"
        );
    }
    out
}

pub(crate) fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} in {value}"))
}

fn is_bill_entry(row: &Value) -> bool {
    text(row, "id").starts_with("mocked-bill:")
}

/// An account as the overview sees it.
#[derive(Clone, Debug)]
struct Account {
    id: String,
    title: String,
    is_card: bool,
    counts: bool,
    pay_from: Option<String>,
    archived: bool,
    balance: Option<i64>,
}

async fn accounts(app: &TestApp) -> Vec<Account> {
    let body = get_exact(app, "/v1/accounts").await;
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| {
            let archived = a["archived"] == json!(true);
            Account {
                id: text(a, "id").to_owned(),
                title: text(a, "title").to_owned(),
                is_card: a["type"] == "CREDIT",
                counts: !archived
                    && a["exclude_from_totals"] == json!(false)
                    && a["currency"] == "BRL",
                pay_from: a["pay_bill_from_account_id"].as_str().map(str::to_owned),
                archived,
                balance: (!a["balance"].is_null()).then(|| cents(&a["balance"])),
            }
        })
        .collect()
}

// --------------------------------------------- the overview, derived again

/// Every figure of the overview, as integer cents (and the next bills as
/// the exact JSON the overview shows).
#[derive(Debug, PartialEq, Eq)]
struct Figures {
    bank_balance: i64,
    card_debt: i64,
    open_bills_total: i64,
    net_worth: i64,
    next_bills: Vec<Value>,
    receitas: i64,
    despesas: i64,
    resultado: i64,
    base: i64,
    expected_in: i64,
    bills: i64,
    installments: i64,
    subscriptions: i64,
    scheduled: i64,
    result: i64,
}

fn figures_of(o: &Value) -> Figures {
    let (m, s) = (&o["month"], &o["saldo_previsto"]);
    let c = &s["committed_out"];
    Figures {
        bank_balance: cents(&o["bank_balance"]),
        card_debt: cents(&o["card_debt"]),
        open_bills_total: cents(&o["open_bills_total"]),
        net_worth: cents(&o["net_worth"]),
        next_bills: o["next_bills"].as_array().expect("next_bills").clone(),
        receitas: cents(&m["receitas"]),
        despesas: cents(&m["despesas"]),
        resultado: cents(&m["resultado"]),
        base: cents(&s["base"]),
        expected_in: cents(&s["expected_in"]),
        bills: cents(&c["bills"]),
        installments: cents(&c["installments"]),
        subscriptions: cents(&c["subscriptions"]),
        scheduled: cents(&c["scheduled"]),
        result: cents(&s["result"]),
    }
}

/// `explain`: one pt-BR line per term, amounts as `R$ 1.234,56`.
#[track_caller]
fn assert_explain(o: &Value) {
    let f = figures_of(o);
    let expected = [
        format!("Saldo atual em contas: {}", brl(f.base)),
        format!("Receitas previstas no mês: {}", brl(f.expected_in)),
        format!("Faturas a pagar: {}", brl(f.bills)),
        format!("Parcelas a pagar: {}", brl(f.installments)),
        format!("Assinaturas e contas recorrentes: {}", brl(f.subscriptions)),
        format!("Outros lançamentos agendados: {}", brl(f.scheduled)),
        format!("Saldo previsto no fim do mês: {}", brl(f.result)),
    ];
    assert_eq!(o["saldo_previsto"]["explain"], json!(expected));
}

/// The overview computed from the other endpoints alone.
async fn derive(app: &TestApp, page_size: usize) -> Figures {
    let accounts = accounts(app).await;
    let counting: HashSet<&str> = accounts
        .iter()
        .filter(|a| a.counts)
        .map(|a| a.id.as_str())
        .collect();
    let counting_bank = |id: &str| {
        accounts
            .iter()
            .any(|a| a.id == id && a.counts && !a.is_card)
    };
    let bank_balance: i64 = accounts
        .iter()
        .filter(|a| a.counts && !a.is_card)
        .map(|a| a.balance.expect("a counting account has a balance"))
        .sum();

    let (mut card_debt, mut open_bills_total, mut bills_due) = (0, 0, 0);
    let mut next_bills: Vec<Value> = Vec::new();
    for card in accounts.iter().filter(|a| a.is_card && a.counts) {
        let used = get_exact(app, &format!("/v1/cards/{}/used-limit", card.id)).await;
        card_debt += cents(&used["used_limit"]);
        for bill in bills(app, &card.id).await {
            let (due, unpaid) = (text(&bill, "due_date"), bill["status"] != "paga");
            let outstanding = cents(&bill["outstanding_amount"]);
            if unpaid && text(&bill, "cycle_start_date") <= TODAY {
                open_bills_total += outstanding;
            }
            if unpaid && due <= MONTH_TO {
                bills_due += outstanding;
            }
            if (TODAY..=NEXT_BILLS_TO).contains(&due) && outstanding > 0 {
                next_bills.push(json!({
                    "projected_bill_id": bill["projected_bill_id"],
                    "card_account_id": card.id,
                    "description": format!("Fatura {}", card.title),
                    "amount": bill["outstanding_amount"],
                    "due_date": due,
                    "amount_is_estimate": bill["amount_is_estimate"],
                }));
            }
        }
    }
    next_bills.sort_by(|a, b| {
        (text(a, "due_date"), text(a, "projected_bill_id"))
            .cmp(&(text(b, "due_date"), text(b, "projected_bill_id")))
    });

    let month = list(app, &format!("from={MONTH_FROM}&to={MONTH_TO}"), page_size).await;
    let (mut receitas, mut despesas) = (0, 0);
    let (mut expected_in, mut installments, mut subscriptions, mut scheduled) = (0, 0, 0, 0);
    for row in &month {
        let amount = cents(&row["amount"]);
        let credit = row["type"] == "CREDIT";
        // A bill entry is its card's money: it counts when the paying
        // account and the card both count.
        let card_counts = !is_bill_entry(row) || counting.contains(text(row, "bill_to_account_id"));
        if counting.contains(text(row, "account_id")) && card_counts {
            if credit {
                receitas += amount;
            } else {
                despesas += amount;
            }
        }
        if row["status"] == "POSTED"
            || !counting_bank(text(row, "account_id"))
            || is_bill_entry(row)
        {
            continue;
        }
        if credit {
            expected_in += amount;
        } else if !row["installment"].is_null() {
            installments += amount;
        } else if !row["recurrence_id"].is_null() {
            subscriptions += amount;
        } else if row["projected"] == json!(false) {
            scheduled += amount;
        } else {
            panic!("a projected DEBIT of no kind: {row}");
        }
    }
    let committed = bills_due + installments + subscriptions + scheduled;
    Figures {
        bank_balance,
        card_debt,
        open_bills_total,
        net_worth: bank_balance - card_debt,
        next_bills,
        receitas,
        despesas,
        resultado: receitas - despesas,
        base: bank_balance,
        expected_in,
        bills: bills_due,
        installments,
        subscriptions,
        scheduled,
        result: bank_balance + expected_in - committed,
    }
}

/// The overview equals what the other endpoints give, with the month list
/// read at two page sizes.
async fn assert_consistent(app: &TestApp) -> Figures {
    let o = overview(app).await;
    let shown = figures_of(&o);
    assert_eq!(shown, derive(app, 100).await, "overview: {o}");
    assert_eq!(shown, derive(app, 7).await, "overview (pages of 7): {o}");
    assert_explain(&o);
    shown
}

/// The sources the overview is checked against agree among themselves:
/// balances are the accounts' POSTED rows; each bill is its cycle's card
/// rows (payments left out) less the payments it lists; the used limit is
/// the unpaid started bills plus the installments after the open cycle;
/// the month's bill entries are the bills with something left to pay.
async fn assert_sources_agree(app: &TestApp) {
    let accounts = accounts(app).await;
    for bank in accounts.iter().filter(|a| !a.is_card && !a.archived) {
        let query = format!("view=ledger&status=POSTED&account_id={}", bank.id);
        let mut rows = list_history(app, &query).await;
        rows.extend(list_history(app, &format!("{query}&hidden=true")).await);
        let sum: i64 = rows
            .iter()
            .map(|r| match r["type"].as_str() {
                Some("CREDIT") => cents(&r["amount"]),
                _ => -cents(&r["amount"]),
            })
            .sum();
        assert_eq!(Some(sum), bank.balance, "balance of {}", bank.title);
    }

    let mut bills_of: BTreeMap<String, Value> = BTreeMap::new();
    for card in accounts.iter().filter(|a| a.is_card) {
        let all = bills(app, &card.id).await;
        // Payments: their bank-side rows, and the transfer groups that tie
        // the hidden card-side legs to them.
        let mut payment_groups = HashSet::new();
        let mut paid_of = Vec::new();
        for bill in &all {
            let mut paid = 0;
            for id in bill["settled_payment_ids"].as_array().expect("ids") {
                let row =
                    get_exact(app, &format!("/v1/transactions/{}", id.as_str().unwrap())).await;
                let row = &row["transaction"];
                assert_eq!(row["type"], "DEBIT");
                assert_eq!(row["bill_to_account_id"], card.id.as_str());
                payment_groups.insert(text(row, "transfer_group_id").to_owned());
                paid += cents(&row["amount"]);
            }
            paid_of.push(paid);
        }
        let mut open_cycle_close = None;
        let (mut unpaid_started, mut card_rows_seen) = (0, 0);
        for (bill, paid) in all.iter().zip(paid_of) {
            let (start, close, due) = (
                text(bill, "cycle_start_date"),
                text(bill, "close_date"),
                text(bill, "due_date"),
            );
            if (start..=close).contains(&TODAY) {
                open_cycle_close = Some(close.to_owned());
            }
            let handle = format!("mocked-bill:{}:{}{}", card.id, &due[..4], &due[5..7]);
            let query = format!("view=ledger&bill_id={handle}&from={start}&to={close}");
            let mut rows = list(app, &query, 100).await;
            rows.extend(list(app, &format!("{query}&hidden=true"), 100).await);
            let mut amount = 0;
            let mut projected = false;
            for row in &rows {
                assert_eq!(row["account_id"], card.id.as_str());
                assert!((start..=close).contains(&text(row, "date")), "{row}");
                if row["transfer_group_id"]
                    .as_str()
                    .is_some_and(|g| payment_groups.contains(g))
                {
                    continue;
                }
                projected |= row["projected"] == json!(true);
                amount += match row["type"].as_str() {
                    Some("DEBIT") => cents(&row["amount"]),
                    _ => -cents(&row["amount"]),
                };
                card_rows_seen += 1;
            }
            let outstanding = (amount - paid).max(0);
            assert_eq!(cents(&bill["amount"]), amount, "amount of {bill}");
            assert_eq!(cents(&bill["outstanding_amount"]), outstanding, "{bill}");
            assert_eq!(
                bill["amount_is_estimate"],
                json!(TODAY <= close || projected),
                "{bill}"
            );
            let paga = paid >= amount && (paid > 0 || close < TODAY);
            let status = if paga {
                "paga"
            } else if TODAY <= close {
                "aberta"
            } else if TODAY <= due {
                "fechada"
            } else {
                "vencida"
            };
            assert_eq!(bill["status"], status, "{bill}");
            if paga {
                assert_eq!(bill["projected_bill_id"], Value::Null);
            } else {
                assert_eq!(bill["projected_bill_id"], handle.as_str());
            }
            if status != "paga" && start <= TODAY {
                unpaid_started += outstanding;
            }
            bills_of.insert(handle, bill.clone());
        }
        assert!(card_rows_seen > 0 || all.iter().all(|b| cents(&b["amount"]) == 0));

        // Used limit: unpaid started bills plus the installments after the
        // open cycle.
        let close = open_cycle_close.expect("the open cycle is listed");
        let after = date(&close).tomorrow().unwrap().to_string();
        let mut later = 0;
        for (from, to) in windows(&after, HISTORY_TO) {
            let query = format!(
                "view=ledger&account_id={}&is_installments=true&type=DEBIT&from={from}&to={to}",
                card.id
            );
            later += list(app, &query, 100)
                .await
                .iter()
                .map(|r| cents(&r["amount"]))
                .sum::<i64>();
        }
        let used = get_exact(app, &format!("/v1/cards/{}/used-limit", card.id)).await;
        assert_eq!(
            cents(&used["used_limit"]),
            unpaid_started + later,
            "used limit of {}",
            card.title
        );
        assert_eq!(
            cents(&used["available"]),
            cents(&used["limit"]) - cents(&used["used_limit"])
        );
    }

    // The bill entries of the month's cashflow view are exactly the bills
    // due in the month with something left to pay, on the paying account.
    let month = list(app, &format!("from={MONTH_FROM}&to={MONTH_TO}"), 100).await;
    let mut listed = HashSet::new();
    for row in month.iter().filter(|r| is_bill_entry(r)) {
        let handle = text(row, "id");
        let bill = bills_of.get(handle).unwrap_or_else(|| panic!("{handle}"));
        let card = row["bill_to_account_id"].as_str().expect("card");
        let card = accounts.iter().find(|a| a.id == card).expect("card");
        assert_eq!(row["amount"], bill["outstanding_amount"], "{row}");
        assert_eq!(row["date"], bill["due_date"]);
        assert_eq!(row["type"], "DEBIT");
        assert_eq!(row["status"], "PENDING");
        assert_eq!(
            text(row, "account_id"),
            card.pay_from.as_deref().unwrap_or(&card.id)
        );
        listed.insert(handle.to_owned());
    }
    let due_in_month: HashSet<String> = bills_of
        .iter()
        .filter(|(_, b)| {
            (MONTH_FROM..=MONTH_TO).contains(&text(b, "due_date"))
                && cents(&b["outstanding_amount"]) > 0
        })
        .map(|(h, _)| h.clone())
        .collect();
    assert_eq!(listed, due_in_month);
}

// ------------------------------------------------------ the generated user

/// xorshift64*: the same user on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn cents(&mut self, low: i64, high: i64) -> i64 {
        low + self.below((high - low + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn date(&mut self, from: &str, to: &str) -> String {
        let (from, to) = (date(from), date(to));
        let days = (to - from).get_days() as u64;
        from.checked_add((self.below(days + 1) as i64).days())
            .unwrap()
            .to_string()
    }
}

pub(crate) struct Generated {
    pub(crate) app: TestApp,
    pub(crate) cards: Vec<(String, Option<String>)>,
    pub(crate) corrente: String,
    pub(crate) excluida: String,
    pub(crate) antiga: String,
    pub(crate) velho: String,
}

pub(crate) async fn generated_user(backend: Backend) -> Generated {
    let config = ApiConfig {
        rate_limit_per_minute: 0,
        rate_limit_per_day: 0,
        ..ApiConfig::default()
    };
    let app = TestApp::start_with(backend, config).await;
    let mut rng = Rng(0x00c0_ffee_5eed_2026);

    let bank = |body: Value| app.account(body);
    let corrente =
        bank(json!({"type": "BANK", "title": "Corrente", "initial_balance": 8000})).await;
    let reserva = bank(
        json!({"type": "BANK", "sub_type": "SAVINGS_ACCOUNT", "title": "Reserva",
        "initial_balance": 1234.56}),
    )
    .await;
    let excluida = bank(
        json!({"type": "BANK", "title": "Fora dos totais", "initial_balance": 1000,
        "exclude_from_totals": true}),
    )
    .await;
    let antiga = bank(json!({"type": "BANK", "title": "Antiga", "initial_balance": 500})).await;
    let dolar = bank(
        json!({"type": "BANK", "title": "Conta em dólar", "currency_code": "USD",
        "initial_balance": 300}),
    )
    .await;
    let card = |title: &str, close: u8, due: u8, pay_from: Option<&String>, extra: Value| {
        let mut body = json!({"type": "CREDIT", "title": title, "credit_close_day": close,
            "credit_due_day": due, "credit_limit": 20000});
        if let Some(from) = pay_from {
            body["pay_bill_from_account_id"] = json!(from);
        }
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        app.account(body)
    };
    let nubank = card("Nubank", 3, 10, Some(&corrente), json!({})).await;
    let inter = card("Inter", 29, 5, Some(&reserva), json!({})).await;
    let xp = card("XP", 31, 8, None, json!({})).await;
    let amex = card(
        "Amex",
        10,
        20,
        Some(&dolar),
        json!({"currency_code": "USD"}),
    )
    .await;
    // Cards outside the totals whose bills a counting account pays.
    let fora = card(
        "Cartão fora",
        15,
        25,
        Some(&corrente),
        json!({"exclude_from_totals": true}),
    )
    .await;
    // Due today: a next bill and a bill to pay this month.
    let velho = card("Velho", 15, 22, Some(&reserva), json!({})).await;
    let cards = vec![
        (nubank.clone(), Some(corrente.clone())),
        (inter.clone(), Some(reserva.clone())),
        (xp.clone(), None),
        (amex.clone(), Some(dolar.clone())),
        (fora.clone(), Some(corrente.clone())),
        (velho.clone(), Some(reserva.clone())),
    ];

    // Card purchases and refunds over the last six months, a few dated
    // ahead, and installment purchases (some running into next year).
    for (card, _) in &cards {
        for i in 0..14 {
            let refund = rng.chance(10);
            app.tx(
                json!({"account_id": card, "type": if refund { "CREDIT" } else { "DEBIT" },
                "amount": money(rng.cents(500, 60_000)), "description": format!("Compra {i}"),
                "date": rng.date("2026-05-01", TODAY)}),
            )
            .await;
        }
        for i in 0..2 {
            app.tx(json!({"account_id": card, "type": "DEBIT", "amount": money(rng.cents(1_000, 20_000)),
                "description": format!("Agendada {i}"), "date": rng.date("2026-11-23", "2027-02-28")}))
            .await;
        }
        for i in 0..2 {
            app.tx(json!({"account_id": card, "type": "DEBIT", "amount": money(rng.cents(10_000, 300_000)),
                "description": format!("Parcelada {i}"), "date": rng.date("2026-05-01", "2026-11-20"),
                "installments": {"count": 2 + rng.below(11)}}))
            .await;
        }
    }
    // Bank rows: past ones, some in this month, explicit PENDING ones in
    // this month, and scheduled ones ahead.
    for account in [&corrente, &reserva, &excluida, &antiga, &dolar] {
        for i in 0..10 {
            let credit = rng.chance(35);
            app.tx(
                json!({"account_id": account, "type": if credit { "CREDIT" } else { "DEBIT" },
                "amount": money(rng.cents(100, 90_000)), "description": format!("Lançamento {i}"),
                "date": rng.date("2026-05-01", TODAY)}),
            )
            .await;
        }
        for i in 0..3 {
            let credit = rng.chance(40);
            app.tx(
                json!({"account_id": account, "type": if credit { "CREDIT" } else { "DEBIT" },
                "amount": money(rng.cents(100, 50_000)), "description": format!("Novembro {i}"),
                "date": rng.date(MONTH_FROM, TODAY)}),
            )
            .await;
        }
        for (i, tx_type) in ["CREDIT", "DEBIT"].into_iter().enumerate() {
            app.tx(
                json!({"account_id": account, "type": tx_type, "status": "PENDING",
                "amount": money(rng.cents(100, 40_000)), "description": format!("A compensar {i}"),
                "date": rng.date(MONTH_FROM, TODAY)}),
            )
            .await;
        }
        for i in 0..4 {
            let credit = rng.chance(40);
            app.tx(
                json!({"account_id": account, "type": if credit { "CREDIT" } else { "DEBIT" },
                "amount": money(rng.cents(100, 70_000)), "description": format!("Futuro {i}"),
                "date": rng.date("2026-11-23", "2027-01-31")}),
            )
            .await;
        }
    }
    // Installments on bank accounts.
    let plan = app
        .tx(json!({"account_id": corrente, "type": "DEBIT", "amount": 900, "description": "Geladeira",
            "date": "2026-09-15", "installments": {"count": 6}}))
        .await;
    let plan = text(&plan["installment"], "purchase_id").to_owned();
    app.tx(
        json!({"account_id": reserva, "type": "DEBIT", "amount": 401.01, "description": "Curso",
        "date": "2026-08-25", "installments": {"count": 4}}),
    )
    .await;
    app.tx(
        json!({"account_id": excluida, "type": "DEBIT", "amount": 300, "description": "Sofá",
        "date": "2026-10-20", "installments": {"count": 3}}),
    )
    .await;
    // Recurrence rules: on banks (one excluded, one in USD) and on a card.
    let rule = |body: Value| {
        let app = &app;
        async move {
            let response = app.post("/v1/transactions", body).await;
            text(response.ok(201), "recurrence_id").to_owned()
        }
    };
    let salario = rule(
        json!({"account_id": corrente, "type": "CREDIT", "amount": 6500, "description": "Salário",
        "date": "2026-06-05", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let aluguel = rule(
        json!({"account_id": corrente, "type": "DEBIT", "amount": 1800, "description": "Aluguel",
        "date": "2026-05-10", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    let feira = rule(
        json!({"account_id": reserva, "type": "DEBIT", "amount": 85.5, "description": "Feira",
        "date": "2026-10-01", "recurrence": {"frequency": "WEEKLY", "count": 12}}),
    )
    .await;
    rule(json!({"account_id": excluida, "type": "CREDIT", "amount": 400, "description": "Aluguel recebido",
        "date": "2026-07-01", "recurrence": {"frequency": "MONTHLY"}}))
    .await;
    rule(
        json!({"account_id": dolar, "type": "DEBIT", "amount": 10, "description": "Hosting",
        "date": "2026-06-20", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    rule(
        json!({"account_id": xp, "type": "DEBIT", "amount": 39.9, "description": "Streaming",
        "date": "2026-06-12", "recurrence": {"frequency": "MONTHLY"}}),
    )
    .await;
    // Occurrences and installments edited or deleted one by one.
    let edit = |handle: String, body: Value| {
        let app = &app;
        async move {
            app.patch(&format!("/v1/transactions/{handle}"), body)
                .await
                .ok(200);
        }
    };
    edit(
        format!("mocked-recurrence:{salario}:2026-10-05"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await;
    edit(
        format!("mocked-recurrence:{aluguel}:2026-11-10"),
        json!({"scope": "this", "amount": 1850}),
    )
    .await;
    edit(
        format!("mocked-installment:{plan}:3"),
        json!({"scope": "this", "status": "POSTED"}),
    )
    .await;
    app.delete(&format!(
        "/v1/transactions/mocked-recurrence:{feira}:2026-11-12"
    ))
    .await
    .ok(200);
    // Transfers, past and scheduled, among banks and to a card.
    for (from, to, cents, day) in [
        (&corrente, &reserva, 70_000, "2026-08-01"),
        (&corrente, &excluida, 25_000, "2026-11-03"),
        (&reserva, &corrente, 10_000, "2026-11-26"),
        (&corrente, &nubank, 15_000, "2026-10-15"),
        (&antiga, &corrente, 12_000, "2026-09-09"),
    ] {
        app.post(
            "/v1/transfers",
            json!({"from_account_id": from, "to_account_id": to, "amount": money(cents),
                "description": "Transferência", "date": day}),
        )
        .await
        .ok(201);
    }

    Generated {
        app,
        cards,
        corrente,
        excluida,
        antiga,
        velho,
    }
}

/// Pays the past bills of every card: in full with `{}`, in part with an
/// amount, or not at all, in turn; the bills due this month stay unpaid
/// (overdue) except one part payment; one payment ahead of an open bill is
/// dated in the future.
pub(crate) async fn pay_bills(g: &Generated) {
    let app = &g.app;
    let mut turn = 0;
    for (card, pay_from) in &g.cards {
        for bill in bills(app, card).await {
            let (due, outstanding) = (text(&bill, "due_date"), cents(&bill["outstanding_amount"]));
            if due >= TODAY || outstanding == 0 {
                continue;
            }
            let handle = text(&bill, "projected_bill_id");
            let path = format!("/v1/transactions/{handle}");
            turn += 1;
            let in_month = due >= MONTH_FROM;
            // Turns 0 and 1: in full; 2: a third; 3: unpaid. Bills due this
            // month stay unpaid, but for a part payment on the card with no
            // paying account.
            let mut body = match turn % 4 {
                _ if in_month && pay_from.is_some() => continue,
                0 | 1 if !in_month => json!({}),
                2 => json!({"amount": money((outstanding / 3).max(1))}),
                _ => continue,
            };
            if pay_from.is_none() {
                // No paying account on the card: the body must name one.
                app.patch(&path, json!({})).await.invalid(&["account_id"]);
                let from = if turn % 2 == 0 {
                    &g.corrente
                } else {
                    &g.excluida
                };
                body["account_id"] = json!(from);
            }
            let result = app.patch(&path, body).await;
            let paid = text(result.ok(200), "updated_transaction_id").to_owned();
            let after = bills(app, card).await;
            let after = after.iter().find(|b| b["due_date"] == due).unwrap();
            assert!(
                after["settled_payment_ids"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(paid))
            );
        }
    }
    // Part of the Inter bill due Dec 5 (open), paid ahead on Nov 28: a
    // scheduled PENDING debit on Reserva.
    let (inter, _) = &g.cards[1];
    app.patch(
        &format!("/v1/transactions/mocked-bill:{inter}:202612"),
        json!({"amount": 50, "date": "2026-11-28"}),
    )
    .await
    .ok(200);
}

async fn overview_equals_the_list_endpoints(backend: Backend) {
    let g = generated_user(backend).await;
    let app = &g.app;
    let before = assert_consistent(app).await;
    assert_sources_agree(app).await;
    // The generated user exercises every term.
    assert!(before.next_bills.len() >= 3, "{before:?}");
    assert_eq!(before.next_bills[0]["due_date"], TODAY);
    for value in [
        before.card_debt,
        before.open_bills_total,
        before.receitas,
        before.despesas,
        before.expected_in,
        before.bills,
        before.installments,
        before.subscriptions,
        before.scheduled,
    ] {
        assert!(value > 0, "{before:?}");
    }
    assert!(
        before.card_debt > before.open_bills_total,
        "future installments"
    );

    pay_bills(&g).await;
    let paid = assert_consistent(app).await;
    assert_sources_agree(app).await;
    assert!(paid.open_bills_total < before.open_bills_total);
    assert!(paid.bank_balance < before.bank_balance);

    // Archiving an account or a card takes it out of every figure.
    for account in [&g.antiga, &g.velho] {
        app.patch(
            &format!("/v1/accounts/{account}"),
            json!({"archived": true}),
        )
        .await
        .ok(200);
    }
    let archived = assert_consistent(app).await;
    assert_sources_agree(app).await;
    assert_ne!(archived.bank_balance, paid.bank_balance);
    assert!(archived.card_debt < paid.card_debt);

    // A new rule's occurrences of this month, projected, count in the
    // month at once: the month's projected entries are kept only until the
    // rules change.
    app.post(
        "/v1/transactions",
        json!({"account_id": g.corrente, "type": "DEBIT", "amount": 7.5, "description": "Semanal",
            "date": "2026-10-29", "recurrence": {"frequency": "WEEKLY"}}),
    )
    .await
    .ok(201);
    let weekly = assert_consistent(app).await;
    assert_eq!(
        weekly.despesas,
        archived.despesas + 4 * 750,
        "four in November"
    );
}

// ---------------------------------------------------- focused scenarios

/// The overview of a user, read exactly.
async fn figures(app: &TestApp) -> Figures {
    let o = overview(app).await;
    assert_explain(&o);
    figures_of(&o)
}

fn zero() -> Figures {
    Figures {
        bank_balance: 0,
        card_debt: 0,
        open_bills_total: 0,
        net_worth: 0,
        next_bills: Vec::new(),
        receitas: 0,
        despesas: 0,
        resultado: 0,
        base: 0,
        expected_in: 0,
        bills: 0,
        installments: 0,
        subscriptions: 0,
        scheduled: 0,
        result: 0,
    }
}

async fn empty_user_has_a_zero_overview(backend: Backend) {
    let app = TestApp::start(backend).await;
    let response = app.get("/v1/overview").await;
    assert_eq!(response.status, 200, "{}", response.text);
    let o = exact_json(&response.text);
    let mut keys: Vec<&String> = o.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "bank_balance",
            "budgets",
            "card_debt",
            "month",
            "net_worth",
            "next_bills",
            "open_bills_total",
            "saldo_previsto"
        ]
    );
    // Two decimals on every amount.
    assert_eq!(o["bank_balance"], "0.00");
    assert_eq!(o["saldo_previsto"]["committed_out"]["bills"], "0.00");
    assert_eq!(
        o["budgets"],
        json!({"count": "0", "over": "0", "warning": "0"})
    );
    assert_eq!(figures_of(&o), zero());
    assert_explain(&o);
    assert_eq!(
        o["saldo_previsto"]["explain"][0],
        "Saldo atual em contas: R$ 0,00"
    );
    // A bank account with no rows changes nothing.
    app.bank("Conta").await;
    assert_eq!(figures(&app).await, zero());
}

async fn one_card_one_purchase(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 1000}))
        .await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Nubank", "credit_close_day": 3, "credit_due_day": 10,
            "credit_limit": 5000, "pay_bill_from_account_id": bank}),
        )
        .await;
    // Nov 20 is in the cycle Nov 4..Dec 3: the bill due Dec 10.
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 123.45, "description": "Mercado",
        "date": "2026-11-20"}),
    )
    .await;
    let december = format!("mocked-bill:{card}:202612");
    let next = json!({"projected_bill_id": december, "card_account_id": card, "description": "Fatura Nubank",
        "amount": "123.45", "due_date": "2026-12-10", "amount_is_estimate": true});
    let mut expected = Figures {
        bank_balance: 100_000,
        card_debt: 12_345,
        open_bills_total: 12_345,
        net_worth: 100_000 - 12_345,
        next_bills: vec![next.clone()],
        base: 100_000,
        result: 100_000,
        ..zero()
    };
    assert_eq!(figures(&app).await, expected);

    // Oct 20 is in the cycle Oct 4..Nov 3: the bill due Nov 10, overdue.
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 50, "description": "Farmácia",
        "date": "2026-10-20"}),
    )
    .await;
    let november = format!("mocked-bill:{card}:202611");
    expected = Figures {
        card_debt: 17_345,
        open_bills_total: 17_345,
        net_worth: 100_000 - 17_345,
        // The overdue bill is an expense of the month on the paying account
        // and a bill to pay in the forecast, not a next bill.
        despesas: 5_000,
        resultado: -5_000,
        bills: 5_000,
        result: 95_000,
        ..expected
    };
    assert_eq!(figures(&app).await, expected);
    let listed = list(&app, &format!("from={MONTH_FROM}&to={MONTH_TO}"), 50).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], november.as_str());
    assert_eq!(listed[0]["account_id"], bank.as_str());

    // Paid in full through its handle: it leaves the bills to pay; the
    // payment is the month's expense instead, and leaves the bank.
    let paid = app
        .patch(&format!("/v1/transactions/{november}"), json!({}))
        .await;
    let payment = text(paid.ok(200), "updated_transaction_id").to_owned();
    expected = Figures {
        bank_balance: 95_000,
        card_debt: 12_345,
        open_bills_total: 12_345,
        net_worth: 95_000 - 12_345,
        bills: 0,
        base: 95_000,
        result: 95_000,
        ..expected
    };
    assert_eq!(figures(&app).await, expected);
    let listed = list(&app, &format!("from={MONTH_FROM}&to={MONTH_TO}"), 50).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], payment.as_str());

    // A part payment of the December bill: what is left is the next bill.
    app.patch(
        &format!("/v1/transactions/{december}"),
        json!({"amount": 23.45}),
    )
    .await
    .ok(200);
    let mut next_left = next.clone();
    next_left["amount"] = json!("100.00");
    expected = Figures {
        bank_balance: 92_655,
        card_debt: 10_000,
        open_bills_total: 10_000,
        net_worth: 92_655 - 10_000,
        next_bills: vec![next_left],
        despesas: 7_345,
        resultado: -7_345,
        base: 92_655,
        result: 92_655,
        ..expected
    };
    assert_eq!(figures(&app).await, expected);

    // The rest in full: no next bill, nothing open, no debt.
    app.patch(&format!("/v1/transactions/{december}"), json!({}))
        .await
        .ok(200);
    expected = Figures {
        bank_balance: 82_655,
        card_debt: 0,
        open_bills_total: 0,
        net_worth: 82_655,
        next_bills: Vec::new(),
        despesas: 17_345,
        resultado: -17_345,
        base: 82_655,
        result: 82_655,
        ..expected
    };
    assert_eq!(figures(&app).await, expected);
    assert_eq!(assert_consistent(&app).await, expected);
}

async fn future_installments_count_in_card_debt_only(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app.bank("Conta").await;
    let card = app
        .account(
            json!({"type": "CREDIT", "title": "Inter", "credit_close_day": 3, "credit_due_day": 10,
            "credit_limit": 5000, "pay_bill_from_account_id": bank}),
        )
        .await;
    // 12 x 100.00 from Nov 20: the first in the open cycle (bill due Dec
    // 10), the other eleven in bills whose cycles have not started.
    app.tx(
        json!({"account_id": card, "type": "DEBIT", "amount": 1200, "description": "Notebook",
        "date": "2026-11-20", "installments": {"count": 12}}),
    )
    .await;
    // 3 x 100.00 on the bank from Oct 25: the second is due this month.
    app.tx(
        json!({"account_id": bank, "type": "DEBIT", "amount": 300, "description": "Curso",
        "date": "2026-10-25", "installments": {"count": 3}}),
    )
    .await;
    let expected = Figures {
        bank_balance: -10_000,
        card_debt: 120_000,
        open_bills_total: 10_000,
        net_worth: -130_000,
        next_bills: vec![
            json!({"projected_bill_id": format!("mocked-bill:{card}:202612"),
            "card_account_id": card, "description": "Fatura Inter", "amount": "100.00",
            "due_date": "2026-12-10", "amount_is_estimate": true}),
        ],
        despesas: 10_000,
        resultado: -10_000,
        base: -10_000,
        installments: 10_000,
        result: -20_000,
        ..zero()
    };
    assert_eq!(figures(&app).await, expected);
    let o = overview(&app).await;
    assert_eq!(
        o["saldo_previsto"]["explain"][6],
        "Saldo previsto no fim do mês: -R$ 200,00"
    );
    let used = get_exact(&app, &format!("/v1/cards/{card}/used-limit")).await;
    assert_eq!(used["used_limit"], "1200.00");
    assert_eq!(used["available"], "3800.00");
    assert_eq!(assert_consistent(&app).await, expected);
    assert_sources_agree(&app).await;

    // Paying ahead the bill due in January does not touch the installments
    // of later bills.
    app.patch(
        &format!("/v1/transactions/mocked-bill:{card}:202701"),
        json!({"amount": 100}),
    )
    .await
    .ok(200);
    let after = figures(&app).await;
    assert_eq!(after.open_bills_total, 10_000);
    assert_eq!(after.bank_balance, -20_000);
    assert_eq!(assert_consistent(&app).await, after);
}

async fn accounts_outside_the_totals_are_left_out(backend: Backend) {
    let app = TestApp::start(backend).await;
    let corrente = app
        .account(json!({"type": "BANK", "title": "Corrente", "initial_balance": 100}))
        .await;
    let archived = app
        .account(json!({"type": "BANK", "title": "Antiga", "initial_balance": 500}))
        .await;
    let excluded = app
        .account(
            json!({"type": "BANK", "title": "Fora", "initial_balance": 700,
            "exclude_from_totals": true}),
        )
        .await;
    let usd = app
        .account(json!({"type": "BANK", "title": "Dólar", "initial_balance": 300, "currency_code": "USD"}))
        .await;
    // Cards outside the totals, their bills paid from the counting account
    // (they stand on it in the cashflow view) or from none.
    let excluded_card = app
        .account(json!({"type": "CREDIT", "title": "Cartão fora", "credit_close_day": 3, "credit_due_day": 10,
            "pay_bill_from_account_id": corrente, "exclude_from_totals": true}))
        .await;
    let usd_card = app
        .account(
            json!({"type": "CREDIT", "title": "Amex", "credit_close_day": 3, "credit_due_day": 10,
            "pay_bill_from_account_id": corrente, "currency_code": "USD"}),
        )
        .await;
    let archived_card = app
        .account(
            json!({"type": "CREDIT", "title": "Velho", "credit_close_day": 3, "credit_due_day": 10,
            "pay_bill_from_account_id": corrente}),
        )
        .await;
    let archived_card_alone = app
        .account(json!({"type": "CREDIT", "title": "Sem conta", "credit_close_day": 3, "credit_due_day": 10}))
        .await;
    for account in [&archived, &excluded, &usd] {
        for (tx_type, status, date) in [
            ("CREDIT", "POSTED", "2026-11-05"),
            ("DEBIT", "POSTED", "2026-11-06"),
            ("CREDIT", "PENDING", "2026-11-25"),
            ("DEBIT", "PENDING", "2026-11-26"),
        ] {
            app.tx(
                json!({"account_id": account, "type": tx_type, "status": status, "amount": 12.34,
                "description": "Fora dos totais", "date": date}),
            )
            .await;
        }
        app.post(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 9.99, "description": "Assinatura",
                "date": "2026-11-15", "recurrence": {"frequency": "MONTHLY"}}),
        )
        .await
        .ok(201);
        app.tx(
            json!({"account_id": account, "type": "DEBIT", "amount": 30, "description": "Parcelado",
            "date": "2026-10-28", "installments": {"count": 3}}),
        )
        .await;
    }
    for card in [
        &excluded_card,
        &usd_card,
        &archived_card,
        &archived_card_alone,
    ] {
        // Bills due Nov 10 (overdue) and Dec 10 (next), and installments.
        for date in ["2026-10-20", "2026-11-20"] {
            app.tx(
                json!({"account_id": card, "type": "DEBIT", "amount": 45.6, "description": "Compra",
                "date": date}),
            )
            .await;
        }
        app.tx(
            json!({"account_id": card, "type": "DEBIT", "amount": 600, "description": "Parcelado",
            "date": "2026-11-21", "installments": {"count": 6}}),
        )
        .await;
    }
    for account in [&archived, &archived_card, &archived_card_alone] {
        app.patch(
            &format!("/v1/accounts/{account}"),
            json!({"archived": true}),
        )
        .await
        .ok(200);
    }
    let only_corrente = Figures {
        bank_balance: 10_000,
        net_worth: 10_000,
        base: 10_000,
        result: 10_000,
        ..zero()
    };
    assert_eq!(figures(&app).await, only_corrente);
    assert_eq!(assert_consistent(&app).await, only_corrente);
    // The rows are there: the overview leaves them out, not the list. The
    // bills of three of the cards stand on the counting account.
    let month = list(&app, &format!("from={MONTH_FROM}&to={MONTH_TO}"), 100).await;
    let bills_on_corrente: HashSet<&str> = month
        .iter()
        .filter(|r| is_bill_entry(r) && r["account_id"] == corrente.as_str())
        .map(|r| text(r, "bill_to_account_id"))
        .collect();
    assert_eq!(
        bills_on_corrente,
        HashSet::from([
            excluded_card.as_str(),
            usd_card.as_str(),
            archived_card.as_str()
        ])
    );

    // Counted again, the excluded account and its card enter every figure.
    for account in [&excluded, &excluded_card] {
        app.patch(
            &format!("/v1/accounts/{account}"),
            json!({"exclude_from_totals": false}),
        )
        .await
        .ok(200);
    }
    let counted = assert_consistent(&app).await;
    assert_ne!(counted.bank_balance, only_corrente.bank_balance);
    assert!(counted.card_debt > 0 && counted.open_bills_total > 0);
    assert_eq!(counted.next_bills.len(), 1);
    assert_eq!(
        counted.next_bills[0]["card_account_id"],
        excluded_card.as_str()
    );
    assert!(counted.receitas > 0 && counted.despesas > 0);
    assert!(counted.expected_in > 0 && counted.bills > 0);
    assert!(counted.installments > 0 && counted.subscriptions > 0 && counted.scheduled > 0);
}

/// An app whose clock is at `now`, with one bank account.
async fn app_at(backend: Backend, now: &str) -> (TestApp, String) {
    let app = TestApp::start_at(backend, ApiConfig::default(), now).await;
    let bank = app.bank("Conta").await;
    (app, bank)
}

async fn add_rows(app: &TestApp, bank: &str, rows: &[(&str, i64, &str)]) {
    for (tx_type, cents, date) in rows {
        app.tx(
            json!({"account_id": bank, "type": tx_type, "amount": money(*cents),
            "description": "x", "date": date}),
        )
        .await;
    }
}

async fn month_is_the_sao_paulo_calendar_month(backend: Backend) {
    let rows = [
        ("CREDIT", 10_000, "2026-11-30"),
        ("CREDIT", 4_000, "2026-12-01"),
        ("DEBIT", 1_000, "2026-11-01"),
        ("DEBIT", 700, "2026-10-31"),
    ];

    // 02:30 UTC on Dec 1 is 23:30 on Nov 30 in São Paulo: still November.
    let (app, bank) = app_at(backend.clone(), "2026-12-01T02:30:00Z").await;
    let today = app
        .tx(json!({"account_id": bank, "type": "CREDIT", "amount": 100, "description": "hoje"}))
        .await;
    assert_eq!(today["date"], "2026-11-30");
    assert_eq!(today["status"], "POSTED");
    add_rows(&app, &bank, &rows[1..]).await;
    let f = figures(&app).await;
    assert_eq!(
        (f.receitas, f.despesas, f.resultado),
        (10_000, 1_000, 9_000)
    );
    assert_eq!((f.expected_in, f.bank_balance), (0, 10_000 - 1_000 - 700));

    // One second before November starts there: October.
    let (app, bank) = app_at(backend.clone(), "2026-11-01T02:59:59Z").await;
    add_rows(&app, &bank, &rows).await;
    let f = figures(&app).await;
    assert_eq!((f.receitas, f.despesas), (0, 700));
    assert_eq!((f.expected_in, f.bank_balance), (0, -700));

    // At midnight there: November, with everything after today PENDING.
    let (app, bank) = app_at(backend, "2026-11-01T03:00:00Z").await;
    add_rows(&app, &bank, &rows).await;
    let f = figures(&app).await;
    assert_eq!((f.receitas, f.despesas), (10_000, 1_000));
    assert_eq!((f.expected_in, f.scheduled), (10_000, 0));
    assert_eq!(f.bank_balance, -1_700);
    assert_eq!(f.result, -1_700 + 10_000);
}

async fn read_scope_is_enough_and_a_key_is_needed(backend: Backend) {
    let app = TestApp::start(backend).await;
    let bank = app
        .account(json!({"type": "BANK", "title": "Conta", "initial_balance": 10}))
        .await;
    let _ = bank;
    let read_only = app.key_for(app.user, &[Scope::Read]).await;
    let write_only = app.key_for(app.user, &[Scope::Write]).await;
    let with_read = app
        .call(Method::GET, "/v1/overview", Some(&read_only), None)
        .await;
    assert_eq!(with_read.status, 200, "{}", with_read.text);
    assert_eq!(with_read.text, app.get("/v1/overview").await.text);
    app.call(Method::GET, "/v1/overview", Some(&write_only), None)
        .await
        .problem(403, "insufficient_scope");
    for key in [None, Some("nonsense")] {
        let response = app.call(Method::GET, "/v1/overview", key, None).await;
        response.problem(401, "unauthorized");
        assert_eq!(response.header("www-authenticate"), Some("Bearer"));
    }
    // Another user sees their own (empty) overview.
    let (_, other) = app.new_user().await;
    let theirs = app
        .call(Method::GET, "/v1/overview", Some(&other), None)
        .await;
    assert_eq!(figures_of(&exact_json(&theirs.text)), zero());
}

on_both_backends!(
    overview_equals_the_list_endpoints,
    empty_user_has_a_zero_overview,
    one_card_one_purchase,
    future_installments_count_in_card_debt_only,
    accounts_outside_the_totals_are_left_out,
    month_is_the_sao_paulo_calendar_month,
    read_scope_is_enough_and_a_key_is_needed,
);
