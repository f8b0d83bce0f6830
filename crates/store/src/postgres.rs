//! PostgreSQL: the path past one machine; many `cofre serve` processes can
//! share one database.

use sqlx::postgres::PgPoolOptions;

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

/// A write transaction: PostgreSQL commits concurrent transactions on its
/// own (one WAL flush can serve many), so each write has its own.
type WriteTx = sqlx::Transaction<'static, Db>;

#[derive(Clone)]
struct Writes(sqlx::Pool<Db>);

impl Writes {
    fn new(pool: &sqlx::Pool<Db>) -> Self {
        Self(pool.clone())
    }

    async fn begin(&self) -> Result<WriteTx, crate::StoreError> {
        Ok(self.0.begin_with(BEGIN_WRITE).await?)
    }
}

/// No cheap way to know that nothing changed: a notification would come
/// after the commit, so another server could answer from what it knew
/// before. Every check asks the database.
#[derive(Clone)]
struct Changes;

impl Changes {
    fn stamp(&self) -> Option<crate::change_stamp::Stamp> {
        None
    }
}

/// Reads outside a write: a round trip on a pooled connection.
#[derive(Clone)]
struct Reads(sqlx::Pool<Db>);

impl Reads {
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
    fn entries(&self, _query: &Sql, _expected: usize) -> Option<StoreResult<Vec<Transaction>>> {
        None
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

impl SqlStore {
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
        let report = prepare_schema(&pool, &MIGRATOR, migrations).await?;
        let reads = Reads(pool.clone());
        Ok((Self::from_pool(pool, cache_bytes, Changes, reads), report))
    }

    /// A row created on the calling thread: never here (a write's
    /// statements are round trips to the server whichever thread sends
    /// them), so creations run as every other write does.
    async fn create_row_here(
        &self,
        _user: UserId,
        _new: &NewTransaction,
        _now: Timestamp,
    ) -> Option<StoreResult<Created<Transaction>>> {
        None
    }

    /// A server-side copy is `pg_dump`'s work, not this process's.
    async fn backup_into(&self, _to: &std::path::Path) -> Result<(), crate::StoreError> {
        Err(crate::StoreError::Unsupported(
            "on PostgreSQL, back up with pg_dump (see the README)",
        ))
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
