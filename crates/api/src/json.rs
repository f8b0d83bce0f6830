//! JSON shapes shared by every resource: exact money as JSON numbers, card
//! days given as integers or strings, and PATCH fields that tell "absent"
//! from "null".

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{OneOfBuilder, RefOr};
use utoipa::{PartialSchema, ToSchema};

use cofre_domain::Money;
use cofre_domain::account::Patch;
use cofre_domain::money::MAX_ABS_CENTS;
use cofre_domain::text::{DESCRIPTION_MAX, NOTES_MAX, TITLE_MAX};

/// Money on the wire: a JSON number read from its literal text (never via
/// a float) and written with two decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonMoney(pub Money);

impl Serialize for JsonMoney {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.0.to_string()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonMoney {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Money::parse(raw.get())
            .map(JsonMoney)
            .map_err(de::Error::custom)
    }
}

/// The largest amount one value may hold, in the units of the document.
fn max_amount() -> f64 {
    // 99,999,999,999.99: exact as an f64 to the cent.
    MAX_ABS_CENTS as f64 / 100.0
}

/// Money as JSON Schema: a number of whole cents.
fn money_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::Number))
        .multiple_of(Some(0.01))
        .maximum(Some(max_amount()))
}

impl PartialSchema for JsonMoney {
    fn schema() -> RefOr<Schema> {
        money_schema()
            .minimum(Some(-max_amount()))
            .description(Some("Exact amount with at most 2 decimal places"))
            .examples([serde_json::json!(1234.5)])
            .into()
    }
}

/// The schema of an amount a client sends where it must be positive (the
/// `type` of the entry gives the direction). Only a schema: the value is a
/// [`JsonMoney`] checked by the domain rules.
pub struct Amount;

impl PartialSchema for Amount {
    fn schema() -> RefOr<Schema> {
        money_schema()
            .exclusive_minimum(Some(0.0))
            .description(Some("Positive exact amount with at most 2 decimal places"))
            .examples([serde_json::json!(1234.5)])
            .into()
    }
}

impl ToSchema for Amount {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Amount")
    }
}

/// Text a client sends: no NUL character (PostgreSQL cannot store it),
/// at most `max` characters and, when `required`, something besides
/// white space (the rules trim it).
fn text_schema(max: usize, required: bool, description: &str) -> RefOr<Schema> {
    let pattern = if required {
        "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
    } else {
        "^[^\\u0000]*$"
    };
    ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::String))
        .min_length(required.then_some(1))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .description(Some(description))
        .into()
}

/// Declares a text schema type for `#[schema(value_type = ...)]`.
macro_rules! text_type {
    ($name:ident, $max:expr, $required:expr, $description:literal) => {
        #[doc = $description]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                text_schema($max, $required, $description)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

text_type!(
    Title,
    TITLE_MAX,
    true,
    "A title: not blank, at most 200 characters"
);
text_type!(
    Description,
    DESCRIPTION_MAX,
    true,
    "A description: not blank, at most 500 characters"
);
text_type!(
    Notes,
    NOTES_MAX,
    false,
    "Free text, at most 5,000 characters"
);

/// The schema of an amount that may be zero but not negative (a wage, a
/// credit limit).
pub struct NonNegativeAmount;

impl PartialSchema for NonNegativeAmount {
    fn schema() -> RefOr<Schema> {
        money_schema()
            .minimum(Some(0.0))
            .description(Some(
                "Exact amount, zero or more, with at most 2 decimal places",
            ))
            .into()
    }
}

impl ToSchema for NonNegativeAmount {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("NonNegativeAmount")
    }
}

/// The schema of a colour a client sends, `#RRGGBB`.
pub struct ColorHex;

impl PartialSchema for ColorHex {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .pattern(Some("^#[0-9A-Fa-f]{6}$"))
            .description(Some("A colour, `#RRGGBB`"))
            .examples([serde_json::json!("#1E88E5")])
            .into()
    }
}

impl ToSchema for ColorHex {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ColorHex")
    }
}

impl ToSchema for JsonMoney {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Money")
    }
}

impl From<Money> for JsonMoney {
    fn from(m: Money) -> Self {
        JsonMoney(m)
    }
}

/// A card day: an integer, or a string holding one ("5"). The range is
/// checked by the account rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CardDay(pub i64);

