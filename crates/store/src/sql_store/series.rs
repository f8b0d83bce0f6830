//! Rules and plans: their rows, series writes, tombstones and the sources a
//! projection reads.

use super::*;

// --------------------------------------------------------- rules and plans

pub(crate) const RULE_COLUMNS: &str = "id, user_id, account_id, type, amount_cents, description, notes, \
    category_id, tag_ids, frequency, interval_count, start_date, end_date, occurrence_count, created_at";

pub(crate) const PLAN_COLUMNS: &str = "id, user_id, account_id, type, total_cents, description, notes, \
    category_id, tag_ids, installment_count, first_date, hidden, created_at";

pub(crate) fn description_key(description: &str) -> String {
    cofre_domain::text::lower(description.trim())
}

pub(crate) fn tags_text(tags: &[TagId]) -> String {
    tags.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

pub(crate) fn template_from_row(row: &impl SqlRow, amount_column: &str) -> StoreResult<Template> {
    let type_text: String = row.col("type")?;
    let tags: String = row.col("tag_ids")?;
    let tag_ids = tags
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|t| TagId::parse(t).ok_or_else(|| corrupt("tag_ids", t)))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Template {
        tx_type: TxType::parse(&type_text).ok_or_else(|| corrupt("type", &type_text))?,
        amount: Money::from_cents(row.col(amount_column)?),
        description: row.col("description")?,
        notes: row.col("notes")?,
        category_id: get_opt_uuid(row, "category_id")?.map(CategoryId),
        tag_ids,
    })
}

