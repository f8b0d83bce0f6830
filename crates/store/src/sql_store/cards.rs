//! Card bills: each card's money summed per day, and the payments made
//! against its bills.

use super::*;

/// One row of `day_totals` as the aggregate of [`days_query`] writes
/// it: date, type, installment, cents.
#[derive(serde::Deserialize)]
pub(crate) struct RawDay(String, String, JsonBool, i64);

impl RawDay {
    fn decode(self) -> StoreResult<DayTotal> {
        let RawDay(date, tx_type, installment, cents) = self;
        Ok(DayTotal {
            date: parse_day("date", &date)?,
            tx_type: TxType::parse(&tx_type).ok_or_else(|| corrupt("type", &tx_type))?,
            installment: installment.get(),
            amount: Money::from_cents(cents),
        })
    }
}

/// Where a day's total sits in a card's days, which are kept sorted by it.
pub(crate) fn day_key(day: &DayTotal) -> (Date, bool, bool) {
    (day.date, day.tx_type == TxType::Credit, day.installment)
}

/// The day totals of `card` stamped after `since` (all of them for -1;
/// zero totals only when asked for changes, where a zero replaces what
/// was kept), as one JSON array: handing thousands of rows over one by one
/// cost most of the first read after a write.
pub(crate) fn days_query<B: Dialect>(card: AccountId, since: i64) -> Sql {
    Sql::with(
        format!(
            "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(date, type, installment, cents)), '[]') AS TEXT) \
             FROM day_totals WHERE account_id = $1 AND version > $2 AND (cents <> 0 OR $2 >= 0)",
            JSON_AGG = B::JSON_AGG,
            JSON_ARRAY = B::JSON_ARRAY
        ),
        [Arg::Text(card.to_string()), Arg::Int(since)],
    )
}

/// Every payment registered against `card`'s bills, oldest first, as one
/// JSON array: a few a year, read whole on every change of the card.
pub(crate) fn payments_query<B: Dialect>(card: AccountId) -> Sql {
    Sql::with(
        format!(
            "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(id, bill_month, amount_cents)), '[]') AS TEXT) \
             FROM (SELECT id, bill_month, amount_cents FROM transactions \
             WHERE bill_to_account_id = $1 AND bill_month IS NOT NULL ORDER BY date, id) g",
            JSON_AGG = B::JSON_AGG,
            JSON_ARRAY = B::JSON_ARRAY
        ),
        [Arg::Text(card.to_string())],
    )
}

pub(crate) fn decode_payments(text: &str) -> StoreResult<Vec<Payment>> {
    let raw: Vec<(&str, &str, i64)> = serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("bill payments: {e}")))?;
    raw.into_iter()
        .map(|(id, month, cents)| {
            Ok(Payment {
                id: TransactionId(parse_uuid("id", id)?),
                month: BillMonth::parse_key(month).ok_or_else(|| corrupt("bill_month", month))?,
                amount: Money::from_cents(cents),
            })
        })
        .collect()
}

/// `kept` with the day totals `changed` since it was read: one merge of
/// two sorted lists, however many days changed (a change is a total's new
/// value, so reading one twice is harmless).
pub(crate) fn merge_days(kept: &[DayTotal], mut changed: Vec<DayTotal>) -> Vec<DayTotal> {
    changed.sort_unstable_by_key(day_key);
    let mut days = Vec::with_capacity(kept.len() + changed.len());
    let mut old = kept.iter().copied().peekable();
    for day in changed {
        while let Some(before) = old.next_if(|k| day_key(k) < day_key(&day)) {
            days.push(before);
        }
        // The kept total of that day, if any, is replaced.
        old.next_if(|k| day_key(k) == day_key(&day));
        if day.amount.cents() != 0 {
            days.push(day);
        }
    }
    days.extend(old);
    days
}

impl<B: Backend> SqlStore<B> {
    /// `kept` brought up to `version`, a money version read before (so the
    /// result holds at least every change up to it): the day totals
    /// changed since `kept` was read replace theirs (and the bill sums
    /// built from them are summed again for those days' months alone),
    /// and the payments are read again. From nothing kept (version -1) it
    /// is the card's whole money, a long read left to the pool; a refresh
    /// is a few short reads on the calling thread.
    pub(crate) async fn refresh_card(
        &self,
        card: AccountId,
        kept: &CardMoney,
        version: i64,
    ) -> StoreResult<CardMoney> {
        let days = days_query::<B>(card, kept.version);
        let days = if kept.version < 0 {
            pool_one::<B, String>(&self.pool, days)
                .await?
                .unwrap_or_else(|| "[]".to_owned())
        } else {
            self.read_array(days).await?
        };
        let raw: Vec<RawDay> = serde_json::from_str(&days)
            .map_err(|e| StoreError::Corrupt(format!("day_totals: {e}")))?;
        let changed = raw
            .into_iter()
            .map(RawDay::decode)
            .collect::<StoreResult<Vec<_>>>()?;
        let payments = decode_payments(&self.read_array(payments_query::<B>(card)).await?)?;
        let dates: Vec<Date> = changed.iter().map(|d| d.date).collect();
        let days = merge_days(&kept.days, changed);
        Ok(CardMoney::after(kept, version, days, dates, payments))
    }

