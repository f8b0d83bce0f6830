//! Shared steps: fetch, insert and check helpers and query filters that
//! the store methods run inside their transactions, on either backend.

use jiff::Timestamp;
use jiff::civil::Date;

use cofre_domain::account::{Account, AccountChanges, AccountState, Patch};
use cofre_domain::category::Category;
use cofre_domain::text::sort_by_title;
use cofre_domain::time::{format_date, format_timestamp};
use cofre_domain::transaction::{
    self as tx_rules, SeriesLink, Source, Transaction, TransactionChanges, TransactionFilter,
    TransactionState, search_text,
};
use cofre_domain::transfer as transfer_rules;
use cofre_domain::{AccountId, CategoryId, DomainError, TagId, TransactionId, UserId};

use crate::sql_conn::{Conn, Dialect};
use crate::sql_decode::{
    ACCOUNT_COLUMNS, BALANCE_COLUMN, CATEGORY_SELECT, account_view_from_row, category_from_row,
    entries_query, fetch_entries, opt_string,
};
use crate::sql_text::{Arg, Sql};
use crate::{AccountView, Deleted, StoreError, StoreResult};

pub(crate) async fn fetch_account(
    conn: &mut impl Conn,
    user: UserId,
    id: AccountId,
) -> StoreResult<Option<AccountView>> {
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}, {BALANCE_COLUMN} FROM accounts a WHERE a.id = $1 AND a.user_id = $2"
    );
    let row = Sql::new(sql)
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(account_view_from_row).transpose()
}

