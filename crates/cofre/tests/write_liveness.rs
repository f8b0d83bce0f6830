//! Liveness of the write path: `cofre serve` on one core and one runtime
//! worker, 64 concurrent writers, some of whose clients hang up
//! mid-request, while another connection holds the database's write lock
//! now and then so that waiting requests are cut off at their (short)
//! deadline. Once the
//! load stops, every new write must be answered at once; every
//! acknowledged row is stored once and no row appears that nobody sent.
//! Also: `/readyz` answers 503 while writes cannot move and 200 again
//! once they do. On SQLite and on PostgreSQL.

use serde_json::{Value, json};
use sqlx::Connection;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::database::Database;
use common::server::{Api, Server};

const WRITERS: usize = 64;
/// How long the writers write.
const LOAD: Duration = Duration::from_secs(12);
/// The server's request deadline, in seconds: short, so that requests
/// waiting behind a held lock are cut off while the load goes on.
const DEADLINE_S: u64 = 1;

/// What the writers saw, by client-chosen id.
#[derive(Default)]
struct Seen {
    /// Answered 201 or 200: must be stored, once.
    acked: HashSet<String>,
    /// No answer, or cut off (503): may be stored, once, or not at all.
    maybe: HashSet<String>,
}

/// A pseudo-random number below `below` (no extra dependency).
fn random(below: u64) -> u64 {
    (uuid::Uuid::new_v4().as_u128() % u128::from(below)) as u64
}

