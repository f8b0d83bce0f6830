//! Answers to repeated reads, kept per user while nothing they show changed.
//!
//! A successful `GET` on `/v1` is kept under the calling key and the path
//! with its query, labelled with the owner's view version and today's date.
//! Every write of a user's data bumps that version in the same database
//! transaction (`begin_write` in the store), and authentication reads it
//! again on every request, in the same query as the key. So a kept answer
//! is served only while it is what the handler would compute now: a write
//! from this process or any other, or a new day (bill statuses and
//! projections move with the date), retires every answer of that user.
//! Revocation needs nothing: the key is checked before the cache is asked.
//!
//! Bounded in bytes (`COFRE_READ_CACHE_MB`, 0 turns it off); when full it
//! starts afresh. Hits and misses are counted in `/metrics`.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

use cofre_domain::auth::Scope;
use cofre_domain::time::Clock;
use cofre_domain::{ApiKeyId, UserId};

use crate::auth::Principal;
use crate::error::ApiError;

/// The answers kept, at most `limit` bytes of them.
pub struct ReadCache {
    limit: usize,
    entries: Mutex<Entries>,
    /// Answers being computed: after a write, the many requests for the
    /// same page wait for the first one instead of each computing it.
    flights: Mutex<HashMap<Flight, Arc<Notify>>>,
}

/// What one computation answers: the key, the path, the version and day.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Flight(UserId, ApiKeyId, String, i64, Date);

/// How long a request waits for another one computing its answer before
/// computing it itself.
const FLIGHT_WAIT: Duration = Duration::from_secs(5);

/// The first request computing an answer; ending it, however it ends
/// (answered, failed, or dropped with its connection), lets the waiting
/// requests go on.
struct Leader<'a> {
    cache: &'a ReadCache,
    flight: Flight,
    notify: Arc<Notify>,
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        let mut flights = self.cache.flights.lock().unwrap_or_else(|p| p.into_inner());
        flights.remove(&self.flight);
        self.notify.notify_waiters();
    }
}

/// Either this request computes the answer, or it waited for the one that
/// did (and looks in the cache again).
enum Turn<'a> {
    Lead(Leader<'a>),
    Waited,
}

#[derive(Default)]
struct Entries {
    bytes: usize,
    users: HashMap<UserId, UserAnswers>,
}

/// One user's answers, all true at `version` on `day`.
struct UserAnswers {
    version: i64,
    day: Date,
    /// By key, then path with query (looked up without a copy of it).
    answers: HashMap<ApiKeyId, HashMap<String, Answer>>,
}

#[derive(Clone)]
struct Answer {
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn size(&self, path: &str) -> usize {
        self.body.len() + path.len() + 64 * self.headers.len()
    }
}

impl ReadCache {
    /// A cache of at most `limit` bytes; 0 keeps nothing.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            entries: Mutex::default(),
            flights: Mutex::default(),
        }
    }

    /// Leads the computation of `flight`, or waits (up to [`FLIGHT_WAIT`])
    /// for the request already leading it.
    async fn turn(&self, flight: Flight) -> Turn<'_> {
        let notified = {
            let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
            match flights.get(&flight) {
                Some(notify) => {
                    // Registered before the lock is released: the leader's
                    // notify_waiters cannot be missed.
                    let notify = notify.clone();
                    let mut notified = Box::pin(notify.notified_owned());
                    notified.as_mut().enable();
                    notified
                }
                None => {
                    let notify = Arc::new(Notify::new());
                    flights.insert(flight.clone(), notify.clone());
                    return Turn::Lead(Leader {
                        cache: self,
                        flight,
                        notify,
                    });
                }
            }
        };
        let _ = tokio::time::timeout(FLIGHT_WAIT, notified).await;
        Turn::Waited
    }

    /// The largest answer worth keeping: one big answer must not push out
    /// everything else.
    fn largest(&self) -> usize {
        self.limit / 8
    }

    fn get(&self, principal: &Principal, day: Date, path: &str) -> Option<Answer> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let user = entries.users.get(&principal.user_id)?;
        if user.version != principal.view_version || user.day != day {
            return None;
        }
        user.answers.get(&principal.key_id)?.get(path).cloned()
    }

    fn put(&self, principal: &Principal, day: Date, path: String, answer: Answer) {
        let size = answer.size(&path);
        if size > self.largest() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entries = &mut *entries;
        if let Some(user) = entries.users.get(&principal.user_id)
            && (user.version, user.day) != (principal.view_version, day)
        {
            // A request that read an older state finishing late must not
            // retire answers of a newer one.
            if user.version > principal.view_version || user.day > day {
                return;
            }
            let stale: usize = user
                .answers
                .values()
                .flatten()
                .map(|(p, a)| a.size(p))
                .sum();
            entries.bytes -= stale;
            entries.users.remove(&principal.user_id);
        }
        if entries.bytes + size > self.limit {
            entries.users.clear();
            entries.bytes = 0;
        }
        let user = entries
            .users
            .entry(principal.user_id)
            .or_insert_with(|| UserAnswers {
                version: principal.view_version,
                day,
                answers: HashMap::new(),
            });
        if let Some(old) = user
            .answers
            .entry(principal.key_id)
            .or_default()
            .insert(path.clone(), answer)
        {
            entries.bytes -= old.size(&path);
        }
        entries.bytes += size;
    }
}

