//! Accounts: create, update and delete.

use super::*;

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn create_account_in_tx(
        &self,
        user: UserId,
        changes: &AccountChanges,
        initial_balance: Option<Money>,
        default_currency: &str,
        ctx: WriteContext,
    ) -> StoreResult<(AccountView, Option<TransactionId>)> {
        let mut tx = self.begin_write(user).await?;
        let pay_from = pay_from_for(&mut *tx, user, changes).await?;
        let state =
            account_rules::apply_changes(None, changes, pay_from.as_ref(), default_currency)?;
        let id = AccountId::new();
        Sql::new(
            "INSERT INTO accounts (id, user_id, type, sub_type, title, currency, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(state.account_type.as_str())
        .bind(state.sub_type.as_str())
        .bind(state.title.clone())
        .bind(state.currency.clone())
        .bind(format_timestamp(ctx.now))
        .execute(&mut *tx)
        .await?;
        write_account_state(&mut *tx, id, &state).await?;
        let account = fetch_account(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?
            .account;

        let opening = match initial_balance {
            Some(amount) if amount != Money::ZERO => {
                let row_id = TransactionId::new();
                let opening = TransactionState {
                    date: ctx.today,
                    tx_type: if amount.is_negative() {
                        TxType::Debit
                    } else {
                        TxType::Credit
                    },
                    status: TxStatus::Posted,
                    amount: amount.abs(),
                    description: "Saldo inicial".to_owned(),
                    notes: None,
                    category_id: None,
                    tag_ids: Vec::new(),
                    hide_from_results: true,
                };
                insert_transaction(
                    &mut *tx,
                    RowInsert {
                        id: row_id,
                        user,
                        account: account.id,
                        state: &opening,
                        link: SeriesLink::None,
                        source: Source::Api,
                        fingerprint: None,
                        now: ctx.now,
                    },
                )
                .await?;
                Some(row_id)
            }
            _ => None,
        };
        let view = fetch_account(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok((view, opening))
    }

    pub(crate) async fn update_account_in_tx(
        &self,
        user: UserId,
        id: AccountId,
        changes: &AccountChanges,
    ) -> StoreResult<AccountView> {
        let mut tx = self.begin_write(user).await?;
        let current = fetch_account(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let pay_from = pay_from_for(&mut *tx, user, changes).await?;
        let state = account_rules::apply_changes(
            Some(&current.account),
            changes,
            pay_from.as_ref(),
            &current.account.state.currency,
        )?;
        if current.account.state.account_type == AccountType::Bank
            && state.account_type == AccountType::Credit
        {
            // A card cannot pay bills of other cards: clear links to it.
            Sql::new(
                "UPDATE accounts SET pay_bill_from_account_id = NULL \
                 WHERE pay_bill_from_account_id = $1",
            )
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
        }
        write_account_state(&mut *tx, id, &state).await?;
        let view = fetch_account(&mut *tx, user, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(view)
    }

    pub(crate) async fn delete_account_in_tx(
        &self,
        user: UserId,
        id: AccountId,
    ) -> StoreResult<Vec<String>> {
        let mut tx = self.begin_write(user).await?;
        let receipts: Vec<String> = Sql::new(
            "SELECT receipt_name FROM transactions WHERE account_id = $1 AND user_id = $2 \
             AND receipt_name IS NOT NULL",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.col("receipt_name"))
        .collect::<Result<_, _>>()?;
        // Rows and their tags go with the account (ON DELETE CASCADE);
        // references from other accounts and rows are cleared (SET NULL).
        let done = Sql::new("DELETE FROM accounts WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if done == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(receipts)
    }
}
