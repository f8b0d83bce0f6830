//! Writes run on the calling thread, on the connection of the group
//! commit's batch ([`crate::group_commit::WriteGate::write_here`]): the
//! statements the general path sends through sqlx one by one, run here
//! with rusqlite, built by the same functions.

use rusqlite::Connection;

use super::*;
use crate::sync_reads::{every_row, first_column, run};

/// [`SqlStore::create_row_here`]'s write: the steps of
/// `try_create_transaction` with no plan, in its order.
pub(super) fn create_row(
    conn: &mut Connection,
    user: UserId,
    new: &NewTransaction,
    now: Timestamp,
) -> StoreResult<Created<Transaction>> {
    execute(conn, &bump_version_query(user))?;
    if new.client_chosen_id
        && let Some((owner, fingerprint)) = run(conn, &replay_query(new.id), |rows| {
            rows.next()?
                .map(|row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?)))
                .transpose()
        })?
    {
        same_request(user, new, &owner, fingerprint.as_deref())?;
        return Ok(Created {
            value: read_back(conn, user, new.id)?,
            deduped: true,
        });
    }
    if let Some(query) = category_query(user, new.state.category_id) {
        category_found(run(conn, &query, first_column::<String>)?.is_some())?;
    }
    if let Some(query) = tags_query(user, &new.state.tag_ids) {
        let found = run(conn, &query, |rows| {
            every_row(rows, new.state.tag_ids.len(), |row| Ok(row.get(0)?))
        })?;
        tags_found(&new.state.tag_ids, &found)?;
    }
    execute(conn, &insert_query(&new_row(user, new, now)))?;
    inserted_into_account(conn.changes())?;
    if let Some(query) = insert_tags_query(new.id, &new.state.tag_ids) {
        execute(conn, &query)?;
    }
    Ok(Created {
        value: read_back(conn, user, new.id)?,
        deduped: false,
    })
}

/// Runs `sql` to its end (every row it answers is stepped over).
fn execute(conn: &mut Connection, sql: &Sql) -> StoreResult<()> {
    run(conn, sql, |rows| {
        while rows.next()?.is_some() {}
        Ok(())
    })
}

/// The user's row `id` as the write left it.
fn read_back(conn: &mut Connection, user: UserId, id: TransactionId) -> StoreResult<Transaction> {
    run(conn, &transaction_query(user, id), |rows| {
        match rows.next()? {
            Some(row) => RawTx::from_row(row)?.into_transaction(),
            None => Err(StoreError::NotFound),
        }
    })
}
