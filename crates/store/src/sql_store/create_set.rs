//! Creating transaction rows: the one implementation of a creation's
//! rules, for a set of creations at once. A single creation is a set of
//! one; PostgreSQL stores the creations that arrive together as one set
//! in one transaction (`postgres/creations.rs`), so each step below is one
//! statement for all of them, whatever their number.
//!
//! The steps, for the creations not yet refused, each deciding before
//! anything is written for the creation it refuses:
//! 1. the users are locked (in id order, on PostgreSQL) and their view
//!    version bumped, first, so the triggers stamp the rows' days with it;
//! 2. the API key a request was authenticated with from memory must still
//!    be live and its user's (else [`StoreError::KeyRevoked`]); a
//!    client-chosen id already stored is this request's replay (answered
//!    with the stored row) or another request's ([`StoreError::IdConflict`]);
//!    then the category, each tag and the account must be the user's;
//! 3. the rows left are stored, with their tags, and come back as stored.
//!
//! A set of several goes in as one JSON value (a statement's text is the
//! same whatever the set's size, so it is prepared once a connection),
//! read as rows by [`Dialect::json_rows`]; a set of one, the most common
//! (every creation on SQLite), as bound values, with no JSON to write and
//! parse. Creations sharing an id go in rounds, so a later one sees the
//! earlier one's row, as it would alone.

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
    /// The steps over the creations, read from JSON (several) or bound
    /// values (one).
    many: RowSteps,
    one: RowSteps,
    tags: String,
    insert_tags: String,
    fetched_one: String,
}

/// The steps that read the creations themselves, from one row source.
struct RowSteps {
    bump_users: String,
    decide: String,
    insert_rows: String,
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
    let bound: Vec<String> = ROW_COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (name, _))| format!("${} AS {name}", i + 1))
        .collect();
    Texts {
        many: row_steps::<D>(&D::json_rows(1, &ROW_COLUMNS)),
        one: row_steps::<D>(&format!("(SELECT {}) AS v", bound.join(", "))),
        tags: format!(
            "SELECT v.n, v.tag_id, \
             (SELECT g.title FROM tags g WHERE g.id = v.tag_id AND g.user_id = v.user_id), \
             (SELECT g.color_hex FROM tags g WHERE g.id = v.tag_id AND g.user_id = v.user_id) \
             FROM {} ORDER BY v.n, v.k",
            D::json_rows(1, &TAG_COLUMNS)
        ),
        insert_tags: format!(
            "INSERT INTO transaction_tags (transaction_id, tag_id) \
             SELECT v.id, v.tag_id FROM {}",
            D::json_rows(1, &[("id", "TEXT"), ("tag_id", "TEXT")])
        ),
        fetched_one: format!("{entries_select} WHERE t.id = $1"),
    }
}

