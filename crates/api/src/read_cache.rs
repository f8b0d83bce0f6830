//! Answers to repeated reads, kept per user while nothing they show changed.
//!
//! A successful `GET` on `/v1` is kept under the calling key and the path
//! with its query, labelled with the owner's view version and today's date.
//! Every write of a user's data bumps that version in the same database
//! transaction (`begin_write` in the store), and authentication reads it
//! again on every request, in the same query as the key. So a kept answer
//! is served only while it is what the handler would compute now: after a
//! write from this process or any other, or on a new day (bill statuses and
//! projections move with the date), the user's older answers are not
//! served again (pages of the merged view only once checked, below) and
//! age out. Revocation needs nothing: the key is checked
//! before the cache is asked.
//!
//! A page of the merged view (`GET /v1/transactions`) is kept longer: its
//! handler says which stored days it shows ([`PageDays`], from the
//! window's start to its cursor, in the response's extensions), and the
//! cache reads those days' [`PageStamps`] right after the page is made.
//! They are kept with the page only when they were read at the view
//! version the page is keyed by, so no write came between the page and
//! them. When the owner's version has moved, the page is
//! still served if those stamps say no write since touched what it shows:
//! its days' stored rows, the projections' sources, the categories or the
//! cards' money (one short read instead of computing the page again). A
//! row added today then leaves the pages of last week as they were.
//!
//! One moka cache shared by all users, bounded in bytes
//! (`COFRE_READ_CACHE_MB`, 0 turns it off), least recently used out first;
//! concurrent misses of one answer run the handler once. Hits, misses and
//! pages kept past a write are counted in `/metrics`.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use std::future::Future;

use cofre_domain::ApiKeyId;
use cofre_domain::auth::Scope;
use cofre_store::{PageDays, PageStamps, Store};

use crate::AppState;
use crate::around::Next;
use crate::auth::Principal;
use crate::error::ApiError;

/// The answers kept, at most `limit` bytes of them.
pub struct ReadCache {
    limit: usize,
    /// None when the limit is 0.
    answers: Option<moka::future::Cache<AnswerKey, Answer>>,
    /// The version each page that can outlive a write was last kept at
    /// (a sixteenth of the bytes; the answers have the rest).
    latest: Option<moka::future::Cache<PathKey, i64>>,
}

/// An [`AnswerKey`] without its version.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PathKey {
    key: ApiKeyId,
    day: Date,
    path: String,
}

impl PathKey {
    fn of(key: &AnswerKey) -> Self {
        Self {
            key: key.key,
            day: key.day,
            path: key.path.clone(),
        }
    }
}

/// What a kept page shows and the stamps it was made at: it stays true
/// while these stamps do and no stored row of its days changes. Only pages
/// carrying it are kept past a write.
#[derive(Clone, Debug)]
struct KeptWhile {
    days: PageDays,
    stamps: PageStamps,
}

/// The [`KeptWhile`] of a page showing `days`, made at view version
/// `version`: none when the stamps cannot be read or were read after a
/// write (a version other than the page's).
async fn kept_while(
    store: &dyn Store,
    days: PageDays,
    version: i64,
) -> Option<std::sync::Arc<KeptWhile>> {
    let stamps = store
        .page_stamps(days.user, days.from, days.to)
        .await
        .ok()?;
    (stamps.view == version).then(|| std::sync::Arc::new(KeptWhile { days, stamps }))
}

/// What one answer is true for: the key (so never another key's answer),
/// its owner's view version and the day, and the path with its query.
#[derive(Clone, PartialEq, Eq, Hash)]
struct AnswerKey {
    key: ApiKeyId,
    version: i64,
    day: Date,
    path: String,
}

#[derive(Clone)]
struct Answer {
    headers: HeaderMap,
    body: Bytes,
    /// Shared: every hit clones the answer.
    kept_while: Option<std::sync::Arc<KeptWhile>>,
}

impl Answer {
    fn size(&self, path: &str) -> usize {
        self.body.len() + path.len() + 64 * self.headers.len() + 96
    }
}

/// The leader's answer could not be kept (not a 200, too big, or its body
/// failed): the requests that waited for it compute their own.
#[derive(Debug)]
struct NotKept;

/// How a request's answer came.
enum Shared<T> {
    /// From the cache, computed by this request (`led`) or another one.
    Kept { answer: Answer, led: bool },
    /// Not kept: this request's own answer when it computed one, none when
    /// it waited for a request whose answer was not kept.
    NotKept(Option<T>),
}

