//! SQLite: the embedded default. WAL journal with full sync, so a killed
//! process loses no committed write; writes go through one gate
//! that commits concurrent ones together (group commit, see
//! [`crate::group_commit`]), taking the lock up front (`BEGIN IMMEDIATE`).

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

type Db = sqlx::Sqlite;
/// JSON aggregate and row constructor: a query's rows as one value.
const JSON_AGG: &str = "json_group_array";
/// The migrations table's name, or NULL while it does not exist.
const MIGRATIONS_TABLE_EXISTS: &str =
    "SELECT (SELECT name FROM sqlite_master WHERE type = 'table' AND name = $1)";
/// Holds the users table against other writers for the rest of a write
/// transaction (on SQLite, `BEGIN IMMEDIATE` already does).
const LOCK_USERS: &str = "SELECT 1";
const JSON_ARRAY: &str = "json_array";

/// A write transaction: a savepoint in the batch the group commit gate
/// has open (see [`crate::group_commit`]).
type WriteTx = crate::group_commit::WriteTx;

#[derive(Clone)]
struct Writes(std::sync::Arc<crate::group_commit::WriteGate>);

impl Writes {
    fn new(pool: &sqlx::Pool<Db>) -> Self {
        Self(crate::group_commit::WriteGate::new(pool.clone()))
    }

    async fn begin(&self) -> Result<WriteTx, crate::StoreError> {
        self.0.begin().await
    }
}

/// Whether the database changed, from its WAL-index header (see
/// [`crate::change_stamp`]).
#[derive(Clone)]
struct Changes(std::sync::Arc<crate::change_stamp::WalWatch>);

impl Changes {
    fn stamp(&self) -> Option<crate::change_stamp::Stamp> {
        self.0.stamp()
    }
}

/// Reads outside a write: on the calling thread (see
/// [`crate::sync_reads`]), or through the pool for a database that lives
/// in memory, which another connection could not see.
#[derive(Clone)]
enum Reads {
    Thread(std::sync::Arc<crate::sync_reads::SyncReads>),
    Pool(sqlx::Pool<Db>),
}

impl Reads {
    /// The first column of the one row `sql` answers, as text.
    async fn text(&self, sql: Sql) -> Result<Option<String>, crate::StoreError> {
        match self {
            Reads::Thread(reads) => reads.one(&sql),
            Reads::Pool(pool) => pool_one(pool, sql).await,
        }
    }

    /// The first column of the one row `sql` answers, as a number.
    async fn int(&self, sql: Sql) -> Result<Option<i64>, crate::StoreError> {
        match self {
            Reads::Thread(reads) => reads.one(&sql),
            Reads::Pool(pool) => pool_one(pool, sql).await,
        }
    }
}

/// How long a statement waits for a lock another connection holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");

impl SqlStore {
    /// Opens `url` with caches of about `cache_bytes` (see
    /// [`crate::DEFAULT_CACHE_BYTES`]), bringing its schema up to date.
    pub async fn connect(url: &str, cache_bytes: u64) -> Result<Self, crate::StoreError> {
        Ok(Self::open(url, cache_bytes, crate::Migrations::Apply)
            .await?
            .0)
    }

    /// [`Self::connect`], treating the schema as `migrations` says.
    pub async fn open(
        url: &str,
        cache_bytes: u64,
        migrations: crate::Migrations,
    ) -> Result<(Self, crate::SchemaReport), crate::StoreError> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            // A write in a group-commit batch runs in a savepoint, whose
            // journal (the pages it changes, as they were) SQLite spills to
            // a temp file past 64 KiB and then writes on every later write
            // of the batch. In memory it holds one write's pages at a time
            // (it is emptied when the savepoint is released); the sorts a
            // statement needs also stay in memory, and none here sorts
            // more than one user's rows.
            .pragma("temp_store", "memory")
            .busy_timeout(BUSY_TIMEOUT);
        let file = options.get_filename().to_owned();
        let changes = Changes(std::sync::Arc::new(crate::change_stamp::WalWatch::new(
            &file,
        )));
        // A connection to a local file cannot go stale, so the pool does not
        // ping it before each use: that was one more hand-off to the
        // connection's worker thread on every request.
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        let report = prepare_schema(&pool, &MIGRATOR, migrations).await?;
        // A database in memory has no file (the pool made it): only the
        // pool's connections can see it.
        let reads = if file.is_file() {
            Reads::Thread(std::sync::Arc::new(crate::sync_reads::SyncReads::new(
                &file,
                BUSY_TIMEOUT,
            )))
        } else {
            Reads::Pool(pool.clone())
        };
        Ok((Self::from_pool(pool, cache_bytes, changes, reads), report))
    }

    /// A consistent copy of the whole database at one moment, taken while
    /// writers go on (`VACUUM INTO` reads one snapshot); `to` must not exist.
    async fn backup_into(&self, to: &std::path::Path) -> Result<(), crate::StoreError> {
        let target = to.to_str().ok_or(crate::StoreError::Unsupported(
            "the backup path must be valid UTF-8",
        ))?;
        sqlx::query("VACUUM INTO $1")
            .bind(target.to_owned())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

include!("sql_store.rs");
include!("sql_bind.rs");
include!("sql_schema.rs");
include!("sql_decode.rs");
include!("sql_steps.rs");
include!("sql_series.rs");
include!("sql_users.rs");
include!("sql_accounts.rs");
include!("sql_categories.rs");
include!("sql_transactions.rs");
include!("sql_operations.rs");
include!("sql_import.rs");
include!("sql_receipts.rs");
include!("sql_cards.rs");
include!("sql_budgets.rs");
