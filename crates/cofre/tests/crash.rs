//! Crash safety of the real server: concurrent writers with client ids
//! against `cofre serve`, killed with SIGKILL at a random moment several
//! times and restarted on the same database. Every write acknowledged
//! with 2xx must be there with its exact values, a retry of a request that
//! was in flight must answer 200 or 201 (never 409 or 500) and leave one
//! row, every transfer has both legs or none, and balances equal their
//! rows. On SQLite and on PostgreSQL. Also: SIGTERM with a request stuck
//! in flight ends the process within `COFRE_SHUTDOWN_GRACE`.

use serde_json::{Value, json};
use sqlx::Connection;
use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::database::Database;
use common::server::{Api, Server};

const ROUNDS: usize = 4;
/// Eight, so writes on SQLite arrive while others wait and share a group
/// commit: a kill can land between a batch's savepoints and its `COMMIT`.
const WRITERS: usize = 8;

/// What the writers saw: acknowledged creations and ones in flight at
/// the kill (no answer), by client id; acknowledged transfers.
#[derive(Default)]
struct Ledger {
    acked: HashMap<String, Value>,
    in_flight: HashMap<String, Value>,
    transfers: Vec<(String, String)>,
}

/// A pseudo-random number from a fresh UUID (no extra dependency).
fn random(below: u64) -> u64 {
    (uuid::Uuid::new_v4().as_u128() % u128::from(below)) as u64
}

