//! Extractors whose every rejection is one of our problem documents, with
//! the offending field named. Handlers never use bare `axum::Json`,
//! `Query` or `Path`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use cofre_domain::FieldErrors;
use cofre_domain::account::Patch;

use crate::error::ApiError;

/// Maximum size of a JSON request body.
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;

/// A JSON body. Also a JSON response with status 200.
pub struct AppJson<T>(pub T);

fn is_json(content_type: &str) -> bool {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    mime.eq_ignore_ascii_case("application/json")
        || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Turns a serde error with its path into a field error. `root` names the
/// field used when the error is about the whole document.
fn deserialize_error<E: std::fmt::Display>(
    err: serde_path_to_error::Error<E>,
    root: &str,
) -> ApiError {
    let path = err.path().to_string();
    let message = err.into_inner().to_string();
    let field = if path == "." || path.is_empty() {
        // serde reports duplicate and missing fields on the enclosing
        // object; its message still names the field.
        named_field(&message).unwrap_or(root).to_owned()
    } else {
        path
    };
    // serde_json appends a position that means nothing to an API client
    // once the field is named.
    let message = match message.find(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    };
    ApiError::field(field, message)
}

/// Reads a nested JSON value into `T`, naming fields under `root`
/// (`filter.from`, `set.amount`; an empty root: the body's own fields).
pub fn parse_value<T: DeserializeOwned>(
    value: serde_json::Value,
    root: &str,
) -> Result<T, ApiError> {
    let whole = if root.is_empty() { "body" } else { "" };
    serde_path_to_error::deserialize(value).map_err(|err| match deserialize_error(err, whole) {
        ApiError::Validation(list) if root.is_empty() => ApiError::Validation(list),
        ApiError::Validation(list) => cofre_domain::bulk::prefix_fields(
            cofre_domain::DomainError::Validation(list),
            &format!("{root}."),
        )
        .into(),
        other => other,
    })
}

/// The name in "duplicate field `x`", "missing field `x`" or "unknown field `x`".
fn named_field(message: &str) -> Option<&str> {
    let rest = ["duplicate field `", "missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))?;
    rest.split_once('`').map(|(name, _)| name)
}

/// Parses a JSON document into `T`, naming the field of any error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body of this API is an object; serde would otherwise accept an
    // array as a struct written positionally.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::field("body", "must be a JSON object"));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        if err.inner().is_syntax() || err.inner().is_eof() {
            let inner = err.into_inner();
            ApiError::field("body", format!("malformed JSON: {inner}"))
        } else {
            deserialize_error(err, "body")
        }
    })?;
    de.end()
        .map_err(|e| ApiError::field("body", format!("malformed JSON: {e}")))?;
    // serde keeps the last of a key given twice (or refuses it, by the
    // type): for money, an ambiguous body is refused whole.
    if let Some(path) = first_repeated_key(bytes) {
        return Err(ApiError::field(
            path,
            "is given more than once in its object; send each field once",
        ));
    }
    Ok(value)
}

/// One step down a JSON document: a key of an object, or an index.
enum Step {
    Key(String),
    Index(usize),
}

/// The path (`amount`, `transactions[2].tag_ids`) of the first key that
/// an object of `bytes`, a well-formed JSON document, gives twice.
fn first_repeated_key(bytes: &[u8]) -> Option<String> {
    let mut path = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde::de::DeserializeSeed::deserialize(Repeated { path: &mut path }, &mut de)
        .ok()
        .flatten()
}

/// Walks a value for [`first_repeated_key`], `path` leading to it.
struct Repeated<'a> {
    path: &'a mut Vec<Step>,
}

impl Repeated<'_> {
    fn written(&self) -> String {
        let mut out = String::new();
        for step in self.path.iter() {
            match step {
                Step::Key(key) if out.is_empty() => out.push_str(key),
                Step::Key(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Repeated<'_> {
    type Value = Option<String>;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Repeated<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        // Bounded by the document: one step an element.
        for i in 0.. {
            self.path.push(Step::Index(i));
            let inner = seq.next_element_seed(Repeated { path: self.path });
            self.path.pop();
            match inner? {
                Some(inner) => found = found.or(inner),
                None => break,
            }
        }
        Ok(found)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = std::collections::HashSet::new();
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            let repeated = !seen.insert(key.clone());
            self.path.push(Step::Key(key));
            if repeated && found.is_none() {
                found = Some(self.written());
            }
            let inner = map.next_value_seed(Repeated { path: self.path });
            self.path.pop();
            found = found.or(inner?);
        }
        Ok(found)
    }
}

impl<S, T> FromRequest<S> for AppJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match read_json(req, state).await? {
            Some(value) => Ok(AppJson(value)),
            None => Err(ApiError::field("body", "a JSON object is required")),
        }
    }
}

/// An optional JSON body: no body (or only whitespace) is `None`.
impl<S, T> OptionalFromRequest<S> for AppJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        Ok(read_json(req, state).await?.map(AppJson))
    }
}

