//! `GET/PATCH /v1/me`: the user's financial profile, plan, scopes and the
//! rate limits in force.

use axum::Extension;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::account::Patch;
use cofre_domain::profile::{Profile, ProfileChanges};

use super::CommonErrors;
use crate::AppState;
use crate::auth::{Auth, RateStatus, Read, Write};
use crate::error::{ApiResult, Problem};
use crate::extract::AppJson;
use crate::json::{JsonMoney, NonNegativeAmount, Title, map_patch, patch};
use crate::rate_limit::Window;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_me, patch_me))
}

#[derive(Serialize, ToSchema)]
pub struct ProfileBody {
    pub id: String,
    pub name: Option<String>,
    pub wage: Option<JsonMoney>,
    pub monthly_living_cost: Option<JsonMoney>,
    pub has_spouse: Option<bool>,
    pub has_children: Option<bool>,
    pub is_entrepreneur: Option<bool>,
}

impl From<Profile> for ProfileBody {
    fn from(p: Profile) -> Self {
        Self {
            id: p.id.to_string(),
            name: p.name,
            wage: p.wage.map(JsonMoney),
            monthly_living_cost: p.monthly_living_cost.map(JsonMoney),
            has_spouse: p.has_spouse,
            has_children: p.has_children,
            is_entrepreneur: p.is_entrepreneur,
        }
    }
}

/// A self-hosted server unlocks everything.
#[derive(Serialize, ToSchema)]
pub struct Plan {
    pub premium_access: bool,
    pub ultra_access: bool,
    /// `MONTHLY`
    pub frequency: &'static str,
}

#[derive(Serialize, ToSchema)]
pub struct RateWindow {
    /// Requests allowed per window; 0 means the window is off.
    pub limit: u32,
    pub window_sec: u64,
    /// Requests this key has left in the current window, this one
    /// counted, across every server sharing the limits; null when the
    /// window is off.
    pub remaining: Option<u32>,
    /// Seconds until the current window resets; null when the window is
    /// off.
    pub reset: Option<u64>,
}

impl RateWindow {
    /// The window as configured and where this request's check left it.
    fn of(window: Window, status: Option<&RateStatus>) -> Self {
        let state = status.and_then(|s| s.0.window(window));
        Self {
            limit: window.limit,
            window_sec: window.window_sec,
            remaining: state.map(|s| s.remaining),
            reset: state.map(|s| s.reset),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct RateLimits {
    pub minute: RateWindow,
    pub day: RateWindow,
}

#[derive(Serialize, ToSchema)]
pub struct Limits {
    pub rate: RateLimits,
}

#[derive(Serialize, ToSchema)]
pub struct MeBody {
    #[serde(flatten)]
    pub profile: ProfileBody,
    pub plan: Plan,
    /// Scopes of the key making this request.
    pub scopes: Vec<String>,
    pub limits: Limits,
}

/// The profile, plan, scopes of the calling key and rate limits in force.
///
/// Each rate window tells what is left of it after this request, as
/// counted by every server sharing the limits (`Cache-Control: no-store`).
#[utoipa::path(get, path = "/v1/me", tag = "profile",
    responses((status = 200, body = MeBody), CommonErrors))]
async fn get_me(
    State(state): State<AppState>,
    auth: Auth<Read>,
    status: Option<Extension<RateStatus>>,
) -> ApiResult<impl IntoResponse> {
    let profile = state.store.get_profile(auth.user()).await?;
    let [minute, day] = state.config.rate_windows();
    let status = status.as_ref().map(|Extension(s)| s);
    let body = AppJson(MeBody {
        profile: profile.into(),
        plan: Plan {
            premium_access: true,
            ultra_access: true,
            frequency: "MONTHLY",
        },
        scopes: auth
            .principal
            .scopes
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        limits: Limits {
            rate: RateLimits {
                minute: RateWindow::of(minute, status),
                day: RateWindow::of(day, status),
            },
        },
    });
    Ok(([(header::CACHE_CONTROL, "no-store")], body))
}

/// Only the fields sent change; `null` clears a field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchMe {
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<Title>)]
    name: Patch<String>,
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<NonNegativeAmount>)]
    wage: Patch<JsonMoney>,
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<NonNegativeAmount>)]
    monthly_living_cost: Patch<JsonMoney>,
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<bool>)]
    has_spouse: Patch<bool>,
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<bool>)]
    has_children: Patch<bool>,
    #[serde(default, deserialize_with = "patch")]
    #[schema(value_type = Option<bool>)]
    is_entrepreneur: Patch<bool>,
}

/// Changes the profile. Answers the profile without plan, scopes and limits.
#[utoipa::path(patch, path = "/v1/me", tag = "profile", request_body = PatchMe,
    responses((status = 200, body = ProfileBody),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn patch_me(
    State(state): State<AppState>,
    auth: Auth<Write>,
    AppJson(body): AppJson<PatchMe>,
) -> ApiResult<AppJson<ProfileBody>> {
    let changes = ProfileChanges {
        name: body.name,
        wage: map_patch(body.wage, |m| m.0),
        monthly_living_cost: map_patch(body.monthly_living_cost, |m| m.0),
        has_spouse: body.has_spouse,
        has_children: body.has_children,
        is_entrepreneur: body.is_entrepreneur,
    };
    let profile = state.store.update_profile(auth.user(), &changes).await?;
    Ok(AppJson(profile.into()))
}
