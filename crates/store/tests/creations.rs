//! Creations sent at once (on PostgreSQL, stored together as one set in
//! one transaction) are each answered as they would be alone: a refusal
//! answers its own creation only, a replay finds the row its first send
//! stored, and the balance counts exactly the rows stored.

mod support;

use std::sync::Arc;

use cofre_domain::auth::{ApiKey, Scope};
use cofre_domain::tag::new_tag;
use cofre_domain::transaction::{NewTransaction, NewTransactionInput, TxType, new_transaction};
use cofre_domain::{AccountId, ApiKeyId, CategoryId, Money, TransactionId, UserId};
use cofre_store::{Store, StoreError, StoreResult};

fn postgres_url() -> Option<String> {
    match std::env::var("COFRE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but COFRE_TEST_POSTGRES_URL is not set: these tests must run")
        }
        _ => {
            eprintln!("SKIPPED (PostgreSQL): set COFRE_TEST_POSTGRES_URL to run creations");
            None
        }
    }
}

/// A purchase of `cents` on `account`, with what `more` sets.
fn purchase(
    account: AccountId,
    cents: i64,
    more: impl FnOnce(&mut NewTransactionInput),
) -> NewTransaction {
    let (_, today) = support::now();
    let mut input = NewTransactionInput {
        account_id: Some(account),
        tx_type: Some(TxType::Debit),
        amount: Some(Money::from_cents(cents)),
        description: Some(format!("Purchase of {cents}")),
        date: Some(today),
        ..Default::default()
    };
    more(&mut input);
    new_transaction(&input, today).expect("a valid creation")
}

/// The field an `Invalid` refusal names.
fn field(
    answer: &StoreResult<cofre_store::Created<cofre_domain::transaction::Transaction>>,
) -> String {
    match answer {
        Err(StoreError::Invalid(err)) => format!("{err:?}"),
        other => panic!("expected a field refusal, got {other:?}"),
    }
}

/// On PostgreSQL, holds `user`'s row locked from another connection until
/// the returned sender is used, so creations sent meanwhile wait and go
/// together in one call once it is let go.
async fn hold_user(url: Option<&str>, user: UserId) -> Option<tokio::sync::oneshot::Sender<()>> {
    use sqlx::Connection;
    let url = url?;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
    sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
        .bind(user.to_string())
        .execute(&mut conn)
        .await
        .unwrap();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = released.await;
        sqlx::raw_sql("COMMIT").execute(&mut conn).await.unwrap();
    });
    Some(release)
}

