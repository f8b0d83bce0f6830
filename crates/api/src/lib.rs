//! The HTTP API of cofre: an axum router whose routes, parameters, bodies
//! and errors are also its OpenAPI document (utoipa), so no route exists
//! undocumented. Handlers are thin: parse, authorize, call the store,
//! render.

pub mod admin;
pub mod around;
pub mod auth;
pub mod cards;
pub mod error;
pub mod extract;
pub mod import;
pub mod json;
pub mod ledger;
mod openapi_doc;
pub mod rate_limit;
pub mod read_cache;
pub mod receipts;
pub mod reports;
mod request_metrics;
pub mod retry;
mod routes;
mod unread_body;

pub use routes::export::{CSV_COLUMNS, ExportFormat, start as start_export};

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::HeaderName;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::{Config, SwaggerUi};

use cofre_domain::time::Clock;
use cofre_store::Store;

use crate::around::{Around, Next};
use crate::error::ApiError;
use crate::rate_limit::{Limiter, Window};

/// The request deadline unless configured (`COFRE_REQUEST_TIMEOUT`).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings the API needs at run time.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Base URL clients reach this server at (for receipt links).
    pub public_url: String,
    /// Currency of new accounts and of totals.
    pub base_currency: String,
    /// Percent of a budget's available money from which it is a `warning`.
    pub budget_warning_percent: u8,
    pub rate_limit_per_minute: u32,
    pub rate_limit_per_day: u32,
    /// Bulk calls per key per hour, on top of the other limits (0: off).
    pub bulk_limit_per_hour: u32,
    /// Where receipt files live: a directory or a bucket.
    pub receipts: receipts::ReceiptStorage,
    /// Bytes of answers [`read_cache`] may keep (0: off).
    pub read_cache_bytes: usize,
    /// How long one request may run before it is cut off with a 503.
    pub request_timeout: Duration,
    /// When set, `/metrics` answers only requests bearing this token.
    pub metrics_token: Option<String>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            public_url: "http://127.0.0.1:8080".into(),
            base_currency: "BRL".into(),
            budget_warning_percent: cofre_domain::budget::DEFAULT_WARNING_PERCENT,
            rate_limit_per_minute: 300,
            rate_limit_per_day: 50_000,
            bulk_limit_per_hour: 10,
            receipts: receipts::ReceiptStorage::memory(),
            read_cache_bytes: 64 << 20,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            metrics_token: None,
        }
    }
}

impl ApiConfig {
    pub fn rate_windows(&self) -> [Window; 2] {
        [
            Window {
                limit: self.rate_limit_per_minute,
                window_sec: 60,
            },
            Window {
                limit: self.rate_limit_per_day,
                window_sec: 86_400,
            },
        ]
    }
}

/// What every handler and middleware shares. axum clones a route's state
/// for every request (and again for each layer that holds it): behind one
/// `Arc`, that is one reference count, not one per part.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

pub struct Services {
    pub store: Arc<dyn Store>,
    pub clock: Clock,
    pub limiter: Arc<dyn Limiter>,
    pub config: Arc<ApiConfig>,
}

impl AppState {
    pub fn new(services: Services) -> Self {
        Self(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The authenticated `/v1` routes, the public operations routes, and the
/// OpenAPI document generated from both.
fn parts() -> (Router<AppState>, Router<AppState>, utoipa::openapi::OpenApi) {
    let (v1, v1_doc) = OpenApiRouter::with_openapi(openapi_doc::base())
        .merge(routes::v1())
        .split_for_parts();
    let (operations, operations_doc) = routes::operations().split_for_parts();
    (v1, operations, openapi_doc::finish(v1_doc, operations_doc))
}

/// The OpenAPI document, generated from the routes.
pub fn openapi() -> utoipa::openapi::OpenApi {
    parts().2
}

/// The whole application: `/v1` behind authentication, plus the public
/// documentation and operations endpoints.
pub fn router(state: AppState) -> Router {
    // Install the recorder before the first request is counted.
    metrics_handle();
    let (v1, operations, openapi) = parts();
    let v1_state = Arc::new(V1State {
        app: state.clone(),
        cache: read_cache::ReadCache::new(state.config.read_cache_bytes),
    });
    let v1 = v1.route_layer(Around::new(v1_state, |v1, req, next| {
        Box::pin(v1_request(v1, req, next))
    }));
    let docs = SwaggerUi::new("/docs")
        .url("/v1/openapi.json", openapi)
        .config(Config::new(["/v1/openapi.json"]).validator_url("none"));
    let request_id = HeaderName::from_static("x-request-id");
    let deadline = state.config.request_timeout;

    let routes = Router::new()
        .merge(v1)
        .merge(operations)
        .merge(docs)
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        // Inside the routing, where the matched route is known to label
        // the request's metrics.
        .layer(Around::new(deadline, |deadline, req, next| {
            Box::pin(measured_within_deadline(deadline, req, next))
        }))
        .with_state(state);
    // The layers that need no route around the whole router, as one
    // service: `Router::layer` wraps every route in a boxed service of its
    // own, so each layer given to it costs every request an allocation and
    // a copy of its future, once for every layer; given to the router
    // whole, the stack is boxed once.
    let stack = ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
        .layer(PropagateRequestIdLayer::new(request_id))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::Internal("handler panicked".into()).into_response()
        }))
        .layer(axum::extract::DefaultBodyLimit::max(
            extract::JSON_BODY_LIMIT,
        ))
        .service(routes);
    Router::new().fallback_service(stack)
}

