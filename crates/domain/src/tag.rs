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
}
