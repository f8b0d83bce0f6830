//! The store: one body of code for both databases, generic over the
//! [`Backend`] (what SQLite and PostgreSQL each bring). Every statement
//! here and in the modules below runs unchanged on both backends: `$n`
//! placeholders, TEXT ids and dates, BIGINT cents, BOOLEAN flags,
//! timestamps written from Rust; what the dialects spell differently is
//! [`crate::sql_conn::Dialect`]. Each module below holds one
//! responsibility's methods; the [`Store`] methods forward there.

pub(crate) mod accounts;
pub(crate) mod budgets;
pub(crate) mod cards;
pub(crate) mod categories;
pub(crate) mod import;
pub(crate) mod operations;
pub(crate) mod receipts;
pub(crate) mod series;
pub(crate) mod transactions;
pub(crate) mod users;

use operations::*;
use series::*;
use users::*;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

use cofre_domain::account::{self as account_rules, Account, AccountChanges, AccountType};
use cofre_domain::auth::{ApiKey, format_scopes};
use cofre_domain::bills::card_info;
use cofre_domain::category::{self as category_rules, Category, CategoryChanges};
use cofre_domain::overview::{MonthItem, projected_items};
use cofre_domain::profile::{self as profile_rules, Profile, ProfileChanges};
use cofre_domain::projection::Handle;
use cofre_domain::projection::{Frequency, InstallmentPlan, RecurrenceRule, Schedule, Template};
use cofre_domain::series::{Series, SeriesRef, SeriesState, SeriesWrite};
use cofre_domain::tag::{NewTag, Tag, TagChanges};
use cofre_domain::text::sort_by_title;
use cofre_domain::time::{format_date, format_timestamp};
use cofre_domain::transaction::{
    self as tx_rules, NewTransaction, Page, PageCut, PageRequest, SeriesLink, Source, TagRef,
    Transaction, TransactionChanges, TransactionFilter, TransactionState, TxStatus, TxType,
    last_day, search_text,
};
use cofre_domain::view::{
    AccountInfo, ProjectedTotal, ViewSources, card_charges, projected_totals,
};
use cofre_domain::{
    AccountId, ApiKeyId, CategoryId, DomainError, Money, PurchaseId, RuleId, TagId, TransactionId,
    UserId,
};

use crate::CardMoney;
use crate::ImportSummary;
use crate::backend::{Backend, ChangeWatch as _, ReadPath as _, WritePath as _, WriteTx as _};
use crate::sql_conn::{Col, Conn, Dialect, SqlRow, query_scalar};
use crate::sql_decode::*;
use crate::sql_steps::*;
use crate::sql_text::{Arg, Sql};
use crate::{
    AccountView, CategoryDeletion, Created, Deleted, FoundKey, ImportBatch, PageStamps, References,
    SeriesApplied, SeriesOp, Store, StoreError, StoreResult, UserSummary, WriteContext,
};
use crate::{BudgetOp, DayAmount, EntryTotal, PostedDay, TotalsBy};
use crate::{BulkOutcome, BulkRequest};
use cofre_domain::BudgetId;
use cofre_domain::bills::{DayTotal, NewBillPayment, Payment};
use cofre_domain::budget::{Budget, LimitChange, MAX_BUDGETS_PER_USER};
use cofre_domain::bulk::{self as bulk_rules, BulkAction, RowPlan};
use cofre_domain::card::{BillMonth, PaymentLeg};
use cofre_domain::overview::ItemKind;
use cofre_domain::statement::{self as statement_rules, Statement, StatementRow};
use cofre_domain::transfer::{self as transfer_rules, NewTransfer};
use cofre_domain::view::Hashing;

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
struct VersionedCache<K, V> {
    entries: moka::future::Cache<(K, i64), Arc<V>>,
}

impl<K, V> VersionedCache<K, V>
where
    K: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    /// A cache of about `bytes`, each value weighed by `weigh`.
    fn new(bytes: u64, weigh: fn(&V) -> usize) -> Self {
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
    async fn get_or_load<F, Fut>(&self, key: K, version: i64, load: F) -> StoreResult<Arc<V>>
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
    async fn get(&self, key: &K, version: i64) -> Option<Arc<V>> {
        self.entries.get(&(key.clone(), version)).await
    }

    /// Keeps `value` as `key`'s at `version`.
    async fn put(&self, key: K, version: i64, value: Arc<V>) {
        self.entries.insert((key, version), value).await;
    }

    #[cfg(test)]
    async fn weighted_size(&self) -> u64 {
        self.entries.run_pending_tasks().await;
        self.entries.weighted_size()
    }
}

/// A failed shared load's error, for each request that waited on it.
fn shared_error(err: Arc<StoreError>) -> StoreError {
    Arc::try_unwrap(err).unwrap_or_else(|err| match &*err {
        StoreError::NotFound => StoreError::NotFound,
        StoreError::Corrupt(text) => StoreError::Corrupt(text.clone()),
        StoreError::Conflict(text) => StoreError::Conflict(text.clone()),
        other => StoreError::Unavailable(other.to_string()),
    })
}

