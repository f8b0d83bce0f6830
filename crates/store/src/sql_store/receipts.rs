//! Receipt names of stored rows.

use super::*;

impl<B: Backend> SqlStore<B> {
    /// [`Store::set_receipt`]: reads the current name and writes the new one
    /// in the same transaction. `begin_write` first locks the user's row,
    /// so concurrent writes of one user are serialised and the name read
    /// here is the one this write replaces.
    pub(crate) async fn write_receipt(
        &self,
        user: UserId,
        id: TransactionId,
        name: Option<&str>,
        now: Timestamp,
    ) -> StoreResult<Option<String>> {
        let mut tx = self.begin_write(user).await?;
        let row = Sql::new("SELECT receipt_name FROM transactions WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        let previous: Option<String> = row.col("receipt_name")?;
        Sql::new(
            "UPDATE transactions SET receipt_name = $3, updated_at = $4 \
             WHERE id = $1 AND user_id = $2",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(name.map(str::to_owned))
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(previous)
    }
}