/// Someone else holding the database's write lock for a while: another
/// process's write transaction on SQLite, a lock on the users table on
/// PostgreSQL (every creation takes a row lock on its user first).
async fn hold_write_lock(url: &str, for_how_long: Duration) {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("sqlite");
        // Taking the lock among 64 busy writers can fail now and then
        // (SQLITE_PROTOCOL, SQLITE_BUSY): try again.
        let mut tries = 0;
        while let Err(err) = sqlx::query("BEGIN IMMEDIATE").execute(&mut conn).await {
            tries += 1;
            assert!(tries < 50, "the write lock could not be taken: {err}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(for_how_long).await;
        sqlx::query("ROLLBACK")
            .execute(&mut conn)
            .await
            .expect("unlock");
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
        sqlx::query("BEGIN")
            .execute(&mut conn)
            .await
            .expect("begin");
        sqlx::query("LOCK TABLE users IN ACCESS EXCLUSIVE MODE")
            .execute(&mut conn)
            .await
            .expect("lock");
        tokio::time::sleep(for_how_long).await;
        sqlx::query("ROLLBACK")
            .execute(&mut conn)
            .await
            .expect("unlock");
    }
}

/// A purchase with a client-chosen id, a category, and now and then a tag.
fn purchase(n: u64, id: &str, account: &str, category: &str, tag: &str) -> Value {
    let cents = 1 + random(100_000);
    let mut body = json!({"id": id, "account_id": account, "type": "DEBIT",
        "amount": format!("{}.{:02}", cents / 100, cents % 100).parse::<f64>().unwrap(),
        "description": format!("Compra {n}"), "category_id": category,
        "date": format!("2026-11-{:02}", 1 + random(21))});
    if n.is_multiple_of(3) {
        body["tag_ids"] = json!([tag]);
    }
    body
}

/// Writes until `stop`: most requests wait for their answer; every
/// seventh hangs up after a few milliseconds, mid-request.
async fn writer(
    api: Api,
    ids: [String; 3],
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
) -> usize {
    let [account, category, tag] = ids;
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let id = uuid::Uuid::new_v4().to_string();
        let body = purchase(n, &id, &account, &category, &tag);
        let patience = if n.is_multiple_of(7) {
            Duration::from_millis(1 + random(20))
        } else {
            Duration::from_secs(30)
        };
        seen.lock().unwrap().maybe.insert(id.clone());
        let answer = api
            .http
            .post(format!("{}/v1/transactions", api.base))
            .bearer_auth(&api.key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .timeout(patience)
            .send()
            .await;
        match answer.map(|r| r.status().as_u16()) {
            Ok(200 | 201) => {
                let mut seen = seen.lock().unwrap();
                seen.maybe.remove(&id);
                seen.acked.insert(id);
            }
            // Cut off at the deadline, or hung up: maybe stored.
            Ok(503) | Err(_) => {}
            Ok(status) => panic!("create: {status}"),
        }
    }
    n as usize
}

/// Every stored row's id, with how often it is listed.
async fn stored_ids(api: &Api) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    let mut cursor = String::new();
    for _ in 0..100_000 {
        let page = api
            .ok(
                reqwest::Method::GET,
                &format!(
                    "/v1/transactions?view=ledger&from=2026-11-01&to=2026-11-30&limit=100{cursor}"
                ),
                None,
            )
            .await;
        for row in page["data"].as_array().expect("rows") {
            *ids.entry(row["id"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    ids
}

async fn writes_stay_live(database: Database, url: String) {
    let receipts = tempfile::tempdir().expect("receipts");
    let (server, api, account) = Server::start_starved(&url, receipts.path(), DEADLINE_S).await;
    let category = api
        .create("/v1/categories", json!({"title": "Mercado"}), "/id")
        .await;
    let tag = api
        .create(
            "/v1/tags",
            json!({"title": "Casa", "color_hex": "#112233"}),
            "/id",
        )
        .await;

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            tokio::spawn(writer(
                api.clone(),
                [account.clone(), category.clone(), tag.clone()],
                stop.clone(),
                seen.clone(),
            ))
        })
        .collect();
    // Another connection takes the write lock for longer than the
    // deadline, three times, so that queued writes are cut off.
    let started = Instant::now();
    while started.elapsed() + Duration::from_secs(3) < LOAD {
        tokio::time::sleep(Duration::from_millis(1_500 + random(1_000))).await;
        hold_write_lock(&url, Duration::from_millis(DEADLINE_S * 1_000 + 300)).await;
    }
    tokio::time::sleep(LOAD.saturating_sub(started.elapsed())).await;
    stop.store(true, Ordering::Relaxed);
    let mut sent = 0;
    for writer in writers {
        sent += writer.await.expect("writer");
    }

    // The load is over: each write is answered, in well under a deadline
    // plus what one write takes.
    let patience = Duration::from_secs(DEADLINE_S) + Duration::from_millis(500);
    for n in 0..5 {
        let id = uuid::Uuid::new_v4().to_string();
        let body = purchase(n, &id, &account, &category, &tag);
        let asked = Instant::now();
        let (status, answer) = api
            .send(reqwest::Method::POST, "/v1/transactions", Some(&body))
            .await
            .expect("answer after the load");
        assert_eq!(
            status,
            201,
            "write {n} after the load: {answer} in {:?}",
            asked.elapsed()
        );
        assert!(
            asked.elapsed() < patience,
            "write {n} after the load took {:?}",
            asked.elapsed()
        );
        seen.lock().unwrap().acked.insert(id);
    }

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let stored = stored_ids(&api).await;
    assert!(stored.values().all(|n| *n == 1), "a row listed twice");
    for id in &seen.acked {
        assert!(stored.contains_key(id), "acknowledged {id} is missing");
    }
    for id in stored.keys() {
        assert!(
            seen.acked.contains(id) || seen.maybe.contains(id),
            "{id} was stored but never sent"
        );
    }
    eprintln!(
        "{sent} writes sent, {} acknowledged, {} stored in {:?}",
        seen.acked.len(),
        stored.len(),
        started.elapsed()
    );
    assert!(seen.acked.len() > 1_000, "too few writes to tell");
    server.kill();
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writes_stay_live_under_64_writers_on_one_worker() {
    let (database, url) = Database::sqlite().await;
    writes_stay_live(database, url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_writes_stay_live_under_64_writers_on_one_worker() {
    if let Some((database, url)) = Database::postgres().await {
        writes_stay_live(database, url).await;
    }
}

/// `/readyz` while another connection holds the write lock (see
/// [`hold_write_lock`]) and a write waits for it: 503 `writes_stuck` once
/// the write has waited past the deadline (SQLite: its turn at the gate;
/// PostgreSQL: its session, waiting for the lock after the request was
/// cut off); 200 again once the lock is let go and writes move.
async fn readiness_fails_while_writes_are_stuck_and_recovers(database: Database, url: String) {
    let receipts = tempfile::tempdir().expect("receipts");
    let (server, api, account) = Server::start_starved(&url, receipts.path(), DEADLINE_S).await;
    let ready = || async {
        let answer = api
            .http
            .get(format!("{}/readyz", api.base))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("readyz answers");
        let status = answer.status().as_u16();
        let text = answer.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        )
    };
    assert_eq!(ready().await.0, 200);

    let holder = tokio::spawn({
        let url = url.clone();
        async move { hold_write_lock(&url, Duration::from_secs(4)).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A write that must wait for the lock (cut off at its deadline).
    let body = json!({"account_id": account, "type": "DEBIT", "amount": 1.5,
        "description": "Padaria", "date": "2026-11-20"});
    let (status, _) = api
        .send(reqwest::Method::POST, "/v1/transactions", Some(&body))
        .await
        .expect("answer");
    assert_eq!(
        status, 503,
        "the write waits for the lock past its deadline"
    );
    // Its turn at the gate (SQLite) or its session (PostgreSQL) goes on
    // waiting for the lock: stuck once that outlasts the deadline.
    let mut stuck = None;
    for _ in 0..20 {
        let (status, problem) = ready().await;
        if status == 503 {
            stuck = Some(problem);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let problem = stuck.expect("readyz answers 503 while the lock is held");
    assert_eq!(problem["code"], "writes_stuck", "{problem}");

    holder.await.expect("lock let go");
    let mut recovered = false;
    for _ in 0..50 {
        if ready().await.0 == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "ready again once writes move");
    let (status, answer) = api
        .send(reqwest::Method::POST, "/v1/transactions", Some(&body))
        .await
        .expect("answer");
    assert_eq!(status, 201, "{answer}");
    server.kill();
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_readiness_fails_while_writes_are_stuck_and_recovers() {
    let (database, url) = Database::sqlite().await;
    readiness_fails_while_writes_are_stuck_and_recovers(database, url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_readiness_fails_while_writes_are_stuck_and_recovers() {
    if let Some((database, url)) = Database::postgres().await {
        readiness_fails_while_writes_are_stuck_and_recovers(database, url).await;
    }
}
