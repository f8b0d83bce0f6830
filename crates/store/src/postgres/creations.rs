//! Group commit on PostgreSQL for single-row creations: creations that
//! arrive while earlier ones are being stored wait, and go together in the
//! next call of `cofre_create_rows` (migrations 0020 to 0022; a creation
//! alone is a call of one), one statement and so one transaction and one
//! WAL flush for all of them, instead of a call, a commit and a pooled
//! connection (with the ping sqlx sends when it is given back) each. A
//! call of several adds its rows to the running totals once, each sum
//! with one statement for all of them (migration 0021), instead of once a
//! row; a creation's key, when its request was authenticated from memory,
//! is checked in the call (migration 0021 too). A call of several
//! creations with distinct ids is stored set by set, a statement for all
//! of them at each step, not creation by creation (migration 0022's
//! `cofre_create_set`, called straight).
//!
//! At most [`MAX_CALLS`] calls run at once from this process. A creation
//! that finds fewer running starts a call for itself and whatever else
//! waits, so under light load nothing waits for anything; only within
//! [`GATHER`] of the end of a call of several does the call it starts wait,
//! at most that long, for as many creations as that call had (their
//! clients are sending their next). A call that ends takes the next
//! waiting creations at once (the longest waiting first, at most
//! [`MAX_BATCH`]). Calls run as tasks of their own, so a request cut
//! off at its deadline does not cut off the other creations sharing its
//! call. A creation is acknowledged only after its call committed.
//!
//! A refusal (a taken id, a missing category, tag or account) is decided
//! before its creation writes anything, and answers that creation alone; a
//! call that fails as a whole on another database error (a running total
//! taken out of range, say) is run again one creation a call, so each gets
//! the answer it would have got alone. A call whose commit would come past
//! the least time its requests have left keeps nothing and answers each
//! 503.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot};

use super::{
    ANSWER_MARGIN, ApiKeyId, Arg, Created, Db, JSON_ARRAY, NewTransaction, StoreError, StoreResult,
    TX_COLUMNS, TX_NAMES, Timestamp, Transaction, UserId, create_args, create_refusal,
    decode_entries, out_of_time, refusal,
};
use sqlx::Row;

/// The most creations one call stores.
const MAX_BATCH: usize = 64;

/// The most calls this process runs at once: while one runs, the next
/// creations gather for the call after it. With 8 clients, one call at a
/// time stored as many rows a second as any other setting tried (two or
/// four calls, or two lines of one call each) for eight users, and more
/// for one: calls for the same user wait for each other's row lock.
const MAX_CALLS: usize = 1;

/// The longest a call waits for creations it expects: after a call of
/// several, those its clients, just answered, are sending next. Without
/// it, a call took only the creations already waiting, and eight clients'
/// creations went in two alternating halves (one half waiting for the
/// other's call), each half paying a call's fixed cost. At most this much
/// is added to a creation's time when fewer come than expected.
const GATHER: Duration = Duration::from_millis(1);

/// What a creation is answered.
type Answer = StoreResult<Created<Transaction>>;

/// One creation waiting for its call.
struct Waiting {
    /// Its owner, the order calls take users' row locks in.
    user: String,
    /// Its values in the call ([`create_args`]).
    args: Vec<Arg>,
    /// When its request is cut off, if it serves one.
    deadline: Option<Instant>,
    reply: oneshot::Sender<Answer>,
}

impl Waiting {
    /// The milliseconds the creation may still take, short of a margin
    /// for the answer's way back (none: no request waits for it).
    fn budget_ms(&self, now: Instant) -> Option<i64> {
        self.deadline.map(|deadline| {
            let left = deadline.saturating_duration_since(now);
            let left = left.saturating_sub(ANSWER_MARGIN).as_millis();
            i64::try_from(left).unwrap_or(i64::MAX)
        })
    }

    fn answer(self, answer: Answer) {
        // Its request may be gone (cut off at its deadline): then nobody
        // waits for the answer.
        let _ = self.reply.send(answer);
    }
}

