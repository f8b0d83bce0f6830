//! Tags: free labels with a colour, unique per user ignoring case.

use jiff::Timestamp;

use crate::text::{TITLE_MAX, color_hex, lower, required_text};
use crate::{DomainError, FieldErrors, TagId, UserId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub id: TagId,
    pub user_id: UserId,
    pub title: String,
    pub color_hex: String,
    pub created_at: Timestamp,
}

/// A validated new tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTag {
    pub title: String,
    /// The key that makes titles unique per user, case-insensitively.
    pub title_key: String,
    pub color_hex: String,
}

pub fn new_tag(title: &str, color: &str) -> Result<NewTag, DomainError> {
    let mut errors = FieldErrors::new();
    let title = errors.check(required_text("title", title, TITLE_MAX));
    let color = errors.check(color_hex("color_hex", color));
    errors.finish()?;
    let title = title.unwrap_or_default();
    Ok(NewTag {
        title_key: lower(&title),
        title,
        color_hex: color.unwrap_or_default(),
    })
}

/// A validated change of a tag: only the fields sent change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagChanges {
    pub title: Option<NewTitle>,
    pub color_hex: Option<String>,
}

/// A title with the key that makes it unique per user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTitle {
    pub title: String,
    pub title_key: String,
}

pub fn tag_changes(title: Option<&str>, color: Option<&str>) -> Result<TagChanges, DomainError> {
    let mut errors = FieldErrors::new();
    if title.is_none() && color.is_none() {
        errors.add("body", "send title, color_hex or both");
    }
    let title = title.and_then(|t| errors.check(required_text("title", t, TITLE_MAX)));
    let color_hex = color.and_then(|c| errors.check(color_hex("color_hex", c)));
    errors.finish()?;
    Ok(TagChanges {
        title: title.map(|title| NewTitle {
            title_key: lower(&title),
            title,
        }),
        color_hex,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_ignore_case() {
        let a = new_tag(" Viagem ", "#00ff00").unwrap();
        let b = new_tag("VIAGEM", "#00FF00").unwrap();
        assert_eq!(a.title, "Viagem");
        assert_eq!(a.title_key, b.title_key);
        assert_eq!(a.color_hex, "#00FF00");
        assert!(new_tag("", "nope").is_err());
    }

    #[test]
    fn changes_name_what_they_change() {
        let c = tag_changes(Some(" Férias "), None).unwrap();
        assert_eq!(c.title.unwrap().title, "Férias");
        assert_eq!(c.color_hex, None);
        assert_eq!(
            tag_changes(None, Some("#abcdef"))
                .unwrap()
                .color_hex
                .as_deref(),
            Some("#ABCDEF")
        );
        assert!(tag_changes(None, None).is_err());
        assert!(tag_changes(Some(" "), Some("red")).is_err());
    }
}
