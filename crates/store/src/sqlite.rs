//! SQLite: the embedded default. WAL journal with full sync, so a killed
//! process loses no committed write; writes go through one gate
//! that commits concurrent ones together (group commit, see
//! [`crate::group_commit`]), taking the lock up front (`BEGIN IMMEDIATE`).

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

use cofre_domain::auth::ApiKey;
use cofre_domain::transaction::{NewTransaction, Transaction};
use cofre_domain::{ApiKeyId, UserId};
use jiff::Timestamp;

use crate::backend::{Backend, ChangeWatch, ReadPath, WritePath};
use crate::sql_decode::{Ascii, JsonBool, RawTx};
use crate::sql_store::{SqlStore, pool_one};
use crate::sql_text::Sql;
use crate::{Created, FoundKey, StoreError, StoreResult};

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
/// A JSON value read from a column, as a JSON constructor takes it to
/// nest it (not as a string).
const JSON_NESTED: &str = "json";

impl crate::sql_conn::Dialect for Db {
    const JSON_AGG: &'static str = JSON_AGG;
    const JSON_ARRAY: &'static str = JSON_ARRAY;
    const JSON_NESTED: &'static str = JSON_NESTED;
    const LOCK_USERS: &'static str = LOCK_USERS;
    const MIGRATIONS_TABLE_EXISTS: &'static str = MIGRATIONS_TABLE_EXISTS;
    const LOCK_ROWS: Option<&'static str> = None;

    fn json_rows(param: usize, columns: &[(&str, &str)]) -> String {
        let columns: Vec<String> = columns
            .iter()
            .map(|(name, _)| format!("value ->> '$.{name}' AS {name}"))
            .collect();
        format!(
            "(SELECT {} FROM json_each(${param})) AS v",
            columns.join(", ")
        )
    }

    fn texts() -> &'static crate::sql_conn::DialectTexts {
        static TEXTS: std::sync::LazyLock<crate::sql_conn::DialectTexts> =
            std::sync::LazyLock::new(crate::sql_decode::dialect_texts::<Db>);
        &TEXTS
    }
}

/// A write transaction: a savepoint in the batch the group commit gate
/// has open (see [`crate::group_commit`]).
type WriteTx = crate::group_commit::WriteTx;

impl crate::backend::WriteTx<Db> for WriteTx {
    async fn commit(self) -> StoreResult<()> {
        WriteTx::commit(self).await
    }
}

#[derive(Clone)]
pub struct Writes(std::sync::Arc<crate::group_commit::WriteGate>);

impl Writes {
    fn new(pool: &sqlx::Pool<Db>) -> Self {
        Self(crate::group_commit::WriteGate::new(pool.clone()))
    }
}

impl WritePath<Db> for Writes {
    async fn begin(&self) -> Result<WriteTx, crate::StoreError> {
        self.0.begin().await
    }

    async fn stall(&self) -> Result<Option<Duration>, crate::StoreError> {
        Ok(self.0.stalled_for())
    }

    /// Keys are not recalled here: reading one afresh is an in-process
    /// read, not a round trip (see [`Store::recalled_api_key`]).
    async fn recall(&self, _id: ApiKeyId, _found: Option<&FoundKey>) {}

    async fn recalled(&self, _id: ApiKeyId) -> Option<ApiKey> {
        None
    }
}

/// Whether the database changed, from its data version (see
/// [`crate::change_stamp`]).
#[derive(Clone)]
pub struct Changes(std::sync::Arc<crate::change_stamp::WalWatch>);

impl ChangeWatch for Changes {
    fn stamp(&self) -> Option<crate::change_stamp::Stamp> {
        self.0.stamp()
    }
}

/// Reads outside a write: on the calling thread (see
/// [`crate::sync_reads`]), or through the pool for a database that lives
/// in memory, which another connection could not see.
#[derive(Clone)]
pub enum Reads {
    Thread(std::sync::Arc<crate::sync_reads::SyncReads>),
    Pool(sqlx::Pool<Db>),
}

