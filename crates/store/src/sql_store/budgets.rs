//! Budgets and the totals reports read.

use super::*;

pub(crate) const BUDGET_COLUMNS: &str = "b.id, b.category_id, b.include_subcategories, b.rollover, \
     b.starts_on, b.ends_on, b.created_at";

pub(crate) fn parse_month(column: &str, text: &str) -> StoreResult<BillMonth> {
    BillMonth::parse_key(text).ok_or_else(|| corrupt(column, text))
}

/// The user's budgets (all, or the one `only` names), oldest first, each
/// with its limit changes.
pub(crate) async fn fetch_budgets(
    conn: &mut impl Conn,
    user: UserId,
    only: Option<BudgetId>,
) -> StoreResult<Vec<Budget>> {
    let mut query = Sql::new(format!(
        "SELECT {BUDGET_COLUMNS}, l.from_month, l.amount_cents FROM budgets b \
         JOIN budget_limits l ON l.budget_id = b.id WHERE b.user_id = "
    ));
    query.push_bind(user.to_string());
    if let Some(id) = only {
        query.push(" AND b.id = ").push_bind(id.to_string());
    }
    query.push(" ORDER BY b.created_at, b.id, l.from_month");
    let rows = query.fetch_all(&mut *conn).await?;
    let mut out: Vec<Budget> = Vec::new();
    for row in &rows {
        let id = BudgetId(get_uuid(row, "id")?);
        let from: String = row.col("from_month")?;
        let change = LimitChange {
            from_month: parse_month("from_month", &from)?,
            amount: Money::from_cents(row.col("amount_cents")?),
        };
        if let Some(last) = out.last_mut()
            && last.id == id
        {
            last.limits.push(change);
            continue;
        }
        let starts: String = row.col("starts_on")?;
        let ends: Option<String> = row.col("ends_on")?;
        out.push(Budget {
            id,
            user_id: user,
            category_id: CategoryId(get_uuid(row, "category_id")?),
            include_subcategories: row.col("include_subcategories")?,
            rollover: row.col("rollover")?,
            starts_on: parse_month("starts_on", &starts)?,
            ends_on: ends
                .as_deref()
                .map(|e| parse_month("ends_on", e))
                .transpose()?,
            limits: vec![change],
            created_at: get_ts(row, "created_at")?,
        });
    }
    Ok(out)
}

/// Refuses a budget whose category the user cannot see, or that shares a
/// month with another budget of the same category: read under the write
/// lock, so two concurrent writes cannot both pass. Gives how many other
/// budgets the user has.
pub(crate) async fn check_budget(
    conn: &mut impl Conn,
    user: UserId,
    budget: &Budget,
) -> StoreResult<usize> {
    let visible = fetch_categories(&mut *conn, user).await?;
    if !visible.iter().any(|c| c.id == budget.category_id) {
        return Err(StoreError::Invalid(DomainError::field(
            "category_id",
            "names no category of yours",
        )));
    }
    let mut others = fetch_budgets(&mut *conn, user, None).await?;
    others.retain(|other| other.id != budget.id);
    if others.iter().any(|other| {
        other.category_id == budget.category_id && other.overlaps(budget.starts_on, budget.ends_on)
    }) {
        return Err(StoreError::BudgetConflict);
    }
    Ok(others.len())
}

