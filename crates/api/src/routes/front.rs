//! The front door: what someone opening the server in a browser, or a
//! client asking `/v1`, finds: the server's name and version and where
//! the reference, the document and the health checks are. Public.

use axum::http::header;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::extract::AppJson;

const VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(home))
        .routes(routes!(index))
}

/// Where things are, for clients.
#[derive(Serialize, ToSchema)]
pub struct Index {
    /// `cofre`
    pub name: &'static str,
    pub version: &'static str,
    /// The interactive API reference (HTML).
    pub docs: &'static str,
    /// The OpenAPI document of this server.
    pub openapi: &'static str,
    /// Liveness and readiness checks.
    pub healthz: &'static str,
    pub readyz: &'static str,
}

const INDEX: Index = Index {
    name: "cofre",
    version: VERSION,
    docs: "/docs",
    openapi: "/v1/openapi.json",
    healthz: "/healthz",
    readyz: "/readyz",
};

/// A small page for a browser: the server, its version, and links to the
/// reference, the document and the health checks. Served from the binary.
#[utoipa::path(get, path = "/", tag = "operations",
    responses((status = 200, content_type = "text/html", body = String)))]
async fn home() -> impl IntoResponse {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cofre {version}</title><style>body{{font-family:system-ui,sans-serif;\
         max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}</style></head>\
         <body><h1>cofre {version}</h1><p>A self-hosted personal-finance API.</p><ul>\
         <li><a href=\"{docs}\">API reference</a> (interactive)</li>\
         <li><a href=\"{openapi}\">OpenAPI document</a></li>\
         <li><a href=\"{healthz}\">{healthz}</a> and <a href=\"{readyz}\">{readyz}</a></li></ul>\
         <p>Every <code>/v1</code> route needs <code>Authorization: Bearer &lt;key&gt;</code>; \
         the first start of the server prints one.</p></body></html>\n",
        version = INDEX.version,
        docs = INDEX.docs,
        openapi = INDEX.openapi,
        healthz = INDEX.healthz,
        readyz = INDEX.readyz,
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page)
}

/// Where the reference, the document and the health checks are.
#[utoipa::path(get, path = "/v1", tag = "operations",
    responses((status = 200, body = Index)))]
async fn index() -> AppJson<Index> {
    AppJson(INDEX)
}
