//! Bank statement imports: rows a bank reports, stored as open-finance rows
//! of one account.

use super::*;

/// Rows per INSERT: 18 values each stays far below the bind limits of both
/// backends (SQLite 32,766, PostgreSQL 65,535).
pub(crate) const IMPORT_CHUNK: usize = 500;

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn owner_of_account(&self, account: AccountId) -> StoreResult<UserId> {
        let row = Sql::new("SELECT user_id FROM accounts WHERE id = $1")
            .bind(account.to_string())
            .fetch_optional(&mut *self.pool.acquire().await?)
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok(UserId(get_uuid(&row, "user_id")?))
    }

    pub(crate) async fn import_statement_rows(
        &self,
        user: UserId,
        account: AccountId,
        statement: &Statement,
        ctx: WriteContext,
    ) -> StoreResult<ImportSummary> {
        let mut tx = self.begin_write(user).await?;
        let account = fetch_account(&mut *tx, user, account)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;
        statement_rules::check_target(statement, &account)?;
        let mut added = 0;
        for chunk in statement.rows.chunks(IMPORT_CHUNK) {
            added += insert_statement_rows(&mut *tx, &account, chunk, ctx).await?;
        }
        Sql::new(
            "UPDATE accounts SET open_finance_connected = $2, connector_name = $3 WHERE id = $1",
        )
        .bind(account.id.to_string())
        .bind(true)
        .bind(statement.connector.clone())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(ImportSummary {
            added,
            already_present: statement.rows.len().saturating_sub(added) + statement.repeated,
        })
    }
}

/// Inserts the rows whose bank id the account does not have yet (the
/// unique index on `(account_id, external_id)` decides); returns how many.
pub(crate) async fn insert_statement_rows(
    conn: &mut impl Conn,
    account: &Account,
    rows: &[StatementRow],
    ctx: WriteContext,
) -> StoreResult<usize> {
    if rows.is_empty() {
        return Ok(0);
    }
    let now = format_timestamp(ctx.now);
    let mut query = Sql::new(
        "INSERT INTO transactions (id, user_id, account_id, date, type, status, amount_cents, \
         currency, description, original_description, created_by_user, source, open_finance, \
         hide_from_results, search_text, external_id, created_at, updated_at) ",
    );
    query.push_values(rows, |values, row| {
        let state = row.state(ctx.today);
        values
            .push_bind(TransactionId::new().to_string())
            .push_bind(account.user_id.to_string())
            .push_bind(account.id.to_string())
            .push_bind(format_date(state.date))
            .push_bind(state.tx_type.as_str())
            .push_bind(state.status.as_str())
            .push_bind(state.amount.cents())
            .push_bind(account.state.currency.clone())
            .push_bind(state.description.clone())
            .push_bind(row.original_description.clone())
            .push_bind(false)
            .push_bind(Source::OpenFinance.as_str())
            .push_bind(true)
            .push_bind(state.hide_from_results)
            .push_bind(search_text(
                &state.description,
                None,
                row.original_description.as_deref(),
            ))
            .push_bind(row.external_id.clone())
            .push_bind(now.clone())
            .push_bind(now.clone());
    });
    // The unique index holds only rows with a bank id (the schema baseline):
    // the conflict target names its condition.
    query.push(" ON CONFLICT (account_id, external_id) WHERE external_id IS NOT NULL DO NOTHING");
    let done = query.execute(&mut *conn).await?;
    // At most `rows.len()` rows can have been inserted.
    Ok(usize::try_from(done).map_or(rows.len(), |n| n.min(rows.len())))
}
