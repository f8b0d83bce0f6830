//! `/v1/categories`: public system categories plus the user's own, flat
//! and linked by `parent_id`.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::account::Patch;
use cofre_domain::category::{Category, CategoryChanges};
use cofre_domain::time::format_timestamp;
use cofre_domain::{CategoryId, FieldErrors};

use super::{CommonErrors, created};
use crate::AppState;
use crate::auth::{Auth, Read, Write};
use crate::error::{ApiResult, Problem};
use crate::extract::{AppJson, AppPath, path_id, uuid_patch};
use crate::json::patch;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_categories, create_category))
        .routes(routes!(update_category))
}

#[derive(Serialize, ToSchema)]
pub struct CategoryBody {
    pub id: String,
    pub title: String,
    pub parent_id: Option<String>,
    pub icon_id: Option<String>,
    /// `#RRGGBB`
    pub color_hex: Option<String>,
    /// True for public system categories.
    pub system: bool,
    /// Archived for this user.
    pub archived: bool,
    pub created_at: String,
}

impl From<Category> for CategoryBody {
    fn from(c: Category) -> Self {
        Self {
            id: c.id.to_string(),
            system: c.is_system(),
            title: c.title,
            parent_id: c.parent_id.map(|p| p.to_string()),
            icon_id: c.icon_id,
            color_hex: c.color_hex,
            archived: c.archived,
            created_at: format_timestamp(c.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct CategoryList {
    pub data: Vec<CategoryBody>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCategory {
    #[schema(required = true, max_length = 200)]
    title: Option<String>,
    /// Nests the category under a visible one.
    parent_id: Option<String>,
    icon_id: Option<String>,
    icon_name: Option<String>,
    /// `#RRGGBB`
    color_hex: Option<String>,
}

/// Changes a category; system categories accept only `archived`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateCategory {
    #[schema(max_length = 200)]
    title: Option<String>,
    /// `null` moves the category to the top level.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>)]
    parent_id: Patch<String>,
    icon_id: Option<String>,
    icon_name: Option<String>,
    /// `null` removes the colour.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>)]
    color_hex: Patch<String>,
    archived: Option<bool>,
}

impl UpdateCategory {
    fn into_changes(self) -> ApiResult<CategoryChanges> {
        let mut errors = FieldErrors::new();
        let parent_id = uuid_patch(&mut errors, "parent_id", self.parent_id, CategoryId::parse);
        errors.finish()?;
        Ok(CategoryChanges {
            title: self.title,
            parent_id,
            icon_id: self.icon_id,
            icon_name: self.icon_name,
            color_hex: self.color_hex,
            archived: self.archived,
        })
    }
}

/// Every category visible to the user, ordered by title.
#[utoipa::path(get, path = "/v1/categories", tag = "categories",
    responses((status = 200, body = CategoryList), CommonErrors))]
async fn list_categories(
    State(state): State<AppState>,
    auth: Auth<Read>,
) -> ApiResult<AppJson<CategoryList>> {
    let list = state.store.list_categories(auth.user()).await?;
    Ok(AppJson(CategoryList {
        data: list.into_iter().map(Into::into).collect(),
    }))
}

/// Creates one of the user's own categories.
#[utoipa::path(post, path = "/v1/categories", tag = "categories", request_body = CreateCategory,
    responses((status = 201, body = CategoryBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn create_category(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<CreateCategory>,
) -> ApiResult<(StatusCode, AppJson<CategoryBody>)> {
    let changes = UpdateCategory {
        title: Some(body.title.unwrap_or_default()),
        parent_id: body.parent_id.map_or(Patch::Keep, Patch::Set),
        icon_id: body.icon_id,
        icon_name: body.icon_name,
        color_hex: body.color_hex.map_or(Patch::Keep, Patch::Set),
        archived: None,
    }
    .into_changes()?;
    let category = state
        .store
        .create_category(auth.user(), &changes, state.clock.now())
        .await?;
    Ok(created(category.into()))
}

/// Renames, moves, recolours, or archives/unarchives a category.
#[utoipa::path(patch, path = "/v1/categories/{id}", tag = "categories", request_body = UpdateCategory,
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, body = CategoryBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn update_category(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<UpdateCategory>,
) -> ApiResult<AppJson<CategoryBody>> {
    let id = path_id(&id, CategoryId::parse)?;
    let changes = body.into_changes()?;
    let category = state
        .store
        .update_category(auth.user(), id, &changes)
        .await?;
    Ok(AppJson(category.into()))
}