    /// Each of the user's cards' money, from memory where the card's money
    /// version is the one kept: a write reloads only the cards it touched,
    /// and of those only the days it changed.
    pub(crate) async fn card_money_of(
        &self,
        user: UserId,
    ) -> StoreResult<HashMap<AccountId, Arc<CardMoney>>> {
        // The versions are one short read; a card is read from the database
        // only when its money changed since it was kept.
        let versions = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(a.id, b.money_version)), '[]') AS TEXT) \
                 FROM accounts a JOIN account_balances b ON b.account_id = a.id \
                 WHERE a.user_id = $1 AND a.type = 'CREDIT'",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [Arg::Text(user.to_string())],
        );
        let text = self.read_array(versions).await?;
        let versions: Vec<(String, i64)> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("card versions: {e}")))?;
        let mut cards = HashMap::with_capacity(versions.len());
        for (id, version) in versions {
            let card = AccountId(parse_uuid("id", &id)?);
            // Concurrent first reads of a card load it once.
            let kept = self
                .cards
                .try_get_with(card, async {
                    let nothing = CardMoney::new(-1, Vec::new(), Vec::new());
                    self.refresh_card(card, &nothing, version)
                        .await
                        .map(Arc::new)
                })
                .await
                .map_err(shared_error)?;
            let money = if kept.version >= version {
                kept
            } else {
                let fresh = Arc::new(self.refresh_card(card, &kept, version).await?);
                self.cards.insert(card, fresh.clone()).await;
                fresh
            };
            cards.insert(card, money);
        }
        Ok(cards)
    }

    pub(crate) async fn pay_bill_in_tx(
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
        let card = fetch_account(&mut *tx, user, payment.card_id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;
        if card.state.account_type != AccountType::Credit {
            return Err(StoreError::NotFound);
        }
        let bank = open_account(&mut *tx, user, payment.from_account_id, "account_id").await?;
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
            insert_plain_row(&mut *tx, id, user, account, state, now).await?;
            let leg = PaymentLeg {
                card_id: payment.card_id,
                month: payment.month,
                group: payment.group,
                bank_side,
            };
            mark_payment_leg(&mut *tx, id, &leg).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn hide_bill_in_tx(
        &self,
        user: UserId,
        handle: &Handle,
        date: Date,
        now: Timestamp,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        insert_tombstone(&mut *tx, user, handle, date, now).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn month_items_of(
        &self,
        user: UserId,
        month: BillMonth,
    ) -> StoreResult<Vec<MonthItem>> {
        // The month's visible rows off the cards, already summed by
        // account, type, status and kind by triggers (the schema baseline): a
        // few dozen rows however many the month holds, as one short read.
        let query = Sql::with(
            format!(
                "SELECT CAST(COALESCE({JSON_AGG}({JSON_ARRAY}(m.account_id, m.type, m.status, \
                 m.kind, m.cents)), '[]') AS TEXT) \
                 FROM month_totals m JOIN accounts a ON a.id = m.account_id \
                 WHERE a.user_id = $1 AND a.type <> 'CREDIT' AND m.month = $2 AND m.cents <> 0",
                JSON_AGG = B::JSON_AGG,
                JSON_ARRAY = B::JSON_ARRAY
            ),
            [Arg::Text(user.to_string()), Arg::Text(month.key())],
        );
        let text = self.read_array(query).await?;
        let rows: Vec<(&str, &str, &str, &str, i64)> = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("month totals: {e}")))?;
        let mut items = Vec::with_capacity(rows.len());
        for (account, tx_type, status, kind, cents) in rows {
            items.push(MonthItem {
                account_id: AccountId(parse_uuid("account_id", account)?),
                tx_type: TxType::parse(tx_type).ok_or_else(|| corrupt("type", tx_type))?,
                status: TxStatus::parse(status).ok_or_else(|| corrupt("status", status))?,
                kind: match kind {
                    "installment" => ItemKind::Installment,
                    "recurrence" => ItemKind::Recurrence,
                    _ => ItemKind::Plain,
                },
                amount: Money::from_cents(cents),
            });
        }
        Ok(items)
    }
}
