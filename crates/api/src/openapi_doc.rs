//! The frame of the OpenAPI document (title, security scheme, tags) and
//! the rules that hold for whole groups of routes, applied once here so no
//! route can forget them: public routes need no key, every route that
//! reads a body can answer 413 and 415; `minProperties` is written as such.

use utoipa::OpenApi;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::request_body::RequestBody;
use utoipa::openapi::schema::{Schema, SchemaType, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, ResponseBuilder};

use crate::error;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "cofre personal finance API",
        version = "1.0.0",
        description = "Accounts, cards, categories, tags and transactions of one user per API key. \
            Every /v1 route needs the header `Authorization: Bearer KEY`, where KEY is an API key; \
            GET needs the `read` scope, everything else `write`. \
            Errors are RFC 9457 problem documents (`application/problem+json`)."
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    components(schemas(error::Problem, error::ProblemField)),
    tags(
        (name = "profile"), (name = "accounts"), (name = "categories"), (name = "tags"),
        (name = "transactions"), (name = "transfers"), (name = "cards"), (name = "overview"),
        (name = "export"), (name = "operations")
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The document the `/v1` routes are added to.
pub fn base() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The whole document: the authenticated routes of `v1` and the public
/// routes of `public`, with the rules of each group applied.
pub fn finish(
    mut v1: utoipa::openapi::OpenApi,
    mut public: utoipa::openapi::OpenApi,
) -> utoipa::openapi::OpenApi {
    for operation in v1.paths.paths.values_mut().flat_map(operations) {
        if let Some(body) = operation.request_body.as_mut() {
            optional_body_without_null(body);
            declare_problem(
                operation,
                413,
                "`payload_too_large`: the body is over the size limit",
            );
            declare_problem(
                operation,
                415,
                "`unsupported_media_type`: the body is not of the declared content type",
            );
        }
    }
    for operation in public.paths.paths.values_mut().flat_map(operations) {
        // An empty list, not a list holding an empty requirement: clients
        // then send no key to these routes.
        operation.security = Some(Vec::new());
    }
    v1.merge(public);
    min_properties_as_meant(&mut v1);
    v1
}

/// utoipa 5 writes `#[schema(min_properties = n)]` as `maxProperties`
/// (juhaku/utoipa#1464, not released): a PATCH body documented as "at most
/// one field" made generated clients and schemathesis refuse or flag the
/// two-field patches the server takes. cofre declares no `maxProperties`,
/// so each one in a component is the `minProperties` it was meant to be.
fn min_properties_as_meant(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for schema in components.schemas.values_mut() {
        if let RefOr::T(Schema::Object(object)) = schema
            && let Some(n) = object.max_properties.take()
        {
            object.min_properties = Some(object.min_properties.map_or(n, |m| m.max(n)));
        }
    }
}

fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// An optional body is declared as the object it is when sent, not as
/// "null or the object": the server takes no body, never a JSON `null`.
fn optional_body_without_null(body: &mut RequestBody) {
    if body.required == Some(Required::True) {
        return;
    }
    for content in body.content.values_mut() {
        if let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema {
            let mut not_null = one_of.items.iter().filter(|item| !is_null(item));
            if let (Some(only), None) = (not_null.next(), not_null.next()) {
                content.schema = Some(only.clone());
            }
        }
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(schema, RefOr::T(Schema::Object(object))
        if object.schema_type == SchemaType::Type(Type::Null))
}

/// Adds a problem-document response for `status` unless the route
/// declares its own.
fn declare_problem(operation: &mut Operation, status: u16, description: &str) {
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("Problem")))
        .build();
    operation
        .responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| {
            ResponseBuilder::new()
                .description(description)
                .content("application/problem+json", content)
                .build()
                .into()
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(utoipa::ToSchema)]
    #[schema(min_properties = 1)]
    #[allow(dead_code)]
    struct Patch {
        a: Option<String>,
        b: Option<String>,
    }

    #[test]
    fn min_properties_stay_a_minimum() {
        let mut doc = utoipa::openapi::OpenApiBuilder::new()
            .components(Some(
                utoipa::openapi::ComponentsBuilder::new()
                    .schema_from::<Patch>()
                    .build(),
            ))
            .build();
        min_properties_as_meant(&mut doc);
        let json = serde_json::to_value(&doc).unwrap();
        let patch = &json["components"]["schemas"]["Patch"];
        assert_eq!(patch["minProperties"], 1, "{patch}");
        assert!(patch.get("maxProperties").is_none(), "{patch}");
    }
}
