//! Group commit on SQLite: concurrent writes share one transaction, and so
//! one fsync, without giving up `synchronous=FULL`.
//!
//! A write takes the gate (a fair async mutex, so writers wait in line in
//! this process instead of sleeping in SQLite's busy handler), joins the
//! open batch transaction or opens one (`BEGIN IMMEDIATE`), and does its
//! work inside a savepoint of its own (the batch's first write needs none:
//! rolling back the batch undoes it alone). Committing releases the savepoint;
//! the batch is committed at once when no other writer is waiting, else
//! the gate passes to the next writer and this one waits for the batch's
//! `COMMIT`, which the first member to get the gate back performs. A write
//! is acknowledged only after the batch holding it is on disk; a failing
//! write (an error or a dropped request) rolls back its savepoint alone;
//! a failing `COMMIT` fails every member, none of which was acknowledged.
//! A batch holds at most [`MAX_BATCH`] writes, so it closes under any load.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::pool::PoolConnection;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

use crate::StoreError;

/// The most writes one batch commits together.
const MAX_BATCH: usize = 64;

/// How a batch ended: committed, or the reason it was not.
type Outcome = Option<Result<(), String>>;

/// The one way into a write transaction on a SQLite database.
pub(crate) struct WriteGate {
    pool: SqlitePool,
    batch: Arc<Mutex<Batch>>,
    /// Writers waiting for the gate to start a write (members waiting for
    /// their batch's commit are not counted).
    waiting: AtomicUsize,
}

/// The open batch, if any.
#[derive(Default)]
struct Batch {
    /// The connection holding the batch's transaction while one is open.
    conn: Option<PoolConnection<Sqlite>>,
    /// Between batches, the last batch's connection, kept for the next:
    /// SQLite empties a connection's page cache when it starts a
    /// transaction after another connection committed, so batches taking
    /// turns on the pool's connections each read the tables' pages again.
    spare: Option<PoolConnection<Sqlite>>,
    /// Writes whose savepoints were released into the batch.
    members: usize,
    /// Tells the members how the batch ended.
    outcome: Option<watch::Sender<Outcome>>,
    /// Batches committed so far.
    committed: u64,
}

impl Drop for Batch {
    fn drop(&mut self) {
        // A pooled connection goes back to its pool through a task of the
        // runtime. With no runtime (the store dropped after it, as at the
        // end of a process or of a bench) the connections are closed in
        // place instead: an open batch's transaction, never committed and
        // so never acknowledged, is rolled back by SQLite as it closes.
        if tokio::runtime::Handle::try_current().is_err() {
            for conn in [self.conn.take(), self.spare.take()].into_iter().flatten() {
                drop(conn.detach());
            }
        }
    }
}

impl Batch {
    /// Ends the batch: `COMMIT` (or, after a failure, `ROLLBACK`), and
    /// tells every member. Gives this caller's own result.
    async fn finish(&mut self, failure: Option<String>) -> Result<(), StoreError> {
        let Some(mut conn) = self.conn.take() else {
            return Ok(());
        };
        let result = match failure {
            None => sqlx::query("COMMIT")
                .execute(&mut *conn)
                .await
                .map(drop)
                .map_err(|err| err.to_string()),
            Some(reason) => Err(reason),
        };
        if result.is_ok() {
            self.committed += 1;
            self.spare = Some(conn);
        } else {
            // Whatever state the connection is in, nothing of the batch
            // stays: roll back what SQLite did not already, then close it.
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            let _ = conn.close().await;
        }
        self.members = 0;
        if let Some(outcome) = self.outcome.take() {
            outcome.send_replace(Some(result.clone()));
        }
        result.map_err(unavailable)
    }
}

/// Whether the write holding the gate runs in a savepoint of its own: every
/// write but its batch's first, which needs none (nothing else is in the
/// batch, so rolling the batch back undoes exactly that write). `members`
/// cannot change while a write holds the gate, so this is the same answer
/// from the write's start to its end.
fn in_savepoint(batch: &Batch) -> bool {
    batch.members > 0
}

fn unavailable(reason: String) -> StoreError {
    StoreError::Unavailable(format!("the write's batch was not committed: {reason}"))
}

/// Counts a writer in the line for the gate while it waits, including
/// when its request is dropped while waiting.
struct InLine<'a>(&'a AtomicUsize);

