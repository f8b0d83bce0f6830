//! PostgreSQL: the path past one machine; many `cofre serve` processes can
//! share one database.

use std::sync::Arc;

use sqlx::postgres::PgPoolOptions;

use cofre_domain::auth::ApiKey;
use cofre_domain::transaction::{NewTransaction, Transaction};
use cofre_domain::{ApiKeyId, UserId};
use jiff::Timestamp;

use crate::backend::{Backend, ChangeWatch, ReadPath, WritePath};
use crate::sql_store::{KEY_CACHE_BYTES, SqlStore, key_bytes, pool_one};
use crate::sql_text::Sql;
use crate::{Created, FoundKey, StoreError, StoreResult};

mod creations;

type Db = sqlx::Postgres;
const BEGIN_WRITE: &str = "BEGIN";
/// JSON aggregate and row constructor: a query's rows as one value.
const JSON_AGG: &str = "json_agg";
/// The migrations table's name, or NULL while it does not exist.
const MIGRATIONS_TABLE_EXISTS: &str = "SELECT to_regclass($1)::text";
/// Holds the users table against other writers for the rest of a write
/// transaction (on SQLite, `BEGIN IMMEDIATE` already does).
const LOCK_USERS: &str = "LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE";
const JSON_ARRAY: &str = "json_build_array";
/// A JSON value read from a column, as a JSON constructor takes it to
/// nest it: as it is (a `json` column nests by itself).
const JSON_NESTED: &str = "";

impl crate::sql_conn::Dialect for Db {
    const JSON_AGG: &'static str = JSON_AGG;
    const JSON_ARRAY: &'static str = JSON_ARRAY;
    const JSON_NESTED: &'static str = JSON_NESTED;
    const LOCK_USERS: &'static str = LOCK_USERS;
    const MIGRATIONS_TABLE_EXISTS: &'static str = MIGRATIONS_TABLE_EXISTS;
    const LOCK_ROWS: Option<&'static str> = Some("COLLATE \"C\" FOR UPDATE");

    fn json_rows(param: usize, columns: &[(&str, &str)]) -> String {
        let columns: Vec<String> = columns
            .iter()
            .map(|(name, pg_type)| format!("{name} {pg_type}"))
            .collect();
        format!(
            "json_to_recordset(CAST(${param} AS JSON)) AS v({})",
            columns.join(", ")
        )
    }

    fn texts() -> &'static crate::sql_conn::DialectTexts {
        static TEXTS: std::sync::LazyLock<crate::sql_conn::DialectTexts> =
            std::sync::LazyLock::new(crate::sql_decode::dialect_texts::<Db>);
        &TEXTS
    }
}

/// How long a request waits for a connection before the database counts
/// as unavailable (503 with `Retry-After`), well inside the request
/// deadline.
const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// A pooled connection idle for longer than this is pinged before it is
/// handed out, so the pool drops the dead ones a restart leaves and
/// reconnects by itself. One used more recently is handed out as it is:
/// sqlx already pings every connection given back to the pool (one round
/// trip), and pinging it again on every use was two more round trips on
/// each write (its key and its transaction each take a connection). A
/// connection that dies between the two fails its next statement, which
/// is answered 503 with `Retry-After` like any lost connection, and is
/// closed when it is given back.
const TRUST_IDLE_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// How long before its requests' deadline a call of creations gives up
/// (see [`creations`]): room for the commit and the answer, so no client
/// is told 503 about a row that was kept.
const ANSWER_MARGIN: std::time::Duration = std::time::Duration::from_millis(100);

/// A write transaction: PostgreSQL commits concurrent transactions on its
/// own (one WAL flush can serve many), so each write has its own.
type WriteTx = sqlx::Transaction<'static, Db>;

impl crate::backend::WriteTx<Db> for WriteTx {
    async fn commit(self) -> StoreResult<()> {
        Ok(sqlx::Transaction::commit(self).await?)
    }
}

#[derive(Clone)]
pub struct Writes {
    pool: sqlx::Pool<Db>,
    /// Single-row creations, stored together when they arrive together.
    creations: Arc<creations::Creations>,
    /// Live keys as authentication last read them, for the creations that
    /// check their key in their own call ([`crate::Store::recalled_api_key`]):
    /// reading a key here is a round trip, and a pooled connection given
    /// back (and pinged), on every request.
    recalled: moka::future::Cache<ApiKeyId, ApiKey>,
}

impl Writes {
    fn new(pool: &sqlx::Pool<Db>) -> Self {
        Self {
            pool: pool.clone(),
            creations: creations::Creations::new(pool),
            recalled: moka::future::Cache::builder()
                .max_capacity(KEY_CACHE_BYTES)
                .weigher(|_, key: &ApiKey| key_bytes(key))
                .build(),
        }
    }
}

