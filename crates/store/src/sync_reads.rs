//! SQLite reads run on the calling thread. sqlx drives each SQLite
//! connection from a thread of its own, so every statement is two thread
//! hand-offs (the command out, the rows back); under load those, not
//! SQLite, were most of a read's cost, spent in the kernel's scheduler.
//! The store's short reads outside a write (a row, a page, a version) run
//! here instead: a connection is taken from a small set of idle ones, the
//! statement runs to completion without yielding, and the connection goes
//! back. Each connection keeps its prepared statements ([`prepared`]).
//!
//! What a read sees is what any other connection to the file sees: every
//! write committed before it started, from any process (WAL readers never
//! wait for writers). Writes and long reads stay on sqlx, so a read here
//! holds its thread for one bounded statement (a point read, a page of at
//! most a hundred rows, a few dozen totals).
//!
//! A read never waits for a lock on its thread: the thread is one of the
//! async runtime's, and a wait there would stall every request it serves.
//! The readers' connections have no busy handler, so a read SQLite cannot
//! start at once (a connection holding the file exclusively, a checkpoint
//! restarting the WAL) fails at once with `SQLITE_BUSY`; it is then tried
//! again after an async pause, until the request's deadline (or, outside
//! a request, the busy timeout) would pass, and answered as unavailable
//! after. A read is tried again only when it failed before giving its
//! caller a row, so nothing the caller saw is seen twice.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rusqlite::types::{FromSql, ValueRef};
use rusqlite::{Connection, OpenFlags};

use crate::StoreError;
use crate::db_errors::{Failure, classify_sqlite};
use crate::sql_text::{Arg, Sql};

mod prepared;

use prepared::Reader;
pub(crate) use prepared::Row;

/// Idle connections kept: one per thread that reads at once is enough
/// (a read never yields while it holds one); more are opened when needed
/// and closed after.
const MAX_IDLE: usize = 16;

/// Prepared statements kept per connection: the store's reads differ by
/// filter and page size, a few dozen shapes in all.
const STATEMENT_CACHE: usize = 64;

/// The most of the database's pages each connection keeps in memory,
/// in KiB (SQLite's default is about 2 MB). A connection is taken by one
/// thread at a time and kept, so there are about as many as threads that
/// read. Point reads by id touch pages all over the file: with the default
/// cache, reads of the heavy demo user's rows kept going back to the file
/// for pages (`pread` system calls, plain to see in a profile); with 8 MB
/// none did. The cache holds only pages read, up to this.
const PAGE_CACHE_KIB: i64 = 8 * 1024;

/// The most rows [`every_row`] makes room for before it reads any: a page
/// of the API holds at most a hundred.
const MAX_RESERVED: usize = 128;

/// The first pause before a busy read is tried again, doubled after each
/// try up to [`LONGEST_PAUSE`] (SQLite's own busy handler waits alike).
const FIRST_PAUSE: Duration = Duration::from_millis(1);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// Readers of one database file.
pub struct SyncReads {
    path: PathBuf,
    busy_timeout: Duration,
    idle: Mutex<Vec<Reader>>,
}