/// The creations waiting, how many calls run, and when the last call
/// ended and how many creations it had.
#[derive(Default)]
struct Line {
    waiting: Vec<Waiting>,
    calls: usize,
    last: Option<(Instant, usize)>,
}

impl Line {
    /// The next call's creations, the longest waiting first.
    fn next_call(&mut self) -> Vec<Waiting> {
        let count = self.waiting.len().min(MAX_BATCH);
        self.waiting.drain(..count).collect()
    }

    /// How many creations a call starting `now` waits for (at most
    /// [`GATHER`]): as many as the last call had, if it had several and
    /// ended less than [`GATHER`] ago; none otherwise, so a creation under
    /// light load waits for nothing.
    fn expected(&self, now: Instant) -> usize {
        match self.last {
            Some((ended, count)) if count > 1 && now.duration_since(ended) < GATHER => {
                count.min(MAX_BATCH)
            }
            _ => 0,
        }
    }
}

/// The single-row creations of one store.
pub(super) struct Creations {
    pool: sqlx::Pool<Db>,
    line: Mutex<Line>,
    /// Told of every creation that joins the line.
    arrived: Notify,
}

impl Creations {
    pub(super) fn new(pool: &sqlx::Pool<Db>) -> Arc<Self> {
        Arc::new(Self {
            pool: pool.clone(),
            line: Mutex::default(),
            arrived: Notify::new(),
        })
    }

