//! The built-in icon catalogue. Clients show icons by id; `icon_name`
//! lets a client pick one by its human name instead.

pub struct Icon {
    pub id: &'static str,
    pub name: &'static str,
}

macro_rules! icons {
    ($($id:literal => $name:literal),* $(,)?) => {
        &[$(Icon { id: $id, name: $name }),*]
    };
}

/// Icons for accounts and categories.
pub const ICONS: &[Icon] = icons![
    "ic-bank" => "bank",
    "ic-wallet" => "wallet",
    "ic-piggy-bank" => "piggy-bank",
    "ic-credit-card" => "credit-card",
    "ic-cash" => "cash",
    "ic-investment" => "investment",
    "ic-food" => "food",
    "ic-restaurant" => "restaurant",
    "ic-groceries" => "groceries",
    "ic-car" => "car",
    "ic-fuel" => "fuel",
    "ic-bus" => "bus",
    "ic-home" => "home",
    "ic-bolt" => "bolt",
    "ic-water" => "water",
    "ic-wifi" => "wifi",
    "ic-phone" => "phone",
    "ic-health" => "health",
    "ic-pharmacy" => "pharmacy",
    "ic-education" => "education",
    "ic-book" => "book",
    "ic-leisure" => "leisure",
    "ic-travel" => "travel",
    "ic-movie" => "movie",
    "ic-shopping" => "shopping",
    "ic-clothes" => "clothes",
    "ic-gift" => "gift",
    "ic-pet" => "pet",
    "ic-subscription" => "subscription",
    "ic-salary" => "salary",
    "ic-income" => "income",
    "ic-tax" => "tax",
    "ic-transfer" => "transfer",
    "ic-bill" => "bill",
    "ic-beauty" => "beauty",
    "ic-other" => "other",
];

/// Card artwork for credit cards (`card_icon_id`).
pub const CARD_ICONS: &[Icon] = icons![
    "card-generic" => "generic",
    "card-visa" => "visa",
    "card-mastercard" => "mastercard",
    "card-elo" => "elo",
    "card-amex" => "amex",
    "card-hipercard" => "hipercard",
];

pub fn icon_exists(catalogue: &[Icon], id: &str) -> bool {
    catalogue.iter().any(|icon| icon.id == id)
}

/// Resolves an icon by name, ignoring case and surrounding spaces.
pub fn icon_by_name(catalogue: &[Icon], name: &str) -> Option<&'static str> {
    let name = name.trim();
    catalogue
        .iter()
        .find(|icon| icon.name.eq_ignore_ascii_case(name))
        .map(|icon| icon.id)
}

/// Decides the icon from an `icon_id` and/or `icon_name`; both given must
/// agree. `None` when neither was sent.
pub fn resolve_icon(
    id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<String>, crate::DomainError> {
    use crate::DomainError;
    let by_id = match id {
        Some(id) if icon_exists(ICONS, id) => Some(id.to_owned()),
        Some(_) => return Err(DomainError::field("icon_id", "unknown icon id")),
        None => None,
    };
    let by_name = match name {
        Some(name) => match icon_by_name(ICONS, name) {
            Some(id) => Some(id.to_owned()),
            None => return Err(DomainError::field("icon_name", "unknown icon name")),
        },
        None => None,
    };
    match (by_id, by_name) {
        (Some(a), Some(b)) if a != b => Err(DomainError::field(
            "icon_name",
            "names a different icon than icon_id",
        )),
        (a, b) => Ok(a.or(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_unique() {
        for list in [ICONS, CARD_ICONS] {
            for (i, a) in list.iter().enumerate() {
                for b in &list[i + 1..] {
                    assert_ne!(a.id, b.id);
                    assert_ne!(a.name, b.name);
                }
            }
        }
    }

    #[test]
    fn resolves_by_name_or_id() {
        assert_eq!(
            resolve_icon(None, Some(" Wallet ")).unwrap(),
            Some("ic-wallet".into())
        );
        assert_eq!(
            resolve_icon(Some("ic-bank"), None).unwrap(),
            Some("ic-bank".into())
        );
        assert_eq!(
            resolve_icon(Some("ic-bank"), Some("bank")).unwrap(),
            Some("ic-bank".into())
        );
        assert!(resolve_icon(Some("ic-bank"), Some("wallet")).is_err());
        assert!(resolve_icon(None, Some("nope")).is_err());
        assert!(resolve_icon(Some("nope"), None).is_err());
        assert_eq!(resolve_icon(None, None).unwrap(), None);
    }
}
