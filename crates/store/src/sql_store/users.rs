//! User profiles.

use super::*;

/// Stores a key; NotFound when its user does not exist.
pub(crate) async fn insert_api_key(conn: &mut impl Conn, key: &ApiKey) -> StoreResult<()> {
    let result = Sql::new(
        "INSERT INTO api_keys (id, user_id, secret_hash, scopes, label, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(key.id.to_string())
    .bind(key.user_id.to_string())
    .bind(key.secret_hash.clone())
    .bind(format_scopes(&key.scopes))
    .bind(key.label.clone())
    .bind(format_timestamp(key.created_at))
    .execute(&mut *conn)
    .await;
    match result {
        Ok(_) => Ok(()),
        Err(StoreError::Database(sqlx::Error::Database(db))) if db.is_foreign_key_violation() => {
            Err(StoreError::NotFound)
        }
        Err(err) => Err(err),
    }
}

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn create_first_user_in_tx(
        &self,
        key: &ApiKey,
        now: Timestamp,
    ) -> StoreResult<Option<Profile>> {
        let mut tx = self.writes.begin().await?;
        Sql::new(B::LOCK_USERS).execute(&mut *tx).await?;
        let users: i64 = Sql::new("SELECT COUNT(*) FROM users")
            .scalar(&mut *tx)
            .await?;
        if users > 0 {
            return Ok(None);
        }
        Sql::new("INSERT INTO users (id, created_at) VALUES ($1, $2)")
            .bind(key.user_id.to_string())
            .bind(format_timestamp(now))
            .execute(&mut *tx)
            .await?;
        insert_api_key(&mut *tx, key).await?;
        tx.commit().await?;
        self.get_profile(key.user_id).await.map(Some)
    }

    pub(crate) async fn update_profile_in_tx(
        &self,
        user: UserId,
        changes: &ProfileChanges,
    ) -> StoreResult<Profile> {
        let mut tx = self.begin_write(user).await?;
        let row = Sql::new(
            "SELECT id, name, wage_cents, monthly_living_cost_cents, has_spouse, has_children, \
             is_entrepreneur FROM users WHERE id = $1",
        )
        .bind(user.to_string())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let next = profile_rules::apply_changes(&profile_from_row(&row)?, changes)?;
        Sql::new(
            "UPDATE users SET name = $2, wage_cents = $3, monthly_living_cost_cents = $4, \
             has_spouse = $5, has_children = $6, is_entrepreneur = $7 WHERE id = $1",
        )
        .bind(user.to_string())
        .bind(next.name.clone())
        .bind(next.wage.map(Money::cents))
        .bind(next.monthly_living_cost.map(Money::cents))
        .bind(next.has_spouse)
        .bind(next.has_children)
        .bind(next.is_entrepreneur)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(next)
    }

    pub(crate) async fn list_users_with_keys(&self) -> StoreResult<Vec<UserSummary>> {
        let rows = Sql::new(
            "SELECT u.id, u.name, u.created_at, \
             (SELECT COUNT(*) FROM api_keys k WHERE k.user_id = u.id AND k.revoked_at IS NULL) \
             AS active_keys FROM users u ORDER BY u.created_at, u.id",
        )
        .fetch_all(&mut *self.pool.acquire().await?)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(UserSummary {
                    id: UserId(get_uuid(row, "id")?),
                    name: row.col("name")?,
                    created_at: get_ts(row, "created_at")?,
                    active_keys: row.col("active_keys")?,
                })
            })
            .collect()
    }

    pub(crate) async fn rotate_key_in_tx(
        &self,
        old: ApiKeyId,
        new: &ApiKey,
        now: Timestamp,
    ) -> StoreResult<()> {
        let mut tx = self.writes.begin().await?;
        let revoked =
            Sql::new("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
                .bind(old.to_string())
                .bind(format_timestamp(now))
                .execute(&mut *tx)
                .await?;
        if revoked == 0 {
            return Err(StoreError::NotFound);
        }
        insert_api_key(&mut *tx, new).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn delete_user_in_tx(&self, user: UserId) -> StoreResult<Vec<String>> {
        let mut tx = self.begin_write(user).await?;
        let receipts: Vec<String> = Sql::new(
            "SELECT receipt_name FROM transactions WHERE user_id = $1 AND receipt_name IS NOT NULL",
        )
        .bind(user.to_string())
        .scalars(&mut *tx)
        .await?;
        // Accounts point at each other (the paying account of a card):
        // let go first, as deleting one account does.
        Sql::new("UPDATE accounts SET pay_bill_from_account_id = NULL WHERE user_id = $1")
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        // Everything else of the user goes with the row (ON DELETE CASCADE).
        let deleted = Sql::new("DELETE FROM users WHERE id = $1")
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(receipts)
    }
}
