// One body of portable SQL, included by `sqlite.rs` and `postgres.rs` with
// their own `Db` type and `BEGIN_WRITE` statement. Every statement here runs
// unchanged on both backends: `$n` placeholders, TEXT ids and dates, BIGINT
// cents, BOOLEAN flags, timestamps written from Rust.

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;
use sqlx::{QueryBuilder, Row};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

use cofre_domain::account::{
    self as account_rules, Account, AccountChanges, AccountState, AccountType, CreditSettings,
    Patch, SubType,
};
use cofre_domain::auth::{ApiKey, format_scopes, parse_scopes};
use cofre_domain::category::{self as category_rules, Category, CategoryChanges};
use cofre_domain::profile::{self as profile_rules, Profile, ProfileChanges};
use cofre_domain::projection::Handle;
use cofre_domain::projection::{Frequency, InstallmentPlan, RecurrenceRule, Schedule, Template};
use cofre_domain::series::{Series, SeriesRef, SeriesState, SeriesWrite};
use cofre_domain::tag::{NewTag, Tag};
use cofre_domain::text::sort_key;
use cofre_domain::time::{format_date, format_timestamp, parse_date};
use cofre_domain::transaction::{
    self as tx_rules, EntryId, InstallmentRef, NewTransaction, Page, PageRequest, SeriesLink,
    Source, TagRef, Transaction, TransactionChanges, TransactionFilter, TransactionState, TxStatus,
    TxType, search_text,
};
use cofre_domain::bills::card_info;
use cofre_domain::view::{AccountInfo, ViewSources};
use cofre_domain::{
    AccountId, ApiKeyId, CategoryId, DomainError, Money, PurchaseId, RuleId, TagId, TransactionId,
    UserId,
};

use crate::{
    AccountView, Created, FoundKey, ImportBatch, References, SeriesApplied, SeriesOp, Store, StoreError,
    StoreResult, WriteContext,
};

type DbRow = <Db as sqlx::Database>::Row;
type Tx = sqlx::Transaction<'static, Db>;

/// Values loaded for a user, each valid while the user's `view_version` is
/// the one it was loaded at: every write bumps the version, in every
/// process, so a cached value is never older than the data.
struct VersionedCache<K, V> {
    entries: Mutex<HashMap<K, (i64, Arc<V>)>>,
}

/// Entries a cache keeps before it starts afresh.
const CACHE_LIMIT: usize = 4_096;

impl<K, V> Default for VersionedCache<K, V> {
    fn default() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + std::hash::Hash, V> VersionedCache<K, V> {
    fn get(&self, key: &K, version: i64) -> Option<Arc<V>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(v, _)| *v == version)
            .map(|(_, value)| value.clone())
    }

    fn put(&self, key: K, version: i64, value: Arc<V>) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CACHE_LIMIT {
            entries.clear();
        }
        entries.insert(key, (version, value));
    }
}

/// The user's `view_version` (-1 for no such user).
async fn view_version(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
) -> StoreResult<i64> {
    Ok(sqlx::query("SELECT view_version FROM users WHERE id = $1")
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?
        .map(|row| row.try_get("view_version"))
        .transpose()?
        .unwrap_or(-1))
}

#[derive(Clone)]
pub struct SqlStore {
    pool: sqlx::Pool<Db>,
    /// Projection sources per (user, window).
    sources: Arc<VersionedCache<(UserId, Date, Date), ViewSources>>,
    /// Every card's money per user.
    cards: Arc<VersionedCache<UserId, HashMap<AccountId, CardMoney>>>,
}

impl SqlStore {
    fn from_pool(pool: sqlx::Pool<Db>) -> Self {
        Self {
            pool,
            sources: Arc::default(),
            cards: Arc::default(),
        }
    }

    /// Starts a write of `user`'s data. Its first statement bumps the
    /// user's `view_version`, so every write invalidates cached projection
    /// sources, in every process, when it commits.
    async fn begin_write(&self, user: UserId) -> StoreResult<Tx> {
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
        sqlx::query("UPDATE users SET view_version = view_version + 1 WHERE id = $1")
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }

    /// The underlying pool, for tests and tools that need raw access.
    pub fn pool(&self) -> &sqlx::Pool<Db> {
        &self.pool
    }
}

// ---------------------------------------------------------------- decoding

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{what}: {value:?}"))
}

fn get_uuid(row: &DbRow, col: &str) -> StoreResult<Uuid> {
    let text: String = row.try_get(col)?;
    Uuid::try_parse(&text).map_err(|_| corrupt(col, &text))
}

fn get_opt_uuid(row: &DbRow, col: &str) -> StoreResult<Option<Uuid>> {
    let text: Option<String> = row.try_get(col)?;
    text.map(|t| Uuid::try_parse(&t).map_err(|_| corrupt(col, &t)))
        .transpose()
}

fn get_ts(row: &DbRow, col: &str) -> StoreResult<Timestamp> {
    let text: String = row.try_get(col)?;
    text.parse().map_err(|_| corrupt(col, &text))
}

fn get_opt_ts(row: &DbRow, col: &str) -> StoreResult<Option<Timestamp>> {
    let text: Option<String> = row.try_get(col)?;
    text.map(|t| t.parse().map_err(|_| corrupt(col, &t)))
        .transpose()
}

fn get_date(row: &DbRow, col: &str) -> StoreResult<Date> {
    let text: String = row.try_get(col)?;
    parse_date(&text).ok_or_else(|| corrupt(col, &text))
}

fn get_opt_date(row: &DbRow, col: &str) -> StoreResult<Option<Date>> {
    let text: Option<String> = row.try_get(col)?;
    text.map(|t| parse_date(&t).ok_or_else(|| corrupt(col, &t)))
        .transpose()
}

fn get_opt_money(row: &DbRow, col: &str) -> StoreResult<Option<Money>> {
    let cents: Option<i64> = row.try_get(col)?;
    Ok(cents.map(Money::from_cents))
}

fn get_day(row: &DbRow, col: &str) -> StoreResult<Option<u8>> {
    let day: Option<i32> = row.try_get(col)?;
    day.map(|d| u8::try_from(d).map_err(|_| corrupt(col, &d.to_string())))
        .transpose()
}

fn opt_string<T: ToString>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

fn profile_from_row(row: &DbRow) -> StoreResult<Profile> {
    Ok(Profile {
        id: UserId(get_uuid(row, "id")?),
        name: row.try_get("name")?,
        wage: get_opt_money(row, "wage_cents")?,
        monthly_living_cost: get_opt_money(row, "monthly_living_cost_cents")?,
        has_spouse: row.try_get("has_spouse")?,
        has_children: row.try_get("has_children")?,
        is_entrepreneur: row.try_get("is_entrepreneur")?,
    })
}

fn api_key_from_row(row: &DbRow) -> StoreResult<ApiKey> {
    let scopes: String = row.try_get("scopes")?;
    Ok(ApiKey {
        id: ApiKeyId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        secret_hash: row.try_get("secret_hash")?,
        scopes: parse_scopes(&scopes).map_err(|_| corrupt("scopes", &scopes))?,
        label: row.try_get("label")?,
        created_at: get_ts(row, "created_at")?,
        revoked_at: get_opt_ts(row, "revoked_at")?,
    })
}

const ACCOUNT_COLUMNS: &str = "a.id, a.user_id, a.type, a.sub_type, a.title, a.archived, \
    a.exclude_from_totals, a.currency, a.credit_close_day, a.credit_due_day, \
    a.credit_cycle_auto, a.credit_limit_cents, a.pay_bill_from_account_id, a.icon_id, \
    a.card_icon_id, a.open_finance_connected, a.connector_name, a.card_holders, a.created_at";

/// Balance of every account: POSTED rows, CREDIT adds and DEBIT subtracts,
/// as the triggers of migration 0006 keep it (never a sum over history).
const BALANCE_COLUMN: &str = "CAST(COALESCE((SELECT b.posted_cents FROM account_balances b \
    WHERE b.account_id = a.id), 0) AS BIGINT) AS balance_cents";