impl<'de> Deserialize<'de> for CardDay {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DayVisitor;
        const EXPECTED: &str = "an integer from 1 to 31, or a string holding one";
        impl Visitor<'_> for DayVisitor {
            type Value = CardDay;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CardDay, E> {
                Ok(CardDay(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CardDay, E> {
                i64::try_from(v)
                    .map(CardDay)
                    .map_err(|_| E::custom(format!("must be {EXPECTED}")))
            }
            // JSON Schema counts 9.0 as an integer; so does this API.
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<CardDay, E> {
                if v.fract() == 0.0 && (-1e15..=1e15).contains(&v) {
                    Ok(CardDay(v as i64))
                } else {
                    Err(E::custom(format!("must be {EXPECTED}")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CardDay, E> {
                v.trim()
                    .parse::<i64>()
                    .map(CardDay)
                    .map_err(|_| E::custom(format!("must be {EXPECTED}")))
            }
        }
        deserializer.deserialize_any(DayVisitor)
    }
}

impl PartialSchema for CardDay {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(SchemaType::new(Type::Integer))
                    .minimum(Some(1))
                    .maximum(Some(31)),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(SchemaType::new(Type::String))
                    .pattern(Some("^[0-9]{1,2}$")),
            )
            .description(Some(
                "Day of the month, 1-31, as an integer or a string holding one",
            ))
            .into()
    }
}

impl ToSchema for CardDay {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CardDay")
    }
}

/// For `#[serde(default, deserialize_with = "patch")]`: absent keeps,
/// `null` clears, a value sets.
pub fn patch<'de, D, T>(deserializer: D) -> Result<Patch<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(match Option::<T>::deserialize(deserializer)? {
        Some(value) => Patch::Set(value),
        None => Patch::Clear,
    })
}

/// Maps the value inside a patch.
pub fn map_patch<T, U>(patch: Patch<T>, f: impl FnOnce(T) -> U) -> Patch<U> {
    match patch {
        Patch::Keep => Patch::Keep,
        Patch::Clear => Patch::Clear,
        Patch::Set(v) => Patch::Set(f(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Body {
        amount: JsonMoney,
        day: CardDay,
        #[serde(default, deserialize_with = "patch")]
        limit: Patch<JsonMoney>,
    }

    #[test]
    fn money_round_trips_exactly() {
        let body: Body = serde_json::from_str(r#"{"amount": 0.1, "day": "7"}"#).unwrap();
        assert_eq!(body.amount.0, Money::from_cents(10));
        assert_eq!(body.day, CardDay(7));
        assert_eq!(body.limit, Patch::Keep);
        let json = serde_json::to_string(&JsonMoney(Money::from_cents(-1050))).unwrap();
        assert_eq!(json, "-10.50");
    }

    #[test]
    fn patch_tells_null_from_absent() {
        let body: Body = serde_json::from_str(r#"{"amount": 1, "day": 1, "limit": null}"#).unwrap();
        assert_eq!(body.limit, Patch::Clear);
        let body: Body = serde_json::from_str(r#"{"amount": 1, "day": 1, "limit": 2.5}"#).unwrap();
        assert_eq!(body.limit, Patch::Set(JsonMoney(Money::from_cents(250))));
    }

    #[test]
    fn rejects_bad_money_and_days() {
        assert!(serde_json::from_str::<Body>(r#"{"amount": 1.001, "day": 1}"#).is_err());
        assert!(serde_json::from_str::<Body>(r#"{"amount": "1", "day": 1}"#).is_err());
        assert!(serde_json::from_str::<Body>(r#"{"amount": 1, "day": "x"}"#).is_err());
        assert!(serde_json::from_str::<Body>(r#"{"amount": 1, "day": 1.5}"#).is_err());
        assert!(serde_json::from_str::<Body>(r#"{"amount": 1, "day": 1e300}"#).is_err());
    }

    #[test]
    fn a_whole_float_is_a_day_as_json_schema_says() {
        let body: Body = serde_json::from_str(r#"{"amount": 1, "day": 9.0}"#).unwrap();
        assert_eq!(body.day, CardDay(9));
    }

    #[test]
    fn text_schemas_state_the_rules_of_the_domain() {
        for (schema, required) in [(Title::schema(), true), (Notes::schema(), false)] {
            let RefOr::T(Schema::Object(object)) = schema else {
                panic!("an object schema")
            };
            let pattern = regex::Regex::new(object.pattern.as_deref().unwrap()).unwrap();
            assert_eq!(object.min_length, required.then_some(1));
            assert!(pattern.is_match("Mercado"));
            assert!(pattern.is_match(" Mercado "));
            assert!(!pattern.is_match("Mer\0cado"), "NUL cannot be stored");
            for blank in ["", "   ", "\t\n"] {
                assert_eq!(pattern.is_match(blank), !required, "{blank:?}");
                // What the schema refuses, the rules refuse.
                assert!(cofre_domain::text::required_text("t", blank, TITLE_MAX).is_err());
            }
        }
    }
}
