//! Budgets and reports (issue 13) on the demo "heavy" user (3 cards, 60
//! installment plans, 40 rules, a dozen budgets) with 10k, 50k and 100k
//! stored rows, on SQLite in a temporary directory, through the whole
//! router without a socket and with the read cache off, so each answer is
//! computed afresh:
//!
//! - `budgets_status/N`: `GET /v1/budgets/status` (this month);
//! - `spending_12_months/N`: `GET /v1/reports/spending`, 12 months by
//!   category (cashflow view, the default);
//! - `net_worth_366_days/N`: `GET /v1/reports/net-worth`, one point a day
//!   over the 366 days ending today;
//! - `*_after_write/N`: the same, each read right after a write (a card
//!   purchase posted, then deleted before the next read; only the read is
//!   measured), so no cached projection or card book is older than the
//!   data.
//!
//! `cargo bench -p cofre-api --bench reports` (`taskset -c 0` pins it to
//! one core).

use axum::http::{Method, StatusCode};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use jiff::Span;
use std::path::Path;
use std::time::{Duration, Instant};

use cofre_domain::AccountId;
use cofre_domain::card::BillMonth;
use cofre_domain::time::{Clock, format_date};

mod support;
use support::{Bench, configure};

struct Dataset {
    rows: usize,
    app: axum::Router,
    auth: String,
    card: AccountId,
    today: String,
    uris: [(&'static str, String); 3],
}

async fn dataset(dir: &Path, rows: usize, clock: &Clock) -> Dataset {
    let heavy = support::heavy(dir, "reports", rows, clock).await;
    let card = support::first_card(heavy.store.as_ref(), heavy.user).await;
    let today = clock.today();
    let month = BillMonth::of(today);
    let first = BillMonth::from_index(month.index() - 11).expect("a year back");
    let year_ago = today
        .checked_sub(Span::new().days(365))
        .expect("a year back");
    Dataset {
        rows,
        app: heavy.app,
        auth: heavy.auth,
        card,
        today: format_date(today),
        uris: [
            ("budgets_status", "/v1/budgets/status".to_owned()),
            (
                "spending_12_months",
                format!(
                    "/v1/reports/spending?from={}&to={}&group_by=category",
                    first.key(),
                    month.key()
                ),
            ),
            (
                "net_worth_366_days",
                format!(
                    "/v1/reports/net-worth?from={}&to={}&interval=day",
                    format_date(year_ago),
                    format_date(today)
                ),
            ),
        ],
    }
}

async fn send(data: &Dataset, method: Method, uri: &str, body: Option<String>) -> StatusCode {
    let (status, answer) = support::send(&data.app, &data.auth, method, uri, body).await;
    assert!(
        status.is_success(),
        "{uri}: {status} {}",
        String::from_utf8_lossy(&answer)
    );
    status
}

/// `iters` reads of `uri`, each right after a write when `after_write`.
async fn reads(data: &Dataset, uri: &str, iters: u64, after_write: bool) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let written = if after_write {
            Some(support::add_purchase(&data.app, &data.auth, data.card, &data.today).await)
        } else {
            None
        };
        let started = Instant::now();
        send(data, Method::GET, uri, None).await;
        total += started.elapsed();
        if let Some(id) = written {
            send(
                data,
                Method::DELETE,
                &format!("/v1/transactions/{id}"),
                None,
            )
            .await;
        }
    }
    total
}

fn reports(c: &mut Criterion) {
    let bench = Bench::new();
    let rt = &bench.rt;
    let datasets = bench.datasets(dataset);
    for which in 0..3 {
        for after_write in [false, true] {
            let name = datasets[0].uris[which].0;
            let name = if after_write {
                format!("{name}_after_write")
            } else {
                name.to_owned()
            };
            let mut group = c.benchmark_group(name);
            configure(&mut group);
            for data in &datasets {
                let uri = data.uris[which].1.as_str();
                group.bench_with_input(BenchmarkId::from_parameter(data.rows), data, |b, data| {
                    b.to_async(rt)
                        .iter_custom(|iters| reads(data, uri, iters, after_write));
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, reports);
criterion_main!(benches);