/// What the middleware needs: the cache and the clock that says which day
/// it is.
#[derive(Clone)]
pub struct CacheState {
    pub cache: Arc<ReadCache>,
    pub clock: Clock,
}

fn hit(answer: Answer) -> Response {
    metrics::counter!("read_cache_hits_total").increment(1);
    let mut response = Response::new(Body::from(answer.body));
    *response.headers_mut() = answer.headers;
    response
}

/// Middleware for `/v1`, inside authentication: answers a `GET` from the
/// cache when it can, and keeps what the handler answers with 200.
pub async fn serve_cached(State(state): State<CacheState>, req: Request, next: Next) -> Response {
    let principal = match req.extensions().get::<Principal>() {
        Some(p) if req.method() == Method::GET && p.scopes.contains(&Scope::Read) => p.clone(),
        _ => return next.run(req).await,
    };
    if state.cache.limit == 0 {
        return next.run(req).await;
    }
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned());
    let day = state.clock.today();
    if let Some(answer) = state.cache.get(&principal, day, &path) {
        return hit(answer);
    }
    let flight = Flight(
        principal.user_id,
        principal.key_id,
        path.clone(),
        principal.view_version,
        day,
    );
    let _leader = match state.cache.turn(flight).await {
        // Kept to the end: the waiting requests go on once this one
        // has put its answer in the cache.
        Turn::Lead(leader) => Some(leader),
        Turn::Waited => {
            if let Some(answer) = state.cache.get(&principal, day, &path) {
                return hit(answer);
            }
            // The leader's answer was not kept (an error, too big, or it
            // gave up): compute it here.
            None
        }
    };
    metrics::counter!("read_cache_misses_total").increment(1);
    let response = next.run(req).await;
    let fits = response
        .body()
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok())
        .is_some_and(|n| n <= state.cache.largest());
    if response.status() != StatusCode::OK || !fits {
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, state.cache.largest()).await {
        Ok(body) => body,
        Err(err) => {
            return ApiError::Internal(format!("reading a response: {err}")).into_response();
        }
    };
    let answer = Answer {
        headers: parts.headers.clone(),
        body: body.clone(),
    };
    state.cache.put(&principal, day, path, answer);
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use uuid::Uuid;

    fn principal(version: i64) -> Principal {
        Principal {
            user_id: UserId(Uuid::from_u128(1)),
            key_id: ApiKeyId(Uuid::from_u128(2)),
            scopes: vec![Scope::Read],
            view_version: version,
        }
    }

    fn answer(text: &'static str) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        Answer {
            headers,
            body: Bytes::from_static(text.as_bytes()),
        }
    }

    fn day(d: i8) -> Date {
        jiff::civil::date(2026, 11, d)
    }

    fn body(a: Option<Answer>) -> Option<Bytes> {
        a.map(|a| a.body)
    }

    #[test]
    fn an_answer_is_served_only_at_its_version_and_day() {
        let cache = ReadCache::new(1 << 20);
        cache.put(&principal(3), day(1), "/v1/a".into(), answer("one"));
        assert_eq!(
            body(cache.get(&principal(3), day(1), "/v1/a")),
            Some("one".into())
        );
        assert!(cache.get(&principal(4), day(1), "/v1/a").is_none());
        assert!(cache.get(&principal(3), day(2), "/v1/a").is_none());
        assert!(cache.get(&principal(3), day(1), "/v1/b").is_none());
        let other_key = Principal {
            key_id: ApiKeyId(Uuid::from_u128(9)),
            ..principal(3)
        };
        assert!(cache.get(&other_key, day(1), "/v1/a").is_none());
    }

    #[test]
    fn a_newer_version_retires_the_old_answers_and_a_late_old_one_is_dropped() {
        let cache = ReadCache::new(1 << 20);
        cache.put(&principal(3), day(1), "/v1/a".into(), answer("old"));
        cache.put(&principal(4), day(1), "/v1/b".into(), answer("new"));
        assert!(cache.get(&principal(3), day(1), "/v1/a").is_none());
        // A request that authenticated before the write finishes late.
        cache.put(&principal(3), day(1), "/v1/a".into(), answer("late"));
        assert!(cache.get(&principal(3), day(1), "/v1/a").is_none());
        assert_eq!(
            body(cache.get(&principal(4), day(1), "/v1/b")),
            Some("new".into())
        );
        let entries = cache.entries.lock().unwrap();
        assert_eq!(entries.bytes, answer("new").size("/v1/b"));
    }

    #[test]
    fn the_byte_limit_holds() {
        let size = answer("0123456789").size("/v1/x00");
        let cache = ReadCache::new(size * 8);
        for i in 0..20 {
            cache.put(
                &principal(1),
                day(1),
                format!("/v1/x{i:02}"),
                answer("0123456789"),
            );
            let entries = cache.entries.lock().unwrap();
            assert!(
                entries.bytes <= size * 8,
                "{} bytes after {i}",
                entries.bytes
            );
        }
        assert!(cache.get(&principal(1), day(1), "/v1/x19").is_some());
        // Too big for one entry: not kept at all.
        let big = ReadCache::new(size * 2);
        big.put(
            &principal(1),
            day(1),
            "/v1/x00".into(),
            answer("0123456789"),
        );
        assert!(big.get(&principal(1), day(1), "/v1/x00").is_none());
    }

    fn flight(version: i64) -> Flight {
        let p = principal(version);
        Flight(p.user_id, p.key_id, "/v1/a".into(), version, day(1))
    }

    #[tokio::test]
    async fn concurrent_misses_wait_for_the_first_one() {
        let cache = Arc::new(ReadCache::new(1 << 20));
        let Turn::Lead(leader) = cache.turn(flight(1)).await else {
            panic!("the first request leads");
        };
        // Another version is another computation: it leads too.
        assert!(matches!(cache.turn(flight(2)).await, Turn::Lead(_)));
        let waiter = {
            let cache = cache.clone();
            tokio::spawn(async move {
                let started = std::time::Instant::now();
                let waited = matches!(cache.turn(flight(1)).await, Turn::Waited);
                (waited, started.elapsed())
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiter.is_finished(),
            "the second request waits for the leader"
        );
        cache.put(&principal(1), day(1), "/v1/a".into(), answer("one"));
        drop(leader);
        let (waited, took) = waiter.await.expect("waiter");
        assert!(waited);
        assert!(
            took < FLIGHT_WAIT,
            "woken by the leader, not by the timeout"
        );
        assert!(cache.get(&principal(1), day(1), "/v1/a").is_some());
        // Done: the next miss leads again.
        assert!(matches!(cache.turn(flight(1)).await, Turn::Lead(_)));
    }

    #[test]
    fn a_zero_limit_keeps_nothing() {
        let cache = ReadCache::new(0);
        cache.put(&principal(1), day(1), "/v1/a".into(), answer("x"));
        assert!(cache.get(&principal(1), day(1), "/v1/a").is_none());
    }
}
