//! Text rules shared by every resource: titles, colours, currencies, and a
//! sort key that orders titles the same way on every database.

use crate::DomainError;

pub const TITLE_MAX: usize = 200;
pub const DESCRIPTION_MAX: usize = 500;
pub const NOTES_MAX: usize = 5_000;

/// A required, non-empty text of at most `max` characters as sent (the
/// limit the API document states), stored trimmed.
pub fn required_text(field: &str, value: &str, max: usize) -> Result<String, DomainError> {
    max_chars(field, value, max)?;
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(DomainError::field(field, "must not be empty"));
    }
    Ok(trimmed.to_owned())
}

/// Fails when `value` is longer than `max` characters (not bytes), or holds
/// a NUL character (which PostgreSQL cannot store in text).
pub fn max_chars(field: &str, value: &str, max: usize) -> Result<(), DomainError> {
    if value.contains('\0') {
        return Err(DomainError::field(field, "must not contain NUL characters"));
    }
    if value.chars().count() > max {
        return Err(DomainError::field(
            field,
            format!("must be at most {max} characters"),
        ));
    }
    Ok(())
}

/// `#RRGGBB`, normalised to upper case.
pub fn color_hex(field: &str, value: &str) -> Result<String, DomainError> {
    let bytes = value.as_bytes();
    if bytes.len() == 7 && bytes[0] == b'#' && bytes[1..].iter().all(u8::is_ascii_hexdigit) {
        Ok(value.to_ascii_uppercase())
    } else {
        Err(DomainError::field(
            field,
            "must be a colour in #RRGGBB form",
        ))
    }
}

/// A 3-letter currency code, normalised to upper case.
pub fn currency(field: &str, value: &str) -> Result<String, DomainError> {
    if value.len() == 3 && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(value.to_ascii_uppercase())
    } else {
        Err(DomainError::field(
            field,
            "must be a 3-letter currency code",
        ))
    }
}

/// `bytes` in lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Case- and accent-insensitive key, so "Água" sorts beside "agua" and
/// "Educação" before "Lazer" regardless of database collation.
pub fn sort_key(title: &str) -> String {
    title
        .chars()
        .flat_map(char::to_lowercase)
        .map(fold_accent)
        .collect()
}

/// Sorts `items` by title as people sort it ([`sort_key`]), then by the
/// id `key` gives beside it. Each title's key is built once, not once per
/// comparison.
pub fn sort_by_title<T, Id: Ord>(items: &mut [T], key: impl Fn(&T) -> (&str, Id)) {
    items.sort_by_cached_key(|item| {
        let (title, id) = key(item);
        (sort_key(title), id)
    });
}

/// Unicode lower case: the form used for case-insensitive uniqueness and
/// search on both databases.
pub fn lower(text: &str) -> String {
    text.to_lowercase()
}

fn fold_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'é' | 'è' | 'ê' | 'ë' => 'e',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'ç' => 'c',
        'ñ' => 'n',
        other => other,
    }
}

/// `n` in decimal appended to `out`, zero-padded to at least `width`
/// digits (at most twenty), made in place and written at once, without
/// the formatting machinery: pages write several numbers a row.
pub fn push_padded(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut start = buf.len();
    let least = buf.len() - width.clamp(1, buf.len());
    while n > 0 || start > least {
        start -= 1;
        // `n % 10` is a digit: it fits a byte.
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    push_ascii(out, &buf[start..]);
}

/// `bytes` made here of ASCII digits and signs, appended to `out` a
/// character each: a page writes several numbers and days a row, and a
/// UTF-8 check of a few bytes (`from_utf8`) cost more than making them.
pub(crate) fn push_ascii(out: &mut String, bytes: &[u8]) {
    debug_assert!(bytes.is_ascii(), "digits are ASCII");
    out.extend(bytes.iter().map(|&b| char::from(b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_format_pads_them() {
        for n in [0, 1, 9, 10, 99, 100, 2026, 65_535, 123_456_789, u64::MAX] {
            for width in [0, 1, 2, 4, 5, 19, 20] {
                let mut out = String::from("x");
                push_padded(&mut out, n, width);
                assert_eq!(out, format!("x{n:0width$}"), "{n} at width {width}");
            }
        }
    }

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn titles_are_trimmed_and_bounded() {
        assert_eq!(required_text("title", "  Casa ", 200).unwrap(), "Casa");
        assert!(required_text("title", "   ", 200).is_err());
        assert!(required_text("title", &"é".repeat(200), 200).is_ok());
        assert!(required_text("title", &"é".repeat(201), 200).is_err());
        assert!(required_text("title", "a\0b", 200).is_err());
        assert!(max_chars("notes", "a\0", 10).is_err());
        // The limit counts the text as sent, as the API document says.
        let padded = format!("\u{a0}{}", "a".repeat(200));
        assert!(required_text("title", &padded, 200).is_err());
    }

    #[test]
    fn colours_and_currencies() {
        assert_eq!(color_hex("c", "#a1b2c3").unwrap(), "#A1B2C3");
        assert!(color_hex("c", "a1b2c3").is_err());
        assert!(color_hex("c", "#a1b2cz").is_err());
        assert_eq!(currency("c", "usd").unwrap(), "USD");
        assert!(currency("c", "US").is_err());
        assert!(currency("c", "US1").is_err());
    }

    #[test]
    fn sort_key_ignores_case_and_accents() {
        assert_eq!(sort_key("Água"), "agua");
        assert!(sort_key("Educação") < sort_key("Lazer"));
        assert!(sort_key("alimentação") < sort_key("Assinaturas"));
    }
}