fn account_from_row(row: &DbRow) -> StoreResult<Account> {
    let type_text: String = row.try_get("type")?;
    let account_type = AccountType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?;
    let sub_text: String = row.try_get("sub_type")?;
    let sub_type = SubType::parse(&sub_text).ok_or_else(|| corrupt("sub_type", &sub_text))?;
    let credit = match account_type {
        AccountType::Credit => Some(CreditSettings {
            close_day: get_day(row, "credit_close_day")?.unwrap_or(1),
            due_day: get_day(row, "credit_due_day")?.unwrap_or(account_rules::DEFAULT_DUE_DAY),
            cycle_auto: row
                .try_get::<Option<bool>, _>("credit_cycle_auto")?
                .unwrap_or(true),
            limit: get_opt_money(row, "credit_limit_cents")?.unwrap_or(Money::ZERO),
        }),
        AccountType::Bank => None,
    };
    let holders: Option<String> = row.try_get("card_holders")?;
    let card_holders = holders
        .map(|h| {
            serde_json::from_str::<BTreeMap<String, String>>(&h)
                .map_err(|_| corrupt("card_holders", &h))
        })
        .transpose()?;
    Ok(Account {
        id: AccountId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        state: AccountState {
            account_type,
            sub_type,
            title: row.try_get("title")?,
            archived: row.try_get("archived")?,
            exclude_from_totals: row.try_get("exclude_from_totals")?,
            currency: row.try_get("currency")?,
            credit,
            pay_bill_from_account_id: get_opt_uuid(row, "pay_bill_from_account_id")?.map(AccountId),
            icon_id: row.try_get("icon_id")?,
            card_icon_id: row.try_get("card_icon_id")?,
        },
        open_finance_connected: row.try_get("open_finance_connected")?,
        connector_name: row.try_get("connector_name")?,
        card_holders,
        created_at: get_ts(row, "created_at")?,
    })
}

fn account_view_from_row(row: &DbRow) -> StoreResult<AccountView> {
    Ok(AccountView {
        account: account_from_row(row)?,
        balance: Money::from_cents(row.try_get("balance_cents")?),
    })
}

const CATEGORY_SELECT: &str = "SELECT c.id, c.user_id, c.title, c.parent_id, c.icon_id, \
    c.color_hex, c.created_at, ca.category_id AS archived_id FROM categories c \
    LEFT JOIN category_archives ca ON ca.category_id = c.id AND ca.user_id = $1 \
    WHERE c.user_id IS NULL OR c.user_id = $1";

fn category_from_row(row: &DbRow) -> StoreResult<Category> {
    let archived: Option<String> = row.try_get("archived_id")?;
    Ok(Category {
        id: CategoryId(get_uuid(row, "id")?),
        owner: get_opt_uuid(row, "user_id")?.map(UserId),
        title: row.try_get("title")?,
        parent_id: get_opt_uuid(row, "parent_id")?.map(CategoryId),
        icon_id: row.try_get("icon_id")?,
        color_hex: row.try_get("color_hex")?,
        archived: archived.is_some(),
        created_at: get_ts(row, "created_at")?,
    })
}

fn tag_from_row(row: &DbRow) -> StoreResult<Tag> {
    Ok(Tag {
        id: TagId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        title: row.try_get("title")?,
        color_hex: row.try_get("color_hex")?,
        created_at: get_ts(row, "created_at")?,
    })
}

const TX_COLUMNS: &str = "t.id, t.user_id, t.account_id, t.date, t.type, t.status, \
    t.amount_cents, t.currency, t.description, t.notes, t.bill_to_account_id, t.category_id, \
    t.recurrence_id, t.recurrence_period_date, t.installment_purchase_id, t.installment_number, \
    t.transfer_group_id, t.created_by_user, t.source, t.hide_from_results, t.card_number, \
    t.holder, t.holder_is_me, t.original_description, t.receipt_name, t.open_finance, \
    t.created_at, ip.installment_count AS plan_count, ip.total_cents AS plan_total";

/// Rows with the purchase they are an installment of.
const TX_FROM: &str =
    "FROM transactions t LEFT JOIN installment_plans ip ON ip.id = t.installment_purchase_id";

/// The output names of [`TX_COLUMNS`], in order.
const TX_NAMES: &str = "p.id, p.user_id, p.account_id, p.date, p.type, p.status, \
    p.amount_cents, p.currency, p.description, p.notes, p.bill_to_account_id, p.category_id, \
    p.recurrence_id, p.recurrence_period_date, p.installment_purchase_id, p.installment_number, \
    p.transfer_group_id, p.created_by_user, p.source, p.hide_from_results, p.card_number, \
    p.holder, p.holder_is_me, p.original_description, p.receipt_name, p.open_finance, \
    p.created_at, p.plan_count, p.plan_total";

/// Starts a query for transaction rows that the database answers as ONE
/// value, a JSON array of rows: the driver hands over one value instead of
/// one row (and one thread hand-off) per entry. Push the inner select's
/// WHERE, ORDER BY and LIMIT, then read it with [`fetch_entries`].
fn entries_query() -> QueryBuilder<Db> {
    QueryBuilder::new(format!(
        "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}({TX_NAMES})), '[]') AS TEXT) AS page \
         FROM (SELECT {TX_COLUMNS} {TX_FROM}"
    ))
}

/// Runs an [`entries_query`] and decodes its rows, with their tags. The
/// order of the rows is not kept: callers sort when it matters.
async fn fetch_entries(
    conn: &mut <Db as sqlx::Database>::Connection,
    mut query: QueryBuilder<Db>,
) -> StoreResult<Vec<Transaction>> {
    query.push(") p");
    let row = query.build().fetch_one(&mut *conn).await?;
    let text: String = row.try_get("page")?;
    let raw: Vec<RawTx> = serde_json::from_str(&text)
        .map_err(|e| StoreError::Corrupt(format!("transaction rows: {e}")))?;
    let mut rows = raw
        .into_iter()
        .map(RawTx::into_transaction)
        .collect::<StoreResult<Vec<_>>>()?;
    attach_tags(conn, &mut rows).await?;
    Ok(rows)
}

/// A boolean as each backend writes it in JSON: `true` or `1`.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum JsonBool {
    Bool(bool),
    Int(i64),
}

impl JsonBool {
    fn get(self) -> bool {
        match self {
            JsonBool::Bool(b) => b,
            JsonBool::Int(i) => i != 0,
        }
    }
}

/// One transaction row as [`entries_query`] returns it, column by column.
#[derive(serde::Deserialize)]
struct RawTx(
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    JsonBool,
    String,
    JsonBool,
    Option<String>,
    Option<String>,
    JsonBool,
    Option<String>,
    Option<String>,
    JsonBool,
    String,
    Option<i64>,
    Option<i64>,
);

fn parse_uuid(column: &str, text: &str) -> StoreResult<Uuid> {
    Uuid::try_parse(text).map_err(|_| corrupt(column, text))
}

fn parse_opt_uuid(column: &str, text: Option<String>) -> StoreResult<Option<Uuid>> {
    text.map(|t| parse_uuid(column, &t)).transpose()
}

fn parse_day(column: &str, text: &str) -> StoreResult<Date> {
    parse_date(text).ok_or_else(|| corrupt(column, text))
}