pub(crate) fn rule_from_row(row: &impl SqlRow) -> StoreResult<RecurrenceRule> {
    let frequency: String = row.col("frequency")?;
    let interval: i32 = row.col("interval_count")?;
    let count: Option<i32> = row.col("occurrence_count")?;
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

pub(crate) fn plan_from_row(row: &impl SqlRow) -> StoreResult<InstallmentPlan> {
    let count: i32 = row.col("installment_count")?;
    Ok(InstallmentPlan {
        id: PurchaseId(get_uuid(row, "id")?),
        user_id: UserId(get_uuid(row, "user_id")?),
        account_id: AccountId(get_uuid(row, "account_id")?),
        template: template_from_row(row, "total_cents")?,
        count: u16::try_from(count)
            .map_err(|_| corrupt("installment_count", &count.to_string()))?,
        first_date: get_date(row, "first_date")?,
        hidden: row.col("hidden")?,
        created_at: get_ts(row, "created_at")?,
    })
}

/// Inserts or replaces a rule.
/// Refuses `adding` more series when the user would pass `limit` of
/// `table`'s: every card rule and plan is walked by the overview and the
/// card books, so their number bounds what one request costs. Run inside
/// the write transaction, under the user's lock, so racing creations
/// cannot pass it together; the series `except` names (an update) does
/// not count.
pub(crate) async fn check_series_cap(
    conn: &mut impl Conn,
    table: &'static str,
    user: UserId,
    except: &str,
    adding: u64,
    limit: u64,
) -> StoreResult<()> {
    let count: i64 = Sql::new(format!(
        "SELECT COUNT(*) FROM {table} WHERE user_id = $1 AND id <> $2"
    ))
    .bind(user.to_string())
    .bind(except)
    .scalar(&mut *conn)
    .await?;
    if u64::try_from(count).unwrap_or(0).saturating_add(adding) > limit {
        return Err(StoreError::LimitReached {
            what: if table == "recurrence_rules" {
                "recurrence rules"
            } else {
                "installment purchases"
            },
            limit,
        });
    }
    Ok(())
}

/// Checks that a batch of new rules and plans fits under the caps, once
/// for the whole batch (imports store them with `insert_rule`/`insert_plan`).
pub(crate) async fn check_batch_caps(
    conn: &mut impl Conn,
    user: UserId,
    rules: usize,
    plans: usize,
) -> StoreResult<()> {
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    check_series_cap(
        &mut *conn,
        "recurrence_rules",
        user,
        "",
        count(rules),
        crate::MAX_RULES_PER_USER,
    )
    .await?;
    check_series_cap(
        &mut *conn,
        "installment_plans",
        user,
        "",
        count(plans),
        crate::MAX_PLANS_PER_USER,
    )
    .await
}

/// Stores (or updates) one rule within the cap.
pub(crate) async fn put_rule(
    conn: &mut impl Conn,
    rule: &RecurrenceRule,
    now: Timestamp,
) -> StoreResult<()> {
    let id = rule.id.to_string();
    check_series_cap(
        &mut *conn,
        "recurrence_rules",
        rule.user_id,
        &id,
        1,
        crate::MAX_RULES_PER_USER,
    )
    .await?;
    insert_rule(conn, rule, now).await
}

pub(crate) async fn insert_rule(
    conn: &mut impl Conn,
    rule: &RecurrenceRule,
    now: Timestamp,
) -> StoreResult<()> {
    let t = &rule.template;
    Sql::new(
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
/// Stores (or updates) one installment purchase within the cap.
pub(crate) async fn put_plan(
    conn: &mut impl Conn,
    plan: &InstallmentPlan,
    now: Timestamp,
) -> StoreResult<()> {
    let id = plan.id.to_string();
    check_series_cap(
        &mut *conn,
        "installment_plans",
        plan.user_id,
        &id,
        1,
        crate::MAX_PLANS_PER_USER,
    )
    .await?;
    insert_plan(conn, plan, now).await
}

pub(crate) async fn insert_plan(
    conn: &mut impl Conn,
    plan: &InstallmentPlan,
    now: Timestamp,
) -> StoreResult<()> {
    let t = &plan.template;
    let last = plan.date_of(plan.count).unwrap_or(plan.first_date);
    Sql::new(
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

pub(crate) async fn fetch_rule(
    conn: &mut impl Conn,
    user: UserId,
    id: RuleId,
) -> StoreResult<Option<RecurrenceRule>> {
    let sql = format!("SELECT {RULE_COLUMNS} FROM recurrence_rules WHERE id = $1 AND user_id = $2");
    let row = Sql::new(sql)
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(rule_from_row).transpose()
}

pub(crate) async fn fetch_plan(
    conn: &mut impl Conn,
    user: UserId,
    id: PurchaseId,
) -> StoreResult<Option<InstallmentPlan>> {
    let sql =
        format!("SELECT {PLAN_COLUMNS} FROM installment_plans WHERE id = $1 AND user_id = $2");
    let row = Sql::new(sql)
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(plan_from_row).transpose()
}

/// A series with its stored rows and tombstones.
pub(crate) async fn load_series<C: Conn>(
    conn: &mut C,
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
    let mut query = entries_query::<C::Db>();
    query
        .push(" WHERE t.user_id = ")
        .push_bind(user.to_string());
    query
        .push(format_args!(" AND {column} = "))
        .push_bind(id.clone());
    let rows = fetch_entries(conn, query).await?;
    let tombstones =
        Sql::new("SELECT handle FROM tombstones WHERE user_id = $1 AND source_id = $2")
            .bind(user.to_string())
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|row| {
                let text: String = row.col("handle")?;
                Handle::parse(&text).ok_or_else(|| corrupt("handle", &text))
            })
            .collect::<StoreResult<Vec<_>>>()?;
    Ok(SeriesState {
        series: loaded,
        rows,
        tombstones,
    })
}

pub(crate) fn handle_source(handle: &Handle) -> String {
    match handle {
        Handle::Recurrence { rule_id, .. } => rule_id.to_string(),
        Handle::Installment { purchase_id, .. } => purchase_id.to_string(),
        Handle::Bill { card_id, .. } => card_id.to_string(),
    }
}

/// Applies a series write inside the caller's transaction; returns the
/// receipt file names of the rows it deleted.
pub(crate) async fn apply_write(
    conn: &mut impl Conn,
    user: UserId,
    account: &Account,
    write: &SeriesWrite,
    now: Timestamp,
) -> StoreResult<Vec<String>> {
    if let Some(id) = write.delete_rule {
        Sql::new("DELETE FROM recurrence_rules WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *conn)
            .await?;
        Sql::new("DELETE FROM tombstones WHERE user_id = $1 AND source_id = $2")
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
                account: account.id,
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
        Sql::new("UPDATE transactions SET recurrence_id = $3 WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .bind(rule.to_string())
            .execute(&mut *conn)
            .await?;
    }
    let mut receipts = Vec::new();
    for id in &write.delete {
        let deleted = Sql::new(
            "DELETE FROM transactions WHERE id = $1 AND user_id = $2 RETURNING receipt_name",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = deleted {
            receipts.extend(row.col::<Option<String>>("receipt_name")?);
        }
    }
    if let Some(id) = write.delete_plan {
        Sql::new("DELETE FROM installment_plans WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *conn)
            .await?;
        Sql::new("DELETE FROM tombstones WHERE user_id = $1 AND source_id = $2")
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
pub(crate) async fn insert_tombstone(
    conn: &mut impl Conn,
    user: UserId,
    handle: &Handle,
    date: Date,
    now: Timestamp,
) -> StoreResult<()> {
    Sql::new(
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

/// The stored rows of `rules` (each replacing one of its occurrences)
/// dated from `from` to `to`: read by the rules' index alone, which holds
/// only rows of a rule (the schema baseline).
pub(crate) fn rule_rows_query(rules: &[RuleId], from: &str, to: &str) -> Sql {
    let mut query =
        Sql::new("SELECT recurrence_id, recurrence_period_date FROM transactions WHERE 1 = 1");
    push_id_list(&mut query, "recurrence_id", rules);
    query
        .push(" AND recurrence_period_date >= ")
        .push_bind(from.to_owned())
        .push(" AND recurrence_period_date <= ")
        .push_bind(to.to_owned());
    query
}

/// The stored installments of `plans`, read by the plans' index alone.
pub(crate) fn plan_rows_query(plans: &[PurchaseId]) -> Sql {
    let mut query = Sql::new(
        "SELECT installment_purchase_id, installment_number FROM transactions WHERE 1 = 1",
    );
    push_id_list(&mut query, "installment_purchase_id", plans);
    query
}

/// Rules, plans, replacements and tombstones that project into a window.
pub(crate) async fn load_view_sources(
    conn: &mut impl Conn,
    user: UserId,
    from: Date,
    to: Date,
) -> StoreResult<ViewSources> {
    let (from_text, to_text) = (format_date(from), format_date(to));
    let sql = format!(
        "SELECT {RULE_COLUMNS} FROM recurrence_rules WHERE user_id = $1 AND start_date <= $3 \
         AND (end_date IS NULL OR end_date >= $2) ORDER BY id"
    );
    let rules = Sql::new(sql)
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
    let plans = Sql::new(sql)
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
    let rows = Sql::new(sql)
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
        let rules: Vec<RuleId> = sources.rules.iter().map(|r| r.id).collect();
        let query = rule_rows_query(&rules, &from_text, &to_text);
        for row in &query.fetch_all(&mut *conn).await? {
            sources.materialized.insert(Handle::Recurrence {
                rule_id: RuleId(get_uuid(row, "recurrence_id")?),
                date: get_date(row, "recurrence_period_date")?,
            });
        }
    }
    if !sources.plans.is_empty() {
        let plans: Vec<PurchaseId> = sources.plans.iter().map(|p| p.id).collect();
        let query = plan_rows_query(&plans);
        for row in &query.fetch_all(&mut *conn).await? {
            let number: i32 = row.col("installment_number")?;
            sources.materialized.insert(Handle::Installment {
                purchase_id: PurchaseId(get_uuid(row, "installment_purchase_id")?),
                number: u16::try_from(number)
                    .map_err(|_| corrupt("installment_number", &number.to_string()))?,
            });
        }
    }
    let rows = Sql::new(
        "SELECT handle FROM tombstones WHERE user_id = $1 AND entry_date >= $2 AND entry_date <= $3",
    )
    .bind(user.to_string())
    .bind(from_text)
    .bind(to_text)
    .fetch_all(&mut *conn)
    .await?;
    for row in &rows {
        let text: String = row.col("handle")?;
        let handle = Handle::parse(&text).ok_or_else(|| corrupt("handle", &text))?;
        sources.tombstones.insert(handle);
    }
    let uses_tags = sources.rules.iter().any(|r| !r.template.tag_ids.is_empty())
        || sources.plans.iter().any(|p| !p.template.tag_ids.is_empty());
    if uses_tags {
        let rows = Sql::new("SELECT id, title, color_hex FROM tags WHERE user_id = $1")
            .bind(user.to_string())
            .fetch_all(&mut *conn)
            .await?;
        for row in &rows {
            let id = TagId(get_uuid(row, "id")?);
            sources.tags.insert(
                id,
                TagRef {
                    id,
                    title: row.col("title")?,
                    color_hex: row.col("color_hex")?,
                },
            );
        }
    }
    Ok(sources)
}

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn create_rule_in_tx(
        &self,
        user: UserId,
        rule: &RecurrenceRule,
    ) -> StoreResult<Created<RecurrenceRule>> {
        let mut tx = self.begin_write(user).await?;
        fetch_account(&mut *tx, user, rule.account_id)
            .await?
            .ok_or_else(no_such_account)?;
        check_references(
            &mut *tx,
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
        let existing = Sql::new(sql)
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
            let value = rule_from_row(&row)?;
            // Answered once what it found is on disk (see the replay of
            // a creation).
            tx.commit().await?;
            return Ok(Created {
                value,
                deduped: true,
            });
        }
        put_rule(&mut *tx, rule, rule.created_at).await?;
        tx.commit().await?;
        Ok(Created {
            value: rule.clone(),
            deduped: false,
        })
    }

    pub(crate) async fn apply_series_in_tx(
        &self,
        user: UserId,
        series: SeriesRef,
        references: &References,
        op: SeriesOp,
        now: Timestamp,
    ) -> StoreResult<SeriesApplied> {
        let mut tx = self.begin_write(user).await?;
        let state = load_series(&mut *tx, user, series).await?;
        check_references(&mut *tx, user, references.category, &references.tags).await?;
        let (write, outcome) = op(&state)?;
        let account_id = match &state.series {
            Series::Rule(rule) => rule.account_id,
            Series::Plan(plan) => plan.account_id,
        };
        let account = fetch_account(&mut *tx, user, account_id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;
        let removed_receipts = apply_write(&mut *tx, user, &account, &write, now).await?;
        tx.commit().await?;
        Ok(SeriesApplied {
            outcome,
            removed_receipts,
        })
    }
}
