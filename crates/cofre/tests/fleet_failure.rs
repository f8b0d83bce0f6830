//! The fleet when what it shares goes away, with the real binary:
//! - PostgreSQL stopped and started again while writers run against two
//!   servers: every write acknowledged with 2xx is there afterwards, no
//!   request got a 500 or went unanswered (a 503 with `Retry-After` while
//!   the database was away), `/readyz` went not-ready and came back, and
//!   neither server was restarted.
//! - Redis killed and started again under load: requests keep being
//!   answered (the documented fail-open policy: each server counts on its
//!   own meanwhile, and says so in `/metrics`), and once Redis is back the
//!   servers count together again, without a restart.
//!
//! Both restart servers of their own (own data directory, own ports),
//! never the machine's shared PostgreSQL or Redis.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::database::Database;
use common::instances::{OwnPostgres, OwnRedis};
use common::server::{Api, Server};

/// What the writers and the readiness watcher saw.
#[derive(Default)]
struct Seen {
    acked: HashMap<String, Value>,
    /// Status codes of every answer, writes and readiness checks apart.
    write_statuses: HashMap<u16, usize>,
    ready_statuses: HashMap<u16, usize>,
    /// Requests that got no answer at all (a hang or a dropped socket).
    unanswered: usize,
}

/// Creates rows with client ids until `stop`; a 503 is retried with the
/// same id (safe: the id makes a replay a no-op).
async fn writer(api: Api, account: String, stop: Arc<AtomicBool>, seen: Arc<Mutex<Seen>>) {
    let mut n = 0u32;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let id = uuid::Uuid::new_v4().to_string();
        let body = json!({"id": id, "account_id": account, "type": "DEBIT",
            "amount": 1 + n % 50, "description": format!("Compra {n}"), "date": "2026-11-20"});
        for _ in 0..200 {
            let answer = api
                .send(reqwest::Method::POST, "/v1/transactions", Some(&body))
                .await;
            let retry = {
                let mut seen = seen.lock().unwrap();
                match answer {
                    Ok((status, _)) => {
                        *seen.write_statuses.entry(status).or_default() += 1;
                        if status == 200 || status == 201 {
                            seen.acked.insert(id.clone(), body.clone());
                        }
                        status == 503
                    }
                    Err(_) => {
                        seen.unanswered += 1;
                        false
                    }
                }
            };
            if !retry {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn watch_readiness(bases: Vec<String>, stop: Arc<AtomicBool>, seen: Arc<Mutex<Seen>>) {
    let http = reqwest::Client::new();
    while !stop.load(Ordering::Relaxed) {
        for base in &bases {
            let status = http
                .get(format!("{base}/readyz"))
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .map(|r| r.status().as_u16());
            let mut seen = seen.lock().unwrap();
            match status {
                Ok(status) => *seen.ready_statuses.entry(status).or_default() += 1,
                Err(_) => seen.unanswered += 1,
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn ready_within(base: &str, limit: Duration) {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let ready = http
            .get(format!("{base}/readyz"))
            .timeout(Duration::from_secs(3))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            return;
        }
        assert!(started.elapsed() < limit, "{base} not ready again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Two servers on the empty database `url`, each with a client holding
/// the first user's key.
async fn two_servers(
    url: &str,
    receipts: &std::path::Path,
    settings: &[(&str, &str)],
) -> ((Server, Api), (Server, Api)) {
    let (a, key) = Server::start(url, receipts, settings).await;
    let (b, _) = Server::start(url, receipts, settings).await;
    let key = key.expect("the first server prints the key");
    let api = |server: &Server| Api {
        http: reqwest::Client::new(),
        base: server.base.clone(),
        key: key.clone(),
    };
    let (api_a, api_b) = (api(&a), api(&b));
    ((a, api_a), (b, api_b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_under_write_load_loses_no_acknowledged_write() {
    let Some(postgres) = OwnPostgres::start() else {
        return;
    };
    let url = postgres.url();
    let receipts = tempfile::tempdir().expect("receipts");
    let settings = [("COFRE_REQUEST_TIMEOUT", "5")];
    let ((a, api_a), (b, api_b)) = two_servers(&url, receipts.path(), &settings).await;
    let account = api_a
        .create(
            "/v1/accounts",
            json!({"type": "BANK", "title": "Conta"}),
            "/id",
        )
        .await;

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut tasks: Vec<_> = [&api_a, &api_a, &api_b, &api_b]
        .into_iter()
        .map(|api| {
            tokio::spawn(writer(
                api.clone(),
                account.clone(),
                stop.clone(),
                seen.clone(),
            ))
        })
        .collect();
    tasks.push(tokio::spawn(watch_readiness(
        vec![a.base.clone(), b.base.clone()],
        stop.clone(),
        seen.clone(),
    )));

    tokio::time::sleep(Duration::from_millis(800)).await;
    let postgres = tokio::task::spawn_blocking(move || {
        postgres.stop();
        std::thread::sleep(Duration::from_secs(2));
        postgres.start_again();
        postgres
    })
    .await
    .expect("restart PostgreSQL");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    ready_within(&a.base, Duration::from_secs(30)).await;
    ready_within(&b.base, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("task");
    }

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    eprintln!(
        "writes: {:?}; readiness: {:?}; acknowledged: {}",
        seen.write_statuses,
        seen.ready_statuses,
        seen.acked.len()
    );
    assert_eq!(seen.unanswered, 0, "requests went unanswered");
    let statuses: Vec<u16> = seen.write_statuses.keys().copied().collect();
    assert!(
        statuses.iter().all(|s| [200, 201, 503].contains(s)),
        "writes answered {statuses:?}"
    );
    assert!(
        seen.write_statuses.contains_key(&503),
        "no write met the outage: the test did not test it"
    );
    assert!(
        seen.ready_statuses.contains_key(&503),
        "/readyz never went not-ready while PostgreSQL was down"
    );
    // Every acknowledged write is there, as sent, through either server.
    for (n, (id, sent)) in seen.acked.iter().enumerate() {
        let through = if n % 2 == 0 { &api_a } else { &api_b };
        let stored = through
            .ok(
                reqwest::Method::GET,
                &format!("/v1/transactions/{id}"),
                None,
            )
            .await;
        for field in ["account_id", "description", "date"] {
            assert_eq!(stored["transaction"][field], sent[field], "{field} of {id}");
        }
        assert_eq!(
            stored["transaction"]["amount"].as_f64(),
            sent["amount"].as_f64(),
            "amount of {id}"
        );
    }
    a.kill();
    b.kill();
    drop(postgres);
}

/// `name value` of a metric without labels in the Prometheus text.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
}

async fn metrics_of(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text")
}

/// The minute window's remaining count in one answer of `api`.
async fn remaining(api: &Api) -> u64 {
    let response = api
        .http
        .get(format!("{}/v1/me", api.base))
        .bearer_auth(&api.key)
        .send()
        .await
        .expect("me");
    assert!(response.status().is_success(), "{}", response.status());
    response.headers()["ratelimit-remaining"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Two servers count together while Redis answers: the second answer
/// reports one fewer remaining than the first, whichever server gives it.
async fn counted_together(a: &Api, b: &Api) -> bool {
    let first = remaining(a).await;
    let second = remaining(b).await;
    second + 1 == first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_fails_open_and_sharing_resumes() {
    let Some(mut redis) = OwnRedis::start() else {
        return;
    };
    let (database, url) = Database::sqlite().await;
    let receipts = tempfile::tempdir().expect("receipts");
    let redis_url = redis.url();
    let settings = [
        ("COFRE_REDIS_URL", redis_url.as_str()),
        ("COFRE_RATE_LIMIT_PER_MINUTE", "100000"),
    ];
    let ((a, api_a), (b, api_b)) = two_servers(&url, receipts.path(), &settings).await;
    assert!(
        counted_together(&api_a, &api_b).await,
        "not shared at first"
    );

    // Under load: four clients at once on both servers while Redis dies
    // and stays away; every request is answered 200, none waits on it.
    let load: Vec<_> = (0..4)
        .map(|client| {
            let apis = [api_a.clone(), api_b.clone()];
            tokio::spawn(async move {
                for n in 0..25 {
                    let started = Instant::now();
                    let (status, body) = apis[(client + n) % 2]
                        .send(reqwest::Method::GET, "/v1/me", None)
                        .await
                        .expect("an answer while Redis is down");
                    assert_eq!(status, 200, "fail open: {body}");
                    assert!(
                        started.elapsed() < Duration::from_secs(2),
                        "a request waited {:?} on the absent Redis",
                        started.elapsed()
                    );
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(20)).await;
    redis.stop();
    for client in load {
        client.await.expect("client");
    }
    for base in [&a.base, &b.base] {
        let text = metrics_of(base).await;
        assert_eq!(
            metric(&text, "rate_limit_backend_fallback"),
            Some(1.0),
            "{base}"
        );
        assert!(metric(&text, "rate_limit_backend_errors_total").unwrap_or(0.0) >= 1.0);
    }

    redis.start_again();
    // Each server asks Redis again within a second of a request; until
    // then it counts alone (so two servers' own counts may line up by
    // chance: the gauges, not the counts, tell when both are back).
    let started = Instant::now();
    loop {
        let mut back = true;
        for (api, base) in [(&api_a, &a.base), (&api_b, &b.base)] {
            remaining(api).await;
            back &= metric(&metrics_of(base).await, "rate_limit_backend_fallback") == Some(0.0);
        }
        if back {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the servers did not go back to Redis after it came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for _ in 0..3 {
        assert!(
            counted_together(&api_a, &api_b).await,
            "back on Redis, but not counting together"
        );
        assert!(
            counted_together(&api_b, &api_a).await,
            "back on Redis, but not counting together"
        );
    }
    a.kill();
    b.kill();
    database.drop_it().await;
}
