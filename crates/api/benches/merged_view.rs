//! One page of 50 entries of the merged view (stored rows plus projections
//! of 40 rules and 60 installment plans) over a 366-day window ending today,
//! for the demo "heavy" user with 10k, 50k and 100k stored rows over ten
//! years, on SQLite in a temporary directory.
//!
//! `cargo bench -p cofre-api --bench merged_view` (add `-- page` to run only
//! the headline group; `taskset -c 0 cargo bench ...` pins it to one core).
//!
//! Groups:
//! - `page`: `cofre_api::ledger::page`, what `GET /v1/transactions` computes.
//! - `http`: the same request through the whole router (auth, rate-limit
//!   bookkeeping, query parsing, JSON), without a socket.
//! - `parts`: where the time of `page` goes: the stored page
//!   (`Store::list_transactions`, also for a single row), the projection sources
//!   (`Store::view_sources`), and the pure projection and merge. The store
//!   caches projection sources per user and window until the user's next
//!   write, so `parts/view_sources` is the cached path; the setup prints
//!   the cold-cache cost too.

use axum::http::{Method, StatusCode};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use jiff::Span;
use jiff::civil::Date;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cofre_api::ledger;
use cofre_domain::UserId;
use cofre_domain::time::{Clock, format_date};
use cofre_domain::transaction::{PageRequest, TransactionFilter};
use cofre_domain::view::{merge, projected_page};
use cofre_store::Store;

mod support;
use support::{Bench, configure};

const PAGE: usize = 50;

struct Dataset {
    rows: usize,
    store: Arc<dyn Store>,
    user: UserId,
    app: axum::Router,
    uri: String,
    auth: String,
    filter: TransactionFilter,
    request: PageRequest,
}

fn window(today: Date) -> TransactionFilter {
    // 366 days counting both ends, the widest window the API allows.
    let from = today
        .checked_sub(Span::new().days(365))
        .expect("a year before today");
    TransactionFilter::window(from, today)
}

async fn dataset(dir: &Path, rows: usize, clock: &Clock) -> Dataset {
    let heavy = support::heavy(dir, "heavy", rows, clock).await;
    let today = clock.today();
    let filter = window(today);
    Dataset {
        rows,
        store: heavy.store,
        user: heavy.user,
        app: heavy.app,
        uri: format!(
            "/v1/transactions?from={}&to={}&limit={PAGE}",
            format_date(filter.from),
            format_date(filter.to)
        ),
        auth: heavy.auth,
        filter,
        request: PageRequest {
            limit: PAGE,
            after: None,
        },
    }
}

async fn http_page(data: &Dataset) -> usize {
    let (status, body) = support::send(&data.app, &data.auth, Method::GET, &data.uri, None).await;
    assert_eq!(status, StatusCode::OK);
    body.len()
}

/// Mean time of `view_sources` for windows it has not cached yet (the
/// first page after any write of the user pays this): 366-day windows
/// ending 1 to 60 days before today, each asked once.
async fn cold_view_sources(data: &Dataset) -> f64 {
    const WINDOWS: i64 = 60;
    let started = Instant::now();
    for back in 1..=WINDOWS {
        let to = data
            .filter
            .to
            .checked_sub(Span::new().days(back))
            .expect("date");
        let from = to.checked_sub(Span::new().days(365)).expect("date");
        let sources = data
            .store
            .view_sources(data.user, from, to)
            .await
            .expect("sources");
        black_box(sources.rules.len());
    }
    started.elapsed().as_secs_f64() * 1e6 / WINDOWS as f64
}

fn merged_view(c: &mut Criterion) {
    let bench = Bench::new();
    let rt = &bench.rt;
    let datasets = bench.datasets(dataset);
    for data in &datasets {
        let page = rt
            .block_on(ledger::page(
                data.store.as_ref(),
                data.user,
                &data.filter,
                &data.request,
                data.filter.to,
            ))
            .expect("page");
        let projected = page
            .items
            .iter()
            .filter(|t| t.id.stored().is_none())
            .count();
        eprintln!(
            "{} rows: page has {} entries ({} projected), has_more {}; HTTP body {} bytes; \
             view_sources on a cold cache {:.0} µs",
            data.rows,
            page.items.len(),
            projected,
            page.has_more,
            rt.block_on(http_page(data)),
            rt.block_on(cold_view_sources(data)),
        );
    }

    let mut group = c.benchmark_group("page");
    configure(&mut group);
    for data in &datasets {
        group.bench_with_input(BenchmarkId::from_parameter(data.rows), data, |b, data| {
            b.to_async(rt).iter(|| async {
                let page = ledger::page(
                    data.store.as_ref(),
                    data.user,
                    &data.filter,
                    &data.request,
                    data.filter.to,
                )
                .await
                .expect("page");
                black_box(page.items.len())
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("http");
    configure(&mut group);
    for data in &datasets {
        group.bench_with_input(BenchmarkId::from_parameter(data.rows), data, |b, data| {
            b.to_async(rt).iter(|| http_page(data));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("parts");
    configure(&mut group);
    for data in &datasets {
        let (store, user, filter, request) =
            (data.store.as_ref(), data.user, &data.filter, &data.request);
        group.bench_with_input(
            BenchmarkId::new("list_transactions", data.rows),
            data,
            |b, _| {
                b.to_async(rt).iter(|| async {
                    let page = store
                        .list_transactions(user, filter, request)
                        .await
                        .expect("list");
                    black_box(page.items.len())
                });
            },
        );
        // The same query for one row: what a page costs besides its rows.
        let one = PageRequest {
            limit: 1,
            after: None,
        };
        group.bench_with_input(
            BenchmarkId::new("list_transactions_limit_1", data.rows),
            data,
            |b, _| {
                b.to_async(rt).iter(|| async {
                    let page = store
                        .list_transactions(user, filter, &one)
                        .await
                        .expect("list");
                    black_box(page.items.len())
                });
            },
        );
        group.bench_with_input(BenchmarkId::new("view_sources", data.rows), data, |b, _| {
            b.to_async(rt).iter(|| async {
                let sources = store
                    .view_sources(user, filter.from, filter.to)
                    .await
                    .expect("sources");
                black_box(sources.rules.len())
            });
        });
        let stored = rt
            .block_on(store.list_transactions(user, filter, request))
            .expect("list");
        let sources = rt
            .block_on(store.view_sources(user, filter.from, filter.to))
            .expect("sources");
        group.bench_with_input(
            BenchmarkId::new("project_and_merge", data.rows),
            data,
            |b, _| {
                b.iter(|| {
                    let projected = projected_page(&sources, filter, None, PAGE);
                    let page = merge(stored.items.clone(), projected, PAGE);
                    black_box(page.items.len())
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, merged_view);
criterion_main!(benches);
