//! Where receipt files live: one [`ReceiptStorage`] over `object_store`,
//! either a local directory (the default) or an S3-compatible bucket, so
//! every server of a fleet sees the same files. Both go through the same
//! code: multipart uploads that are completed or aborted, ranged and
//! conditional reads, deletes.

use axum::body::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ClientConfigKey, RetryConfig};
use object_store::{
    GetOptions, GetResult, ObjectMeta, ObjectStore, ObjectStoreExt, WriteMultipart,
};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cofre_domain::receipt;

/// A multipart upload or a staging file older than this is left over
/// from a crash.
const STALE_UPLOAD: Duration = Duration::from_secs(3600);

/// Parts of an upload in flight at once; with the 5 MiB parts of
/// [`WriteMultipart`] an upload holds at most about 15 MiB.
const PARTS_IN_FLIGHT: usize = 2;

/// An error of the storage, for logs and 500s (never shown to clients).
pub type StorageError = object_store::Error;

#[derive(Clone)]
enum Backend {
    /// The directory, for the local-only steps (sweeping staging files,
    /// backups, synchronous removal of an unused upload).
    Local(PathBuf),
    /// `s3://bucket/prefix`, for messages.
    S3(String),
    /// Process memory: the default of [`crate::ApiConfig`], so building a
    /// configuration touches no disk; a server always names its storage.
    Memory,
}

/// Receipt files by name, in a local directory or a bucket.
#[derive(Clone)]
pub struct ReceiptStorage {
    store: Arc<dyn ObjectStore>,
    /// Where names live inside the store (empty for the local directory,
    /// whose store is rooted there).
    prefix: ObjectPath,
    backend: Backend,
}

impl fmt::Debug for ReceiptStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl ReceiptStorage {
    /// The directory `dir`, created if missing. `LocalFileSystem` syncs
    /// each completed file and its directory entry (`with_fsync`), so a
    /// row never points at a file a power cut could lose.
    pub fn local(dir: impl Into<PathBuf>) -> Result<Self, String> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create receipts directory {}: {e}", dir.display()))?;
        let store = LocalFileSystem::new_with_prefix(&dir)
            .map_err(|e| format!("cannot use receipts directory {}: {e}", dir.display()))?
            .with_fsync(true);
        Ok(Self {
            store: Arc::new(store),
            prefix: ObjectPath::default(),
            backend: Backend::Local(dir),
        })
    }

    /// Files in process memory, gone when it ends.
    pub fn memory() -> Self {
        Self {
            store: Arc::new(object_store::memory::InMemory::new()),
            prefix: ObjectPath::default(),
            backend: Backend::Memory,
        }
    }

    /// The bucket (and optional prefix) of `url`, `s3://bucket/prefix`,
    /// reached with `builder` (credentials, endpoint, region).
    /// Path-style requests unless the builder was told otherwise: what
    /// self-hosted S3 servers answer.
    pub fn s3(url: &str, builder: AmazonS3Builder) -> Result<Self, String> {
        let (bucket, prefix) = parse_s3_url(url)?;
        // A bucket that does not answer is an error within seconds, well
        // inside the request deadline, not after object_store's default of
        // minutes of retries.
        let retry = RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(4),
            ..RetryConfig::default()
        };
        let store = builder
            .with_retry(retry)
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                "2s",
            )
            .with_bucket_name(bucket)
            .build()
            .map_err(|e| format!("cannot use receipts storage {url}: {e}"))?;
        Ok(Self {
            store: Arc::new(store),
            prefix: ObjectPath::parse(prefix)
                .map_err(|e| format!("receipts URL {url}: bad prefix: {e}"))?,
            backend: Backend::S3(url.to_owned()),
        })
    }

    /// The storage the settings name: the bucket of `url` when given
    /// (configured by the usual `AWS_*` variables), else the directory.
    pub fn from_settings(dir: &Path, url: Option<&str>) -> Result<Self, String> {
        match url.map(str::trim).filter(|u| !u.is_empty()) {
            Some(url) => {
                let mut builder = AmazonS3Builder::from_env();
                if std::env::var_os("AWS_VIRTUAL_HOSTED_STYLE_REQUEST").is_none() {
                    builder = builder.with_virtual_hosted_style_request(false);
                }
                Self::s3(url, builder)
            }
            None => Self::local(dir),
        }
    }

    /// The local directory, when files live in one.
    pub fn local_dir(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Local(dir) => Some(dir),
            Backend::S3(_) | Backend::Memory => None,
        }
    }

    /// Whether files live in process memory (nothing configured).
    pub fn is_memory(&self) -> bool {
        matches!(self.backend, Backend::Memory)
    }

    /// Where the files live, for messages.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Local(dir) => format!("directory {}", dir.display()),
            Backend::S3(url) => url.clone(),
            Backend::Memory => "memory".to_owned(),
        }
    }

    /// Checks at start-up that the storage answers (a bucket that is
    /// missing or refuses the credentials fails here, not at the first
    /// upload) and, locally, removes staging files a crash left behind;
    /// only those older than an hour, so uploads in flight in another
    /// process sharing the directory are spared.
    pub async fn prepare(&self) -> Result<(), String> {
        if let Backend::Local(dir) = &self.backend {
            sweep_stale_uploads(dir)
                .map_err(|e| format!("cannot sweep receipts directory {}: {e}", dir.display()))?;
        }
        // The first entry only: one request, however many files there are.
        match self.store.list(Some(&self.prefix)).next().await {
            None | Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(format!(
                "receipts storage {} does not answer: {e}",
                self.describe()
            )),
        }
    }

    /// The location of a stored name; `None` for anything else, so no
    /// other text ever becomes a path or a key.
    pub(crate) fn location(&self, name: &str) -> Option<ObjectPath> {
        receipt::parse_name(name)?;
        Some(self.prefix.clone().join(name))
    }

    /// The names of every stored receipt (for tests and checks; a bucket
    /// of many files is listed page by page).
    pub async fn list(&self) -> Result<Vec<String>, StorageError> {
        let metas: Vec<ObjectMeta> = self.store.list(Some(&self.prefix)).try_collect().await?;
        let mut names: Vec<String> = metas
            .into_iter()
            .filter_map(|meta| meta.location.filename().map(str::to_owned))
            .filter(|name| receipt::parse_name(name).is_some())
            .collect();
        names.sort();
        Ok(names)
    }

    /// Reads a stored file (conditions and range in `options`).
    pub(crate) async fn get(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> Result<GetResult, StorageError> {
        self.store.get_opts(location, options).await
    }

    pub(crate) async fn head(&self, location: &ObjectPath) -> Result<ObjectMeta, StorageError> {
        self.store.head(location).await
    }

    /// Removes receipt files by name, best effort: callers run it after
    /// the database write that dropped the names has committed, so a
    /// failure is logged and never fails the request. A name not of the
    /// stored form is never turned into a location.
    pub async fn remove(&self, names: &[String]) {
        for name in names {
            let Some(location) = self.location(name) else {
                tracing::warn!(receipt = %name, "not a receipt file name; nothing removed");
                continue;
            };
            match self.store.delete(&location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(err) => {
                    tracing::warn!(error = %err, receipt = %name, storage = %self.describe(),
                        "could not remove a receipt file");
                }
            }
        }
    }

    /// Starts the upload of `name`; nothing is visible under the name
    /// until [`PendingUpload::finish`].
    pub(crate) async fn begin(&self, name: String) -> Result<PendingUpload, StorageError> {
        let location = self.prefix.clone().join(name.as_str());
        let upload = self.store.put_multipart(&location).await?;
        Ok(PendingUpload {
            writer: Some(WriteMultipart::new(upload)),
            storage: self.clone(),
            name,
        })
    }
}

