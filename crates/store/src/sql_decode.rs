//! Decoding: row getters, `*_from_row`, the column lists and the entry
//! query that reads rows with their tags, for either backend.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::civil::Date;
use uuid::Uuid;

use cofre_domain::account::{
    self as account_rules, Account, AccountState, AccountType, CreditSettings, SubType,
};
use cofre_domain::auth::{ApiKey, parse_scopes};
use cofre_domain::category::Category;
use cofre_domain::profile::Profile;
use cofre_domain::tag::Tag;
use cofre_domain::text::sort_by_title;
use cofre_domain::time::{parse_date, parse_timestamp};
use cofre_domain::transaction::{
    EntryId, InstallmentRef, Source, TagRef, Transaction, TransactionState, TxStatus, TxType,
};
use cofre_domain::view::list_order;
use cofre_domain::{
    AccountId, ApiKeyId, CategoryId, Money, PurchaseId, RuleId, TagId, TransactionId, UserId,
};

use crate::sql_conn::{Conn, Dialect, DialectTexts, SqlRow};
use crate::sql_text::Sql;
use crate::{AccountView, FoundKey, StoreError, StoreResult};

// ---------------------------------------------------------------- decoding

#[cold]
pub(crate) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{what}: {value:?}"))
}

pub(crate) fn get_uuid(row: &impl SqlRow, col: &str) -> StoreResult<Uuid> {
    let text: String = row.col(col)?;
    Uuid::try_parse(&text).map_err(|_| corrupt(col, &text))
}

pub(crate) fn get_opt_uuid(row: &impl SqlRow, col: &str) -> StoreResult<Option<Uuid>> {
    let text: Option<String> = row.col(col)?;
    text.map(|t| Uuid::try_parse(&t).map_err(|_| corrupt(col, &t)))
        .transpose()
}

pub(crate) fn get_ts(row: &impl SqlRow, col: &str) -> StoreResult<Timestamp> {
    let text: String = row.col(col)?;
    parse_ts(col, &text)
}

pub(crate) fn parse_ts(column: &str, text: &str) -> StoreResult<Timestamp> {
    parse_timestamp(text).ok_or_else(|| corrupt(column, text))
}

pub(crate) fn get_date(row: &impl SqlRow, col: &str) -> StoreResult<Date> {
    let text: String = row.col(col)?;
    parse_date(&text).ok_or_else(|| corrupt(col, &text))
}

pub(crate) fn get_opt_date(row: &impl SqlRow, col: &str) -> StoreResult<Option<Date>> {
    let text: Option<String> = row.col(col)?;
    text.map(|t| parse_date(&t).ok_or_else(|| corrupt(col, &t)))
        .transpose()
}

pub(crate) fn get_opt_money(row: &impl SqlRow, col: &str) -> StoreResult<Option<Money>> {
    let cents: Option<i64> = row.col(col)?;
    Ok(cents.map(Money::from_cents))
}

pub(crate) fn get_day(row: &impl SqlRow, col: &str) -> StoreResult<Option<u8>> {
    let day: Option<i32> = row.col(col)?;
    day.map(|d| u8::try_from(d).map_err(|_| corrupt(col, &d.to_string())))
        .transpose()
}

pub(crate) fn opt_string<T: ToString>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

pub(crate) fn profile_from_row(row: &impl SqlRow) -> StoreResult<Profile> {
    Ok(Profile {
        id: UserId(get_uuid(row, "id")?),
        name: row.col("name")?,
        wage: get_opt_money(row, "wage_cents")?,
        monthly_living_cost: get_opt_money(row, "monthly_living_cost_cents")?,
        has_spouse: row.col("has_spouse")?,
        has_children: row.col("has_children")?,
        is_entrepreneur: row.col("is_entrepreneur")?,
    })
}

/// The columns of [`API_KEY_COLUMNS`], in that order, as text.
#[derive(serde::Deserialize)]
pub(crate) struct RawKey(
    pub(crate) String,
    pub(crate) String,
    pub(crate) String,
    pub(crate) String,
    pub(crate) Option<String>,
    pub(crate) String,
    pub(crate) Option<String>,
);

