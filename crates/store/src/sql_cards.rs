// Card bills: each card's money summed per day, and the payments made
// against its bills. Included after `sql_store.rs` by `sqlite.rs` and
// `postgres.rs`.

use cofre_domain::bills::{DayTotal, NewBillPayment, Payment};
use cofre_domain::card::{BillMonth, PaymentLeg};
use cofre_domain::overview::{ItemKind, MonthItem};

use crate::CardMoney;

/// One row of `day_totals` as the aggregate in [`load_card_money`] writes
/// it: date, type, installment, cents.
#[derive(serde::Deserialize)]
struct RawDay(String, String, JsonBool, i64);

async fn load_card_money(
    conn: &mut <Db as sqlx::Database>::Connection,
    user: UserId,
) -> StoreResult<HashMap<AccountId, CardMoney>> {
    let mut cards: HashMap<AccountId, CardMoney> = HashMap::new();
    let rows = sqlx::query("SELECT id FROM accounts WHERE user_id = $1 AND type = 'CREDIT'")
        .bind(user.to_string())
        .fetch_all(&mut *conn)
        .await?;
    for row in &rows {
        cards.insert(AccountId(get_uuid(row, "id")?), CardMoney::default());
    }
    if cards.is_empty() {
        return Ok(cards);
    }
    // One row per card, day, type and kind, kept by triggers (migration
    // 0006): a card's whole history is a few thousand of them however many
    // purchases it holds, and reading them sums nothing. They come as one
    // JSON array per card, as pages do (`entries_query`): handing thousands
    // of rows over one by one cost most of the first read after a write.
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT d.account_id, \
         CAST({JSON_AGG}({JSON_ARRAY}(d.date, d.type, d.installment, d.cents)) AS TEXT) AS days \
         FROM day_totals d JOIN accounts a ON a.id = d.account_id \
         WHERE a.user_id = $1 AND a.type = 'CREDIT' AND d.cents <> 0 \
         GROUP BY d.account_id"
    )))
    .bind(user.to_string())
    .fetch_all(&mut *conn)
    .await?;
    for row in &rows {
        let text: String = row.try_get("days")?;
        let raw: Vec<RawDay> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("day_totals: {e}")))?;
        if let Some(card) = cards.get_mut(&AccountId(get_uuid(row, "account_id")?)) {
            card.days.reserve(raw.len());
            for RawDay(date, tx_type, installment, cents) in raw {
                card.days.push(DayTotal {
                    date: parse_day("date", &date)?,
                    tx_type: TxType::parse(&tx_type).ok_or_else(|| corrupt("type", &tx_type))?,
                    installment: installment.get(),
                    amount: Money::from_cents(cents),
                });
            }
        }
    }
    // Asked by the cards' ids (the payments index), not by user: that would
    // read the user's whole history by the (user, date) index.
    let ids: Vec<AccountId> = cards.keys().copied().collect();
    let mut query = QueryBuilder::<Db>::new(
        "SELECT id, bill_to_account_id, bill_month, amount_cents FROM transactions \
         WHERE bill_month IS NOT NULL",
    );
    push_id_list(&mut query, "bill_to_account_id", &ids);
    query.push(" ORDER BY date, id");
    let rows = query.build().fetch_all(&mut *conn).await?;
    for row in &rows {
        let month: String = row.try_get("bill_month")?;
        let payment = Payment {
            id: TransactionId(get_uuid(row, "id")?),
            month: BillMonth::parse_key(&month).ok_or_else(|| corrupt("bill_month", &month))?,
            amount: Money::from_cents(row.try_get("amount_cents")?),
        };
        if let Some(card) = cards.get_mut(&AccountId(get_uuid(row, "bill_to_account_id")?)) {
            card.payments.push(payment);
        }
    }
    Ok(cards)
}

impl SqlStore {
    async fn card_money_of(&self, user: UserId) -> StoreResult<Arc<HashMap<AccountId, CardMoney>>> {
        let mut conn = self.pool.acquire().await?;
        let version = view_version(&mut conn, user).await?;
        self.cards
            .get_or_load(user, version, load_card_money(&mut conn, user))
            .await
    }

    async fn pay_bill_in_tx(
        &self,
        user: UserId,
        payment: &NewBillPayment,
        decided_at: i64,
        now: Timestamp,
    ) -> StoreResult<()> {
        let (mut tx, version) = self.begin_write_versioned(user).await?;
        if version != decided_at {
            // Dropping `tx` rolls the version bump back.
            return Err(StoreError::Stale);
        }
        let card = fetch_account(&mut tx, user, payment.card_id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;
        if card.state.account_type != AccountType::Credit {
            return Err(StoreError::NotFound);
        }
        let bank = open_account(&mut tx, user, payment.from_account_id, "account_id").await?;
        if bank.state.account_type != AccountType::Bank {
            return Err(DomainError::field("account_id", "must be a bank account").into());
        }
        if bank.state.currency != card.state.currency {
            return Err(DomainError::field(
                "account_id",
                format!(
                    "is in {}, the card in {}: pay from an account in the card's currency",
                    bank.state.currency, card.state.currency
                ),
            )
            .into());
        }
        let legs = [
            (payment.bank_leg, &bank, &payment.bank, true),
            (payment.card_leg, &card, &payment.card, false),
        ];
        for (id, account, state, bank_side) in legs {
            insert_plain_row(&mut tx, id, user, account, state, now).await?;
            let leg = PaymentLeg {
                card_id: payment.card_id,
                month: payment.month,
                group: payment.group,
                bank_side,
            };
            mark_payment_leg(&mut tx, id, &leg).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn hide_bill_in_tx(
        &self,
        user: UserId,
        handle: &Handle,
        date: Date,
        now: Timestamp,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        insert_tombstone(&mut tx, user, handle, date, now).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn month_items_of(&self, user: UserId, month: BillMonth) -> StoreResult<Vec<MonthItem>> {
        let mut conn = self.pool.acquire().await?;
        // The month's visible rows off the cards, already summed by
        // account, type, status and kind by triggers (migration 0007): a
        // few dozen rows however many the month holds.
        let rows = sqlx::query(
            "SELECT m.account_id, m.type, m.status, m.kind, m.cents \
             FROM month_totals m JOIN accounts a ON a.id = m.account_id \
             WHERE a.user_id = $1 AND a.type <> 'CREDIT' AND m.month = $2 AND m.cents <> 0",
        )
        .bind(user.to_string())
        .bind(month.key())
        .fetch_all(&mut *conn)
        .await?;
        let mut items = Vec::with_capacity(rows.len());
        for row in &rows {
            let (tx_type, status, kind): (String, String, String) =
                (row.try_get("type")?, row.try_get("status")?, row.try_get("kind")?);
            items.push(MonthItem {
                account_id: AccountId(get_uuid(row, "account_id")?),
                tx_type: TxType::parse(&tx_type).ok_or_else(|| corrupt("type", &tx_type))?,
                status: TxStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
                kind: match kind.as_str() {
                    "installment" => ItemKind::Installment,
                    "recurrence" => ItemKind::Recurrence,
                    _ => ItemKind::Plain,
                },
                amount: Money::from_cents(row.try_get("cents")?),
            });
        }
        Ok(items)
    }
}