    fn line(&self) -> MutexGuard<'_, Line> {
        // The line holds no invariant a panic could break halfway.
        self.line.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores `new` for `user` with the creations waiting beside it; with
    /// `key`, only if the call finds that key live.
    pub(super) async fn create(
        self: &Arc<Self>,
        user: UserId,
        new: &NewTransaction,
        now: Timestamp,
        key: Option<ApiKeyId>,
    ) -> Answer {
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting {
            user: user.to_string(),
            args: create_args(user, new, now, key)?,
            deadline: crate::deadline::deadline(),
            reply,
        };
        let start = {
            let mut line = self.line();
            line.waiting.push(waiting);
            (line.calls < MAX_CALLS).then(|| {
                line.calls += 1;
                line.expected(Instant::now())
            })
        };
        self.arrived.notify_waiters();
        if let Some(expected) = start {
            let running = Running {
                creations: Arc::clone(self),
                done: false,
            };
            tokio::spawn(running.run(expected));
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(
                "the creation's call ended without an answer".to_owned(),
            ))
        })
    }

    /// Waits until `expected` creations are in the line, or [`GATHER`]
    /// has passed.
    async fn gather(&self, expected: usize) {
        let until = tokio::time::Instant::now() + GATHER;
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            // Told of creations joining from here on, before counting.
            arrived.as_mut().enable();
            if self.line().waiting.len() >= expected {
                return;
            }
            if tokio::time::timeout_at(until, arrived).await.is_err() {
                return;
            }
        }
    }

    /// Stores `batch` and answers each of its creations.
    async fn call(&self, batch: Vec<Waiting>) {
        let now = Instant::now();
        let mut live = Vec::with_capacity(batch.len());
        for waiting in batch {
            if waiting.reply.is_closed() {
                // Its request was cut off before its turn: nothing is
                // kept, and nobody waits for an answer.
                continue;
            }
            match waiting.budget_ms(now) {
                Some(ms) if ms <= 0 => waiting.answer(Err(out_of_time())),
                _ => live.push(waiting),
            }
        }
        if live.len() > 1 {
            // Every call takes the users' row locks in the same order.
            live.sort_by(|a, b| a.user.cmp(&b.user));
            let budget = live.iter().filter_map(|w| w.budget_ms(now)).min();
            let batch: Vec<&[Arg]> = live.iter().map(|w| w.args.as_slice()).collect();
            match self.together(&batch, budget).await {
                Ok(answers) => {
                    for (waiting, answer) in live.into_iter().zip(answers) {
                        waiting.answer(answer);
                    }
                    return;
                }
                Err(err) if out_of_time_as_a_whole(&err) => {
                    for waiting in live {
                        waiting.answer(Err(out_of_time()));
                    }
                    return;
                }
                Err(sqlx::Error::Database(_)) => {
                    // One of them broke a rule the call does not answer
                    // for it alone (a total out of range, say), and the
                    // whole call was rolled back: each on its own, below.
                }
                Err(err) => {
                    let reason = err.to_string();
                    for waiting in live {
                        waiting.answer(Err(StoreError::Unavailable(reason.clone())));
                    }
                    return;
                }
            }
        }
        for waiting in live {
            let budget = waiting.budget_ms(Instant::now());
            let answer = self.alone(&waiting.args, budget).await;
            waiting.answer(answer);
        }
    }

    /// One creation in a call of its own: a database error failing the
    /// call is then its answer (a total out of range: a field error).
    async fn alone(&self, args: &[Arg], budget_ms: Option<i64>) -> Answer {
        let mut answers = self
            .together(std::slice::from_ref(&args), budget_ms)
            .await
            .map_err(create_refusal)?;
        answers.pop().ok_or(StoreError::NotFound)?
    }

    /// `batch` in one call of `cofre_create_rows`, or, for several
    /// creations with distinct ids, of `cofre_create_set` (migration 0022),
    /// which `cofre_create_rows` hands such a call to: called straight, the
    /// call's JSON is not read twice nor every answer copied twice. Each
    /// creation's answer, in order, or the error that failed the whole call.
    async fn together(
        &self,
        batch: &[&[Arg]],
        budget_ms: Option<i64>,
    ) -> Result<Vec<Answer>, sqlx::Error> {
        static ROWS: LazyLock<String> = LazyLock::new(|| call_of("cofre_create_rows($1, $2)"));
        static SET: LazyLock<String> = LazyLock::new(|| {
            call_of(
                "cofre_create_set(CAST($1 AS JSONB), \
                 statement_timestamp() + $2 * INTERVAL '1 millisecond')",
            )
        });
        let call = if batch.len() > 1 && distinct_ids(batch) {
            &SET
        } else {
            &ROWS
        };
        let rows: Vec<serde_json::Value> = batch
            .iter()
            .map(|args| args.iter().map(arg_json).collect())
            .collect();
        let rows = serde_json::Value::Array(rows).to_string();
        let answers = sqlx::query(sqlx::AssertSqlSafe(call.as_str()))
            .bind(rows)
            .bind(budget_ms)
            .fetch_all(&self.pool)
            .await?;
        if answers.len() != batch.len() {
            return Err(sqlx::Error::Protocol(format!(
                "cofre_create_rows gave {} answers for {} creations",
                answers.len(),
                batch.len()
            )));
        }
        Ok(answers.iter().map(read_answer).collect())
    }
}

/// The query of [`Creations::together`] over `function`'s rows (one a
/// creation, in order): each creation's refusal, or its row as a page of
/// one entry.
fn call_of(function: &str) -> String {
    format!(
        "SELECT p.code, p.message, COALESCE(p.deduped, FALSE), \
         CAST({JSON_ARRAY}({JSON_ARRAY}({TX_NAMES}, p.tags)) AS TEXT) FROM (\
         SELECT c.n, c.code, c.message, c.deduped, c.tags, {TX_COLUMNS} \
         FROM {function} c CROSS JOIN LATERAL (SELECT (c.made).*) t \
         LEFT JOIN installment_plans ip ON ip.id = t.installment_purchase_id) p \
         ORDER BY p.n"
    )
}

/// Whether no two creations of `batch` share an id (its first value).
fn distinct_ids(batch: &[&[Arg]]) -> bool {
    let mut seen = HashSet::with_capacity(batch.len());
    batch.iter().all(|args| match args.first() {
        Some(Arg::Text(id)) => seen.insert(id.as_str()),
        _ => false,
    })
}

