//! The user's financial profile.

use crate::account::Patch;
use crate::text::{TITLE_MAX, required_text};
use crate::{DomainError, FieldErrors, Money, UserId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub id: UserId,
    pub name: Option<String>,
    pub wage: Option<Money>,
    pub monthly_living_cost: Option<Money>,
    pub has_spouse: Option<bool>,
    pub has_children: Option<bool>,
    pub is_entrepreneur: Option<bool>,
}

#[derive(Clone, Debug, Default)]
pub struct ProfileChanges {
    pub name: Patch<String>,
    pub wage: Patch<Money>,
    pub monthly_living_cost: Patch<Money>,
    pub has_spouse: Patch<bool>,
    pub has_children: Patch<bool>,
    pub is_entrepreneur: Patch<bool>,
}

fn patch<T: Clone>(current: &Option<T>, change: &Patch<T>) -> Option<T> {
    match change {
        Patch::Keep => current.clone(),
        Patch::Clear => None,
        Patch::Set(value) => Some(value.clone()),
    }
}

fn non_negative(errors: &mut FieldErrors, field: &str, change: &Patch<Money>) {
    if let Patch::Set(value) = change
        && value.is_negative()
    {
        errors.add(field, "must not be negative");
    }
}

pub fn apply_changes(current: &Profile, changes: &ProfileChanges) -> Result<Profile, DomainError> {
    let mut errors = FieldErrors::new();
    let name = match &changes.name {
        Patch::Set(name) => errors.check(required_text("name", name, TITLE_MAX)),
        other => patch(&current.name, other),
    };
    non_negative(&mut errors, "wage", &changes.wage);
    non_negative(
        &mut errors,
        "monthly_living_cost",
        &changes.monthly_living_cost,
    );
    errors.finish()?;
    Ok(Profile {
        id: current.id,
        name,
        wage: patch(&current.wage, &changes.wage),
        monthly_living_cost: patch(&current.monthly_living_cost, &changes.monthly_living_cost),
        has_spouse: patch(&current.has_spouse, &changes.has_spouse),
        has_children: patch(&current.has_children, &changes.has_children),
        is_entrepreneur: patch(&current.is_entrepreneur, &changes.is_entrepreneur),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sent_fields_change() {
        let current = Profile {
            id: UserId::new(),
            name: Some("Ana".into()),
            wage: Some(Money::from_cents(500_000)),
            monthly_living_cost: None,
            has_spouse: Some(true),
            has_children: None,
            is_entrepreneur: None,
        };
        let next = apply_changes(
            &current,
            &ProfileChanges {
                wage: Patch::Clear,
                has_children: Patch::Set(false),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(next.name.as_deref(), Some("Ana"));
        assert_eq!(next.wage, None);
        assert_eq!(next.has_children, Some(false));
        assert_eq!(next.has_spouse, Some(true));
        let bad = apply_changes(
            &current,
            &ProfileChanges {
                name: Patch::Set("x".repeat(201)),
                wage: Patch::Set(Money::from_cents(-1)),
                ..Default::default()
            },
        );
        assert!(bad.is_err());
    }
}
