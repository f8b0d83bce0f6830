//! The operator commands for users and keys, through the real binary on a
//! temporary SQLite database: `users list` shows who exists, `keys rotate`
//! gives a new key with the same owner, scopes and label and revokes the
//! old one at once.

use std::process::{Command, Output};

use cofre_domain::auth::{Scope, split_key};

fn cofre(database_url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args(args)
        .env("COFRE_DATABASE_URL", database_url)
        .env("COFRE_LOG", "warn")
        .output()
        .expect("run cofre")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test]
async fn users_are_listed_and_keys_rotated() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("admin.db").display());
    let ana = ok(&cofre(&url, &["users", "create", "--name", "Ana"]));
    let bia = ok(&cofre(&url, &["users", "create", "--name", "Bia"]));
    let token = ok(&cofre(
        &url,
        &[
            "keys", "create", "--user", &ana, "--scopes", "read", "--label", "celular",
        ],
    ));

    let listed = ok(&cofre(&url, &["users", "list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines[0], "USER_ID\tCREATED\tACTIVE_KEYS\tNAME");
    assert!(
        lines[1].starts_with(&ana) && lines[1].ends_with("\t1\tAna"),
        "{listed}"
    );
    assert!(
        lines[2].starts_with(&bia) && lines[2].ends_with("\t0\tBia"),
        "{listed}"
    );

    let (old_id, _) = split_key(&token).expect("a key");
    let rotated = cofre(&url, &["keys", "rotate", &old_id.0.simple().to_string()]);
    let new_token = ok(&rotated);
    let (new_id, _) = split_key(&new_token).expect("a new key");
    assert_ne!(new_id, old_id);

    let store = cofre_store::connect(&url).await.expect("store");
    let old = store.find_api_key(old_id).await.unwrap().expect("old key");
    assert!(old.key.revoked_at.is_some(), "the old key is revoked");
    let new = store.find_api_key(new_id).await.unwrap().expect("new key");
    assert!(new.key.revoked_at.is_none());
    assert_eq!(new.key.user_id.to_string(), ana);
    assert_eq!(new.key.scopes, vec![Scope::Read]);
    assert_eq!(new.key.label.as_deref(), Some("celular"));
    assert!(cofre_api::auth::verify(
        &new.key,
        split_key(&new_token).unwrap().1
    ));

    // A revoked (or unknown) key cannot be rotated again; nothing changes.
    let again = cofre(&url, &["keys", "rotate", &old_id.0.simple().to_string()]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no such key"));
    let listed = ok(&cofre(&url, &["users", "list"]));
    assert!(
        listed.lines().nth(1).unwrap().ends_with("\t1\tAna"),
        "{listed}"
    );
}