impl ReadPath for Reads {
    /// The first column of the one row `sql` answers, as text.
    async fn text(&self, sql: Sql) -> Result<Option<String>, crate::StoreError> {
        match self {
            Reads::Thread(reads) => reads.one(&sql).await,
            Reads::Pool(pool) => pool_one(pool, sql).await,
        }
    }

    /// The first column of the one row `sql` answers, as a number.
    async fn int(&self, sql: Sql) -> Result<Option<i64>, crate::StoreError> {
        match self {
            Reads::Thread(reads) => reads.one(&sql).await,
            Reads::Pool(pool) => pool_one(pool, sql).await,
        }
    }

    /// The rows of an [`entries_query`], in its order, read column by
    /// column on the calling thread, where a row costs no hand-off and
    /// building and parsing a JSON page would be the dearest part of the
    /// read, up to the first that `keep` refuses (the rest are not read;
    /// true beside the rows when one was refused); `None` where reads go
    /// through the pool (the caller reads them as one JSON page instead).
    async fn entries(
        &self,
        query: &Sql,
        expected: usize,
        keep: impl FnMut(&Transaction) -> bool + Send,
    ) -> Option<StoreResult<(Vec<Transaction>, bool)>> {
        match self {
            Reads::Thread(reads) => Some(
                reads
                    .rows_while(
                        query,
                        expected,
                        |row| RawTx::from_row(row)?.into_transaction(),
                        keep,
                    )
                    .await,
            ),
            Reads::Pool(_) => None,
        }
    }
}

/// A column of a transaction row that is not of its type.
#[cold]
fn bad_column(i: usize, e: rusqlite::types::FromSqlError) -> StoreError {
    StoreError::Corrupt(format!("transaction column {i}: {e}"))
}

/// A row read column by column: a reader's ([`crate::sync_reads::Row`]).
trait Columns {
    /// Column `i`'s value, borrowed from the row.
    fn value(&self, i: usize) -> StoreResult<rusqlite::types::ValueRef<'_>>;
}

impl Columns for crate::sync_reads::Row<'_> {
    #[inline(always)]
    fn value(&self, i: usize) -> StoreResult<rusqlite::types::ValueRef<'_>> {
        self.get_ref(i)
    }
}

impl<'a> RawTx<'a> {
    /// A row of an [`entries_query`], its text borrowed from the row
    /// (inlined, as [`RawTx::into_transaction`] is).
    #[inline(always)]
    fn from_row(row: &'a impl Columns) -> StoreResult<Self> {
        use rusqlite::types::ValueRef;
        /// The tags column, after the 27 of [`TX_COLUMNS`].
        const TAGS: usize = 27;
        let value = |i: usize| row.value(i);
        let ascii = |i: usize| {
            value(i)?
                .as_bytes()
                .map(Ascii)
                .map_err(|e| bad_column(i, e))
        };
        let opt_ascii = |i: usize| {
            let bytes = value(i)?.as_bytes_or_null().map_err(|e| bad_column(i, e))?;
            Ok::<_, StoreError>(bytes.map(Ascii))
        };
        let owned = |i: usize| {
            value(i)?
                .as_str()
                .map(str::to_owned)
                .map_err(|e| bad_column(i, e))
        };
        let opt_owned = |i: usize| {
            let text = value(i)?.as_str_or_null().map_err(|e| bad_column(i, e))?;
            Ok::<_, StoreError>(text.map(str::to_owned))
        };
        let int = |i: usize| value(i)?.as_i64().map_err(|e| bad_column(i, e));
        let opt_int = |i: usize| value(i)?.as_i64_or_null().map_err(|e| bad_column(i, e));
        let flag = |i: usize| int(i).map(|n| JsonBool(n != 0));
        let tags = match value(TAGS)? {
            ValueRef::Null => None,
            tags => {
                let text = tags.as_bytes().map_err(|e| bad_column(TAGS, e))?;
                Some(
                    serde_json::from_slice(text)
                        .map_err(|e| StoreError::Corrupt(format!("transaction tags: {e}")))?,
                )
            }
        };
        Ok(RawTx(
            ascii(0)?,
            ascii(1)?,
            ascii(2)?,
            ascii(3)?,
            ascii(4)?,
            int(5)?,
            owned(6)?,
            owned(7)?,
            opt_owned(8)?,
            opt_ascii(9)?,
            opt_ascii(10)?,
            opt_ascii(11)?,
            opt_ascii(12)?,
            opt_ascii(13)?,
            opt_int(14)?,
            opt_ascii(15)?,
            flag(16)?,
            ascii(17)?,
            flag(18)?,
            opt_owned(19)?,
            opt_owned(20)?,
            flag(21)?,
            opt_owned(22)?,
            opt_owned(23)?,
            flag(24)?,
            opt_int(25)?,
            opt_int(26)?,
            tags,
        ))
    }
}