impl<'a> InLine<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WriteGate {
    pub(crate) fn new(pool: SqlitePool) -> Arc<Self> {
        Arc::new(Self {
            pool,
            batch: Arc::new(Mutex::new(Batch::default())),
            waiting: AtomicUsize::new(0),
        })
    }

    /// Starts a write: the gate, the batch (opened when none is) and a
    /// savepoint of the write's own.
    pub(crate) async fn begin(self: &Arc<Self>) -> Result<WriteTx, StoreError> {
        let batch = {
            let _line = InLine::new(&self.waiting);
            Arc::clone(&self.batch).lock_owned().await
        };
        // Opening runs on its own task: a request dropped in the middle of
        // `BEGIN IMMEDIATE` would otherwise hand its connection back to the
        // pool inside a transaction nobody ends, and every later write
        // would find the database locked. Dropped once it is open, the
        // write is abandoned like any other.
        tokio::spawn(open(Arc::clone(self), batch))
            .await
            .map_err(|err| unavailable(err.to_string()))?
    }
}

/// Opens the batch when none is, then the write's savepoint in it.
async fn open(
    gate: Arc<WriteGate>,
    mut batch: OwnedMutexGuard<Batch>,
) -> Result<WriteTx, StoreError> {
    if batch.conn.is_none() {
        let mut conn = match batch.spare.take() {
            Some(conn) => conn,
            None => gate.pool.acquire().await?,
        };
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        batch.conn = Some(conn);
        batch.outcome = Some(watch::channel(None).0);
    }
    // Two statements fewer for every write that finds no batch waiting.
    let savepoint = in_savepoint(&batch);
    let Some(conn) = batch.conn.as_mut() else {
        unreachable!("a batch was opened above")
    };
    if savepoint && let Err(err) = sqlx::query("SAVEPOINT member").execute(&mut **conn).await {
        let reason = err.to_string();
        let _ = batch.finish(Some(reason)).await;
        return Err(err.into());
    }
    Ok(WriteTx {
        batch: Some(batch),
        gate,
    })
}

/// One write inside the open batch, holding the gate. Dereferences to the
/// batch's connection; dropped without [`WriteTx::commit`], its savepoint
/// is rolled back and the rest of the batch goes on.
pub(crate) struct WriteTx {
    /// Always `Some` until `commit` or `drop` takes it.
    batch: Option<OwnedMutexGuard<Batch>>,
    gate: Arc<WriteGate>,
}

impl Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        match self.batch.as_ref().and_then(|batch| batch.conn.as_ref()) {
            Some(conn) => conn,
            None => unreachable!("a write holds the gate and its open batch until it ends"),
        }
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self.batch.as_mut().and_then(|batch| batch.conn.as_mut()) {
            Some(conn) => conn,
            None => unreachable!("a write holds the gate and its open batch until it ends"),
        }
    }
}

impl WriteTx {
    /// Keeps the write: returns once the batch holding it is committed
    /// (or with the reason it was not). Runs on its own task, so a request
    /// dropped meanwhile cannot leave the batch uncommitted.
    pub(crate) async fn commit(mut self) -> Result<(), StoreError> {
        let Some(batch) = self.batch.take() else {
            return Ok(());
        };
        let gate = Arc::clone(&self.gate);
        tokio::spawn(join_and_commit(gate, batch))
            .await
            .map_err(|err| unavailable(err.to_string()))?
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        // Without a runtime (the process is ending) the batch is simply
        // dropped: nothing of it was committed, so nothing was acknowledged.
        if let Some(batch) = self.batch.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(abandon(Arc::clone(&self.gate), batch));
        }
    }
}

