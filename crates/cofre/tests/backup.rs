//! `cofre backup` takes a consistent copy of a SQLite database while
//! writers go on, and `cofre restore` puts it in place: a server on the
//! restored file shows everything that was committed before the backup
//! began, every balance equal to its rows, and no half-written transfer.

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cofre_domain::account::{AccountChanges, AccountType};
use cofre_domain::transaction::{PageRequest, TransactionFilter, TxStatus, TxType};
use cofre_domain::transfer::{TransferInput, new_transfer};
use cofre_domain::{Money, UserId};
use cofre_store::{Store, WriteContext};
use jiff::civil::date;

const NOW: &str = "2026-11-22T15:00:00Z";

mod common;

fn cofre(database_url: &str, args: &[&str]) -> Output {
    common::cofre(database_url, args, &[])
}

fn ctx() -> WriteContext {
    WriteContext {
        now: NOW.parse().unwrap(),
        today: date(2026, 11, 22),
    }
}

/// Every stored row of the user in 2026, hidden ones included.
async fn rows(store: &dyn Store, user: UserId) -> Vec<cofre_domain::transaction::Transaction> {
    let mut all = Vec::new();
    for hidden in [false, true] {
        let filter = TransactionFilter {
            hidden,
            ..TransactionFilter::window(date(2026, 1, 1), date(2026, 12, 31))
        };
        let page = store
            .list_transactions(
                user,
                &filter,
                &PageRequest {
                    after: None,
                    limit: 100_000,
                },
            )
            .await
            .expect("rows");
        all.extend(page.items);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_restores_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let store = cofre_store::connect(&url).await.expect("store");
    let user = store
        .create_user(Some("Ana"), ctx().now)
        .await
        .expect("user")
        .id;
    let bank = AccountChanges {
        account_type: Some(AccountType::Bank),
        ..Default::default()
    };
    let (from, _) = store
        .create_account(
            user,
            &bank,
            Some(Money::from_cents(1_000_000)),
            "BRL",
            ctx(),
        )
        .await
        .expect("account");
    let (to, _) = store
        .create_account(user, &bank, None, "BRL", ctx())
        .await
        .expect("account");
    let (from, to) = (from.account.id, to.account.id);

    // Transfers keep being written while the backup runs.
    let writing = Arc::new(AtomicBool::new(true));
    let writer = {
        let (store, writing) = (store.clone(), writing.clone());
        tokio::spawn(async move {
            let mut written = 0;
            while writing.load(Ordering::SeqCst) {
                let input = TransferInput {
                    from_account_id: Some(from),
                    to_account_id: Some(to),
                    amount: Some(Money::from_cents(101)),
                    description: Some("Reserva".into()),
                    date: Some(date(2026, 11, 20)),
                    notes: None,
                };
                let transfer = new_transfer(&input, date(2026, 11, 22)).expect("transfer");
                store
                    .create_transfer(user, &transfer, ctx().now)
                    .await
                    .expect("write");
                written += 1;
            }
            written
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let before = rows(store.as_ref(), user).await.len();
    let copy = dir.path().join("copy.db");
    let backup = cofre(&url, &["backup", "--out", copy.to_str().unwrap()]);
    assert!(
        backup.status.success(),
        "{}",
        String::from_utf8_lossy(&backup.stderr)
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    writing.store(false, Ordering::SeqCst);
    let written = writer.await.expect("writer");
    assert!(written > 0);

    // A second backup to the same file is refused.
    let again = cofre(&url, &["backup", "--out", copy.to_str().unwrap()]);
    assert!(!again.status.success());

    // Restore into a new place and read it back.
    let restored_url = format!("sqlite://{}", dir.path().join("restored.db").display());
    let restore = cofre(
        &restored_url,
        &["restore", "--from", copy.to_str().unwrap()],
    );
    assert!(
        restore.status.success(),
        "{}",
        String::from_utf8_lossy(&restore.stderr)
    );
    let refused = cofre(
        &restored_url,
        &["restore", "--from", copy.to_str().unwrap()],
    );
    assert!(
        !refused.status.success(),
        "an existing database needs --force"
    );
    let restored = cofre_store::connect(&restored_url)
        .await
        .expect("restored store");
    let rows = rows(restored.as_ref(), user).await;
    assert!(
        rows.len() >= before,
        "{} rows restored, {before} committed before",
        rows.len()
    );
    // Both legs of every transfer, and balances equal to their rows.
    let mut groups = std::collections::HashMap::new();
    for row in &rows {
        if let Some(group) = row.transfer_group_id {
            *groups.entry(group).or_insert(0) += 1;
        }
    }
    assert!(groups.values().all(|n| *n == 2), "a transfer with one leg");
    for account in restored.list_accounts(user).await.expect("accounts") {
        let sum: i64 = rows
            .iter()
            .filter(|r| r.account_id == account.account.id)
            .filter(|r| r.state.status == TxStatus::Posted)
            .map(|r| match r.state.tx_type {
                TxType::Credit => r.state.amount.cents(),
                TxType::Debit => -r.state.amount.cents(),
            })
            .sum();
        assert_eq!(account.balance.cents(), sum);
    }
    // Not a database: refused.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"not a database at all").unwrap();
    let bad = cofre(
        &restored_url,
        &["restore", "--force", "--from", junk.to_str().unwrap()],
    );
    assert!(!bad.status.success());
}

#[tokio::test]
async fn receipts_go_with_the_backup_and_come_back_with_the_restore() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let store = cofre_store::connect(&url).await.expect("store");
    store
        .create_user(Some("Ana"), ctx().now)
        .await
        .expect("user");
    let receipts = dir.path().join("receipts");
    std::fs::create_dir(&receipts).unwrap();
    let names = [
        "0123456789abcdef0123456789abcdef.png",
        "fedcba9876543210fedcba9876543210.pdf",
    ];
    for name in names {
        std::fs::write(receipts.join(name), name.as_bytes()).unwrap();
    }
    std::fs::write(receipts.join("notes.txt"), b"not a receipt").unwrap();

    let copy = dir.path().join("copy.db");
    let receipts_arg = receipts.to_str().unwrap();
    let backup = cofre(
        &url,
        &[
            "backup",
            "--out",
            copy.to_str().unwrap(),
            "--receipts-dir",
            receipts_arg,
        ],
    );
    let said = String::from_utf8_lossy(&backup.stdout).into_owned();
    assert!(
        backup.status.success(),
        "{}",
        String::from_utf8_lossy(&backup.stderr)
    );
    assert!(said.contains("and 2 receipt files to"), "{said}");
    let beside = dir.path().join("copy.db.receipts");
    for name in names {
        assert_eq!(std::fs::read(beside.join(name)).unwrap(), name.as_bytes());
    }
    assert!(
        !beside.join("notes.txt").exists(),
        "only receipt files are copied"
    );

    let restored_url = format!("sqlite://{}", dir.path().join("restored.db").display());
    let restored_receipts = dir.path().join("restored-receipts");
    let restore = cofre(
        &restored_url,
        &[
            "restore",
            "--from",
            copy.to_str().unwrap(),
            "--receipts-dir",
            restored_receipts.to_str().unwrap(),
        ],
    );
    assert!(
        restore.status.success(),
        "{}",
        String::from_utf8_lossy(&restore.stderr)
    );
    for name in names {
        assert_eq!(
            std::fs::read(restored_receipts.join(name)).unwrap(),
            name.as_bytes()
        );
    }

    // PostgreSQL is refused before anything is written.
    let pg = cofre(
        "postgres://nobody@127.0.0.1:1/none",
        &[
            "backup",
            "--out",
            dir.path().join("pg.db").to_str().unwrap(),
        ],
    );
    assert!(String::from_utf8_lossy(&pg.stderr).contains("pg_dump"));
    assert!(!dir.path().join("pg.db.receipts").exists());
}