/// How long a statement waits for a lock another connection holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");

impl SqlStore<Db> {
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
        let report = crate::sql_schema::prepare_schema(&pool, &MIGRATOR, migrations).await?;
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
        let writes = Writes::new(&pool);
        let store = Self::from_pool(pool, cache_bytes, writes, changes, reads);
        Ok((store, report))
    }
}

impl Backend for Db {
    type Tx = WriteTx;
    type Writes = Writes;
    type Changes = Changes;
    type Reads = Reads;

    /// [`crate::Store::create_transaction`]'s shortcut for a row: none on
    /// SQLite, where every creation takes the general path through the
    /// group commit gate.
    async fn create_row_here(
        _store: &SqlStore<Self>,
        _user: UserId,
        _new: &NewTransaction,
        _now: Timestamp,
        _key: Option<ApiKeyId>,
    ) -> Option<StoreResult<Created<Transaction>>> {
        None
    }

    /// A consistent copy of the whole database at one moment, taken while
    /// writers go on (`VACUUM INTO` reads one snapshot); `to` must not exist.
    async fn backup_into(store: &SqlStore<Self>, to: &std::path::Path) -> StoreResult<()> {
        let target = to.to_str().ok_or(crate::StoreError::Unsupported(
            "the backup path must be valid UTF-8",
        ))?;
        sqlx::query("VACUUM INTO $1")
            .bind(target.to_owned())
            .execute(store.pool())
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::sql_store::cards::payments_query;
    use crate::sql_store::series::{plan_rows_query, rule_rows_query};
    use crate::sql_store::transactions::list_query;
    use cofre_domain::account::{AccountChanges, AccountType};
    use cofre_domain::transaction::{
        NewTransactionInput, PagePosition, PageRequest, TransactionFilter, new_transaction,
    };
    use cofre_domain::{AccountId, PurchaseId, RuleId};
    use jiff::civil::date;
    use rusqlite::StatementStatus;

    /// The steps SQLite's machine takes to answer `sql` up to its last
    /// row (each index entry or row it looks at is a few).
    fn vm_steps(path: &std::path::Path, sql: &Sql) -> i32 {
        let mut conn = rusqlite::Connection::open(path).unwrap();
        crate::sync_reads::run(&mut conn, sql, |rows| {
            let mut steps = 0;
            while rows.next()?.is_some() {
                steps = rows
                    .as_ref()
                    .map_or(0, |statement| statement.get_status(StatementStatus::VmStep));
            }
            Ok(steps)
        })
        .unwrap()
    }

    /// A page deep into a long window costs what the first page costs:
    /// it seeks to the cursor's day instead of stepping over the rows of
    /// every page before it (a year walked in pages read the year's index
    /// once per page).
    #[tokio::test]
    async fn a_page_after_a_cursor_steps_over_no_earlier_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("list.db");
        let store = SqlStore::<Db>::connect(&format!("sqlite://{}", path.display()), 0)
            .await
            .unwrap();
        let now: jiff::Timestamp = "2026-11-22T15:00:00Z".parse().unwrap();
        let today = date(2026, 11, 22);
        let user = store.create_user(None, now).await.unwrap().id;
        let changes = AccountChanges {
            account_type: Some(AccountType::Bank),
            ..Default::default()
        };
        let ctx = crate::WriteContext { now, today };
        let (account, _) = store
            .create_account(user, &changes, None, "BRL", ctx)
            .await
            .unwrap();
        let input = NewTransactionInput {
            account_id: Some(account.account.id),
            tx_type: Some(cofre_domain::transaction::TxType::Debit),
            amount: Some(cofre_domain::Money::from_cents(1_234)),
            description: Some("Bakery".into()),
            date: Some(today),
            ..Default::default()
        };
        let new = new_transaction(&input, today).unwrap();
        store
            .create_transaction(user, &new, None, now, None)
            .await
            .unwrap();
        // 1,500 more rows, five a day back from today.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
                 INSERT INTO transactions (id, user_id, account_id, date, type, status,
                     amount_cents, currency, description, created_by_user, source,
                     search_text, created_at, updated_at)
                 SELECT printf('00000000-0000-4000-8000-%012d', i), t.user_id, t.account_id,
                     date(t.date, '-' || (i / 5) || ' days'), t.type, t.status, t.amount_cents,
                     t.currency, t.description, t.created_by_user, t.source, t.search_text,
                     t.created_at, t.updated_at
                 FROM transactions t, n",
            )
            .unwrap();

