// One body of portable SQL, included by `sqlite.rs` and `postgres.rs` with
// their own `Db` type and `BEGIN_WRITE` statement. Every statement here runs
// unchanged on both backends: `$n` placeholders, TEXT ids and dates, BIGINT
// cents, BOOLEAN flags, timestamps written from Rust.

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;
use sqlx::{QueryBuilder, Row};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

use cofre_domain::account::{
    self as account_rules, Account, AccountChanges, AccountState, AccountType, CreditSettings,
    Patch, SubType,
};
use cofre_domain::auth::{ApiKey, format_scopes, parse_scopes};
use cofre_domain::category::{self as category_rules, Category, CategoryChanges};
use cofre_domain::profile::{self as profile_rules, Profile, ProfileChanges};
use cofre_domain::tag::{NewTag, Tag};
use cofre_domain::text::sort_key;
use cofre_domain::time::{format_date, format_timestamp, parse_date};
use cofre_domain::transaction::{
    self as tx_rules, NewTransaction, Page, PageRequest, Source, TagRef, Transaction,
    TransactionChanges, TransactionFilter, TransactionState, TxStatus, TxType, search_text,
};
use cofre_domain::{
    AccountId, ApiKeyId, CategoryId, DomainError, Money, TagId, TransactionId, UserId,
};

use crate::{AccountView, Created, Store, StoreError, StoreResult, WriteContext};

type DbRow = <Db as sqlx::Database>::Row;
type Tx = sqlx::Transaction<'static, Db>;

#[derive(Clone)]
pub struct SqlStore {
    pool: sqlx::Pool<Db>,
}

