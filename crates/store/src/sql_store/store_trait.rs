//! The [`Store`] trait's methods: each runs one unit of work, mostly by
//! forwarding to the module that holds its responsibility.

use super::*;

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
