//! The real binary's `import-ofx` command against a temporary SQLite
//! database: what it prints, that it honours `COFRE_NOW`, and that it fails
//! loudly (non-zero, a message on stderr) on bad input.

use std::process::Output;

use cofre_domain::account::{AccountChanges, AccountType};
use cofre_domain::transaction::{PageRequest, TransactionFilter, TxStatus};
use cofre_store::WriteContext;
use jiff::civil::date;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../api/tests/fixtures/ofx/bank-checking-sgml.ofx"
);
/// Today is 2026-11-10 in São Paulo: rows after it are PENDING.
const NOW: &str = "2026-11-10T12:00:00Z";

mod common;

fn cofre(database_url: &str, args: &[&str]) -> Output {
    let env = [("COFRE_NOW", NOW), ("COFRE_TIMEZONE", "America/Sao_Paulo")];
    common::cofre(database_url, args, &env)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn import_ofx_imports_once_and_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("cli.db").display());
    let store = cofre_store::connect(&url).await.expect("store");
    let now = NOW.parse().expect("NOW");
    let user = store.create_user(Some("Ana"), now).await.expect("user").id;
    let changes = AccountChanges {
        account_type: Some(AccountType::Bank),
        ..Default::default()
    };
    let ctx = WriteContext {
        now,
        today: date(2026, 11, 10),
    };
    let (account, _) = store
        .create_account(user, &changes, None, "BRL", ctx)
        .await
        .expect("account");
    let id = account.account.id.to_string();

    let first = cofre(&url, &["import-ofx", "--account", &id, FIXTURE]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        stdout(&first),
        format!("imported 9 transactions (0 already present) into account {id}\n")
    );
    let again = cofre(&url, &["import-ofx", "--account", &id, FIXTURE]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        format!("imported 0 transactions (9 already present) into account {id}\n")
    );

    let page = store
        .list_transactions(
            user,
            &TransactionFilter::window(date(2026, 11, 1), date(2026, 11, 30)),
            &PageRequest {
                limit: 100,
                after: None,
            },
        )
        .await
        .expect("rows");
    assert_eq!(page.items.len(), 9);
    let pending = page
        .items
        .iter()
        .filter(|t| t.state.status == TxStatus::Pending)
        .count();
    assert_eq!(pending, 4, "rows after 2026-11-10 are scheduled");
    assert!(page.items.iter().all(|t| t.open_finance));
    // Every row is stamped with the import's time (the API never shows
    // it; the stored column does).
    let db = sqlx::SqlitePool::connect(&url).await.expect("sqlite");
    let stamps: Vec<String> = sqlx::query_scalar("SELECT DISTINCT created_at FROM transactions")
        .fetch_all(&db)
        .await
        .expect("stamps");
    assert_eq!(stamps, [cofre_domain::time::format_timestamp(now)]);
    let view = store
        .get_account(user, account.account.id)
        .await
        .expect("account");
    assert!(view.account.open_finance_connected);
    assert_eq!(view.account.connector_name.as_deref(), Some("OFX"));
}

#[test]
fn import_ofx_fails_loudly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("cli.db").display());
    let garbage = dir.path().join("statement.ofx");
    std::fs::write(&garbage, "<OFX><BANKMSGSRSV1>").expect("write");
    let missing = dir.path().join("missing.ofx");
    let some_account = "00000000-0000-4000-8000-000000000000";
    for (args, message) in [
        (
            vec!["import-ofx", "--account", "42", FIXTURE],
            "--account must be an account id (UUID)",
        ),
        (
            vec![
                "import-ofx",
                "--account",
                some_account,
                missing.to_str().expect("path"),
            ],
            "cannot open",
        ),
        (
            vec![
                "import-ofx",
                "--account",
                some_account,
                garbage.to_str().expect("path"),
            ],
            "is not a statement cofre can read: <OFX> opened at line 1 is never closed",
        ),
        (
            vec!["import-ofx", "--account", some_account, FIXTURE],
            "no account with id 00000000-0000-4000-8000-000000000000",
        ),
    ] {
        let output = cofre(&url, &args);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty());
    }
}
