//! Runs a request again when the database rolled its transaction back
//! whole on a serialization failure or deadlock (PostgreSQL 40001 /
//! 40P01): nothing of the first run was kept, so a second run decides
//! afresh from what is stored then. Bounded; the last answer (503 `busy`
//! with `Retry-After`) goes to the client when every run conflicted.

use axum::body::{Body, HttpBody, to_bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

use crate::around::Next;
use crate::error::ApiError;
use crate::extract::JSON_BODY_LIMIT;

/// Marks a response whose request was rolled back whole and may run again.
#[derive(Clone, Copy, Debug)]
pub struct RolledBack;

/// Runs after the first, at most.
pub const MAX_REPLAYS: u32 = 3;

/// Middleware inside authentication and the rate limit (a replay counts
/// once) and inside the request deadline (replays share it). Only requests
/// whose whole body is known to be small enough to keep are replayed: no
/// body, or a declared length within the JSON limit; an upload or a
/// chunked body answers the conflict to its client. Reads (GET, HEAD,
/// OPTIONS) run once: they take no locks a write could deadlock with and
/// hold no transaction the database could roll back, so they never
/// conflict, and keeping a copy of every read to replay it would be work
/// for nothing.
pub async fn replay_conflicts(req: Request, next: Next) -> Response {
    if req.method().is_safe() {
        return next.run(req).await;
    }
    // Exact for a declared length (or no body); unknown for a chunked one.
    let keepable = req
        .body()
        .size_hint()
        .upper()
        .is_some_and(|length| length <= JSON_BODY_LIMIT as u64);
    if !keepable {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match to_bytes(body, JSON_BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(err) => {
            return ApiError::field("body", format!("could not be read: {err}")).into_response();
        }
    };
    let mut replays = 0;
    loop {
        let mut again = Request::builder()
            .method(parts.method.clone())
            .uri(parts.uri.clone())
            .version(parts.version)
            .body(Body::from(bytes.clone()))
            .expect("parts of a request already received");
        *again.headers_mut() = parts.headers.clone();
        *again.extensions_mut() = parts.extensions.clone();
        let response = next.clone().run(again).await;
        if response.extensions().get::<RolledBack>().is_none() || replays == MAX_REPLAYS {
            return response;
        }
        replays += 1;
        metrics::counter!("http_requests_replayed_total").increment(1);
        // A little spread, so the conflicting requests do not meet again.
        tokio::time::sleep(Duration::from_millis(5 * u64::from(replays) + jitter_ms())).await;
    }
}

fn jitter_ms() -> u64 {
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    u64::from(byte[0] % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::around::Around;
    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::routing::post;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use tower::ServiceExt;

    /// [`replay_conflicts`] as the middleware around a route.
    fn replaying() -> Around<()> {
        Around::new((), |(), req, next| Box::pin(replay_conflicts(req, next)))
    }

    /// A route that conflicts `fails` times, then echoes its body.
    fn app(fails: u32, runs: Arc<AtomicU32>) -> Router {
        Router::new()
            .route(
                "/",
                post(move |body: String| async move {
                    let run = runs.fetch_add(1, Ordering::SeqCst);
                    if run < fails {
                        ApiError::Conflicted.into_response()
                    } else {
                        body.into_response()
                    }
                }),
            )
            .layer(replaying())
    }

    fn post_body(body: &'static str) -> Request {
        Request::post("/")
            .header(header::CONTENT_LENGTH, body.len())
            .body(Body::from(body))
            .unwrap()
    }

    #[tokio::test]
    async fn a_conflicted_request_runs_again_with_the_same_body() {
        let runs = Arc::new(AtomicU32::new(0));
        let response = app(2, runs.clone())
            .oneshot(post_body("{\"a\":1}"))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = to_bytes(response.into_body(), 100).await.unwrap();
        assert_eq!(&body[..], b"{\"a\":1}");
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn replays_are_bounded_and_the_conflict_is_answered() {
        let runs = Arc::new(AtomicU32::new(0));
        let response = app(u32::MAX, runs.clone())
            .oneshot(post_body("x"))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        assert_eq!(runs.load(Ordering::SeqCst), MAX_REPLAYS + 1);
    }

    #[tokio::test]
    async fn a_read_runs_once() {
        let runs = Arc::new(AtomicU32::new(0));
        let counted = runs.clone();
        let app = Router::new()
            .route(
                "/",
                axum::routing::get(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    ApiError::Conflicted.into_response()
                }),
            )
            .layer(replaying());
        let response = app
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_body_too_large_to_keep_is_not_replayed() {
        let runs = Arc::new(AtomicU32::new(0));
        let big = "x".repeat(JSON_BODY_LIMIT + 1);
        let request = Request::post("/")
            .header(header::CONTENT_LENGTH, big.len())
            .body(Body::from(big))
            .unwrap();
        let response = app(1, runs.clone()).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
