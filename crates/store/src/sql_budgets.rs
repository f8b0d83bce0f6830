// Budgets and the totals reports read. Included by `sqlite.rs` and
// `postgres.rs` with the other `sql_*.rs` files, sharing `sql_store.rs`
// imports; `Store` methods forward here.

use cofre_domain::budget::{Budget, LimitChange, MAX_BUDGETS_PER_USER};
use cofre_domain::BudgetId;

use crate::{BudgetOp, DayAmount, EntryTotal, TotalsBy};

const BUDGET_COLUMNS: &str = "b.id, b.category_id, b.include_subcategories, b.rollover, \
     b.starts_on, b.ends_on, b.created_at";

fn parse_month(column: &str, text: &str) -> StoreResult<BillMonth> {
    BillMonth::parse_key(text).ok_or_else(|| corrupt(column, text))
}

/// The user's budgets (all, or the one `only` names), oldest first, each
/// with its limit changes.
async fn fetch_budgets(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    only: Option<BudgetId>,
) -> StoreResult<Vec<Budget>> {
    let mut query = QueryBuilder::<Db>::new(format!(
        "SELECT {BUDGET_COLUMNS}, l.from_month, l.amount_cents FROM budgets b \
         JOIN budget_limits l ON l.budget_id = b.id WHERE b.user_id = "
    ));
    query.push_bind(user.to_string());
    if let Some(id) = only {
        query.push(" AND b.id = ").push_bind(id.to_string());
    }
    query.push(" ORDER BY b.created_at, b.id, l.from_month");
    let rows = query.build().fetch_all(&mut *conn).await?;
    let mut out: Vec<Budget> = Vec::new();
    for row in &rows {
        let id = BudgetId(get_uuid(row, "id")?);
        let from: String = row.try_get("from_month")?;
        let change = LimitChange {
            from_month: parse_month("from_month", &from)?,
            amount: Money::from_cents(row.try_get("amount_cents")?),
        };
        if let Some(last) = out.last_mut()
            && last.id == id
        {
            last.limits.push(change);
            continue;
        }
        let starts: String = row.try_get("starts_on")?;
        let ends: Option<String> = row.try_get("ends_on")?;
        out.push(Budget {
            id,
            user_id: user,
            category_id: CategoryId(get_uuid(row, "category_id")?),
            include_subcategories: row.try_get("include_subcategories")?,
            rollover: row.try_get("rollover")?,
            starts_on: parse_month("starts_on", &starts)?,
            ends_on: ends.as_deref().map(|e| parse_month("ends_on", e)).transpose()?,
            limits: vec![change],
            created_at: get_ts(row, "created_at")?,
        });
    }
    Ok(out)
}

/// Refuses a budget whose category the user cannot see, or that shares a
/// month with another budget of the same category: read under the write
/// lock, so two concurrent writes cannot both pass.
async fn check_budget(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    budget: &Budget,
) -> StoreResult<()> {
    let visible = fetch_categories(&mut *conn, user).await?;
    if !visible.iter().any(|c| c.id == budget.category_id) {
        return Err(StoreError::Invalid(DomainError::field(
            "category_id",
            "names no category of yours",
        )));
    }
    let others = fetch_budgets(&mut *conn, user, None).await?;
    if others.iter().any(|other| {
        other.id != budget.id
            && other.category_id == budget.category_id
            && other.overlaps(budget.starts_on, budget.ends_on)
    }) {
        return Err(StoreError::BudgetConflict);
    }
    Ok(())
}

