//! Transfers and bulk edits.

use super::*;

/// Most missing ids a bulk error names, so a huge list gives a short answer.
pub(crate) const MISSING_IDS_REPORTED: usize = 10;

/// One of the user's accounts that can take new rows, named by `field`.
pub(crate) async fn open_account(
    conn: &mut impl Conn,
    user: UserId,
    id: AccountId,
    field: &str,
) -> StoreResult<Account> {
    let account = fetch_account(conn, user, id)
        .await?
        .ok_or_else(|| DomainError::field(field, "no such account"))?
        .account;
    if account.state.archived {
        return Err(DomainError::field(field, "the account is archived").into());
    }
    Ok(account)
}

/// Stores a row that belongs to no series, as the API makes it (one leg
/// of a transfer or of a bill payment).
pub(crate) async fn insert_plain_row(
    conn: &mut impl Conn,
    id: TransactionId,
    user: UserId,
    account: &Account,
    state: &TransactionState,
    now: Timestamp,
) -> StoreResult<()> {
    insert_transaction(
        conn,
        RowInsert {
            id,
            user,
            account: account.id,
            state,
            link: SeriesLink::None,
            source: Source::Api,
            fingerprint: None,
            now,
        },
    )
    .await
}

/// Rows of the user's transfer group.
pub(crate) async fn fetch_group<C: Conn>(
    conn: &mut C,
    user: UserId,
    group: Uuid,
) -> StoreResult<Vec<Transaction>> {
    let mut query = entries_query::<C::Db>();
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(" AND t.transfer_group_id = ")
        .push_bind(group.to_string());
    fetch_entries(conn, query).await
}

