//! Rate limits shared through Redis (`COFRE_TEST_REDIS_URL`): two routers
//! on one database are two servers of a fleet, each with its own
//! [`RedisLimiter`] (its own connection) on one Redis, under a key prefix
//! of their own per test. Without the URL these tests are skipped with a
//! notice, except under `CI=true`. The limits do not depend on the store,
//! so they run on SQLite only.

use axum::http::Method;
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cofre_api::ApiConfig;
use cofre_api::rate_limit::{DEFAULT_TIMEOUT, RedisLimiter};
use cofre_domain::auth::Scope;

use crate::support::{Backend, NOW, Response, TestApp, server_url};

const BULK: &str = "/v1/transactions/bulk";

/// The Redis of the tests, or `None` (skip) when it is not set.
fn redis_url() -> Option<String> {
    server_url("COFRE_TEST_REDIS_URL", "Redis")
}

/// This test's own keys in the shared Redis, removed by [`Keys::drop`].
struct Keys {
    url: String,
    prefix: String,
}

impl Keys {
    fn new(url: &str) -> Keys {
        Keys {
            url: url.to_owned(),
            prefix: format!("cofre:test:{}:", uuid::Uuid::new_v4().simple()),
        }
    }

    /// One server's limiter. The timeout is generous so that a busy test
    /// machine never falls back by accident, which would split the count.
    fn limiter(&self) -> Arc<RedisLimiter> {
        Arc::new(
            RedisLimiter::with_options(&self.url, &self.prefix, Duration::from_secs(2))
                .expect("limiter"),
        )
    }

    /// Two servers on one database, each with its own limiter on these
    /// keys, once the current window of `window` seconds has room for the
    /// test's requests.
    async fn two_servers(&self, config: ApiConfig, window: u64) -> (TestApp, TestApp) {
        let a = TestApp::start_limited(Backend::Sqlite, config, NOW, self.limiter()).await;
        let b = a.server_with(self.limiter());
        within_one_window(window).await;
        (a, b)
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let Ok(client) = redis::Client::open(self.url.as_str()) else {
            return;
        };
        if let Ok(mut conn) = client.get_connection() {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{}*", self.prefix))
                .query(&mut conn)
                .unwrap_or_default();
            if !keys.is_empty() {
                let _: Result<(), _> = redis::cmd("DEL").arg(&keys).query(&mut conn);
            }
        }
    }
}

/// Waits for the next window of `len` seconds when this one ends within
/// 15 seconds, so that a test's requests fall in one window.
async fn within_one_window(len: u64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let left = len - now % len;
    if left < 15 {
        tokio::time::sleep(Duration::from_secs(left + 1)).await;
    }
}

