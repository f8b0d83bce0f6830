//! The only place with SQL. [`Store`] has one method per unit of work, each
//! run in its own database transaction; [`SqliteStore`] and
//! [`PostgresStore`] implement it from one portable body of SQL
//! (`sql_store.rs` and the `sql_*.rs` files beside it, one per
//! responsibility), compiled once per backend so each is
//! concrete and carries its own embedded migrations.

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;
use std::sync::Arc;

use cofre_domain::account::{Account, AccountChanges};
use cofre_domain::auth::ApiKey;
use cofre_domain::budget::Budget;
use cofre_domain::bulk::{BulkAction, Skipped};
use cofre_domain::category::{Category, CategoryChanges};
use cofre_domain::profile::{Profile, ProfileChanges};
use cofre_domain::projection::{InstallmentPlan, RecurrenceRule};
use cofre_domain::series::{Outcome, SeriesRef, SeriesState, SeriesWrite};
use cofre_domain::statement::Statement;
use cofre_domain::tag::{NewTag, Tag, TagChanges};
use cofre_domain::transaction::{
    NewTransaction, Page, PageRequest, Transaction, TransactionChanges, TransactionFilter,
};
use cofre_domain::transfer::NewTransfer;
use cofre_domain::view::{ProjectedTotal, ViewSources};
use cofre_domain::{
    AccountId, ApiKeyId, BudgetId, CategoryId, DomainError, Money, PurchaseId, RuleId, TagId,
    TransactionId, UserId,
};

mod backend;
mod card_money;
mod change_stamp;
mod db_errors;
mod deadline;
mod group_commit;
mod sql_conn;
mod sql_decode;
mod sql_schema;
mod sql_steps;
mod sql_store;
mod sql_text;
mod sync_reads;

pub use card_money::CardMoney;
pub use deadline::serve_until;
mod postgres;
mod sqlite;

pub use sql_store::SqlStore;

/// The store on SQLite, the embedded default.
pub type SqliteStore = SqlStore<sqlx::Sqlite>;
/// The store on PostgreSQL.
pub type PostgresStore = SqlStore<sqlx::Postgres>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// The request named something that does not exist or breaks a rule
    /// only the stored data can check.
    #[error("invalid: {0:?}")]
    Invalid(DomainError),
    /// A client-chosen id is already used by a different request.
    #[error("id already used by a different request")]
    IdConflict,
    /// A title that must be unique already exists.
    #[error("title already in use")]
    TitleConflict,
    /// Another budget of the category covers one of the months.
    #[error("another budget of the category covers one of these months")]
    BudgetConflict,
    /// A row is (or is not) part of a transfer, against what was asked.
    #[error("transfer conflict: {0}")]
    TransferConflict(String),
    /// A bulk call's `expected_count` differs from what its selection matched.
    #[error("expected {expected} rows, matched {matched}")]
    ExpectedCountMismatch { expected: u64, matched: u64 },
    /// The backend cannot do what was asked; the text says what to do.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The user's data changed after the caller read what its write
    /// depends on (see `Store::pay_bill`): decide again and retry.
    #[error("the user's data changed since it was read")]
    Stale,
    /// The user already has the most of something a user may have.
    #[error("at most {limit} {what} per user")]
    LimitReached { what: &'static str, limit: u64 },
    /// The API key a write was made with ([`Store::create_transaction`]'s
    /// `key`) is revoked or gone: nothing was stored.
    #[error("the API key is revoked")]
    KeyRevoked,
    /// Stored data that does not decode: a bug or manual tampering.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The database does not answer, dropped the connection or is
    /// shutting down: what was not committed was rolled back; retry.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// PostgreSQL rolled the whole transaction back on a serialization
    /// failure or deadlock (SQLSTATE 40001 / 40P01): running the same unit
    /// of work again is safe.
    #[error("transaction rolled back on a conflict: {0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Database(sqlx::Error),
    /// The database was migrated by a newer cofre than this one.
    #[error(
        "the database schema is at version {database}, newer than this cofre knows \
         (up to {known}): run a cofre at least as new as the one that migrated it"
    )]
    SchemaTooNew { database: i64, known: i64 },
    /// `Migrations::Check` found migrations not yet applied.
    #[error(
        "the database schema lacks migrations {pending:?}: run `cofre migrate` first \
         (or start with --migrate auto)"
    )]
    MigrationsPending { pending: Vec<i64> },
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl From<DomainError> for StoreError {
    fn from(err: DomainError) -> Self {
        StoreError::Invalid(err)
    }
}