/// Sets a row's transfer group, visibility and category at once.
pub(crate) async fn write_transfer_state(
    conn: &mut impl Conn,
    user: UserId,
    row: &Transaction,
    group: Option<Uuid>,
    hidden: bool,
    category: Option<CategoryId>,
    now: Timestamp,
) -> StoreResult<TransactionId> {
    let id = row
        .id
        .stored()
        .ok_or_else(|| StoreError::Corrupt("a projection among stored rows".into()))?;
    Sql::new(
        "UPDATE transactions SET transfer_group_id = $3, hide_from_results = $4, \
         category_id = $5, updated_at = $6 WHERE id = $1 AND user_id = $2",
    )
    .bind(id.to_string())
    .bind(user.to_string())
    .bind(group.map(|g| g.to_string()))
    .bind(hidden)
    .bind(opt_string(category))
    .bind(format_timestamp(now))
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// The tombstone that keeps a deleted row of a series from coming back as
/// a projection; none when the series itself is gone.
pub(crate) async fn slot_of(
    conn: &mut impl Conn,
    user: UserId,
    row: &Transaction,
) -> StoreResult<Option<(Handle, Date)>> {
    if let (Some(rule_id), Some(date)) = (row.recurrence_id, row.recurrence_period_date) {
        if fetch_rule(conn, user, rule_id).await?.is_some() {
            return Ok(Some((Handle::Recurrence { rule_id, date }, date)));
        }
    } else if let Some(part) = row.installment
        && let Some(plan) = fetch_plan(conn, user, part.purchase_id).await?
        && let Some(date) = plan.date_of(part.number)
    {
        let handle = Handle::Installment {
            purchase_id: part.purchase_id,
            number: part.number,
        };
        return Ok(Some((handle, date)));
    }
    Ok(None)
}

/// Every named id must be one of the user's stored rows.
pub(crate) async fn check_bulk_ids(
    conn: &mut impl Conn,
    user: UserId,
    ids: &[TransactionId],
) -> StoreResult<()> {
    let mut query = Sql::new("SELECT id FROM transactions WHERE user_id = ");
    query.push_bind(user.to_string());
    push_id_list(&mut query, "id", ids);
    let found: std::collections::HashSet<String> = query
        .scalars::<String, _>(&mut *conn)
        .await?
        .into_iter()
        .collect();
    let mut errors = cofre_domain::FieldErrors::new();
    for (i, id) in ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !found.contains(&id.to_string()))
        .take(MISSING_IDS_REPORTED)
    {
        errors.add(format!("ids[{i}]"), format!("no such transaction: {id}"));
    }
    Ok(errors.finish()?)
}

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn create_transfer_in_tx(
        &self,
        user: UserId,
        transfer: &NewTransfer,
        now: Timestamp,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        let from =
            open_account(&mut *tx, user, transfer.from_account_id, "from_account_id").await?;
        let to = open_account(&mut *tx, user, transfer.to_account_id, "to_account_id").await?;
        if from.state.currency != to.state.currency {
            return Err(DomainError::field(
                "to_account_id",
                format!(
                    "is in {}, the source account in {}: a transfer moves one currency",
                    to.state.currency, from.state.currency
                ),
            )
            .into());
        }
        let legs = [
            (transfer.sent_id, &from, &transfer.sent),
            (transfer.received_id, &to, &transfer.received),
        ];
        for (id, account, state) in legs {
            insert_plain_row(&mut *tx, id, user, account, state, now).await?;
            Sql::new("UPDATE transactions SET transfer_group_id = $2 WHERE id = $1")
                .bind(id.to_string())
                .bind(transfer.group_id.to_string())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn mark_transfer_in_tx(
        &self,
        user: UserId,
        id: TransactionId,
        counterpart: Option<TransactionId>,
        group: Uuid,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        let mut tx = self.begin_write(user).await?;
        let mut rows = vec![
            fetch_transaction(&mut *tx, user, id)
                .await?
                .ok_or(StoreError::NotFound)?,
        ];
        if let Some(other) = counterpart {
            let row = fetch_transaction(&mut *tx, user, other)
                .await?
                .ok_or_else(|| DomainError::field("counterpart_id", "no such transaction"))?;
            rows.push(row);
        }
        if let Some(grouped) = rows.iter().find(|r| r.transfer_group_id.is_some()) {
            return Err(StoreError::TransferConflict(format!(
                "transaction {} is already part of a transfer; unmark it first",
                grouped.id
            )));
        }
        let mut ids = Vec::with_capacity(rows.len());
        for row in &rows {
            let category = transfer_rules::category_when_marked(row.state.category_id);
            ids.push(
                write_transfer_state(&mut *tx, user, row, Some(group), true, category, now).await?,
            );
        }
        tx.commit().await?;
        Ok(ids)
    }

    pub(crate) async fn unmark_transfer_in_tx(
        &self,
        user: UserId,
        id: TransactionId,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        let mut tx = self.begin_write(user).await?;
        let row = fetch_transaction(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let rows = match row.transfer_group_id {
            Some(group) => fetch_group(&mut *tx, user, group).await?,
            None if transfer_rules::is_legacy_transfer(
                None,
                row.state.hide_from_results,
                row.state.category_id,
            ) =>
            {
                vec![row]
            }
            None => Vec::new(),
        };
        let mut ids = Vec::with_capacity(rows.len());
        for row in &rows {
            let category = transfer_rules::category_when_unmarked(row.state.category_id);
            ids.push(write_transfer_state(&mut *tx, user, row, None, false, category, now).await?);
        }
        ids.sort();
        tx.commit().await?;
        Ok(ids)
    }

    pub(crate) async fn bulk_in_tx(
        &self,
        user: UserId,
        request: &BulkRequest,
        now: Timestamp,
    ) -> StoreResult<BulkOutcome> {
        let mut tx = self.begin_write(user).await?;
        if let Some(ids) = &request.ids {
            check_bulk_ids(&mut *tx, user, ids).await?;
        }
        let mut query = entries_query::<B>();
        match &request.filter {
            Some(filter) => push_filter(&mut query, user, filter, filter.to),
            None => {
                query
                    .push(" WHERE t.user_id = ")
                    .push_bind(user.to_string());
            }
        }
        if let Some(ids) = &request.ids {
            push_id_list(&mut query, "t.id", ids);
        }
        // A literal, not a bound value: see `list_transactions_of`.
        query.push(format_args!(" LIMIT {}", bulk_rules::MAX_ROWS + 1));
        let mut rows = fetch_entries(&mut *tx, query).await?;
        if rows.len() > bulk_rules::MAX_ROWS {
            let field = if request.filter.is_some() {
                "filter"
            } else {
                "ids"
            };
            return Err(DomainError::field(
                field,
                format!(
                    "matches more than {} rows; narrow the selection and call again",
                    bulk_rules::MAX_ROWS
                ),
            )
            .into());
        }
        newest_first(&mut rows);
        let matched = rows.len() as u64;
        if let Some(expected) = request.expected_count
            && expected != matched
        {
            return Err(StoreError::ExpectedCountMismatch { expected, matched });
        }
        let target_account = match &request.action {
            BulkAction::Set(set) => {
                check_references(
                    &mut *tx,
                    user,
                    bulk_rules::named_category(set),
                    set.changes.tag_ids.as_deref().unwrap_or_default(),
                )
                .await
                .map_err(|err| match err {
                    StoreError::Invalid(e) => {
                        StoreError::Invalid(bulk_rules::prefix_fields(e, "set."))
                    }
                    other => other,
                })?;
                match set.account_id {
                    Some(id) => Some(open_account(&mut *tx, user, id, "set.account_id").await?),
                    None => None,
                }
            }
            BulkAction::Delete => None,
        };
        let mut outcome = BulkOutcome {
            matched,
            ..BulkOutcome::default()
        };
        // Rows already removed as the other leg of a deleted transfer.
        let mut gone: std::collections::HashSet<TransactionId> = std::collections::HashSet::new();
        for row in &rows {
            let id = row
                .id
                .stored()
                .ok_or_else(|| StoreError::Corrupt("a projection among stored rows".into()))?;
            if gone.contains(&id) {
                outcome.updated += 1;
                outcome.deleted += 1;
                continue;
            }
            let locks = bulk_rules::RowLocks {
                open_finance: row.open_finance,
                transfer_leg: row.transfer_group_id.is_some(),
            };
            match bulk_rules::plan_row(id, locks, &request.action) {
                RowPlan::Skip(skipped) => outcome.skipped.push(skipped),
                RowPlan::Update { change, skipped } => {
                    let state = tx_rules::apply_changes(&row.state, &change.changes)
                        .map_err(|e| bulk_rules::prefix_fields(e, "set."))?;
                    update_row_state(
                        &mut *tx,
                        user,
                        id,
                        &state,
                        row.original_description.as_deref(),
                        now,
                    )
                    .await?;
                    if let (Some(_), Some(account)) = (change.account_id, &target_account) {
                        Sql::new(
                            "UPDATE transactions SET account_id = $3, currency = $4 \
                             WHERE id = $1 AND user_id = $2",
                        )
                        .bind(id.to_string())
                        .bind(user.to_string())
                        .bind(account.id.to_string())
                        .bind(account.state.currency.clone())
                        .execute(&mut *tx)
                        .await?;
                    }
                    // The other legs of a transfer take its amount, date
                    // and status, as a PATCH of one leg does.
                    follow_leg_changes(&mut *tx, user, row, &change.changes, now)
                        .await
                        .map_err(|err| match err {
                            StoreError::Invalid(e) => {
                                StoreError::Invalid(bulk_rules::prefix_fields(e, "set."))
                            }
                            other => other,
                        })?;
                    outcome.updated += 1;
                    outcome.skipped.extend(skipped);
                }
                RowPlan::Delete => {
                    if let Some((handle, date)) = slot_of(&mut *tx, user, row).await? {
                        insert_tombstone(&mut *tx, user, &handle, date, now).await?;
                    }
                    // A transfer leg goes with the other legs of its group.
                    let deleted = delete_with_legs(&mut *tx, user, row).await?;
                    outcome.receipts.extend(deleted.receipts);
                    gone.extend(deleted.ids);
                    outcome.updated += 1;
                    outcome.deleted += 1;
                }
            }
        }
        tx.commit().await?;
        Ok(outcome)
    }
}
