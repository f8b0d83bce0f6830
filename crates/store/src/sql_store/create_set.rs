//! Creating transaction rows: the one implementation of a creation's
//! rules, for a set of creations at once. A single creation is a set of
//! one; PostgreSQL stores the creations that arrive together as one set
//! in one transaction (`postgres/creations.rs`), so each step below is one
//! statement for all of them, whatever their number.
//!
//! The steps, for the creations not yet refused, each deciding before
//! anything is written for the creation it refuses:
//! 1. the API key a request was authenticated with from memory is still
//!    live and its user's (else [`StoreError::KeyRevoked`]);
//! 2. the users are locked (in id order, on PostgreSQL) and their view
//!    version bumped, first, so the triggers stamp the rows' days with it;
//! 3. a client-chosen id already stored is this request's replay (answered
//!    with the stored row) or another request's ([`StoreError::IdConflict`]);
//!    then the category, each tag and the account must be the user's;
//! 4. the rows left are stored, with their tags, and read back.
//!
//! The creations go in as one JSON value (a statement's text is the same
//! whatever the set's size, so it is prepared once a connection), read
//! as rows by [`Dialect::json_rows`]. Creations sharing an id go in rounds,
//! so a later one sees the earlier one's row, as it would alone.

use super::transactions::{new_row, same_request};
use super::*;

/// One creation of a row (no installment plan: its plan goes in after).
pub(crate) struct Creation<'a> {
    pub(crate) user: UserId,
    pub(crate) new: &'a NewTransaction,
    pub(crate) now: Timestamp,
    /// The key to find live in the same transaction, when the request was
    /// authenticated from memory ([`crate::Store::create_transaction`]).
    pub(crate) key: Option<ApiKeyId>,
}

/// What a creation is answered.
pub(crate) type Answer = StoreResult<Created<Transaction>>;

/// The statements of a set's steps, in a dialect (built once a backend:
/// [`Dialect::texts`]).
pub struct Texts {
    revoked_keys: String,
    lock_users: Option<String>,
    bump_users: String,
    decide: String,
    missing_tags: String,
    insert_rows: String,
    insert_tags: String,
    fetched: String,
}

/// A creation's columns in the JSON of a set, and their types.
const ROW_COLUMNS: [(&str, &str); 23] = [
    ("n", "BIGINT"),
    ("id", "TEXT"),
    ("user_id", "TEXT"),
    ("account_id", "TEXT"),
    ("day", "TEXT"),
    ("tx_type", "TEXT"),
    ("status", "TEXT"),
    ("cents", "BIGINT"),
    ("description", "TEXT"),
    ("notes", "TEXT"),
    ("category_id", "TEXT"),
    ("by_user", "BOOLEAN"),
    ("source", "TEXT"),
    ("hide", "BOOLEAN"),
    ("search", "TEXT"),
    ("fingerprint", "TEXT"),
    ("at", "TEXT"),
    ("rule_id", "TEXT"),
    ("period", "TEXT"),
    ("purchase_id", "TEXT"),
    ("seq", "BIGINT"),
    ("client_chosen", "BOOLEAN"),
    ("key_id", "TEXT"),
];

/// A tag a creation names: its creation's `n`, its place among the
/// creation's tags, and the owner it must have.
const TAG_COLUMNS: [(&str, &str); 4] = [
    ("n", "BIGINT"),
    ("k", "BIGINT"),
    ("tag_id", "TEXT"),
    ("user_id", "TEXT"),
];

