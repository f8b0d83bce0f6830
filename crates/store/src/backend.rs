//! What each database brings to the one body of store code
//! ([`crate::sql_store::SqlStore`]): its dialect and connection
//! ([`crate::sql_conn`]), how a write transaction starts and commits, how
//! short reads outside a write run, and how a cache learns that the
//! database changed. `sqlite.rs` and `postgres.rs` implement it; every
//! write's logic lives once, in `sql_store` and the modules beside it.

use std::future::Future;
use std::ops::DerefMut;
use std::time::Duration;

use cofre_domain::auth::ApiKey;
use cofre_domain::transaction::{NewTransaction, Transaction};
use cofre_domain::{ApiKeyId, UserId};
use jiff::Timestamp;

use crate::sql_conn::{Conn, Dialect};
use crate::sql_store::SqlStore;
use crate::sql_text::Sql;
use crate::{Created, FoundKey, StoreResult};

/// A database the store runs on: sqlx's database type itself.
pub trait Backend:
    Dialect + sqlx::Database<Connection: Conn<Db = Self> + sqlx::migrate::Migrate>
{
    /// A write transaction, holding its connection.
    type Tx: WriteTx<Self>;
    /// How write transactions start.
    type Writes: WritePath<Self>;
    /// Whether the database changed since a moment.
    type Changes: ChangeWatch;
    /// How short reads outside a write run.
    type Reads: ReadPath;

    /// [`crate::Store::create_transaction`] of a row (no plan) by a way of
    /// the backend's own, if it has one; `None` to take the general path.
    fn create_row_here(
        store: &SqlStore<Self>,
        user: UserId,
        new: &NewTransaction,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> impl Future<Output = Option<StoreResult<Created<Transaction>>>> + Send;

    /// A consistent copy of the whole database at one moment, into `to`.
    fn backup_into(
        store: &SqlStore<Self>,
        to: &std::path::Path,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}

/// A write transaction: its statements run on the connection it derefs to.
pub trait WriteTx<B: sqlx::Database>: DerefMut<Target = B::Connection> + Send {
    fn commit(self) -> impl Future<Output = StoreResult<()>> + Send;
}

/// How a backend starts write transactions, and the keys it recalls for
/// creations that check their key in their own call.
pub trait WritePath<B: Backend>: Clone + Send + Sync + 'static {
    fn begin(&self) -> impl Future<Output = StoreResult<B::Tx>> + Send;

    /// How long writes have been stuck, if they are.
    fn stall(&self) -> impl Future<Output = StoreResult<Option<Duration>>> + Send;

    /// Keeps `id`'s key as a lookup just `found` it.
    fn recall(&self, id: ApiKeyId, found: Option<&FoundKey>) -> impl Future<Output = ()> + Send;

    /// The key kept for `id`, if one is.
    fn recalled(&self, id: ApiKeyId) -> impl Future<Output = Option<ApiKey>> + Send;
}

/// Whether the database changed: a stamp that moves with every commit,
/// from any process, or none where no cheap check exists.
pub trait ChangeWatch: Clone + Send + Sync + 'static {
    fn stamp(&self) -> Option<crate::change_stamp::Stamp>;
}

/// Short reads outside a write.
pub trait ReadPath: Clone + Send + Sync + 'static {
    /// The first column of the one row `sql` answers, as text.
    fn text(&self, sql: Sql) -> impl Future<Output = StoreResult<Option<String>>> + Send;

    /// The first column of the one row `sql` answers, as a number.
    fn int(&self, sql: Sql) -> impl Future<Output = StoreResult<Option<i64>>> + Send;

    /// The rows of an entries query read one by one, up to the first
    /// `keep` refuses (true beside the rows when one was); `None` where
    /// the caller reads them as one JSON page instead.
    fn entries(
        &self,
        query: &Sql,
        expected: usize,
        keep: impl FnMut(&Transaction) -> bool + Send,
    ) -> impl Future<Output = Option<StoreResult<(Vec<Transaction>, bool)>>> + Send;
}