fn header_u64(response: &Response, name: &str) -> u64 {
    response
        .header(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .parse()
        .expect("a number")
}

fn assert_close(a: u64, b: u64, what: &str) {
    // Redis's clock may tick between two requests.
    assert!(a.abs_diff(b) <= 1, "{what}: {a} and {b}");
}

/// A value of a gauge or counter in this process's `/metrics` page.
fn metric(name: &str) -> Option<f64> {
    cofre_api::metrics_handle()
        .render()
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} "))?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_minute_limit_holds_across_servers() {
    let Some(url) = redis_url() else { return };
    let keys = Keys::new(&url);
    let config = ApiConfig {
        rate_limit_per_minute: 5,
        ..ApiConfig::default()
    };
    let (a, b) = keys.two_servers(config, 60).await;

    // Sixteen requests at once, half on each server: five get through.
    let calls = (0..16).map(|i| {
        let server = if i % 2 == 0 { &a } else { &b };
        server.get("/v1/accounts")
    });
    let statuses: Vec<u16> = join_all(calls).await.iter().map(|r| r.status).collect();
    let passed = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(passed, 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 11);

    // Both servers refuse alike, with the same headers.
    let (from_a, from_b) = (a.get("/v1/tags").await, b.get("/v1/tags").await);
    for refused in [&from_a, &from_b] {
        refused.problem(429, "rate_limited");
        assert_eq!(refused.header("ratelimit-limit"), Some("5"));
        assert_eq!(refused.header("ratelimit-remaining"), Some("0"));
    }
    assert_close(
        header_u64(&from_a, "retry-after"),
        header_u64(&from_b, "retry-after"),
        "Retry-After",
    );
    assert_close(
        header_u64(&from_a, "ratelimit-reset"),
        header_u64(&from_b, "ratelimit-reset"),
        "RateLimit-Reset",
    );
    assert!((1..=60).contains(&header_u64(&from_a, "retry-after")));

    // Another key counts down one budget, whichever server it calls.
    let other = a.key_for(a.user, &[Scope::Read]).await;
    let mut remaining = Vec::new();
    let mut resets = Vec::new();
    for server in [&a, &b, &a, &b] {
        let response = server
            .call(Method::GET, "/v1/accounts", Some(&other), None)
            .await;
        response.ok(200);
        remaining.push(header_u64(&response, "ratelimit-remaining"));
        resets.push(header_u64(&response, "ratelimit-reset"));
    }
    assert_eq!(remaining, [4, 3, 2, 1]);
    assert_close(resets[0], resets[3], "RateLimit-Reset");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bulk_limit_holds_across_servers() {
    let Some(url) = redis_url() else { return };
    let keys = Keys::new(&url);
    let config = ApiConfig {
        bulk_limit_per_hour: 2,
        ..ApiConfig::default()
    };
    let (a, b) = keys.two_servers(config, 3_600).await;

    // A refused call counts too: the limit is applied before any work.
    a.post(BULK, json!({}))
        .await
        .problem(400, "validation_error");
    b.post(BULK, json!({}))
        .await
        .problem(400, "validation_error");
    let (from_a, from_b) = (a.post(BULK, json!({})).await, b.post(BULK, json!({})).await);
    for refused in [&from_a, &from_b] {
        refused.problem(429, "rate_limited");
        assert_eq!(refused.header("ratelimit-limit"), Some("2"));
        assert_eq!(refused.header("ratelimit-remaining"), Some("0"));
    }
    assert_close(
        header_u64(&from_a, "retry-after"),
        header_u64(&from_b, "retry-after"),
        "Retry-After",
    );
    // The general budget is apart from the bulk one.
    b.get("/v1/me").await.ok(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn me_shows_what_is_left_across_servers() {
    let Some(url) = redis_url() else { return };
    let keys = Keys::new(&url);
    let config = ApiConfig {
        rate_limit_per_minute: 10,
        rate_limit_per_day: 100,
        ..ApiConfig::default()
    };
    let (a, b) = keys.two_servers(config, 60).await;

    let first = a.get("/v1/me").await;
    assert_eq!(first.ok(200)["limits"]["rate"]["minute"]["remaining"], 9);
    b.get("/v1/accounts").await.ok(200);
    let me = b.get("/v1/me").await;
    let rate = &me.ok(200)["limits"]["rate"];
    assert_eq!(rate["minute"]["remaining"], 7);
    assert_eq!(rate["day"]["remaining"], 97);
    let reset = rate["minute"]["reset"].as_u64().unwrap();
    assert!((1..=60).contains(&reset));
    // The body and the headers come from the same check.
    assert_eq!(me.header("ratelimit-remaining"), Some("7"));
    assert_close(reset, header_u64(&me, "ratelimit-reset"), "reset");
    let again = a.get("/v1/me").await;
    assert_eq!(
        again.ok(200)["limits"]["rate"]["minute"]["remaining"],
        Value::from(6)
    );
}

/// A `redis-server` of this test's own on a free port, stopped on drop.
struct OwnRedis {
    child: Child,
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

async fn start_redis(port: u16) -> Option<OwnRedis> {
    let port_text = port.to_string();
    let spawned = Command::new("redis-server")
        .args(["--port", &port_text, "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match spawned {
        Ok(child) => child,
        Err(err) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but redis-server cannot be started: {err}")
        }
        Err(err) => {
            eprintln!("SKIPPED (Redis): the recovery half needs redis-server here: {err}");
            return None;
        }
    };
    let own = OwnRedis { child };
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).expect("url");
    for _ in 0..100 {
        if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
            let pong: Result<String, _> = redis::cmd("PING").query_async(&mut conn).await;
            if pong.is_ok() {
                return Some(own);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("redis-server on port {port} did not answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_each_server_limits_alone_then_shares_again() {
    let Some(_) = redis_url() else { return };
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let prefix = format!("cofre:test:{}:", uuid::Uuid::new_v4().simple());
    let limiter =
        |timeout| Arc::new(RedisLimiter::with_options(&url, &prefix, timeout).expect("limiter"));
    // Nothing listens on the port: start-up is a warning, not a failure.
    let lonely = limiter(DEFAULT_TIMEOUT);
    lonely.connect_at_start().await;
    assert!(lonely.is_falling_back());
    let config = ApiConfig {
        rate_limit_per_minute: 3,
        ..ApiConfig::default()
    };
    let a = TestApp::start_limited(Backend::Sqlite, config, NOW, lonely.clone()).await;
    within_one_window(60).await;

    // Requests are answered, promptly, and the limit holds per process.
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let started = Instant::now();
        statuses.push(a.get("/v1/accounts").await.status);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "waited on Redis"
        );
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
    assert_eq!(metric("rate_limit_backend_fallback"), Some(1.0));
    assert!(metric("rate_limit_backend_errors_total").is_some_and(|n| n >= 1.0));

    // Redis comes up: the same limiter finds it without a restart.
    let Some(_redis) = start_redis(port).await else {
        return;
    };
    let probe = a.key_for(a.user, &[Scope::Read]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while lonely.is_falling_back() {
        assert!(Instant::now() < deadline, "the limiter never found Redis");
        // Counted in memory until Redis answers; the status is no matter.
        a.call(Method::GET, "/v1/me", Some(&probe), None).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(metric("rate_limit_backend_fallback"), Some(0.0));

    // And counting is shared again with another server.
    let b = a.server_with(limiter(Duration::from_secs(2)));
    within_one_window(60).await;
    let shared = a.key_for(a.user, &[Scope::Read]).await;
    let mut statuses = Vec::new();
    for server in [&a, &b, &a, &b] {
        let response = server
            .call(Method::GET, "/v1/accounts", Some(&shared), None)
            .await;
        statuses.push(response.status);
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
}
