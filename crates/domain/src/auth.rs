//! API keys and scopes. A key is `cofre_<key id>_<secret>`; only the
//! SHA-256 of the secret is ever stored.

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::{ApiKeyId, DomainError, UserId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Read,
    Write,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }
}

/// Parses `read`, `write` or `read,write` (any order, no duplicates kept).
pub fn parse_scopes(text: &str) -> Result<Vec<Scope>, DomainError> {
    let mut scopes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let scope = match part {
            "read" => Scope::Read,
            "write" => Scope::Write,
            other => {
                return Err(DomainError::field(
                    "scopes",
                    format!("unknown scope {other:?} (use read and/or write)"),
                ));
            }
        };
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Err(DomainError::field(
            "scopes",
            "at least one scope is required",
        ));
    }
    scopes.sort();
    Ok(scopes)
}

pub fn format_scopes(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub user_id: UserId,
    /// Hex SHA-256 of the secret part.
    pub secret_hash: String,
    pub scopes: Vec<Scope>,
    pub label: Option<String>,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

pub const KEY_PREFIX: &str = "cofre_";

pub fn hash_secret(secret: &str) -> String {
    crate::text::hex(&Sha256::digest(secret.as_bytes()))
}

/// Formats the full bearer token.
pub fn format_key(id: ApiKeyId, secret: &str) -> String {
    format!("{KEY_PREFIX}{}_{secret}", id.0.simple())
}

/// Splits a bearer token into its key id and secret.
pub fn split_key(token: &str) -> Option<(ApiKeyId, &str)> {
    let rest = token.strip_prefix(KEY_PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    if secret.is_empty() {
        return None;
    }
    Some((ApiKeyId::parse(id)?, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        let id = ApiKeyId::new();
        let key = format_key(id, "s3cr3t");
        assert_eq!(split_key(&key), Some((id, "s3cr3t")));
        assert_eq!(split_key("cofre_nope_x"), None);
        assert_eq!(split_key(&format!("cofre_{}_", id.0.simple())), None);
        assert_eq!(split_key("Bearer abc"), None);
    }

    #[test]
    fn scopes_parse() {
        assert_eq!(
            parse_scopes("write, read").unwrap(),
            vec![Scope::Read, Scope::Write]
        );
        assert_eq!(parse_scopes("read").unwrap(), vec![Scope::Read]);
        assert!(parse_scopes("admin").is_err());
        assert!(parse_scopes("").is_err());
    }

    #[test]
    fn hash_is_hex_sha256() {
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
