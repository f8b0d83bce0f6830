//! `/v1/tags`: the user's labels.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::tag::{Tag, new_tag, tag_changes};
use cofre_domain::time::format_timestamp;
use cofre_domain::{FieldErrors, TagId};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiResult, Problem};
use crate::extract::{AppJson, AppPath, path_id};
use crate::json::{ColorHex, Title};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(update_tag, delete_tag))
}

#[derive(Serialize, ToSchema)]
pub struct TagBody {
    pub id: String,
    pub title: String,
    /// `#RRGGBB`
    pub color_hex: String,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<Tag> for TagBody {
    fn from(t: Tag) -> Self {
        Self {
            id: t.id.to_string(),
            title: t.title,
            color_hex: t.color_hex,
            created_at: format_timestamp(t.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct TagList {
    pub data: Vec<TagBody>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTag {
    /// Unique per user, ignoring case.
    #[schema(required = true, value_type = Title)]
    title: Option<String>,
    #[schema(required = true, value_type = ColorHex)]
    color_hex: Option<String>,
}

/// The user's tags, ordered by title.
#[utoipa::path(get, path = "/v1/tags", tag = "tags",
    responses((status = 200, body = TagList), CommonErrors))]
async fn list_tags(State(state): State<AppState>, auth: Auth<Read>) -> ApiResult<AppJson<TagList>> {
    let tags = state.store.list_tags(auth.user()).await?;
    Ok(AppJson(TagList {
        data: tags.into_iter().map(Into::into).collect(),
    }))
}

/// Creates a tag. 409 `title_conflict` when the title exists (any case).
#[utoipa::path(post, path = "/v1/tags", tag = "tags", request_body = CreateTag,
    responses((status = 201, body = TagBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_tag(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateTag>,
) -> ApiResult<(StatusCode, AppJson<TagBody>)> {
    let mut errors = FieldErrors::new();
    if body.title.is_none() {
        errors.add("title", "is required");
    }
    if body.color_hex.is_none() {
        errors.add("color_hex", "is required");
    }
    errors.finish()?;
    let tag = new_tag(
        body.title.as_deref().unwrap_or_default(),
        body.color_hex.as_deref().unwrap_or_default(),
    )?;
    let tag = state
        .store
        .create_tag(auth.user(), &tag, state.clock.now())
        .await?;
    Ok(created(tag.into()))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1)]
pub struct UpdateTag {
    /// Unique per user, ignoring case.
    #[schema(value_type = Option<Title>)]
    title: Option<String>,
    #[schema(value_type = Option<ColorHex>)]
    color_hex: Option<String>,
}

/// Renames or recolours a tag; the rows that carry it show the change.
/// 409 `title_conflict` when another tag has the title (any case).
#[utoipa::path(patch, path = "/v1/tags/{id}", tag = "tags", request_body = UpdateTag,
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = TagBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_tag(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<UpdateTag>,
) -> ApiResult<AppJson<TagBody>> {
    let id = path_id(&id, TagId::parse)?;
    let changes = tag_changes(body.title.as_deref(), body.color_hex.as_deref())?;
    let tag = state.store.update_tag(auth.user(), id, &changes).await?;
    Ok(AppJson(tag.into()))
}

/// Deletes a tag: it leaves every row, recurrence and installment purchase
/// that carried it; nothing else changes.
#[utoipa::path(delete, path = "/v1/tags/{id}", tag = "tags",
    params(("id" = String, Path, format = Uuid)),
    responses((status = 204, description = "Deleted"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_tag(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, TagId::parse)?;
    state.store.delete_tag(auth.user(), id).await?;
    Ok(StatusCode::NO_CONTENT)
}
