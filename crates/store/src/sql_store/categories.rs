//! Categories and tags.

use super::*;

impl<B: Backend> SqlStore<B> {
    pub(crate) async fn create_category_in_tx(
        &self,
        user: UserId,
        changes: &CategoryChanges,
        now: Timestamp,
    ) -> StoreResult<Category> {
        let mut tx = self.begin_write(user).await?;
        let visible = fetch_categories(&mut *tx, user).await?;
        let state = category_rules::apply_changes(None, changes, &visible)?;
        let id = CategoryId::new();
        Sql::new(
            "INSERT INTO categories (id, user_id, title, parent_id, icon_id, color_hex, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(state.title.clone())
        .bind(opt_string(state.parent_id))
        .bind(state.icon_id.clone())
        .bind(state.color_hex.clone())
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await?;
        set_category_archived(&mut *tx, user, id, state.archived).await?;
        let created = fetch_categories(&mut *tx, user)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(created)
    }

    pub(crate) async fn update_category_in_tx(
        &self,
        user: UserId,
        id: CategoryId,
        changes: &CategoryChanges,
    ) -> StoreResult<Category> {
        let mut tx = self.begin_write(user).await?;
        let visible = fetch_categories(&mut *tx, user).await?;
        let current = visible
            .iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        let state = category_rules::apply_changes(Some(current), changes, &visible)?;
        if !current.is_system() {
            Sql::new(
                "UPDATE categories SET title = $3, parent_id = $4, icon_id = $5, color_hex = $6 \
                 WHERE id = $1 AND user_id = $2",
            )
            .bind(id.to_string())
            .bind(user.to_string())
            .bind(state.title.clone())
            .bind(opt_string(state.parent_id))
            .bind(state.icon_id.clone())
            .bind(state.color_hex.clone())
            .execute(&mut *tx)
            .await?;
        }
        set_category_archived(&mut *tx, user, id, state.archived).await?;
        let updated = fetch_categories(&mut *tx, user)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        tx.commit().await?;
        Ok(updated)
    }

    pub(crate) async fn delete_category_in_tx(
        &self,
        user: UserId,
        id: CategoryId,
        replacement: Option<CategoryId>,
    ) -> StoreResult<CategoryDeletion> {
        let mut tx = self.begin_write(user).await?;
        let visible = fetch_categories(&mut *tx, user).await?;
        let current = visible
            .iter()
            .find(|c| c.id == id)
            .ok_or(StoreError::NotFound)?;
        category_rules::check_deletion(current, replacement, &visible)?;
        let mut moved = [0u64; 3];
        let tables = ["transactions", "recurrence_rules", "installment_plans"];
        for (count, table) in moved.iter_mut().zip(tables) {
            *count = Sql::new(format!(
                "UPDATE {table} SET category_id = $3 WHERE user_id = $2 AND category_id = $1"
            ))
            .bind(id.to_string())
            .bind(user.to_string())
            .bind(opt_string(replacement))
            .execute(&mut *tx)
            .await?;
        }
        // Subcategories move to the top level by the foreign key
        // (ON DELETE SET NULL), archive marks go with the row.
        Sql::new("DELETE FROM categories WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        let [moved_transactions, moved_rules, moved_plans] = moved;
        Ok(CategoryDeletion {
            moved_transactions,
            moved_rules,
            moved_plans,
        })
    }

    pub(crate) async fn create_tag_in_tx(
        &self,
        user: UserId,
        tag: &NewTag,
        now: Timestamp,
    ) -> StoreResult<Tag> {
        let created = Tag {
            id: TagId::new(),
            user_id: user,
            title: tag.title.clone(),
            color_hex: tag.color_hex.clone(),
            created_at: now,
        };
        let mut tx = self.begin_write(user).await?;
        let result = Sql::new(
            "INSERT INTO tags (id, user_id, title, title_key, color_hex, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(created.id.to_string())
        .bind(user.to_string())
        .bind(tag.title.clone())
        .bind(tag.title_key.clone())
        .bind(tag.color_hex.clone())
        .bind(format_timestamp(now))
        .execute(&mut *tx)
        .await;
        match result {
            Ok(_) => {
                tx.commit().await?;
                Ok(created)
            }
            Err(err) if is_unique_violation(&err) => Err(StoreError::TitleConflict),
            Err(err) => Err(err),
        }
    }

    pub(crate) async fn update_tag_in_tx(
        &self,
        user: UserId,
        id: TagId,
        changes: &TagChanges,
    ) -> StoreResult<Tag> {
        let mut tx = self.begin_write(user).await?;
        let row = Sql::new(
            "SELECT id, user_id, title, title_key, color_hex, created_at FROM tags \
             WHERE id = $1 AND user_id = $2",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let mut tag = Tag {
            id,
            user_id: user,
            title: row.col("title")?,
            color_hex: row.col("color_hex")?,
            created_at: get_ts(&row, "created_at")?,
        };
        let mut title_key: String = row.col("title_key")?;
        if let Some(title) = &changes.title {
            tag.title = title.title.clone();
            title_key = title.title_key.clone();
        }
        if let Some(color) = &changes.color_hex {
            tag.color_hex = color.clone();
        }
        let result = Sql::new(
            "UPDATE tags SET title = $3, title_key = $4, color_hex = $5 WHERE id = $1 AND user_id = $2",
        )
        .bind(id.to_string())
        .bind(user.to_string())
        .bind(tag.title.clone())
        .bind(title_key)
        .bind(tag.color_hex.clone())
        .execute(&mut *tx)
        .await;
        match result {
            Ok(_) => {
                tx.commit().await?;
                Ok(tag)
            }
            Err(err) if is_unique_violation(&err) => Err(StoreError::TitleConflict),
            Err(err) => Err(err),
        }
    }

    pub(crate) async fn delete_tag_in_tx(&self, user: UserId, id: TagId) -> StoreResult<()> {
        let mut tx = self.begin_write(user).await?;
        // Rows lose it by the foreign key (ON DELETE CASCADE); rules and
        // installment purchases keep their tags as a list, rewritten here.
        let deleted = Sql::new("DELETE FROM tags WHERE id = $1 AND user_id = $2")
            .bind(id.to_string())
            .bind(user.to_string())
            .execute(&mut *tx)
            .await?;
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        let gone = id.to_string();
        for table in ["recurrence_rules", "installment_plans"] {
            let rows = Sql::new(format!(
                "SELECT id, tag_ids FROM {table} WHERE user_id = $1 AND tag_ids LIKE $2"
            ))
            .bind(user.to_string())
            .bind(format!("%{gone}%"))
            .fetch_all(&mut *tx)
            .await?;
            for row in &rows {
                let series: String = row.col("id")?;
                let tags: String = row.col("tag_ids")?;
                let kept: Vec<&str> = tags
                    .split(',')
                    .filter(|t| !t.is_empty() && *t != gone)
                    .collect();
                Sql::new(format!("UPDATE {table} SET tag_ids = $2 WHERE id = $1"))
                    .bind(series)
                    .bind(kept.join(","))
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}
