//! The card side of the API for the demo "heavy" user (3 cards with five
//! years of purchases and paid bills, 60 installment plans, 40 rules) with
//! 10k, 50k and 100k stored rows over ten years, on SQLite in a temporary
//! directory, each request through the whole router (auth, rate-limit
//! bookkeeping, query parsing, JSON) without a socket:
//!
//! - `overview/N`: `GET /v1/overview`;
//! - `cashflow/N`: `GET /v1/transactions?view=cashflow`, one page of 50 over
//!   a 366-day window ending today (card bills stand in for card rows);
//! - `bills/N`: `GET /v1/cards/{id}/bills` for twelve calendar months (the
//!   month ten months back through next month) on the busiest card;
//! - `overview_parts/*/N`: what the overview reads, each alone:
//!   `cards::whole_books` (every card's bills and future installments),
//!   `Store::month_items` (the month's stored cashflow rows, as kept
//!   summed by triggers) and
//!   `Store::list_accounts` (balances). The setup also prints how many
//!   cashflow entries the month holds (`ledger::page` over the month).
//!
//! The store caches per user until their next write; before measuring,
//! the setup prints what each request costs right after a write.
//!
//! `cargo bench -p cofre-api --bench cards` (add `-- overview` for one
//! group; `taskset -c 0 cargo bench ...` pins it to one core). A request
//! the server does not answer with 200 (an endpoint not built yet) is
//! reported and left out instead of measured.

use axum::http::{Method, StatusCode};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use jiff::civil::Date;
use jiff::{Span, Timestamp};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cofre_api::{cards, ledger};
use cofre_domain::UserId;
use cofre_domain::card::BillMonth;
use cofre_domain::time::{Clock, format_date};
use cofre_domain::transaction::{PageRequest, TransactionFilter};
use cofre_store::{ImportBatch, Store};

mod support;
use support::{Bench, configure};

/// The requests measured, by group name.
#[derive(Clone, Copy)]
enum Call {
    Overview,
    Cashflow,
    Bills,
}

const CALLS: [(Call, &str); 3] = [
    (Call::Overview, "overview"),
    (Call::Cashflow, "cashflow"),
    (Call::Bills, "bills"),
];

struct Dataset {
    rows: usize,
    store: Arc<dyn Store>,
    user: UserId,
    now: Timestamp,
    today: Date,
    app: axum::Router,
    auth: String,
    overview: String,
    cashflow: String,
    bills: String,
}

impl Dataset {
    fn uri(&self, call: Call) -> &str {
        match call {
            Call::Overview => &self.overview,
            Call::Cashflow => &self.cashflow,
            Call::Bills => &self.bills,
        }
    }
}

fn days_before(date: Date, days: i64) -> Date {
    date.checked_sub(Span::new().days(days))
        .expect("a date before today")
}

/// Twelve calendar months of due dates: the month ten months back through
/// next month, so the open bill and a year of paid ones are in it.
fn bill_window(today: Date) -> (Date, Date) {
    let month = today.first_of_month();
    let from = month
        .checked_sub(Span::new().months(10))
        .expect("ten months back");
    let to = month
        .checked_add(Span::new().months(1))
        .expect("next month")
        .last_of_month();
    (from, to)
}

async fn dataset(dir: &Path, rows: usize, clock: &Clock) -> Dataset {
    let (now, today) = (clock.now(), clock.today());
    let heavy = support::heavy(dir, "cards", rows, clock).await;
    let (store, user) = (heavy.store, heavy.user);
    let card = support::first_card(store.as_ref(), user).await;
    // 366 days counting both ends, the widest window the API allows.
    let from = days_before(today, 365);
    let (bills_from, bills_to) = bill_window(today);
    Dataset {
        rows,
        store,
        user,
        now,
        today,
        app: heavy.app,
        auth: heavy.auth,
        overview: "/v1/overview".to_owned(),
        cashflow: format!(
            "/v1/transactions?view=cashflow&from={}&to={}&limit=50",
            format_date(from),
            format_date(today)
        ),
        bills: format!(
            "/v1/cards/{card}/bills?from={}&to={}",
            format_date(bills_from),
            format_date(bills_to)
        ),
    }
}

/// One request through the router: its status and body.
async fn call(data: &Dataset, call: Call) -> (StatusCode, axum::body::Bytes) {
    support::send(&data.app, &data.auth, Method::GET, data.uri(call), None).await
}

/// Mean time of `work` right after a write of the user (an empty import:
/// it changes nothing but, like every write, invalidates the store's
/// per-user caches), in ms: what the first request after a change costs.
async fn after_write(data: &Dataset, work: impl AsyncFn()) -> f64 {
    const TIMES: u32 = 5;
    let mut total = Duration::ZERO;
    for _ in 0..TIMES {
        data.store
            .import(data.user, &ImportBatch::default(), data.now)
            .await
            .expect("empty write");
        let started = Instant::now();
        work().await;
        total += started.elapsed();
    }
    total.as_secs_f64() * 1e3 / f64::from(TIMES)
}

/// `call` right after a write, in ms.
async fn call_after_write(data: &Dataset, which: Call) -> f64 {
    after_write(data, async || {
        let (status, _) = call(data, which).await;
        assert_eq!(status, StatusCode::OK);
    })
    .await
}

