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
//!
//! sqlx drives each SQLite connection from a thread of its own, so every
//! statement of a write is two thread hand-offs; a write whose statements
//! are all known up front can instead run them on the calling thread
//! ([`WriteGate::write_here`]): the batch's connection is taken from its
//! sqlx thread once, and the savepoint, the write and its release run
//! without a hand-off. Beginning and committing the batch stay on sqlx's
//! thread, so a tokio thread never waits for a lock or an fsync.

use std::ops::{Deref, DerefMut};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::pool::PoolConnection;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot, watch};

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
    conn: Option<Held>,
    /// Between batches, the last batch's connection, kept for the next:
    /// SQLite empties a connection's page cache when it starts a
    /// transaction after another connection committed, so batches taking
    /// turns on the pool's connections each read the tables' pages again.
    spare: Option<Held>,
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
            for held in [self.conn.take(), self.spare.take()].into_iter().flatten() {
                let Held { here, conn } = held;
                drop(here);
                drop(conn.detach());
            }
        }
    }
}

impl Batch {
    /// Ends the batch: `COMMIT` (or, after a failure, `ROLLBACK`), and
    /// tells every member. Gives this caller's own result.
    async fn finish(&mut self, failure: Option<String>) -> Result<(), StoreError> {
        let Some(mut held) = self.conn.take() else {
            return Ok(());
        };
        let result = match failure {
            None => sqlx::query("COMMIT")
                .execute(&mut *held.conn)
                .await
                .map(drop)
                .map_err(|err| err.to_string()),
            Some(reason) => Err(reason),
        };
        if result.is_ok() {
            self.committed += 1;
            self.spare = Some(held);
        } else {
            // Whatever state the connection is in, nothing of the batch
            // stays: roll back what SQLite did not already, then close it.
            let _ = sqlx::query("ROLLBACK").execute(&mut *held.conn).await;
            held.close().await;
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

/// A connection of the pool, and the same connection as rusqlite drives it
/// on the calling thread ([`Held::here`]), made the first time it is
/// needed. `here` is declared first so it is dropped first: its prepared
/// statements are finalized while the connection is still open (sqlx's
/// thread is idle then: the connection is held by the gate alone).
struct Held {
    here: Option<rusqlite::Connection>,
    conn: PoolConnection<Sqlite>,
}

/// Prepared statements kept for writes run on the calling thread: the
/// few shapes of the writes that run there and the gate's own.
const HERE_STATEMENTS: usize = 32;

impl Held {
    fn new(conn: PoolConnection<Sqlite>) -> Self {
        Self { here: None, conn }
    }

    /// Runs `work` on this thread with the connection taken from its sqlx
    /// thread for the while (one hand-off instead of two per statement).
    async fn here<R>(
        &mut self,
        work: impl FnOnce(&mut rusqlite::Connection) -> R,
    ) -> Result<R, StoreError> {
        let Held { here, conn } = self;
        let mut locked = conn.lock_handle().await?;
        let here = match here {
            Some(here) => here,
            None => {
                // SAFETY: the handle is sqlx's open connection, locked out of
                // its thread until `locked` is dropped, and used here only
                // while it is locked; the wrapper does not own it (it never
                // closes it) and is dropped before the connection closes
                // (see `Held`).
                let wrapped =
                    unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr())? };
                wrapped.set_prepared_statement_cache_capacity(HERE_STATEMENTS);
                here.insert(wrapped)
            }
        };
        let result = work(here);
        drop(locked);
        Ok(result)
    }

    async fn close(self) {
        let Held { here, conn } = self;
        drop(here);
        let _ = conn.close().await;
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

    /// Takes the gate, waiting in line.
    async fn take(&self) -> OwnedMutexGuard<Batch> {
        let _line = InLine::new(&self.waiting);
        Arc::clone(&self.batch).lock_owned().await
    }

    /// Starts a write: the gate, the batch (opened when none is) and a
    /// savepoint of the write's own.
    pub(crate) async fn begin(self: &Arc<Self>) -> Result<WriteTx, StoreError> {
        let batch = self.take().await;
        // Opening runs on its own task: a request dropped in the middle of
        // `BEGIN IMMEDIATE` would otherwise hand its connection back to the
        // pool inside a transaction nobody ends, and every later write
        // would find the database locked. Dropped once it is open, the
        // write is abandoned like any other.
        tokio::spawn(open(Arc::clone(self), batch))
            .await
            .map_err(|err| unavailable(err.to_string()))?
    }

    /// One whole write, `work`, run on the calling thread in a savepoint
    /// of its own in the batch (see the module's notes): kept when it
    /// gives `Ok`, and then answered once its batch is committed; rolled
    /// back alone when it gives `Err` (or panics), the rest of the batch
    /// going on. Runs on its own task, so a dropped request leaves nothing
    /// half done; a request dropped before its turn (cut off at its
    /// deadline while the database was locked, say) leaves nothing at all:
    /// its client was told the write failed.
    pub(crate) async fn write_here<R, F>(self: &Arc<Self>, work: F) -> Result<R, StoreError>
    where
        F: FnOnce(&mut rusqlite::Connection) -> Result<R, StoreError> + Send + 'static,
        R: Send + 'static,
    {
        let batch = self.take().await;
        // Closed when this request is dropped.
        let (waiter, _waiting) = oneshot::channel::<()>();
        tokio::spawn(write_here(Arc::clone(self), batch, waiter, work))
            .await
            .map_err(|err| unavailable(err.to_string()))?
    }
}

/// Opens the batch when none is.
async fn open_batch(gate: &WriteGate, batch: &mut Batch) -> Result<(), StoreError> {
    if batch.conn.is_none() {
        let mut held = match batch.spare.take() {
            Some(held) => held,
            None => Held::new(gate.pool.acquire().await?),
        };
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut *held.conn)
            .await?;
        batch.conn = Some(held);
        batch.outcome = Some(watch::channel(None).0);
    }
    Ok(())
}

/// Opens the batch when none is, then the write's savepoint in it.
async fn open(
    gate: Arc<WriteGate>,
    mut batch: OwnedMutexGuard<Batch>,
) -> Result<WriteTx, StoreError> {
    open_batch(&gate, &mut batch).await?;
    // Two statements fewer for every write that finds no batch waiting.
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        unreachable!("a batch was opened above")
    };
    if savepoint
        && let Err(err) = sqlx::query("SAVEPOINT member")
            .execute(&mut *held.conn)
            .await
    {
        let reason = err.to_string();
        let _ = batch.finish(Some(reason)).await;
        return Err(err.into());
    }
    Ok(WriteTx {
        batch: Some(batch),
        gate,
    })
}