/// An `api_keys` row's columns, the table named `k`.
pub(crate) const API_KEY_COLUMNS: &str =
    "k.id, k.user_id, k.secret_hash, k.scopes, k.label, k.created_at, k.revoked_at";

impl RawKey {
    pub(crate) fn into_key(self) -> StoreResult<ApiKey> {
        let RawKey(id, user_id, secret_hash, scopes, label, created_at, revoked_at) = self;
        Ok(ApiKey {
            id: ApiKeyId(parse_uuid("id", &id)?),
            user_id: UserId(parse_uuid("user_id", &user_id)?),
            secret_hash,
            scopes: parse_scopes(&scopes).map_err(|_| corrupt("scopes", &scopes))?,
            label,
            created_at: parse_ts("created_at", &created_at)?,
            revoked_at: revoked_at.map(|t| parse_ts("revoked_at", &t)).transpose()?,
        })
    }
}

pub(crate) fn api_key_from_row(row: &impl SqlRow) -> StoreResult<ApiKey> {
    RawKey(
        row.col("id")?,
        row.col("user_id")?,
        row.col("secret_hash")?,
        row.col("scopes")?,
        row.col("label")?,
        row.col("created_at")?,
        row.col("revoked_at")?,
    )
    .into_key()
}

/// A key and its owner's view version, as the key lookup's one value
/// gives them: a JSON array of the key's [`API_KEY_COLUMNS`] (an array)
/// and the version.
pub(crate) fn decode_found_key(text: &str) -> StoreResult<FoundKey> {
    let (key, view_version): (RawKey, i64) =
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("api key: {e}")))?;
    Ok(FoundKey {
        key: key.into_key()?,
        view_version,
    })
}

pub(crate) const ACCOUNT_COLUMNS: &str = "a.id, a.user_id, a.type, a.sub_type, a.title, a.archived, \
    a.exclude_from_totals, a.currency, a.credit_close_day, a.credit_due_day, \
    a.credit_cycle_auto, a.credit_limit_cents, a.pay_bill_from_account_id, a.icon_id, \
    a.card_icon_id, a.open_finance_connected, a.connector_name, a.card_holders, a.created_at";

/// Balance of every account: POSTED rows, CREDIT adds and DEBIT subtracts,
/// as the triggers of the schema baseline keep it (never a sum over history).
pub(crate) const BALANCE_COLUMN: &str = "CAST(COALESCE((SELECT b.posted_cents FROM account_balances b \
    WHERE b.account_id = a.id), 0) AS BIGINT) AS balance_cents";

pub(crate) fn account_from_row(row: &impl SqlRow) -> StoreResult<Account> {
    let type_text: String = row.col("type")?;
    let account_type = AccountType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?;
    let sub_text: String = row.col("sub_type")?;
    let sub_type = SubType::parse(&sub_text).ok_or_else(|| corrupt("sub_type", &sub_text))?;
    let credit = match account_type {
        AccountType::Credit => Some(CreditSettings {
            close_day: get_day(row, "credit_close_day")?.unwrap_or(1),
            due_day: get_day(row, "credit_due_day")?.unwrap_or(account_rules::DEFAULT_DUE_DAY),
            cycle_auto: row
                .col::<Option<bool>>("credit_cycle_auto")?
                .unwrap_or(true),
            limit: get_opt_money(row, "credit_limit_cents")?.unwrap_or(Money::ZERO),
        }),
        AccountType::Bank => None,
    };
    let holders: Option<String> = row.col("card_holders")?;
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
            title: row.col("title")?,
            archived: row.col("archived")?,
            exclude_from_totals: row.col("exclude_from_totals")?,
            currency: row.col("currency")?,
            credit,
            pay_bill_from_account_id: get_opt_uuid(row, "pay_bill_from_account_id")?.map(AccountId),
            icon_id: row.col("icon_id")?,
            card_icon_id: row.col("card_icon_id")?,
        },
        open_finance_connected: row.col("open_finance_connected")?,
        connector_name: row.col("connector_name")?,
        card_holders,
        created_at: get_ts(row, "created_at")?,
    })
}

pub(crate) fn account_view_from_row(row: &impl SqlRow) -> StoreResult<AccountView> {
    Ok(AccountView {
        account: account_from_row(row)?,
        balance: Money::from_cents(row.col("balance_cents")?),
    })
}