impl ReadCache {
    /// A cache of at most `limit` bytes; 0 keeps nothing.
    pub fn new(limit: usize) -> Self {
        let bytes = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let answers = (limit > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(bytes(limit - limit / 16))
                .weigher(|key: &AnswerKey, answer: &Answer| {
                    u32::try_from(answer.size(&key.path)).unwrap_or(u32::MAX)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build()
        });
        let latest = (limit > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(bytes(limit / 16))
                .weigher(|key: &PathKey, _: &i64| {
                    u32::try_from(key.path.len() + 64).unwrap_or(u32::MAX)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build()
        });
        Self {
            limit,
            answers,
            latest,
        }
    }

    /// The largest answer worth keeping: one big answer must not push out
    /// everything else.
    fn largest(&self) -> usize {
        self.limit / 8
    }

    async fn get(&self, key: &AnswerKey) -> Option<Answer> {
        self.answers.as_ref()?.get(key).await
    }

    /// Notes the version a page that can outlive a write was kept at.
    async fn kept_at(&self, key: &AnswerKey) {
        if let Some(latest) = &self.latest {
            latest.insert(PathKey::of(key), key.version).await;
        }
    }

    /// The page last kept under `key`'s path at an older version, when
    /// `store` says nothing it shows changed since: kept again under
    /// `key`'s version (and no longer under the old one).
    async fn revalidated(&self, key: &AnswerKey, store: &dyn Store) -> Option<Answer> {
        let (answers, latest) = (self.answers.as_ref()?, self.latest.as_ref()?);
        let path = PathKey::of(key);
        let version = latest.get(&path).await?;
        if version >= key.version {
            return None;
        }
        let old = AnswerKey {
            version,
            ..key.clone()
        };
        let answer = answers.get(&old).await?;
        let kept = answer.kept_while.as_ref()?;
        let now = store
            .page_stamps(kept.days.user, kept.days.from, kept.days.to)
            .await
            .ok()?;
        answers.invalidate(&old).await;
        if !now.still_true(&kept.stamps, version) {
            latest.invalidate(&path).await;
            return None;
        }
        answers.insert(key.clone(), answer.clone()).await;
        latest.insert(path, key.version).await;
        metrics::counter!("read_cache_revalidated_total").increment(1);
        Some(answer)
    }

    /// The answer under `key`, or `compute`'s: concurrent calls for one key
    /// run one computation and the others wait for it. `compute` gives
    /// back what it could not keep as `Err`.
    async fn shared<T, F>(&self, key: AnswerKey, compute: F) -> Shared<T>
    where
        F: Future<Output = Result<Answer, T>>,
    {
        let Some(answers) = &self.answers else {
            return match compute.await {
                Ok(answer) => Shared::Kept { answer, led: true },
                Err(own) => Shared::NotKept(Some(own)),
            };
        };
        let mut own = None;
        let mut led = false;
        let result = answers
            .try_get_with(key, async {
                led = true;
                match compute.await {
                    Ok(answer) => Ok(answer),
                    Err(not_kept) => {
                        own = Some(not_kept);
                        Err(NotKept)
                    }
                }
            })
            .await;
        match result {
            Ok(answer) => Shared::Kept { answer, led },
            Err(_) => Shared::NotKept(own),
        }
    }
}

fn respond(answer: Answer) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.headers_mut() = answer.headers;
    response
}

fn hit(answer: Answer) -> Response {
    metrics::counter!("read_cache_hits_total").increment(1);
    respond(answer)
}

/// The answer to keep of a response: a 200 whose body fits and that does
/// not say `Cache-Control: no-store`, with the days it shows if it says;
/// otherwise the response itself, to send as it is.
async fn keepable(
    response: Response,
    largest: usize,
) -> Result<(Answer, Option<PageDays>), Response> {
    let fits = response
        .body()
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok())
        .is_some_and(|n| n <= largest);
    let no_store = response
        .headers()
        .get(header::CACHE_CONTROL)
        .is_some_and(|v| v.as_bytes() == b"no-store");
    if response.status() != StatusCode::OK || !fits || no_store {
        return Err(response);
    }
    let (mut parts, body) = response.into_parts();
    match axum::body::to_bytes(body, largest).await {
        Ok(body) => Ok((
            Answer {
                headers: parts.headers,
                body,
                kept_while: None,
            },
            parts.extensions.remove::<PageDays>(),
        )),
        Err(err) => Err(ApiError::Internal(format!("reading a response: {err}")).into_response()),
    }
}