async fn creations_at_once_are_each_answered_alone(store: Arc<dyn Store>, url: Option<&str>) {
    let (now, _) = support::now();
    let user = store.create_user(Some("a"), now).await.unwrap().id;
    let other = store.create_user(Some("b"), now).await.unwrap().id;
    let account = support::bank_account(&*store, user).await;
    let others_account = support::bank_account(&*store, other).await;
    let tag = store
        .create_tag(user, &new_tag("Groceries", "#00aa00").unwrap(), now)
        .await
        .unwrap();
    let others_tag = store
        .create_tag(other, &new_tag("Theirs", "#0000aa").unwrap(), now)
        .await
        .unwrap();
    let revoked = revoked_key(&*store, user).await;
    let replayed = TransactionId::new();

    let with_tag = purchase(account, 1_000, |i| i.tag_ids = vec![tag.id]);
    let plain = purchase(account, 2_000, |_| {});
    let foreign_tag = purchase(account, 4_000, |i| i.tag_ids = vec![others_tag.id]);
    let foreign_account = purchase(others_account, 8_000, |_| {});
    let no_category = purchase(account, 16_000, |i| i.category_id = Some(CategoryId::new()));
    let chosen = purchase(account, 32_000, |i| i.id = Some(replayed));
    let creations: Vec<(&NewTransaction, Option<ApiKeyId>)> = vec![
        (&with_tag, None),
        (&plain, None),
        (&foreign_tag, None),
        (&foreign_account, None),
        (&no_category, None),
        (&chosen, None),
        (&chosen, None),
        (&plain, Some(revoked)),
    ];
    // A first creation takes the call, and waits for the lock; the others
    // gather meanwhile and go together in the next call.
    let hold = hold_user(url, user).await;
    let first = {
        let store = Arc::clone(&store);
        let new = purchase(account, 100, |_| {});
        tokio::spawn(async move { store.create_transaction(user, &new, None, now, None).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let answers = futures_join(&store, user, &creations, hold).await;
    assert!(first.await.unwrap().is_ok());

    let created = answers[0].as_ref().expect("with a tag");
    assert!(!created.deduped);
    assert_eq!(created.value.state.tag_ids, vec![tag.id]);
    assert_eq!(created.value.tags[0].title, "Groceries");
    assert_eq!(created.value.currency, "BRL");
    assert!(answers[1].is_ok(), "{:?}", answers[1]);
    assert!(field(&answers[2]).contains("tag_ids"), "{:?}", answers[2]);
    assert!(
        field(&answers[3]).contains("account_id"),
        "{:?}",
        answers[3]
    );
    assert!(
        field(&answers[4]).contains("category_id"),
        "{:?}",
        answers[4]
    );
    // The same request twice: one stores, the other finds its row.
    let (first, second) = (answers[5].as_ref().unwrap(), answers[6].as_ref().unwrap());
    assert_eq!(first.value.id, second.value.id);
    assert!(
        first.deduped != second.deduped,
        "one of the two is the replay"
    );
    assert!(
        matches!(answers[7], Err(StoreError::KeyRevoked)),
        "{:?}",
        answers[7]
    );

    // The same id for a different request is taken.
    let taken = purchase(account, 64_000, |i| i.id = Some(replayed));
    assert!(matches!(
        store
            .create_transaction(user, &taken, None, now, None)
            .await,
        Err(StoreError::IdConflict)
    ));

    // The balance counts the three rows stored (a replay stores nothing).
    let balance = store
        .list_accounts(user)
        .await
        .unwrap()
        .into_iter()
        .find(|view| view.account.id == account)
        .unwrap()
        .balance;
    assert_eq!(balance, Money::from_cents(-(100 + 1_000 + 2_000 + 32_000)));
    let theirs = store
        .list_accounts(other)
        .await
        .unwrap()
        .into_iter()
        .find(|view| view.account.id == others_account)
        .unwrap()
        .balance;
    assert_eq!(
        theirs,
        Money::ZERO,
        "nothing was stored on another's account"
    );
}

/// Each creation sent at once, each answer in order.
async fn futures_join(
    store: &Arc<dyn Store>,
    user: UserId,
    creations: &[(&NewTransaction, Option<ApiKeyId>)],
    hold: Option<tokio::sync::oneshot::Sender<()>>,
) -> Vec<StoreResult<cofre_store::Created<cofre_domain::transaction::Transaction>>> {
    let (now, _) = support::now();
    let tasks: Vec<_> = creations
        .iter()
        .map(|(new, key)| {
            let store = Arc::clone(store);
            let (new, key) = ((*new).clone(), *key);
            tokio::spawn(async move { store.create_transaction(user, &new, None, now, key).await })
        })
        .collect();
    if let Some(release) = hold {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let _ = release.send(());
    }
    let mut answers = Vec::with_capacity(tasks.len());
    for task in tasks {
        answers.push(task.await.expect("the creation's task"));
    }
    answers
}

/// A key of `user`'s, revoked.
async fn revoked_key(store: &dyn Store, user: UserId) -> ApiKeyId {
    let (now, _) = support::now();
    let key = ApiKey {
        id: ApiKeyId::new(),
        user_id: user,
        secret_hash: "0".repeat(64),
        scopes: vec![Scope::Read, Scope::Write],
        label: None,
        created_at: now,
        revoked_at: None,
    };
    store.create_api_key(&key).await.unwrap();
    assert!(store.revoke_api_key(key.id, now).await.unwrap());
    key.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_creations_at_once_are_each_answered_alone() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("cofre.db").display());
    let store = cofre_store::connect_with(&url, 0).await.unwrap();
    creations_at_once_are_each_answered_alone(store, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_creations_at_once_are_each_answered_alone() {
    let Some(url) = postgres_url() else { return };
    let name = format!("cofre_creations_{}", uuid::Uuid::new_v4().simple());
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .unwrap();
    let base = url.split('?').next().unwrap();
    let db_url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
    let store = cofre_store::connect_with(&db_url, 0).await.unwrap();
    creations_at_once_are_each_answered_alone(store, Some(&db_url)).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&admin)
    .await
    .unwrap();
}
