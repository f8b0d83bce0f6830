//! The first read after a write, the most common thing a finance app does:
//! a client adds a card purchase, then shows the overview or the cashflow
//! list. For the demo "heavy" user (3 cards, 60 installment plans, 40
//! rules) with 10k, 50k and 100k stored rows, on SQLite in a temporary
//! directory, through the whole router without a socket:
//!
//! - `overview_after_write/N`: `GET /v1/overview`;
//! - `cashflow_after_write/N`: `GET /v1/transactions?view=cashflow`, one
//!   page of 50 over a 366-day window ending today.
//!
//! Each measured read comes right after a write through the router (not
//! measured): `POST /v1/transactions` of a purchase on the busiest card,
//! then, before the next read, `DELETE` of that purchase, so every read
//! follows a write and the dataset keeps its size. What criterion reports
//! is the read alone.
//!
//! `cargo bench -p cofre-api --bench after_write` (`taskset -c 0` pins it
//! to one core).

use axum::http::{Method, StatusCode};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use jiff::Span;
use std::path::Path;
use std::time::{Duration, Instant};

use cofre_domain::AccountId;
use cofre_domain::time::{Clock, format_date};

mod support;
use support::{Bench, configure};

struct Dataset {
    rows: usize,
    app: axum::Router,
    auth: String,
    card: AccountId,
    today: String,
    cashflow: String,
}

async fn dataset(dir: &Path, rows: usize, clock: &Clock) -> Dataset {
    let heavy = support::heavy(dir, "after-write", rows, clock).await;
    let card = support::first_card(heavy.store.as_ref(), heavy.user).await;
    let today = clock.today();
    let from = today
        .checked_sub(Span::new().days(365))
        .expect("a year back");
    Dataset {
        rows,
        app: heavy.app,
        auth: heavy.auth,
        card,
        today: format_date(today),
        cashflow: format!(
            "/v1/transactions?view=cashflow&from={}&to={}&limit=50",
            format_date(from),
            format_date(today)
        ),
    }
}

/// One request through the router with the dataset's key.
async fn send(
    data: &Dataset,
    method: Method,
    uri: &str,
    body: Option<String>,
) -> (StatusCode, axum::body::Bytes) {
    support::send(&data.app, &data.auth, method, uri, body).await
}

/// `iters` reads of `uri`, each right after a write; the reads' time.
async fn reads_after_writes(data: &Dataset, uri: &str, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let id = support::add_purchase(&data.app, &data.auth, data.card, &data.today).await;
        let started = Instant::now();
        let (status, _) = send(data, Method::GET, uri, None).await;
        total += started.elapsed();
        assert_eq!(status, StatusCode::OK);
        let (status, _) = send(
            data,
            Method::DELETE,
            &format!("/v1/transactions/{id}"),
            None,
        )
        .await;
        assert!(status.is_success(), "delete answered {status}");
    }
    total
}

fn after_write(c: &mut Criterion) {
    let bench = Bench::new();
    let rt = &bench.rt;
    let datasets = bench.datasets(dataset);
    for (name, overview) in [
        ("overview_after_write", true),
        ("cashflow_after_write", false),
    ] {
        let mut group = c.benchmark_group(name);
        configure(&mut group);
        for data in &datasets {
            let uri = if overview {
                "/v1/overview"
            } else {
                data.cashflow.as_str()
            };
            group.bench_with_input(BenchmarkId::from_parameter(data.rows), data, |b, data| {
                b.to_async(rt)
                    .iter_custom(|iters| reads_after_writes(data, uri, iters));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, after_write);
criterion_main!(benches);
