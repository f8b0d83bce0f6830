//! Operator actions behind the CLI: users, keys, and the first start.

use jiff::Timestamp;

use cofre_domain::auth::{ApiKey, Scope, format_key, hash_secret};
use cofre_domain::profile::Profile;
use cofre_domain::{ApiKeyId, UserId};
use cofre_store::{Store, StoreError};

use crate::auth::new_secret;

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("no such user")]
    NoSuchUser,
    #[error("no such key, or it is revoked")]
    NoSuchKey,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the operating system gave no randomness: {0}")]
    Random(#[from] getrandom::Error),
}

/// A key as stored, and the one time its full token is known.
pub struct IssuedKey {
    pub key: ApiKey,
    pub token: String,
}

/// A new key of `user`, not yet stored, with its token.
fn new_key(
    user: UserId,
    scopes: Vec<Scope>,
    label: Option<String>,
    now: Timestamp,
) -> Result<IssuedKey, AdminError> {
    let secret = new_secret()?;
    let key = ApiKey {
        id: ApiKeyId::new(),
        user_id: user,
        secret_hash: hash_secret(&secret),
        scopes,
        label,
        created_at: now,
        revoked_at: None,
    };
    let token = format_key(key.id, &secret);
    Ok(IssuedKey { key, token })
}

pub async fn issue_key(
    store: &dyn Store,
    user: UserId,
    scopes: Vec<Scope>,
    label: Option<String>,
    now: Timestamp,
) -> Result<IssuedKey, AdminError> {
    let issued = new_key(user, scopes, label, now)?;
    match store.create_api_key(&issued.key).await {
        Err(StoreError::NotFound) => return Err(AdminError::NoSuchUser),
        other => other?,
    }
    Ok(issued)
}

/// Replaces a key by a new one with the same owner, scopes and label, and
/// revokes the old one, at once. NoSuchKey when it does not exist or is
/// already revoked.
pub async fn rotate_key(
    store: &dyn Store,
    old: ApiKeyId,
    now: Timestamp,
) -> Result<IssuedKey, AdminError> {
    let found = store
        .find_api_key(old)
        .await?
        .filter(|found| found.key.revoked_at.is_none())
        .ok_or(AdminError::NoSuchKey)?;
    let secret = new_secret()?;
    let key = ApiKey {
        id: ApiKeyId::new(),
        secret_hash: hash_secret(&secret),
        created_at: now,
        revoked_at: None,
        ..found.key
    };
    match store.rotate_api_key(old, &key, now).await {
        Err(StoreError::NotFound) => return Err(AdminError::NoSuchKey),
        other => other?,
    }
    let token = format_key(key.id, &secret);
    Ok(IssuedKey { key, token })
}

/// On an empty database, creates the first user and a read,write key;
/// of several servers starting together, exactly one does.
pub async fn bootstrap(
    store: &dyn Store,
    now: Timestamp,
) -> Result<Option<(Profile, IssuedKey)>, AdminError> {
    if store.count_users().await? > 0 {
        return Ok(None);
    }
    let issued = new_key(
        UserId::new(),
        vec![Scope::Read, Scope::Write],
        Some("first key".into()),
        now,
    )?;
    Ok(store
        .create_first_user(&issued.key, now)
        .await?
        .map(|user| (user, issued)))
}