pub(crate) const CATEGORY_SELECT: &str = "SELECT c.id, c.user_id, c.title, c.parent_id, c.icon_id, \
    c.color_hex, c.created_at, ca.category_id AS archived_id FROM categories c \
    LEFT JOIN category_archives ca ON ca.category_id = c.id AND ca.user_id = $1 \
    WHERE c.user_id IS NULL OR c.user_id = $1";

pub(crate) fn category_from_row(row: &impl SqlRow) -> StoreResult<Category> {
    let archived: Option<String> = row.col("archived_id")?;
    Ok(Category {
        id: CategoryId(get_uuid(row, "id")?),
        owner: get_opt_uuid(row, "user_id")?.map(UserId),
        title: row.col("title")?,
        parent_id: get_opt_uuid(row, "parent_id")?.map(CategoryId),
        icon_id: row.col("icon_id")?,
        color_hex: row.col("color_hex")?,
        archived: archived.is_some(),
        created_at: get_ts(row, "created_at")?,
    })
}

pub(crate) fn tag_from_row(row: &impl SqlRow) -> StoreResult<Tag> {
    Ok(Tag {
        id: TagId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        title: row.col("title")?,
        color_hex: row.col("color_hex")?,
        created_at: get_ts(row, "created_at")?,
    })
}

pub(crate) const TX_COLUMNS: &str = "t.id, t.account_id, t.date, t.type, t.status, \
    t.amount_cents, t.currency, t.description, t.notes, t.bill_to_account_id, t.category_id, \
    t.recurrence_id, t.recurrence_period_date, t.installment_purchase_id, t.installment_number, \
    t.transfer_group_id, t.created_by_user, t.source, t.hide_from_results, t.card_number, \
    t.holder, t.holder_is_me, t.original_description, t.receipt_name, t.open_finance, \
    ip.installment_count AS plan_count, ip.total_cents AS plan_total";

/// Rows with the purchase they are an installment of.
pub(crate) const TX_FROM: &str =
    "FROM transactions t LEFT JOIN installment_plans ip ON ip.id = t.installment_purchase_id";

/// The output names of [`TX_COLUMNS`], in order.
pub(crate) const TX_NAMES: &str = "p.id, p.account_id, p.date, p.type, p.status, \
    p.amount_cents, p.currency, p.description, p.notes, p.bill_to_account_id, p.category_id, \
    p.recurrence_id, p.recurrence_period_date, p.installment_purchase_id, p.installment_number, \
    p.transfer_group_id, p.created_by_user, p.source, p.hide_from_results, p.card_number, \
    p.holder, p.holder_is_me, p.original_description, p.receipt_name, p.open_finance, \
    p.plan_count, p.plan_total";

/// Starts a query for transaction rows: [`TX_COLUMNS`], then the row's
/// tags as a JSON array of `[id, title, color]` (NULL for none), looked
/// up for the rows the query answers alone, and only for those whose
/// `tag_count` (the schema baseline) says they have some. Push its WHERE,
/// ORDER BY and LIMIT, then read it with [`fetch_entries`] (inside a
/// write) or [`SqlStore::read_entries`].
pub(crate) fn entries_query<D: Dialect>() -> Sql {
    Sql::new(D::texts().entries_select.as_str())
}

/// The statement texts of `D`'s dialect, built once by [`Dialect::texts`].
pub(crate) fn dialect_texts<D: Dialect>() -> DialectTexts {
    let (json_agg, json_array, json_nested) = (D::JSON_AGG, D::JSON_ARRAY, D::JSON_NESTED);
    let entries_select = format!(
        "SELECT {TX_COLUMNS}, CASE WHEN t.tag_count > 0 THEN \
         (SELECT {json_agg}({json_array}(g.id, g.title, g.color_hex)) \
         FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id \
         WHERE tt.transaction_id = t.id) END AS tags {TX_FROM}"
    );
    DialectTexts {
        creations: crate::sql_store::create_set::texts::<D>(&entries_select),
        entries_select,
        entries_page_before: format!(
            "SELECT CAST(COALESCE({json_agg}({json_array}({TX_NAMES}, {json_nested}(p.tags))), \
             '[]') AS TEXT) AS page FROM ("
        ),
    }
}

