//! Categories: a flat list linked by `parent_id`, mixing public system
//! categories and the user's own. System categories can only be archived.

use jiff::Timestamp;
use std::collections::{HashMap, HashSet};

use crate::account::Patch;
use crate::icons::resolve_icon;
use crate::text::{TITLE_MAX, color_hex, required_text};
use crate::view::Hashing;
use crate::{CategoryId, DomainError, FieldErrors, UserId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category {
    pub id: CategoryId,
    /// `None` for a public system category.
    pub owner: Option<UserId>,
    pub title: String,
    pub parent_id: Option<CategoryId>,
    pub icon_id: Option<String>,
    pub color_hex: Option<String>,
    /// Archived for the user who reads it.
    pub archived: bool,
    pub created_at: Timestamp,
}

impl Category {
    pub fn is_system(&self) -> bool {
        self.owner.is_none()
    }
}

#[derive(Clone, Debug, Default)]
pub struct CategoryChanges {
    pub title: Option<String>,
    pub parent_id: Patch<CategoryId>,
    pub icon_id: Option<String>,
    pub icon_name: Option<String>,
    pub color_hex: Patch<String>,
    pub archived: Option<bool>,
}

/// The fields of a category a user can set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoryState {
    pub title: String,
    pub parent_id: Option<CategoryId>,
    pub icon_id: Option<String>,
    pub color_hex: Option<String>,
    pub archived: bool,
}

/// Validates `changes` against `current` (`None` when creating) and the
/// categories the user can see.
pub fn apply_changes(
    current: Option<&Category>,
    changes: &CategoryChanges,
    visible: &[Category],
) -> Result<CategoryState, DomainError> {
    let mut errors = FieldErrors::new();
    if current.is_some_and(Category::is_system) {
        let attempted = [
            ("title", changes.title.is_some()),
            ("parent_id", !changes.parent_id.is_keep()),
            ("icon_id", changes.icon_id.is_some()),
            ("icon_name", changes.icon_name.is_some()),
            ("color_hex", !changes.color_hex.is_keep()),
        ];
        for (field, sent) in attempted {
            if sent {
                errors.add(field, "system categories cannot be changed, only archived");
            }
        }
    }

    let title = match (&changes.title, current) {
        (Some(title), _) => errors
            .check(required_text("title", title, TITLE_MAX))
            .unwrap_or_default(),
        (None, Some(c)) => c.title.clone(),
        (None, None) => {
            errors.add("title", "is required");
            String::new()
        }
    };

    let parent_id = match changes.parent_id {
        Patch::Set(parent) => {
            if !visible.iter().any(|c| c.id == parent) {
                errors.add("parent_id", "no such category");
            } else if let Some(me) = current
                && is_ancestor_or_self(visible, me.id, parent)
            {
                errors.add(
                    "parent_id",
                    "would make the category its own parent or ancestor",
                );
            }
            Some(parent)
        }
        Patch::Clear => None,
        Patch::Keep => current.and_then(|c| c.parent_id),
    };

    let icon_id = match errors.check(resolve_icon(
        changes.icon_id.as_deref(),
        changes.icon_name.as_deref(),
    )) {
        Some(Some(icon)) => Some(icon),
        _ => current.and_then(|c| c.icon_id.clone()),
    };

    let color = match &changes.color_hex {
        Patch::Set(value) => errors.check(color_hex("color_hex", value)),
        Patch::Clear => None,
        Patch::Keep => current.and_then(|c| c.color_hex.clone()),
    };

    errors.finish()?;
    Ok(CategoryState {
        title,
        parent_id,
        icon_id,
        color_hex: color,
        archived: changes
            .archived
            .unwrap_or_else(|| current.is_some_and(|c| c.archived)),
    })
}

/// True when `ancestor` is `node` or lies on the path from `node` to the top.
/// Checks that `current` may be deleted with its rows moving to
/// `replacement` (or to no category): only the user's own categories go,
/// and the replacement is another category the user can see.
pub fn check_deletion(
    current: &Category,
    replacement: Option<CategoryId>,
    visible: &[Category],
) -> Result<(), DomainError> {
    let mut errors = FieldErrors::new();
    if current.is_system() {
        errors.add("id", "system categories cannot be deleted, only archived");
    }
    if let Some(replacement) = replacement {
        if replacement == current.id {
            errors.add(
                "replacement_id",
                "must be another category than the one deleted",
            );
        } else if !visible.iter().any(|c| c.id == replacement) {
            errors.add("replacement_id", "no such category");
        }
    }
    errors.finish()
}