impl From<sqlx::Error> for StoreError {
    /// A write refused by a running total's range constraint (migration
    /// 0008) is the client's: its rows would take a balance, day or month
    /// total past [`MAX_TOTAL_CENTS`](cofre_domain::money::MAX_TOTAL_CENTS).
    /// It names `amount`, the field that moves totals.
    fn from(err: sqlx::Error) -> Self {
        if total_out_of_range(&err) {
            return total_refused();
        }
        match db_errors::classify(&err) {
            db_errors::Failure::Unavailable => StoreError::Unavailable(err.to_string()),
            db_errors::Failure::Conflict => StoreError::Conflict(err.to_string()),
            db_errors::Failure::Other => StoreError::Database(err),
        }
    }
}

/// Whether `err` is the violation of a running total's range constraint.
/// PostgreSQL names the constraint; SQLite only says so in the message
/// ("CHECK constraint failed: <name>").
fn total_out_of_range(err: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = err else {
        return false;
    };
    if !matches!(db.kind(), sqlx::error::ErrorKind::CheckViolation) {
        return false;
    }
    match db.constraint() {
        Some(name) => is_total_constraint(name),
        None => names_total_constraint(db.message()),
    }
}

/// Whether SQLite's message for a failed CHECK names a running total's.
fn names_total_constraint(message: &str) -> bool {
    message
        .strip_prefix("CHECK constraint failed: ")
        .is_some_and(|name| is_total_constraint(name.trim()))
}

fn is_total_constraint(name: &str) -> bool {
    cofre_domain::money::TOTAL_CONSTRAINTS.contains(&name)
}

/// A write refused because it would take a running total out of range.
fn total_refused() -> StoreError {
    StoreError::Invalid(DomainError::field(
        "amount",
        cofre_domain::money::TOTAL_OUT_OF_RANGE,
    ))
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Most recurrence rules one user may have: the overview walks every card
/// rule's occurrences (a daily one since 2000 is about 10,000), so this
/// keeps one request computed afresh under a second of CPU.
pub const MAX_RULES_PER_USER: u64 = 1_000;

/// Most installment purchases one user may have (each up to 420
/// installments, every one walked by the card books).
pub const MAX_PLANS_PER_USER: u64 = 10_000;

/// An account with its computed balance (sum of its POSTED rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountView {
    pub account: Account,
    pub balance: Money,
}

/// The outcome of an idempotent creation.
#[derive(Clone, Debug)]
pub struct Created<T> {
    pub value: T,
    /// True when an earlier identical request had already created it.
    pub deduped: bool,
}

/// Decides a series operation from the loaded series; run inside the
/// store's transaction so that what it read is what it changes.
pub type SeriesOp =
    Box<dyn FnOnce(&SeriesState) -> Result<(SeriesWrite, Outcome), DomainError> + Send>;

/// A series operation's outcome, with the receipt file names of the rows
/// it deleted so the caller can remove the files after the commit.
#[derive(Clone, Debug)]
pub struct SeriesApplied {
    pub outcome: Outcome,
    pub removed_receipts: Vec<String>,
}

/// Category and tags a change names, checked inside the unit of work.
#[derive(Clone, Debug, Default)]
pub struct References {
    pub category: Option<CategoryId>,
    pub tags: Vec<TagId>,
}

/// Rows, rules and plans written at once (demo data, imports).
#[derive(Clone, Debug, Default)]
pub struct ImportBatch {
    pub rows: Vec<ImportRow>,
    pub rules: Vec<RecurrenceRule>,
    pub plans: Vec<InstallmentPlan>,
}

