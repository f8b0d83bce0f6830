//! Transaction rows: create, update, delete, list, and batch imports of
//! rows with their rules and plans.

use super::*;

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn try_create_transaction(
        &self,
        user: UserId,
        new: &NewTransaction,
        plan: Option<&InstallmentPlan>,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> StoreResult<Created<Transaction>> {
        if plan.is_none()
            && let Some(created) = B::create_row_here(self, user, new, now, key).await
        {
            return created;
        }
        let mut tx = self.writes.begin().await?;
        let creation = Creation {
            user,
            new,
            now,
            key,
        };
        let mut created = create_set(&mut *tx, std::slice::from_ref(&creation))
            .await?
            .pop()
            .ok_or(StoreError::NotFound)??;
        // The row first: storing it found the account (none of the
        // user's, nothing stored), before the plan names that account.
        if let Some(plan) = plan
            && !created.deduped
        {
            put_plan(&mut *tx, plan, now).await?;
            created.value = fetch_transaction(&mut *tx, user, new.id)
                .await?
                .ok_or(StoreError::NotFound)?;
        }
        // A replay may have found a write of the same group commit batch,
        // not on disk yet: it is answered once that batch is, like the
        // write that stored it.
        tx.commit().await?;
        Ok(created)
    }

    pub(crate) async fn import_in_tx(
        &self,
        user: UserId,
        batch: &ImportBatch,
        now: Timestamp,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        let mut accounts: HashMap<AccountId, Account> = HashMap::new();
        for view in Sql::new(format!(
            "SELECT {ACCOUNT_COLUMNS}, CAST(0 AS BIGINT) AS balance_cents FROM accounts a WHERE a.user_id = $1"
        ))
        .bind(user.to_string())
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(account_view_from_row)
        {
            let view = view?;
            accounts.insert(view.account.id, view.account);
        }
        let owned = |id: AccountId| accounts.get(&id).ok_or_else(no_such_account);
        check_batch_caps(&mut *tx, user, batch.rules.len(), batch.plans.len()).await?;
        for rule in &batch.rules {
            owned(rule.account_id)?;
            insert_rule(&mut *tx, rule, now).await?;
        }
        for plan in &batch.plans {
            owned(plan.account_id)?;
            insert_plan(&mut *tx, plan, now).await?;
        }
        for row in &batch.rows {
            let account = owned(row.account_id)?;
            insert_transaction(
                &mut *tx,
                RowInsert {
                    id: row.id,
                    user,
                    account: account.id,
                    state: &row.state,
                    link: row.link,
                    source: Source::Api,
                    fingerprint: None,
                    now,
                },
            )
            .await?;
            if let Some(leg) = &row.payment {
                mark_payment_leg(&mut *tx, row.id, leg).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn update_transaction_in_tx(
        &self,
        user: UserId,
        id: TransactionId,
        changes: &TransactionChanges,
        now: Timestamp,
    ) -> StoreResult<Vec<TransactionId>> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_transaction(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        if current.transfer_group_id.is_some()
            && changes.tx_type.is_some_and(|t| t != current.state.tx_type)
        {
            return Err(StoreError::TransferConflict(
                transfer_rules::LEG_TYPE_LOCKED.into(),
            ));
        }
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
        check_references(&mut *tx, user, new_category, &new_tags).await?;
        update_row_state(
            &mut *tx,
            user,
            id,
            &state,
            current.original_description.as_deref(),
            now,
        )
        .await?;
        let mut changed = vec![id];
        changed.extend(follow_leg_changes(&mut *tx, user, &current, changes, now).await?);
        tx.commit().await?;
        Ok(changed)
    }

    pub(crate) async fn delete_transaction_in_tx(
        &self,
        user: UserId,
        id: TransactionId,
    ) -> StoreResult<Deleted> {
        let mut tx = self.begin_write(user).await?;
        let row = fetch_transaction(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let deleted = delete_with_legs(&mut *tx, user, &row).await?;
        tx.commit().await?;
        Ok(deleted)
    }

    pub(crate) async fn list_transactions_of(
        &self,
        user: UserId,
        filter: &TransactionFilter,
        page: &PageRequest,
        others: &mut (dyn Iterator<Item = Date> + Send),
    ) -> StoreResult<Page<Transaction>> {
        let query = list_query::<B>(user, filter, page);
        let mut cut = PageCut::new(page.limit, others);
        let (items, has_more) = self
            .read_entries_while(query, page.limit + 1, |row| cut.admits(row.state.date))
            .await?;
        Ok(Page { items, has_more })
    }
}

/// The query of one page of the list: the filter's rows, newest day
/// first, from the cursor on (reading no day after the cursor's), one
/// more than the page holds.
pub(crate) fn list_query<D: Dialect>(
    user: UserId,
    filter: &TransactionFilter,
    page: &PageRequest,
) -> Sql {
    let mut query = entries_query::<D>();
    let to = last_day(page.after.as_ref(), filter.to);
    push_filter(&mut query, user, filter, to);
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
    // The limit is written into the SQL, not bound: SQLite plans with a
    // bound LIMIT's value, so binding it again expires the prepared
    // statement and every page paid a fresh parse and plan. Limits are
    // few (the API's pages take 1 to 100, the server's own walks fixed
    // sizes), so the statements to keep are few too.
    query.push(format_args!(
        " ORDER BY t.date DESC, t.id ASC LIMIT {}",
        page.limit.saturating_add(1)
    ));
    query
}

/// Whether a row found by a creation's id (owned by `owner`, made by the
/// request `fingerprint`) is this request's own, replayed: else the id
/// was used for another request.
pub(crate) fn same_request(
    user: UserId,
    new: &NewTransaction,
    owner: &str,
    fingerprint: Option<&str>,
) -> StoreResult<()> {
    if owner == user.to_string() && fingerprint == Some(new.fingerprint.as_str()) {
        Ok(())
    } else {
        Err(StoreError::IdConflict)
    }
}

/// The row a creation stores.
pub(crate) fn new_row(user: UserId, new: &NewTransaction, now: Timestamp) -> RowInsert<'_> {
    RowInsert {
        id: new.id,
        user,
        account: new.account_id,
        state: &new.state,
        link: new.link,
        source: Source::Api,
        fingerprint: Some(&new.fingerprint),
        now,
    }
}
