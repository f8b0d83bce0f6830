//! Whether a SQLite database changed since a moment, seen from any
//! process: `PRAGMA data_version` (<https://www.sqlite.org/pragma.html#pragma_data_version>)
//! read on a connection of the watch's own.
//!
//! SQLite documents that two readings of `data_version` on one
//! connection differ when any other connection, in this process or
//! another, committed a change in between. The watch's connection never
//! writes, so every commit changes what it reads: if the version read
//! before a query equals the one read now, nothing was committed in
//! between and what the query found still holds. A version that cannot be
//! read (no database file yet, the database busy) gives no stamp: the
//! caller asks the database, as it would without this.
//!
//! The watch opens its connection once, the first time the file exists,
//! and keeps it: versions are counted per connection, so a stamp from one
//! connection means nothing to another.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

/// The database's data version at one moment, as the watch's connection
/// counts it.
pub(crate) type Stamp = i64;

/// Reads one database's data version.
pub(crate) struct WalWatch {
    db: PathBuf,
    /// Opened the first time the file exists; kept from then on.
    conn: Mutex<Option<Connection>>,
}

impl WalWatch {
    /// Watches the database file at `db`.
    pub(crate) fn new(db: &Path) -> Self {
        Self {
            db: db.to_owned(),
            conn: Mutex::new(None),
        }
    }

    /// The version now, or `None` when it cannot be read.
    pub(crate) fn stamp(&self) -> Option<Stamp> {
        // A poisoned lock only means a reading panicked: the connection is
        // still the same one, and its counter as good.
        let mut conn = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if conn.is_none() {
            // No file yet (or a database in memory): asked again next time.
            if !self.db.is_file() {
                return None;
            }
            let opened = Connection::open_with_flags(
                &self.db,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok()?;
            // No busy handler (the driver's default waits 5 s): this runs
            // on a thread of the async runtime, and a busy database means
            // no stamp this time, not a wait.
            opened.busy_timeout(std::time::Duration::ZERO).ok()?;
            *conn = Some(opened);
        }
        let conn = conn.as_ref()?;
        // Busy (a checkpoint restarting the WAL, say): no stamp this time,
        // rather than a wait under the lock every request takes.
        conn.prepare_cached("PRAGMA data_version")
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
    use std::str::FromStr;

    async fn pool(path: &std::path::Path) -> sqlx::SqlitePool {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .unwrap()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(options)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn every_commit_from_any_connection_changes_the_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        let watch = WalWatch::new(&db);
        assert_eq!(watch.stamp(), None, "no database yet");
        let ours = pool(&db).await;
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&ours)
            .await
            .unwrap();
        let mut seen = vec![watch.stamp().expect("a stamp once the file exists")];
        // Reads change nothing.
        sqlx::query("SELECT COUNT(*) FROM t")
            .fetch_one(&ours)
            .await
            .unwrap();
        assert_eq!(watch.stamp(), seen.last().copied());
        // A second pool stands for another process: its commits count too,
        // including across checkpoints that restart the WAL.
        let theirs = pool(&db).await;
        for n in 0..20 {
            let writer = if n % 2 == 0 { &theirs } else { &ours };
            sqlx::query("INSERT INTO t (x) VALUES ($1)")
                .bind(n)
                .execute(writer)
                .await
                .unwrap();
            if n % 5 == 4 {
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(writer)
                    .await
                    .unwrap();
            }
            let now = watch.stamp().unwrap();
            assert!(!seen.contains(&now), "commit {n} left a stamp seen before");
            seen.push(now);
        }
    }

    #[tokio::test]
    async fn commits_are_seen_after_every_other_connection_closed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        let watch = WalWatch::new(&db);
        let first = pool(&db).await;
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&first)
            .await
            .unwrap();
        let before = watch.stamp().expect("a stamp once the file exists");
        first.close().await;
        assert_eq!(watch.stamp(), Some(before), "nothing committed since");
        let second = pool(&db).await;
        let mut seen = vec![before];
        for n in 0..3 {
            sqlx::query("INSERT INTO t (x) VALUES ($1)")
                .bind(n)
                .execute(&second)
                .await
                .unwrap();
            let now = watch.stamp().expect("a stamp after a commit");
            assert!(!seen.contains(&now), "commit {n} left a stamp seen before");
            seen.push(now);
        }
        // A watch of a database never made has none.
        assert_eq!(WalWatch::new(&dir.path().join("none.db")).stamp(), None);
    }
}