/// Writes a budget's row and its limit changes (replacing any kept).
pub(crate) async fn write_budget(
    conn: &mut impl Conn,
    user: UserId,
    budget: &Budget,
    insert: bool,
) -> StoreResult<()> {
    let sql = if insert {
        "INSERT INTO budgets (id, user_id, category_id, include_subcategories, rollover, \
         starts_on, ends_on, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    } else {
        "UPDATE budgets SET category_id = $3, include_subcategories = $4, rollover = $5, \
         starts_on = $6, ends_on = $7 WHERE id = $1 AND user_id = $2"
    };
    let mut query = Sql::new(sql)
        .bind(budget.id.to_string())
        .bind(user.to_string())
        .bind(budget.category_id.to_string())
        .bind(budget.include_subcategories)
        .bind(budget.rollover)
        .bind(budget.starts_on.key())
        .bind(budget.ends_on.map(BillMonth::key));
    if insert {
        query = query.bind(format_timestamp(budget.created_at));
    } else {
        Sql::new("DELETE FROM budget_limits WHERE budget_id = $1")
            .bind(budget.id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    query.execute(&mut *conn).await?;
    for change in &budget.limits {
        Sql::new(
            "INSERT INTO budget_limits (budget_id, from_month, amount_cents) VALUES ($1, $2, $3)",
        )
        .bind(budget.id.to_string())
        .bind(change.from_month.key())
        .bind(change.amount.cents())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The columns of a summed group, in [`RawTotal`]'s order.
pub(crate) const TOTAL_COLUMNS: &str =
    "account_id, month, category_id, tag_id, type, status, transfer, cents";

/// The summed groups of a JSON array of [`TOTAL_COLUMNS`].
pub(crate) fn decode_totals(text: &str) -> StoreResult<Vec<EntryTotal>> {
    let raw: Vec<RawTotal> = serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("entry totals: {e}")))?;
    raw.into_iter().map(RawTotal::decode).collect()
}

/// One summed group as the aggregate in `entry_totals_of` writes it:
/// account (none when summed over accounts), month, category ('' for
/// none), tag, type, status, transfer (0 or 1), cents. Borrowed from the
/// JSON text: ids, months and codes hold no escapes.
#[derive(serde::Deserialize)]
pub(crate) struct RawTotal<'a>(
    Option<&'a str>,
    &'a str,
    &'a str,
    Option<&'a str>,
    &'a str,
    &'a str,
    i64,
    i64,
);

impl RawTotal<'_> {
    fn decode(self) -> StoreResult<EntryTotal> {
        let RawTotal(account, month, category, tag, tx_type, status, transfer, cents) = self;
        Ok(EntryTotal {
            account_id: account
                .map(|a| parse_uuid("account_id", a).map(AccountId))
                .transpose()?,
            month: parse_month("month", month)?,
            category_id: (!category.is_empty())
                .then(|| parse_uuid("category_id", category).map(CategoryId))
                .transpose()?,
            tag_id: tag
                .map(|t| parse_uuid("tag_id", t).map(TagId))
                .transpose()?,
            tx_type: TxType::parse(tx_type).ok_or_else(|| corrupt("type", tx_type))?,
            status: TxStatus::parse(status).ok_or_else(|| corrupt("status", status))?,
            transfer: transfer != 0,
            amount: Money::from_cents(cents),
        })
    }
}