#[derive(Clone, Debug)]
pub struct ImportRow {
    pub id: TransactionId,
    pub account_id: AccountId,
    pub state: cofre_domain::transaction::TransactionState,
    pub link: cofre_domain::transaction::SeriesLink,
    /// Set on the two legs of a card bill payment.
    pub payment: Option<cofre_domain::card::PaymentLeg>,
}

/// A bulk call, validated: which rows, and what to do with them.
#[derive(Clone, Debug)]
pub struct BulkRequest {
    /// Stored ids; every one must be the user's.
    pub ids: Option<Vec<TransactionId>>,
    /// Rows the list would show for this filter (stored rows only).
    pub filter: Option<TransactionFilter>,
    pub action: BulkAction,
    pub expected_count: Option<u64>,
}

/// What a bulk call did.
#[derive(Clone, Debug, Default)]
pub struct BulkOutcome {
    pub matched: u64,
    /// Rows changed (or deleted).
    pub updated: u64,
    pub deleted: u64,
    pub skipped: Vec<Skipped>,
    /// Receipt files of deleted rows, for the caller to remove.
    pub receipts: Vec<String>,
}

/// What a delete removed: the rows (the one named first) and their
/// receipt files, which the caller removes after the commit.
/// What deleting a category moved to its replacement (or to none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CategoryDeletion {
    pub moved_transactions: u64,
    pub moved_rules: u64,
    pub moved_plans: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Deleted {
    pub ids: Vec<TransactionId>,
    pub receipts: Vec<String>,
}

/// What an import of a bank statement did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Rows stored by this import.
    pub added: usize,
    /// Rows skipped: their bank id was already stored on the account, or
    /// the statement listed it earlier.
    pub already_present: usize,
}

/// What a write needs to know about "now".
#[derive(Clone, Copy, Debug)]
pub struct WriteContext {
    pub now: Timestamp,
    pub today: Date,
}

/// A user as operators list them.
#[derive(Clone, Debug)]
pub struct UserSummary {
    pub id: UserId,
    pub name: Option<String>,
    pub created_at: Timestamp,
    pub active_keys: i64,
}

/// Decides a budget's new state from its stored one, inside the store's
/// transaction.
pub type BudgetOp = Box<dyn FnOnce(&Budget) -> Result<Budget, DomainError> + Send>;

/// Which stored rows [`Store::entry_totals`] sums, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TotalsBy {
    /// Per month, category, type, status and transfer leg, from totals the
    /// triggers keep, so the cost does not grow with the rows: of the
    /// accounts in `only` (all when none), cards left out with
    /// `without_cards`; per account, or summed over them (`account_id`
    /// none) with `over_accounts`, which returns as many rows at every
    /// size of history.
    Category {
        over_accounts: bool,
        only: Option<Vec<AccountId>>,
        without_cards: bool,
    },
    /// Per account, month, category, type, status, transfer leg and tag,
    /// summed from the rows (tags live on rows): a row with two tags counts under each,
    /// a row without tags under none (`tag_id` null).
    Tag,
    /// As `Tag` without the tag, only rows that carry one of these tags.
    WithTags(Vec<TagId>),
}

/// Each card's projected entries summed per bill, by card id (sorted).
pub type CardCharges = Vec<(AccountId, Arc<cofre_domain::bills::BillSums>)>;

/// Visible stored rows of one account and month, summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryTotal {
    /// None when summed over accounts ([`TotalsBy::Category`]).
    pub account_id: Option<AccountId>,
    pub month: cofre_domain::card::BillMonth,
    pub category_id: Option<CategoryId>,
    /// Set only for [`TotalsBy::Tag`].
    pub tag_id: Option<TagId>,
    pub tx_type: cofre_domain::transaction::TxType,
    pub status: cofre_domain::transaction::TxStatus,
    /// A leg of a transfer or of a bill payment.
    pub transfer: bool,
    pub amount: Money,
}

/// What the POSTED rows of one day add to the balances of the user's banks
/// and of their cards (CREDIT adds, DEBIT subtracts), in cents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostedDay {
    pub date: Date,
    pub banks: i64,
    pub cards: i64,
}