pub(crate) async fn fetch_categories(
    conn: &mut impl Conn,
    user: UserId,
) -> StoreResult<Vec<Category>> {
    let rows = Sql::new(CATEGORY_SELECT)
        .bind(user.to_string())
        .fetch_all(&mut *conn)
        .await?;
    let mut list = rows
        .iter()
        .map(category_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    sort_by_title(&mut list, |c| (&c.title, c.id));
    Ok(list)
}

pub(crate) async fn fetch_transaction<C: Conn>(
    conn: &mut C,
    user: UserId,
    id: TransactionId,
) -> StoreResult<Option<Transaction>> {
    Ok(fetch_entries(conn, transaction_query::<C::Db>(user, id))
        .await?
        .pop())
}

/// The [`entries_query`] of the user's row `id`.
pub(crate) fn transaction_query<D: Dialect>(user: UserId, id: TransactionId) -> Sql {
    let mut query = entries_query::<D>();
    query.push(" WHERE t.id = ").push_bind(id.to_string());
    query.push(" AND t.user_id = ").push_bind(user.to_string());
    query
}

/// The other legs of `row`'s transfer group (none outside a group), read
/// inside the caller's transaction so a change reaches every leg.
pub(crate) async fn transfer_partners<C: Conn>(
    conn: &mut C,
    user: UserId,
    row: &Transaction,
) -> StoreResult<Vec<Transaction>> {
    let Some(group) = row.transfer_group_id else {
        return Ok(Vec::new());
    };
    let mut query = entries_query::<C::Db>();
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(" AND t.transfer_group_id = ")
        .push_bind(group.to_string());
    query.push(" AND t.id <> ").push_bind(row.id.to_string());
    fetch_entries(conn, query).await
}

pub(crate) fn stored_leg(leg: &Transaction) -> StoreResult<TransactionId> {
    leg.id
        .stored()
        .ok_or_else(|| StoreError::Corrupt("a projected transfer leg".into()))
}

/// Gives the other legs of `row`'s transfer group the part of `changes`
/// every leg shares (amount, date, status); returns their ids.
pub(crate) async fn follow_leg_changes(
    conn: &mut impl Conn,
    user: UserId,
    row: &Transaction,
    changes: &TransactionChanges,
    now: Timestamp,
) -> StoreResult<Vec<TransactionId>> {
    let shared = transfer_rules::shared_leg_changes(changes);
    let mut changed = Vec::new();
    if shared.is_empty() {
        return Ok(changed);
    }
    for partner in transfer_partners(&mut *conn, user, row).await? {
        let state = tx_rules::apply_changes(&partner.state, &shared)?;
        let partner_id = stored_leg(&partner)?;
        let original = partner.original_description.as_deref();
        update_row_state(&mut *conn, user, partner_id, &state, original, now).await?;
        changed.push(partner_id);
    }
    Ok(changed)
}

/// Deletes `row` and the other legs of its transfer group.
pub(crate) async fn delete_with_legs(
    conn: &mut impl Conn,
    user: UserId,
    row: &Transaction,
) -> StoreResult<Deleted> {
    let partners = transfer_partners(&mut *conn, user, row).await?;
    let mut deleted = Deleted::default();
    for leg in std::iter::once(row).chain(&partners) {
        let leg_id = stored_leg(leg)?;
        Sql::new("DELETE FROM transactions WHERE id = $1 AND user_id = $2")
            .bind(leg_id.to_string())
            .bind(user.to_string())
            .execute(&mut *conn)
            .await?;
        deleted.ids.push(leg_id);
        deleted.receipts.extend(leg.receipt_name.clone());
    }
    Ok(deleted)
}

/// Checks that a category is visible to the user and all tags are theirs.
pub(crate) async fn check_references(
    conn: &mut impl Conn,
    user: UserId,
    category: Option<CategoryId>,
    tags: &[TagId],
) -> StoreResult<()> {
    if let Some(query) = category_query(user, category) {
        let found: Option<String> = query.scalar_optional(&mut *conn).await?;
        category_found(found.is_some())?;
    }
    if let Some(query) = tags_query(user, tags) {
        let found: Vec<String> = query.scalars(&mut *conn).await?;
        tags_found(tags, &found)?;
    }
    Ok(())
}

/// The id of `category` if the user sees it (none to check without one).
pub(crate) fn category_query(user: UserId, category: Option<CategoryId>) -> Option<Sql> {
    let category = category?;
    Some(Sql::with(
        "SELECT id FROM categories WHERE id = $1 AND (user_id IS NULL OR user_id = $2)",
        [category.to_string().into(), user.to_string().into()],
    ))
}

pub(crate) fn category_found(found: bool) -> StoreResult<()> {
    if found {
        Ok(())
    } else {
        Err(no_such_category())
    }
}

pub(crate) fn no_such_category() -> StoreError {
    DomainError::field("category_id", "no such category").into()
}

/// The ids of `tags` that are the user's (none to check without tags).
pub(crate) fn tags_query(user: UserId, tags: &[TagId]) -> Option<Sql> {
    if tags.is_empty() {
        return None;
    }
    let mut query = Sql::new("SELECT id FROM tags WHERE user_id = ");
    query
        .push_bind(user.to_string())
        .push(" AND id IN (")
        .push_binds(tags.iter().map(ToString::to_string))
        .push(")");
    Some(query)
}

/// Fails naming the first of `tags` not `found`.
pub(crate) fn tags_found(tags: &[TagId], found: &[String]) -> StoreResult<()> {
    match tags.iter().find(|t| !found.contains(&t.to_string())) {
        Some(missing) => Err(no_such_tag(missing)),
        None => Ok(()),
    }
}

pub(crate) fn no_such_tag(id: impl std::fmt::Display) -> StoreError {
    DomainError::field("tag_ids", format!("no such tag: {id}")).into()
}

pub(crate) async fn replace_tags(
    conn: &mut impl Conn,
    id: TransactionId,
    tags: &[TagId],
) -> StoreResult<()> {
    Sql::new("DELETE FROM transaction_tags WHERE transaction_id = $1")
        .bind(id.to_string())
        .execute(&mut *conn)
        .await?;
    insert_tags(conn, id, tags).await
}

/// Tags a row that has none yet, in one statement (at most
/// `tx_rules::MAX_TAGS` tags, so well inside either backend's bind limit).
pub(crate) async fn insert_tags(
    conn: &mut impl Conn,
    id: TransactionId,
    tags: &[TagId],
) -> StoreResult<()> {
    if let Some(query) = insert_tags_query(id, tags) {
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// [`insert_tags`]' statement (none without tags).
pub(crate) fn insert_tags_query(id: TransactionId, tags: &[TagId]) -> Option<Sql> {
    if tags.is_empty() {
        return None;
    }
    let mut query = Sql::new("INSERT INTO transaction_tags (transaction_id, tag_id) ");
    query.push_values(tags, |values, tag| {
        values.push_bind(id.to_string()).push_bind(tag.to_string());
    });
    Some(query)
}

/// A stored row as the store writes it, in the currency of its account.
pub(crate) struct RowInsert<'a> {
    pub(crate) id: TransactionId,
    pub(crate) user: UserId,
    pub(crate) account: AccountId,
    pub(crate) state: &'a TransactionState,
    pub(crate) link: SeriesLink,
    pub(crate) source: Source,
    pub(crate) fingerprint: Option<&'a str>,
    pub(crate) now: Timestamp,
}

pub(crate) async fn insert_transaction(
    conn: &mut impl Conn,
    row: RowInsert<'_>,
) -> StoreResult<()> {
    let inserted = insert_query(&row).execute(&mut *conn).await?;
    inserted_into_account(inserted)?;
    // A new row has no tags to replace: the foreign key allows none
    // without their row, and a deleted row's went with it.
    insert_tags(conn, row.id, &row.state.tag_ids).await
}

/// Whether [`insert_query`] stored its row (`inserted` rows): none when
/// the account is not the user's.
pub(crate) fn inserted_into_account(inserted: u64) -> StoreResult<()> {
    if inserted == 0 {
        Err(no_such_account())
    } else {
        Ok(())
    }
}

/// [`insert_transaction`]'s statement for the row itself. The row takes
/// its account's currency, read by the statement that stores it, which
/// stores nothing when the account is not the user's: a write learns
/// both without a statement (on PostgreSQL, a round trip) of its own.
pub(crate) fn insert_query(row: &RowInsert<'_>) -> Sql {
    Sql::with(
        "INSERT INTO transactions (id, user_id, account_id, date, type, status, amount_cents, \
         currency, description, notes, category_id, created_by_user, source, hide_from_results, \
         search_text, fingerprint, created_at, updated_at, recurrence_id, recurrence_period_date, \
         installment_purchase_id, installment_number) \
         SELECT $1, $2, $3, $4, $5, $6, $7, a.currency, $8, $9, $10, $11, $12, $13, $14, $15, \
         $16, $16, $17, $18, $19, $20 FROM accounts a WHERE a.id = $3 AND a.user_id = $2",
        insert_args(row),
    )
}

/// The values [`insert_query`] stores, in the order of its placeholders
/// (PostgreSQL's one-call creation takes them in the same order).
pub(crate) fn insert_args(row: &RowInsert<'_>) -> [Arg; 20] {
    let state = row.state;
    let (recurrence, period, purchase, number) = match row.link {
        SeriesLink::Recurrence {
            rule_id,
            period_date,
        } => (
            Some(rule_id.to_string()),
            Some(format_date(period_date)),
            None,
            None,
        ),
        SeriesLink::Installment {
            purchase_id,
            number,
        } => (
            None,
            None,
            Some(purchase_id.to_string()),
            Some(i64::from(number)),
        ),
        SeriesLink::None => (None, None, None, None),
    };
    [
        row.id.to_string().into(),
        row.user.to_string().into(),
        row.account.to_string().into(),
        format_date(state.date).into(),
        state.tx_type.as_str().into(),
        state.status.as_str().into(),
        state.amount.cents().into(),
        state.description.as_str().into(),
        state.notes.clone().into(),
        opt_string(state.category_id).into(),
        true.into(),
        row.source.as_str().into(),
        state.hide_from_results.into(),
        search_text(&state.description, state.notes.as_deref(), None).into(),
        row.fingerprint.map(str::to_owned).into(),
        format_timestamp(row.now).into(),
        recurrence.into(),
        period.into(),
        purchase.into(),
        number.into(),
    ]
}

/// Ties a stored row to the bill payment it is a leg of.
pub(crate) async fn mark_payment_leg(
    conn: &mut impl Conn,
    id: TransactionId,
    leg: &cofre_domain::card::PaymentLeg,
) -> StoreResult<()> {
    Sql::new(
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

pub(crate) async fn write_account_state(
    conn: &mut impl Conn,
    id: AccountId,
    state: &AccountState,
) -> StoreResult<()> {
    let credit = state.credit.as_ref();
    Sql::new(
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
    .bind(credit.map(|c| i64::from(c.close_day)))
    .bind(credit.map(|c| i64::from(c.due_day)))
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
pub(crate) async fn pay_from_for(
    conn: &mut impl Conn,
    user: UserId,
    changes: &AccountChanges,
) -> StoreResult<Option<Account>> {
    match changes.pay_bill_from_account_id {
        Patch::Set(id) => Ok(fetch_account(conn, user, id).await?.map(|v| v.account)),
        _ => Ok(None),
    }
}

pub(crate) async fn set_category_archived(
    conn: &mut impl Conn,
    user: UserId,
    id: CategoryId,
    archived: bool,
) -> StoreResult<()> {
    Sql::new("DELETE FROM category_archives WHERE user_id = $1 AND category_id = $2")
        .bind(user.to_string())
        .bind(id.to_string())
        .execute(&mut *conn)
        .await?;
    if archived {
        Sql::new("INSERT INTO category_archives (user_id, category_id) VALUES ($1, $2)")
            .bind(user.to_string())
            .bind(id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

pub(crate) fn push_id_list<T: ToString>(query: &mut Sql, column: &str, ids: &[T]) {
    if ids.is_empty() {
        // An empty list selects nothing, like an IN () would.
        query.push(" AND 1 = 0");
        return;
    }
    query
        .push(format_args!(" AND {column} IN ("))
        .push_binds(ids.iter().map(ToString::to_string))
        .push(")");
}

/// Pushes the JOIN and WHERE of a list filter onto a query over
/// `transactions t` (the list page and bulk selections share it), rows
/// dated from the filter's `from` to `to` (its own `to`, or an earlier
/// day: a page after a cursor reads nothing after the cursor's day).
/// The days are the one range SQLite seeks in the `(user_id, date, id)`
/// index: a bound given only in another term (the cursor's `OR`) is
/// checked on every index entry from `to` down instead, so each page of
/// a long window stepped over every row of the pages before it.
pub(crate) fn push_filter(query: &mut Sql, user: UserId, filter: &TransactionFilter, to: Date) {
    if filter.sub_types.is_some() {
        query.push(" JOIN accounts a ON a.id = t.account_id");
    }
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(" AND t.date >= ")
        .push_bind(format_date(filter.from));
    query.push(" AND t.date <= ").push_bind(format_date(to));
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
        query.push(" AND EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id");
        push_id_list(query, "tt.tag_id", ids);
        query.push(")");
    }
    if filter.no_category {
        query.push(" AND t.category_id IS NULL");
    }
    if filter.no_tags {
        query.push(" AND t.tag_count = 0");
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
pub(crate) fn like_pattern(text: &str) -> String {
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

pub(crate) fn is_unique_violation(err: &StoreError) -> bool {
    matches!(err, StoreError::Database(sqlx::Error::Database(db)) if db.is_unique_violation())
}

pub(crate) async fn update_row_state(
    conn: &mut impl Conn,
    user: UserId,
    id: TransactionId,
    state: &TransactionState,
    original_description: Option<&str>,
    now: Timestamp,
) -> StoreResult<()> {
    Sql::new(
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

pub(crate) fn no_such_account() -> StoreError {
    DomainError::field("account_id", "no such account").into()
}