/// Reads a JSON body; `None` when there is none.
async fn read_json<S: Send + Sync, T: DeserializeOwned>(
    req: Request,
    state: &S,
) -> Result<Option<T>, ApiError> {
    if let Some(value) = req.headers().get(header::CONTENT_TYPE) {
        let text = value.to_str().unwrap_or("");
        if !is_json(text) {
            return Err(ApiError::UnsupportedMediaType(format!(
                "send the body as JSON with 'Content-Type: application/json' (got {text:?})"
            )));
        }
    }
    let bytes = Bytes::from_request(req, state)
        .await
        .map_err(|rejection| match rejection {
            BytesRejection::FailedToBufferBody(_) => ApiError::PayloadTooLarge {
                limit: JSON_BODY_LIMIT,
            },
            other => ApiError::field("body", other.body_text()),
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    parse_json(&bytes).map(Some)
}

impl<T: Serialize> IntoResponse for AppJson<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(body) => json_response(body),
            Err(err) => ApiError::Internal(format!("serialising response: {err}")).into_response(),
        }
    }
}

/// A JSON document already written, as a response with status 200.
pub fn json_response(body: impl Into<axum::body::Body>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body.into()).into_response()
}

/// Query parameters. The target struct should deny unknown fields and take
/// values as strings, so that each parameter is validated with its name.
pub struct AppQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for AppQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(AppQuery)
            .map_err(|err| deserialize_error(err, "query"))
    }
}

/// Path parameters; a malformed path is a validation error.
pub struct AppPath<T>(pub T);

impl<S, T> FromRequestParts<S> for AppPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| AppPath(value))
            .map_err(|rejection| ApiError::field("path", rejection.body_text()))
    }
}

/// Parses an id named in a body or query field, recording a field error
/// when it is not a UUID.
pub fn uuid_field<T>(
    errors: &mut FieldErrors,
    field: &str,
    text: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let parsed = parse(text.trim());
    if parsed.is_none() {
        errors.add(field, "must be a UUID");
    }
    parsed
}

/// [`uuid_field`] for a PATCH field: absent keeps, null clears.
pub fn uuid_patch<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: Patch<String>,
    parse: impl Fn(&str) -> Option<T>,
) -> Patch<T> {
    match value {
        Patch::Set(text) => uuid_field(errors, field, &text, parse).map_or(Patch::Keep, Patch::Set),
        Patch::Clear => Patch::Clear,
        Patch::Keep => Patch::Keep,
    }
}

/// Parses an id given in the path: malformed is a 400 naming `id`.
pub fn path_id<T>(text: &str, parse: impl Fn(&str) -> Option<T>) -> Result<T, ApiError> {
    parse(text).ok_or_else(|| ApiError::field("id", "must be a UUID"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cofre_domain::FieldError;
    use serde::Deserialize;

    #[test]
    fn a_key_given_twice_is_found_where_it_stands() {
        let repeated = |text: &str| first_repeated_key(text.as_bytes());
        assert_eq!(
            repeated(r#"{"amount": 10.00, "amount": 99.00}"#).as_deref(),
            Some("amount")
        );
        assert_eq!(
            repeated(
                r#"{"ids": ["a"], "set": {"hide_from_results": true, "hide_from_results": false}}"#
            )
            .as_deref(),
            Some("set.hide_from_results")
        );
        assert_eq!(
            repeated(r#"{"rows": [{"a": 1}, {"a": 1, "b": [], "a": 2}]}"#).as_deref(),
            Some("rows[1].a")
        );
        // Escapes are read: "\u0061" is "a".
        assert_eq!(repeated(r#"{"a": 1, "\u0061": 2}"#).as_deref(), Some("a"));
        // The same key in two objects, or a value repeated, is fine.
        assert_eq!(
            repeated(r#"{"a": {"x": 1}, "b": {"x": 1}, "c": [1, 1]}"#),
            None
        );
        assert_eq!(repeated(r#"{}"#), None);
    }

    #[test]
    fn a_body_with_a_key_given_twice_is_refused_naming_it() {
        let err = parse_json::<Body>(br#"{"title": "x", "title": "y"}"#).unwrap_err();
        match err {
            ApiError::Validation(list) => {
                assert_eq!(list[0].field, "title", "{list:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        title: Option<String>,
        count: Option<u32>,
        amount: Option<crate::json::JsonMoney>,
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(try_from = "String")]
    enum Kind {
        A,
    }

    impl TryFrom<String> for Kind {
        type Error = String;
        fn try_from(text: String) -> Result<Self, String> {
            (text == "A")
                .then_some(Kind::A)
                .ok_or_else(|| "must be A".into())
        }
    }

    fn field_of(err: ApiError) -> String {
        match err {
            ApiError::Validation(list) => {
                let FieldError { field, .. } = &list[0];
                field.clone()
            }
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn names_the_field() {
        assert_eq!(
            field_of(parse_json::<Body>(br#"{"count": "x"}"#).unwrap_err()),
            "count"
        );
        assert_eq!(
            field_of(parse_json::<Body>(br#"{"nope": 1}"#).unwrap_err()),
            "nope"
        );
        assert_eq!(
            field_of(parse_json::<Body>(br#"{"amount": 1.234}"#).unwrap_err()),
            "amount"
        );
        assert_eq!(
            field_of(parse_json::<Body>(br#"{"title": "#).unwrap_err()),
            "body"
        );
        assert_eq!(field_of(parse_json::<Body>(br#"[]"#).unwrap_err()), "body");
        assert_eq!(
            field_of(parse_json::<Body>(br#"{} x"#).unwrap_err()),
            "body"
        );
    }

    #[test]
    fn json_content_types() {
        assert!(is_json("application/json"));
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("application/merge-patch+json"));
        assert!(!is_json("application/x-www-form-urlencoded"));
        assert!(!is_json("text/plain"));
    }
}