impl SyncReads {
    /// Readers of the database at `path` (which must exist, in WAL mode),
    /// trying a busy read again for up to `busy_timeout` outside a
    /// request.
    pub(crate) fn new(path: &Path, busy_timeout: Duration) -> Self {
        Self {
            path: path.to_owned(),
            busy_timeout,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The first column of the one row `sql` answers, `None` when it
    /// answers none (more rows than one are not read).
    pub(crate) async fn one<T: FromSql>(&self, sql: &Sql) -> Result<Option<T>, StoreError> {
        self.query(sql, |rows| rows.next()?.map(|row| row.get(0)).transpose())
            .await
    }

    /// The rows `sql` answers, in its order, each as `decode` reads it
    /// (borrowing its values from the row, so nothing is copied that the
    /// caller does not keep), in room for `expected` made once, up to the
    /// first that `keep` refuses: the rest are not read, and true beside
    /// the rows says one was refused. A row is moved once, into the rows
    /// (an entry is hundreds of bytes).
    pub(crate) async fn rows_while<T>(
        &self,
        sql: &Sql,
        expected: usize,
        mut decode: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
        mut keep: impl FnMut(&T) -> bool,
    ) -> Result<(Vec<T>, bool), StoreError> {
        self.query(sql, |rows| {
            let mut out = Vec::with_capacity(expected.min(MAX_RESERVED));
            while let Some(row) = rows.next()? {
                let value = decode(&row)?;
                if !keep(&value) {
                    return Ok((out, true));
                }
                out.push(value);
            }
            Ok((out, false))
        })
        .await
    }

    /// Runs `sql` on an idle connection, `read` taking its rows; a read
    /// SQLite found busy before `read` had a row is tried again after a
    /// pause (see the module's notes).
    async fn query<R>(
        &self,
        sql: &Sql,
        mut read: impl FnMut(&mut prepared::Rows<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let give_up =
            crate::deadline::deadline().unwrap_or_else(|| Instant::now() + self.busy_timeout);
        let mut pause = FIRST_PAUSE;
        loop {
            match self.try_query(sql, &mut read) {
                Err(Tried::Busy(_)) if Instant::now() + pause < give_up => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(LONGEST_PAUSE);
                }
                Err(Tried::Busy(err) | Tried::Failed(err)) => return Err(err),
                Ok(value) => return Ok(value),
            }
        }
    }

    /// One try of [`Self::query`].
    fn try_query<R>(
        &self,
        sql: &Sql,
        read: &mut impl FnMut(&mut prepared::Rows<'_>) -> Result<R, StoreError>,
    ) -> Result<R, Tried> {
        // Opening a connection reads the schema (for its pragmas): that
        // too may find the database busy.
        let mut conn = self.take().map_err(|err| match is_busy(&err) {
            true => Tried::Busy(err),
            false => Tried::Failed(err),
        })?;
        let mut gave_a_row = false;
        let result = conn.query(sql, |rows| {
            let result = read(rows);
            gave_a_row = rows.gave_a_row();
            result
        });
        match result {
            Ok(value) => {
                self.give_back(conn);
                Ok(value)
            }
            // Busy preparing the statement or at its first step: the
            // statement was reset, and the connection serves the next try.
            Err(err) if is_busy(&err) && !gave_a_row => {
                self.give_back(conn);
                Err(Tried::Busy(err))
            }
            // A connection whose statement failed is closed, not kept: an
            // error from SQLite may have left it in a state no other read
            // should meet.
            Err(err) => Err(Tried::Failed(err)),
        }
    }

    fn take(&self) -> Result<Reader, StoreError> {
        if let Some(conn) = self.idle.lock().ok().and_then(|mut idle| idle.pop()) {
            return Ok(conn);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // No busy handler: a busy read fails at once (see the module's
        // notes).
        conn.busy_timeout(Duration::ZERO)?;
        // Reads only: a statement that would write fails instead.
        conn.pragma_update(None, "query_only", true)?;
        conn.pragma_update(None, "cache_size", -PAGE_CACHE_KIB)?;
        Ok(Reader::new(conn, STATEMENT_CACHE))
    }

    fn give_back(&self, conn: Reader) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
        {
            idle.push(conn);
        }
    }
}

/// How one try of a read ended, when it did not answer.
enum Tried {
    /// SQLite could not start the read yet: worth another try.
    Busy(StoreError),
    Failed(StoreError),
}

/// Whether `err` is SQLite's "busy" or "locked" (the one failure of a
/// reader's that [`From<rusqlite::Error>`](StoreError) calls unavailable).
fn is_busy(err: &StoreError) -> bool {
    matches!(err, StoreError::Unavailable(_))
}

/// An [`Arg`] as SQLite binds it: booleans as 0 and 1, like sqlx does.
fn arg_value(arg: &Arg) -> ValueRef<'_> {
    match arg {
        Arg::Text(text) | Arg::OptText(Some(text)) => ValueRef::Text(text.as_bytes()),
        Arg::Int(n) | Arg::OptInt(Some(n)) => ValueRef::Integer(*n),
        Arg::Bool(b) | Arg::OptBool(Some(b)) => ValueRef::Integer(i64::from(*b)),
        Arg::OptText(None) | Arg::OptInt(None) | Arg::OptBool(None) => ValueRef::Null,
    }
}

/// Runs `sql` on `conn`, `read` taking its rows: for tests that look at
/// how SQLite answers a query.
#[cfg(test)]
pub(crate) fn run<R>(
    conn: &mut Connection,
    sql: &Sql,
    read: impl FnOnce(&mut rusqlite::Rows<'_>) -> Result<R, StoreError>,
) -> Result<R, StoreError> {
    let mut statement = conn.prepare_cached(&sql.text)?;
    prepared::bind(&mut statement, &sql.args)?;
    read(&mut statement.raw_query())
}

impl From<rusqlite::Error> for StoreError {
    /// As [`From<sqlx::Error>`](StoreError), for reads (which no
    /// constraint refuses).
    fn from(err: rusqlite::Error) -> Self {
        match classify_sqlite(&err) {
            Failure::Unavailable => StoreError::Unavailable(err.to_string()),
            _ => StoreError::Database(sqlx::Error::AnyDriverError(Box::new(err))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> (tempfile::TempDir, SyncReads) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reads.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t (a TEXT, b INTEGER, c BOOLEAN);
             INSERT INTO t VALUES ('x', 1, 1), ('y', 2, 0);",
        )
        .unwrap();
        (dir, SyncReads::new(&path, Duration::from_secs(1)))
    }

    #[tokio::test]
    async fn binds_each_value_to_its_placeholder() {
        let (_dir, reads) = database();
        // `$2` stands before `$1` in the text: still the second value.
        let sql = Sql::with(
            "SELECT a FROM t WHERE b = $2 AND c = $1",
            [Arg::Bool(false), Arg::Int(2)],
        );
        assert_eq!(
            reads.one::<String>(&sql).await.unwrap().as_deref(),
            Some("y")
        );
        let none = Sql::with("SELECT a FROM t WHERE a = $1", [Arg::OptText(None)]);
        assert_eq!(reads.one::<String>(&none).await.unwrap(), None);
    }

    #[tokio::test]
    async fn reads_rows_in_order_up_to_the_first_left_out_and_goes_on_after_an_error() {
        let (_dir, reads) = database();
        let sql = Sql::new("SELECT a, b FROM t ORDER BY b DESC");
        let rows = reads
            .rows_while(
                &sql,
                2,
                |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)?)),
                |_| true,
            )
            .await
            .unwrap();
        assert_eq!(
            rows,
            (vec![("y".to_owned(), 2), ("x".to_owned(), 1)], false)
        );
        // A row read as `None` ends the read there.
        let first = reads
            .rows_while(&sql, 2, |row| row.get::<i64>(1), |b| *b == 2)
            .await
            .unwrap();
        assert_eq!(first, (vec![2], true));
        let refused = reads
            .rows_while(
                &sql,
                0,
                |_| -> Result<(), StoreError> { Err(StoreError::Corrupt("refused".into())) },
                |_| true,
            )
            .await;
        assert!(matches!(refused, Err(StoreError::Corrupt(_))));
        let none = Sql::with("SELECT a FROM t WHERE b = $1", [Arg::Int(9)]);
        assert_eq!(
            reads
                .rows_while(&none, 0, |row| row.get::<String>(0), |_| true)
                .await
                .unwrap(),
            (Vec::new(), false)
        );
    }

    #[tokio::test]
    async fn sees_what_another_connection_committed() {
        let (dir, reads) = database();
        let count = Sql::new("SELECT COUNT(*) FROM t");
        assert_eq!(reads.one::<i64>(&count).await.unwrap(), Some(2));
        let writer = Connection::open(dir.path().join("reads.db")).unwrap();
        writer
            .execute("INSERT INTO t VALUES ('z', 3, 1)", [])
            .unwrap();
        assert_eq!(reads.one::<i64>(&count).await.unwrap(), Some(3));
    }

    #[tokio::test]
    async fn refuses_writes_and_keeps_working() {
        let (_dir, reads) = database();
        let write = Sql::new("INSERT INTO t VALUES ('w', 4, 1) RETURNING b");
        assert!(reads.one::<i64>(&write).await.is_err());
        let count = Sql::new("SELECT COUNT(*) FROM t");
        assert_eq!(reads.one::<i64>(&count).await.unwrap(), Some(2));
    }

    #[tokio::test]
    async fn a_busy_read_waits_without_blocking_and_gives_up_at_the_busy_timeout() {
        let (dir, reads) = database();
        // A connection holding the file exclusively: no other may read.
        let holder = Connection::open(dir.path().join("reads.db")).unwrap();
        holder
            .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
            .unwrap();
        let count = Sql::new("SELECT COUNT(*) FROM t");
        let started = Instant::now();
        let err = reads.one::<i64>(&count).await.unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{:?} {err:?}",
            started.elapsed()
        );
        // Inside a request, its deadline bounds the wait instead.
        let deadline = Instant::now() + Duration::from_millis(200);
        let err = crate::deadline::serve_until(deadline, reads.one::<i64>(&count))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
        assert!(Instant::now() < deadline + Duration::from_millis(100));
        // While a read waits, the thread serves other tasks; once the
        // holder lets go, the read answers.
        let waiting =
            tokio::spawn(
                async move { reads.one::<i64>(&Sql::new("SELECT COUNT(*) FROM t")).await },
            );
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiting.is_finished());
        holder
            .execute_batch("COMMIT; PRAGMA locking_mode = NORMAL; SELECT 1 FROM t;")
            .unwrap();
        drop(holder);
        assert_eq!(waiting.await.unwrap().unwrap(), Some(2));
    }
}