fn is_ancestor_or_self(visible: &[Category], ancestor: CategoryId, node: CategoryId) -> bool {
    let parents: HashMap<CategoryId, Option<CategoryId>> =
        visible.iter().map(|c| (c.id, c.parent_id)).collect();
    let mut seen = HashSet::new();
    let mut cursor = Some(node);
    while let Some(id) = cursor {
        if id == ancestor {
            return true;
        }
        if !seen.insert(id) {
            return false;
        }
        cursor = parents.get(&id).copied().flatten();
    }
    false
}

/// The given categories plus every category below them.
pub fn with_descendants(visible: &[Category], roots: &[CategoryId]) -> Vec<CategoryId> {
    CategoryTree::of(visible).with_descendants(roots)
}

/// The visible categories' children, indexed once for the descendants of
/// many roots (each budget of a status asks for its own).
pub struct CategoryTree {
    children: HashMap<CategoryId, Vec<CategoryId>, Hashing>,
}

impl CategoryTree {
    pub fn of(visible: &[Category]) -> Self {
        let mut children: HashMap<CategoryId, Vec<CategoryId>, Hashing> = HashMap::default();
        for c in visible {
            if let Some(parent) = c.parent_id {
                children.entry(parent).or_default().push(c.id);
            }
        }
        CategoryTree { children }
    }

    /// [`with_descendants`] of these categories.
    pub fn with_descendants(&self, roots: &[CategoryId]) -> Vec<CategoryId> {
        let mut out: Vec<CategoryId> = Vec::new();
        let mut seen: HashSet<CategoryId, Hashing> = HashSet::default();
        let mut stack: Vec<CategoryId> = roots.to_vec();
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                out.push(id);
                if let Some(kids) = self.children.get(&id) {
                    stack.extend(kids);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(title: &str, parent: Option<CategoryId>, system: bool) -> Category {
        Category {
            id: CategoryId::new(),
            owner: if system { None } else { Some(UserId::new()) },
            title: title.into(),
            parent_id: parent,
            icon_id: None,
            color_hex: None,
            archived: false,
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn expands_to_every_level_below() {
        let food = cat("Alimentação", None, true);
        let restaurants = cat("Restaurantes", Some(food.id), true);
        let sushi = cat("Sushi", Some(restaurants.id), false);
        let other = cat("Lazer", None, true);
        let all = vec![
            food.clone(),
            restaurants.clone(),
            sushi.clone(),
            other.clone(),
        ];
        let mut got = with_descendants(&all, &[food.id]);
        got.sort();
        let mut want = vec![food.id, restaurants.id, sushi.id];
        want.sort();
        assert_eq!(got, want);
        assert_eq!(with_descendants(&all, &[other.id]), vec![other.id]);
    }

    #[test]
    fn refuses_cycles() {
        let a = cat("A", None, false);
        let b = cat("B", Some(a.id), false);
        let all = vec![a.clone(), b.clone()];
        let changes = CategoryChanges {
            parent_id: Patch::Set(b.id),
            ..Default::default()
        };
        assert!(apply_changes(Some(&a), &changes, &all).is_err());
        let self_parent = CategoryChanges {
            parent_id: Patch::Set(a.id),
            ..Default::default()
        };
        assert!(apply_changes(Some(&a), &self_parent, &all).is_err());
    }

    #[test]
    fn system_categories_can_only_be_archived() {
        let sys = cat("Mercado", None, true);
        let all = vec![sys.clone()];
        let rename = CategoryChanges {
            title: Some("Feira".into()),
            ..Default::default()
        };
        assert!(apply_changes(Some(&sys), &rename, &all).is_err());
        let archive = CategoryChanges {
            archived: Some(true),
            ..Default::default()
        };
        assert!(apply_changes(Some(&sys), &archive, &all).unwrap().archived);
    }

    #[test]
    fn creation_needs_a_title_and_a_visible_parent() {
        let err = apply_changes(
            None,
            &CategoryChanges {
                parent_id: Patch::Set(CategoryId::new()),
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        let DomainError::Validation(list) = err else {
            panic!("not a validation error")
        };
        let fields: Vec<_> = list.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["title", "parent_id"]);
    }
}
