//! Health, readiness and metrics: public, outside `/v1`.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::AppJson;

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`
    pub status: &'static str,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

/// Liveness: the process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = Health)))]
async fn healthz() -> AppJson<Health> {
    AppJson(Health { status: "ok" })
}

/// How long readiness waits for the database.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Readiness: the database answers (within 2 s) and writes are moving.
/// 503 `database_unavailable` with `Retry-After` while the database does
/// not answer; 503 `writes_stuck` while writes have not moved for longer
/// than a request may run (SQLite: through the group commit gate;
/// PostgreSQL: a session of the database waiting for a lock).
/// Ready again as soon as both hold, without a restart.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = Health),
        (status = 503, description = "`database_unavailable` or `writes_stuck`", body = Problem, content_type = "application/problem+json")))]
async fn readyz(State(state): State<AppState>) -> axum::response::Response {
    // Both checks within one limit: a database that does not answer is
    // reported within it, whichever check meets it.
    let checked = tokio::time::timeout(READY_WITHIN, async {
        state.store.ping().await?;
        state.store.write_stall().await
    })
    .await;
    let error = match checked {
        Ok(Ok(Some(stalled))) if stalled > state.config.request_timeout => {
            tracing::warn!(
                stalled_ms = stalled.as_millis() as u64,
                "readiness check failed: writes stuck"
            );
            return ApiError::WritesStuck {
                stalled_s: stalled.as_secs(),
            }
            .into_response();
        }
        Ok(Ok(_)) => return AppJson(Health { status: "ok" }).into_response(),
        Ok(Err(err)) => err.to_string(),
        Err(_) => format!("no answer within {} s", READY_WITHIN.as_secs()),
    };
    tracing::warn!(error = %error, "readiness check failed");
    ApiError::DatabaseUnavailable.into_response()
}

/// Prometheus metrics in the text exposition format. Public unless the
/// server sets `COFRE_METRICS_TOKEN`; then only with
/// `Authorization: Bearer <that token>` (not an API key).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, content_type = "text/plain", body = String),
        (status = 401, description = "`COFRE_METRICS_TOKEN` is set and the request does not bear it", body = Problem, content_type = "application/problem+json")))]
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = &state.config.metrics_token {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !bool::from(sent.as_bytes().ct_eq(token.as_bytes())) {
            return ApiError::MetricsUnauthorized.into_response();
        }
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        crate::metrics_handle().render(),
    )
        .into_response()
}