/// Writes until the server stops answering: creations with client ids on
/// `bank`, and every fourth request a transfer between the two accounts.
async fn writer(api: Api, bank: String, savings: String, ledger: Arc<Mutex<Ledger>>) {
    for n in 0.. {
        if n % 4 == 3 {
            let body = json!({"from_account_id": bank, "to_account_id": savings,
                "amount": 1 + random(500), "description": "Reserva", "date": "2026-11-21"});
            match api
                .send(reqwest::Method::POST, "/v1/transfers", Some(&body))
                .await
            {
                Ok((201, answer)) => {
                    let legs = (
                        answer["transfer_sent_transaction_id"]
                            .as_str()
                            .unwrap()
                            .to_owned(),
                        answer["transfer_received_transaction_id"]
                            .as_str()
                            .unwrap()
                            .to_owned(),
                    );
                    ledger.lock().unwrap().transfers.push(legs);
                }
                Ok((status, answer)) => panic!("transfer: {status} {answer}"),
                Err(_) => return,
            }
            continue;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let cents = 1 + random(100_000);
        let body = json!({"id": id, "account_id": bank,
            "type": if n % 3 == 0 { "CREDIT" } else { "DEBIT" },
            "amount": format!("{}.{:02}", cents / 100, cents % 100).parse::<f64>().unwrap(),
            "description": format!("Compra {n}"),
            "date": format!("2026-11-{:02}", 1 + random(21))});
        ledger
            .lock()
            .unwrap()
            .in_flight
            .insert(id.clone(), body.clone());
        match api
            .send(reqwest::Method::POST, "/v1/transactions", Some(&body))
            .await
        {
            Ok((201, _)) => {
                let mut ledger = ledger.lock().unwrap();
                ledger.in_flight.remove(&id);
                ledger.acked.insert(id, body);
            }
            Ok((status, answer)) => panic!("create: {status} {answer}"),
            // No answer: in flight when the process died.
            Err(_) => return,
        }
    }
}

fn same_row(stored: &Value, sent: &Value) {
    for field in ["account_id", "type", "amount", "description", "date"] {
        assert_eq!(stored[field], sent[field], "{field} of {stored}");
    }
}

/// All stored rows of the user in November 2026, hidden ones included.
async fn all_rows(api: &Api) -> Vec<Value> {
    let mut rows = Vec::new();
    for hidden in ["false", "true"] {
        let mut cursor = String::new();
        for _ in 0..10_000 {
            let page = api
                .ok(
                    reqwest::Method::GET,
                    &format!("/v1/transactions?view=ledger&hidden={hidden}&from=2026-11-01&to=2026-11-30&limit=100{cursor}"),
                    None,
                )
                .await;
            rows.extend(page["data"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(next) => cursor = format!("&cursor={next}"),
                None => break,
            }
        }
    }
    rows
}

fn cents(value: &Value) -> i64 {
    (value.as_f64().expect("amount") * 100.0).round() as i64
}

async fn survives_sigkill(database: Database, url: String) {
    let receipts = tempfile::tempdir().expect("receipts");
    let (server, key) = Server::start(&url, receipts.path(), &[]).await;
    let api = Api {
        http: reqwest::Client::new(),
        base: server.base.clone(),
        key: key.expect("the first start prints a key"),
    };
    let bank = api
        .create(
            "/v1/accounts",
            json!({"type": "BANK", "title": "Conta", "initial_balance": 100000}),
            "/id",
        )
        .await;
    let savings = api
        .create(
            "/v1/accounts",
            json!({"type": "BANK", "title": "Poupança"}),
            "/id",
        )
        .await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut server = Some(server);
    let mut api = api;
    let started = Instant::now();
    for round in 0..ROUNDS {
        let writers: Vec<_> = (0..WRITERS)
            .map(|_| {
                tokio::spawn(writer(
                    api.clone(),
                    bank.clone(),
                    savings.clone(),
                    ledger.clone(),
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(150 + random(600))).await;
        server.take().unwrap().kill();
        for w in writers {
            w.await.expect("writer");
        }
        let (restarted, _) = Server::start(&url, receipts.path(), &[]).await;
        api.base = restarted.base.clone();
        server = Some(restarted);

        // Every acknowledged write is there, exactly as sent.
        let acked: Vec<(String, Value)> = ledger
            .lock()
            .unwrap()
            .acked
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (id, sent) in &acked {
            let stored = api
                .ok(
                    reqwest::Method::GET,
                    &format!("/v1/transactions/{id}"),
                    None,
                )
                .await;
            same_row(&stored["transaction"], sent);
        }
        // A retry of what was in flight is a creation or a replay.
        let in_flight: Vec<(String, Value)> = ledger.lock().unwrap().in_flight.drain().collect();
        for (id, sent) in in_flight {
            let (status, answer) = api
                .send(reqwest::Method::POST, "/v1/transactions", Some(&sent))
                .await
                .expect("retry");
            assert!(
                status == 200 || status == 201,
                "round {round}: retry of {id}: {status} {answer}"
            );
            same_row(&answer["transaction"], &sent);
            ledger.lock().unwrap().acked.insert(id, sent);
        }
        eprintln!("round {round}: {} rows acknowledged so far", acked.len());
    }

    // Each row once; each transfer both legs or none; balances = rows.
    let rows = all_rows(&api).await;
    let mut seen = HashMap::new();
    for row in &rows {
        *seen
            .entry(row["id"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    assert!(seen.values().all(|n| *n == 1), "a row listed twice");
    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    for id in ledger.acked.keys() {
        assert_eq!(seen.get(id), Some(&1), "acknowledged {id} missing");
    }
    for (sent, received) in &ledger.transfers {
        assert!(
            seen.contains_key(sent) && seen.contains_key(received),
            "transfer legs"
        );
    }
    let mut groups: HashMap<String, usize> = HashMap::new();
    for row in rows.iter().filter(|r| r["transfer_group_id"].is_string()) {
        *groups
            .entry(row["transfer_group_id"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    assert!(
        groups.values().all(|n| *n == 2),
        "a transfer with one leg: {groups:?}"
    );
    let accounts = api.ok(reqwest::Method::GET, "/v1/accounts", None).await;
    for account in accounts["data"].as_array().unwrap() {
        let id = account["id"].as_str().unwrap();
        let sum: i64 = rows
            .iter()
            .filter(|r| r["account_id"] == id && r["status"] == "POSTED")
            .map(|r| {
                if r["type"] == "CREDIT" {
                    cents(&r["amount"])
                } else {
                    -cents(&r["amount"])
                }
            })
            .sum();
        assert_eq!(cents(&account["balance"]), sum, "balance of {id}");
    }
    eprintln!(
        "{ROUNDS} kills, {} acknowledged rows, {} transfers, in {:?}",
        ledger.acked.len(),
        ledger.transfers.len(),
        started.elapsed()
    );
    server.take().unwrap().kill();
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_loses_no_acknowledged_write_when_killed() {
    let (database, url) = Database::sqlite().await;
    survives_sigkill(database, url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_loses_no_acknowledged_write_when_killed() {
    if let Some((database, url)) = Database::postgres().await {
        survives_sigkill(database, url).await;
    }
}

/// SIGTERM with a request stuck in flight (a write waiting on a lock this
/// test holds) ends the process once the grace is over, not when the
/// request would end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_waits_no_longer_than_the_grace() {
    let (database, url) = Database::sqlite().await;
    let receipts = tempfile::tempdir().expect("receipts");
    let settings = [
        ("COFRE_SHUTDOWN_GRACE", "1"),
        ("COFRE_REQUEST_TIMEOUT", "60"),
    ];
    let (mut server, key) = Server::start(&url, receipts.path(), &settings).await;
    let api = Api {
        http: reqwest::Client::new(),
        base: server.base.clone(),
        key: key.expect("key"),
    };
    let bank = api
        .create(
            "/v1/accounts",
            json!({"type": "BANK", "title": "Conta"}),
            "/id",
        )
        .await;
    let mut lock = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("second connection");
    sqlx::raw_sql("BEGIN IMMEDIATE")
        .execute(&mut lock)
        .await
        .expect("write lock");
    let stuck = {
        let api = api.clone();
        tokio::spawn(async move {
            let body =
                json!({"account_id": bank, "type": "DEBIT", "amount": 1, "description": "x"});
            api.send(reqwest::Method::POST, "/v1/transactions", Some(&body))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = server.child.id().to_string();
    let signalled = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let exited = loop {
        if let Some(status) = server.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(6),
            "still running {:?} after SIGTERM with a 1 s grace",
            signalled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exited.success(), "{exited}");
    assert!(
        signalled.elapsed() >= Duration::from_millis(900),
        "the grace was not given"
    );
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut lock)
        .await
        .expect("release");
    assert!(
        stuck.await.expect("request task").is_err(),
        "the stuck request got no answer"
    );
    database.drop_it().await;
}
