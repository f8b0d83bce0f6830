//! Middleware as a plain `tower` layer around each route, in place of
//! axum's `from_fn`: `from_fn` boxes the rest of a request's way into a
//! service of its own for every request, and that service boxes the
//! route's future again, two allocations and two copies of a future a
//! middleware a request on top of the middleware's own future. Here the
//! rest of the way is the route itself ([`Next`]), called as it is, and
//! the middleware's future is the one box.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use axum::routing::Route;
use futures_util::future::BoxFuture;
use tower::{Layer, Service};

/// The rest of a request's way once a middleware hands it on: the route
/// (its handler, and any layer inside this one).
#[derive(Clone)]
pub struct Next(Route);

impl Next {
    /// Runs the rest of the way for `req`.
    pub async fn run(mut self, req: Request) -> Response {
        match self.0.call(req).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// A middleware's body: given its state, the request and the rest of its
/// way, it answers the request (a plain function, boxing its future).
pub type Run<T> = fn(T, Request, Next) -> BoxFuture<'static, Response>;

/// A middleware as a layer for `Router::layer` or `Router::route_layer`:
/// `run` with a clone of `state` for every request.
#[derive(Clone)]
pub struct Around<T> {
    state: T,
    run: Run<T>,
}

impl<T> Around<T> {
    pub fn new(state: T, run: Run<T>) -> Self {
        Self { state, run }
    }
}

impl<T: Clone> Layer<Route> for Around<T> {
    type Service = Wrapped<T>;

    fn layer(&self, route: Route) -> Wrapped<T> {
        Wrapped {
            around: self.clone(),
            route,
        }
    }
}

/// A route with a middleware around it.
#[derive(Clone)]
pub struct Wrapped<T> {
    around: Around<T>,
    route: Route,
}

impl<T: Clone + Send + 'static> Service<Request> for Wrapped<T> {
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A route is always ready (axum's `Route::poll_ready`).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Answer {
        let next = Next(self.route.clone());
        Answer((self.around.run)(self.around.state.clone(), req, next))
    }
}

/// The answer of a request a middleware runs: its one boxed future.
pub struct Answer(BoxFuture<'static, Response>);

impl Future for Answer {
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll(cx).map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::{Body, to_bytes};
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    use axum::routing::get;
    use tower::ServiceExt;

    /// Answers `/short` itself; otherwise runs the route and adds the
    /// state to its body.
    fn tagging(tag: &'static str, req: Request, next: Next) -> BoxFuture<'static, Response> {
        Box::pin(async move {
            if req.uri().path() == "/short" {
                return (StatusCode::ACCEPTED, "answered by the middleware").into_response();
            }
            let response = next.run(req).await;
            let body = to_bytes(response.into_body(), 1024)
                .await
                .unwrap_or_default();
            format!("{}+{tag}", String::from_utf8_lossy(&body)).into_response()
        })
    }

    fn app() -> Router {
        Router::new()
            .route("/", get(|| async { "handler" }))
            .route("/short", get(|| async { "never" }))
            .layer(Around::new("outer", tagging))
    }

    async fn body(path: &str) -> (StatusCode, String) {
        let response = app()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = to_bytes(response.into_body(), 1024).await.unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn the_middleware_runs_around_the_route_with_its_state() {
        assert_eq!(body("/").await, (StatusCode::OK, "handler+outer".into()));
    }

    #[tokio::test]
    async fn the_middleware_may_answer_without_the_route() {
        assert_eq!(
            body("/short").await,
            (StatusCode::ACCEPTED, "answered by the middleware".into())
        );
    }
}
