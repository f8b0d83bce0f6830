//! Whether a SQLite database changed since a moment, seen from any
//! process, without a call into SQLite: the WAL-index header.
//!
//! In WAL mode every connection to a database, in every process, shares
//! the `-shm` file, whose first 48 bytes (the WAL-index header, kept twice
//! in a row; <https://www.sqlite.org/walformat.html>) hold the last
//! committed frame, its checksum and the WAL's salts. A commit rewrites
//! them before `COMMIT` returns, and no two states of the WAL share them
//! (after a checkpoint restarts the WAL, its salts change). So if the
//! header read before a query equals the one read now, nothing was
//! committed in between, by this process or any other, and what the query
//! found still holds. A header that cannot be read whole (no file yet, the
//! two copies differ while a commit writes them, the file was removed when
//! the last connection closed) gives no stamp: the caller asks the
//! database, as it would without this.

/// The WAL-index header at one moment.
pub(crate) type Stamp = [u8; 48];

#[cfg(unix)]
pub(crate) use unix::WalWatch;

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, RwLock};

    use super::Stamp;

    /// Reads the header of one database's `-shm` file.
    pub(crate) struct WalWatch {
        shm: PathBuf,
        /// Open while the file exists and is the database's.
        file: RwLock<Option<Arc<File>>>,
    }

    impl WalWatch {
        /// Watches the database file at `db`.
        pub(crate) fn new(db: &Path) -> Self {
            let mut shm = db.as_os_str().to_owned();
            shm.push("-shm");
            Self {
                shm: PathBuf::from(shm),
                file: RwLock::new(None),
            }
        }

        fn file(&self) -> Option<Arc<File>> {
            if let Some(file) = self.file.read().ok()?.as_ref() {
                return Some(Arc::clone(file));
            }
            let file = Arc::new(File::open(&self.shm).ok()?);
            *self.file.write().ok()? = Some(Arc::clone(&file));
            Some(file)
        }

        /// The header now, or `None` when it cannot be trusted.
        pub(crate) fn stamp(&self) -> Option<Stamp> {
            let file = self.file()?;
            let mut header = [0u8; 96];
            file.read_exact_at(&mut header, 0).ok()?;
            // Removed (the last connection closed it): reopen next time.
            if file.metadata().ok()?.nlink() == 0 {
                *self.file.write().ok()? = None;
                return None;
            }
            let (first, second) = header.split_at(48);
            // Byte 12 is `isInit`: 0 until a connection has built the index.
            if first != second || first[12] == 0 {
                return None;
            }
            first.try_into().ok()
        }
    }
}

/// Elsewhere there is no stamp: every check asks the database.
#[cfg(not(unix))]
pub(crate) struct WalWatch;

#[cfg(not(unix))]
impl WalWatch {
    pub(crate) fn new(_db: &std::path::Path) -> Self {
        Self
    }

    pub(crate) fn stamp(&self) -> Option<Stamp> {
        None
    }
}

#[cfg(all(test, unix))]
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
        let mut seen = vec![watch.stamp().expect("a stamp once the WAL exists")];
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
}