/// The statements of `D`'s dialect.
pub(crate) fn texts<D: Dialect>(entries_select: &str) -> Texts {
    let rows = D::json_rows(1, &ROW_COLUMNS);
    let tags = D::json_rows(1, &TAG_COLUMNS);
    let ids = D::json_rows(1, &[("id", "TEXT")]);
    let fetched = format!("{entries_select} WHERE t.id IN (SELECT v.id FROM {ids})");
    Texts {
        revoked_keys: format!(
            "SELECT v.n FROM {rows} WHERE v.key_id IS NOT NULL AND NOT EXISTS \
             (SELECT 1 FROM api_keys k WHERE k.id = v.key_id AND k.user_id = v.user_id \
             AND k.revoked_at IS NULL)"
        ),
        lock_users: D::LOCK_ROWS.map(|lock| {
            format!(
                "SELECT u.id FROM users u WHERE u.id IN (SELECT v.user_id FROM {rows}) \
                 ORDER BY u.id {lock}"
            )
        }),
        bump_users: format!(
            "UPDATE users SET view_version = view_version + 1 \
             WHERE id IN (SELECT v.user_id FROM {rows})"
        ),
        decide: format!(
            "SELECT v.n, t.user_id, t.fingerprint, \
             CASE WHEN v.category_id IS NULL OR EXISTS (SELECT 1 FROM categories g \
             WHERE g.id = v.category_id AND (g.user_id IS NULL OR g.user_id = v.user_id)) \
             THEN 1 ELSE 0 END, \
             CASE WHEN EXISTS (SELECT 1 FROM accounts a WHERE a.id = v.account_id \
             AND a.user_id = v.user_id) THEN 1 ELSE 0 END \
             FROM {rows} LEFT JOIN transactions t ON v.client_chosen AND t.id = v.id"
        ),
        missing_tags: format!(
            "SELECT v.n, v.tag_id FROM {tags} WHERE NOT EXISTS (SELECT 1 FROM tags g \
             WHERE g.id = v.tag_id AND g.user_id = v.user_id) ORDER BY v.n, v.k"
        ),
        insert_rows: format!(
            "INSERT INTO transactions (id, user_id, account_id, date, type, status, \
             amount_cents, currency, description, notes, category_id, created_by_user, source, \
             hide_from_results, search_text, fingerprint, created_at, updated_at, recurrence_id, \
             recurrence_period_date, installment_purchase_id, installment_number) \
             SELECT v.id, v.user_id, v.account_id, v.day, v.tx_type, v.status, v.cents, \
             a.currency, v.description, v.notes, v.category_id, v.by_user, v.source, v.hide, \
             v.search, v.fingerprint, v.at, v.at, v.rule_id, v.period, v.purchase_id, v.seq \
             FROM {rows} JOIN accounts a ON a.id = v.account_id AND a.user_id = v.user_id \
             ORDER BY v.n"
        ),
        insert_tags: format!(
            "INSERT INTO transaction_tags (transaction_id, tag_id) \
             SELECT v.id, v.tag_id FROM {}",
            D::json_rows(1, &[("id", "TEXT"), ("tag_id", "TEXT")])
        ),
        fetched,
    }
}