/// The span every log line of a request is written in: its method, the
/// path (and query) it asked for, and its request id. Each is given as the
/// string it already is, not through `Display`: a span's fields are
/// written out when it is made, for every request, whether or not
/// anything is logged in it.
fn request_span(req: &Request) -> tracing::Span {
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let uri = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path(), |p| p.as_str());
    tracing::info_span!(
        "request",
        method = req.method().as_str(),
        uri,
        request_id = id
    )
}

/// What every `/v1` request needs besides its handler's state.
struct V1State {
    app: AppState,
    cache: read_cache::ReadCache,
}

/// Every `/v1` request: authentication and the rate limit first
/// ([`auth::require_key`]); then a read goes through the read cache
/// ([`read_cache::serve_cached`]) and a write is run again when the
/// database rolled it back on a conflict ([`retry::replay_conflicts`]).
/// One middleware, not one each: axum clones a route's service, and each
/// middleware clones everything inside it, for every request.
async fn v1_request(v1: Arc<V1State>, req: Request, next: Next) -> Response {
    auth::require_key(&v1.app, req, async |req: Request| {
        if req.method().is_safe() {
            read_cache::serve_cached(&v1.app, &v1.cache, req, next).await
        } else {
            retry::replay_conflicts(req, next).await
        }
    })
    .await
}

/// Runs a request [`within_deadline`], counts it in the metrics (its
/// answer and how long it took, a cut-off one included) and closes the
/// connection after an answer that left the body unread
/// ([`unread_body`]): one middleware for the three, as each layer costs
/// every request a boxed call.
async fn measured_within_deadline(deadline: Duration, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(req.method());
    // The route's path is shared with the router (a reference count).
    let route = req.extensions().get::<MatchedPath>().cloned();
    let (req, body) = unread_body::watch(req);
    let mut response = within_deadline(deadline, next.run(req)).await;
    body.close_if_unread(&mut response);
    request_metrics::record(
        method,
        route.as_ref().map_or("unmatched", MatchedPath::as_str),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// Cuts a request off at `deadline`: dropping the handler's future rolls
/// back a write transaction it holds open, and frees its connection, so no
/// request can hold the server (a statement that commits on its own is
/// told the deadline: [`cofre_store::serve_until`]). Work that never
/// yields cannot be cut off this way; that is why every loop over dates
/// is bounded by construction.
async fn within_deadline(
    deadline: Duration,
    handler: impl std::future::Future<Output = Response>,
) -> Response {
    let served = cofre_store::serve_until(std::time::Instant::now() + deadline, handler);
    match tokio::time::timeout(deadline, served).await {
        Ok(response) => response,
        Err(_) => {
            metrics::counter!("http_requests_cut_off_total").increment(1);
            tracing::warn!(
                deadline_ms = deadline.as_millis() as u64,
                "request cut off at its deadline"
            );
            ApiError::DeadlineExceeded {
                seconds: deadline.as_secs().max(1),
            }
            .into_response()
        }
    }
}

/// The process-wide Prometheus recorder, installed on first use.
pub fn metrics_handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        // Fails only when another recorder is already installed; metrics
        // then go there and this handle renders an empty page.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// How often [`keep_metrics`] drains the recorded durations.
const METRICS_UPKEEP: Duration = Duration::from_secs(5);

/// Keeps the metrics recorder's memory bounded, for as long as it runs:
/// every request's duration is kept as a sample (about 20 bytes) until
/// the recorder's upkeep folds the samples into their summary, which a
/// recorder built as [`metrics_handle`] builds it does only when asked
/// (or when `/metrics` is read). A server nobody scraped grew by that
/// much with every request, without bound. Spawn it once beside the
/// server.
pub async fn keep_metrics() {
    let mut every = tokio::time::interval(METRICS_UPKEEP);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        metrics_handle().run_upkeep();
    }
}

/// A request's method as a metrics label: the standard ones by name, any
/// other as `OTHER`, so clients cannot add labels without end.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "OTHER",
    }
}
