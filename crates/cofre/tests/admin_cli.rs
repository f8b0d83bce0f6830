//! The operator commands for users and keys, through the real binary on a
//! temporary SQLite database: `users list` shows who exists, `keys rotate`
//! gives a new key with the same owner, scopes and label and revokes the
//! old one at once.

use std::process::Output;

use cofre_domain::auth::{Scope, split_key};

mod common;

fn cofre(database_url: &str, args: &[&str]) -> Output {
    common::cofre(database_url, args, &[])
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test]
async fn users_are_listed_and_keys_rotated() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("admin.db").display());
    let ana = ok(&cofre(&url, &["users", "create", "--name", "Ana"]));
    let bia = ok(&cofre(&url, &["users", "create", "--name", "Bia"]));
    let token = ok(&cofre(
        &url,
        &[
            "keys", "create", "--user", &ana, "--scopes", "read", "--label", "celular",
        ],
    ));

    let listed = ok(&cofre(&url, &["users", "list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines[0], "USER_ID\tCREATED\tACTIVE_KEYS\tNAME");
    assert!(
        lines[1].starts_with(&ana) && lines[1].ends_with("\t1\tAna"),
        "{listed}"
    );
    assert!(
        lines[2].starts_with(&bia) && lines[2].ends_with("\t0\tBia"),
        "{listed}"
    );

    let (old_id, _) = split_key(&token).expect("a key");
    let rotated = cofre(&url, &["keys", "rotate", &old_id.0.simple().to_string()]);
    let new_token = ok(&rotated);
    let (new_id, _) = split_key(&new_token).expect("a new key");
    assert_ne!(new_id, old_id);

    let store = cofre_store::connect(&url).await.expect("store");
    let old = store.find_api_key(old_id).await.unwrap().expect("old key");
    assert!(old.key.revoked_at.is_some(), "the old key is revoked");
    let new = store.find_api_key(new_id).await.unwrap().expect("new key");
    assert!(new.key.revoked_at.is_none());
    assert_eq!(new.key.user_id.to_string(), ana);
    assert_eq!(new.key.scopes, vec![Scope::Read]);
    assert_eq!(new.key.label.as_deref(), Some("celular"));
    assert!(cofre_api::auth::verify(
        &new.key,
        split_key(&new_token).unwrap().1
    ));

    // A revoked (or unknown) key cannot be rotated again; nothing changes.
    let again = cofre(&url, &["keys", "rotate", &old_id.0.simple().to_string()]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no such key"));
    let listed = ok(&cofre(&url, &["users", "list"]));
    assert!(
        listed.lines().nth(1).unwrap().ends_with("\t1\tAna"),
        "{listed}"
    );
}

#[tokio::test]
async fn a_deleted_user_leaves_nothing_behind() {
    use cofre_domain::account::{AccountChanges, AccountType, Patch};
    use cofre_domain::receipt::{ReceiptKind, file_name};
    use cofre_domain::transaction::{PageRequest, TransactionFilter};
    use cofre_store::WriteContext;

    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("admin.db").display());
    let receipts = dir.path().join("receipts");
    std::fs::create_dir_all(&receipts).unwrap();
    let ana = ok(&cofre(&url, &["users", "create", "--name", "Ana"]));
    let bia = ok(&cofre(&url, &["users", "create", "--name", "Bia"]));
    let token = ok(&cofre(&url, &["keys", "create", "--user", &ana]));

    let store = cofre_store::connect(&url).await.expect("store");
    let ctx = WriteContext {
        now: "2026-11-22T15:00:00Z".parse().unwrap(),
        today: jiff::civil::date(2026, 11, 22),
    };
    let (ana_id, bia_id) = (
        cofre_domain::UserId::parse(&ana).unwrap(),
        cofre_domain::UserId::parse(&bia).unwrap(),
    );
    let bank = AccountChanges {
        account_type: Some(AccountType::Bank),
        ..Default::default()
    };
    let seed = cofre_domain::Money::from_cents(10_000);
    let (ana_bank, ana_row) = store
        .create_account(ana_id, &bank, Some(seed), "BRL", ctx)
        .await
        .unwrap();
    // A card paid from the bank: the accounts point at each other.
    let card = AccountChanges {
        account_type: Some(AccountType::Credit),
        credit_due_day: Some(10),
        pay_bill_from_account_id: Patch::Set(ana_bank.account.id),
        ..Default::default()
    };
    store
        .create_account(ana_id, &card, None, "BRL", ctx)
        .await
        .unwrap();
    let name = file_name(&[7; 16], ReceiptKind::Png);
    std::fs::write(receipts.join(&name), b"png").unwrap();
    store
        .set_receipt(ana_id, ana_row.unwrap(), Some(&name), ctx.now)
        .await
        .unwrap();
    store
        .create_account(bia_id, &bank, Some(seed), "BRL", ctx)
        .await
        .unwrap();

    let refused = cofre(&url, &["users", "delete", &ana]);
    assert!(!refused.status.success(), "needs --yes");
    let receipts_dir = receipts.to_str().unwrap();
    let deleted = ok(&cofre(
        &url,
        &[
            "users",
            "delete",
            &ana,
            "--yes",
            "--receipts-dir",
            receipts_dir,
        ],
    ));
    assert!(deleted.contains("1 receipt files"), "{deleted}");
    assert!(!receipts.join(&name).exists(), "the receipt file is gone");
    let listed = ok(&cofre(&url, &["users", "list"]));
    assert!(!listed.contains(&ana) && listed.contains(&bia), "{listed}");
    let (key_id, _) = split_key(&token).unwrap();
    assert!(store.find_api_key(key_id).await.unwrap().is_none());
    assert!(store.list_accounts(ana_id).await.unwrap().is_empty());
    // The other user keeps everything.
    assert_eq!(store.list_accounts(bia_id).await.unwrap().len(), 1);
    let window = TransactionFilter {
        hidden: true,
        ..TransactionFilter::window(
            jiff::civil::date(2026, 1, 1),
            jiff::civil::date(2026, 12, 31),
        )
    };
    let page = PageRequest {
        after: None,
        limit: 10,
    };
    assert_eq!(
        store
            .list_transactions(bia_id, &window, &page)
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    // Gone is gone.
    let again = cofre(&url, &["users", "delete", &ana, "--yes"]);
    assert!(!again.status.success());
}

#[tokio::test]
async fn a_user_exports_to_a_file_as_json_or_csv() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("export.db").display());
    let ana = ok(&cofre(&url, &["users", "create", "--name", "Ana"]));
    ok(&cofre(
        &url,
        &[
            "demo-data",
            "--user",
            &ana,
            "--profile",
            "small",
            "--seed",
            "7",
        ],
    ));
    let json_path = dir.path().join("ana.json");
    let json_file = json_path.to_str().unwrap();
    ok(&cofre(
        &url,
        &["export", "--user", &ana, "--out", json_file],
    ));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).expect("a JSON document");
    assert_eq!(doc["profile"]["id"], ana.as_str());
    let rows = doc["transactions"].as_array().unwrap().len();
    assert!(rows > 100, "{rows} rows");
    assert!(!doc["accounts"].as_array().unwrap().is_empty());

    let csv = ok(&cofre(&url, &["export", "--user", &ana, "--format", "csv"]));
    assert!(csv.starts_with("id,date,type,status,amount,"));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(reader.records().count(), rows);

    // An existing file is never overwritten; bad arguments are named.
    let again = cofre(&url, &["export", "--user", &ana, "--out", json_file]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    let bad = cofre(&url, &["export", "--user", &ana, "--format", "xml"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--format must be json or csv"));
    let nobody = cofre(&url, &["export", "--user", "nope"]);
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("--user must be a user id"));
}