/// The first column of the one row `sql` answers, read on a pooled
/// connection.
pub(crate) async fn pool_one<B: Backend, T>(
    pool: &sqlx::Pool<B>,
    sql: Sql,
) -> StoreResult<Option<T>>
where
    T: Col,
{
    let mut conn = pool.acquire().await?;
    sql.scalar_optional(&mut *conn).await
}

/// A version counter of a user's (a column of `users`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum UserVersion {
    /// Bumped by every write of the user's data.
    View,
    /// Bumped by writes that change what projections are made from.
    Sources,
    /// Bumped by writes that change the categories the user sees.
    Categories,
}

/// A user's days `[from, to]`, as projection caches key them.
type Window = (UserId, Date, Date);

/// A window, and for whole books the day they are of, as the cards'
/// projected entries are kept.
type ChargesKey = (UserId, Date, Date, Option<Date>);

pub struct SqlStore<B: Backend> {
    pool: sqlx::Pool<B>,
    /// Projection sources per (user, window).
    sources: Arc<VersionedCache<Window, ViewSources>>,
    /// The projected entries of a whole window summed, per (user,
    /// window), at the same version as the sources they come from.
    projected: Arc<VersionedCache<Window, Option<Vec<ProjectedTotal>>>>,
    /// A month of a user's category sums over all their accounts (without
    /// the cards' when the flag says so), at the month's stamp.
    months: Arc<VersionedCache<(UserId, BillMonth, bool), Vec<EntryTotal>>>,
    /// The projected entries of a user's calendar month as the overview
    /// sums them, at the sources version they come from.
    month_projections: Arc<VersionedCache<(UserId, BillMonth), Vec<MonthItem>>>,
    /// The projected entries on each card of a user's window (and, for
    /// whole books, day), at the sources version they come from.
    charges: Arc<VersionedCache<ChargesKey, crate::CardCharges>>,
    /// Each user's accounts (without balances), at their sources version.
    accounts: Arc<VersionedCache<UserId, Vec<Account>>>,
    /// The categories each user sees, at their categories version.
    categories: Arc<VersionedCache<UserId, Vec<Category>>>,
    /// Each card's money, at the card's money version it was read at.
    cards: moka::future::Cache<AccountId, Arc<CardMoney>>,
    /// How write transactions start (group commit on SQLite).
    writes: B::Writes,
    /// Whether the database changed since a moment (SQLite only).
    changes: B::Changes,
    /// How short reads outside a write run (on SQLite, on the calling
    /// thread).
    reads: B::Reads,
    /// Keys as authentication found them, each with the change stamp read
    /// before its query: served again only while the stamp is unchanged,
    /// so a key rotated, revoked or deleted, or a write to its owner's
    /// data, from any process, is seen by the very next request.
    keys: moka::future::Cache<ApiKeyId, (crate::change_stamp::Stamp, FoundKey)>,
    /// Users' version counters as last read, each with the change stamp
    /// read before its query, kept as the keys are: a read that finds the
    /// stamp unchanged (nothing committed since, from any process) needs no
    /// query. Every page of a list checks its user's sources version.
    versions: moka::future::Cache<(UserId, UserVersion), (crate::change_stamp::Stamp, i64)>,
}

/// The most bytes of keys kept for authentication (about 20,000 keys).
pub(crate) const KEY_CACHE_BYTES: u64 = 8 << 20;

