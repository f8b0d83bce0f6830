//! Importing a bank statement file (OFX) into an account. The
//! `cofre import-ofx` command goes through [`import_ofx`]; tests use it (or
//! [`import_ofx_for`], scoped to one user) to create open-finance rows the
//! same way.

use cofre_domain::ofx::{self, OfxError};
use cofre_domain::statement::Statement;
use cofre_domain::{AccountId, DomainError, UserId};
use cofre_store::{ImportSummary, Store, StoreError, WriteContext};

/// The largest file accepted (real monthly statements are a few KB).
pub const MAX_OFX_BYTES: usize = 20 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the file has {size} bytes; at most {MAX_OFX_BYTES} (20 MB) are accepted")]
    TooLarge { size: usize },
    #[error("unreadable OFX: {0}")]
    Ofx(#[from] OfxError),
    /// No such account (or, for [`import_ofx_for`], not that user's).
    #[error("no account with id {0}")]
    NoSuchAccount(AccountId),
    /// The account cannot take this statement (archived, other kind or
    /// currency); nothing was stored.
    #[error("cannot import into account {account}: {reason}")]
    Refused { account: AccountId, reason: String },
    #[error("storage error: {0}")]
    Store(StoreError),
}

/// Imports an OFX file into `account`, whoever owns it (the operator's
/// command names only the account). Re-importing a file adds nothing.
pub async fn import_ofx(
    store: &dyn Store,
    account: AccountId,
    bytes: &[u8],
    ctx: WriteContext,
) -> Result<ImportSummary, ImportError> {
    let statement = parse(bytes)?;
    let owner = store
        .account_owner(account)
        .await
        .map_err(|e| store_error(e, account))?;
    store_statement(store, owner, account, &statement, ctx).await
}

/// Imports an OFX file into one of `user`'s accounts: another user's
/// account is [`ImportError::NoSuchAccount`], as if it did not exist.
pub async fn import_ofx_for(
    store: &dyn Store,
    user: UserId,
    account: AccountId,
    bytes: &[u8],
    ctx: WriteContext,
) -> Result<ImportSummary, ImportError> {
    let statement = parse(bytes)?;
    store_statement(store, user, account, &statement, ctx).await
}

fn parse(bytes: &[u8]) -> Result<Statement, ImportError> {
    if bytes.len() > MAX_OFX_BYTES {
        return Err(ImportError::TooLarge { size: bytes.len() });
    }
    Ok(ofx::parse(bytes)?)
}

async fn store_statement(
    store: &dyn Store,
    user: UserId,
    account: AccountId,
    statement: &Statement,
    ctx: WriteContext,
) -> Result<ImportSummary, ImportError> {
    store
        .import_statement(user, account, statement, ctx)
        .await
        .map_err(|e| store_error(e, account))
}

fn store_error(err: StoreError, account: AccountId) -> ImportError {
    match err {
        StoreError::NotFound => ImportError::NoSuchAccount(account),
        StoreError::Invalid(DomainError::Validation(errors)) => ImportError::Refused {
            account,
            reason: errors
                .into_iter()
                .map(|e| e.message)
                .collect::<Vec<_>>()
                .join("; "),
        },
        other => ImportError::Store(other),
    }
}