/// One creation's answer in a row of [`Creations::together`]'s call.
fn read_answer(row: &sqlx::postgres::PgRow) -> Answer {
    let code: Option<String> = row.try_get(0)?;
    if let Some(code) = code {
        let message: Option<String> = row.try_get(1)?;
        let message = message.unwrap_or_default();
        return Err(refusal(&code, &message).unwrap_or_else(|| {
            StoreError::Corrupt(format!("cofre_create_rows refused with {code}: {message}"))
        }));
    }
    let deduped: bool = row.try_get(2)?;
    let page: String = row.try_get(3)?;
    let value = decode_entries(&page)?.pop().ok_or(StoreError::NotFound)?;
    Ok(Created { value, deduped })
}

/// Whether `err` is a whole call given up: it would have committed past
/// the least time its requests had left (CF005), and kept nothing.
fn out_of_time_as_a_whole(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().as_deref() == Some("CF005"))
}

/// `arg` as a value of `cofre_create_rows`'s JSON (each read back as text,
/// so numbers keep every digit).
fn arg_json(arg: &Arg) -> serde_json::Value {
    use serde_json::Value;
    match arg {
        Arg::Text(text) => Value::from(text.as_str()),
        Arg::OptText(text) => text.as_deref().map_or(Value::Null, Value::from),
        Arg::Int(number) => Value::from(*number),
        Arg::OptInt(number) => number.map_or(Value::Null, Value::from),
        Arg::Bool(flag) => Value::from(*flag),
        Arg::OptBool(flag) => flag.map_or(Value::Null, Value::from),
    }
}

/// A running call's task: it gives its place back when it ends, or if it
/// panics (the creations then waiting go with the next call any creation
/// starts; one whose request is cut off first is skipped, nothing kept).
struct Running {
    creations: Arc<Creations>,
    done: bool,
}

impl Running {
    /// Runs the waiting creations, once `expected` of them are waiting
    /// ([`Creations::gather`]), then those that gathered meanwhile, until
    /// none waits. After a call, as many are expected as it had and are
    /// waiting: its clients, just answered, are sending their next, and
    /// one call for all of them costs less than two.
    async fn run(mut self, mut expected: usize) {
        loop {
            if expected > 1 {
                self.creations.gather(expected).await;
            }
            let batch = self.creations.line().next_call();
            let count = batch.len();
            self.creations.call(batch).await;
            let mut line = self.creations.line();
            line.last = Some((Instant::now(), count));
            if line.waiting.is_empty() {
                // In the same hold of the line as the check: a creation
                // arriving after it finds a free place and starts a call.
                line.calls -= 1;
                self.done = true;
                return;
            }
            expected = (count + line.waiting.len()).min(MAX_BATCH);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            self.creations.line().calls -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(count: usize, ago: Duration) -> (Line, Instant) {
        let now = Instant::now() + Duration::from_secs(1);
        let line = Line {
            last: Some((now - ago, count)),
            ..Line::default()
        };
        (line, now)
    }

    #[test]
    fn a_call_right_after_one_of_several_waits_for_as_many() {
        let (line, now) = after(8, Duration::from_micros(200));
        assert_eq!(line.expected(now), 8);
        let (line, now) = after(MAX_BATCH * 2, Duration::ZERO);
        assert_eq!(line.expected(now), MAX_BATCH);
    }

    #[test]
    fn only_a_call_without_an_id_twice_goes_set_by_set() {
        let (a, b) = ([Arg::Text("a".into())], [Arg::Text("b".into())]);
        assert!(distinct_ids(&[&a, &b]));
        assert!(!distinct_ids(&[&a, &b, &a]), "an id twice");
        assert!(!distinct_ids(&[&a, &[Arg::OptText(None)]]), "no id");
    }

    #[test]
    fn a_creation_under_light_load_waits_for_nothing() {
        assert_eq!(Line::default().expected(Instant::now()), 0);
        let (line, now) = after(1, Duration::ZERO);
        assert_eq!(line.expected(now), 0, "after a call of one");
        let (line, now) = after(8, GATHER);
        assert_eq!(line.expected(now), 0, "long after a call of several");
    }
}