        let filter = TransactionFilter::window(date(2026, 1, 1), date(2026, 11, 30));
        let first = PageRequest {
            limit: 20,
            after: None,
        };
        let first_steps = vm_steps(&path, &list_query::<Db>(user, &filter, &first));
        // The cursor of a page 1,200 rows down.
        let deep = PageRequest {
            limit: 20,
            after: Some(PagePosition {
                date: date(2026, 11, 22) - jiff::Span::new().days(240),
                id: "00000000-0000-4000-8000-000000001200".into(),
            }),
        };
        let deep_steps = vm_steps(&path, &list_query::<Db>(user, &filter, &deep));
        assert!(
            deep_steps < 2 * first_steps,
            "the first page took {first_steps} steps, one 1,200 rows down {deep_steps}"
        );
        // The list's index gives the list's order read backwards (its days
        // ascending, in the schema baseline): no page sorts, in either view.
        let cashflow = TransactionFilter {
            cashflow: true,
            ..filter.clone()
        };
        for (filter, page) in [(&filter, &first), (&filter, &deep), (&cashflow, &deep)] {
            let plan = plan(&path, &list_query::<Db>(user, filter, page));
            assert!(
                plan.contains("INDEX transactions_user_date (user_id=? AND date>? AND date<?)"),
                "the list's index not used: {plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "a page sorts: {plan}");
        }
    }

    /// How SQLite plans `sql`: the details of its EXPLAIN QUERY PLAN.
    fn plan(path: &std::path::Path, sql: &Sql) -> String {
        let mut conn = rusqlite::Connection::open(path).unwrap();
        let explained = sql.within("EXPLAIN QUERY PLAN ", "");
        crate::sync_reads::run(&mut conn, &explained, |rows| {
            let mut details = Vec::new();
            while let Some(row) = rows.next()? {
                details.push(row.get::<_, String>(3)?);
            }
            Ok(details)
        })
        .unwrap()
        .join("; ")
    }

    /// The lookups by a link most rows lack still read that link's index
    /// now that it holds only the rows that have it (the schema baseline): a
    /// query the planner could not prove excludes NULL would read the
    /// whole table instead. Each reads its index alone (a covering index):
    /// after a write every page it touches comes from the file again, and
    /// the rows it finds lie far apart in the table (a card's payments a
    /// month apart; in the schema baseline).
    #[tokio::test]
    async fn lookups_by_link_use_the_partial_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db");
        SqlStore::<Db>::connect(&format!("sqlite://{}", path.display()), 0)
            .await
            .unwrap();
        let rules = [RuleId::new(), RuleId::new()];
        let plans = [PurchaseId::new()];
        for (query, index) in [
            (
                rule_rows_query(&rules, "2026-01-01", "2026-12-31"),
                "transactions_recurrence",
            ),
            (plan_rows_query(&plans), "transactions_installment"),
            (
                payments_query::<Db>(AccountId::new()),
                "transactions_bill_payments_cover",
            ),
        ] {
            let plan = plan(&path, &query);
            assert!(
                plan.contains(&format!("COVERING INDEX {index} (")),
                "{index} not used alone: {plan}"
            );
            assert!(
                !plan.contains("TEMP B-TREE"),
                "{index} needs a sort: {plan}"
            );
        }
    }
}
