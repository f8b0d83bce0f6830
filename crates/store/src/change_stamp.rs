//! Whether a SQLite database changed since a moment, seen from any
//! process, without a call into SQLite or the kernel: the WAL-index
//! header.
//!
//! In WAL mode every connection to a database, in every process, shares
//! the `-shm` file, whose first 96 bytes (the WAL-index header, kept twice
//! in a row; <https://www.sqlite.org/walformat.html>) hold the last
//! committed frame, its checksum and the WAL's salts. A commit rewrites
//! them before `COMMIT` returns, and no two states of the WAL share them
//! (after a checkpoint restarts the WAL, its salts change). So if the
//! header read before a query equals the one read now, nothing was
//! committed in between, by this process or any other, and what the query
//! found still holds.
//!
//! The header is read through a mapping of the file, as SQLite reads it.
//! The watch keeps a connection of its own open (its pin): SQLite removes
//! the `-shm` file, or empties it to build the index again, only when a
//! connection finds no other open anywhere, so while the pin is open the
//! mapped file is the one every connection writes. A header that cannot
//! be read whole (no WAL yet, the two copies differ while a commit writes
//! them) gives no stamp: the caller asks the database, as it would
//! without this.

/// The WAL-index header at one moment.
pub(crate) type Stamp = [u8; 48];

#[cfg(unix)]
pub(crate) use unix::WalWatch;

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering, fence};

    use rusqlite::{Connection, OpenFlags};

    use super::Stamp;

    /// The header's two copies, in 8-byte words.
    const WORDS: usize = 12;
    const HEADER_BYTES: usize = WORDS * 8;

    /// Reads the header of one database's `-shm` file.
    pub(crate) struct WalWatch {
        db: PathBuf,
        shm: PathBuf,
        /// Set once the pin is open and the header mapped.
        watched: OnceLock<Watched>,
    }

    impl WalWatch {
        /// Watches the database file at `db`.
        pub(crate) fn new(db: &Path) -> Self {
            let mut shm = db.as_os_str().to_owned();
            shm.push("-shm");
            Self {
                db: db.to_owned(),
                shm: PathBuf::from(shm),
                watched: OnceLock::new(),
            }
        }

        /// The header now, or `None` when it cannot be trusted.
        pub(crate) fn stamp(&self) -> Option<Stamp> {
            if let Some(watched) = self.watched.get() {
                return watched.header();
            }
            // No WAL yet (or a database in memory): asked again next time,
            // at the cost of looking the file up.
            if !self.shm.exists() {
                return None;
            }
            let watched = Watched::start(&self.db, &self.shm)?;
            // Should another thread have started one meanwhile, this one
            // is let go and both read the same file.
            let _ = self.watched.set(watched);
            self.watched.get()?.header()
        }
    }

    /// The pin and the mapped header.
    struct Watched {
        /// Unmapped before the pin closes (field order): the file is
        /// the database's while the pin is open.
        header: Mapped,
        /// Kept open, never used: behind a mutex only so that the watch
        /// can be shared between threads (a connection is not `Sync`).
        _pin: std::sync::Mutex<Connection>,
    }

    impl Watched {
        fn start(db: &Path, shm: &Path) -> Option<Self> {
            let pin = Connection::open_with_flags(
                db,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok()?;
            // A read opens the WAL index: from here until the pin closes
            // no connection finds itself the last one.
            let mode: String = pin
                .query_row("PRAGMA journal_mode", [], |row| row.get(0))
                .ok()?;
            pin.query_row("SELECT count(*) FROM sqlite_schema", [], |row| {
                row.get::<_, i64>(0)
            })
            .ok()?;
            if !mode.eq_ignore_ascii_case("wal") {
                return None;
            }
            let header = Mapped::new(&File::open(shm).ok()?)?;
            Some(Self {
                header,
                _pin: std::sync::Mutex::new(pin),
            })
        }

        /// The header as [`WalWatch::stamp`] gives it.
        fn header(&self) -> Option<Stamp> {
            let (first, second) = self.header.read();
            // Byte 12 is `isInit`: 0 until a connection has built the index.
            if first != second || first[12] == 0 {
                return None;
            }
            Some(first)
        }
    }

    /// The first bytes of a file, mapped to be read as another process
    /// writes them.
    struct Mapped(std::ptr::NonNull<AtomicU64>);

    // SAFETY: the mapping is read only, with atomic loads, from any thread.
    unsafe impl Send for Mapped {}
    unsafe impl Sync for Mapped {}

    impl Mapped {
        /// The header of `file`, which must hold it whole: a mapping past
        /// the end of a file faults when read.
        fn new(file: &File) -> Option<Self> {
            if file.metadata().ok()?.len() < HEADER_BYTES as u64 {
                return None;
            }
            // SAFETY: a new shared, read-only mapping of the file's first
            // bytes (the kernel rounds it to a page, which starts the
            // file); the descriptor may close after, the mapping stays.
            let at = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    HEADER_BYTES,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            if at == libc::MAP_FAILED {
                return None;
            }
            std::ptr::NonNull::new(at.cast()).map(Self)
        }

        /// The header's first copy, then its second, as SQLite reads
        /// them: a commit writes the second first, so a first copy seen
        /// new comes with a new second.
        fn read(&self) -> (Stamp, Stamp) {
            let word = |i: usize| {
                // SAFETY: `i` < WORDS, inside the mapping, which is page
                // aligned; other processes write these words while we read.
                unsafe { (*self.0.as_ptr().add(i)).load(Ordering::Relaxed) }
            };
            let mut first = [0u8; 48];
            for (i, bytes) in first.chunks_exact_mut(8).enumerate() {
                bytes.copy_from_slice(&word(i).to_ne_bytes());
            }
            fence(Ordering::Acquire);
            let mut second = [0u8; 48];
            for (i, bytes) in second.chunks_exact_mut(8).enumerate() {
                bytes.copy_from_slice(&word(WORDS / 2 + i).to_ne_bytes());
            }
            (first, second)
        }
    }

    impl Drop for Mapped {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, not read after.
            unsafe { libc::munmap(self.0.as_ptr().cast(), HEADER_BYTES) };
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

    #[tokio::test]
    async fn the_watch_keeps_the_file_it_reads_when_every_other_connection_closes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        let shm = dir.path().join("w.db-shm");
        let watch = WalWatch::new(&db);
        let first = pool(&db).await;
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&first)
            .await
            .unwrap();
        let before = watch.stamp().expect("a stamp once the WAL exists");
        // The last of the other connections closes: without the watch's
        // own, SQLite would remove the file, and a new one would be
        // made for the next connection while the watch read the old.
        first.close().await;
        assert!(shm.exists(), "the watch's connection keeps the -shm file");
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
