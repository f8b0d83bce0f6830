//! Databases for tests of the real binary: a temporary SQLite file, or a
//! fresh database on the PostgreSQL server `COFRE_TEST_POSTGRES_URL` names.

use sqlx::Connection;

/// Where a server keeps its data, and how it is dropped afterwards.
pub enum Database {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Database {
    pub async fn sqlite() -> (Database, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("cofre.db").display());
        (Database::Sqlite(dir), url)
    }

    /// A fresh database on the server `COFRE_TEST_POSTGRES_URL` names;
    /// none (skipped, with a notice) without it, except under `CI=true`.
    pub async fn postgres() -> Option<(Database, String)> {
        let admin_url = super::server_url("COFRE_TEST_POSTGRES_URL", "PostgreSQL")?;
        let name = format!("cofre_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .expect("connect to COFRE_TEST_POSTGRES_URL");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .expect("create database");
        let (base, query) = match admin_url.split_once('?') {
            Some((base, query)) => (base, format!("?{query}")),
            None => (admin_url.as_str(), String::new()),
        };
        let base = base.rsplit_once('/').map_or(base, |(server, _)| server);
        let url = format!("{base}/{name}{query}");
        Some((Database::Postgres { admin_url, name }, url))
    }

    pub async fn drop_it(self) {
        if let Database::Postgres { admin_url, name } = self {
            let mut admin = sqlx::PgConnection::connect(&admin_url)
                .await
                .expect("admin");
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut admin)
            .await
            .expect("drop database");
        }
    }
}
