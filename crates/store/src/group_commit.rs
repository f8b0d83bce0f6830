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
//! Every statement runs on the connection's own sqlx thread, so a tokio
//! thread never waits for a lock or an fsync, and the connection is never
//! taken away from that thread. (It once was, to run a write's statements
//! on the calling thread through sqlx's `lock_handle`: under 64 writers on
//! one core that hand-off stopped for good, the gate's holder waiting in
//! it with sqlx's thread parked, and every later write waiting for the
//! gate.)

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    /// Who waits for the gate, and since when writes have not moved.
    turns: Arc<TurnClock>,
}

/// Since when writes have not moved: the start of the current turn, or of
/// the first of a run of long turns with writers waiting between them (a
/// lock held elsewhere makes each turn wait out the busy timeout and give
/// up, and the next begins at once): microseconds since `epoch`, plus one,
/// so that 0 says the gate is free or moving.
struct TurnClock {
    epoch: Instant,
    stalled_since: AtomicU64,
    /// Writers waiting for the gate to start a write (members waiting for
    /// their batch's commit are not counted).
    waiting: AtomicUsize,
}

/// A turn at least this long that leaves writers waiting does not count as
/// the gate moving.
const LONG_TURN: Duration = Duration::from_secs(1);

/// The gate, held: the batch, as long as this value lives.
struct Turn {
    batch: OwnedMutexGuard<Batch>,
    clock: Arc<TurnClock>,
    began: Instant,
}

impl Deref for Turn {
    type Target = Batch;

    fn deref(&self) -> &Batch {
        &self.batch
    }
}

impl DerefMut for Turn {
    fn deref_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // Before the guard lets the next holder in.
        if self.began.elapsed() < LONG_TURN || self.clock.waiting.load(Ordering::SeqCst) == 0 {
            self.clock.stalled_since.store(0, Ordering::SeqCst);
        }
    }
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
                drop(held.detach());
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
                .execute(&mut *held)
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
            let _ = sqlx::query("ROLLBACK").execute(&mut *held).await;
            let _ = held.close().await;
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

/// A connection of the pool.
type Held = PoolConnection<Sqlite>;

impl WriteGate {
    pub(crate) fn new(pool: SqlitePool) -> Arc<Self> {
        Arc::new(Self {
            pool,
            batch: Arc::new(Mutex::new(Batch::default())),
            turns: Arc::new(TurnClock {
                epoch: Instant::now(),
                stalled_since: AtomicU64::new(0),
                waiting: AtomicUsize::new(0),
            }),
        })
    }

    /// Takes the gate, waiting in line.
    async fn take(&self) -> Turn {
        let _line = InLine::new(&self.turns.waiting);
        self.lock().await
    }

    /// Takes the gate, not counted in the line.
    async fn lock(&self) -> Turn {
        let batch = Arc::clone(&self.batch).lock_owned().await;
        let clock = &self.turns;
        let began = Instant::now();
        let since =
            u64::try_from(began.duration_since(clock.epoch).as_micros()).unwrap_or(u64::MAX - 1);
        // Kept when a run of long turns goes on.
        let _ =
            clock
                .stalled_since
                .compare_exchange(0, since + 1, Ordering::SeqCst, Ordering::SeqCst);
        Turn {
            batch,
            clock: Arc::clone(clock),
            began,
        }
    }

    /// How long writes have not moved: the current turn, or a run of long
    /// turns with writers waiting; `None` when the gate is free or moving.
    /// A write holds the gate for one write's statements (or while it
    /// waits for another connection's lock, up to the busy timeout).
    pub(crate) fn stalled_for(&self) -> Option<Duration> {
        let since = self
            .turns
            .stalled_since
            .load(Ordering::SeqCst)
            .checked_sub(1)?;
        Some(
            self.turns
                .epoch
                .elapsed()
                .saturating_sub(Duration::from_micros(since)),
        )
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
}

/// Opens the batch when none is.
async fn open_batch(gate: &WriteGate, batch: &mut Batch) -> Result<(), StoreError> {
    if batch.conn.is_none() {
        let mut held = match batch.spare.take() {
            Some(held) => held,
            None => gate.pool.acquire().await?,
        };
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *held).await?;
        batch.conn = Some(held);
        batch.outcome = Some(watch::channel(None).0);
    }
    Ok(())
}

/// Opens the batch when none is, then the write's savepoint in it.
async fn open(gate: Arc<WriteGate>, mut batch: Turn) -> Result<WriteTx, StoreError> {
    open_batch(&gate, &mut batch).await?;
    // Two statements fewer for every write that finds no batch waiting.
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        unreachable!("a batch was opened above")
    };
    if savepoint && let Err(err) = sqlx::query("SAVEPOINT member").execute(&mut **held).await {
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
pub struct WriteTx {
    /// Always `Some` until `commit` or `drop` takes it.
    batch: Option<Turn>,
    gate: Arc<WriteGate>,
}

impl Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        match self.batch.as_ref().and_then(|batch| batch.conn.as_ref()) {
            Some(held) => held,
            None => unreachable!("a write holds the gate and its open batch until it ends"),
        }
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self.batch.as_mut().and_then(|batch| batch.conn.as_mut()) {
            Some(held) => held,
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
async fn release_and_join(gate: Arc<WriteGate>, mut batch: Turn) -> Result<(), StoreError> {
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        return Err(unavailable("the batch was closed".into()));
    };
    if savepoint && let Err(err) = sqlx::query("RELEASE member").execute(&mut **held).await {
        return batch.finish(Some(err.to_string())).await;
    }
    join(gate, batch).await
}

/// Counts a released write into the batch, then commits the batch now (no
/// writer waiting, or the batch is full) or hands the gate on and waits
/// for the batch's end.
async fn join(gate: Arc<WriteGate>, mut batch: Turn) -> Result<(), StoreError> {
    batch.members += 1;
    if gate.turns.waiting.load(Ordering::SeqCst) == 0 || batch.members >= MAX_BATCH {
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
        mut batch = gate.lock() => {
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
async fn abandon(gate: Arc<WriteGate>, mut batch: Turn) {
    let savepoint = in_savepoint(&batch);
    let Some(held) = batch.conn.as_mut() else {
        return;
    };
    if savepoint {
        let mut undone = sqlx::query("ROLLBACK TO member").execute(&mut **held).await;
        if undone.is_ok() {
            undone = sqlx::query("RELEASE member").execute(&mut **held).await;
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
async fn settle(gate: Arc<WriteGate>, mut batch: Turn) {
    if batch.members == 0 {
        if let Some(mut held) = batch.conn.take() {
            if sqlx::query("ROLLBACK").execute(&mut *held).await.is_ok() {
                batch.spare = Some(held);
            } else {
                let _ = held.close().await;
            }
        }
        batch.outcome = None;
    } else if gate.turns.waiting.load(Ordering::SeqCst) == 0 {
        let _ = batch.finish(None).await;
    }
}

#[cfg(test)]
mod tests;