/// What one kept key takes, with the cache's own share.
pub(crate) fn key_bytes(key: &ApiKey) -> u32 {
    let bytes = 400 + key.secret_hash.len() + key.label.as_ref().map_or(0, String::len);
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The most bytes of version counters kept (about 25,000 counters).
const VERSION_CACHE_BYTES: u64 = 4 << 20;

/// What one kept version counter takes, with the cache's own share.
const VERSION_ENTRY_BYTES: u32 = 160;

impl<B: Backend> SqlStore<B> {
    /// A store over `pool` whose caches keep about `cache_bytes`: three
    /// eighths for projection sources, an eighth each for their summed
    /// entries and for months of category sums, a sixteenth for the cards'
    /// projected entries, a thirty-second each for the accounts, the
    /// categories users see and the overview's projected months, the rest
    /// (seven thirty-seconds) for card money.
    pub(crate) fn from_pool(
        pool: sqlx::Pool<B>,
        cache_bytes: u64,
        writes: B::Writes,
        changes: B::Changes,
        reads: B::Reads,
    ) -> Self {
        Self {
            writes,
            changes,
            reads,
            keys: moka::future::Cache::builder()
                .max_capacity(KEY_CACHE_BYTES)
                .weigher(|_, (_, found): &(_, FoundKey)| key_bytes(&found.key))
                .build(),
            versions: moka::future::Cache::builder()
                .max_capacity(VERSION_CACHE_BYTES)
                .weigher(|_, _| VERSION_ENTRY_BYTES)
                .build(),
            pool,
            sources: Arc::new(VersionedCache::new(
                cache_bytes / 8 * 3,
                ViewSources::approx_bytes,
            )),
            months: Arc::new(VersionedCache::new(cache_bytes / 8, |month| {
                month.capacity() * std::mem::size_of::<EntryTotal>()
            })),
            charges: Arc::new(VersionedCache::new(cache_bytes / 16, |cards| {
                cards
                    .iter()
                    .map(|(_, sums)| {
                        std::mem::size_of::<(AccountId, Arc<cofre_domain::bills::BillSums>)>()
                            + sums.approx_bytes()
                    })
                    .sum()
            })),
            month_projections: Arc::new(VersionedCache::new(cache_bytes / 32, |items| {
                items.capacity() * std::mem::size_of::<MonthItem>()
            })),
            accounts: Arc::new(VersionedCache::new(cache_bytes / 32, |list| {
                list.iter().map(Account::approx_bytes).sum()
            })),
            categories: Arc::new(VersionedCache::new(cache_bytes / 32, |list| {
                list.iter()
                    .map(|c| {
                        std::mem::size_of::<Category>()
                            + c.title.capacity()
                            + c.icon_id.as_ref().map_or(0, String::capacity)
                            + c.color_hex.as_ref().map_or(0, String::capacity)
                    })
                    .sum()
            })),
            projected: Arc::new(VersionedCache::new(cache_bytes / 8, |totals| {
                totals
                    .as_ref()
                    .map_or(0, |t| t.capacity() * std::mem::size_of::<ProjectedTotal>())
            })),
            cards: moka::future::Cache::builder()
                .max_capacity(cache_bytes / 32 * 7)
                .weigher(|_, card: &Arc<CardMoney>| {
                    u32::try_from(card.approx_bytes() + 64).unwrap_or(u32::MAX)
                })
                .build(),
        }
    }

    /// The user's accounts with their balances, oldest first, as the
    /// database has them.
    async fn account_views(&self, user: UserId) -> StoreResult<Vec<AccountView>> {
        let sql = format!(
            "SELECT {ACCOUNT_COLUMNS}, {BALANCE_COLUMN} FROM accounts a WHERE a.user_id = $1 \
             ORDER BY a.created_at, a.id"
        );
        let rows = Sql::new(sql)
            .bind(user.to_string())
            .fetch_all(&mut *self.pool.acquire().await?)
            .await?;
        rows.iter().map(account_view_from_row).collect()
    }

    /// The projection sources of `[from, to]` at the sources `version`
    /// read before.
    async fn sources_at(
        &self,
        user: UserId,
        from: Date,
        to: Date,
        version: i64,
    ) -> StoreResult<Arc<ViewSources>> {
        self.sources
            .get_or_load((user, from, to), version, || async {
                let mut conn = self.pool.acquire().await?;
                load_view_sources(&mut *conn, user, from, to).await
            })
            .await
    }

    /// A value computed from the projection sources of `window`, kept in
    /// `cache` as `key`'s under the same sources version as the sources.
    async fn derived_from_sources<K, V>(
        &self,
        cache: &VersionedCache<K, V>,
        key: K,
        (user, from, to): Window,
        derive: impl FnOnce(&ViewSources) -> V,
    ) -> StoreResult<Arc<V>>
    where
        K: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        let version = self.user_version(user, UserVersion::Sources).await?;
        cache
            .get_or_load(key, version, || async {
                let sources = self.sources_at(user, from, to, version).await?;
                Ok(derive(&sources))
            })
            .await
    }

    /// The JSON array an aggregate query answers, as a short read (its one
    /// row always comes; `[]` stands in should none).
    async fn read_array(&self, sql: Sql) -> StoreResult<String> {
        Ok(self
            .reads
            .text(sql)
            .await?
            .unwrap_or_else(|| "[]".to_owned()))
    }

    /// A value kept in `cache` under the change stamp: served from memory
    /// while the stamp read before its query is unchanged (nothing
    /// committed since, from any process), else `read` again. Only values
    /// found are kept, so made-up ids cannot fill the cache; without a
    /// stamp (PostgreSQL) every call reads.
    async fn stamped<K, V>(
        &self,
        cache: &moka::future::Cache<K, (crate::change_stamp::Stamp, V)>,
        key: K,
        read: impl Future<Output = StoreResult<Option<V>>>,
    ) -> StoreResult<Option<V>>
    where
        K: std::hash::Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        let stamp = self.changes.stamp();
        if let Some(stamp) = stamp
            && let Some((seen, value)) = cache.get(&key).await
            && seen == stamp
        {
            return Ok(Some(value));
        }
        let value = read.await?;
        if let (Some(stamp), Some(value)) = (stamp, &value) {
            cache.insert(key, (stamp, value.clone())).await;
        }
        Ok(value)
    }

    /// The user's `counter` now (-1 for no such user), [`Self::stamped`].
    async fn user_version(&self, user: UserId, counter: UserVersion) -> StoreResult<i64> {
        let sql = match counter {
            UserVersion::View => "SELECT view_version FROM users WHERE id = $1",
            UserVersion::Sources => "SELECT sources_version FROM users WHERE id = $1",
            UserVersion::Categories => "SELECT categories_version FROM users WHERE id = $1",
        };
        let sql = Sql::with(sql, [Arg::Text(user.to_string())]);
        let version = self
            .stamped(&self.versions, (user, counter), self.reads.int(sql))
            .await?;
        Ok(version.unwrap_or(-1))
    }

    /// Starts a write of `user`'s data. Its first statement bumps the
    /// user's `view_version`, so every write invalidates the responses
    /// cached for the user, in every process, when it commits. (Triggers
    /// bump the finer versions the store's own caches are kept under:
    /// migration 0009; and stamp the days of the rows a write changes with
    /// the write's own view version, migration 0014, which is why the bump
    /// comes first.)
    async fn begin_write(&self, user: UserId) -> StoreResult<B::Tx> {
        Ok(self.begin_write_versioned(user).await?.0)
    }

    /// [`Self::begin_write`], also giving the version the user's data had
    /// just before this write: read under the write lock (SQLite's, or the
    /// user's row on PostgreSQL), so no other write can come in between.
    async fn begin_write_versioned(&self, user: UserId) -> StoreResult<(B::Tx, i64)> {
        let mut tx = self.writes.begin().await?;
        let bumped: Option<i64> = bump_version_query(user).scalar_optional(&mut *tx).await?;
        Ok((tx, bumped.map_or(-1, |v| v - 1)))
    }

    /// How this store's writes start (the backend's own).
    pub(crate) fn writes(&self) -> &B::Writes {
        &self.writes
    }

    /// The underlying pool, for tests and tools that need raw access.
    pub fn pool(&self) -> &sqlx::Pool<B> {
        &self.pool
    }
}

