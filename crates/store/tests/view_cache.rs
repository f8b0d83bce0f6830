//! Two stores on one database stand for two `cofre serve` processes: a
//! write through one must be visible to the other's cached view sources
//! and to the keys its authentication kept.

use jiff::civil::date;
use std::sync::Arc;

use cofre_domain::projection::{Frequency, RecurrenceRule, Schedule, Template};
use cofre_domain::transaction::TxType;
use cofre_domain::{Money, RuleId, UserId};
use cofre_store::Store;

mod support;
use support::{bank_account, now};

/// Two stores on one fresh database file, as two processes, and a user
/// made through the first.
async fn two_processes() -> (tempfile::TempDir, Arc<dyn Store>, Arc<dyn Store>, UserId) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let first = cofre_store::connect(&url).await.unwrap();
    let second = cofre_store::connect(&url).await.unwrap();
    let user = first.create_user(None, now().0).await.unwrap().id;
    (dir, first, second, user)
}

#[tokio::test]
async fn a_write_in_one_process_refreshes_the_others_cache() {
    let (_dir, first, second, user) = two_processes().await;
    let (now, _) = now();
    let account = bank_account(first.as_ref(), user).await;
    let (from, to) = (date(2026, 1, 1), date(2026, 12, 31));

    let before = first.view_sources(user, from, to).await.unwrap();
    assert!(before.rules.is_empty());
    // Cached now: the same sources come back without a write.
    let again = first.view_sources(user, from, to).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&before, &again));

    let rule = RecurrenceRule {
        id: RuleId::new(),
        user_id: user,
        account_id: account,
        template: Template {
            tx_type: TxType::Debit,
            amount: Money::from_cents(3990),
            description: "Streaming".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
        },
        schedule: Schedule {
            frequency: Frequency::Monthly,
            interval: 1,
            start: date(2026, 1, 10),
            end_date: None,
            count: None,
        },
        created_at: now,
    };
    second.create_rule(user, &rule).await.unwrap();

    let after = first.view_sources(user, from, to).await.unwrap();
    assert_eq!(after.rules.len(), 1, "the other process's write is seen");

    // The user's version, answered from memory while nothing is committed,
    // moves with the other process's next write.
    let version = first.view_version(user).await.unwrap();
    assert_eq!(first.view_version(user).await.unwrap(), version);
    bank_account(second.as_ref(), user).await;
    assert!(first.view_version(user).await.unwrap() > version);
    assert_eq!(first.view_version(UserId::new()).await.unwrap(), -1);
}

/// Authentication answers from memory while nothing changed, and a key
/// revoked or a write made by another process is seen by the next lookup.
#[tokio::test]
async fn keys_found_again_follow_every_other_process_change() {
    use cofre_domain::ApiKeyId;
    use cofre_domain::auth::{ApiKey, Scope, hash_secret};

    let (_dir, first, second, user) = two_processes().await;
    let (now, _) = now();
    let key = ApiKey {
        id: ApiKeyId::new(),
        user_id: user,
        secret_hash: hash_secret("s3cret"),
        scopes: vec![Scope::Read, Scope::Write],
        label: None,
        created_at: now,
        revoked_at: None,
    };
    second.create_api_key(&key).await.unwrap();

    let found = first.find_api_key(key.id).await.unwrap().unwrap();
    let again = first.find_api_key(key.id).await.unwrap().unwrap();
    assert_eq!(found.view_version, again.view_version);

    // A write by the other process moves the owner's version at once.
    bank_account(second.as_ref(), user).await;
    let after_write = first.find_api_key(key.id).await.unwrap().unwrap();
    assert!(after_write.view_version > found.view_version);
    assert!(after_write.key.revoked_at.is_none());

    // A revocation by the other process is seen by the very next lookup.
    assert!(second.revoke_api_key(key.id, now).await.unwrap());
    let revoked = first.find_api_key(key.id).await.unwrap().unwrap();
    assert!(revoked.key.revoked_at.is_some());

    // A deleted owner takes the key with it.
    second.delete_user(user).await.unwrap();
    assert!(first.find_api_key(key.id).await.unwrap().is_none());
}
