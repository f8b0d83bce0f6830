//! A read the database cannot serve yet does not stall the server: with
//! `cofre serve` on one core and one runtime worker, another connection
//! holds the transactions so that no one may read them (an `ACCESS
//! EXCLUSIVE` table lock). A read of a transaction then waits, and is
//! answered 503 at the request's deadline, while requests that need no
//! database keep being answered at once; once the lock is let go, the
//! same read answers 200.
//!
//! On PostgreSQL only: a running server's SQLite connections keep the
//! file open in WAL mode, and no other connection can then take it
//! exclusively (the one way to keep a WAL reader out). SQLite's readers'
//! busy wait is tested in the store, against a real file held
//! exclusively (`sync_reads`'s tests).

use serde_json::json;
use sqlx::Connection;
use std::time::{Duration, Instant};

mod common;

use common::database::Database;
use common::server::Server;

/// The server's request deadline, in seconds.
const DEADLINE_S: u64 = 1;

/// Another connection holding the transactions so that no one else may
/// read them, until it rolls back.
async fn hold(url: &str) -> sqlx::PgConnection {
    let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
    sqlx::query("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    sqlx::query("LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE")
        .execute(&mut conn)
        .await
        .expect("lock");
    conn
}

async fn a_held_database_stalls_only_its_readers(database: Database, url: String) {
    let receipts = tempfile::tempdir().expect("receipts");
    let (server, api, account) = Server::start_starved(&url, receipts.path(), DEADLINE_S).await;
    let id = api
        .create(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 12.5,
                   "description": "Pão", "date": "2026-11-20"}),
            "/transaction/id",
        )
        .await;
    let path = format!("/v1/transactions/{id}");
    api.ok(reqwest::Method::GET, &path, None).await;

    let mut holder = hold(&url).await;
    let read = tokio::spawn({
        let api = api.clone();
        let path = path.clone();
        async move {
            let started = Instant::now();
            let (status, body) = api
                .send(reqwest::Method::GET, &path, None)
                .await
                .expect("an answer");
            (status, body, started.elapsed())
        }
    });
    // While the read waits, the one worker serves other requests at once.
    let mut answered = 0;
    while !read.is_finished() {
        let started = Instant::now();
        let health = api
            .http
            .get(format!("{}/healthz", api.base))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("healthz answers");
        assert_eq!(health.status().as_u16(), 200);
        let took = started.elapsed();
        // A thread stalled by the read would hold this past the deadline.
        assert!(
            took < Duration::from_millis(500),
            "healthz took {took:?} while a read waited"
        );
        answered += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body, took) = read.await.expect("read task");
    assert_eq!(status, 503, "{body}");
    assert!(
        took >= Duration::from_millis(DEADLINE_S * 1000 - 150)
            && took < Duration::from_millis(DEADLINE_S * 1000 + 1500),
        "answered after {took:?}"
    );
    assert!(
        answered >= 5,
        "only {answered} answers while the read waited"
    );

    sqlx::query("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("unlock");
    let row = api.ok(reqwest::Method::GET, &path, None).await;
    assert!(row.to_string().contains(&id), "{row}");
    server.kill();
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_held_database_stalls_only_its_readers() {
    if let Some((database, url)) = Database::postgres().await {
        a_held_database_stalls_only_its_readers(database, url).await;
    }
}
