//! What the store's integration tests share: the moment their writes are
//! made at, and a bank account to write to.

use jiff::Timestamp;
use jiff::civil::{Date, date};

use cofre_domain::account::{AccountChanges, AccountType};
use cofre_domain::{AccountId, UserId};
use cofre_store::{Store, WriteContext};

/// The moment every write of these tests is made at.
pub fn now() -> (Timestamp, Date) {
    ("2026-11-22T15:00:00Z".parse().unwrap(), date(2026, 11, 22))
}

/// A bank account of `user`, created through `store`.
pub async fn bank_account(store: &dyn Store, user: UserId) -> AccountId {
    let (now, today) = now();
    let changes = AccountChanges {
        account_type: Some(AccountType::Bank),
        ..Default::default()
    };
    let (account, _) = store
        .create_account(user, &changes, None, "BRL", WriteContext { now, today })
        .await
        .unwrap();
    account.account.id
}
