//! Group commit on PostgreSQL for single-row creations: creations that
//! arrive while earlier ones are being stored wait, and go together in the
//! next call: one transaction, and so one WAL flush, for all of them, each
//! step of the creations' rules one statement for the whole set
//! ([`create_set`], the rules every creation follows on either backend),
//! instead of a transaction, its statements, a commit and a pooled
//! connection each. The rows of a call are added to the running totals
//! once, by the statement trigger of the INSERT that stores them.
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
//! A refusal (a revoked key, a taken id, a missing category, tag or
//! account) is decided before its creation writes anything, and answers
//! that creation alone; a call that fails as a whole on another database
//! error (a running total taken out of range, say) is run again one
//! creation a call, so each gets the answer it would have got alone. A
//! call whose commit would come past the least time its requests have left
//! keeps nothing and answers each 503. A call waiting for a lock held
//! elsewhere goes on waiting after its requests were cut off (so
//! `/readyz` sees a session stuck on a lock, [`super::Writes::stall`]),
//! and keeps nothing once it gets it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot};

use super::{
    ANSWER_MARGIN, ApiKeyId, Created, Db, NewTransaction, StoreError, StoreResult, Timestamp,
    Transaction, UserId, out_of_time,
};
use crate::sql_store::create_set::{Creation, create_set};

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
    user: UserId,
    new: NewTransaction,
    now: Timestamp,
    key: Option<ApiKeyId>,
    /// When its request is cut off, if it serves one.
    deadline: Option<Instant>,
    reply: oneshot::Sender<Answer>,
}

impl Waiting {
    /// When the creation must be stored by, short of a margin for the
    /// answer's way back (none: no request waits for it).
    fn cut_off(&self) -> Option<Instant> {
        self.deadline.map(cut_off)
    }

    fn creation(&self) -> Creation<'_> {
        Creation {
            user: self.user,
            new: &self.new,
            now: self.now,
            key: self.key,
        }
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
            user,
            new: new.clone(),
            now,
            key,
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
            match waiting.cut_off() {
                Some(cut_off) if cut_off <= now => waiting.answer(Err(out_of_time())),
                _ => live.push(waiting),
            }
        }
        if live.len() > 1 {
            let deadline = live.iter().filter_map(|w| w.deadline).min();
            let set: Vec<Creation<'_>> = live.iter().map(Waiting::creation).collect();
            match self.together(&set, deadline).await {
                Ok(answers) => {
                    drop(set);
                    for (waiting, answer) in live.into_iter().zip(answers) {
                        waiting.answer(answer);
                    }
                    return;
                }
                Err(Failed::OutOfTime) => {
                    drop(set);
                    for waiting in live {
                        waiting.answer(Err(out_of_time()));
                    }
                    return;
                }
                Err(Failed::Store(StoreError::Unavailable(reason))) => {
                    drop(set);
                    for waiting in live {
                        waiting.answer(Err(StoreError::Unavailable(reason.clone())));
                    }
                    return;
                }
                Err(Failed::Store(_)) => {
                    // One of them broke a rule the call does not answer
                    // for it alone (a total out of range, say), and the
                    // whole call was rolled back: each on its own, below.
                }
            }
        }
        for waiting in live {
            let answer = match self.together(&[waiting.creation()], waiting.deadline).await {
                Ok(mut answers) => answers.pop().unwrap_or(Err(StoreError::NotFound)),
                Err(Failed::OutOfTime) => Err(out_of_time()),
                // Alone, a database error failing the call is the
                // creation's answer (a total out of range: a field error).
                Err(Failed::Store(err)) => Err(err),
            };
            waiting.answer(answer);
        }
    }

    /// `set` stored in one transaction, committed with room to answer
    /// before `deadline` (its requests' earliest): each creation's answer,
    /// in order, or what failed the whole call.
    async fn together(
        &self,
        set: &[Creation<'_>],
        deadline: Option<Instant>,
    ) -> Result<Vec<Answer>, Failed> {
        let mut tx = self.pool.begin().await.map_err(Failed::sqlx)?;
        let cut_off = deadline.map(cut_off);
        let past = || cut_off.is_some_and(|cut_off| Instant::now() >= cut_off);
        let answers = match create_set(&mut *tx, set).await {
            Ok(answers) => answers,
            Err(_) if past() => return Err(Failed::OutOfTime),
            Err(err) => return Err(Failed::Store(err)),
        };
        if past() {
            // Dropped, the transaction rolls back: nothing is kept.
            return Err(Failed::OutOfTime);
        }
        tx.commit().await.map_err(Failed::sqlx)?;
        Ok(answers)
    }
}

/// When a creation due by `deadline` must be stored by: short of a margin
/// for the answer's way back.
fn cut_off(deadline: Instant) -> Instant {
    deadline.checked_sub(ANSWER_MARGIN).unwrap_or(deadline)
}

/// Why a whole call kept nothing.
enum Failed {
    /// It would have committed past the least time its requests had left.
    OutOfTime,
    Store(StoreError),
}

impl Failed {
    fn sqlx(err: sqlx::Error) -> Self {
        Failed::Store(err.into())
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
    fn a_creation_under_light_load_waits_for_nothing() {
        assert_eq!(Line::default().expected(Instant::now()), 0);
        let (line, now) = after(1, Duration::ZERO);
        assert_eq!(line.expected(now), 0, "after a call of one");
        let (line, now) = after(8, GATHER);
        assert_eq!(line.expected(now), 0, "long after a call of several");
    }
}
