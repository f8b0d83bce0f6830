// User profiles. Included by `sqlite.rs` and `postgres.rs` with the other
// `sql_*.rs` files, sharing `sql_store.rs` imports; `Store` methods forward here.

impl SqlStore {
    async fn update_profile_in_tx(
        &self,
        user: UserId,
        changes: &ProfileChanges,
    ) -> StoreResult<Profile> {
        let mut tx = self.begin_write(user).await?;
        let row = sqlx::query(
            "SELECT id, name, wage_cents, monthly_living_cost_cents, has_spouse, has_children, \
             is_entrepreneur FROM users WHERE id = $1",
        )
        .bind(user.to_string())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let next = profile_rules::apply_changes(&profile_from_row(&row)?, changes)?;
        sqlx::query(
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
}