/// The steps over the creations `rows` (a table `v` of [`ROW_COLUMNS`]).
fn row_steps<D: Dialect>(rows: &str) -> RowSteps {
    let json_array = D::JSON_ARRAY;
    RowSteps {
        // The users locked in id order (PostgreSQL), so calls running at
        // once never wait for each other in a cycle, then bumped.
        bump_users: match D::LOCK_ROWS {
            Some(lock) => format!(
                "UPDATE users SET view_version = view_version + 1 WHERE id IN \
                 (SELECT u.id FROM users u WHERE u.id IN (SELECT v.user_id FROM {rows}) \
                 ORDER BY u.id {lock})"
            ),
            None => format!(
                "UPDATE users SET view_version = view_version + 1 \
                 WHERE id IN (SELECT v.user_id FROM {rows})"
            ),
        },
        // Each lookup a subquery of its own, by key: a plan that stays an
        // index lookup whatever the planner guesses of the set's size.
        decide: format!(
            "SELECT v.n, \
             (SELECT t.user_id FROM transactions t WHERE v.client_chosen AND t.id = v.id), \
             (SELECT t.fingerprint FROM transactions t WHERE v.client_chosen AND t.id = v.id), \
             CASE WHEN v.category_id IS NULL OR EXISTS (SELECT 1 FROM categories g \
             WHERE g.id = v.category_id AND (g.user_id IS NULL OR g.user_id = v.user_id)) \
             THEN 1 ELSE 0 END, \
             CASE WHEN EXISTS (SELECT 1 FROM accounts a WHERE a.id = v.account_id \
             AND a.user_id = v.user_id) THEN 1 ELSE 0 END, \
             CASE WHEN v.key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k \
             WHERE k.id = v.key_id AND k.user_id = v.user_id AND k.revoked_at IS NULL) \
             THEN 1 ELSE 0 END \
             FROM {rows}"
        ),
        // Only creations `decide` found the account of are stored. Each
        // stored row comes back as an entries page's row does (tags and
        // plan added after), so nothing reads the table again: a plan
        // made while the table was small could scan it whole.
        insert_rows: format!(
            "INSERT INTO transactions (id, user_id, account_id, date, type, status, \
             amount_cents, currency, description, notes, category_id, created_by_user, source, \
             hide_from_results, search_text, fingerprint, created_at, updated_at, recurrence_id, \
             recurrence_period_date, installment_purchase_id, installment_number) \
             SELECT v.id, v.user_id, v.account_id, v.day, v.tx_type, v.status, v.cents, \
             (SELECT a.currency FROM accounts a WHERE a.id = v.account_id), \
             v.description, v.notes, v.category_id, v.by_user, v.source, v.hide, \
             v.search, v.fingerprint, v.at, v.at, v.rule_id, v.period, v.purchase_id, v.seq \
             FROM {rows} ORDER BY v.n \
             RETURNING CAST({json_array}(id, account_id, date, type, status, amount_cents, \
             currency, description, notes, bill_to_account_id, category_id, recurrence_id, \
             recurrence_period_date, installment_purchase_id, installment_number, \
             transfer_group_id, created_by_user, source, hide_from_results, card_number, holder, \
             holder_is_me, original_description, receipt_name, open_finance, NULL, NULL, NULL) \
             AS TEXT)"
        ),
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
    rows_step(texts, |s| &s.bump_users, set, live)?
        .execute(&mut *conn)
        .await?;
    let decided = rows_step(texts, |s| &s.decide, set, live)?
        .fetch_all(&mut *conn)
        .await?;
    let mut tags = named_tags(conn, set, live).await?;
    let mut stored = Vec::with_capacity(live.len());
    let mut replayed = Vec::new();
    for row in &decided {
        let i = index(row.col(0)?, set.len())?;
        let creation = &set[i];
        let owner: Option<String> = row.col(1)?;
        let fingerprint: Option<String> = row.col(2)?;
        let category_seen: i32 = row.col(3)?;
        let account_seen: i32 = row.col(4)?;
        let key_live: i32 = row.col(5)?;
        let refusal = if key_live == 0 {
            Some(StoreError::KeyRevoked)
        } else if let Some(owner) = owner {
            match same_request(creation.user, creation.new, &owner, fingerprint.as_deref()) {
                Ok(()) => {
                    replayed.push(i);
                    continue;
                }
                Err(err) => Some(err),
            }
        } else if category_seen == 0 {
            Some(no_such_category())
        } else if let Some(tag) = tags.get(&i).and_then(|named| named.missing.as_ref()) {
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
    let mut found: HashMap<TransactionId, Transaction> = HashMap::new();
    if !stored.is_empty() {
        let rows: Vec<String> = rows_step(texts, |s| &s.insert_rows, set, &stored)?
            .scalars(&mut *conn)
            .await?;
        if rows.len() != stored.len() {
            return Err(StoreError::Conflict(
                "an account changed while its rows were stored".to_owned(),
            ));
        }
        for row in decode_entries(&format!("[{}]", rows.join(",")))? {
            if let Some(id) = row.id.stored() {
                found.insert(id, row);
            }
        }
        let links: Vec<serde_json::Value> = stored
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
        if !links.is_empty() {
            run(&texts.insert_tags, json_text(&links)?)
                .execute(&mut *conn)
                .await?;
        }
    }
    for &i in &stored {
        let creation = &set[i];
        let row = found
            .get_mut(&creation.new.id)
            .ok_or(StoreError::NotFound)?;
        if let Some(named) = tags.remove(&i) {
            row.tags = named.found;
            sort_by_title(&mut row.tags, |t| (&t.title, t.id));
            row.state.tag_ids = row.tags.iter().map(|t| t.id).collect();
        }
        // A row of an installment plan shows the plan's count and total:
        // read as a page reads it.
        if matches!(creation.new.link, SeriesLink::Installment { .. }) {
            *row = fetch_one_entry(conn, texts, creation.new.id).await?;
        }
    }
    for &i in &replayed {
        let id = set[i].new.id;
        found.insert(id, fetch_one_entry(conn, texts, id).await?);
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

/// The tags a creation names, as its user has them.
struct NamedTags {
    found: Vec<TagRef>,
    /// The first of them that is not the user's.
    missing: Option<String>,
}

/// Each creation's tags (none without), by the creation's index.
async fn named_tags<C: Conn>(
    conn: &mut C,
    set: &[Creation<'_>],
    live: &[usize],
) -> StoreResult<HashMap<usize, NamedTags>> {
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
    let mut named: HashMap<usize, NamedTags> = HashMap::new();
    if tags.is_empty() {
        return Ok(named);
    }
    let texts = &<C::Db as Dialect>::texts().creations;
    for row in run(&texts.tags, json_text(&tags)?)
        .fetch_all(&mut *conn)
        .await?
    {
        let i = index(row.col(0)?, set.len())?;
        let id: String = row.col(1)?;
        let title: Option<String> = row.col(2)?;
        let color_hex: Option<String> = row.col(3)?;
        let entry = named.entry(i).or_insert(NamedTags {
            found: Vec::new(),
            missing: None,
        });
        match (title, color_hex) {
            (Some(title), Some(color_hex)) => entry.found.push(TagRef {
                id: TagId(parse_uuid("tag id", &id)?),
                title,
                color_hex,
            }),
            _ => {
                entry.missing.get_or_insert(id);
            }
        }
    }
    Ok(named)
}

/// The stored row `id` as a page reads it.
async fn fetch_one_entry<C: Conn>(
    conn: &mut C,
    texts: &Texts,
    id: TransactionId,
) -> StoreResult<Transaction> {
    let query = Sql::with(texts.fetched_one.as_str(), [Arg::Text(id.to_string())]);
    fetch_entries(conn, query)
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
}

/// A set's statement with its one value, the set as JSON.
fn run(text: &str, json: String) -> Sql {
    Sql::with(text, [Arg::Text(json)])
}

/// The step `pick` over the creations `which` of `set`: for one, its
/// values bound; for several, the set as JSON.
fn rows_step(
    texts: &Texts,
    pick: impl Fn(&RowSteps) -> &str,
    set: &[Creation<'_>],
    which: &[usize],
) -> StoreResult<Sql> {
    Ok(match which {
        [i] => Sql {
            text: pick(&texts.one).to_owned(),
            args: row_args(set, *i),
        },
        _ => run(pick(&texts.many), rows_json(set, which)?),
    })
}

/// The values of creation `i` of `set`, in the order of [`ROW_COLUMNS`].
fn row_args(set: &[Creation<'_>], i: usize) -> Vec<Arg> {
    let creation = &set[i];
    let mut args = Vec::with_capacity(ROW_COLUMNS.len());
    args.push(Arg::Int(n(i)));
    args.extend(insert_args(&new_row(
        creation.user,
        creation.new,
        creation.now,
    )));
    args.push(Arg::Bool(creation.new.client_chosen_id));
    args.push(Arg::OptText(creation.key.map(|key| key.to_string())));
    args
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
            let row = ROW_COLUMNS
                .iter()
                .zip(row_args(set, i))
                .map(|((name, _), arg)| ((*name).to_owned(), arg_json(arg)))
                .collect();
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
    fn a_row_has_a_value_for_each_column() {
        // n, insert_args' 20 values in their order, then the last two.
        assert_eq!(ROW_COLUMNS.len(), 1 + 20 + 2);
        assert_eq!(ROW_COLUMNS[1].0, "id");
        assert_eq!(ROW_COLUMNS[20].0, "seq");
        assert_eq!(ROW_COLUMNS[21].0, "client_chosen");
        assert_eq!(ROW_COLUMNS[22].0, "key_id");
    }
}