impl WritePath<Db> for Writes {
    /// Writes wait in the database, not in a gate of this process: how
    /// long the session of this database that has waited longest for a
    /// lock (any server's, or any other client's) has waited, if one
    /// waits. A write cut off at its deadline leaves its session waiting
    /// for the lock, so a lock held for good shows here however often
    /// requests give up. Read from `pg_stat_activity`, whose rows of the
    /// sessions of cofre's own role it may see.
    async fn stall(&self) -> Result<Option<std::time::Duration>, crate::StoreError> {
        let waited: Option<i64> = sqlx::query_scalar(
            "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp() - MIN(query_start)) * 1000 \
             AS BIGINT) FROM pg_stat_activity WHERE datname = current_database() \
             AND state = 'active' AND wait_event_type = 'Lock'",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(waited.map(|ms| std::time::Duration::from_millis(ms.max(0).unsigned_abs())))
    }

    async fn begin(&self) -> Result<WriteTx, crate::StoreError> {
        Ok(self.pool.begin_with(BEGIN_WRITE).await?)
    }

    /// Keeps `id`'s key as a lookup just `found` it: while live; a key
    /// found revoked or gone is forgotten. A live key already kept is left
    /// as it is (a key's owner, secret and scopes never change), so the
    /// lookup every other request makes writes nothing here.
    async fn recall(&self, id: ApiKeyId, found: Option<&FoundKey>) {
        match found {
            Some(found) if found.key.revoked_at.is_none() => {
                if !self.recalled.contains_key(&id) {
                    self.recalled.insert(id, found.key.clone()).await;
                }
            }
            _ => self.recalled.invalidate(&id).await,
        }
    }

    async fn recalled(&self, id: ApiKeyId) -> Option<ApiKey> {
        self.recalled.get(&id).await
    }
}

/// No cheap way to know that nothing changed: a notification would come
/// after the commit, so another server could answer from what it knew
/// before. Every check asks the database.
#[derive(Clone)]
pub struct Changes;

impl ChangeWatch for Changes {
    fn stamp(&self) -> Option<crate::change_stamp::Stamp> {
        None
    }
}

/// Reads outside a write: a round trip on a pooled connection.
#[derive(Clone)]
pub struct Reads(sqlx::Pool<Db>);

impl ReadPath for Reads {
    /// The first column of the one row `sql` answers, as text.
    async fn text(&self, sql: Sql) -> Result<Option<String>, crate::StoreError> {
        pool_one(&self.0, sql).await
    }

    /// The first column of the one row `sql` answers, as a number.
    async fn int(&self, sql: Sql) -> Result<Option<i64>, crate::StoreError> {
        pool_one(&self.0, sql).await
    }

    /// Rows read column by column: never here (the caller reads them as
    /// one JSON page, one round trip).
    async fn entries(
        &self,
        _query: &Sql,
        _expected: usize,
        _keep: impl FnMut(&Transaction) -> bool + Send,
    ) -> Option<StoreResult<(Vec<Transaction>, bool)>> {
        None
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// A creation given up because its request's time ran out.
fn out_of_time() -> StoreError {
    StoreError::Unavailable(
        "the request's time ran out before its creation could be stored; nothing was kept"
            .to_owned(),
    )
}

impl SqlStore<Db> {
    /// Opens `url` with caches of about `cache_bytes` (see
    /// [`crate::DEFAULT_CACHE_BYTES`]), treating the schema as `migrations`
    /// says.
    pub async fn open(
        url: &str,
        cache_bytes: u64,
        migrations: crate::Migrations,
    ) -> Result<(Self, crate::SchemaReport), crate::StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for > TRUST_IDLE_FOR {
                        sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            })
            .connect(url)
            .await?;
        let report = crate::sql_schema::prepare_schema(&pool, &MIGRATOR, migrations).await?;
        let reads = Reads(pool.clone());
        let writes = Writes::new(&pool);
        let store = Self::from_pool(pool, cache_bytes, writes, Changes, reads);
        Ok((store, report))
    }
}

impl Backend for Db {
    type Tx = WriteTx;
    type Writes = Writes;
    type Changes = Changes;
    type Reads = Reads;

    /// [`crate::Store::create_transaction`] of a row (no installment plan):
    /// the creations arriving together are stored as one set in one
    /// transaction ([`creations`]), with the rules every creation follows
    /// ([`crate::sql_store::create_set`]).
    async fn create_row_here(
        store: &SqlStore<Self>,
        user: UserId,
        new: &NewTransaction,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> Option<StoreResult<Created<Transaction>>> {
        Some(store.writes().creations.create(user, new, now, key).await)
    }

    /// A server-side copy is `pg_dump`'s work, not this process's.
    async fn backup_into(_store: &SqlStore<Self>, _to: &std::path::Path) -> StoreResult<()> {
        Err(crate::StoreError::Unsupported(
            "on PostgreSQL, back up with pg_dump (see docs/guide/backups.md)",
        ))
    }
}