/// A new version of the user's data, first thing in every write (see
/// [`SqlStore::begin_write_versioned`]), giving it.
fn bump_version_query(user: UserId) -> Sql {
    Sql::with(
        "UPDATE users SET view_version = view_version + 1 WHERE id = $1 RETURNING view_version",
        [user.to_string().into()],
    )
}

// ------------------------------------------------------------------ store

#[async_trait]
impl<B: Backend> Store for SqlStore<B> {
    async fn ping(&self) -> StoreResult<()> {
        Sql::new("SELECT 1")
            .execute(&mut *self.pool.acquire().await?)
            .await?;
        Ok(())
    }

    async fn write_stall(&self) -> StoreResult<Option<std::time::Duration>> {
        self.writes.stall().await
    }

    async fn backup(&self, to: &std::path::Path) -> StoreResult<()> {
        B::backup_into(self, to).await
    }

    async fn count_users(&self) -> StoreResult<i64> {
        let row = Sql::new("SELECT COUNT(*) AS n FROM users")
            .fetch_one(&mut *self.pool.acquire().await?)
            .await?;
        Ok(row.col("n")?)
    }

    async fn create_first_user(
        &self,
        key: &ApiKey,
        now: Timestamp,
    ) -> StoreResult<Option<Profile>> {
        self.create_first_user_in_tx(key, now).await
    }

