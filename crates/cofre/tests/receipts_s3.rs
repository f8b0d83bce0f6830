//! The operator commands with receipt files in an S3 bucket
//! (`--receipts-url`): `backup` and `restore` copy only the database and
//! say where the files are; `users delete` removes the user's objects, and
//! `serve` refuses a bucket that does not answer. The last two need the
//! S3 server of `scripts/ensure-s3` (`COFRE_TEST_S3_ENDPOINT`).

use std::process::Output;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use cofre_api::receipts::{AmazonS3Builder, ReceiptStorage};
use cofre_domain::Money;
use cofre_domain::account::{AccountChanges, AccountType};
use cofre_store::WriteContext;
use jiff::civil::date;

mod common;

const NAME: &str = "0123456789abcdef0123456789abcdef.pdf";

fn ctx() -> WriteContext {
    WriteContext {
        now: "2026-11-22T15:00:00Z".parse().unwrap(),
        today: date(2026, 11, 22),
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The S3 endpoint; `None` (with a notice) when unset, a failure under
/// `CI=true`.
fn endpoint() -> Option<String> {
    match std::env::var("COFRE_TEST_S3_ENDPOINT") {
        Ok(url) if !url.is_empty() => Some(url.trim_end_matches('/').to_owned()),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but COFRE_TEST_S3_ENDPOINT is not set: the S3 tests must run")
        }
        _ => {
            eprintln!("SKIPPED (S3): set COFRE_TEST_S3_ENDPOINT to run this test");
            None
        }
    }
}

/// One unsigned HTTP/1.1 request to the S3 server (moto takes them).
async fn raw_s3(endpoint: &str, method: &str, path: &str, body: &[u8]) -> u16 {
    let host = endpoint.strip_prefix("http://").expect("http://");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("send");
    stream.write_all(body).await.expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    String::from_utf8_lossy(&answer)
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// The environment `cofre` reads the bucket's settings from.
fn aws_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", endpoint.to_owned()),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
        ("AWS_ACCESS_KEY_ID", "cofre-test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "cofre-test".to_owned()),
    ]
}

fn cofre_with(url: &str, args: &[&str], env: &[(&'static str, String)]) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    common::cofre(url, args, &env)
}

#[tokio::test]
async fn backup_and_restore_with_a_bucket_copy_only_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let store = cofre_store::connect(&url).await.unwrap();
    store.create_user(Some("Ana"), ctx().now).await.unwrap();
    drop(store);
    let copy = dir.path().join("copy.db");
    let backup = cofre_with(
        &url,
        &["backup", "--out", copy.to_str().unwrap()],
        &[("COFRE_RECEIPTS_URL", "s3://receipts/cofre".to_owned())],
    );
    assert!(backup.status.success(), "{}", text(&backup));
    let said = text(&backup);
    assert!(
        said.contains("receipt files live in s3://receipts/cofre"),
        "{said}"
    );
    assert!(copy.exists());
    assert!(!dir.path().join("copy.db.receipts").exists());

    let restored = format!("sqlite://{}", dir.path().join("restored.db").display());
    let restore = cofre_with(
        &restored,
        &[
            "restore",
            "--from",
            copy.to_str().unwrap(),
            "--receipts-url",
            "s3://receipts/cofre",
        ],
        &[],
    );
    assert!(restore.status.success(), "{}", text(&restore));
    assert!(text(&restore).contains("read from s3://receipts/cofre"));
    assert!(dir.path().join("restored.db").exists());
}

#[tokio::test]
async fn deleting_a_user_removes_their_objects_from_the_bucket() {
    let Some(endpoint) = endpoint() else { return };
    let bucket = format!("cofre-cli-{}", uuid::Uuid::new_v4().simple());
    assert_eq!(
        raw_s3(&endpoint, "PUT", &format!("/{bucket}"), b"").await,
        200
    );
    let kept = "fedcba9876543210fedcba9876543210.png";
    for name in [NAME, kept] {
        let path = format!("/{bucket}/receipts/{name}");
        assert_eq!(raw_s3(&endpoint, "PUT", &path, b"%PDF-1.4").await, 200);
    }

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let store = cofre_store::connect(&url).await.unwrap();
    let ana = store.create_user(Some("Ana"), ctx().now).await.unwrap().id;
    let bank = AccountChanges {
        account_type: Some(AccountType::Bank),
        ..Default::default()
    };
    // The opening balance is a row that can hold a receipt.
    let (_, row) = store
        .create_account(ana, &bank, Some(Money::from_cents(10_000)), "BRL", ctx())
        .await
        .unwrap();
    let id = row.expect("an opening-balance row");
    store
        .set_receipt(ana, id, Some(NAME), ctx().now)
        .await
        .unwrap();
    drop(store);

    let mut env = aws_env(&endpoint);
    env.push(("COFRE_RECEIPTS_URL", format!("s3://{bucket}/receipts")));
    let deleted = cofre_with(&url, &["users", "delete", &ana.to_string(), "--yes"], &env);
    assert!(deleted.status.success(), "{}", text(&deleted));
    assert!(
        text(&deleted).contains("1 receipt files"),
        "{}",
        text(&deleted)
    );

    let storage = ReceiptStorage::s3(
        &format!("s3://{bucket}/receipts"),
        AmazonS3Builder::new()
            .with_endpoint(&endpoint)
            .with_allow_http(true)
            .with_access_key_id("cofre-test")
            .with_secret_access_key("cofre-test"),
    )
    .unwrap();
    assert_eq!(storage.list().await.unwrap(), [kept]);
}

#[tokio::test]
async fn serve_refuses_a_bucket_that_does_not_answer() {
    let Some(endpoint) = endpoint() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let mut env = aws_env(&endpoint);
    let missing = format!("s3://cofre-missing-{}/x", uuid::Uuid::new_v4().simple());
    env.push(("COFRE_RECEIPTS_URL", missing.clone()));
    env.push(("COFRE_BIND", "127.0.0.1:0".to_owned()));
    let serve = cofre_with(&url, &["serve"], &env);
    assert!(!serve.status.success());
    assert!(text(&serve).contains(&missing), "{}", text(&serve));
}
