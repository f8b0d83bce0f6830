//! The gate's guarantees, against a real database file.

use super::*;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
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
        insert(&gate, 2).await.unwrap();
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
    assert_eq!(rows, 2, "the committed writes stay");
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
async fn writes_that_fail_or_panic_share_batches_and_roll_back_alone() {
    let (gate, pool, _dir) = gate().await;
    insert(&gate, 1).await.unwrap();
    let writers = spawn_writers(&gate, 60, |gate, n| async move {
        match n % 4 {
            // Breaks the unique rule: its statement fails.
            0 => insert(&gate, 1).await.is_err(),
            // Writes, then its request panics: nothing of it stays.
            1 => {
                let panicked = tokio::spawn(async move {
                    let mut tx = gate.begin().await.unwrap();
                    sqlx::query("INSERT INTO t (x) VALUES ($1)")
                        .bind(2000 + n)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    panic!("a write that stops midway");
                })
                .await;
                panicked.is_err()
            }
            _ => insert(&gate, 100 + n).await.is_ok(),
        }
    });
    for writer in writers {
        assert!(writer.await.unwrap());
    }
    let mut expected = vec![1];
    expected.extend((0..60).filter(|n| n % 4 >= 2).map(|n| 100 + n));
    assert_eq!(rows(&pool).await, expected);
    let batches = gate.batch.lock().await.committed;
    assert!(batches < 31, "{batches} commits for 31 concurrent writes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_request_ended_before_its_turn_leaves_nothing() {
    let (gate, pool, dir) = gate().await;
    // Another connection holds the database's write lock, so the
    // batch cannot begin until it lets go.
    let mut holder = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let lock = holder.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate);
    let lock = lock.unwrap();
    let cut_off =
        tokio::time::timeout(std::time::Duration::from_millis(200), insert(&gate, 1)).await;
    assert!(cut_off.is_err(), "the write waits for the lock");
    lock.rollback().unwrap();
    // The write's task gets the lock now, and finds nobody waiting.
    insert(&gate, 2).await.unwrap();
    assert_eq!(rows(&pool).await, vec![2]);
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