    async fn create_user(&self, name: Option<&str>, now: Timestamp) -> StoreResult<Profile> {
        let id = UserId::new();
        // Every write goes through the one write path (on SQLite, the
        // group commit's turn), never on a pool connection of its own.
        let mut tx = self.writes.begin().await?;
        Sql::new("INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(id.to_string())
            .bind(name.map(str::to_owned))
            .bind(format_timestamp(now))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.get_profile(id).await
    }

    async fn get_profile(&self, user: UserId) -> StoreResult<Profile> {
        let row = Sql::new(
            "SELECT id, name, wage_cents, monthly_living_cost_cents, has_spouse, has_children, \
             is_entrepreneur FROM users WHERE id = $1",
        )
        .bind(user.to_string())
        .fetch_optional(&mut *self.pool.acquire().await?)
        .await?
        .ok_or(StoreError::NotFound)?;
        profile_from_row(&row)
    }

    async fn update_profile(&self, user: UserId, changes: &ProfileChanges) -> StoreResult<Profile> {
        self.update_profile_in_tx(user, changes).await
    }

    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        let mut tx = self.writes.begin().await?;
        insert_api_key(&mut *tx, key).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn find_api_key(&self, id: ApiKeyId) -> StoreResult<Option<FoundKey>> {
        // Under writes every commit moves the stamp, so each request after
        // one reads the key again.
        let sql = Sql::with(
            format!(
                "SELECT CAST({JSON_ARRAY}({JSON_ARRAY}({API_KEY_COLUMNS}), u.view_version) AS TEXT) \
                 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = $1",
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [Arg::Text(id.to_string())],
        );
        let read = async {
            self.reads
                .text(sql)
                .await?
                .map(|text| decode_found_key(&text))
                .transpose()
        };
        let found = self.stamped(&self.keys, id, read).await?;
        self.writes.recall(id, found.as_ref()).await;
        Ok(found)
    }

    async fn recalled_api_key(&self, id: ApiKeyId) -> Option<ApiKey> {
        self.writes.recalled(id).await
    }

    async fn view_version(&self, user: UserId) -> StoreResult<i64> {
        self.user_version(user, UserVersion::View).await
    }

    async fn page_stamps(&self, user: UserId, from: Date, to: Date) -> StoreResult<PageStamps> {
        let sql = Sql::with(
            format!(
                "SELECT CAST({JSON_ARRAY}(u.sources_version, u.categories_version, \
                 (SELECT COALESCE(SUM(b.money_version), 0) FROM accounts a \
                  JOIN account_balances b ON b.account_id = a.id \
                  WHERE a.user_id = u.id AND a.type = 'CREDIT'), \
                 (SELECT COALESCE(MAX(s.stamp), 0) FROM user_day_stamps s \
                  WHERE s.user_id = u.id AND s.day >= $2 AND s.day <= $3), \
                 u.view_version) AS TEXT) \
                 FROM users u WHERE u.id = $1",
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [
                Arg::Text(user.to_string()),
                Arg::Text(format_date(from)),
                Arg::Text(format_date(to)),
            ],
        );
        let text = self.reads.text(sql).await?.ok_or(StoreError::NotFound)?;
        let [sources, categories, cards, days, view]: [i64; 5] = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("page stamps: {e}")))?;
        Ok(PageStamps {
            sources,
            categories,
            cards,
            days,
            view,
        })
    }

    async fn list_api_keys(&self, user: UserId) -> StoreResult<Vec<ApiKey>> {
        let rows = Sql::new(format!(
            "SELECT {API_KEY_COLUMNS} FROM api_keys k WHERE k.user_id = $1 \
             ORDER BY k.created_at, k.id"
        ))
        .bind(user.to_string())
        .fetch_all(&mut *self.pool.acquire().await?)
        .await?;
        rows.iter().map(api_key_from_row).collect()
    }

    async fn list_users(&self) -> StoreResult<Vec<UserSummary>> {
        self.list_users_with_keys().await
    }

    async fn delete_user(&self, user: UserId) -> StoreResult<Vec<String>> {
        self.delete_user_in_tx(user).await
    }

    async fn rotate_api_key(&self, old: ApiKeyId, new: &ApiKey, now: Timestamp) -> StoreResult<()> {
        self.rotate_key_in_tx(old, new, now).await
    }

    async fn revoke_api_key(&self, id: ApiKeyId, now: Timestamp) -> StoreResult<bool> {
        let mut tx = self.writes.begin().await?;
        let done =
            Sql::new("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1")
                .bind(id.to_string())
                .bind(format_timestamp(now))
                .execute(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(done > 0)
    }

    async fn list_accounts(&self, user: UserId) -> StoreResult<Vec<AccountView>> {
        // The accounts themselves change only with the sources version
        // (every insert, update and delete of one bumps it): kept under it.
        // Their balances, which writes move, come in one short read.
        let version = self.user_version(user, UserVersion::Sources).await?;
        let accounts = self
            .accounts
            .get_or_load(user, version, || async {
                let views = self.account_views(user).await?;
                Ok(views.into_iter().map(|view| view.account).collect())
            })
            .await?;
        let balances = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(a.id, b.posted_cents)), '[]') AS TEXT) \
                 FROM accounts a JOIN account_balances b ON b.account_id = a.id \
                 WHERE a.user_id = $1",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [Arg::Text(user.to_string())],
        );
        let text = self.read_array(balances).await?;
        let balances: Vec<(&str, i64)> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("account balances: {e}")))?;
        let balances: HashMap<AccountId, i64> = balances
            .into_iter()
            .map(|(id, cents)| Ok((AccountId(parse_uuid("id", id)?), cents)))
            .collect::<StoreResult<_>>()?;
        let views: Option<Vec<AccountView>> = accounts
            .iter()
            .map(|account| {
                balances.get(&account.id).map(|cents| AccountView {
                    account: account.clone(),
                    balance: Money::from_cents(*cents),
                })
            })
            .collect();
        match views {
            Some(views) if views.len() == balances.len() => Ok(views),
            // An account made or deleted since the version was read: the
            // list as the database has it now.
            _ => self.account_views(user).await,
        }
    }

    async fn get_account(&self, user: UserId, id: AccountId) -> StoreResult<AccountView> {
        let mut conn = self.pool.acquire().await?;
        fetch_account(&mut *conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn create_account(
        &self,
        user: UserId,
        changes: &AccountChanges,
        initial_balance: Option<Money>,
        default_currency: &str,
        ctx: WriteContext,
    ) -> StoreResult<(AccountView, Option<TransactionId>)> {
        self.create_account_in_tx(user, changes, initial_balance, default_currency, ctx)
            .await
    }

    async fn update_account(
        &self,
        user: UserId,
        id: AccountId,
        changes: &AccountChanges,
    ) -> StoreResult<AccountView> {
        self.update_account_in_tx(user, id, changes).await
    }

    async fn delete_account(&self, user: UserId, id: AccountId) -> StoreResult<Vec<String>> {
        self.delete_account_in_tx(user, id).await
    }

    async fn list_categories(&self, user: UserId) -> StoreResult<Arc<Vec<Category>>> {
        let version = self.user_version(user, UserVersion::Categories).await?;
        self.categories
            .get_or_load(user, version, || async {
                let mut conn = self.pool.acquire().await?;
                fetch_categories(&mut *conn, user).await
            })
            .await
    }

    async fn create_category(
        &self,
        user: UserId,
        changes: &CategoryChanges,
        now: Timestamp,
    ) -> StoreResult<Category> {
        self.create_category_in_tx(user, changes, now).await
    }

    async fn update_category(
        &self,
        user: UserId,
        id: CategoryId,
        changes: &CategoryChanges,
    ) -> StoreResult<Category> {
        self.update_category_in_tx(user, id, changes).await
    }

    async fn list_tags(&self, user: UserId) -> StoreResult<Vec<Tag>> {
        let rows = Sql::new(
            "SELECT id, user_id, title, color_hex, created_at FROM tags WHERE user_id = $1",
        )
        .bind(user.to_string())
        .fetch_all(&mut *self.pool.acquire().await?)
        .await?;
        let mut tags = rows
            .iter()
            .map(tag_from_row)
            .collect::<StoreResult<Vec<_>>>()?;
        sort_by_title(&mut tags, |t| (&t.title, t.id));
        Ok(tags)
    }

    async fn create_tag(&self, user: UserId, tag: &NewTag, now: Timestamp) -> StoreResult<Tag> {
        self.create_tag_in_tx(user, tag, now).await
    }

    async fn update_tag(&self, user: UserId, id: TagId, changes: &TagChanges) -> StoreResult<Tag> {
        self.update_tag_in_tx(user, id, changes).await
    }

    async fn delete_category(
        &self,
        user: UserId,
        id: CategoryId,
        replacement: Option<CategoryId>,
    ) -> StoreResult<CategoryDeletion> {
        self.delete_category_in_tx(user, id, replacement).await
    }

    async fn delete_tag(&self, user: UserId, id: TagId) -> StoreResult<()> {
        self.delete_tag_in_tx(user, id).await
    }

    async fn create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        plan: Option<&InstallmentPlan>,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> StoreResult<Created<Transaction>> {
        let created = match self.try_create_transaction(user, new, plan, now, key).await {
            // Two identical requests raced: the loser sees the winner's row.
            Err(err) if new.client_chosen_id && is_unique_violation(&err) => {
                self.try_create_transaction(user, new, plan, now, key).await
            }
            other => other,
        };
        if let (Err(StoreError::KeyRevoked), Some(key)) = (&created, key) {
            // Its next request reads it, and is refused there.
            self.writes.recall(key, None).await;
        }
        created
    }

    async fn create_rule(
        &self,
        user: UserId,
        rule: &RecurrenceRule,
    ) -> StoreResult<Created<RecurrenceRule>> {
        self.create_rule_in_tx(user, rule).await
    }

    async fn get_plan(&self, user: UserId, id: PurchaseId) -> StoreResult<InstallmentPlan> {
        let mut conn = self.pool.acquire().await?;
        fetch_plan(&mut *conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn get_rule(&self, user: UserId, id: RuleId) -> StoreResult<RecurrenceRule> {
        let mut conn = self.pool.acquire().await?;
        fetch_rule(&mut *conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn view_sources(
        &self,
        user: UserId,
        from: Date,
        to: Date,
    ) -> StoreResult<Arc<ViewSources>> {
        let version = self.user_version(user, UserVersion::Sources).await?;
        self.sources_at(user, from, to, version).await
    }

    async fn projected_totals(
        &self,
        user: UserId,
        from: Date,
        to: Date,
    ) -> StoreResult<Arc<Option<Vec<ProjectedTotal>>>> {
        self.derived_from_sources(
            &self.projected,
            (user, from, to),
            (user, from, to),
            |sources| projected_totals(sources, from, to),
        )
        .await
    }

    async fn projected_month_items(
        &self,
        user: UserId,
        month: BillMonth,
    ) -> StoreResult<Arc<Vec<MonthItem>>> {
        let (from, to) = (month.day(1), month.day(1).last_of_month());
        self.derived_from_sources(
            &self.month_projections,
            (user, month),
            (user, from, to),
            |sources| projected_items(sources, from, to),
        )
        .await
    }

    async fn card_charges(
        &self,
        user: UserId,
        from: Date,
        to: Date,
        whole: Option<Date>,
    ) -> StoreResult<Arc<crate::CardCharges>> {
        let key = (user, from, to, whole);
        self.derived_from_sources(&self.charges, key, (user, from, to), |sources| {
            card_charges(sources, from, to, whole)
        })
        .await
    }

    async fn import(&self, user: UserId, batch: &ImportBatch, now: Timestamp) -> StoreResult<()> {
        self.import_in_tx(user, batch, now).await
    }

    async fn account_owner(&self, account: AccountId) -> StoreResult<UserId> {
        self.owner_of_account(account).await
    }

    async fn import_statement(
        &self,
        user: UserId,
        account: AccountId,
        statement: &cofre_domain::statement::Statement,
        ctx: WriteContext,
    ) -> StoreResult<crate::ImportSummary> {
        self.import_statement_rows(user, account, statement, ctx)
            .await
    }

    async fn apply_series(
        &self,
        user: UserId,
        series: SeriesRef,
        references: &References,
        op: SeriesOp,
        now: Timestamp,
    ) -> StoreResult<SeriesApplied> {
        self.apply_series_in_tx(user, series, references, op, now)
            .await
    }

    async fn get_transaction(&self, user: UserId, id: TransactionId) -> StoreResult<Transaction> {
        self.read_entries(transaction_query::<B>(user, id), 1)
            .await?
            .pop()
            .ok_or(StoreError::NotFound)
    }

    async fn update_transaction(
        &self,
        user: UserId,
        id: TransactionId,
        changes: &TransactionChanges,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        self.update_transaction_in_tx(user, id, changes, now).await
    }

    async fn delete_transaction(&self, user: UserId, id: TransactionId) -> StoreResult<Deleted> {
        self.delete_transaction_in_tx(user, id).await
    }

    async fn list_transactions_beside(
        &self,
        user: UserId,
        filter: &TransactionFilter,
        page: &PageRequest,
        others: &mut (dyn Iterator<Item = Date> + Send),
    ) -> StoreResult<Page<Transaction>> {
        self.list_transactions_of(user, filter, page, others).await
    }

    async fn create_transfer(
        &self,
        user: UserId,
        transfer: &NewTransfer,
        now: Timestamp,
    ) -> StoreResult<()> {
        self.create_transfer_in_tx(user, transfer, now).await
    }

    async fn mark_transfer(
        &self,
        user: UserId,
        id: TransactionId,
        counterpart: Option<TransactionId>,
        group: Uuid,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        self.mark_transfer_in_tx(user, id, counterpart, group, now)
            .await
    }

    async fn unmark_transfer(
        &self,
        user: UserId,
        id: TransactionId,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        self.unmark_transfer_in_tx(user, id, now).await
    }

    async fn card_money(&self, user: UserId) -> StoreResult<HashMap<AccountId, Arc<CardMoney>>> {
        self.card_money_of(user).await
    }

    async fn pay_bill(
        &self,
        user: UserId,
        payment: &cofre_domain::bills::NewBillPayment,
        decided_at: i64,
        now: Timestamp,
    ) -> StoreResult<()> {
        self.pay_bill_in_tx(user, payment, decided_at, now).await
    }

    async fn hide_bill(
        &self,
        user: UserId,
        handle: &Handle,
        date: Date,
        now: Timestamp,
    ) -> StoreResult<()> {
        self.hide_bill_in_tx(user, handle, date, now).await
    }

    async fn month_items(
        &self,
        user: UserId,
        month: cofre_domain::card::BillMonth,
    ) -> StoreResult<Vec<cofre_domain::overview::MonthItem>> {
        self.month_items_of(user, month).await
    }

    async fn list_budgets(&self, user: UserId) -> StoreResult<Vec<cofre_domain::budget::Budget>> {
        self.list_budgets_of(user).await
    }

    async fn get_budget(
        &self,
        user: UserId,
        id: cofre_domain::BudgetId,
    ) -> StoreResult<cofre_domain::budget::Budget> {
        self.get_budget_of(user, id).await
    }

    async fn create_budget(
        &self,
        user: UserId,
        budget: &cofre_domain::budget::Budget,
    ) -> StoreResult<cofre_domain::budget::Budget> {
        self.create_budget_in_tx(user, budget).await
    }

    async fn update_budget(
        &self,
        user: UserId,
        id: cofre_domain::BudgetId,
        op: crate::BudgetOp,
    ) -> StoreResult<cofre_domain::budget::Budget> {
        self.update_budget_in_tx(user, id, op).await
    }

    async fn delete_budget(&self, user: UserId, id: cofre_domain::BudgetId) -> StoreResult<()> {
        self.delete_budget_in_tx(user, id).await
    }

    async fn entry_totals(
        &self,
        user: UserId,
        from: cofre_domain::card::BillMonth,
        to: cofre_domain::card::BillMonth,
        by: &crate::TotalsBy,
    ) -> StoreResult<Vec<crate::EntryTotal>> {
        self.entry_totals_of(user, from, to, by).await
    }

    async fn posted_days(
        &self,
        user: UserId,
        after: Date,
        currency: &str,
    ) -> StoreResult<Vec<crate::PostedDay>> {
        self.posted_days_of(user, after, currency).await
    }

    async fn pending_days(
        &self,
        user: UserId,
        after: Date,
        to: Date,
    ) -> StoreResult<Vec<crate::DayAmount>> {
        self.pending_days_of(user, after, to).await
    }

    async fn bulk(
        &self,
        user: UserId,
        request: &BulkRequest,
        now: Timestamp,
    ) -> StoreResult<BulkOutcome> {
        self.bulk_in_tx(user, request, now).await
    }

    async fn set_receipt(
        &self,
        user: UserId,
        id: TransactionId,
        name: Option<&str>,
        now: Timestamp,
    ) -> StoreResult<Option<String>> {
        self.write_receipt(user, id, name, now).await
    }
}

impl<B: Backend> SqlStore<B> {
    /// [`fetch_entries`] outside a write, as short reads run, for a query
    /// of at most `expected` rows: [`Self::read_entries_while`] keeping
    /// every row.
    async fn read_entries(&self, query: Sql, expected: usize) -> StoreResult<Vec<Transaction>> {
        let (rows, _) = self.read_entries_while(query, expected, |_| true).await?;
        Ok(rows)
    }

    /// The rows of a list query (ordered as [`list_order`] orders them) in
    /// that order, up to the first one `keep` refuses: that row and the
    /// rest are left out, and the second value says one was. Rows read
    /// one by one stop there; a JSON page is read whole and cut after.
    async fn read_entries_while(
        &self,
        query: Sql,
        expected: usize,
        mut keep: impl FnMut(&Transaction) -> bool + Send,
    ) -> StoreResult<(Vec<Transaction>, bool)> {
        if let Some(rows) = self.reads.entries(&query, expected, &mut keep).await {
            return rows;
        }
        let mut rows = decode_entries(&self.read_array(entries_page::<B>(&query)).await?)?;
        // The JSON page need not keep the query's order: restore it.
        newest_first(&mut rows);
        let kept = rows.iter().take_while(|row| keep(row)).count();
        let refused = kept < rows.len();
        rows.truncate(kept);
        Ok((rows, refused))
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use cofre_domain::transaction::TagRef;

    /// Sources of about 60 KB: 400 tags with long titles.
    fn heavy_sources() -> Arc<ViewSources> {
        let mut sources = ViewSources::default();
        for i in 0..400 {
            let id = TagId(Uuid::new_v4());
            let title = format!("{i:04}{}", "x".repeat(120));
            let tag = TagRef {
                id,
                title,
                color_hex: "#112233".into(),
            };
            sources.tags.insert(id, tag);
        }
        Arc::new(sources)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_misses_load_once_and_failures_are_not_kept() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cache: Arc<VersionedCache<UserId, ViewSources>> =
            Arc::new(VersionedCache::new(1 << 20, ViewSources::approx_bytes));
        let loads = Arc::new(AtomicUsize::new(0));
        let user = UserId::new();
        let load = |loads: Arc<AtomicUsize>| async move {
            loads.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            Ok(ViewSources::default())
        };
        let waiting: Vec<_> = (0..16)
            .map(|_| {
                let (cache, loads) = (cache.clone(), loads.clone());
                tokio::spawn(async move { cache.get_or_load(user, 7, || load(loads)).await })
            })
            .collect();
        for request in waiting {
            request.await.unwrap().unwrap();
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1, "16 concurrent misses");
        // A new version loads again; a failed load is not kept.
        let failed = cache
            .get_or_load(user, 8, || async {
                Err(StoreError::Unavailable("gone".into()))
            })
            .await;
        assert!(matches!(failed, Err(StoreError::Unavailable(_))));
        cache
            .get_or_load(user, 8, || load(loads.clone()))
            .await
            .unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn many_windows_of_many_users_stay_within_the_byte_bound() {
        let bound: u64 = 2 << 20;
        let cache: VersionedCache<(UserId, Date, Date), ViewSources> =
            VersionedCache::new(bound, ViewSources::approx_bytes);
        let sources = heavy_sources();
        assert!(
            sources.approx_bytes() > 60_000,
            "{}",
            sources.approx_bytes()
        );
        let users: Vec<UserId> = (0..4).map(|_| UserId::new()).collect();
        let start = jiff::civil::date(2026, 1, 1);
        let mut last = None;
        for day in 0..300 {
            let from = start.checked_add(jiff::Span::new().days(day)).unwrap();
            for user in &users {
                cache.put((*user, from, from), 1, sources.clone()).await;
                last = Some((*user, from, from));
            }
            assert!(cache.weighted_size().await <= bound);
        }
        // 1,200 entries of ~60 KB would be ~70 MB: the bound holds, and the
        // newest entries are the ones kept.
        let last = last.unwrap();
        assert!(cache.get(&last, 1).await.is_some());
        assert!(cache.weighted_size().await > bound / 2);
        // Another version of the same window is never served.
        assert!(cache.get(&last, 2).await.is_none());
    }
}
