//! Typed identifiers: an account id can never be passed where a tag id is
//! expected. All are UUIDs, printed and stored in hyphenated form.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($($name:ident),* $(,)?) => {$(
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub Uuid);

        impl $name {
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }

            /// Parses a hyphenated (or simple) UUID; `None` for anything else.
            pub fn parse(text: &str) -> Option<Self> {
                Uuid::try_parse(text).ok().map(Self)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Uuid::try_parse(text).map(Self)
            }
        }
    )*};
}

id_type!(
    UserId,
    ApiKeyId,
    AccountId,
    CategoryId,
    TagId,
    TransactionId,
);