/// An [`entries_query`]'s rows as ONE value, a JSON array of rows: the
/// driver hands over one value in one statement instead of one row (and
/// one thread hand-off) per entry. The aggregate need not keep the rows'
/// order.
pub(crate) fn entries_page<D: Dialect>(query: &Sql) -> Sql {
    query.within(&D::texts().entries_page_before, ") p")
}

/// Runs an [`entries_query`] and decodes its rows, with their tags. The
/// order of the rows is not kept: callers sort when it matters.
pub(crate) async fn fetch_entries<C: Conn>(
    conn: &mut C,
    query: Sql,
) -> StoreResult<Vec<Transaction>> {
    let text: String = entries_page::<C::Db>(&query).scalar(&mut *conn).await?;
    decode_entries(&text)
}

/// The rows of an [`entries_query`]'s one value.
pub(crate) fn decode_entries(text: &str) -> StoreResult<Vec<Transaction>> {
    let raw: Vec<RawTx> = serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("transaction rows: {e}")))?;
    raw.into_iter().map(RawTx::into_transaction).collect()
}

/// Stored rows in list order, as the SQL orders them: newest day first,
/// ids ascending within a day ([`list_order`], which compares the ids
/// without printing them).
pub(crate) fn newest_first(rows: &mut [Transaction]) {
    rows.sort_by(list_order);
}

/// A boolean as each backend writes it in JSON: `true` or `1`. Read by a
/// visitor of its own: serde's untagged enums buffer the value and build
/// an error for each variant that does not match, on every row.
pub(crate) struct JsonBool(pub(crate) bool);

impl JsonBool {
    pub(crate) fn get(self) -> bool {
        self.0
    }
}

impl<'de> serde::Deserialize<'de> for JsonBool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = JsonBool;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a boolean, or 0 or 1")
            }

            fn visit_bool<E>(self, value: bool) -> Result<JsonBool, E> {
                Ok(JsonBool(value))
            }

            fn visit_i64<E>(self, value: i64) -> Result<JsonBool, E> {
                Ok(JsonBool(value != 0))
            }

            fn visit_u64<E>(self, value: u64) -> Result<JsonBool, E> {
                Ok(JsonBool(value != 0))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// One transaction row as [`entries_query`] returns it, column by column.
/// Ids, days, names and times are borrowed from the page's text (they hold
/// no character JSON escapes): only what an entry keeps is copied. What is
/// parsed (ids, days, names) is taken as bytes, [`Ascii`]: parsing checks
/// every byte, so checking them as UTF-8 first is work done twice.
#[derive(serde::Deserialize)]
pub(crate) struct RawTx<'a>(
    #[serde(borrow)] pub(crate) Ascii<'a>,
    #[serde(borrow)] pub(crate) Ascii<'a>,
    #[serde(borrow)] pub(crate) Ascii<'a>,
    #[serde(borrow)] pub(crate) Ascii<'a>,
    #[serde(borrow)] pub(crate) Ascii<'a>,
    pub(crate) i64,
    pub(crate) String,
    pub(crate) String,
    pub(crate) Option<String>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    pub(crate) Option<i64>,
    #[serde(borrow)] pub(crate) Option<Ascii<'a>>,
    pub(crate) JsonBool,
    #[serde(borrow)] pub(crate) Ascii<'a>,
    pub(crate) JsonBool,
    pub(crate) Option<String>,
    pub(crate) Option<String>,
    pub(crate) JsonBool,
    pub(crate) Option<String>,
    pub(crate) Option<String>,
    pub(crate) JsonBool,
    pub(crate) Option<i64>,
    pub(crate) Option<i64>,
    #[serde(borrow)] pub(crate) Option<Vec<RawTag<'a>>>,
);

/// A tag of a row as the `tags` column of [`entries_query`] lists it.
pub(crate) type RawTag<'a> = (Ascii<'a>, String, String);

/// Text a row holds that is parsed, not kept (an id, a day, a name), as
/// its bytes: the parser accepts only ASCII, so the text needs no UTF-8
/// check of its own. Borrowed from a JSON page (such text has no escapes)
/// or from a row read column by column.
#[derive(Clone, Copy)]
pub(crate) struct Ascii<'a>(pub(crate) &'a [u8]);