impl SqlStore {
    async fn begin_write(&self) -> StoreResult<Tx> {
        Ok(self.pool.begin_with(BEGIN_WRITE).await?)
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
    text.map(|t| t.parse().map_err(|_| corrupt(col, &t))).transpose()
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

/// Balance of every account: POSTED rows, CREDIT adds and DEBIT subtracts.
const BALANCE_COLUMN: &str = "(SELECT CAST(COALESCE(SUM(CASE WHEN t.type = 'CREDIT' \
    THEN t.amount_cents ELSE -t.amount_cents END), 0) AS BIGINT) FROM transactions t \
    WHERE t.account_id = a.id AND t.status = 'POSTED') AS balance_cents";

fn account_from_row(row: &DbRow) -> StoreResult<Account> {
    let type_text: String = row.try_get("type")?;
    let account_type = AccountType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?;
    let sub_text: String = row.try_get("sub_type")?;
    let sub_type = SubType::parse(&sub_text).ok_or_else(|| corrupt("sub_type", &sub_text))?;
    let credit = match account_type {
        AccountType::Credit => Some(CreditSettings {
            close_day: get_day(row, "credit_close_day")?.unwrap_or(1),
            due_day: get_day(row, "credit_due_day")?
                .unwrap_or(account_rules::DEFAULT_DUE_DAY),
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
            pay_bill_from_account_id: get_opt_uuid(row, "pay_bill_from_account_id")?
                .map(AccountId),
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
    t.created_at";

/// Decodes a row; its tags are filled in by [`attach_tags`].
fn transaction_from_row(row: &DbRow) -> StoreResult<Transaction> {
    let type_text: String = row.try_get("type")?;
    let status_text: String = row.try_get("status")?;
    let source_text: String = row.try_get("source")?;
    Ok(Transaction {
        id: TransactionId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        account_id: AccountId(get_uuid(row, "account_id")?),
        currency: row.try_get("currency")?,
        state: TransactionState {
            date: get_date(row, "date")?,
            tx_type: TxType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?,
            status: TxStatus::parse(&status_text)
                .ok_or_else(|| corrupt("status", &status_text))?,
            amount: Money::from_cents(row.try_get("amount_cents")?),
            description: row.try_get("description")?,
            notes: row.try_get("notes")?,
            category_id: get_opt_uuid(row, "category_id")?.map(CategoryId),
            tag_ids: Vec::new(),
            hide_from_results: row.try_get("hide_from_results")?,
        },
        tags: Vec::new(),
        bill_to_account_id: get_opt_uuid(row, "bill_to_account_id")?.map(AccountId),
        recurrence_id: get_opt_uuid(row, "recurrence_id")?,
        recurrence_period_date: get_opt_date(row, "recurrence_period_date")?,
        installment_purchase_id: get_opt_uuid(row, "installment_purchase_id")?,
        installment_number: row.try_get("installment_number")?,
        transfer_group_id: get_opt_uuid(row, "transfer_group_id")?,
        created_by_user: row.try_get("created_by_user")?,
        source: Source::parse(&source_text).ok_or_else(|| corrupt("source", &source_text))?,
        card_number: row.try_get("card_number")?,
        holder: row.try_get("holder")?,
        holder_is_me: row.try_get("holder_is_me")?,
        original_description: row.try_get("original_description")?,
        receipt_name: row.try_get("receipt_name")?,
        open_finance: row.try_get("open_finance")?,
        created_at: get_ts(row, "created_at")?,
    })
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
    let mut by_row: HashMap<TransactionId, Vec<TagRef>> = HashMap::new();
    for row in query.build().fetch_all(&mut *conn).await? {
        by_row
            .entry(TransactionId(get_uuid(&row, "transaction_id")?))
            .or_default()
            .push(TagRef {
                id: TagId(get_uuid(&row, "id")?),
                title: row.try_get("title")?,
                color_hex: row.try_get("color_hex")?,
            });
    }
    for row in rows.iter_mut() {
        let mut tags = by_row.remove(&row.id).unwrap_or_default();
        tags.sort_by(|a, b| sort_key(&a.title).cmp(&sort_key(&b.title)).then(a.id.cmp(&b.id)));
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
    let mut list = rows.iter().map(category_from_row).collect::<StoreResult<Vec<_>>>()?;
    list.sort_by(|a, b| sort_key(&a.title).cmp(&sort_key(&b.title)).then(a.id.cmp(&b.id)));
    Ok(list)
}

async fn fetch_transaction(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    id: TransactionId,
) -> StoreResult<Option<Transaction>> {
    let sql = format!("SELECT {TX_COLUMNS} FROM transactions t WHERE t.id = $1 AND t.user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let mut rows = [transaction_from_row(&row)?];
    attach_tags(conn, &mut rows).await?;
    let [tx] = rows;
    Ok(Some(tx))
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
         search_text, fingerprint, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17)",
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
    .bind(search_text(&state.description, state.notes.as_deref(), None))
    .bind(row.fingerprint.map(str::to_owned))
    .bind(now)
    .execute(&mut *conn)
    .await?;
    replace_tags(conn, row.id, &state.tag_ids).await
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
        let mut tx = self.begin_write().await?;
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

    async fn find_api_key(&self, id: ApiKeyId) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(
            "SELECT id, user_id, secret_hash, scopes, label, created_at, revoked_at \
             FROM api_keys WHERE id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(api_key_from_row).transpose()
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
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
        )
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
        let mut tx = self.begin_write().await?;
        let pay_from = pay_from_for(&mut tx, user, changes).await?;
        let state = account_rules::apply_changes(None, changes, pay_from.as_ref(), default_currency)?;
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
                    tx_type: if amount.is_negative() { TxType::Debit } else { TxType::Credit },
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
        let mut tx = self.begin_write().await?;
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
        let mut tx = self.begin_write().await?;
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
        let mut tx = self.begin_write().await?;
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
        let mut tx = self.begin_write().await?;
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
        let mut tags = rows.iter().map(tag_from_row).collect::<StoreResult<Vec<_>>>()?;
        tags.sort_by(|a, b| sort_key(&a.title).cmp(&sort_key(&b.title)).then(a.id.cmp(&b.id)));
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
        .execute(&self.pool)
        .await;
        match result {
            Ok(_) => Ok(created),
            Err(err) if is_unique_violation(&err) => Err(StoreError::TitleConflict),
            Err(err) => Err(err.into()),
        }
    }

    async fn create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        now: Timestamp,
    ) -> StoreResult<Created<Transaction>> {
        match self.try_create_transaction(user, new, now).await {
            // Two identical requests raced: the loser sees the winner's row.
            Err(StoreError::Database(err)) if new.client_chosen_id && is_unique_violation(&err) => {
                self.try_create_transaction(user, new, now).await
            }
            other => other,
        }
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
        let mut tx = self.begin_write().await?;
        let current = fetch_transaction(&mut tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let state = tx_rules::apply_changes(&current.state, changes)?;
        let category_changed = state.category_id != current.state.category_id;
        let new_category = if category_changed { state.category_id } else { None };
        let new_tags: Vec<TagId> = match &changes.tag_ids {
            Some(_) => state.tag_ids.clone(),
            None => Vec::new(),
        };
        check_references(&mut tx, user, new_category, &new_tags).await?;
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
            current.original_description.as_deref(),
        ))
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await?;
        if changes.tag_ids.is_some() {
            replace_tags(&mut tx, id, &state.tag_ids).await?;
        }
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
        let mut tx = self.begin_write().await?;
        let row = sqlx::query("SELECT receipt_name FROM transactions WHERE id = $1 AND user_id = $2")
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
        let category_ids = match &filter.category_ids {
            Some(ids) if filter.include_subcategories => {
                let visible = fetch_categories(&mut conn, user).await?;
                Some(category_rules::with_descendants(&visible, ids))
            }
            other => other.clone(),
        };

        let mut query = QueryBuilder::<Db>::new(format!("SELECT {TX_COLUMNS} FROM transactions t"));
        if filter.sub_types.is_some() {
            query.push(" JOIN accounts a ON a.id = t.account_id");
        }
        query.push(" WHERE t.user_id = ").push_bind(user.to_string());
        query.push(" AND t.date >= ").push_bind(format_date(filter.from));
        query.push(" AND t.date <= ").push_bind(format_date(filter.to));
        query.push(" AND t.hide_from_results = ").push_bind(filter.hidden);
        if let Some(status) = filter.status {
            query.push(" AND t.status = ").push_bind(status.as_str());
        }
        if let Some(tx_type) = filter.tx_type {
            query.push(" AND t.type = ").push_bind(tx_type.as_str());
        }
        if let Some(ids) = &filter.account_ids {
            push_id_list(&mut query, "t.account_id", ids);
        }
        if let Some(ids) = &category_ids {
            push_id_list(&mut query, "t.category_id", ids);
        }
        if let Some(sub_types) = &filter.sub_types {
            let names: Vec<&str> = sub_types.iter().map(|s| s.as_str()).collect();
            push_id_list(&mut query, "a.sub_type", &names);
        }
        if let Some(ids) = &filter.tag_ids {
            query.push(
                " AND EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id",
            );
            push_id_list(&mut query, "tt.tag_id", ids);
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
        let fetch = i64::try_from(page.limit).unwrap_or(i64::MAX).saturating_add(1);
        query
            .push(" ORDER BY t.date DESC, t.id ASC LIMIT ")
            .push_bind(fetch);

        let rows = query.build().fetch_all(&mut *conn).await?;
        let mut items = rows
            .iter()
            .map(transaction_from_row)
            .collect::<StoreResult<Vec<_>>>()?;
        let has_more = items.len() > page.limit;
        items.truncate(page.limit);
        attach_tags(&mut conn, &mut items).await?;
        Ok(Page { items, has_more })
    }
}

impl SqlStore {
    async fn try_create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        now: Timestamp,
    ) -> StoreResult<Created<Transaction>> {
        let mut tx = self.begin_write().await?;
        if new.client_chosen_id {
            let existing = sqlx::query("SELECT user_id, fingerprint FROM transactions WHERE id = $1")
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
                return Ok(Created { value, deduped: true });
            }
        }
        let account = fetch_account(&mut tx, user, new.account_id)
            .await?
            .ok_or_else(|| StoreError::from(DomainError::field("account_id", "no such account")))?
            .account;
        check_references(&mut tx, user, new.state.category_id, &new.state.tag_ids).await?;
        insert_transaction(
            &mut tx,
            RowInsert {
                id: new.id,
                user,
                account: &account,
                state: &new.state,
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
        Ok(Created { value, deduped: false })
    }
}