impl RawTx {
    /// The entry, its tags filled in later by [`attach_tags`].
    fn into_transaction(self) -> StoreResult<Transaction> {
        let RawTx(
            id,
            user_id,
            account_id,
            date,
            tx_type,
            status,
            amount_cents,
            currency,
            description,
            notes,
            bill_to_account_id,
            category_id,
            recurrence_id,
            recurrence_period_date,
            installment_purchase_id,
            installment_number,
            transfer_group_id,
            created_by_user,
            source,
            hide_from_results,
            card_number,
            holder,
            holder_is_me,
            original_description,
            receipt_name,
            open_finance,
            created_at,
            plan_count,
            plan_total,
        ) = self;
        let small =
            |column: &str, n: i64| u16::try_from(n).map_err(|_| corrupt(column, &n.to_string()));
        let installment = match (
            parse_opt_uuid("installment_purchase_id", installment_purchase_id)?,
            installment_number,
            plan_count,
            plan_total,
        ) {
            (Some(purchase), Some(number), Some(count), Some(total)) => Some(InstallmentRef {
                purchase_id: PurchaseId(purchase),
                number: small("installment_number", number)?,
                count: small("installment_count", count)?,
                total_amount: Money::from_cents(total),
            }),
            // Not an installment, or its purchase was deleted: it stands alone.
            _ => None,
        };
        Ok(Transaction {
            id: EntryId::Stored(TransactionId(parse_uuid("id", &id)?)),
            user_id: UserId(parse_uuid("user_id", &user_id)?),
            account_id: AccountId(parse_uuid("account_id", &account_id)?),
            currency,
            state: TransactionState {
                date: parse_day("date", &date)?,
                tx_type: TxType::parse(&tx_type).ok_or_else(|| corrupt("type", &tx_type))?,
                status: TxStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
                amount: Money::from_cents(amount_cents),
                description,
                notes,
                category_id: parse_opt_uuid("category_id", category_id)?.map(CategoryId),
                tag_ids: Vec::new(),
                hide_from_results: hide_from_results.get(),
            },
            tags: Vec::new(),
            bill_to_account_id: parse_opt_uuid("bill_to_account_id", bill_to_account_id)?
                .map(AccountId),
            recurrence_id: parse_opt_uuid("recurrence_id", recurrence_id)?.map(RuleId),
            recurrence_period_date: recurrence_period_date
                .map(|d| parse_day("recurrence_period_date", &d))
                .transpose()?,
            installment,
            transfer_group_id: parse_opt_uuid("transfer_group_id", transfer_group_id)?,
            created_by_user: created_by_user.get(),
            source: Source::parse(&source).ok_or_else(|| corrupt("source", &source))?,
            card_number,
            holder,
            holder_is_me: holder_is_me.get(),
            original_description,
            receipt_name,
            open_finance: open_finance.get(),
            created_at: created_at
                .parse()
                .map_err(|_| corrupt("created_at", &created_at))?,
        })
    }
}

/// Loads the tags of `rows` in one query and attaches them, ordered by title.
async fn attach_tags(
    conn: &mut <Db as sqlx::Database>::Connection,
    rows: &mut [Transaction],
) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut query = QueryBuilder::<Db>::new(
        "SELECT tt.transaction_id, g.id, g.title, g.color_hex FROM transaction_tags tt \
         JOIN tags g ON g.id = tt.tag_id WHERE tt.transaction_id IN (",
    );
    let mut list = query.separated(", ");
    for row in rows.iter() {
        list.push_bind(row.id.to_string());
    }
    query.push(")");
    let mut by_row: HashMap<EntryId, Vec<TagRef>> = HashMap::new();
    for row in query.build().fetch_all(&mut *conn).await? {
        by_row
            .entry(EntryId::Stored(TransactionId(get_uuid(
                &row,
                "transaction_id",
            )?)))
            .or_default()
            .push(TagRef {
                id: TagId(get_uuid(&row, "id")?),
                title: row.try_get("title")?,
                color_hex: row.try_get("color_hex")?,
            });
    }
    for row in rows.iter_mut() {
        let mut tags = by_row.remove(&row.id).unwrap_or_default();
        tags.sort_by(|a, b| {
            sort_key(&a.title)
                .cmp(&sort_key(&b.title))
                .then(a.id.cmp(&b.id))
        });
        row.state.tag_ids = tags.iter().map(|t| t.id).collect();
        row.tags = tags;
    }
    Ok(())
}

// ------------------------------------------------------------ shared steps

async fn fetch_account(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: AccountId,
) -> StoreResult<Option<AccountView>> {
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}, {BALANCE_COLUMN} FROM accounts a WHERE a.id = $1 AND a.user_id = $2"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(account_view_from_row).transpose()
}