/// A read on `/v1`, once authenticated ([`crate::v1_request`]): answers a
/// `GET` from `cache` when it can (the day from the app's clock, a page
/// kept before a write checked against its store), and keeps what the
/// handler answers with 200.
pub async fn serve_cached(app: &AppState, cache: &ReadCache, req: Request, next: Next) -> Response {
    let principal = match req.extensions().get::<Principal>() {
        Some(p) if req.method() == Method::GET && p.scopes.contains(&Scope::Read) => p.clone(),
        _ => return next.run(req).await,
    };
    if cache.limit == 0 {
        return next.run(req).await;
    }
    let key = AnswerKey {
        key: principal.key_id,
        version: principal.view_version,
        day: app.clock.today(),
        path: req
            .uri()
            .path_and_query()
            .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned()),
    };
    if let Some(answer) = cache.get(&key).await {
        return hit(answer);
    }
    if let Some(answer) = cache.revalidated(&key, app.store.as_ref()).await {
        return hit(answer);
    }
    let largest = cache.largest();
    let version = key.version;
    // Taken by whichever computation runs: this request's, if it leads.
    let mut request = Some(req);
    let compute = async {
        let Some(req) = request.take() else {
            return Err(ApiError::Internal("request computed twice".into()).into_response());
        };
        metrics::counter!("read_cache_misses_total").increment(1);
        let (mut answer, days) = keepable(next.clone().run(req).await, largest).await?;
        if let Some(days) = days {
            answer.kept_while = kept_while(app.store.as_ref(), days, version).await;
        }
        Ok(answer)
    };
    let kept_key = key.clone();
    match cache.shared(key, compute).await {
        Shared::Kept { answer, led: true } if answer.kept_while.is_some() => {
            cache.kept_at(&kept_key).await;
            respond(answer)
        }
        Shared::Kept { answer, led: true } => respond(answer),
        Shared::Kept { answer, led: false } => hit(answer),
        Shared::NotKept(Some(response)) => response,
        // Waited for a request whose answer was not kept: compute it here.
        Shared::NotKept(None) => match request {
            Some(req) => {
                metrics::counter!("read_cache_misses_total").increment(1);
                next.run(req).await
            }
            None => ApiError::Internal("request lost by the read cache".into()).into_response(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use uuid::Uuid;

    fn key(version: i64, day: i8, path: &str) -> AnswerKey {
        AnswerKey {
            key: ApiKeyId(Uuid::from_u128(2)),
            version,
            day: jiff::civil::date(2026, 11, day),
            path: path.into(),
        }
    }

    fn answer(text: &str) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        Answer {
            headers,
            body: Bytes::from(text.to_owned()),
            kept_while: None,
        }
    }

    async fn put(cache: &ReadCache, key: AnswerKey, text: &str) {
        let kept = cache.shared::<(), _>(key, async { Ok(answer(text)) }).await;
        assert!(matches!(kept, Shared::Kept { led: true, .. }));
    }

    async fn body(cache: &ReadCache, key: &AnswerKey) -> Option<Bytes> {
        cache.get(key).await.map(|a| a.body)
    }

    #[tokio::test]
    async fn an_answer_is_served_only_at_its_key_version_day_and_path() {
        let cache = ReadCache::new(1 << 20);
        put(&cache, key(3, 1, "/v1/a"), "one").await;
        assert_eq!(body(&cache, &key(3, 1, "/v1/a")).await, Some("one".into()));
        assert!(body(&cache, &key(4, 1, "/v1/a")).await.is_none());
        assert!(body(&cache, &key(3, 2, "/v1/a")).await.is_none());
        assert!(body(&cache, &key(3, 1, "/v1/b")).await.is_none());
        let other_key = AnswerKey {
            key: ApiKeyId(Uuid::from_u128(9)),
            ..key(3, 1, "/v1/a")
        };
        assert!(body(&cache, &other_key).await.is_none());
    }

    #[tokio::test]
    async fn the_byte_limit_holds_and_the_newest_answers_stay() {
        let text = "0123456789".repeat(100);
        let size = answer(&text).size("/v1/x000");
        let limit = size * 20;
        let cache = ReadCache::new(limit);
        for i in 0..500 {
            put(&cache, key(1, 1, &format!("/v1/x{i:03}")), &text).await;
        }
        let answers = cache.answers.as_ref().unwrap();
        answers.run_pending_tasks().await;
        assert!(
            answers.weighted_size() <= limit as u64,
            "{}",
            answers.weighted_size()
        );
        assert!(body(&cache, &key(1, 1, "/v1/x499")).await.is_some());
        assert!(body(&cache, &key(1, 1, "/v1/x000")).await.is_none());
    }

    #[tokio::test]
    async fn an_answer_not_kept_goes_back_to_its_request_only() {
        let cache = ReadCache::new(1 << 20);
        let shared = cache
            .shared(key(1, 1, "/v1/a"), async { Err::<Answer, _>("mine") })
            .await;
        assert!(matches!(shared, Shared::NotKept(Some("mine"))));
        assert!(body(&cache, &key(1, 1, "/v1/a")).await.is_none());
    }

    #[tokio::test]
    async fn concurrent_misses_compute_once() {
        let cache = Arc::new(ReadCache::new(1 << 20));
        let runs = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (cache, runs) = (cache.clone(), runs.clone());
                tokio::spawn(async move {
                    let compute = async {
                        runs.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok::<_, ()>(answer("one"))
                    };
                    match cache.shared(key(1, 1, "/v1/a"), compute).await {
                        Shared::Kept { answer, led } => (answer.body, led),
                        Shared::NotKept(_) => panic!("kept"),
                    }
                })
            })
            .collect();
        let mut leaders = 0;
        for task in tasks {
            let (body, led) = task.await.unwrap();
            assert_eq!(body, Bytes::from("one"));
            leaders += usize::from(led);
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(leaders, 1);
    }

    #[tokio::test]
    async fn a_zero_limit_keeps_nothing() {
        let cache = ReadCache::new(0);
        let shared = cache
            .shared::<(), _>(key(1, 1, "/v1/a"), async { Ok(answer("x")) })
            .await;
        assert!(matches!(shared, Shared::Kept { led: true, .. }));
        assert!(body(&cache, &key(1, 1, "/v1/a")).await.is_none());
    }
}