/// Per-account day amounts from a JSON array of `[account, date, cents]`.
pub(crate) fn decode_days(text: &str) -> StoreResult<Vec<DayAmount>> {
    let raw: Vec<(&str, &str, i64)> =
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("day amounts: {e}")))?;
    raw.into_iter()
        .map(|(account, date, cents)| {
            Ok(DayAmount {
                account_id: AccountId(parse_uuid("account_id", account)?),
                date: parse_day("date", date)?,
                cents,
            })
        })
        .collect()
}

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn list_budgets_of(&self, user: UserId) -> StoreResult<Vec<Budget>> {
        let mut conn = self.pool.acquire().await?;
        fetch_budgets(&mut *conn, user, None).await
    }

    pub(crate) async fn get_budget_of(&self, user: UserId, id: BudgetId) -> StoreResult<Budget> {
        let mut conn = self.pool.acquire().await?;
        fetch_budgets(&mut *conn, user, Some(id))
            .await?
            .pop()
            .ok_or(StoreError::NotFound)
    }

    pub(crate) async fn create_budget_in_tx(
        &self,
        user: UserId,
        budget: &Budget,
    ) -> StoreResult<Budget> {
        let mut tx = self.begin_write(user).await?;
        let others = check_budget(&mut *tx, user, budget).await?;
        if u64::try_from(others).unwrap_or(u64::MAX) >= MAX_BUDGETS_PER_USER {
            return Err(StoreError::LimitReached {
                what: "budgets",
                limit: MAX_BUDGETS_PER_USER,
            });
        }
        write_budget(&mut *tx, user, budget, true).await?;
        tx.commit().await?;
        Ok(budget.clone())
    }

    pub(crate) async fn update_budget_in_tx(
        &self,
        user: UserId,
        id: BudgetId,
        op: BudgetOp,
    ) -> StoreResult<Budget> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_budgets(&mut *tx, user, Some(id))
            .await?
            .pop()
            .ok_or(StoreError::NotFound)?;
        let next = op(&current)?;
        check_budget(&mut *tx, user, &next).await?;
        write_budget(&mut *tx, user, &next, false).await?;
        tx.commit().await?;
        Ok(next)
    }

    pub(crate) async fn delete_budget_in_tx(&self, user: UserId, id: BudgetId) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        let deleted = Sql::new("DELETE FROM budgets WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn entry_totals_of(
        &self,
        user: UserId,
        from: BillMonth,
        to: BillMonth,
        by: &TotalsBy,
    ) -> StoreResult<Vec<EntryTotal>> {
        if let TotalsBy::Category {
            over_accounts: true,
            only: None,
            without_cards,
        } = by
        {
            return self
                .user_category_totals(user, from, to, *without_cards)
                .await;
        }
        let (first, last) = (from.key(), to.key());
        // Each query's rows come back as one JSON array, as pages and card
        // days do: handing hundreds of rows over one by one cost most of
        // a report.
        let mut query = Sql::new(format!(
            "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}({TOTAL_COLUMNS})), '[]') AS TEXT) FROM (",
            JSON_AGG = B::JSON_AGG,
            JSON_ARRAY = B::JSON_ARRAY
        ));
        match by {
            // Summed by triggers (the schema baseline): a few rows per account,
            // month and category, however many rows the months hold.
            TotalsBy::Category {
                over_accounts,
                only,
                without_cards,
            } => {
                let (account, cents) = if *over_accounts {
                    ("NULL", "CAST(SUM(m.cents) AS BIGINT)")
                } else {
                    ("m.account_id", "m.cents")
                };
                query
                    .push(format!(
                        "SELECT {account} AS account_id, m.month, m.category_id, NULL AS tag_id, \
                         m.type, m.status, CAST(m.transfer AS INTEGER) AS transfer, \
                         {cents} AS cents FROM category_month_totals m \
                         JOIN accounts a ON a.id = m.account_id WHERE a.user_id = "
                    ))
                    .push_bind(user.to_string())
                    .push(" AND m.month >= ")
                    .push_bind(first)
                    .push(" AND m.month <= ")
                    .push_bind(last)
                    .push(" AND m.cents <> 0");
                if *without_cards {
                    query.push(" AND a.type <> 'CREDIT'");
                }
                if let Some(ids) = only {
                    push_id_list(&mut query, "m.account_id", ids);
                }
                if *over_accounts {
                    query.push(" GROUP BY m.month, m.category_id, m.type, m.status, m.transfer");
                }
            }
            // Tags live on rows, not in the totals: the rows of the months
            // are summed here, one group per tag a row carries.
            TotalsBy::Tag | TotalsBy::WithTags(_) => {
                let per_tag = matches!(by, TotalsBy::Tag);
                query.push(format!(
                    "SELECT t.account_id, substr(t.date, 1, 7) AS month, \
                     COALESCE(t.category_id, '') AS category_id, {} AS tag_id, t.type, t.status, \
                     CAST(t.transfer_group_id IS NOT NULL AS INTEGER) AS transfer, \
                     CAST(SUM(t.amount_cents) AS BIGINT) AS cents FROM transactions t {} \
                     WHERE t.user_id = ",
                    if per_tag { "tt.tag_id" } else { "NULL" },
                    if per_tag {
                        "LEFT JOIN transaction_tags tt ON tt.transaction_id = t.id"
                    } else {
                        ""
                    },
                ));
                query
                    .push_bind(user.to_string())
                    .push(" AND t.date >= ")
                    .push_bind(format_date(from.day(1)))
                    .push(" AND t.date <= ")
                    .push_bind(format_date(to.day(31)))
                    .push(" AND t.hide_from_results = ")
                    .push_bind(false);
                if let TotalsBy::WithTags(tags) = by {
                    query.push(
                        " AND EXISTS (SELECT 1 FROM transaction_tags tt \
                         WHERE tt.transaction_id = t.id",
                    );
                    push_id_list(&mut query, "tt.tag_id", tags);
                    query.push(")");
                }
                query.push(format!(
                    " GROUP BY t.account_id, substr(t.date, 1, 7), COALESCE(t.category_id, ''){}, \
                     t.type, t.status, t.transfer_group_id IS NOT NULL",
                    if per_tag { ", tt.tag_id" } else { "" },
                ));
            }
        }
        query.push(") g");
        decode_totals(&self.read_array(query).await?)
    }

    /// The user's category sums of `[from, to]` over all their accounts
    /// (without the cards' when `without_cards`): each month as kept at
    /// its stamp (the schema baseline), the months whose stamp moved read
    /// again. Right after a purchase that is this month alone, not the
    /// year of months before it a rollover budget also needs.
    pub(crate) async fn user_category_totals(
        &self,
        user: UserId,
        from: BillMonth,
        to: BillMonth,
        without_cards: bool,
    ) -> StoreResult<Vec<EntryTotal>> {
        let stamps = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(month, stamp)), '[]') AS TEXT) \
                 FROM (SELECT month, stamp FROM user_month_stamps \
                 WHERE user_id = $1 AND month >= $2 AND month <= $3) g",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [
                Arg::Text(user.to_string()),
                Arg::Text(from.key()),
                Arg::Text(to.key()),
            ],
        );
        let text = self.read_array(stamps).await?;
        let stamps: Vec<(&str, i64)> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("month stamps: {e}")))?;
        let mut totals = Vec::new();
        let mut missing = Vec::new();
        for (month, stamp) in stamps {
            let key = (user, parse_month("month", month)?, without_cards);
            match self.months.get(&key, stamp).await {
                Some(kept) => totals.extend_from_slice(&kept),
                None => missing.push((key, stamp)),
            }
        }
        if missing.is_empty() {
            return Ok(totals);
        }
        // The stamps were read first: the sums read now are at least as
        // new as the stamp they are kept under, never older.
        let mut query = Sql::new(format!(
            "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}({TOTAL_COLUMNS})), '[]') AS TEXT) FROM (\
             SELECT NULL AS account_id, month, category_id, NULL AS tag_id, \
             type, status, CAST(transfer AS INTEGER) AS transfer, cents \
             FROM user_category_month_totals WHERE user_id = ",
            JSON_AGG = B::JSON_AGG,
            JSON_ARRAY = B::JSON_ARRAY
        ));
        query.push_bind(user.to_string());
        let months: Vec<String> = missing
            .iter()
            .map(|((_, month, _), _)| month.key())
            .collect();
        push_id_list(&mut query, "month", &months);
        query.push(" AND cents <> 0");
        if without_cards {
            query.push(" AND card = ").push_bind(false);
        }
        query.push(") g");
        // The rows of cards and of other accounts are two rows of one
        // group: merged here, which costs far less than SQL's GROUP BY
        // copying each row's key.
        let mut merged: HashMap<EntryTotal, Money, Hashing> = HashMap::default();
        for mut key in decode_totals(&self.read_array(query).await?)? {
            let cents = std::mem::replace(&mut key.amount, Money::ZERO);
            let sum = merged.entry(key).or_default();
            *sum = sum.saturating_add(cents);
        }
        let mut by_month: HashMap<BillMonth, Vec<EntryTotal>> = HashMap::new();
        for (key, amount) in merged {
            if amount.cents() != 0 {
                by_month
                    .entry(key.month)
                    .or_default()
                    .push(EntryTotal { amount, ..key });
            }
        }
        for (key, stamp) in missing {
            let month = by_month.remove(&key.1).unwrap_or_default();
            totals.extend_from_slice(&month);
            self.months.put(key, stamp, Arc::new(month)).await;
        }
        Ok(totals)
    }

    pub(crate) async fn posted_days_of(
        &self,
        user: UserId,
        after: Date,
        currency: &str,
    ) -> StoreResult<Vec<PostedDay>> {
        // Summed over the user's accounts by triggers (the schema baseline): a
        // range of one row a day.
        let query = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(date, banks, cards)), '[]') AS TEXT) \
                 FROM (SELECT date, banks, cards FROM user_day_balances \
                 WHERE user_id = $1 AND currency = $2 AND date > $3 AND (banks <> 0 OR cards <> 0) \
                 ORDER BY date) g",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [
                Arg::Text(user.to_string()),
                Arg::from(currency),
                Arg::Text(format_date(after)),
            ],
        );
        let text = self.read_array(query).await?;
        let raw: Vec<(&str, i64, i64)> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("posted days: {e}")))?;
        raw.into_iter()
            .map(|(date, banks, cards)| {
                Ok(PostedDay {
                    date: parse_day("date", date)?,
                    banks,
                    cards,
                })
            })
            .collect()
    }

    pub(crate) async fn pending_days_of(
        &self,
        user: UserId,
        after: Date,
        to: Date,
    ) -> StoreResult<Vec<DayAmount>> {
        let query = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(account_id, date, cents)), '[]') AS TEXT) \
                 FROM (SELECT account_id, date, CAST(SUM(CASE WHEN type = 'CREDIT' THEN amount_cents \
                 ELSE -amount_cents END) AS BIGINT) AS cents FROM transactions \
                 WHERE user_id = $1 AND status = 'PENDING' AND date > $2 AND date <= $3 \
                 GROUP BY account_id, date) g",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [
                Arg::Text(user.to_string()),
                Arg::Text(format_date(after)),
                Arg::Text(format_date(to)),
            ],
        );
        let text = self.read_array(query).await?;
        decode_days(&text)
    }
}
