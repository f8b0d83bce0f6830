//! `/v1/categories`: public system categories plus the user's own, flat
//! and linked by `parent_id`.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
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
use crate::extract::{AppJson, AppPath, AppQuery, path_id, uuid_field, uuid_patch};
use crate::json::{ColorHex, Title, patch};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_categories, create_category))
        .routes(routes!(update_category, delete_category))
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
    #[schema(format = DateTime)]
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
    #[schema(required = true, value_type = Title)]
    title: Option<String>,
    /// Nests the category under a visible one.
    #[schema(format = Uuid)]
    parent_id: Option<String>,
    icon_id: Option<String>,
    icon_name: Option<String>,
    #[schema(value_type = Option<ColorHex>)]
    color_hex: Option<String>,
}

/// Changes a category; system categories accept only `archived`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateCategory {
    #[schema(value_type = Option<Title>)]
    title: Option<String>,
    /// `null` moves the category to the top level.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<String>, format = Uuid)]
    parent_id: Patch<String>,
    icon_id: Option<String>,
    icon_name: Option<String>,
    /// `null` removes the colour.
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<ColorHex>)]
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
        data: list.iter().cloned().map(Into::into).collect(),
    }))
}

/// Creates one of the user's own categories.
#[utoipa::path(post, path = "/v1/categories", tag = "categories", request_body = CreateCategory,
    responses((status = 201, body = CategoryBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
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

/// Query of DELETE.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteCategoryQuery {
    /// The category the deleted one's rows, rules and installment
    /// purchases move to; without it they are left with no category.
    #[param(value_type = Option<uuid::Uuid>)]
    replacement_id: Option<String>,
}

/// What a deletion moved.
#[derive(Serialize, ToSchema)]
pub struct DeletedCategory {
    #[schema(format = Uuid)]
    pub deleted_category_id: String,
    /// The category they moved to; null: to no category.
    #[schema(format = Uuid)]
    pub replacement_id: Option<String>,
    /// Stored rows moved.
    pub moved_transactions: u64,
    /// Recurrence rules moved (their future entries follow).
    pub moved_rules: u64,
    /// Installment purchases moved (their future parts follow).
    pub moved_plans: u64,
}

/// Deletes one of the user's own categories, in one transaction: its rows,
/// recurrence rules and installment purchases move to `replacement_id`, or
/// to no category; its subcategories move to the top level. System
/// categories cannot be deleted (archive them instead).
#[utoipa::path(delete, path = "/v1/categories/{id}", tag = "categories",
    params(("id" = String, Path, format = Uuid), DeleteCategoryQuery),
    responses((status = 200, body = DeletedCategory),
        (status = 400, description = "`validation_error`: a system category, or a `replacement_id` that is the deleted category or no category of the user", body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn delete_category(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppPath(id): AppPath<String>,
    AppQuery(query): AppQuery<DeleteCategoryQuery>,
) -> ApiResult<AppJson<DeletedCategory>> {
    let id = path_id(&id, CategoryId::parse)?;
    let mut errors = FieldErrors::new();
    let replacement = query
        .replacement_id
        .as_deref()
        .and_then(|text| uuid_field(&mut errors, "replacement_id", text, CategoryId::parse));
    errors.finish()?;
    let moved = state
        .store
        .delete_category(auth.user(), id, replacement)
        .await?;
    Ok(AppJson(DeletedCategory {
        deleted_category_id: id.to_string(),
        replacement_id: replacement.map(|r| r.to_string()),
        moved_transactions: moved.moved_transactions,
        moved_rules: moved.moved_rules,
        moved_plans: moved.moved_plans,
    }))
}