/// What one account's rows of one day add to its balance (CREDIT adds,
/// DEBIT subtracts), in cents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DayAmount {
    pub account_id: AccountId,
    pub date: Date,
    pub cents: i64,
}

/// An API key as authentication finds it.
#[derive(Clone, Debug)]
pub struct FoundKey {
    pub key: ApiKey,
    /// The owner's `view_version` at the time of the lookup.
    pub view_version: i64,
}

/// What a page of the merged view was made from, besides its stored rows,
/// and the latest change to the days it covers: a kept page is still
/// true while the first three are unchanged and no day of it has a stamp
/// above the view version the page was computed at (the schema baseline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageStamps {
    /// `users.sources_version`: rules, plans, accounts, tags, tombstones.
    pub sources: i64,
    /// `users.categories_version`: the categories a filter expands.
    pub categories: i64,
    /// The sum of the user's cards' money versions: every row on a card or
    /// billed to one moves it, so the bills a cashflow page shows.
    pub cards: i64,
    /// The highest stamp of the days asked for (0 for none).
    pub days: i64,
    /// The owner's `view_version` these were read at: equal to the version
    /// a page was computed at, no write came between the two.
    pub view: i64,
}

/// The stored days an answer shows: a user's, from `from` to `to`. A
/// handler whose answer is made of those days (and of the user's rules,
/// categories and cards) puts this in the response's extensions, saying
/// what the answer depends on; [`PageStamps`] of those days tell whether
/// it still holds after a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageDays {
    pub user: UserId,
    pub from: Date,
    pub to: Date,
}

impl PageStamps {
    /// Whether a page made at `made` and computed at view version
    /// `version` is still what it would be now, these being the stamps now.
    pub fn still_true(&self, made: &PageStamps, version: i64) -> bool {
        self.sources == made.sources
            && self.categories == made.categories
            && self.cards == made.cards
            && self.days <= version
    }
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Cheap round trip for readiness checks.
    async fn ping(&self) -> StoreResult<()>;
    /// How long writes have not moved: on SQLite, through the one way
    /// into them (the group commit gate: a turn, or a run of long turns
    /// with writers waiting); on PostgreSQL, where writes wait in the
    /// database, how long the longest wait for a lock in this database
    /// has lasted. `None` while writes move. Readiness reports writes as
    /// stuck when this outlasts a request's deadline.
    async fn write_stall(&self) -> StoreResult<Option<std::time::Duration>>;
    /// Writes a consistent copy of the whole database to `to` (a new
    /// file) while the server keeps running: SQLite only (Unsupported on
    /// PostgreSQL, whose tool is pg_dump).
    async fn backup(&self, to: &std::path::Path) -> StoreResult<()>;

