//! The store's version-keyed caches (see docs/architecture.md, the cache
//! table).

use std::sync::Arc;

use crate::{StoreError, StoreResult};

/// Values loaded for a user, each valid while a version of the user's
/// (here `sources_version`) is the one it was loaded at: every write that
/// changes what the value is made of bumps it, in every process, so a
/// cached value is never older than the data. Shared by all users and
/// bounded in bytes (least recently used out first), so no number of
/// distinct windows or users can grow the process past it; values of
/// older versions are never asked for again and age out. Concurrent
/// misses of one value load it once: right after a write, every page and
/// the overview a client asks for at once need the same sources, and each
/// loading them alone multiplied the cost of the write by the number of
/// requests in flight.
pub(crate) struct VersionedCache<K, V> {
    entries: moka::future::Cache<(K, i64), Arc<V>>,
}

impl<K, V> VersionedCache<K, V>
where
    K: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    /// A cache of about `bytes`, each value weighed by `weigh`.
    pub(crate) fn new(bytes: u64, weigh: fn(&V) -> usize) -> Self {
        let entries = moka::future::Cache::builder()
            .max_capacity(bytes)
            .weigher(move |_: &(K, i64), value: &Arc<V>| {
                let size = std::mem::size_of::<(K, i64)>() + 64 + weigh(value);
                u32::try_from(size).unwrap_or(u32::MAX)
            })
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .build();
        Self { entries }
    }

    /// The value of `key` at `version`, loaded by the future `load` makes
    /// unless kept; a load already running for it is waited for instead.
    /// The load is made, and boxed, only when the value is not kept: a
    /// load's future (queries awaited) is kilobytes, and held inline it
    /// made every caller's future as large, copied whole on every call,
    /// served from memory or not.
    pub(crate) async fn get_or_load<F, Fut>(
        &self,
        key: K,
        version: i64,
        load: F,
    ) -> StoreResult<Arc<V>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = StoreResult<V>>,
    {
        let key = (key, version);
        if let Some(value) = self.entries.get(&key).await {
            return Ok(value);
        }
        self.entries
            .try_get_with(key, Box::pin(async { load().await.map(Arc::new) }))
            .await
            .map_err(shared_error)
    }

    /// The value of `key` at `version`, if kept.
    pub(crate) async fn get(&self, key: &K, version: i64) -> Option<Arc<V>> {
        self.entries.get(&(key.clone(), version)).await
    }

    /// Keeps `value` as `key`'s at `version`.
    pub(crate) async fn put(&self, key: K, version: i64, value: Arc<V>) {
        self.entries.insert((key, version), value).await;
    }

    #[cfg(test)]
    pub(crate) async fn weighted_size(&self) -> u64 {
        self.entries.run_pending_tasks().await;
        self.entries.weighted_size()
    }
}

/// A failed shared load's error, for each request that waited on it.
pub(crate) fn shared_error(err: Arc<StoreError>) -> StoreError {
    Arc::try_unwrap(err).unwrap_or_else(|err| match &*err {
        StoreError::NotFound => StoreError::NotFound,
        StoreError::Corrupt(text) => StoreError::Corrupt(text.clone()),
        StoreError::Conflict(text) => StoreError::Conflict(text.clone()),
        other => StoreError::Unavailable(other.to_string()),
    })
}
