//! A fleet: three `cofre serve` processes started together on one empty
//! PostgreSQL database, one Redis and one S3-compatible object server,
//! with the real binary. Exactly one of them creates the first user; a
//! key's minute limit and bulk limit hold across the three (the sum of
//! their 2xx never passes the limit); a receipt uploaded through A is
//! served by B and removed through C; a write through one is read at once
//! through the others.
//!
//! Needs `COFRE_TEST_POSTGRES_URL`, `COFRE_TEST_REDIS_URL` and
//! `COFRE_TEST_S3_ENDPOINT` (scripts/test sets them); skipped with a
//! notice without them, except under `CI=true`.

use serde_json::json;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod common;

use common::database::Database;
use common::server::{Api, Server};

const MINUTE_LIMIT: u64 = 30;
const BULK_LIMIT: u64 = 3;

fn setting(name: &str) -> Option<String> {
    common::server_url(name, "fleet")
}

fn minute_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        / 60
}

/// A new key of the user, with its own budgets.
fn new_key(url: &str, user: &str) -> String {
    let output = common::cofre(url, &["keys", "create", "--user", user], &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A multipart form with one file field.
fn form(bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "cofre-fleet-boundary-81Hq2";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r.png\"\r\n\
         Content-Type: image/png\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The PNG fixture the receipt tests use.
fn png() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../api/tests/fixtures/receipts/receipt.png");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_servers_share_one_database_one_redis_and_one_bucket() {
    let (Some(redis), Some(s3)) = (
        setting("COFRE_TEST_REDIS_URL"),
        setting("COFRE_TEST_S3_ENDPOINT"),
    ) else {
        return;
    };
    let Some((database, url)) = Database::postgres().await else {
        return;
    };
    let http = reqwest::Client::new();
    let bucket = format!("cofre-fleet-{}", uuid::Uuid::new_v4().simple());
    let created = http
        .put(format!("{}/{bucket}", s3.trim_end_matches('/')))
        .send()
        .await
        .expect("S3 server");
    assert!(
        created.status().is_success(),
        "bucket: {}",
        created.status()
    );

    let receipts_url = format!("s3://{bucket}/receipts");
    let settings = [
        ("COFRE_REDIS_URL", redis.as_str()),
        ("COFRE_RECEIPTS_URL", receipts_url.as_str()),
        ("AWS_ENDPOINT_URL", s3.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "cofre-test"),
        ("AWS_SECRET_ACCESS_KEY", "cofre-test"),
        ("COFRE_RATE_LIMIT_PER_MINUTE", "30"),
        ("COFRE_RATE_LIMIT_PER_DAY", "0"),
        ("COFRE_BULK_LIMIT_PER_HOUR", "3"),
    ];
    // Three servers start together on the empty database.
    let unused = tempfile::tempdir().expect("dir");
    let ((a, key_a), (b, key_b), (c, key_c)) = tokio::join!(
        Server::start(&url, unused.path(), &settings),
        Server::start(&url, unused.path(), &settings),
        Server::start(&url, unused.path(), &settings),
    );
    let keys: Vec<String> = [key_a, key_b, key_c].into_iter().flatten().collect();
    assert_eq!(keys.len(), 1, "exactly one server creates the first user");
    let through = |server: &Server, key: &str| Api {
        http: http.clone(),
        base: server.base.clone(),
        key: key.to_owned(),
    };
    let first = &keys[0];
    let (api_a, api_b, api_c) = (through(&a, first), through(&b, first), through(&c, first));
    let user = api_a.ok(reqwest::Method::GET, "/v1/me", None).await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A write through A is read at once through B and C.
    let account = api_a
        .create(
            "/v1/accounts",
            json!({"type": "BANK", "title": "Conta", "initial_balance": 100}),
            "/id",
        )
        .await;
    for api in [&api_b, &api_c] {
        api.ok(reqwest::Method::GET, "/v1/accounts", None).await;
    }
    let row = api_a
        .create(
            "/v1/transactions",
            json!({"account_id": account, "type": "DEBIT", "amount": 12.5,
                "description": "Mercado", "date": "2026-11-20"}),
            "/transaction/id",
        )
        .await;
    for api in [&api_b, &api_c] {
        let accounts = api.ok(reqwest::Method::GET, "/v1/accounts", None).await;
        assert_eq!(
            accounts["data"][0]["balance"].as_f64(),
            Some(87.5),
            "{}",
            api.base
        );
    }

    // A receipt uploaded through A is served by B and removed through C.
    let bytes = png();
    let (content_type, body) = form(&bytes);
    let uploaded = http
        .put(format!("{}/v1/transactions/{row}/receipt", a.base))
        .bearer_auth(first)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("upload");
    assert_eq!(uploaded.status(), 200);
    let receipt_url = serde_json::from_str::<serde_json::Value>(&uploaded.text().await.unwrap())
        .unwrap()["receipt_url"]
        .as_str()
        .unwrap()
        .to_owned();
    let name = receipt_url.rsplit('/').next().unwrap().to_owned();
    let served = http
        .get(format!("{}/receipts/{name}", b.base))
        .send()
        .await
        .expect("download");
    assert_eq!(served.status(), 200);
    assert_eq!(served.bytes().await.unwrap().as_ref(), bytes.as_slice());
    api_c
        .ok(
            reqwest::Method::DELETE,
            &format!("/v1/transactions/{row}/receipt"),
            None,
        )
        .await;
    for server in [&a, &b, &c] {
        let gone = http
            .get(format!("{}/receipts/{name}", server.base))
            .send()
            .await
            .expect("download");
        assert_eq!(gone.status(), 404, "{}", server.base);
    }

    // A fresh key's minute limit holds across the three servers.
    let key = new_key(&url, &user);
    let apis = [through(&a, &key), through(&b, &key), through(&c, &key)];
    let started = minute_now();
    let mut allowed = 0;
    for n in 0..(2 * MINUTE_LIMIT + 10) as usize {
        let (status, _) = apis[n % 3]
            .send(reqwest::Method::GET, "/v1/accounts", None)
            .await
            .expect("answer");
        match status {
            200 => allowed += 1,
            429 => {}
            other => panic!("{other}"),
        }
    }
    let windows = minute_now() - started + 1;
    assert!(
        allowed <= MINUTE_LIMIT * windows,
        "{allowed} allowed in {windows} minute windows across the fleet"
    );
    if windows == 1 {
        assert_eq!(allowed, MINUTE_LIMIT, "the fleet allows the limit, no less");
    }

    // So does a fresh key's bulk budget.
    let key = new_key(&url, &user);
    let apis = [through(&a, &key), through(&b, &key), through(&c, &key)];
    let hour = minute_now() / 60;
    let mut bulk_allowed = 0;
    for n in 0..(2 * BULK_LIMIT) as usize {
        let body = json!({"ids": [row], "set": {"description": format!("Mercado {n}")}});
        let (status, answer) = apis[n % 3]
            .send(reqwest::Method::POST, "/v1/transactions/bulk", Some(&body))
            .await
            .expect("answer");
        match status {
            200 => bulk_allowed += 1,
            429 => {}
            other => panic!("bulk: {other} {answer}"),
        }
    }
    if minute_now() / 60 == hour {
        assert_eq!(
            bulk_allowed, BULK_LIMIT,
            "bulk calls allowed across the fleet"
        );
    } else {
        assert!(
            bulk_allowed <= 2 * BULK_LIMIT,
            "{bulk_allowed} across an hour's turn"
        );
    }

    for server in [a, b, c] {
        server.kill();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    database.drop_it().await;
}