/// `s3://bucket/optional/prefix` split into bucket and prefix.
fn parse_s3_url(url: &str) -> Result<(&str, &str), String> {
    let rest = url
        .strip_prefix("s3://")
        .ok_or_else(|| format!("receipts URL {url:?} must start with s3://"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(format!("receipts URL {url:?} names no bucket"));
    }
    Ok((bucket, prefix.trim_matches('/')))
}

/// Removes staging files of interrupted uploads: `LocalFileSystem`
/// writes a multipart upload to `NAME#N` and renames it when complete
/// (earlier versions of cofre used `.upload-*.tmp`).
fn sweep_stale_uploads(dir: &Path) -> std::io::Result<()> {
    let cutoff = SystemTime::now() - STALE_UPLOAD;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let staging = name.starts_with(".upload-")
            || name
                .split_once('#')
                .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let stale = staging
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified < cutoff);
        if stale && let Err(err) = std::fs::remove_file(entry.path()) {
            tracing::warn!(error = %err, path = %entry.path().display(), "could not remove a stale upload");
        }
    }
    Ok(())
}

/// An upload in progress under its final name. Dropped before
/// [`PendingUpload::finish`] (a refused file, a failed write, a client
/// that went away) it is aborted, so nothing is left behind.
pub(crate) struct PendingUpload {
    writer: Option<WriteMultipart>,
    storage: ReceiptStorage,
    name: String,
}

impl PendingUpload {
    /// Adds bytes; waits while earlier parts are still being sent, so an
    /// upload never buffers more than a few parts.
    pub(crate) async fn write(&mut self, chunk: Bytes) -> Result<(), StorageError> {
        if let Some(writer) = self.writer.as_mut() {
            writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
            writer.put(chunk);
        }
        Ok(())
    }

    /// Completes the upload: the file is whole under its name.
    pub(crate) async fn finish(mut self) -> Result<Stored, StorageError> {
        if let Some(writer) = self.writer.take() {
            writer.finish().await?;
        }
        Ok(Stored {
            storage: Some(self.storage.clone()),
            name: std::mem::take(&mut self.name),
        })
    }

