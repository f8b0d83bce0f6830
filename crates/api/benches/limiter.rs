//! The cost of one rate limit check (a minute and a day window, as every
//! `/v1` request makes): in this process's memory, and in Redis on
//! loopback, one script round trip (`COFRE_TEST_REDIS_URL`, else
//! `COFRE_REDIS_URL`; without either the Redis half is skipped with a
//! notice). Its target is in docs/performance.md.
//!
//! `cargo bench -p cofre-api --bench limiter`

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

use cofre_api::rate_limit::{Limiter, MemoryLimiter, RedisLimiter, Window};

/// Limits no benchmark reaches, so every check is allowed and counted.
const WINDOWS: [Window; 2] = [
    Window {
        limit: u32::MAX,
        window_sec: 60,
    },
    Window {
        limit: u32::MAX,
        window_sec: 86_400,
    },
];

fn redis_url() -> Option<String> {
    ["COFRE_TEST_REDIS_URL", "COFRE_REDIS_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|url| !url.is_empty()))
}

fn limiter(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("limiter");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    let memory = MemoryLimiter::new();
    group.bench_function("memory", |b| {
        b.to_async(&runtime)
            .iter(|| memory.check("bench-key", &WINDOWS))
    });

    let Some(url) = redis_url() else {
        eprintln!(
            "SKIPPED limiter/redis: set COFRE_TEST_REDIS_URL (scripts/ensure-redis prints it)"
        );
        return;
    };
    let prefix = format!("cofre:bench:{}:", std::process::id());
    let redis = {
        let _context = runtime.enter();
        RedisLimiter::with_options(&url, &prefix, Duration::from_secs(2)).expect("Redis URL")
    };
    runtime.block_on(redis.connect_at_start());
    assert!(!redis.is_falling_back(), "Redis at the URL does not answer");
    group.bench_function("redis", |b| {
        b.to_async(&runtime)
            .iter(|| redis.check("bench-key", &WINDOWS))
    });
    group.finish();
    assert!(!redis.is_falling_back(), "fell back during the benchmark");

    // The counters are this run's own: leave nothing behind.
    let client = redis::Client::open(url.as_str()).expect("Redis URL");
    if let Ok(mut conn) = client.get_connection() {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}*"))
            .query(&mut conn)
            .unwrap_or_default();
        if !keys.is_empty() {
            let _: Result<(), _> = redis::cmd("DEL").arg(&keys).query(&mut conn);
        }
    }
}

criterion_group!(benches, limiter);
criterion_main!(benches);
