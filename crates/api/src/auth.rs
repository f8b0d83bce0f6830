//! Bearer-key authentication. A middleware on `/v1` authenticates the key
//! (401), applies its rate limit (429) and leaves the [`Principal`] in the
//! request; handlers then state the scope they need in their signature
//! with [`Auth<Read>`] or [`Auth<Write>`] (403 when missing).
//!
//! A key is read for every request, except a single-row creation's
//! (`POST /v1/transactions`) where the store keeps keys it read before
//! ([`Store::recalled_api_key`], PostgreSQL, where a read is a round trip
//! of its own): that request is authenticated with the key as last read,
//! and its handler takes [`Auth<WriteCheckedOnCommit>`] and hands the key
//! to the write, which stores nothing unless the key is still live in its
//! own transaction. Any other extractor reads the key again first.
//!
//! [`Store::recalled_api_key`]: cofre_store::Store::recalled_api_key

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use std::marker::PhantomData;
use subtle::ConstantTimeEq;

use cofre_domain::auth::{ApiKey, Scope, hash_secret, split_key};
use cofre_domain::{ApiKeyId, UserId};

use crate::AppState;
use crate::error::ApiError;
use crate::rate_limit::{Decision, Window};

/// Who is calling: the key's owner, the key, and what it may do.
#[derive(Clone, Debug)]
pub struct Principal {
    pub user_id: UserId,
    pub key_id: ApiKeyId,
    pub scopes: Vec<Scope>,
    /// The owner's view version when the key was checked: cached reads
    /// made at this version are still true (see [`crate::read_cache`]).
    /// Unknown (-1) for a recalled key.
    pub view_version: i64,
    /// The key as this process read it for an earlier request, not for
    /// this one: only [`Auth<WriteCheckedOnCommit>`] takes it as it is.
    pub recalled: bool,
}

/// The one route whose requests may be authenticated with a recalled key:
/// its handler hands the key to the write, which checks it as it commits.
pub const CHECKED_ON_COMMIT_ROUTE: &str = "/v1/transactions";

/// The general limits' decision for this request, as counted by every
/// server sharing the limiter; left in the request for `/v1/me`.
#[derive(Clone, Debug)]
pub struct RateStatus(pub Decision);

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Checks a key against the stored hash, in constant time.
pub fn verify(key: &ApiKey, secret: &str) -> bool {
    let given = hash_secret(secret);
    let matches: bool = given.as_bytes().ct_eq(key.secret_hash.as_bytes()).into();
    matches && key.revoked_at.is_none()
}

/// The request's key, read for it; or, with `recall`, as last read when
/// the store keeps it.
async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    recall: bool,
) -> Result<Principal, ApiError> {
    let token = bearer(headers).ok_or(ApiError::Unauthorized)?;
    let (key_id, secret) = split_key(token).ok_or(ApiError::Unauthorized)?;
    if recall && let Some(key) = state.store.recalled_api_key(key_id).await {
        if !verify(&key, secret) {
            return Err(ApiError::Unauthorized);
        }
        return Ok(Principal {
            user_id: key.user_id,
            key_id: key.id,
            scopes: key.scopes,
            view_version: -1,
            recalled: true,
        });
    }
    read_key(state, key_id, secret).await
}

/// The principal of `key_id`, read now and checked against `secret`.
async fn read_key(state: &AppState, key_id: ApiKeyId, secret: &str) -> Result<Principal, ApiError> {
    let found = state
        .store
        .find_api_key(key_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    if !verify(&found.key, secret) {
        return Err(ApiError::Unauthorized);
    }
    Ok(Principal {
        user_id: found.key.user_id,
        key_id: found.key.id,
        scopes: found.key.scopes,
        view_version: found.view_version,
        recalled: false,
    })
}

fn rate_headers(headers: &mut HeaderMap, decision: &Decision) {
    headers.insert("ratelimit-limit", HeaderValue::from(decision.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(decision.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(decision.reset));
}

/// The 429 of a refused request, with the window's headers.
fn refused(decision: &Decision) -> Response {
    let mut response = ApiError::RateLimited {
        retry_after: decision.retry_after,
    }
    .into_response();
    rate_headers(response.headers_mut(), decision);
    response
}

/// Every `/v1` request first ([`crate::v1_request`]): the key checked and
/// its rate limit counted, then `inner` answers the request.
pub async fn require_key(
    state: &AppState,
    mut req: Request,
    inner: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let recall = req.method() == Method::POST
        && req
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|path| path.as_str() == CHECKED_ON_COMMIT_ROUTE);
    let principal = match authenticate(state, req.headers(), recall).await {
        Ok(p) => p,
        Err(err) => return err.into_response(),
    };
    let decision = state
        .limiter
        .check(&principal.key_id.to_string(), &state.config.rate_windows())
        .await;
    if let Some(d) = &decision
        && !d.allowed
    {
        return refused(d);
    }
    req.extensions_mut().insert(principal);
    if let Some(d) = &decision {
        req.extensions_mut().insert(RateStatus(d.clone()));
    }
    let mut response = inner(req).await;
    // A route with its own, stricter budget (bulk) reports that one.
    if let Some(d) = &decision
        && !response.headers().contains_key("ratelimit-limit")
    {
        rate_headers(response.headers_mut(), d);
    }
    response
}

/// A call counted against the bulk budget (`COFRE_BULK_LIMIT_PER_HOUR` per
/// key and hour) on top of the general limits, before any work is done.
pub struct BulkQuota(Option<Decision>);

impl BulkQuota {
    /// The bulk window's `RateLimit-*` headers, for the response.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(d) = &self.0 {
            rate_headers(&mut headers, d);
        }
        headers
    }
}