/// What the store reads afresh after a write, part by part, in ms: the
/// card money, the projection sources of this month and of the cashflow
/// page's year, the month's sums and the balances.
async fn parts_after_write(data: &Dataset) -> String {
    let (store, user, today) = (data.store.as_ref(), data.user, data.today);
    let (first, last) = (today.first_of_month(), today.last_of_month());
    let year_ago = today
        .checked_sub(Span::new().days(365))
        .expect("a year back");
    let card_money = after_write(data, async || {
        store.card_money(user).await.expect("card money");
    })
    .await;
    let month_sources = after_write(data, async || {
        store
            .view_sources(user, first, last)
            .await
            .expect("sources");
    })
    .await;
    let year_sources = after_write(data, async || {
        store
            .view_sources(user, year_ago, today)
            .await
            .expect("sources");
    })
    .await;
    let month = BillMonth::of(today);
    let month_items = after_write(data, async || {
        store.month_items(user, month).await.expect("month");
    })
    .await;
    let accounts = after_write(data, async || {
        store.list_accounts(user).await.expect("accounts");
    })
    .await;
    format!(
        "card_money {card_money:.2}, view_sources (month) {month_sources:.2}, \
         view_sources (366 days) {year_sources:.2}, month_items {month_items:.2}, \
         list_accounts {accounts:.2} ms"
    )
}

/// What one answer holds, for the log: entries of a page, bills of a card,
/// or the overview's top-level fields.
fn describe(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return "not JSON".to_owned();
    };
    let count = |key: &str| value.get(key).and_then(|v| v.as_array()).map(Vec::len);
    match (count("data"), count("bills")) {
        (Some(entries), _) => {
            let bills = value["data"].as_array().map_or(0, |d| {
                d.iter()
                    .filter(|e| e["projection"]["kind"] == "bill")
                    .count()
            });
            format!("{entries} entries ({bills} bills)")
        }
        (None, Some(bills)) => format!("{bills} bills"),
        (None, None) => value
            .as_object()
            .map(|o| format!("fields {:?}", o.keys().collect::<Vec<_>>()))
            .unwrap_or_default(),
    }
}

fn card_endpoints(c: &mut Criterion) {
    let bench = Bench::new();
    let rt = &bench.rt;
    let datasets = bench.datasets(dataset);

    for (which, name) in CALLS {
        // Measured only where every dataset answers 200.
        let mut ready = true;
        for data in &datasets {
            let started = Instant::now();
            let (status, body) = rt.block_on(call(data, which));
            let first = started.elapsed();
            eprintln!(
                "{name} {} rows: {status}, {} bytes, {}; first call {:.2} ms ({})",
                data.rows,
                body.len(),
                describe(&body),
                first.as_secs_f64() * 1e3,
                data.uri(which),
            );
            ready &= status == StatusCode::OK;
        }
        if ready {
            for data in &datasets {
                eprintln!(
                    "{name} {} rows: {:.2} ms right after a write (mean of 5)",
                    data.rows,
                    rt.block_on(call_after_write(data, which))
                );
            }
        }
        if !ready {
            eprintln!("{name}: not measured, the endpoint does not answer 200 here");
            continue;
        }
        let mut group = c.benchmark_group(name);
        configure(&mut group);
        for data in &datasets {
            group.bench_with_input(BenchmarkId::from_parameter(data.rows), data, |b, data| {
                b.to_async(rt).iter(|| async {
                    let (status, body) = call(data, which).await;
                    assert_eq!(status, StatusCode::OK);
                    body.len()
                });
            });
        }
        group.finish();
        if let Call::Overview = which {
            overview_parts(c, rt, &datasets);
        }
    }
}

/// How many entries the current month's cashflow view holds.
async fn month_entries(data: &Dataset) -> usize {
    let filter = TransactionFilter {
        cashflow: true,
        ..TransactionFilter::window(data.today.first_of_month(), data.today.last_of_month())
    };
    let request = PageRequest {
        limit: 100_000,
        after: None,
    };
    ledger::page(
        data.store.as_ref(),
        data.user,
        &filter,
        &request,
        data.today,
    )
    .await
    .expect("month")
    .items
    .len()
}

fn overview_parts(c: &mut Criterion, rt: &tokio::runtime::Runtime, datasets: &[Dataset]) {
    for data in datasets {
        eprintln!(
            "overview_parts {} rows: the month has {} cashflow entries; right after a write: {}",
            data.rows,
            rt.block_on(month_entries(data)),
            rt.block_on(parts_after_write(data))
        );
    }
    let mut group = c.benchmark_group("overview_parts");
    configure(&mut group);
    for data in datasets {
        let (store, user, today) = (data.store.as_ref(), data.user, data.today);
        group.bench_with_input(BenchmarkId::new("whole_books", data.rows), data, |b, _| {
            b.to_async(rt).iter(|| async {
                let books = cards::whole_books(store, user, today).await.expect("books");
                books.cards.len()
            });
        });
        let month = BillMonth::of(today);
        group.bench_with_input(BenchmarkId::new("month_items", data.rows), data, |b, _| {
            b.to_async(rt).iter(|| async {
                let items = store.month_items(user, month).await.expect("month");
                items.len()
            });
        });
        group.bench_with_input(
            BenchmarkId::new("list_accounts", data.rows),
            data,
            |b, _| {
                b.to_async(rt)
                    .iter(|| async { store.list_accounts(user).await.expect("accounts").len() });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, card_endpoints);
criterion_main!(benches);