    // Users and keys
    async fn count_users(&self) -> StoreResult<i64>;
    /// On a database without users, creates the user `key` belongs to
    /// (`key.user_id`) and the key, in one transaction that holds the users
    /// table, so of several servers starting together on an empty database
    /// exactly one creates them. `None` when a user already exists.
    async fn create_first_user(&self, key: &ApiKey, now: Timestamp)
    -> StoreResult<Option<Profile>>;
    /// Every user, oldest first, with how many unrevoked keys each has.
    async fn list_users(&self) -> StoreResult<Vec<UserSummary>>;
    /// Deletes a user and everything of theirs (keys, accounts, rows,
    /// rules, categories, tags) in one transaction; returns the receipt
    /// file names of their rows for the caller to remove after the commit.
    /// NotFound when there is no such user.
    async fn delete_user(&self, user: UserId) -> StoreResult<Vec<String>>;
    async fn create_user(&self, name: Option<&str>, now: Timestamp) -> StoreResult<Profile>;
    async fn get_profile(&self, user: UserId) -> StoreResult<Profile>;
    async fn update_profile(&self, user: UserId, changes: &ProfileChanges) -> StoreResult<Profile>;
    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()>;
    /// A key with its owner's view version (which every write of the
    /// owner's data bumps, see `begin_write`): one round trip serves both
    /// authentication and the read cache's freshness check.
    async fn find_api_key(&self, id: ApiKeyId) -> StoreResult<Option<FoundKey>>;
    /// `id`'s key as [`Store::find_api_key`] last found it in this process,
    /// live then, when a request may be authenticated with it without
    /// reading it again: only where that read is a round trip of its own
    /// (PostgreSQL), and only for writes that check the key themselves as
    /// they commit ([`Store::create_transaction`]'s `key`). `None`
    /// elsewhere, and for a key not read yet or found revoked or gone.
    async fn recalled_api_key(&self, id: ApiKeyId) -> Option<ApiKey>;
    async fn list_api_keys(&self, user: UserId) -> StoreResult<Vec<ApiKey>>;
    /// The user's view version: every committed write of the user's data
    /// bumps it (-1 for no such user).
    async fn view_version(&self, user: UserId) -> StoreResult<i64>;
    /// The user's [`PageStamps`] now, for the stored rows dated `from` to
    /// `to` (an empty range when `to` is before `from`). One short read.
    async fn page_stamps(&self, user: UserId, from: Date, to: Date) -> StoreResult<PageStamps>;
    /// Stores `new` and revokes `old` in one transaction: NotFound when
    /// `old` does not exist or is already revoked (nothing changes then).
    async fn rotate_api_key(&self, old: ApiKeyId, new: &ApiKey, now: Timestamp) -> StoreResult<()>;
    /// Marks a key revoked; false when there is no such key.
    async fn revoke_api_key(&self, id: ApiKeyId, now: Timestamp) -> StoreResult<bool>;

    // Accounts
    async fn list_accounts(&self, user: UserId) -> StoreResult<Vec<AccountView>>;
    async fn get_account(&self, user: UserId, id: AccountId) -> StoreResult<AccountView>;
    /// Creates an account and, for a non-zero `initial_balance`, its
    /// opening-balance row, atomically. Returns the row's id when made.
    async fn create_account(
        &self,
        user: UserId,
        changes: &AccountChanges,
        initial_balance: Option<Money>,
        default_currency: &str,
        ctx: WriteContext,
    ) -> StoreResult<(AccountView, Option<TransactionId>)>;
    async fn update_account(
        &self,
        user: UserId,
        id: AccountId,
        changes: &AccountChanges,
    ) -> StoreResult<AccountView>;
    /// Deletes the account with its rows; returns the receipt file names of
    /// the deleted rows so the caller can remove the files.
    async fn delete_account(&self, user: UserId, id: AccountId) -> StoreResult<Vec<String>>;

    // Categories and tags
    /// The categories the user sees (the shared ones and their own), by
    /// title; kept in memory until they change.
    async fn list_categories(&self, user: UserId) -> StoreResult<Arc<Vec<Category>>>;
    async fn create_category(
        &self,
        user: UserId,
        changes: &CategoryChanges,
        now: Timestamp,
    ) -> StoreResult<Category>;
    async fn update_category(
        &self,
        user: UserId,
        id: CategoryId,
        changes: &CategoryChanges,
    ) -> StoreResult<Category>;
    /// Deletes one of the user's own categories in one transaction: its
    /// rows, rules and installment purchases move to `replacement` (or to
    /// no category), its subcategories to the top level.
    async fn delete_category(
        &self,
        user: UserId,
        id: CategoryId,
        replacement: Option<CategoryId>,
    ) -> StoreResult<CategoryDeletion>;
    async fn list_tags(&self, user: UserId) -> StoreResult<Vec<Tag>>;
    async fn create_tag(&self, user: UserId, tag: &NewTag, now: Timestamp) -> StoreResult<Tag>;
    /// Renames or recolours a tag; TitleConflict when another tag of the
    /// user has the title (any case).
    async fn update_tag(&self, user: UserId, id: TagId, changes: &TagChanges) -> StoreResult<Tag>;
    /// Deletes a tag: it leaves every row, rule and installment purchase
    /// that carried it, in one transaction.
    async fn delete_tag(&self, user: UserId, id: TagId) -> StoreResult<()>;