/// Releases the write's savepoint into the batch, then commits the batch
/// now (no writer waiting, or the batch is full) or hands the gate on and
/// waits for the batch's end.
async fn join_and_commit(
    gate: Arc<WriteGate>,
    mut batch: OwnedMutexGuard<Batch>,
) -> Result<(), StoreError> {
    let savepoint = in_savepoint(&batch);
    let Some(conn) = batch.conn.as_mut() else {
        return Err(unavailable("the batch was closed".into()));
    };
    if savepoint && let Err(err) = sqlx::query("RELEASE member").execute(&mut **conn).await {
        return batch.finish(Some(err.to_string())).await;
    }
    batch.members += 1;
    if gate.waiting.load(Ordering::SeqCst) == 0 || batch.members >= MAX_BATCH {
        return batch.finish(None).await;
    }
    let Some(mut ended) = batch.outcome.as_ref().map(watch::Sender::subscribe) else {
        return Err(unavailable("the batch has no outcome".into()));
    };
    let seen = ended.clone();
    drop(batch);
    tokio::select! {
        biased;
        outcome = async { ended.wait_for(Option::is_some).await.ok().map(|o| o.clone()) } => {
            from_outcome(outcome.as_ref())
        }
        mut batch = Arc::clone(&gate.batch).lock_owned() => {
            // The gate came back before anyone committed this write's
            // batch: the writers that were waiting have joined it.
            let outcome = seen.borrow().clone();
            if outcome.is_none() {
                batch.finish(None).await
            } else {
                from_outcome(Some(&outcome))
            }
        }
    }
}

fn from_outcome(outcome: Option<&Outcome>) -> Result<(), StoreError> {
    match outcome {
        Some(Some(Ok(()))) => Ok(()),
        Some(Some(Err(reason))) => Err(unavailable(reason.clone())),
        _ => Err(unavailable("the batch ended without an outcome".into())),
    }
}