/// [`WriteGate::write_here`] holding the gate.
async fn write_here<R, F>(
    gate: Arc<WriteGate>,
    mut batch: OwnedMutexGuard<Batch>,
    waiter: oneshot::Sender<()>,
    work: F,
) -> Result<R, StoreError>
where
    F: FnOnce(&mut rusqlite::Connection) -> Result<R, StoreError>,
{
    open_batch(&gate, &mut batch).await?;
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        unreachable!("a batch was opened above")
    };
    let ran = held
        .here(|conn| {
            if waiter.is_closed() {
                return Ok(Err(StoreError::Unavailable(
                    "the request ended before its write ran".into(),
                )));
            }
            if savepoint {
                conn.prepare_cached("SAVEPOINT member")?.execute([])?;
            }
            let result = catch_unwind(AssertUnwindSafe(|| work(conn))).unwrap_or_else(|_| {
                Err(StoreError::Unavailable("the write stopped midway".into()))
            });
            // The savepoint is ended here either way, so the batch holds
            // this write whole or not at all.
            let undo = result.is_err() && savepoint;
            if undo {
                conn.prepare_cached("ROLLBACK TO member")?.execute([])?;
            }
            if savepoint {
                conn.prepare_cached("RELEASE member")?.execute([])?;
            }
            Ok::<_, StoreError>(result)
        })
        .await
        .and_then(|ran| ran);
    match ran {
        Ok(Ok(value)) => join(gate, batch).await.map(|()| value),
        Ok(Err(err)) => {
            settle(gate, batch).await;
            Err(err)
        }
        // The savepoint could not be ended, or the connection not taken:
        // nothing of the batch can be trusted.
        Err(err) => {
            let _ = batch.finish(Some(err.to_string())).await;
            Err(err)
        }
    }
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
            Some(held) => &held.conn,
            None => unreachable!("a write holds the gate and its open batch until it ends"),
        }
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self.batch.as_mut().and_then(|batch| batch.conn.as_mut()) {
            Some(held) => &mut held.conn,
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
        tokio::spawn(release_and_join(gate, batch))
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

/// Releases the write's savepoint into the batch, then [`join`]s it.
async fn release_and_join(
    gate: Arc<WriteGate>,
    mut batch: OwnedMutexGuard<Batch>,
) -> Result<(), StoreError> {
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        return Err(unavailable("the batch was closed".into()));
    };
    if savepoint && let Err(err) = sqlx::query("RELEASE member").execute(&mut *held.conn).await {
        return batch.finish(Some(err.to_string())).await;
    }
    join(gate, batch).await
}

/// Counts a released write into the batch, then commits the batch now (no
/// writer waiting, or the batch is full) or hands the gate on and waits
/// for the batch's end.
async fn join(gate: Arc<WriteGate>, mut batch: OwnedMutexGuard<Batch>) -> Result<(), StoreError> {
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

/// Rolls back an abandoned write's savepoint, then [`settle`]s the batch.
async fn abandon(gate: Arc<WriteGate>, mut batch: OwnedMutexGuard<Batch>) {
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        return;
    };
    if savepoint {
        let mut undone = sqlx::query("ROLLBACK TO member")
            .execute(&mut *held.conn)
            .await;
        if undone.is_ok() {
            undone = sqlx::query("RELEASE member").execute(&mut *held.conn).await;
        }
        if let Err(err) = undone {
            let _ = batch.finish(Some(err.to_string())).await;
            return;
        }
    }
    settle(gate, batch).await;
}

/// After a write was undone: a batch left with members is committed when
/// no writer is waiting to join it, one left empty (as the batch of a
/// first write, which has no savepoint, always is) is rolled back.
async fn settle(gate: Arc<WriteGate>, mut batch: OwnedMutexGuard<Batch>) {
    if batch.members == 0 {
        if let Some(mut held) = batch.conn.take() {
            if sqlx::query("ROLLBACK")
                .execute(&mut *held.conn)
                .await
                .is_ok()
            {
                batch.spare = Some(held);
            } else {
                held.close().await;
            }
        }
        batch.outcome = None;
    } else if gate.waiting.load(Ordering::SeqCst) == 0 {
        let _ = batch.finish(None).await;
    }
}

#[cfg(test)]
mod tests;