impl FromRequestParts<AppState> for BulkQuota {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let principal = parts
            .extensions
            .get::<Principal>()
            .ok_or_else(|| ApiError::Unauthorized.into_response())?;
        let window = Window {
            limit: state.config.bulk_limit_per_hour,
            window_sec: 3_600,
        };
        let decision = state
            .limiter
            .check(&format!("bulk:{}", principal.key_id), &[window])
            .await;
        if let Some(d) = &decision
            && !d.allowed
        {
            return Err(refused(d));
        }
        Ok(BulkQuota(decision))
    }
}

/// A scope a handler can require.
pub trait RequiredScope: Send + Sync {
    const SCOPE: Scope;
    /// Whether the handler hands a recalled key to its write to check
    /// ([`Auth::key_to_check`]); if not, the key is read again first.
    const CHECKED_ON_COMMIT: bool = false;
}

pub struct Read;
pub struct Write;
/// Write, by a handler whose every path either hands
/// [`Auth::key_to_check`] to a write that checks it as it commits or
/// calls [`Auth::confirmed`] first.
pub struct WriteCheckedOnCommit;

impl RequiredScope for Read {
    const SCOPE: Scope = Scope::Read;
}

impl RequiredScope for Write {
    const SCOPE: Scope = Scope::Write;
}

impl RequiredScope for WriteCheckedOnCommit {
    const SCOPE: Scope = Scope::Write;
    const CHECKED_ON_COMMIT: bool = true;
}

/// The authenticated caller, proven to hold scope `S`.
pub struct Auth<S: RequiredScope> {
    pub principal: Principal,
    _scope: PhantomData<S>,
}

impl<S: RequiredScope> Auth<S> {
    pub fn user(&self) -> UserId {
        self.principal.user_id
    }

    /// The key its write must check as it commits: the request's, when it
    /// was recalled rather than read for it.
    pub fn key_to_check(&self) -> Option<ApiKeyId> {
        self.principal.recalled.then_some(self.principal.key_id)
    }

    /// The same caller with the key read now (401 if it was revoked
    /// since it was recalled), for a path whose write does not check it.
    pub async fn confirmed(self, state: &AppState) -> Result<Self, ApiError> {
        Ok(Auth {
            principal: confirm(state, self.principal).await?,
            _scope: PhantomData,
        })
    }
}

/// `principal` with its key read now, if it was recalled.
async fn confirm(state: &AppState, principal: Principal) -> Result<Principal, ApiError> {
    if !principal.recalled {
        return Ok(principal);
    }
    let found = state
        .store
        .find_api_key(principal.key_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    // A key's owner, secret and scopes never change; only whether it is
    // revoked.
    if found.key.revoked_at.is_some() || found.key.user_id != principal.user_id {
        return Err(ApiError::Unauthorized);
    }
    Ok(Principal {
        view_version: found.view_version,
        recalled: false,
        ..principal
    })
}

impl<S: RequiredScope> FromRequestParts<AppState> for Auth<S> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let mut principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(ApiError::Unauthorized)?;
        // A recalled key lacking the scope is read too: revoked since, it
        // is answered 401, as a key read for the request would be.
        if !S::CHECKED_ON_COMMIT || !principal.scopes.contains(&S::SCOPE) {
            principal = confirm(state, principal).await?;
        }
        if !principal.scopes.contains(&S::SCOPE) {
            return Err(ApiError::InsufficientScope(S::SCOPE.as_str()));
        }
        Ok(Auth {
            principal,
            _scope: PhantomData,
        })
    }
}

/// A new random secret: 32 bytes from the OS, hex encoded.
pub fn new_secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(cofre_domain::text::hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_tokens() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc"),
        );
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&headers), None);
    }

    /// The route whose creations may be authenticated with a recalled key
    /// is the one the creation handler serves (renamed, the middleware
    /// would read every key again: safe, and the round trip back).
    #[test]
    fn the_recalled_key_route_is_the_creations() {
        let doc = crate::openapi();
        let post = doc
            .paths
            .paths
            .get(CHECKED_ON_COMMIT_ROUTE)
            .and_then(|item| item.post.as_ref())
            .expect("a POST at the route");
        assert_eq!(post.operation_id.as_deref(), Some("create_transaction"));
    }

    #[test]
    fn secrets_are_random_hex() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