/// Rolls back an abandoned write's savepoint; a batch left with members
/// is committed when no writer is waiting to join it, one left empty (as
/// the batch of a first write, which has no savepoint, always is) is
/// rolled back.
async fn abandon(gate: Arc<WriteGate>, mut batch: OwnedMutexGuard<Batch>) {
    let savepoint = in_savepoint(&batch);
    let Some(conn) = batch.conn.as_mut() else {
        return;
    };
    if savepoint {
        let mut undone = sqlx::query("ROLLBACK TO member").execute(&mut **conn).await;
        if undone.is_ok() {
            undone = sqlx::query("RELEASE member").execute(&mut **conn).await;
        }
        if let Err(err) = undone {
            let _ = batch.finish(Some(err.to_string())).await;
            return;
        }
    }
    if batch.members == 0 {
        if let Some(mut conn) = batch.conn.take() {
            if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_ok() {
                batch.spare = Some(conn);
            } else {
                let _ = conn.close().await;
            }
        }
        batch.outcome = None;
    } else if gate.waiting.load(Ordering::SeqCst) == 0 {
        let _ = batch.finish(None).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
    };
    use std::str::FromStr;

    /// A gate over a fresh database file with a table `t(x UNIQUE)`.
    async fn gate() -> (Arc<WriteGate>, SqlitePool, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER NOT NULL UNIQUE)")
            .execute(&pool)
            .await
            .unwrap();
        (WriteGate::new(pool.clone()), pool, dir)
    }

    #[test]
    fn a_gate_dropped_after_its_runtime_closes_its_kept_connection() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (gate, pool, dir) = runtime.block_on(async {
            let (gate, pool, dir) = gate().await;
            insert(&gate, 1).await.unwrap();
            assert!(gate.batch.lock().await.spare.is_some(), "a kept connection");
            (gate, pool, dir)
        });
        drop(runtime);
        // Outside any runtime: must not panic.
        drop(gate);
        drop(pool);
        let rows: i64 = rusqlite::Connection::open(dir.path().join("t.db"))
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(rows, 1, "the committed write stays");
    }

    async fn rows(pool: &SqlitePool) -> Vec<i64> {
        sqlx::query_scalar("SELECT x FROM t ORDER BY x")
            .fetch_all(pool)
            .await
            .unwrap()
    }

    async fn insert(gate: &Arc<WriteGate>, x: i64) -> Result<(), StoreError> {
        let mut tx = gate.begin().await?;
        sqlx::query("INSERT INTO t (x) VALUES ($1)")
            .bind(x)
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    }

    /// `write(gate, n)` for each `n` below `count`, all at once, each on
    /// its own task as requests are.
    fn spawn_writers<F>(
        gate: &Arc<WriteGate>,
        count: i64,
        write: impl Fn(Arc<WriteGate>, i64) -> F,
    ) -> Vec<tokio::task::JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        (0..count)
            .map(|n| tokio::spawn(write(Arc::clone(gate), n)))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_all_land_and_share_commits() {
        let (gate, pool, _dir) = gate().await;
        let writers = spawn_writers(&gate, 64, |gate, x| async move { insert(&gate, x).await });
        for writer in writers {
            writer.await.unwrap().unwrap();
        }
        // Acknowledged means committed: a fresh connection sees them all.
        assert_eq!(rows(&pool).await, (0..64).collect::<Vec<_>>());
        let batches = gate.batch.lock().await.committed;
        assert!(batches < 64, "{batches} commits for 64 concurrent writes");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_rolls_back_alone() {
        let (gate, pool, _dir) = gate().await;
        insert(&gate, 1).await.unwrap();
        let writers = spawn_writers(&gate, 40, |gate, n| async move {
            match n % 4 {
                // Breaks the unique rule: its statement fails.
                0 => insert(&gate, 1).await.is_err(),
                // Writes, then gives up without committing.
                1 => {
                    let mut tx = gate.begin().await.unwrap();
                    sqlx::query("INSERT INTO t (x) VALUES ($1)")
                        .bind(1000 + n)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    drop(tx);
                    true
                }
                _ => insert(&gate, 100 + n).await.is_ok(),
            }
        });
        for writer in writers {
            assert!(writer.await.unwrap());
        }
        let mut expected = vec![1];
        expected.extend((0..40).filter(|n| n % 4 >= 2).map(|n| 100 + n));
        assert_eq!(rows(&pool).await, expected);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_s_first_write_rolls_back_alone_without_a_savepoint() {
        let (gate, pool, _dir) = gate().await;
        // One at a time, each write is the first (and only) of its batch.
        insert(&gate, 1).await.unwrap();
        let mut tx = gate.begin().await.unwrap();
        let batch = tx.batch.as_ref().unwrap();
        assert!(
            !in_savepoint(batch),
            "a batch's first write runs without a savepoint"
        );
        sqlx::query("INSERT INTO t (x) VALUES (2)")
            .execute(&mut *tx)
            .await
            .unwrap();
        drop(tx);
        assert!(insert(&gate, 1).await.is_err(), "1 is taken");
        insert(&gate, 3).await.unwrap();
        assert_eq!(rows(&pool).await, vec![1, 3]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_dropped_while_opening_leave_no_transaction_behind() {
        let (gate, pool, _dir) = gate().await;
        // Each write is dropped a little later than the one before, so
        // some are dropped in the middle of opening the batch.
        for x in 0..200 {
            let writer = tokio::spawn({
                let gate = Arc::clone(&gate);
                async move { insert(&gate, x).await }
            });
            let until = std::time::Instant::now() + std::time::Duration::from_micros(x as u64 * 2);
            while std::time::Instant::now() < until {
                tokio::task::yield_now().await;
            }
            writer.abort();
            let _ = writer.await;
        }
        insert(&gate, 500).await.unwrap();
        // Every connection of the pool but the one the gate keeps for its
        // next batch can write at once, and sees 500; then the gate's can.
        let mut conns = Vec::new();
        for _ in 0..3 {
            let mut conn = pool.acquire().await.unwrap();
            sqlx::query("PRAGMA busy_timeout = 0")
                .execute(&mut *conn)
                .await
                .unwrap();
            conns.push(conn);
        }
        for (n, conn) in conns.iter_mut().enumerate() {
            sqlx::query("INSERT INTO t (x) VALUES ($1)")
                .bind(600 + n as i64)
                .execute(&mut **conn)
                .await
                .unwrap();
        }
        drop(conns);
        insert(&gate, 700).await.unwrap();
        assert!(rows(&pool).await.contains(&500));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_dropped_midway_leave_the_gate_working() {
        let (gate, pool, _dir) = gate().await;
        let writers = spawn_writers(&gate, 32, |gate, x| async move { insert(&gate, x).await });
        // Requests whose clients go away at any point: waiting for the
        // gate, inside their write, or waiting for their batch.
        for writer in writers.iter().skip(1).step_by(3) {
            writer.abort();
        }
        let mut acknowledged = Vec::new();
        for (x, writer) in writers.into_iter().enumerate() {
            if let Ok(result) = writer.await {
                result.unwrap();
                acknowledged.push(x as i64);
            }
        }
        insert(&gate, 500).await.unwrap();
        let stored = rows(&pool).await;
        for x in acknowledged.iter().chain(&[500]) {
            assert!(stored.contains(x), "acknowledged {x} is missing");
        }
        // Nothing is left open: another connection can write at once.
        sqlx::query("INSERT INTO t (x) VALUES (501)")
            .execute(&pool)
            .await
            .unwrap();
    }
}