impl AsRef<[u8]> for Ascii<'_> {
    fn as_ref(&self) -> &[u8] {
        self.0
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Ascii<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ascii<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("text without escapes")
            }

            fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Ascii<'de>, E> {
                Ok(Ascii(value.as_bytes()))
            }

            fn visit_borrowed_bytes<E>(self, value: &'de [u8]) -> Result<Ascii<'de>, E> {
                Ok(Ascii(value))
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

/// A row's tags (the `tags` column of [`entries_query`], nested in the
/// JSON page or read as the column's text; NULL, and not parsed, for a
/// row without tags), ordered by title.
pub(crate) fn parse_tags(raw: Vec<RawTag<'_>>) -> StoreResult<Vec<TagRef>> {
    let mut tags = raw
        .into_iter()
        .map(|(id, title, color_hex)| {
            Ok(TagRef {
                id: TagId(parse_uuid("tag id", id)?),
                title,
                color_hex,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    sort_by_title(&mut tags, |t| (&t.title, t.id));
    Ok(tags)
}

pub(crate) fn parse_uuid(column: &str, text: impl AsRef<[u8]>) -> StoreResult<Uuid> {
    let text = text.as_ref();
    Uuid::try_parse_ascii(text).map_err(|_| corrupt_bytes(column, text))
}

pub(crate) fn parse_opt_uuid(column: &str, text: Option<Ascii>) -> StoreResult<Option<Uuid>> {
    text.map(|t| parse_uuid(column, t)).transpose()
}

pub(crate) fn parse_day(column: &str, text: impl AsRef<[u8]>) -> StoreResult<Date> {
    let text = text.as_ref();
    parse_date(text).ok_or_else(|| corrupt_bytes(column, text))
}

/// [`corrupt`] for text taken as bytes.
#[cold]
pub(crate) fn corrupt_bytes(what: &str, value: &[u8]) -> StoreError {
    corrupt(what, &String::from_utf8_lossy(value))
}

impl RawTx<'_> {
    /// The entry, with its tags. Inlined, so the row's fields go straight
    /// into the entry instead of through a copy of the whole row.
    #[inline(always)]
    pub(crate) fn into_transaction(self) -> StoreResult<Transaction> {
        let RawTx(
            id,
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
            plan_count,
            plan_total,
            tags,
        ) = self;
        // Most rows have no tags: nothing to parse, no call.
        let tags = match tags {
            Some(raw) => parse_tags(raw)?,
            None => Vec::new(),
        };
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
            id: EntryId::Stored(TransactionId(parse_uuid("id", id)?)),
            account_id: AccountId(parse_uuid("account_id", account_id)?),
            currency,
            state: TransactionState {
                date: parse_day("date", date)?,
                tx_type: TxType::parse(tx_type).ok_or_else(|| corrupt_bytes("type", tx_type.0))?,
                status: TxStatus::parse(status).ok_or_else(|| corrupt_bytes("status", status.0))?,
                amount: Money::from_cents(amount_cents),
                description,
                notes,
                category_id: parse_opt_uuid("category_id", category_id)?.map(CategoryId),
                tag_ids: tags.iter().map(|t| t.id).collect(),
                hide_from_results: hide_from_results.get(),
            },
            tags,
            bill_to_account_id: parse_opt_uuid("bill_to_account_id", bill_to_account_id)?
                .map(AccountId),
            recurrence_id: parse_opt_uuid("recurrence_id", recurrence_id)?.map(RuleId),
            recurrence_period_date: recurrence_period_date
                .map(|d| parse_day("recurrence_period_date", d))
                .transpose()?,
            installment,
            transfer_group_id: parse_opt_uuid("transfer_group_id", transfer_group_id)?,
            created_by_user: created_by_user.get(),
            source: Source::parse(source).ok_or_else(|| corrupt_bytes("source", source.0))?,
            card_number,
            holder,
            holder_is_me: holder_is_me.get(),
            original_description,
            receipt_name,
            open_finance: open_finance.get(),
        })
    }
}