    // Transactions
    /// Creates a row; with `plan`, the installment purchase it is the
    /// first installment of, in the same transaction. With `key` (a key
    /// the request was authenticated with from memory,
    /// [`Store::recalled_api_key`]), nothing is stored unless that key is
    /// still the user's and not revoked, read in the write's own
    /// transaction ([`StoreError::KeyRevoked`]).
    async fn create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        plan: Option<&InstallmentPlan>,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> StoreResult<Created<Transaction>>;
    /// Stores a rule, or finds an equivalent one (`deduped: true`).
    async fn create_rule(
        &self,
        user: UserId,
        rule: &RecurrenceRule,
    ) -> StoreResult<Created<RecurrenceRule>>;
    async fn get_plan(&self, user: UserId, id: PurchaseId) -> StoreResult<InstallmentPlan>;
    async fn get_rule(&self, user: UserId, id: RuleId) -> StoreResult<RecurrenceRule>;
    /// Rules, plans, replacements and tombstones that project entries
    /// into `[from, to]`, with the user's accounts and tags.
    async fn view_sources(
        &self,
        user: UserId,
        from: Date,
        to: Date,
    ) -> StoreResult<Arc<ViewSources>>;
    /// The projected entries of the whole window `[from, to]` summed per
    /// account, month, category, type and status
    /// ([`cofre_domain::view::projected_totals`]), kept until the user's
    /// projection sources change; `None` when the window holds too many.
    async fn projected_totals(
        &self,
        user: UserId,
        from: Date,
        to: Date,
    ) -> StoreResult<Arc<Option<Vec<ProjectedTotal>>>>;
    /// The projected entries of the cashflow view in a whole calendar
    /// month, summed as the overview sums its month
    /// ([`cofre_domain::overview::projected_items`]), kept until the
    /// user's projection sources change.
    async fn projected_month_items(
        &self,
        user: UserId,
        month: cofre_domain::card::BillMonth,
    ) -> StoreResult<Arc<Vec<cofre_domain::overview::MonthItem>>>;
    /// The projected entries on each of the user's cards summed per bill
    /// ([`cofre_domain::view::card_charges`] of the window `[from, to]`),
    /// kept until the user's projection sources change.
    async fn card_charges(
        &self,
        user: UserId,
        from: Date,
        to: Date,
        whole: Option<Date>,
    ) -> StoreResult<Arc<CardCharges>>;
    /// Writes a batch in one transaction: all of it or nothing. Accounts,
    /// categories and tags it names must be the user's.
    async fn import(&self, user: UserId, batch: &ImportBatch, now: Timestamp) -> StoreResult<()>;
    /// The user an account belongs to, for operator commands that name only
    /// the account. NotFound when there is no such account.
    async fn account_owner(&self, account: AccountId) -> StoreResult<UserId>;
    /// Imports a bank statement into one of `user`'s accounts, in one
    /// transaction: each row whose bank id (`external_id`) the account does
    /// not have yet becomes an open-finance row (source OPEN_FINANCE,
    /// `created_by_user` false, POSTED up to `ctx.today`, PENDING after),
    /// the others are skipped; the account is marked connected through
    /// `statement.connector`. NotFound when the account is not the user's;
    /// Invalid when it is archived or of another kind or currency (nothing
    /// is stored then).
    async fn import_statement(
        &self,
        user: UserId,
        account: AccountId,
        statement: &Statement,
        ctx: WriteContext,
    ) -> StoreResult<ImportSummary>;
    /// Loads a series, lets `op` decide, and applies its write: one
    /// transaction. NotFound when the user has no such series.
    async fn apply_series(
        &self,
        user: UserId,
        series: SeriesRef,
        references: &References,
        op: SeriesOp,
        now: Timestamp,
    ) -> StoreResult<SeriesApplied>;
    async fn get_transaction(&self, user: UserId, id: TransactionId) -> StoreResult<Transaction>;
    /// Changes a stored row. A leg of a transfer group passes its amount,
    /// date and status to the other legs in the same transaction (see
    /// `transfer::shared_leg_changes`); its type cannot change
    /// (TransferConflict). Returns the ids changed, the row first.
    async fn update_transaction(
        &self,
        user: UserId,
        id: TransactionId,
        changes: &TransactionChanges,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>>;
    /// Deletes a stored row, and with it the other legs of its transfer
    /// group, in one transaction.
    async fn delete_transaction(&self, user: UserId, id: TransactionId) -> StoreResult<Deleted>;
    /// A page of the filter's stored rows alone: newest day first, ids
    /// ascending within a day, from the page's position on.
    async fn list_transactions(
        &self,
        user: UserId,
        filter: &TransactionFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Transaction>> {
        self.list_transactions_beside(user, filter, page, &mut std::iter::empty())
            .await
    }
    /// The stored rows of a page shared with entries from elsewhere, dated
    /// `others` (newest first, drawn as far as the rows read need): only
    /// the rows that make the page
    /// ([`PageCut`](cofre_domain::transaction::PageCut)), the rest not
    /// read where reads go row by row; `has_more` when a stored row falls
    /// past the page.
    async fn list_transactions_beside(
        &self,
        user: UserId,
        filter: &TransactionFilter,
        page: &PageRequest,
        others: &mut (dyn Iterator<Item = Date> + Send),
    ) -> StoreResult<Page<Transaction>>;

    // Transfers and bulk edits
    /// Stores both legs of a transfer, or neither. The accounts must be the
    /// user's, open, and in one currency.
    async fn create_transfer(
        &self,
        user: UserId,
        transfer: &NewTransfer,
        now: Timestamp,
    ) -> StoreResult<()>;
    /// Puts a row (and its counterpart) in a new transfer group `group`.
    /// TransferConflict when either already is in one.
    async fn mark_transfer(
        &self,
        user: UserId,
        id: TransactionId,
        counterpart: Option<TransactionId>,
        group: uuid::Uuid,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>>;
    /// Releases the row's transfer group (both legs), or a legacy transfer
    /// row; returns the rows released (none when it was not a transfer).
    async fn unmark_transfer(
        &self,
        user: UserId,
        id: TransactionId,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>>;
    // Cards
    /// The whole money of each of the user's cards, summed per day (see
    /// [`CardMoney`]); each card's kept until a write changes its rows.
    async fn card_money(
        &self,
        user: UserId,
    ) -> StoreResult<std::collections::HashMap<AccountId, Arc<CardMoney>>>;

    /// Stores both legs of a bill payment, or neither. NotFound when the
    /// card is not one of the user's cards. The amount was decided from
    /// data read at `decided_at` (a view version): Stale when any write of
    /// the user's committed since, checked under the write lock, so two
    /// payments can never both pay what was owed once.
    async fn pay_bill(
        &self,
        user: UserId,
        payment: &cofre_domain::bills::NewBillPayment,
        decided_at: i64,
        now: Timestamp,
    ) -> StoreResult<()>;

    /// Hides a projected bill (dated `date`) from the cashflow view.
    async fn hide_bill(
        &self,
        user: UserId,
        handle: &cofre_domain::projection::Handle,
        date: Date,
        now: Timestamp,
    ) -> StoreResult<()>;

    /// The stored rows of the cashflow view (visible, off the cards) dated
    /// in a whole calendar month, summed by account, type, status and kind
    /// (the overview's month). Read from totals kept by triggers, so the
    /// cost does not grow with the month's rows; there is no partial month.
    async fn month_items(
        &self,
        user: UserId,
        month: cofre_domain::card::BillMonth,
    ) -> StoreResult<Vec<cofre_domain::overview::MonthItem>>;

    // Budgets
    /// The user's budgets, oldest first.
    async fn list_budgets(&self, user: UserId) -> StoreResult<Vec<Budget>>;
    async fn get_budget(&self, user: UserId, id: BudgetId) -> StoreResult<Budget>;
    /// Stores a new budget. Invalid when its category is not visible to
    /// the user; BudgetConflict when another budget of the category shares
    /// a month with it; LimitReached past the most budgets a user may have.
    async fn create_budget(&self, user: UserId, budget: &Budget) -> StoreResult<Budget>;
    /// Loads a budget, lets `op` decide its new state and stores it, with
    /// the checks of [`Store::create_budget`]: one transaction.
    async fn update_budget(&self, user: UserId, id: BudgetId, op: BudgetOp) -> StoreResult<Budget>;
    async fn delete_budget(&self, user: UserId, id: BudgetId) -> StoreResult<()>;

    // Reports
    /// The user's visible stored rows dated in the months `from..=to`,
    /// summed as `by` says.
    async fn entry_totals(
        &self,
        user: UserId,
        from: cofre_domain::card::BillMonth,
        to: cofre_domain::card::BillMonth,
        by: &TotalsBy,
    ) -> StoreResult<Vec<EntryTotal>>;
    /// What the POSTED rows of the user's accounts that count in totals
    /// (not archived, not excluded, in `currency`) add to their balances
    /// per day, summed over the banks and over the cards, for the days
    /// after `after` (days that add nothing left out), in date order: one
    /// row a day however many accounts there are.
    async fn posted_days(
        &self,
        user: UserId,
        after: Date,
        currency: &str,
    ) -> StoreResult<Vec<PostedDay>>;
    /// The same for PENDING rows (hidden ones too) dated in `(after, to]`.
    async fn pending_days(
        &self,
        user: UserId,
        after: Date,
        to: Date,
    ) -> StoreResult<Vec<DayAmount>>;

    /// Applies a bulk call in one transaction: all of it or nothing.
    async fn bulk(
        &self,
        user: UserId,
        request: &BulkRequest,
        now: Timestamp,
    ) -> StoreResult<BulkOutcome>;
    /// Sets a stored row's receipt file name, or clears it with `None`, in
    /// one write. Returns the name it replaced, whose file the caller
    /// removes after this commits. NotFound when the user has no such row.
    async fn set_receipt(
        &self,
        user: UserId,
        id: TransactionId,
        name: Option<&str>,
        now: Timestamp,
    ) -> StoreResult<Option<String>>;
}

/// Bytes the store's in-memory caches keep unless told otherwise
/// (`COFRE_STORE_CACHE_MB`).
pub const DEFAULT_CACHE_BYTES: u64 = 64 << 20;

/// What opening a store does with the schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Migrations {
    /// Apply pending migrations; on PostgreSQL under an advisory lock, so
    /// servers starting together do not race.
    #[default]
    Apply,
    /// Apply nothing: refuse ([`StoreError::MigrationsPending`]) when the
    /// schema is behind, for fleets migrated by `cofre migrate` first.
    Check,
}

/// The schema after opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaReport {
    /// The newest migration applied.
    pub version: i64,
    /// Migrations this opening applied.
    pub applied_now: Vec<i64>,
}

/// Opens the store a URL names: `sqlite://PATH` (created if missing) or
/// `postgres://...`, and brings its schema up to date.
pub async fn connect(url: &str) -> StoreResult<Arc<dyn Store>> {
    connect_with(url, DEFAULT_CACHE_BYTES).await
}

/// [`connect`], with caches bounded to about `cache_bytes` in all.
pub async fn connect_with(url: &str, cache_bytes: u64) -> StoreResult<Arc<dyn Store>> {
    Ok(open(url, cache_bytes, Migrations::Apply).await?.0)
}

/// Opens the store `url` names, treating its schema as `migrations` says.
/// Every mode refuses a schema newer than this build knows
/// ([`StoreError::SchemaTooNew`]).
pub async fn open(
    url: &str,
    cache_bytes: u64,
    migrations: Migrations,
) -> StoreResult<(Arc<dyn Store>, SchemaReport)> {
    if url.starts_with("sqlite:") {
        let (store, report) = SqliteStore::open(url, cache_bytes, migrations).await?;
        Ok((Arc::new(store), report))
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        let (store, report) = PostgresStore::open(url, cache_bytes, migrations).await?;
        Ok((Arc::new(store), report))
    } else {
        Err(StoreError::Database(sqlx::Error::Configuration(
            format!("unsupported database URL {url:?}: use sqlite://PATH or postgres://...").into(),
        )))
    }
}