/// Stores `set` in the write transaction `conn` holds; each creation's
/// answer, in order. A refusal answers its creation alone; an error fails
/// the whole set, whose transaction must then be rolled back.
pub(crate) async fn create_set<C: Conn>(
    conn: &mut C,
    set: &[Creation<'_>],
) -> StoreResult<Vec<Answer>> {
    let mut answers: Vec<Option<Answer>> = set.iter().map(|_| None).collect();
    for round in rounds(set) {
        create_round(conn, set, &round, &mut answers).await?;
    }
    Ok(answers
        .into_iter()
        .map(|answer| answer.unwrap_or(Err(StoreError::NotFound)))
        .collect())
}

/// The creations of `set` by round: each creation goes in the round after
/// the last one holding its id, so no round holds an id twice.
fn rounds(set: &[Creation<'_>]) -> Vec<Vec<usize>> {
    let mut seen: HashMap<TransactionId, usize> = HashMap::new();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (i, creation) in set.iter().enumerate() {
        let round = seen.entry(creation.new.id).or_insert(0);
        if rounds.len() <= *round {
            rounds.push(Vec::new());
        }
        rounds[*round].push(i);
        *round += 1;
    }
    rounds
}

/// The creations `live` (indexes of `set`, ids distinct), answered in
/// `answers`.
async fn create_round<C: Conn>(
    conn: &mut C,
    set: &[Creation<'_>],
    live: &[usize],
    answers: &mut [Option<Answer>],
) -> StoreResult<()> {
    let texts = &<C::Db as Dialect>::texts().creations;
    let mut live = live.to_vec();
    if live.iter().any(|&i| set[i].key.is_some()) {
        let revoked: Vec<i64> = run(&texts.revoked_keys, rows_json(set, &live)?)
            .scalars(&mut *conn)
            .await?;
        live.retain(|&i| {
            let keep = !revoked.contains(&n(i));
            if !keep {
                answers[i] = Some(Err(StoreError::KeyRevoked));
            }
            keep
        });
    }
    if live.is_empty() {
        return Ok(());
    }
    let rows = rows_json(set, &live)?;
    if let Some(lock) = &texts.lock_users {
        run(lock, rows.clone()).execute(&mut *conn).await?;
    }
    run(&texts.bump_users, rows.clone())
        .execute(&mut *conn)
        .await?;
    let decided = run(&texts.decide, rows).fetch_all(&mut *conn).await?;
    let missing = missing_tags(conn, set, &live).await?;
    let mut stored = Vec::with_capacity(live.len());
    let mut replayed = Vec::new();
    for row in &decided {
        let i = index(row.col(0)?, set.len())?;
        let creation = &set[i];
        let owner: Option<String> = row.col(1)?;
        let fingerprint: Option<String> = row.col(2)?;
        let category_seen: i32 = row.col(3)?;
        let account_seen: i32 = row.col(4)?;
        let refusal = if let Some(owner) = owner {
            match same_request(creation.user, creation.new, &owner, fingerprint.as_deref()) {
                Ok(()) => {
                    replayed.push(i);
                    continue;
                }
                Err(err) => Some(err),
            }
        } else if category_seen == 0 {
            Some(no_such_category())
        } else if let Some(tag) = missing.get(&i) {
            Some(no_such_tag(tag))
        } else if account_seen == 0 {
            Some(no_such_account())
        } else {
            None
        };
        match refusal {
            Some(err) => answers[i] = Some(Err(err)),
            None => stored.push(i),
        }
    }
    stored.sort_unstable();
    if !stored.is_empty() {
        let inserted = run(&texts.insert_rows, rows_json(set, &stored)?)
            .execute(&mut *conn)
            .await?;
        if inserted != stored.len() as u64 {
            return Err(StoreError::Conflict(
                "an account changed while its rows were stored".to_owned(),
            ));
        }
        let tags: Vec<serde_json::Value> = stored
            .iter()
            .flat_map(|&i| {
                let id = set[i].new.id.to_string();
                set[i]
                    .new
                    .state
                    .tag_ids
                    .iter()
                    .map(move |tag| serde_json::json!({ "id": id, "tag_id": tag.to_string() }))
            })
            .collect();
        if !tags.is_empty() {
            run(&texts.insert_tags, json_text(&tags)?)
                .execute(&mut *conn)
                .await?;
        }
    }
    let wanted: Vec<serde_json::Value> = stored
        .iter()
        .chain(&replayed)
        .map(|&i| serde_json::json!({ "id": set[i].new.id.to_string() }))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let mut found: HashMap<TransactionId, Transaction> = HashMap::new();
    for row in fetch_entries(conn, run(&texts.fetched, json_text(&wanted)?)).await? {
        if let Some(id) = row.id.stored() {
            found.insert(id, row);
        }
    }
    for (&i, deduped) in stored
        .iter()
        .map(|i| (i, false))
        .chain(replayed.iter().map(|i| (i, true)))
    {
        let value = found.remove(&set[i].new.id).ok_or(StoreError::NotFound)?;
        answers[i] = Some(Ok(Created { value, deduped }));
    }
    Ok(())
}

/// Each creation's first tag that is not its user's, by the creation's
/// index.
async fn missing_tags<C: Conn>(
    conn: &mut C,
    set: &[Creation<'_>],
    live: &[usize],
) -> StoreResult<HashMap<usize, String>> {
    let tags: Vec<serde_json::Value> = live
        .iter()
        .flat_map(|&i| {
            let user = set[i].user.to_string();
            set[i]
                .new
                .state
                .tag_ids
                .iter()
                .enumerate()
                .map(move |(k, tag)| {
                    serde_json::json!({
                        "n": n(i), "k": k, "tag_id": tag.to_string(), "user_id": user
                    })
                })
        })
        .collect();
    let mut missing = HashMap::new();
    if tags.is_empty() {
        return Ok(missing);
    }
    let texts = &<C::Db as Dialect>::texts().creations;
    for row in run(&texts.missing_tags, json_text(&tags)?)
        .fetch_all(&mut *conn)
        .await?
    {
        let i = index(row.col(0)?, set.len())?;
        missing.entry(i).or_insert(row.col::<String>(1)?);
    }
    Ok(missing)
}

/// A set's statement with its one value, the set as JSON.
fn run(text: &str, json: String) -> Sql {
    Sql::with(text, [Arg::Text(json)])
}

/// A creation's index as its `n` in the JSON.
fn n(i: usize) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

/// The index a row's `n` names, which must be one of the set's.
fn index(n: i64, len: usize) -> StoreResult<usize> {
    usize::try_from(n)
        .ok()
        .filter(|&i| i < len)
        .ok_or_else(|| StoreError::Corrupt(format!("a creation numbered {n}")))
}

fn json_text(values: &[serde_json::Value]) -> StoreResult<String> {
    serde_json::to_string(values).map_err(|e| StoreError::Corrupt(format!("a set's JSON: {e}")))
}

/// The creations `which` of `set` as the JSON the statements read
/// ([`ROW_COLUMNS`]): each the values [`insert_args`] gives its row, its
/// number, whether the client chose its id, and the key to check.
fn rows_json(set: &[Creation<'_>], which: &[usize]) -> StoreResult<String> {
    let rows: Vec<serde_json::Value> = which
        .iter()
        .map(|&i| {
            let creation = &set[i];
            let args = insert_args(&new_row(creation.user, creation.new, creation.now));
            let mut row = serde_json::Map::with_capacity(ROW_COLUMNS.len());
            row.insert("n".to_owned(), n(i).into());
            for ((name, _), arg) in ROW_COLUMNS[1..].iter().zip(args) {
                row.insert((*name).to_owned(), arg_json(arg));
            }
            row.insert(
                "client_chosen".to_owned(),
                creation.new.client_chosen_id.into(),
            );
            row.insert(
                "key_id".to_owned(),
                creation.key.map(|key| key.to_string()).into(),
            );
            serde_json::Value::Object(row)
        })
        .collect();
    json_text(&rows)
}

/// A statement's value as JSON.
fn arg_json(arg: Arg) -> serde_json::Value {
    use serde_json::Value;
    match arg {
        Arg::Text(text) => Value::from(text),
        Arg::OptText(text) => text.map_or(Value::Null, Value::from),
        Arg::Int(number) => Value::from(number),
        Arg::OptInt(number) => number.map_or(Value::Null, Value::from),
        Arg::Bool(flag) => Value::from(flag),
        Arg::OptBool(flag) => flag.map_or(Value::Null, Value::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_of_a_row_fill_every_column_but_the_last_two() {
        // insert_args gives the 20 values of ROW_COLUMNS[1..21], in order.
        assert_eq!(ROW_COLUMNS.len(), 1 + 20 + 2);
        assert_eq!(ROW_COLUMNS[21].0, "client_chosen");
        assert_eq!(ROW_COLUMNS[22].0, "key_id");
    }
}