    /// Aborts now (rather than in the background on drop), so a refused
    /// upload has left nothing by the time the answer is sent.
    pub(crate) async fn abort(mut self) {
        if let Some(writer) = self.writer.take()
            && let Err(err) = writer.abort().await
        {
            tracing::warn!(error = %err, receipt = %self.name, "could not abort a receipt upload");
        }
    }
}

impl Drop for PendingUpload {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let name = std::mem::take(&mut self.name);
            runtime.spawn(async move {
                if let Err(err) = writer.abort().await {
                    tracing::warn!(error = %err, receipt = %name, "could not abort a receipt upload");
                }
            });
        }
    }
}

/// A complete file under its final name; removed again when dropped
/// before [`Stored::keep`], so a failed database write leaves no file.
pub struct Stored {
    storage: Option<ReceiptStorage>,
    name: String,
}

impl Stored {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, once the database holds it: the file stays.
    pub fn keep(mut self) -> String {
        self.storage = None;
        std::mem::take(&mut self.name)
    }

    /// Removes the file now (rather than in the background on drop), so a
    /// refused request has left nothing by the time the answer is sent.
    pub async fn discard(mut self) {
        if let Some(storage) = self.storage.take() {
            let name = std::mem::take(&mut self.name);
            storage.remove(&[name]).await;
        }
    }
}

impl Drop for Stored {
    fn drop(&mut self) {
        let Some(storage) = self.storage.take() else {
            return;
        };
        let name = std::mem::take(&mut self.name);
        // A local file goes at once (the answer is sent after it); a
        // bucket needs a request, made in the background.
        if let Some(dir) = storage.local_dir() {
            match std::fs::remove_file(dir.join(&name)) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    tracing::warn!(error = %err, receipt = %name, "could not remove an unused receipt file");
                }
            }
        } else if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { storage.remove(&[name]).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_urls_name_a_bucket_and_an_optional_prefix() {
        assert_eq!(parse_s3_url("s3://receipts"), Ok(("receipts", "")));
        assert_eq!(parse_s3_url("s3://receipts/"), Ok(("receipts", "")));
        assert_eq!(parse_s3_url("s3://b/cofre/prod/"), Ok(("b", "cofre/prod")));
        assert!(parse_s3_url("s3:///x").is_err());
        assert!(parse_s3_url("https://b/x").is_err());
    }

    #[tokio::test]
    async fn prepare_sweeps_only_stale_uploads() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        let storage = ReceiptStorage::local(&dir).unwrap();
        assert!(dir.is_dir());
        let fresh = dir.join("0123456789abcdef0123456789abcdef.png#1");
        let stale = dir.join("0123456789abcdef0123456789abcdef.pdf#2");
        let legacy = dir.join(".upload-stale.tmp");
        let kept = dir.join("0123456789abcdef0123456789abcdef.png");
        for path in [&fresh, &stale, &legacy, &kept] {
            std::fs::write(path, b"x").unwrap();
        }
        let old = SystemTime::now() - 2 * STALE_UPLOAD;
        for path in [&stale, &legacy, &kept] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        storage.prepare().await.unwrap();
        assert!(fresh.exists() && kept.exists());
        assert!(!stale.exists() && !legacy.exists());
        assert_eq!(
            storage.list().await.unwrap(),
            ["0123456789abcdef0123456789abcdef.png"]
        );
    }

    #[tokio::test]
    async fn remove_skips_what_is_not_a_receipt_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("receipts");
        let storage = ReceiptStorage::local(&dir).unwrap();
        let outside = root.path().join("secret.pdf");
        std::fs::write(&outside, b"x").unwrap();
        let name = "0123456789abcdef0123456789abcdef.pdf".to_owned();
        std::fs::write(dir.join(&name), b"x").unwrap();
        let missing = "ffffffffffffffffffffffffffffffff.png".to_owned();
        storage
            .remove(&["../secret.pdf".to_owned(), name.clone(), missing])
            .await;
        assert!(outside.exists());
        assert!(!dir.join(&name).exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_upload_dropped_before_it_finishes_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let storage = ReceiptStorage::local(root.path()).unwrap();
        let name = "0123456789abcdef0123456789abcdef.pdf".to_owned();
        let mut upload = storage.begin(name.clone()).await.unwrap();
        upload.write(Bytes::from_static(b"%PDF-1.4")).await.unwrap();
        upload.abort().await;
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);

        // A request dropped mid-upload (the client went away): the abort
        // runs in the background.
        let mut upload = storage.begin(name.clone()).await.unwrap();
        upload.write(Bytes::from_static(b"%PDF-1.4")).await.unwrap();
        drop(upload);
        for _ in 0..100 {
            if std::fs::read_dir(root.path()).unwrap().count() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);

        let mut upload = storage.begin(name.clone()).await.unwrap();
        upload.write(Bytes::from_static(b"%PDF-1.4")).await.unwrap();
        let stored = upload.finish().await.unwrap();
        assert_eq!(storage.list().await.unwrap(), std::slice::from_ref(&name));
        drop(stored);
        assert!(storage.list().await.unwrap().is_empty());
    }
}
