//! Typed identifiers: an account id can never be passed where a tag id is
//! expected. All are UUIDs, printed and stored in hyphenated form. New ids
//! are version 7: ordered by creation within a process, so "oldest first"
//! holds even for rows created in the same millisecond.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($($name:ident),* $(,)?) => {$(
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub Uuid);

        impl $name {
            pub fn new() -> Self {
                Self(Uuid::now_v7())
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
    RuleId,
    PurchaseId,
    BudgetId,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_follow_creation_order() {
        let ids: Vec<AccountId> = (0..1000).map(|_| AccountId::new()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.windows(2).all(|w| w[0].to_string() < w[1].to_string()));
    }

    #[test]
    fn ids_order_as_their_text_does() {
        let mut ids: Vec<TransactionId> = (0..500).map(|_| TransactionId::new()).collect();
        ids.extend((0..500).map(|_| TransactionId(uuid::Uuid::new_v4())));
        let mut by_text = ids.clone();
        by_text.sort_by_key(|id| id.to_string());
        ids.sort();
        assert_eq!(ids, by_text);
    }
}