async fn fetch_categories(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
) -> StoreResult<Vec<Category>> {
    let rows = sqlx::query(CATEGORY_SELECT)
        .bind(user.to_string())
        .fetch_all(&mut *conn)
        .await?;
    let mut list = rows
        .iter()
        .map(category_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    list.sort_by(|a, b| {
        sort_key(&a.title)
            .cmp(&sort_key(&b.title))
            .then(a.id.cmp(&b.id))
    });
    Ok(list)
}

async fn fetch_transaction(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: TransactionId,
) -> StoreResult<Option<Transaction>> {
    let mut query = entries_query();
    query.push(" WHERE t.id = ").push_bind(id.to_string());
    query.push(" AND t.user_id = ").push_bind(user.to_string());
    Ok(fetch_entries(conn, query).await?.pop())
}

/// Checks that a category is visible to the user and all tags are theirs.
async fn check_references(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    category: Option<CategoryId>,
    tags: &[TagId],
) -> StoreResult<()> {
    if let Some(category) = category {
        let found = sqlx::query(
            "SELECT id FROM categories WHERE id = $1 AND (user_id IS NULL OR user_id = $2)",
        )
        .bind(category.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
        if found.is_none() {
            return Err(DomainError::field("category_id", "no such category").into());
        }
    }
    if !tags.is_empty() {
        let mut query = QueryBuilder::<Db>::new("SELECT id FROM tags WHERE user_id = ");
        query.push_bind(user.to_string()).push(" AND id IN (");
        let mut list = query.separated(", ");
        for tag in tags {
            list.push_bind(tag.to_string());
        }
        query.push(")");
        let found: Vec<String> = query
            .build()
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|r| r.try_get("id"))
            .collect::<Result<_, _>>()?;
        if let Some(missing) = tags.iter().find(|t| !found.contains(&t.to_string())) {
            return Err(DomainError::field("tag_ids", format!("no such tag: {missing}")).into());
        }
    }
    Ok(())
}

async fn replace_tags(
    conn: &mut <Db as sqlx::Database>::Connection,
    id: TransactionId,
    tags: &[TagId],
) -> StoreResult<()> {
    sqlx::query("DELETE FROM transaction_tags WHERE transaction_id = $1")
        .bind(id.to_string())
        .execute(&mut *conn)
        .await?;
    for tag in tags {
        sqlx::query("INSERT INTO transaction_tags (transaction_id, tag_id) VALUES ($1, $2)")
            .bind(id.to_string())
            .bind(tag.to_string())
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// A stored row as the store writes it.
struct RowInsert<'a> {
    id: TransactionId,
    user: UserId,
    account: &'a Account,
    state: &'a TransactionState,
    link: SeriesLink,
    source: Source,
    fingerprint: Option<&'a str>,
    now: Timestamp,
}

async fn insert_transaction(
    conn: &mut <Db as sqlx::Database>::Connection,
    row: RowInsert<'_>,
) -> StoreResult<()> {
    let now = format_timestamp(row.now);
    let state = row.state;
    sqlx::query(
        "INSERT INTO transactions (id, user_id, account_id, date, type, status, amount_cents, \
         currency, description, notes, category_id, created_by_user, source, hide_from_results, \
         search_text, fingerprint, created_at, updated_at, recurrence_id, recurrence_period_date, \
         installment_purchase_id, installment_number) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, \
         $18, $19, $20, $21)",
    )
    .bind(row.id.to_string())
    .bind(row.user.to_string())
    .bind(row.account.id.to_string())
    .bind(format_date(state.date))
    .bind(state.tx_type.as_str())
    .bind(state.status.as_str())
    .bind(state.amount.cents())
    .bind(row.account.state.currency.clone())
    .bind(state.description.clone())
    .bind(state.notes.clone())
    .bind(opt_string(state.category_id))
    .bind(true)
    .bind(row.source.as_str())
    .bind(state.hide_from_results)
    .bind(search_text(
        &state.description,
        state.notes.as_deref(),
        None,
    ))
    .bind(row.fingerprint.map(str::to_owned))
    .bind(now)
    .bind(match row.link {
        SeriesLink::Recurrence { rule_id, .. } => Some(rule_id.to_string()),
        _ => None,
    })
    .bind(match row.link {
        SeriesLink::Recurrence { period_date, .. } => Some(format_date(period_date)),
        _ => None,
    })
    .bind(match row.link {
        SeriesLink::Installment { purchase_id, .. } => Some(purchase_id.to_string()),
        _ => None,
    })
    .bind(match row.link {
        SeriesLink::Installment { number, .. } => Some(i32::from(number)),
        _ => None,
    })
    .execute(&mut *conn)
    .await?;
    replace_tags(conn, row.id, &state.tag_ids).await
}

/// Ties a stored row to the bill payment it is a leg of.
async fn mark_payment_leg(
    conn: &mut <Db as sqlx::Database>::Connection,
    id: TransactionId,
    leg: &cofre_domain::card::PaymentLeg,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE transactions SET transfer_group_id = $2, bill_month = $3, \
         bill_to_account_id = $4 WHERE id = $1",
    )
    .bind(id.to_string())
    .bind(leg.group.to_string())
    .bind(leg.month.key())
    .bind(leg.bank_side.then(|| leg.card_id.to_string()))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn write_account_state(
    conn: &mut <Db as sqlx::Database>::Connection,
    id: AccountId,
    state: &AccountState,
) -> StoreResult<()> {
    let credit = state.credit.as_ref();
    sqlx::query(
        "UPDATE accounts SET type = $2, sub_type = $3, title = $4, archived = $5, \
         exclude_from_totals = $6, currency = $7, credit_close_day = $8, credit_due_day = $9, \
         credit_cycle_auto = $10, credit_limit_cents = $11, pay_bill_from_account_id = $12, \
         icon_id = $13, card_icon_id = $14 WHERE id = $1",
    )
    .bind(id.to_string())
    .bind(state.account_type.as_str())
    .bind(state.sub_type.as_str())
    .bind(state.title.clone())
    .bind(state.archived)
    .bind(state.exclude_from_totals)
    .bind(state.currency.clone())
    .bind(credit.map(|c| i32::from(c.close_day)))
    .bind(credit.map(|c| i32::from(c.due_day)))
    .bind(credit.map(|c| c.cycle_auto))
    .bind(credit.map(|c| c.limit.cents()))
    .bind(opt_string(state.pay_bill_from_account_id))
    .bind(state.icon_id.clone())
    .bind(state.card_icon_id.clone())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Looks up the paying account a change names, among the user's accounts.
async fn pay_from_for(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    changes: &AccountChanges,
) -> StoreResult<Option<Account>> {
    match changes.pay_bill_from_account_id {
        Patch::Set(id) => Ok(fetch_account(conn, user, id).await?.map(|v| v.account)),
        _ => Ok(None),
    }
}

async fn set_category_archived(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: CategoryId,
    archived: bool,
) -> StoreResult<()> {
    sqlx::query("DELETE FROM category_archives WHERE user_id = $1 AND category_id = $2")
        .bind(user.to_string())
        .bind(id.to_string())
        .execute(&mut *conn)
        .await?;
    if archived {
        sqlx::query("INSERT INTO category_archives (user_id, category_id) VALUES ($1, $2)")
            .bind(user.to_string())
            .bind(id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

fn push_id_list<T: ToString>(query: &mut QueryBuilder<Db>, column: &str, ids: &[T]) {
    if ids.is_empty() {
        // An empty list selects nothing, like an IN () would.
        query.push(" AND 1 = 0");
        return;
    }
    query.push(format_args!(" AND {column} IN ("));
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(id.to_string());
    }
    query.push(")");
}

/// Pushes the JOIN and WHERE of a list filter onto a query over
/// `transactions t` (the list page and bulk selections share it).
fn push_filter(query: &mut QueryBuilder<Db>, user: UserId, filter: &TransactionFilter) {
    if filter.sub_types.is_some() {
        query.push(" JOIN accounts a ON a.id = t.account_id");
    }
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(" AND t.date >= ")
        .push_bind(format_date(filter.from));
    query
        .push(" AND t.date <= ")
        .push_bind(format_date(filter.to));
    query
        .push(" AND t.hide_from_results = ")
        .push_bind(filter.hidden);
    if filter.cashflow {
        query
            .push(" AND t.account_id NOT IN (SELECT c.id FROM accounts c WHERE c.user_id = ")
            .push_bind(user.to_string())
            .push(" AND c.type = 'CREDIT')");
    }
    if let Some(status) = filter.status {
        query.push(" AND t.status = ").push_bind(status.as_str());
    }
    if let Some(tx_type) = filter.tx_type {
        query.push(" AND t.type = ").push_bind(tx_type.as_str());
    }
    if let Some(ids) = &filter.account_ids {
        push_id_list(query, "t.account_id", ids);
    }
    if let Some(ids) = &filter.category_ids {
        push_id_list(query, "t.category_id", ids);
    }
    if let Some(sub_types) = &filter.sub_types {
        let names: Vec<&str> = sub_types.iter().map(|s| s.as_str()).collect();
        push_id_list(query, "a.sub_type", &names);
    }
    if let Some(ids) = &filter.tag_ids {
        query.push(
            " AND EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id",
        );
        push_id_list(query, "tt.tag_id", ids);
        query.push(")");
    }
    if filter.no_category {
        query.push(" AND t.category_id IS NULL");
    }
    if filter.no_tags {
        query.push(
            " AND NOT EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id)",
        );
    }
    if filter.is_recurring {
        query.push(" AND t.recurrence_id IS NOT NULL");
    }
    if filter.is_installments {
        query.push(" AND t.installment_purchase_id IS NOT NULL");
    }
    if let Some(search) = &filter.search {
        query
            .push(" AND t.search_text LIKE ")
            .push_bind(like_pattern(search))
            .push(" ESCAPE '\\'");
    }
}

/// `%`, `_` and `\` in a search are literal characters, not wildcards.
fn like_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

// --------------------------------------------------------- rules and plans

const RULE_COLUMNS: &str = "id, user_id, account_id, type, amount_cents, description, notes, \
    category_id, tag_ids, frequency, interval_count, start_date, end_date, occurrence_count, created_at";

const PLAN_COLUMNS: &str = "id, user_id, account_id, type, total_cents, description, notes, \
    category_id, tag_ids, installment_count, first_date, hidden, created_at";

fn description_key(description: &str) -> String {
    cofre_domain::text::lower(description.trim())
}

fn tags_text(tags: &[TagId]) -> String {
    tags.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn template_from_row(row: &DbRow, amount_column: &str) -> StoreResult<Template> {
    let type_text: String = row.try_get("type")?;
    let tags: String = row.try_get("tag_ids")?;
    let tag_ids = tags
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|t| TagId::parse(t).ok_or_else(|| corrupt("tag_ids", t)))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Template {
        tx_type: TxType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?,
        amount: Money::from_cents(row.try_get(amount_column)?),
        description: row.try_get("description")?,
        notes: row.try_get("notes")?,
        category_id: get_opt_uuid(row, "category_id")?.map(CategoryId),
        tag_ids,
    })
}

fn rule_from_row(row: &DbRow) -> StoreResult<RecurrenceRule> {
    let frequency: String = row.try_get("frequency")?;
    let interval: i32 = row.try_get("interval_count")?;
    let count: Option<i32> = row.try_get("occurrence_count")?;
    Ok(RecurrenceRule {
        id: RuleId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        account_id: AccountId(get_uuid(row, "account_id")?),
        template: template_from_row(row, "amount_cents")?,
        schedule: Schedule {
            frequency: Frequency::parse(&frequency)
                .ok_or_else(|| corrupt("frequency", &frequency))?,
            interval: u32::try_from(interval)
                .map_err(|_| corrupt("interval_count", &interval.to_string()))?,
            start: get_date(row, "start_date")?,
            end_date: get_opt_date(row, "end_date")?,
            count: count
                .map(|c| u32::try_from(c).map_err(|_| corrupt("occurrence_count", &c.to_string())))
                .transpose()?,
        },
        created_at: get_ts(row, "created_at")?,
    })
}

fn plan_from_row(row: &DbRow) -> StoreResult<InstallmentPlan> {
    let count: i32 = row.try_get("installment_count")?;
    Ok(InstallmentPlan {
        id: PurchaseId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        account_id: AccountId(get_uuid(row, "account_id")?),
        template: template_from_row(row, "total_cents")?,
        count: u16::try_from(count)
            .map_err(|_| corrupt("installment_count", &count.to_string()))?,
        first_date: get_date(row, "first_date")?,
        hidden: row.try_get("hidden")?,
        created_at: get_ts(row, "created_at")?,
    })
}

/// Inserts or replaces a rule.
async fn put_rule(
    conn: &mut <Db as sqlx::Database>::Connection,
    rule: &RecurrenceRule,
    now: Timestamp,
) -> StoreResult<()> {
    let t = &rule.template;
    sqlx::query(
        "INSERT INTO recurrence_rules (id, user_id, account_id, type, amount_cents, description, \
         description_key, notes, category_id, tag_ids, frequency, interval_count, start_date, \
         end_date, occurrence_count, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
         ON CONFLICT (id) DO UPDATE SET type = excluded.type, amount_cents = excluded.amount_cents, \
         description = excluded.description, description_key = excluded.description_key, \
         notes = excluded.notes, category_id = excluded.category_id, tag_ids = excluded.tag_ids, \
         frequency = excluded.frequency, interval_count = excluded.interval_count, \
         start_date = excluded.start_date, end_date = excluded.end_date, \
         occurrence_count = excluded.occurrence_count, updated_at = excluded.updated_at",
    )
    .bind(rule.id.to_string())
    .bind(rule.user_id.to_string())
    .bind(rule.account_id.to_string())
    .bind(t.tx_type.as_str())
    .bind(t.amount.cents())
    .bind(t.description.clone())
    .bind(description_key(&t.description))
    .bind(t.notes.clone())
    .bind(opt_string(t.category_id))
    .bind(tags_text(&t.tag_ids))
    .bind(rule.schedule.frequency.as_str())
    .bind(i32::try_from(rule.schedule.interval).unwrap_or(i32::MAX))
    .bind(format_date(rule.schedule.start))
    .bind(rule.schedule.end_date.map(format_date))
    .bind(rule.schedule.count.map(|c| i32::try_from(c).unwrap_or(i32::MAX)))
    .bind(format_timestamp(rule.created_at))
    .bind(format_timestamp(now))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Inserts or replaces an installment plan.
async fn put_plan(
    conn: &mut <Db as sqlx::Database>::Connection,
    plan: &InstallmentPlan,
    now: Timestamp,
) -> StoreResult<()> {
    let t = &plan.template;
    let last = plan.date_of(plan.count).unwrap_or(plan.first_date);
    sqlx::query(
        "INSERT INTO installment_plans (id, user_id, account_id, type, total_cents, description, \
         notes, category_id, tag_ids, installment_count, first_date, last_date, hidden, \
         created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
         ON CONFLICT (id) DO UPDATE SET type = excluded.type, total_cents = excluded.total_cents, \
         description = excluded.description, notes = excluded.notes, \
         category_id = excluded.category_id, tag_ids = excluded.tag_ids, \
         hidden = excluded.hidden, updated_at = excluded.updated_at",
    )
    .bind(plan.id.to_string())
    .bind(plan.user_id.to_string())
    .bind(plan.account_id.to_string())
    .bind(t.tx_type.as_str())
    .bind(t.amount.cents())
    .bind(t.description.clone())
    .bind(t.notes.clone())
    .bind(opt_string(t.category_id))
    .bind(tags_text(&t.tag_ids))
    .bind(i32::from(plan.count))
    .bind(format_date(plan.first_date))
    .bind(format_date(last))
    .bind(plan.hidden)
    .bind(format_timestamp(plan.created_at))
    .bind(format_timestamp(now))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn fetch_rule(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: RuleId,
) -> StoreResult<Option<RecurrenceRule>> {
    let sql = format!("SELECT {RULE_COLUMNS} FROM recurrence_rules WHERE id = $1 AND user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(rule_from_row).transpose()
}

async fn fetch_plan(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: PurchaseId,
) -> StoreResult<Option<InstallmentPlan>> {
    let sql =
        format!("SELECT {PLAN_COLUMNS} FROM installment_plans WHERE id = $1 AND user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(plan_from_row).transpose()
}

/// A series with its stored rows and tombstones.
async fn load_series(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    series: SeriesRef,
) -> StoreResult<SeriesState> {
    let (loaded, id, column) = match series {
        SeriesRef::Rule(id) => (
            Series::Rule(
                fetch_rule(conn, user, id)
                    .await?
                    .ok_or(StoreError::NotFound)?,
            ),
            id.to_string(),
            "t.recurrence_id",
        ),
        SeriesRef::Plan(id) => (
            Series::Plan(
                fetch_plan(conn, user, id)
                    .await?
                    .ok_or(StoreError::NotFound)?,
            ),
            id.to_string(),
            "t.installment_purchase_id",
        ),
    };
    let mut query = entries_query();
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(format_args!(" AND {column} = "))
        .push_bind(id.clone());
    let rows = fetch_entries(conn, query).await?;
    let tombstones =
        sqlx::query("SELECT handle FROM tombstones WHERE user_id = $1 AND source_id = $2")
            .bind(user.to_string())
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|row| {
                let text: String = row.try_get("handle")?;
                Handle::parse(&text).ok_or_else(|| corrupt("handle", &text))
            })
            .collect::<StoreResult<Vec<_>>>()?;
    Ok(SeriesState {
        series: loaded,
        rows,
        tombstones,
    })
}

fn handle_source(handle: &Handle) -> String {
    match handle {
        Handle::Recurrence { rule_id, .. } => rule_id.to_string(),
        Handle::Installment { purchase_id, .. } => purchase_id.to_string(),
        Handle::Bill { card_id, .. } => card_id.to_string(),
    }
}

async fn update_row_state(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: TransactionId,
    state: &TransactionState,
    original_description: Option<&str>,
    now: Timestamp,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE transactions SET date = $3, type = $4, status = $5, amount_cents = $6, \
         description = $7, notes = $8, category_id = $9, hide_from_results = $10, \
         search_text = $11, updated_at = $12 WHERE id = $1 AND user_id = $2",
    )
    .bind(id.to_string())
    .bind(user.to_string())
    .bind(format_date(state.date))
    .bind(state.tx_type.as_str())
    .bind(state.status.as_str())
    .bind(state.amount.cents())
    .bind(state.description.clone())
    .bind(state.notes.clone())
    .bind(opt_string(state.category_id))
    .bind(state.hide_from_results)
    .bind(search_text(
        &state.description,
        state.notes.as_deref(),
        original_description,
    ))
    .bind(format_timestamp(now))
    .execute(&mut *conn)
    .await?;
    replace_tags(conn, id, &state.tag_ids).await
}

/// Applies a series write inside the caller's transaction; returns the
/// receipt file names of the rows it deleted.
async fn apply_write(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    account: &Account,
    write: &SeriesWrite,
    now: Timestamp,
) -> StoreResult<Vec<String>> {
    if let Some(id) = write.delete_rule {
        sqlx::query("DELETE FROM recurrence_rules WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *conn)
            .await?;
        sqlx::query("DELETE FROM tombstones WHERE user_id = $1 AND source_id = $2")
            .bind(user.to_string())
            .bind(id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    for rule in &write.put_rules {
        put_rule(conn, rule, now).await?;
    }
    if let Some(plan) = &write.put_plan {
        put_plan(conn, plan, now).await?;
    }
    for row in &write.insert {
        insert_transaction(
            conn,
            RowInsert {
                id: row.id,
                user,
                account,
                state: &row.state,
                link: row.link,
                source: Source::Api,
                fingerprint: None,
                now,
            },
        )
        .await?;
    }
    for (id, state) in &write.update {
        update_row_state(conn, user, *id, state, None, now).await?;
    }
    for (id, rule) in &write.relink {
        sqlx::query("UPDATE transactions SET recurrence_id = $3 WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .bind(rule.to_string())
            .execute(&mut *conn)
            .await?;
    }
    let mut receipts = Vec::new();
    for id in &write.delete {
        let deleted = sqlx::query(
            "DELETE FROM transactions WHERE id = $1 AND user_id = $2 RETURNING receipt_name",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = deleted {
            receipts.extend(row.try_get::<Option<String>, _>("receipt_name")?);
        }
    }
    if let Some(id) = write.delete_plan {
        sqlx::query("DELETE FROM installment_plans WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *conn)
            .await?;
        sqlx::query("DELETE FROM tombstones WHERE user_id = $1 AND source_id = $2")
            .bind(user.to_string())
            .bind(id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    for (handle, date) in &write.tombstones {
        insert_tombstone(conn, user, handle, *date, now).await?;
    }
    Ok(receipts)
}

/// Hides the projected entry `handle` (dated `date`) from every view.
async fn insert_tombstone(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    handle: &Handle,
    date: Date,
    now: Timestamp,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO tombstones (user_id, handle, source_id, entry_date, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, handle) DO NOTHING",
    )
    .bind(user.to_string())
    .bind(handle.to_string())
    .bind(handle_source(handle))
    .bind(format_date(date))
    .bind(format_timestamp(now))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Rules, plans, replacements and tombstones that project into a window.
async fn load_view_sources(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    from: Date,
    to: Date,
) -> StoreResult<ViewSources> {
    let (from_text, to_text) = (format_date(from), format_date(to));
    let sql = format!(
        "SELECT {RULE_COLUMNS} FROM recurrence_rules WHERE user_id = $1 AND start_date <= $3 \
         AND (end_date IS NULL OR end_date >= $2) ORDER BY id"
    );
    let rules = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(user.to_string())
        .bind(from_text.clone())
        .bind(to_text.clone())
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(rule_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM installment_plans WHERE user_id = $1 AND hidden = FALSE \
         AND first_date <= $3 AND last_date >= $2 ORDER BY id"
    );
    let plans = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(user.to_string())
        .bind(from_text.clone())
        .bind(to_text.clone())
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(plan_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    let mut sources = ViewSources {
        rules,
        plans,
        ..ViewSources::default()
    };
    // Accounts and tombstones even without rules or plans: the cashflow
    // view needs the cards and their hidden bills.
    let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts a WHERE a.user_id = $1");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(user.to_string())
        .fetch_all(&mut *conn)
        .await?;
    for row in &rows {
        let account = account_from_row(row)?;
        let card = card_info(&account);
        sources.accounts.insert(
            account.id,
            AccountInfo {
                currency: account.state.currency,
                sub_type: account.state.sub_type,
                card,
            },
        );
    }
    // Stored rows that replace projections, asked for by rule and plan on
    // their own indexes (never by scanning the user's history).
    // The rules and plans are the user's, so their ids alone select the
    // user's rows: asking by user too makes SQLite read the whole history
    // by the (user, date) index instead of these ids' own indexes.
    if !sources.rules.is_empty() {
        let mut query = QueryBuilder::<Db>::new(
            "SELECT recurrence_id, recurrence_period_date FROM transactions WHERE 1 = 1",
        );
        push_id_list(
            &mut query,
            "recurrence_id",
            &sources.rules.iter().map(|r| r.id).collect::<Vec<_>>(),
        );
        query
            .push(" AND recurrence_period_date >= ")
            .push_bind(from_text.clone())
            .push(" AND recurrence_period_date <= ")
            .push_bind(to_text.clone());
        for row in &query.build().fetch_all(&mut *conn).await? {
            sources.materialized.insert(Handle::Recurrence {
                rule_id: RuleId(get_uuid(row, "recurrence_id")?),
                date: get_date(row, "recurrence_period_date")?,
            });
        }
    }
    if !sources.plans.is_empty() {
        let mut query = QueryBuilder::<Db>::new(
            "SELECT installment_purchase_id, installment_number FROM transactions WHERE 1 = 1",
        );
        push_id_list(
            &mut query,
            "installment_purchase_id",
            &sources.plans.iter().map(|p| p.id).collect::<Vec<_>>(),
        );
        for row in &query.build().fetch_all(&mut *conn).await? {
            let number: i32 = row.try_get("installment_number")?;
            sources.materialized.insert(Handle::Installment {
                purchase_id: PurchaseId(get_uuid(row, "installment_purchase_id")?),
                number: u16::try_from(number)
                    .map_err(|_| corrupt("installment_number", &number.to_string()))?,
            });
        }
    }
    let rows = sqlx::query(
        "SELECT handle FROM tombstones WHERE user_id = $1 AND entry_date >= $2 AND entry_date <= $3",
    )
    .bind(user.to_string())
    .bind(from_text)
    .bind(to_text)
    .fetch_all(&mut *conn)
    .await?;
    for row in &rows {
        let text: String = row.try_get("handle")?;
        let handle = Handle::parse(&text).ok_or_else(|| corrupt("handle", &text))?;
        sources.tombstones.insert(handle);
    }
    let uses_tags = sources.rules.iter().any(|r| !r.template.tag_ids.is_empty())
        || sources.plans.iter().any(|p| !p.template.tag_ids.is_empty());
    if uses_tags {
        let rows = sqlx::query("SELECT id, title, color_hex FROM tags WHERE user_id = $1")
            .bind(user.to_string())
            .fetch_all(&mut *conn)
            .await?;
        for row in &rows {
            let id = TagId(get_uuid(row, "id")?);
            sources.tags.insert(
                id,
                TagRef {
                    id,
                    title: row.try_get("title")?,
                    color_hex: row.try_get("color_hex")?,
                },
            );
        }
    }
    Ok(sources)
}

// ------------------------------------------------------------------ store

#[async_trait]
impl Store for SqlStore {
    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn count_users(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("n")?)
    }

    async fn create_user(&self, name: Option<&str>, now: Timestamp) -> StoreResult<Profile> {
        let id = UserId::new();
        sqlx::query("INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(id.to_string())
            .bind(name.map(str::to_owned))
            .bind(format_timestamp(now))
            .execute(&self.pool)
            .await?;
        self.get_profile(id).await
    }

    async fn get_profile(&self, user: UserId) -> StoreResult<Profile> {
        let row = sqlx::query(
            "SELECT id, name, wage_cents, monthly_living_cost_cents, has_spouse, has_children, \
             is_entrepreneur FROM users WHERE id = $1",
        )
        .bind(user.to_string())
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        profile_from_row(&row)
    }

    async fn update_profile(&self, user: UserId, changes: &ProfileChanges) -> StoreResult<Profile> {
        let mut tx = self.begin_write(user).await?;
        let row = sqlx::query(
            "SELECT id, name, wage_cents, monthly_living_cost_cents, has_spouse, has_children, \
             is_entrepreneur FROM users WHERE id = $1",
        )
        .bind(user.to_string())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let next = profile_rules::apply_changes(&profile_from_row(&row)?, changes)?;
        sqlx::query(
            "UPDATE users SET name = $2, wage_cents = $3, monthly_living_cost_cents = $4, \
             has_spouse = $5, has_children = $6, is_entrepreneur = $7 WHERE id = $1",
        )
        .bind(user.to_string())
        .bind(next.name.clone())
        .bind(next.wage.map(Money::cents))
        .bind(next.monthly_living_cost.map(Money::cents))
        .bind(next.has_spouse)
        .bind(next.has_children)
        .bind(next.is_entrepreneur)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(next)
    }

    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        let result = sqlx::query(
            "INSERT INTO api_keys (id, user_id, secret_hash, scopes, label, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(key.id.to_string())
        .bind(key.user_id.to_string())
        .bind(key.secret_hash.clone())
        .bind(format_scopes(&key.scopes))
        .bind(key.label.clone())
        .bind(format_timestamp(key.created_at))
        .execute(&self.pool)
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(db)) if db.is_foreign_key_violation() => {
                Err(StoreError::NotFound)
            }
            Err(err) => Err(err.into()),
        }
    }

    async fn find_api_key(&self, id: ApiKeyId) -> StoreResult<Option<FoundKey>> {
        let row = sqlx::query(
            "SELECT k.id, k.user_id, k.secret_hash, k.scopes, k.label, k.created_at, k.revoked_at, \
             u.view_version FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref()
            .map(|row| {
                Ok(FoundKey {
                    key: api_key_from_row(row)?,
                    view_version: row.try_get("view_version")?,
                })
            })
            .transpose()
    }

    async fn list_api_keys(&self, user: UserId) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(
            "SELECT id, user_id, secret_hash, scopes, label, created_at, revoked_at \
             FROM api_keys WHERE user_id = $1 ORDER BY created_at, id",
        )
        .bind(user.to_string())
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(api_key_from_row).collect()
    }

    async fn revoke_api_key(&self, id: ApiKeyId, now: Timestamp) -> StoreResult<bool> {
        let done =
            sqlx::query("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1")
                .bind(id.to_string())
                .bind(format_timestamp(now))
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn list_accounts(&self, user: UserId) -> StoreResult<Vec<AccountView>> {
        let sql = format!(
            "SELECT {ACCOUNT_COLUMNS}, {BALANCE_COLUMN} FROM accounts a WHERE a.user_id = $1 \
             ORDER BY a.created_at, a.id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(user.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(account_view_from_row).collect()
    }

    async fn get_account(&self, user: UserId, id: AccountId) -> StoreResult<AccountView> {
        let mut conn = self.pool.acquire().await?;
        fetch_account(&mut conn, user, id)
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
        let mut tx = self.begin_write(user).await?;
        let pay_from = pay_from_for(&mut tx, user, changes).await?;
        let state =
            account_rules::apply_changes(None, changes, pay_from.as_ref(), default_currency)?;
        let id = AccountId::new();
        sqlx::query(
            "INSERT INTO accounts (id, user_id, type, sub_type, title, currency, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(state.account_type.as_str())
        .bind(state.sub_type.as_str())
        .bind(state.title.clone())
        .bind(state.currency.clone())
        .bind(format_timestamp(ctx.now))
        .execute(&mut *tx)
        .await?;
        write_account_state(&mut tx, id, &state).await?;
        let account = fetch_account(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;

        let opening = match initial_balance {
            Some(amount) if amount != Money::ZERO => {
                let row_id = TransactionId::new();
                let opening = TransactionState {
                    date: ctx.today,
                    tx_type: if amount.is_negative() {
                        TxType::Debit
                    } else {
                        TxType::Credit
                    },
                    status: TxStatus::Posted,
                    amount: amount.abs(),
                    description: "Saldo inicial".to_owned(),
                    notes: None,
                    category_id: None,
                    tag_ids: Vec::new(),
                    hide_from_results: true,
                };
                insert_transaction(
                    &mut tx,
                    RowInsert {
                        id: row_id,
                        user,
                        account: &account,
                        state: &opening,
                        link: SeriesLink::None,
                        source: Source::Api,
                        fingerprint: None,
                        now: ctx.now,
                    },
                )
                .await?;
                Some(row_id)
            }
            _ => None,
        };
        let view = fetch_account(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok((view, opening))
    }

    async fn update_account(
        &self,
        user: UserId,
        id: AccountId,
        changes: &AccountChanges,
    ) -> StoreResult<AccountView> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_account(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let pay_from = pay_from_for(&mut tx, user, changes).await?;
        let state = account_rules::apply_changes(
            Some(&current.account),
            changes,
            pay_from.as_ref(),
            &current.account.state.currency,
        )?;
        if current.account.state.account_type == AccountType::Bank
            && state.account_type == AccountType::Credit
        {
            // A card cannot pay bills of other cards: clear links to it.
            sqlx::query(
                "UPDATE accounts SET pay_bill_from_account_id = NULL \
                 WHERE pay_bill_from_account_id = $1",
            )
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
        }
        write_account_state(&mut tx, id, &state).await?;
        let view = fetch_account(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(view)
    }

    async fn delete_account(&self, user: UserId, id: AccountId) -> StoreResult<Vec<String>> {
        let mut tx = self.begin_write(user).await?;
        let receipts: Vec<String> = sqlx::query(
            "SELECT receipt_name FROM transactions WHERE account_id = $1 AND user_id = $2 \
             AND receipt_name IS NOT NULL",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.try_get("receipt_name"))
        .collect::<Result<_, _>>()?;
        // Rows and their tags go with the account (ON DELETE CASCADE);
        // references from other accounts and rows are cleared (SET NULL).
        let done = sqlx::query("DELETE FROM accounts WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(receipts)
    }

    async fn list_categories(&self, user: UserId) -> StoreResult<Vec<Category>> {
        let mut conn = self.pool.acquire().await?;
        fetch_categories(&mut conn, user).await
    }

    async fn create_category(
        &self,
        user: UserId,
        changes: &CategoryChanges,
        now: Timestamp,
    ) -> StoreResult<Category> {
        let mut tx = self.begin_write(user).await?;
        let visible = fetch_categories(&mut tx, user).await?;
        let state = category_rules::apply_changes(None, changes, &visible)?;
        let id = CategoryId::new();
        sqlx::query(
            "INSERT INTO categories (id, user_id, title, parent_id, icon_id, color_hex, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(state.title.clone())
        .bind(opt_string(state.parent_id))
        .bind(state.icon_id.clone())
        .bind(state.color_hex.clone())
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await?;
        set_category_archived(&mut tx, user, id, state.archived).await?;
        let created = fetch_categories(&mut tx, user)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(created)
    }

    async fn update_category(
        &self,
        user: UserId,
        id: CategoryId,
        changes: &CategoryChanges,
    ) -> StoreResult<Category> {
        let mut tx = self.begin_write(user).await?;
        let visible = fetch_categories(&mut tx, user).await?;
        let current = visible
            .iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        let state = category_rules::apply_changes(Some(current), changes, &visible)?;
        if !current.is_system() {
            sqlx::query(
                "UPDATE categories SET title = $3, parent_id = $4, icon_id = $5, color_hex = $6 \
                 WHERE id = $1 AND user_id = $2",
            )
            .bind(id.to_string())
            .bind(user.to_string())
            .bind(state.title.clone())
            .bind(opt_string(state.parent_id))
            .bind(state.icon_id.clone())
            .bind(state.color_hex.clone())
            .execute(&mut *tx)
            .await?;
        }
        set_category_archived(&mut tx, user, id, state.archived).await?;
        let updated = fetch_categories(&mut tx, user)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(updated)
    }

    async fn list_tags(&self, user: UserId) -> StoreResult<Vec<Tag>> {
        let rows = sqlx::query(
            "SELECT id, user_id, title, color_hex, created_at FROM tags WHERE user_id = $1",
        )
        .bind(user.to_string())
        .fetch_all(&self.pool)
        .await?;
        let mut tags = rows
            .iter()
            .map(tag_from_row)
            .collect::<StoreResult<Vec<_>>>()?;
        tags.sort_by(|a, b| {
            sort_key(&a.title)
                .cmp(&sort_key(&b.title))
                .then(a.id.cmp(&b.id))
        });
        Ok(tags)
    }

    async fn create_tag(&self, user: UserId, tag: &NewTag, now: Timestamp) -> StoreResult<Tag> {
        let created = Tag {
            id: TagId::new(),
            user_id: user,
            title: tag.title.clone(),
            color_hex: tag.color_hex.clone(),
            created_at: now,
        };
        let mut tx = self.begin_write(user).await?;
        let result = sqlx::query(
            "INSERT INTO tags (id, user_id, title, title_key, color_hex, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(created.id.to_string())
        .bind(user.to_string())
        .bind(tag.title.clone())
        .bind(tag.title_key.clone())
        .bind(tag.color_hex.clone())
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await;
        match result {
            Ok(_) => {
                tx.commit().await?;
                Ok(created)
            }
            Err(err) if is_unique_violation(&err) => Err(StoreError::TitleConflict),
            Err(err) => Err(err.into()),
        }
    }

    async fn create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        plan: Option<&InstallmentPlan>,
        now: Timestamp,
    ) -> StoreResult<Created<Transaction>> {
        match self.try_create_transaction(user, new, plan, now).await {
            // Two identical requests raced: the loser sees the winner's row.
            Err(StoreError::Database(err)) if new.client_chosen_id && is_unique_violation(&err) => {
                self.try_create_transaction(user, new, plan, now).await
            }
            other => other,
        }
    }

    async fn create_rule(
        &self,
        user: UserId,
        rule: &RecurrenceRule,
    ) -> StoreResult<Created<RecurrenceRule>> {
        let mut tx = self.begin_write(user).await?;
        fetch_account(&mut tx, user, rule.account_id)
            .await?
            .ok_or_else(|| StoreError::from(DomainError::field("account_id", "no such account")))?;
        check_references(
            &mut tx,
            user,
            rule.template.category_id,
            &rule.template.tag_ids,
        )
        .await?;
        let sql = format!(
            "SELECT {RULE_COLUMNS} FROM recurrence_rules WHERE user_id = $1 AND account_id = $2 \
             AND type = $3 AND amount_cents = $4 AND description_key = $5 AND frequency = $6 \
             AND interval_count = $7 AND start_date = $8 ORDER BY created_at, id LIMIT 1"
        );
        let existing = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(user.to_string())
            .bind(rule.account_id.to_string())
            .bind(rule.template.tx_type.as_str())
            .bind(rule.template.amount.cents())
            .bind(description_key(&rule.template.description))
            .bind(rule.schedule.frequency.as_str())
            .bind(i64::from(rule.schedule.interval))
            .bind(format_date(rule.schedule.start))
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existing {
            return Ok(Created {
                value: rule_from_row(&row)?,
                deduped: true,
            });
        }
        put_rule(&mut tx, rule, rule.created_at).await?;
        tx.commit().await?;
        Ok(Created {
            value: rule.clone(),
            deduped: false,
        })
    }

    async fn get_plan(&self, user: UserId, id: PurchaseId) -> StoreResult<InstallmentPlan> {
        let mut conn = self.pool.acquire().await?;
        fetch_plan(&mut conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn get_rule(&self, user: UserId, id: RuleId) -> StoreResult<RecurrenceRule> {
        let mut conn = self.pool.acquire().await?;
        fetch_rule(&mut conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn view_sources(
        &self,
        user: UserId,
        from: Date,
        to: Date,
    ) -> StoreResult<Arc<ViewSources>> {
        let mut conn = self.pool.acquire().await?;
        let version = view_version(&mut conn, user).await?;
        let key = (user, from, to);
        if let Some(sources) = self.sources.get(&key, version) {
            return Ok(sources);
        }
        let sources = Arc::new(load_view_sources(&mut conn, user, from, to).await?);
        self.sources.put(key, version, sources.clone());
        Ok(sources)
    }

    async fn import(&self, user: UserId, batch: &ImportBatch, now: Timestamp) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        let mut accounts: HashMap<AccountId, Account> = HashMap::new();
        for view in sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ACCOUNT_COLUMNS}, CAST(0 AS BIGINT) AS balance_cents FROM accounts a WHERE a.user_id = $1"
        )))
        .bind(user.to_string())
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(account_view_from_row)
        {
            let view = view?;
            accounts.insert(view.account.id, view.account);
        }
        let owned = |id: AccountId| {
            accounts.get(&id).ok_or_else(|| {
                StoreError::from(DomainError::field("account_id", "no such account"))
            })
        };
        for rule in &batch.rules {
            owned(rule.account_id)?;
            put_rule(&mut tx, rule, now).await?;
        }
        for plan in &batch.plans {
            owned(plan.account_id)?;
            put_plan(&mut tx, plan, now).await?;
        }
        for row in &batch.rows {
            let account = owned(row.account_id)?;
            insert_transaction(
                &mut tx,
                RowInsert {
                    id: row.id,
                    user,
                    account,
                    state: &row.state,
                    link: row.link,
                    source: Source::Api,
                    fingerprint: None,
                    now,
                },
            )
            .await?;
            if let Some(leg) = &row.payment {
                mark_payment_leg(&mut tx, row.id, leg).await?;
            }
        }
        tx.commit().await?;
        Ok(())
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
        self.import_statement_rows(user, account, statement, ctx).await
    }

    async fn apply_series(
        &self,
        user: UserId,
        series: SeriesRef,
        references: &References,
        op: SeriesOp,
        now: Timestamp,
    ) -> StoreResult<SeriesApplied> {
        let mut tx = self.begin_write(user).await?;
        let state = load_series(&mut tx, user, series).await?;
        check_references(&mut tx, user, references.category, &references.tags).await?;
        let (write, outcome) = op(&state)?;
        let account_id = match &state.series {
            Series::Rule(rule) => rule.account_id,
            Series::Plan(plan) => plan.account_id,
        };
        let account = fetch_account(&mut tx, user, account_id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;
        let removed_receipts = apply_write(&mut tx, user, &account, &write, now).await?;
        tx.commit().await?;
        Ok(SeriesApplied {
            outcome,
            removed_receipts,
        })
    }

    async fn get_transaction(&self, user: UserId, id: TransactionId) -> StoreResult<Transaction> {
        let mut conn = self.pool.acquire().await?;
        fetch_transaction(&mut conn, user, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn update_transaction(
        &self,
        user: UserId,
        id: TransactionId,
        changes: &TransactionChanges,
        now: Timestamp,
    ) -> StoreResult<Transaction> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_transaction(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let state = tx_rules::apply_changes(&current.state, changes)?;
        let category_changed = state.category_id != current.state.category_id;
        let new_category = if category_changed {
            state.category_id
        } else {
            None
        };
        let new_tags: Vec<TagId> = match &changes.tag_ids {
            Some(_) => state.tag_ids.clone(),
            None => Vec::new(),
        };
        check_references(&mut tx, user, new_category, &new_tags).await?;
        update_row_state(
            &mut tx,
            user,
            id,
            &state,
            current.original_description.as_deref(),
            now,
        )
        .await?;
        let updated = fetch_transaction(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(updated)
    }

    async fn delete_transaction(
        &self,
        user: UserId,
        id: TransactionId,
    ) -> StoreResult<Option<String>> {
        let mut tx = self.begin_write(user).await?;
        let row =
            sqlx::query("SELECT receipt_name FROM transactions WHERE id = $1 AND user_id = $2")
                .bind(id.to_string())
                .bind(user.to_string())
                .fetch_optional(&mut *tx)
                .await?
                .ok_or(StoreError::NotFound)?;
        let receipt: Option<String> = row.try_get("receipt_name")?;
        sqlx::query("DELETE FROM transactions WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(receipt)
    }

    async fn list_transactions(
        &self,
        user: UserId,
        filter: &TransactionFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Transaction>> {
        let mut conn = self.pool.acquire().await?;
        let mut query = entries_query();
        push_filter(&mut query, user, filter);
        if let Some(after) = &page.after {
            let date = format_date(after.date);
            query
                .push(" AND (t.date < ")
                .push_bind(date.clone())
                .push(" OR (t.date = ")
                .push_bind(date)
                .push(" AND t.id > ")
                .push_bind(after.id.clone())
                .push("))");
        }
        let fetch = i64::try_from(page.limit)
            .unwrap_or(i64::MAX)
            .saturating_add(1);
        query
            .push(" ORDER BY t.date DESC, t.id ASC LIMIT ")
            .push_bind(fetch);

        let mut items = fetch_entries(&mut conn, query).await?;
        // The aggregate need not keep the subquery's order: restore it.
        items.sort_by_cached_key(|e| (std::cmp::Reverse(e.state.date), e.id.to_string()));
        let has_more = items.len() > page.limit;
        items.truncate(page.limit);
        Ok(Page { items, has_more })
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

    async fn card_money(&self, user: UserId) -> StoreResult<Arc<HashMap<AccountId, CardMoney>>> {
        self.card_money_of(user).await
    }

    async fn pay_bill(
        &self,
        user: UserId,
        payment: &cofre_domain::bills::NewBillPayment,
        now: Timestamp,
    ) -> StoreResult<()> {
        self.pay_bill_in_tx(user, payment, now).await
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

impl SqlStore {
    async fn try_create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        plan: Option<&InstallmentPlan>,
        now: Timestamp,
    ) -> StoreResult<Created<Transaction>> {
        let mut tx = self.begin_write(user).await?;
        if new.client_chosen_id {
            let existing =
                sqlx::query("SELECT user_id, fingerprint FROM transactions WHERE id = $1")
                    .bind(new.id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some(row) = existing {
                let owner: String = row.try_get("user_id")?;
                let fingerprint: Option<String> = row.try_get("fingerprint")?;
                if owner != user.to_string() || fingerprint.as_deref() != Some(&new.fingerprint) {
                    return Err(StoreError::IdConflict);
                }
                let value = fetch_transaction(&mut tx, user, new.id)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                return Ok(Created {
                    value,
                    deduped: true,
                });
            }
        }
        let account = fetch_account(&mut tx, user, new.account_id)
            .await?
            .ok_or_else(|| StoreError::from(DomainError::field("account_id", "no such account")))?
            .account;
        check_references(&mut tx, user, new.state.category_id, &new.state.tag_ids).await?;
        if let Some(plan) = plan {
            put_plan(&mut tx, plan, now).await?;
        }
        insert_transaction(
            &mut tx,
            RowInsert {
                id: new.id,
                user,
                account: &account,
                state: &new.state,
                link: new.link,
                source: Source::Api,
                fingerprint: Some(&new.fingerprint),
                now,
            },
        )
        .await?;
        let value = fetch_transaction(&mut tx, user, new.id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(Created {
            value,
            deduped: false,
        })
    }
}