/// Writes a budget's row and its limit changes (replacing any kept).
async fn write_budget(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
    budget: &Budget,
    insert: bool,
) -> StoreResult<()> {
    let sql = if insert {
        "INSERT INTO budgets (id, user_id, category_id, include_subcategories, rollover, \
         starts_on, ends_on, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    } else {
        "UPDATE budgets SET category_id = $3, include_subcategories = $4, rollover = $5, \
         starts_on = $6, ends_on = $7 WHERE id = $1 AND user_id = $2 AND created_at = $8"
    };
    sqlx::query(sql)
        .bind(budget.id.to_string())
        .bind(user.to_string())
        .bind(budget.category_id.to_string())
        .bind(budget.include_subcategories)
        .bind(budget.rollover)
        .bind(budget.starts_on.key())
        .bind(budget.ends_on.map(BillMonth::key))
        .bind(format_timestamp(budget.created_at))
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM budget_limits WHERE budget_id = $1")
        .bind(budget.id.to_string())
        .execute(&mut *conn)
        .await?;
    for change in &budget.limits {
        sqlx::query(
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

fn parse_type(text: &str) -> StoreResult<TxType> {
    TxType::parse(text).ok_or_else(|| corrupt("type", text))
}

impl SqlStore {
    async fn list_budgets_of(&self, user: UserId) -> StoreResult<Vec<Budget>> {
        let mut conn = self.pool.acquire().await?;
        fetch_budgets(&mut conn, user, None).await
    }

    async fn get_budget_of(&self, user: UserId, id: BudgetId) -> StoreResult<Budget> {
        let mut conn = self.pool.acquire().await?;
        fetch_budgets(&mut conn, user, Some(id))
            .await?
            .pop()
            .ok_or(StoreError::NotFound)
    }

    async fn create_budget_in_tx(&self, user: UserId, budget: &Budget) -> StoreResult<Budget> {
        let mut tx = self.begin_write(user).await?;
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM budgets WHERE user_id = $1")
            .bind(user.to_string())
            .fetch_one(&mut *tx)
            .await?;
        if u64::try_from(count).unwrap_or(u64::MAX) >= MAX_BUDGETS_PER_USER {
            return Err(StoreError::LimitReached {
                what: "budgets",
                limit: MAX_BUDGETS_PER_USER,
            });
        }
        check_budget(&mut tx, user, budget).await?;
        write_budget(&mut tx, user, budget, true).await?;
        tx.commit().await?;
        Ok(budget.clone())
    }

    async fn update_budget_in_tx(
        &self,
        user: UserId,
        id: BudgetId,
        op: BudgetOp,
    ) -> StoreResult<Budget> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_budgets(&mut tx, user, Some(id))
            .await?
            .pop()
            .ok_or(StoreError::NotFound)?;
        let next = op(&current)?;
        check_budget(&mut tx, user, &next).await?;
        write_budget(&mut tx, user, &next, false).await?;
        tx.commit().await?;
        Ok(next)
    }

    async fn delete_budget_in_tx(&self, user: UserId, id: BudgetId) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        let deleted = sqlx::query("DELETE FROM budgets WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }

    async fn entry_totals_of(
        &self,
        user: UserId,
        from: BillMonth,
        to: BillMonth,
        by: &TotalsBy,
    ) -> StoreResult<Vec<EntryTotal>> {
        let mut conn = self.pool.acquire().await?;
        let (first, last) = (from.key(), to.key());
        let mut query = match by {
            // Summed by triggers (migration 0010): a few rows per account,
            // month and category, however many rows the months hold.
            TotalsBy::Category => {
                let mut q = QueryBuilder::<Db>::new(
                    "SELECT m.account_id, m.month, m.category_id, NULL AS tag_id, m.type, \
                     m.status, m.transfer, m.cents FROM category_month_totals m \
                     JOIN accounts a ON a.id = m.account_id WHERE a.user_id = ",
                );
                q.push_bind(user.to_string())
                    .push(" AND m.month >= ")
                    .push_bind(first)
                    .push(" AND m.month <= ")
                    .push_bind(last)
                    .push(" AND m.cents <> 0");
                q
            }
            // Tags live on rows, not in the totals: the rows of the months
            // are summed here, one group per tag a row carries.
            TotalsBy::Tag | TotalsBy::WithTags(_) => {
                let per_tag = matches!(by, TotalsBy::Tag);
                let mut q = QueryBuilder::<Db>::new(format!(
                    "SELECT t.account_id, substr(t.date, 1, 7) AS month, \
                     COALESCE(t.category_id, '') AS category_id, {} AS tag_id, t.type, t.status, \
                     t.transfer_group_id IS NOT NULL AS transfer, CAST(SUM(t.amount_cents) AS BIGINT) AS cents \
                     FROM transactions t {} WHERE t.user_id = ",
                    if per_tag { "tt.tag_id" } else { "NULL" },
                    if per_tag {
                        "LEFT JOIN transaction_tags tt ON tt.transaction_id = t.id"
                    } else {
                        ""
                    },
                ));
                q.push_bind(user.to_string())
                    .push(" AND t.date >= ")
                    .push_bind(format_date(from.day(1)))
                    .push(" AND t.date <= ")
                    .push_bind(format_date(to.day(31)))
                    .push(" AND t.hide_from_results = ")
                    .push_bind(false);
                if let TotalsBy::WithTags(tags) = by {
                    q.push(
                        " AND EXISTS (SELECT 1 FROM transaction_tags tt \
                         WHERE tt.transaction_id = t.id",
                    );
                    push_id_list(&mut q, "tt.tag_id", tags);
                    q.push(")");
                }
                q.push(
                    " GROUP BY t.account_id, substr(t.date, 1, 7), COALESCE(t.category_id, ''), \
                     tag_id, t.type, t.status, t.transfer_group_id IS NOT NULL",
                );
                q
            }
        };
        let rows = query.build().fetch_all(&mut *conn).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let month: String = row.try_get("month")?;
            let category: String = row.try_get("category_id")?;
            let tag: Option<String> = row.try_get("tag_id")?;
            let (tx_type, status): (String, String) = (row.try_get("type")?, row.try_get("status")?);
            out.push(EntryTotal {
                account_id: AccountId(get_uuid(row, "account_id")?),
                month: parse_month("month", &month)?,
                category_id: (!category.is_empty())
                    .then(|| parse_uuid("category_id", &category).map(CategoryId))
                    .transpose()?,
                tag_id: parse_opt_uuid("tag_id", tag)?.map(TagId),
                tx_type: parse_type(&tx_type)?,
                status: TxStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
                transfer: row.try_get("transfer")?,
                amount: Money::from_cents(row.try_get("cents")?),
            });
        }
        Ok(out)
    }

    async fn posted_days_of(&self, user: UserId, after: Date) -> StoreResult<Vec<DayAmount>> {
        let mut conn = self.pool.acquire().await?;
        let rows = sqlx::query(
            "SELECT d.account_id, d.date, d.cents FROM day_balances d \
             JOIN accounts a ON a.id = d.account_id \
             WHERE a.user_id = $1 AND d.date > $2 AND d.cents <> 0",
        )
        .bind(user.to_string())
        .bind(format_date(after))
        .fetch_all(&mut *conn)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(DayAmount {
                    account_id: AccountId(get_uuid(row, "account_id")?),
                    date: get_date(row, "date")?,
                    cents: row.try_get("cents")?,
                })
            })
            .collect()
    }

    async fn pending_days_of(
        &self,
        user: UserId,
        after: Date,
        to: Date,
    ) -> StoreResult<Vec<DayAmount>> {
        let mut conn = self.pool.acquire().await?;
        let rows = sqlx::query(
            "SELECT account_id, date, \
             CAST(SUM(CASE WHEN type = 'CREDIT' THEN amount_cents ELSE -amount_cents END) AS BIGINT) AS cents \
             FROM transactions WHERE user_id = $1 AND status = 'PENDING' \
             AND date > $2 AND date <= $3 GROUP BY account_id, date",
        )
        .bind(user.to_string())
        .bind(format_date(after))
        .bind(format_date(to))
        .fetch_all(&mut *conn)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(DayAmount {
                    account_id: AccountId(get_uuid(row, "account_id")?),
                    date: get_date(row, "date")?,
                    cents: row.try_get("cents")?,
                })
            })
            .collect()
    }
}
