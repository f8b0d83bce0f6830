//! `cofre backup` and `cofre restore` on SQLite: a consistent copy of the
//! database taken while the server runs (`VACUUM INTO`), with the receipt
//! files beside it, and the way back.
//!
//! Receipt files are copied before the snapshot and again after it: a
//! file is written before its row commits and deleted only after its row's
//! deletion commits, so every file a row of the snapshot names is in one
//! of the two passes. A name's content never changes, so a file already
//! copied is never copied again.
//!
//! With receipts in a bucket (`--receipts-url`) only the database is
//! copied: the files stay where every server reads them, and the bucket's
//! own versioning or replication is their backup. Receipts a restored
//! database names are then read from the bucket as before.

use std::path::{Path, PathBuf};

use cofre_store::Store;

use crate::config::ReceiptArgs;

/// The database file a `sqlite://` URL names.
fn sqlite_path(url: &str) -> Option<PathBuf> {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .map(|path| PathBuf::from(path.split('?').next().unwrap_or(path)))
}

/// The folder of receipt files that goes with the backup `file`.
pub fn receipts_beside(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".receipts");
    PathBuf::from(name)
}

/// Refuses, before any work, a backup that would overwrite something or
/// that the database cannot take.
pub fn check_target(url: &str, out: &Path) -> Result<(), String> {
    if sqlite_path(url).is_none() {
        return Err(
            "backup works on SQLite; on PostgreSQL use pg_dump (see docs/guide/backups.md)".into(),
        );
    }
    for path in [out.to_owned(), receipts_beside(out)] {
        if path.exists() {
            return Err(format!("{} exists: name a new file", path.display()));
        }
    }
    Ok(())
}

pub async fn backup(
    store: &dyn Store,
    url: &str,
    out: &Path,
    receipts: &ReceiptArgs,
) -> Result<(), String> {
    if let Some(bucket) = receipts.url() {
        store
            .backup(out)
            .await
            .map_err(|e| format!("cannot back up to {}: {e}", out.display()))?;
        println!(
            "backed up {url} to {}; receipt files live in {bucket} and are not copied: \
             back them up with the bucket's own versioning or replication",
            out.display()
        );
        return Ok(());
    }
    let receipts_dir = receipts.receipts_dir.as_path();
    let files = receipts_beside(out);
    let has_receipts = receipts_dir.is_dir();
    let mut copied = 0;
    if has_receipts {
        std::fs::create_dir(&files)
            .map_err(|e| format!("cannot create {}: {e}", files.display()))?;
        copied += copy_new_receipts(receipts_dir, &files)?;
    }
    store
        .backup(out)
        .await
        .map_err(|e| format!("cannot back up to {}: {e}", out.display()))?;
    if has_receipts {
        copied += copy_new_receipts(receipts_dir, &files)?;
        println!(
            "backed up {url} to {} and {copied} receipt files to {}",
            out.display(),
            files.display()
        );
    } else {
        println!(
            "backed up {url} to {} (no receipts directory at {})",
            out.display(),
            receipts_dir.display()
        );
    }
    Ok(())
}

pub fn restore(url: &str, from: &Path, force: bool, receipts: &ReceiptArgs) -> Result<(), String> {
    let receipts_dir = receipts.receipts_dir.as_path();
    let target =
        sqlite_path(url).ok_or("restore works on SQLite; on PostgreSQL use pg_restore or psql")?;
    let mut head = [0_u8; 16];
    std::io::Read::read_exact(
        &mut std::fs::File::open(from)
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?,
        &mut head,
    )
    .map_err(|_| format!("{} is not a SQLite database", from.display()))?;
    if &head != b"SQLite format 3\0" {
        return Err(format!("{} is not a SQLite database", from.display()));
    }
    if target.exists() && !force {
        return Err(format!(
            "{} exists: stop the server and pass --force to replace it",
            target.display()
        ));
    }
    let files = receipts_beside(from);
    let mut restored = 0;
    let bucket = receipts.url();
    if bucket.is_none() && files.is_dir() {
        std::fs::create_dir_all(receipts_dir)
            .map_err(|e| format!("cannot create {}: {e}", receipts_dir.display()))?;
        restored = copy_new_receipts(&files, receipts_dir)?;
    }
    let staging = target.with_extension("restoring");
    std::fs::copy(from, &staging).map_err(|e| format!("cannot copy the backup: {e}"))?;
    for suffix in ["-wal", "-shm"] {
        let mut side = target.clone().into_os_string();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    std::fs::rename(&staging, &target)
        .map_err(|e| format!("cannot put the backup in place: {e}"))?;
    if let Some(bucket) = bucket {
        println!(
            "restored {} into {}; receipt files are read from {bucket}, which restore does \
             not touch (bring them back with the bucket's own versioning if needed)",
            from.display(),
            target.display()
        );
        return Ok(());
    }
    println!(
        "restored {} into {} and {restored} receipt files into {}",
        from.display(),
        target.display(),
        receipts_dir.display()
    );
    Ok(())
}

/// Copies the receipt files of `from` that `to` lacks (each to a temporary
/// name, synced, then renamed); anything not named like a receipt stays.
fn copy_new_receipts(from: &Path, to: &Path) -> Result<usize, String> {
    let fail = |e: std::io::Error| format!("copying receipts from {}: {e}", from.display());
    let mut copied = 0;
    for entry in std::fs::read_dir(from).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name();
        let Some(text) = name.to_str() else { continue };
        if cofre_domain::receipt::parse_name(text).is_none() || to.join(text).exists() {
            continue;
        }
        let partial = to.join(format!("{text}.partial"));
        match std::fs::copy(entry.path(), &partial) {
            Ok(_) => {}
            // Deleted since it was listed: its row's deletion had committed.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(&partial);
                continue;
            }
            Err(e) => return Err(fail(e)),
        }
        std::fs::File::open(&partial)
            .and_then(|f| f.sync_all())
            .map_err(fail)?;
        std::fs::rename(&partial, to.join(text)).map_err(fail)?;
        copied += 1;
    }
    Ok(copied)
}
