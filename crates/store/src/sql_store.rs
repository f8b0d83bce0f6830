//! The store: one body of code for both databases, generic over the
//! [`Backend`] (what SQLite and PostgreSQL each bring). Every statement
//! here and in the modules below runs unchanged on both backends: `$n`
//! placeholders, TEXT ids and dates, BIGINT cents, BOOLEAN flags,
//! timestamps written from Rust; what the dialects spell differently is
//! [`crate::sql_conn::Dialect`]. Each module below holds one
//! responsibility's methods; the [`Store`] methods forward there.

pub(crate) mod accounts;
pub(crate) mod budgets;
mod cache;
pub(crate) mod cards;
pub(crate) mod categories;
pub(crate) mod create_set;
pub(crate) mod import;
pub(crate) mod operations;
pub(crate) mod receipts;
pub(crate) mod series;
mod store_trait;
pub(crate) mod transactions;
pub(crate) mod users;

use cache::{VersionedCache, shared_error};
use create_set::{Creation, create_set};
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
use crate::sql_conn::{Col, Conn, Dialect, SqlRow};
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
    /// the schema baseline; and stamp the days of the rows a write changes with
    /// the write's own view version, also there, which is why the bump
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
