//! Migration 0028, the whole schema in one file per backend, against the
//! 27 migrations it replaced (kept in `tests/migrations_chain` as test data
//! only). A database made by the old chain and then opened by the store is
//! recorded as at the baseline, keeps every row, and has exactly the schema
//! of a database made by the baseline; the same writes give the same rows
//! on both, before the adoption (as SQL) and after it (through the store);
//! migrations after the baseline apply to either; a database partway
//! through the old chain, or whose migrations are not the shipped ones, is
//! refused.
//!
//! How the schemas are compared, object by object, so a failure names it:
//! - SQLite: every object in `sqlite_master` by its SQL text, normalised
//!   (comments and layout dropped, quotes around names dropped, and the
//!   `IF NOT EXISTS` a table renamed into place takes), because ALTER TABLE
//!   edits the stored text in place and the chain's text cannot be the text
//!   of a file written for readers; and every table's columns, foreign keys
//!   and indexes through `PRAGMA table_xinfo`, `foreign_key_list`,
//!   `index_list` and `index_xinfo`.
//! - PostgreSQL: the catalog as the server prints it: columns (type,
//!   collation, nullability, default), constraints (`pg_get_constraintdef`),
//!   indexes (`pg_indexes`), triggers (`pg_get_triggerdef`), functions
//!   (`pg_get_functiondef`: bodies byte for byte), views, sequences, types
//!   and extensions.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::migrate::Migrator;
use sqlx::{AssertSqlSafe, Connection};

use cofre_domain::transaction::{
    NewTransactionInput, TransactionChanges, TxStatus, TxType, new_transaction,
};
use cofre_domain::{AccountId, CategoryId, Money, TagId, TransactionId, UserId};
use cofre_store::{Migrations, Store};

#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    fn dir(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    /// The migrations the baseline replaced.
    async fn old_chain(self) -> Migrator {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/migrations_chain")
            .join(self.dir());
        Migrator::new(dir).await.expect("the old chain")
    }

    /// The migrations this build carries (the baseline, and any after it).
    fn migrations_dir(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(self.dir())
    }
}

/// The PostgreSQL server to test on; none (skipped, with a notice) without
/// one, except under `CI=true`.
fn postgres_url() -> Option<String> {
    match std::env::var("COFRE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but COFRE_TEST_POSTGRES_URL is not set: these tests must run")
        }
        _ => {
            eprintln!("SKIPPED (PostgreSQL): set COFRE_TEST_POSTGRES_URL to run schema_baseline");
            None
        }
    }
}

/// A fresh, empty database, and a pool of plain connections to it.
struct Database {
    url: String,
    pool: Pool,
    kept: Kept,
}

enum Kept {
    File(#[allow(dead_code)] tempfile::TempDir),
    Server { admin_url: String, name: String },
}

#[derive(Clone)]
enum Pool {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Database {
    async fn fresh(backend: Backend) -> Database {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("cofre.db").display());
                let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
                    .expect("url")
                    .create_if_missing(true);
                let pool = sqlx::SqlitePool::connect_with(options)
                    .await
                    .expect("sqlite");
                Database {
                    url,
                    pool: Pool::Sqlite(pool),
                    kept: Kept::File(dir),
                }
            }
            Backend::Postgres => {
                let admin_url = postgres_url().expect("checked by the caller");
                let name = format!("cofre_test_{}", uuid::Uuid::new_v4().simple());
                let mut admin = sqlx::PgConnection::connect(&admin_url)
                    .await
                    .expect("connect to COFRE_TEST_POSTGRES_URL");
                sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin)
                    .await
                    .expect("create database");
                let (base, query) = match admin_url.split_once('?') {
                    Some((base, query)) => (base, format!("?{query}")),
                    None => (admin_url.as_str(), String::new()),
                };
                let server = base.rsplit_once('/').map_or(base, |(server, _)| server);
                let url = format!("{server}/{name}{query}");
                let pool = sqlx::PgPool::connect(&url).await.expect("postgres");
                Database {
                    url,
                    pool: Pool::Postgres(pool),
                    kept: Kept::Server { admin_url, name },
                }
            }
        }
    }

    async fn drop_it(self) {
        match &self.pool {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
        if let Kept::Server { admin_url, name } = &self.kept {
            let mut admin = sqlx::PgConnection::connect(admin_url).await.expect("admin");
            sqlx::query(AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut admin)
            .await
            .expect("drop database");
        }
    }

    async fn migrate(&self, migrator: &Migrator, to: Option<i64>) {
        let done = match (&self.pool, to) {
            (Pool::Sqlite(pool), None) => migrator.run(pool).await,
            (Pool::Sqlite(pool), Some(to)) => migrator.run_to(to, pool).await,
            (Pool::Postgres(pool), None) => migrator.run(pool).await,
            (Pool::Postgres(pool), Some(to)) => migrator.run_to(to, pool).await,
        };
        done.expect("migrate");
    }

    /// Runs statements separated by `;`, one after the other.
    async fn execute(&self, sql: &str) {
        let sql = sqlx::raw_sql(AssertSqlSafe(sql.to_owned()));
        match &self.pool {
            Pool::Sqlite(pool) => sql.execute(pool).await.map(drop),
            Pool::Postgres(pool) => sql.execute(pool).await.map(drop),
        }
        .expect("execute");
    }

    async fn texts(&self, sql: &str) -> Vec<String> {
        let text = || AssertSqlSafe(sql.to_owned());
        match &self.pool {
            Pool::Sqlite(pool) => sqlx::query_scalar(text()).fetch_all(pool).await,
            Pool::Postgres(pool) => sqlx::query_scalar(text()).fetch_all(pool).await,
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    async fn count(&self, sql: &str) -> i64 {
        let text = || AssertSqlSafe(sql.to_owned());
        match &self.pool {
            Pool::Sqlite(pool) => sqlx::query_scalar(text()).fetch_one(pool).await,
            Pool::Postgres(pool) => sqlx::query_scalar(text()).fetch_one(pool).await,
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// sqlx's rows: version, checksum and whether it succeeded.
    async fn migrations(&self) -> Vec<(i64, Vec<u8>, bool)> {
        let sql = "SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version";
        match &self.pool {
            Pool::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await,
            Pool::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await,
        }
        .expect("migrations")
    }

    async fn versions(&self) -> Vec<i64> {
        self.migrations().await.into_iter().map(|m| m.0).collect()
    }

    async fn set_checksum(&self, version: i64, checksum: &[u8]) {
        let sql = "UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2";
        match &self.pool {
            Pool::Sqlite(pool) => sqlx::query(sql)
                .bind(checksum)
                .bind(version)
                .execute(pool)
                .await
                .map(drop),
            Pool::Postgres(pool) => sqlx::query(sql)
                .bind(checksum)
                .bind(version)
                .execute(pool)
                .await
                .map(drop),
        }
        .expect("checksum");
    }

    /// Every row of every table but sqlx's, as text, sorted, by table.
    async fn rows(&self) -> BTreeMap<String, Vec<String>> {
        let tables = match self.pool {
            Pool::Sqlite(_) => {
                self.texts(
                    "SELECT name FROM sqlite_master WHERE type = 'table' \
                     AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
                )
                .await
            }
            Pool::Postgres(_) => {
                self.texts(
                    "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' \
                     AND tablename <> '_sqlx_migrations'",
                )
                .await
            }
        };
        let mut all = BTreeMap::new();
        for table in tables {
            let select = match self.pool {
                Pool::Sqlite(_) => {
                    let columns = self
                        .texts(&format!(
                            "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
                        ))
                        .await;
                    format!("SELECT json_array({}) FROM \"{table}\"", columns.join(", "))
                }
                Pool::Postgres(_) => format!("SELECT t::text FROM \"{table}\" t"),
            };
            let mut rows = self.texts(&select).await;
            rows.sort();
            all.insert(table, rows);
        }
        all
    }

    /// Each object of the schema, by kind and name, as the catalog says it.
    async fn schema(&self) -> BTreeMap<String, String> {
        match self.pool {
            Pool::Sqlite(_) => self.sqlite_schema().await,
            Pool::Postgres(_) => self.postgres_schema().await,
        }
    }

    async fn sqlite_schema(&self) -> BTreeMap<String, String> {
        let Pool::Sqlite(pool) = &self.pool else {
            unreachable!()
        };
        let objects: Vec<(String, String, String, Option<String>)> =
            sqlx::query_as("SELECT type, name, tbl_name, sql FROM sqlite_master")
                .fetch_all(pool)
                .await
                .expect("sqlite_master");
        let mut schema = BTreeMap::new();
        for (kind, name, table, sql) in objects {
            let sql = sql.map_or("(made by SQLite for a constraint)".to_owned(), |sql| {
                normalised(&sql)
            });
            schema.insert(format!("{kind} {name}"), format!("on {table}: {sql}"));
            if kind != "table" {
                continue;
            }
            let pragmas = [
                (
                    "columns",
                    format!(
                        "SELECT cid || ' ' || name || ' ' || type || ' notnull=' || \"notnull\" \
                         || ' default=' || COALESCE(dflt_value, 'none') || ' pk=' || pk \
                         || ' hidden=' || hidden FROM pragma_table_xinfo('{name}') ORDER BY cid"
                    ),
                ),
                (
                    "foreign keys",
                    format!(
                        "SELECT id || '.' || seq || ' ' || \"from\" || ' -> ' || \"table\" || '(' \
                         || COALESCE(\"to\", 'its key') || ') on update ' || on_update \
                         || ' on delete ' || on_delete || ' match ' || \"match\" \
                         FROM pragma_foreign_key_list('{name}') ORDER BY id, seq"
                    ),
                ),
                (
                    "indexes",
                    format!(
                        "SELECT name || ' unique=' || \"unique\" || ' origin=' || origin \
                         || ' partial=' || partial FROM pragma_index_list('{name}') ORDER BY name"
                    ),
                ),
            ];
            for (what, sql) in pragmas {
                let lines = self.texts(&sql).await;
                schema.insert(format!("table {name}: {what}"), lines.join("\n"));
            }
            let indexes = self
                .texts(&format!(
                    "SELECT name FROM pragma_index_list('{name}') ORDER BY name"
                ))
                .await;
            for index in indexes {
                let lines = self
                    .texts(&format!(
                        "SELECT seqno || ' ' || cid || ' ' || COALESCE(name, 'expression') \
                         || ' desc=' || \"desc\" || ' coll=' || coll || ' key=' || \"key\" \
                         FROM pragma_index_xinfo('{index}') ORDER BY seqno"
                    ))
                    .await;
                schema.insert(format!("index {index}: columns"), lines.join("\n"));
            }
        }
        schema
    }

    async fn postgres_schema(&self) -> BTreeMap<String, String> {
        let Pool::Postgres(pool) = &self.pool else {
            unreachable!()
        };
        let objects: Vec<(String, String)> = sqlx::query_as(POSTGRES_CATALOG)
            .fetch_all(pool)
            .await
            .expect("catalog");
        let mut schema = BTreeMap::new();
        for (key, value) in objects {
            assert!(
                schema.insert(key.clone(), value).is_none(),
                "{key} twice in the catalog"
            );
        }
        schema
    }
}

/// Every object of the public schema, keyed by kind and name.
const POSTGRES_CATALOG: &str = r#"
SELECT 'table ' || c.relname,
    'kind ' || c.relkind::text || ', persistence ' || c.relpersistence::text
    || ', options ' || COALESCE(array_to_string(c.reloptions, ','), 'none') || E'\n'
    || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
        || CASE WHEN a.attcollation <> t.typcollation
                THEN ' COLLATE ' || quote_ident(co.collname) ELSE '' END
        || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
        || COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
        || CASE WHEN a.attidentity <> '' THEN ' IDENTITY ' || a.attidentity::text ELSE '' END
        || CASE WHEN a.attgenerated <> '' THEN ' GENERATED ' || a.attgenerated::text ELSE '' END,
        E'\n' ORDER BY a.attnum)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_collation co ON co.oid = a.attcollation
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
GROUP BY c.oid, c.relname, c.relkind, c.relpersistence, c.reloptions
UNION ALL
SELECT 'constraint ' || con.conname || ' on ' || cl.relname,
    con.contype::text || ' ' || pg_get_constraintdef(con.oid, true)
    || CASE WHEN con.condeferrable THEN ' DEFERRABLE' ELSE '' END
FROM pg_constraint con
JOIN pg_class cl ON cl.oid = con.conrelid
JOIN pg_namespace n ON n.oid = cl.relnamespace
WHERE n.nspname = 'public'
UNION ALL
SELECT 'index ' || indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
UNION ALL
SELECT 'trigger ' || tg.tgname || ' on ' || cl.relname,
    pg_get_triggerdef(tg.oid, true) || ' (enabled ' || tg.tgenabled::text || ')'
FROM pg_trigger tg
JOIN pg_class cl ON cl.oid = tg.tgrelid
JOIN pg_namespace n ON n.oid = cl.relnamespace
WHERE n.nspname = 'public' AND NOT tg.tgisinternal
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text, pg_get_functiondef(p.oid)
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public'
UNION ALL
SELECT 'view ' || viewname, definition FROM pg_views WHERE schemaname = 'public'
UNION ALL
SELECT 'sequence ' || sequencename, data_type::text FROM pg_sequences WHERE schemaname = 'public'
UNION ALL
SELECT 'type ' || t.typname, 'typtype ' || t.typtype::text
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE n.nspname = 'public' AND t.typelem = 0
    AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')
UNION ALL
SELECT 'extension ' || extname, extversion FROM pg_extension
"#;

/// SQL text as SQLite keeps it, without what does not change what it means
/// here: comments, the layout of white space (none is kept next to
/// brackets, commas and semicolons, one space elsewhere), the double quotes
/// around names, and `IF NOT EXISTS` (a table renamed into place is stored
/// as `CREATE TABLE IF NOT EXISTS "name"`). String literals are kept as
/// they are; case is kept.
fn normalised(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut space = false;
    let mut chars = sql.chars().peekable();
    let tight = |c: char| matches!(c, '(' | ')' | ',' | ';');
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                if space && !out.ends_with(tight) {
                    out.push(' ');
                }
                space = false;
                out.push(c);
                while let Some(c) = chars.next() {
                    out.push(c);
                    if c == '\'' {
                        if chars.peek() == Some(&'\'') {
                            out.push(chars.next().unwrap());
                        } else {
                            break;
                        }
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                space = true;
            }
            '"' => {}
            c if c.is_whitespace() => space = true,
            c if tight(c) => {
                out.push(c);
                space = false;
            }
            c => {
                if space && !out.is_empty() && !out.ends_with(tight) {
                    out.push(' ');
                }
                space = false;
                out.push(c);
            }
        }
    }
    out.replacen("CREATE TABLE IF NOT EXISTS ", "CREATE TABLE ", 1)
}

/// What differs between two descriptions of a schema, object by object.
fn schema_differences(
    (left_name, left): (&str, &BTreeMap<String, String>),
    (right_name, right): (&str, &BTreeMap<String, String>),
) -> String {
    let keys: BTreeSet<&String> = left.keys().chain(right.keys()).collect();
    let mut report = String::new();
    for key in keys {
        match (left.get(key), right.get(key)) {
            (Some(l), Some(r)) if l == r => {}
            (Some(_), None) => report.push_str(&format!("- {key}: only in {left_name}\n")),
            (None, Some(_)) => report.push_str(&format!("- {key}: only in {right_name}\n")),
            (l, r) => {
                let (l, r) = (l.map_or("", String::as_str), r.map_or("", String::as_str));
                let (ls, rs): (Vec<&str>, Vec<&str>) = (l.lines().collect(), r.lines().collect());
                let first = ls.iter().zip(&rs).take_while(|(a, b)| a == b).count();
                // Where the first differing line differs, so a long line
                // (a table's whole text) is shown around that place only.
                let (lf, rf) = (ls.get(first).unwrap_or(&""), rs.get(first).unwrap_or(&""));
                let column = lf
                    .chars()
                    .zip(rf.chars())
                    .take_while(|(a, b)| a == b)
                    .count();
                let around = |lines: &[&str]| {
                    let from = first.saturating_sub(1).min(lines.len());
                    let shown: Vec<String> = (from..(first + 2).min(lines.len()))
                        .map(|n| {
                            let chars: Vec<char> = lines[n].chars().collect();
                            if n != first || chars.len() <= 120 {
                                return lines[n].to_owned();
                            }
                            let start = column.saturating_sub(60);
                            let end = (column + 60).min(chars.len());
                            let cut = |yes: bool| if yes { "…" } else { "" };
                            let middle: String = chars[start..end].iter().collect();
                            format!("{}{middle}{}", cut(start > 0), cut(end < chars.len()))
                        })
                        .collect();
                    shown.join("\n      ")
                };
                report.push_str(&format!(
                    "- {key} differs at line {}:\n    {left_name}:\n      {}\n    \
                     {right_name}:\n      {}\n",
                    first + 1,
                    around(&ls),
                    around(&rs)
                ));
            }
        }
    }
    report
}

/// The rows one side has and the other has not, by table.
fn row_differences(
    (left_name, left): (&str, &BTreeMap<String, Vec<String>>),
    (right_name, right): (&str, &BTreeMap<String, Vec<String>>),
) -> String {
    let none = Vec::new();
    let tables: BTreeSet<&String> = left.keys().chain(right.keys()).collect();
    let mut report = String::new();
    for table in tables {
        let (l, r) = (
            left.get(table).unwrap_or(&none),
            right.get(table).unwrap_or(&none),
        );
        for (name, these, those) in [(left_name, l, r), (right_name, r, l)] {
            for row in these.iter().filter(|row| !those.contains(row)) {
                report.push_str(&format!("- {table}, only in {name}: {row}\n"));
            }
        }
    }
    report
}

fn assert_same_schema(
    what: &str,
    left: (&str, &BTreeMap<String, String>),
    right: (&str, &BTreeMap<String, String>),
) {
    let report = schema_differences(left, right);
    assert!(report.is_empty(), "{what} differ:\n{report}");
}

fn assert_same_rows(
    what: &str,
    left: (&str, &BTreeMap<String, Vec<String>>),
    right: (&str, &BTreeMap<String, Vec<String>>),
) {
    let report = row_differences(left, right);
    assert!(report.is_empty(), "{what} differ:\n{report}");
}

/// What the old chain's users did: writes of every kind, as plain SQL
/// that both backends and both schemas take, so the running totals, sums
/// and stamps that triggers keep have rows made by inserts, updates and
/// deletes (of rows, tags, accounts) alike. Each group of writes bumps
/// its user's view_version first, as the store does.
const WRITES: &str = r#"
INSERT INTO users (id, name, created_at) VALUES
    ('0a000000-0000-4000-8000-000000000001', 'Ana', '2026-01-01T10:00:00.000Z'),
    ('0a000000-0000-4000-8000-000000000002', 'Bia', '2026-01-01T11:00:00.000Z');
INSERT INTO api_keys (id, user_id, secret_hash, scopes, label, created_at) VALUES
    ('0b000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001',
     'not-a-real-hash', 'read,write', 'laptop', '2026-01-01T10:00:00.000Z');
UPDATE users SET view_version = view_version + 1 WHERE id = '0a000000-0000-4000-8000-000000000001';
INSERT INTO accounts (id, user_id, type, sub_type, title, currency, credit_close_day,
    credit_due_day, pay_bill_from_account_id, created_at) VALUES
    ('0c000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001', 'BANK',
     'CHECKING_ACCOUNT', 'Conta', 'BRL', NULL, NULL, NULL, '2026-01-01T10:01:00.000Z'),
    ('0c000000-0000-4000-8000-000000000002', '0a000000-0000-4000-8000-000000000001', 'CREDIT',
     'CREDIT_CARD', 'Cartão', 'BRL', 5, 12, '0c000000-0000-4000-8000-000000000001',
     '2026-01-01T10:02:00.000Z'),
    ('0c000000-0000-4000-8000-000000000003', '0a000000-0000-4000-8000-000000000001', 'BANK',
     'SAVINGS_ACCOUNT', 'Poupança', 'USD', NULL, NULL, NULL, '2026-01-01T10:03:00.000Z'),
    ('0c000000-0000-4000-8000-000000000004', '0a000000-0000-4000-8000-000000000001', 'BANK',
     'CHECKING_ACCOUNT', 'Antiga', 'BRL', NULL, NULL, NULL, '2026-01-01T10:04:00.000Z'),
    ('0c000000-0000-4000-8000-000000000005', '0a000000-0000-4000-8000-000000000001', 'BANK',
     'CHECKING_ACCOUNT', 'Vira cartão', 'BRL', NULL, NULL, NULL, '2026-01-01T10:05:00.000Z'),
    ('0c000000-0000-4000-8000-000000000006', '0a000000-0000-4000-8000-000000000002', 'BANK',
     'CHECKING_ACCOUNT', 'Conta', 'BRL', NULL, NULL, NULL, '2026-01-01T11:01:00.000Z');
INSERT INTO categories (id, user_id, title, parent_id, icon_id, color_hex, created_at) VALUES
    ('0d000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001', 'Feira',
     '30b679d8-1fd0-5798-9807-ef2de0278a88', 'ic-food', '#112233', '2026-01-01T10:06:00.000Z');
INSERT INTO category_archives (user_id, category_id) VALUES
    ('0a000000-0000-4000-8000-000000000001', '996a8ac4-8cf9-58c9-be9e-47b6e80a1fa0'),
    ('0a000000-0000-4000-8000-000000000001', '5f1f2138-cd9c-5aec-86a6-a04b97b2b892');
INSERT INTO tags (id, user_id, title, title_key, color_hex, created_at) VALUES
    ('0e000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001', 'Viagem',
     'viagem', '#FF0000', '2026-01-01T10:07:00.000Z'),
    ('0e000000-0000-4000-8000-000000000002', '0a000000-0000-4000-8000-000000000001', 'Casa',
     'casa', '#00FF00', '2026-01-01T10:07:00.000Z'),
    ('0e000000-0000-4000-8000-000000000003', '0a000000-0000-4000-8000-000000000001', 'Velha',
     'velha', '#0000FF', '2026-01-01T10:07:00.000Z');
INSERT INTO recurrence_rules (id, user_id, account_id, type, amount_cents, description,
    description_key, category_id, tag_ids, frequency, interval_count, start_date, created_at,
    updated_at) VALUES
    ('0f000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', 'CREDIT', 500000, 'Salário', 'salário',
     '4c489a35-36d5-521f-8564-d50e83fef1b1', '', 'MONTHLY', 1, '2026-01-05',
     '2026-01-01T10:08:00.000Z', '2026-01-01T10:08:00.000Z');
INSERT INTO installment_plans (id, user_id, account_id, type, total_cents, description,
    category_id, tag_ids, installment_count, first_date, last_date, created_at, updated_at) VALUES
    ('10000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', 'DEBIT', 30000, 'Geladeira',
     '0d000000-0000-4000-8000-000000000001', '', 3, '2026-01-10', '2026-03-10',
     '2026-01-01T10:09:00.000Z', '2026-01-01T10:09:00.000Z');
INSERT INTO tombstones (user_id, handle, source_id, entry_date, created_at) VALUES
    ('0a000000-0000-4000-8000-000000000001', 'r:0f000000-0000-4000-8000-000000000001:2026-03-05',
     '0f000000-0000-4000-8000-000000000001', '2026-03-05', '2026-01-01T10:10:00.000Z');
INSERT INTO budgets (id, user_id, category_id, include_subcategories, rollover, starts_on,
    ends_on, created_at) VALUES
    ('11000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001',
     'ed3eb088-9c3c-517a-b01a-f1d78fb4b16d', TRUE, FALSE, '2026-01', NULL,
     '2026-01-01T10:11:00.000Z');
INSERT INTO budget_limits (budget_id, from_month, amount_cents) VALUES
    ('11000000-0000-4000-8000-000000000001', '2026-01', 80000),
    ('11000000-0000-4000-8000-000000000001', '2026-03', 90000);

UPDATE users SET view_version = view_version + 1 WHERE id = '0a000000-0000-4000-8000-000000000001';
INSERT INTO transactions (id, user_id, account_id, date, type, status, amount_cents, currency,
    description, category_id, recurrence_id, recurrence_period_date, installment_purchase_id,
    installment_number, transfer_group_id, bill_to_account_id, bill_month, hide_from_results,
    created_by_user, source, search_text, fingerprint, created_at, updated_at) VALUES
    ('12000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-01-05', 'CREDIT', 'POSTED', 500000, 'BRL',
     'Salário', '4c489a35-36d5-521f-8564-d50e83fef1b1', '0f000000-0000-4000-8000-000000000001',
     '2026-01-05', NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'salário', NULL,
     '2026-01-05T12:00:00.000Z', '2026-01-05T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000002', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-01-07', 'DEBIT', 'POSTED', 12345, 'BRL',
     'Mercado', 'ed3eb088-9c3c-517a-b01a-f1d78fb4b16d', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     FALSE, TRUE, 'API', 'mercado', NULL, '2026-01-07T12:00:00.000Z', '2026-01-07T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000003', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-01-20', 'DEBIT', 'PENDING', 4500, 'BRL',
     'Restaurante', '59d30ba9-d83c-5466-9d40-eea54f663061', NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, FALSE, TRUE, 'API', 'restaurante', NULL, '2026-01-07T12:00:00.000Z',
     '2026-01-07T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000004', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', '2026-01-10', 'DEBIT', 'POSTED', 10000, 'BRL',
     'Geladeira 1/3', '0d000000-0000-4000-8000-000000000001', NULL, NULL,
     '10000000-0000-4000-8000-000000000001', 1, NULL, NULL, NULL, FALSE, TRUE, 'API',
     'geladeira', NULL, '2026-01-10T12:00:00.000Z', '2026-01-10T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000005', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', '2026-02-10', 'DEBIT', 'POSTED', 10000, 'BRL',
     'Geladeira 2/3', '0d000000-0000-4000-8000-000000000001', NULL, NULL,
     '10000000-0000-4000-8000-000000000001', 2, NULL, NULL, NULL, FALSE, TRUE, 'API',
     'geladeira', NULL, '2026-01-10T12:00:00.000Z', '2026-01-10T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000006', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', '2026-03-10', 'DEBIT', 'PENDING', 10000, 'BRL',
     'Geladeira 3/3', '0d000000-0000-4000-8000-000000000001', NULL, NULL,
     '10000000-0000-4000-8000-000000000001', 3, NULL, NULL, NULL, FALSE, TRUE, 'API',
     'geladeira', NULL, '2026-01-10T12:00:00.000Z', '2026-01-10T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000007', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', '2026-01-15', 'DEBIT', 'POSTED', 7990, 'BRL',
     'Livro', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'livro', NULL,
     '2026-01-15T12:00:00.000Z', '2026-01-15T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000008', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-02-12', 'DEBIT', 'POSTED', 17990, 'BRL',
     'Fatura', '8af325d4-0dc3-5e04-8d45-879337802f65', NULL, NULL, NULL, NULL,
     '13000000-0000-4000-8000-000000000001', '0c000000-0000-4000-8000-000000000002', '2026-02',
     FALSE, TRUE, 'API', 'fatura', NULL, '2026-02-12T12:00:00.000Z', '2026-02-12T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000009', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000002', '2026-02-12', 'CREDIT', 'POSTED', 17990, 'BRL',
     'Fatura', '8af325d4-0dc3-5e04-8d45-879337802f65', NULL, NULL, NULL, NULL,
     '13000000-0000-4000-8000-000000000001', NULL, '2026-02', TRUE, TRUE, 'API', 'fatura', NULL,
     '2026-02-12T12:00:00.000Z', '2026-02-12T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000010', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-01-25', 'DEBIT', 'POSTED', 100, 'BRL',
     'Tarifa', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, TRUE, TRUE, 'API', 'tarifa', NULL,
     '2026-01-25T12:00:00.000Z', '2026-01-25T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000011', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000003', '2026-01-03', 'CREDIT', 'POSTED', 100000, 'USD',
     'Depósito', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'depósito',
     NULL, '2026-01-03T12:00:00.000Z', '2026-01-03T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000012', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000004', '2026-01-04', 'DEBIT', 'POSTED', 2000, 'BRL',
     'Antiga', 'ed3eb088-9c3c-517a-b01a-f1d78fb4b16d', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     FALSE, TRUE, 'API', 'antiga', NULL, '2026-01-04T12:00:00.000Z', '2026-01-04T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000013', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000005', '2026-01-09', 'DEBIT', 'POSTED', 3000, 'BRL',
     'Vira cartão', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'vira',
     NULL, '2026-01-09T12:00:00.000Z', '2026-01-09T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000014', '0a000000-0000-4000-8000-000000000002',
     '0c000000-0000-4000-8000-000000000006', '2026-01-02', 'CREDIT', 'POSTED', 999, 'BRL',
     'Pix', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'pix', NULL,
     '2026-01-02T12:00:00.000Z', '2026-01-02T12:00:00.000Z'),
    ('12000000-0000-4000-8000-000000000015', '0a000000-0000-4000-8000-000000000001',
     '0c000000-0000-4000-8000-000000000001', '2026-01-08', 'DEBIT', 'POSTED', 555, 'BRL',
     'Engano', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, TRUE, 'API', 'engano', NULL,
     '2026-01-08T12:00:00.000Z', '2026-01-08T12:00:00.000Z');
INSERT INTO transaction_tags (transaction_id, tag_id) VALUES
    ('12000000-0000-4000-8000-000000000002', '0e000000-0000-4000-8000-000000000001'),
    ('12000000-0000-4000-8000-000000000002', '0e000000-0000-4000-8000-000000000002'),
    ('12000000-0000-4000-8000-000000000007', '0e000000-0000-4000-8000-000000000001'),
    ('12000000-0000-4000-8000-000000000004', '0e000000-0000-4000-8000-000000000003');

UPDATE users SET view_version = view_version + 1 WHERE id = '0a000000-0000-4000-8000-000000000001';
UPDATE transactions SET amount_cents = 13000, date = '2026-01-09'
WHERE id = '12000000-0000-4000-8000-000000000002';
UPDATE transactions SET status = 'POSTED' WHERE id = '12000000-0000-4000-8000-000000000003';
UPDATE transactions SET category_id = '996a8ac4-8cf9-58c9-be9e-47b6e80a1fa0'
WHERE id = '12000000-0000-4000-8000-000000000007';
UPDATE transactions SET hide_from_results = FALSE WHERE id = '12000000-0000-4000-8000-000000000010';
UPDATE transactions SET account_id = '0c000000-0000-4000-8000-000000000005'
WHERE id = '12000000-0000-4000-8000-000000000015';
DELETE FROM transactions WHERE id = '12000000-0000-4000-8000-000000000015';
DELETE FROM transaction_tags WHERE transaction_id = '12000000-0000-4000-8000-000000000002'
    AND tag_id = '0e000000-0000-4000-8000-000000000002';

UPDATE users SET view_version = view_version + 1 WHERE id = '0a000000-0000-4000-8000-000000000001';
UPDATE accounts SET archived = TRUE WHERE id = '0c000000-0000-4000-8000-000000000003';
UPDATE accounts SET type = 'CREDIT', sub_type = 'CREDIT_CARD', credit_close_day = 1,
    credit_due_day = 8 WHERE id = '0c000000-0000-4000-8000-000000000005';
DELETE FROM accounts WHERE id = '0c000000-0000-4000-8000-000000000004';
DELETE FROM tags WHERE id = '0e000000-0000-4000-8000-000000000003';
UPDATE tags SET title = 'Viagens', title_key = 'viagens'
WHERE id = '0e000000-0000-4000-8000-000000000001';
UPDATE categories SET title = 'Feira livre' WHERE id = '0d000000-0000-4000-8000-000000000001';
UPDATE recurrence_rules SET amount_cents = 520000 WHERE id = '0f000000-0000-4000-8000-000000000001';
DELETE FROM category_archives WHERE user_id = '0a000000-0000-4000-8000-000000000001'
    AND category_id = '996a8ac4-8cf9-58c9-be9e-47b6e80a1fa0';
UPDATE users SET name = 'Ana Maria' WHERE id = '0a000000-0000-4000-8000-000000000001';
"#;

const USER: &str = "0a000000-0000-4000-8000-000000000001";
const BANK: &str = "0c000000-0000-4000-8000-000000000001";
const CARD: &str = "0c000000-0000-4000-8000-000000000002";
const TAG: &str = "0e000000-0000-4000-8000-000000000001";
const GROCERIES: &str = "ed3eb088-9c3c-517a-b01a-f1d78fb4b16d";

/// Writes through the store, after the adoption: two purchases (one on the
/// card, tagged), a change of one of them and of a row the old chain's
/// users stored, and the deletion of another (a bill payment, both legs).
async fn write_through(store: &dyn Store) {
    let user: UserId = USER.parse().unwrap();
    let now: jiff::Timestamp = "2026-02-20T15:00:00Z".parse().unwrap();
    let today = jiff::civil::date(2026, 2, 20);
    let id =
        |n: u32| -> TransactionId { format!("12000000-0000-4000-8000-{n:012}").parse().unwrap() };
    let purchases: [(u32, &str, i64, Vec<TagId>); 2] = [
        (101, BANK, 4_210, Vec::new()),
        (102, CARD, 15_990, vec![TAG.parse().unwrap()]),
    ];
    for (n, account, cents, tag_ids) in purchases {
        let input = NewTransactionInput {
            id: Some(id(n)),
            account_id: Some(AccountId::from_str(account).unwrap()),
            tx_type: Some(TxType::Debit),
            amount: Some(Money::from_cents(cents)),
            description: Some(format!("Compra {n}")),
            date: Some(jiff::civil::date(2026, 2, 18)),
            status: Some(TxStatus::Posted),
            category_id: Some(CategoryId::from_str(GROCERIES).unwrap()),
            tag_ids,
            ..Default::default()
        };
        let new = new_transaction(&input, today).expect("a valid purchase");
        store
            .create_transaction(user, &new, None, now, None)
            .await
            .expect("create");
    }
    let moved = [
        (101, 4_500, jiff::civil::date(2026, 2, 19)),
        (2, 13_500, jiff::civil::date(2026, 1, 11)),
    ];
    for (n, cents, date) in moved {
        let changes = TransactionChanges {
            amount: Some(Money::from_cents(cents)),
            date: Some(date),
            ..Default::default()
        };
        store
            .update_transaction(user, id(n), &changes, now)
            .await
            .expect("update");
    }
    store.delete_transaction(user, id(8)).await.expect("delete");
}

/// Every account's balance is the sum of its POSTED rows.
async fn assert_balances_follow_rows(db: &Database) {
    let wrong = db
        .count(
            "SELECT COUNT(*) FROM account_balances b WHERE b.posted_cents <> COALESCE((
                 SELECT SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END)
                 FROM transactions t WHERE t.account_id = b.account_id AND t.status = 'POSTED'), 0)",
        )
        .await;
    assert_eq!(wrong, 0, "balances that are not their rows' sum");
}

/// The migrations this build carries (the baseline and any after it), as
/// sqlx records them once applied: version, checksum, success.
async fn shipped(backend: Backend) -> Vec<(i64, Vec<u8>, bool)> {
    let migrator = Migrator::new(backend.migrations_dir())
        .await
        .expect("migrations");
    let shipped: Vec<_> = migrator
        .iter()
        .map(|m| (m.version, m.checksum.to_vec(), true))
        .collect();
    assert_eq!(shipped.first().map(|m| m.0), Some(28), "the baseline first");
    shipped
}

async fn open(url: &str, migrations: Migrations) -> (std::sync::Arc<dyn Store>, Vec<i64>, i64) {
    match cofre_store::open(url, 0, migrations).await {
        Ok((store, report)) => (store, report.applied_now, report.version),
        Err(err) => panic!("open {url}: {err}"),
    }
}

/// A migrator of `dir`'s migrations up to `to`, and one more when `extra`
/// is given (its SQL), numbered after the last.
async fn migrator_of(dir: &Path, to: Option<i64>, extra: Option<&str>) -> Migrator {
    let copy = tempfile::tempdir().unwrap();
    let mut last = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().path();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let version: i64 = name.split('_').next().unwrap().parse().unwrap();
        if to.is_none_or(|to| version <= to) {
            std::fs::copy(&file, copy.path().join(&name)).unwrap();
            last = last.max(version);
        }
    }
    if let Some(sql) = extra {
        std::fs::write(copy.path().join(format!("{}_later.sql", last + 1)), sql).unwrap();
    }
    Migrator::new(copy.path()).await.unwrap()
}

/// Opening a database made by the old chain in check mode: it is adopted
/// (the baseline recorded, nothing else) and, when this build has
/// migrations after the baseline, refused for those only.
async fn adopted_in_check_mode(url: &str, after_baseline: &[i64]) {
    match cofre_store::open(url, 0, Migrations::Check).await {
        Ok((_, report)) => assert!(
            after_baseline.is_empty() && report.applied_now == [28],
            "{report:?}"
        ),
        Err(err) => assert!(
            !after_baseline.is_empty() && err.to_string().contains(&format!("{after_baseline:?}")),
            "{err}"
        ),
    }
}

async fn a_chain_database_becomes_the_baseline(backend: Backend) {
    let shipped = shipped(backend).await;
    let versions: Vec<i64> = shipped.iter().map(|m| m.0).collect();
    let (newest, after_baseline) = (*versions.last().unwrap(), &versions[1..]);

    // Made by the old chain, written to by its users.
    let chain = Database::fresh(backend).await;
    chain.migrate(&backend.old_chain().await, None).await;
    assert_eq!(chain.versions().await, (1..=27).collect::<Vec<_>>());
    chain.execute(WRITES).await;
    let made = chain.rows().await;
    assert!(
        made.values().all(|rows| !rows.is_empty()),
        "the writes reach every table: {:?}",
        made.iter()
            .map(|(t, rows)| (t, rows.len()))
            .collect::<Vec<_>>()
    );

    // Opened by this build, even one that applies nothing: recorded as at
    // the baseline, every row kept.
    adopted_in_check_mode(&chain.url, after_baseline).await;
    assert_eq!(chain.migrations().await, shipped[..1]);
    assert_same_rows(
        "rows after the adoption",
        ("the chain's database", &made),
        ("the same database adopted", &chain.rows().await),
    );
    assert_balances_follow_rows(&chain).await;

    // Made by the baseline: the same schema, and the same writes make the
    // same rows, derived ones included.
    let baseline = Database::fresh(backend).await;
    let only_baseline = migrator_of(&backend.migrations_dir(), Some(28), None).await;
    baseline.migrate(&only_baseline, None).await;
    assert_eq!(baseline.migrations().await, shipped[..1]);
    assert_same_schema(
        "schemas",
        ("the chain's database", &chain.schema().await),
        ("the baseline's", &baseline.schema().await),
    );
    baseline.execute(WRITES).await;
    assert_same_rows(
        "rows made by the same writes",
        ("the chain's database", &made),
        ("the baseline's", &baseline.rows().await),
    );

    // Both take this build's later migrations, if any; then writes
    // through the store change both alike.
    let (store, applied, version) = open(&chain.url, Migrations::Apply).await;
    assert_eq!((&applied[..], version), (after_baseline, newest));
    let (baseline_store, applied, version) = open(&baseline.url, Migrations::Apply).await;
    assert_eq!((&applied[..], version), (after_baseline, newest));
    for db in [&chain, &baseline] {
        assert_eq!(db.migrations().await, shipped);
    }
    let before = chain.rows().await;
    write_through(store.as_ref()).await;
    write_through(baseline_store.as_ref()).await;
    let after = chain.rows().await;
    assert_ne!(after["account_balances"], before["account_balances"]);
    assert_ne!(after["user_day_stamps"], before["user_day_stamps"]);
    assert_same_rows(
        "rows after the store's writes",
        ("the chain's database", &after),
        ("the baseline's", &baseline.rows().await),
    );
    assert_balances_follow_rows(&chain).await;
    drop((store, baseline_store));

    // Opened again: nothing to do. A later build's migration applies to
    // either alike.
    let later = migrator_of(
        &backend.migrations_dir(),
        None,
        Some("ALTER TABLE tags ADD COLUMN icon_id TEXT;"),
    )
    .await;
    for db in [&chain, &baseline] {
        let (_, applied, version) = open(&db.url, Migrations::Check).await;
        assert_eq!((applied, version), (vec![], newest));
        db.migrate(&later, None).await;
        assert_eq!(db.versions().await.last(), Some(&(newest + 1)));
    }
    assert_same_schema(
        "schemas after a later migration",
        ("the chain's database", &chain.schema().await),
        ("the baseline's", &baseline.schema().await),
    );
    chain.drop_it().await;
    baseline.drop_it().await;

    // An empty database opened by this build takes the baseline, and only
    // the migrations after it.
    let empty = Database::fresh(backend).await;
    let (_, applied, version) = open(&empty.url, Migrations::Apply).await;
    assert_eq!((applied, version), (versions.clone(), newest));
    assert_eq!(empty.migrations().await, shipped);
    empty.drop_it().await;
}

async fn open_refused(url: &str, migrations: Migrations) -> String {
    match cofre_store::open(url, 0, migrations).await {
        Ok(_) => panic!("{url} opened in {migrations:?} mode"),
        Err(err) => err.to_string(),
    }
}

async fn other_databases_are_refused_or_adopted_once_whole(backend: Backend) {
    // Partway through the old chain: told to finish it with a build that has it.
    let partway = Database::fresh(backend).await;
    partway.migrate(&backend.old_chain().await, Some(20)).await;
    for mode in [Migrations::Apply, Migrations::Check] {
        let said = open_refused(&partway.url, mode).await;
        assert!(
            said.contains("partway") && said.contains("built before the baseline"),
            "{said}"
        );
    }
    assert_eq!(partway.versions().await, (1..=20).collect::<Vec<_>>());
    partway.drop_it().await;

    // The whole chain, but one migration is not the file cofre shipped.
    let altered = Database::fresh(backend).await;
    altered.migrate(&backend.old_chain().await, None).await;
    let as_shipped = altered.migrations().await[4].1.clone();
    altered.set_checksum(5, &[0; 48]).await;
    let said = open_refused(&altered.url, Migrations::Apply).await;
    assert!(said.contains("not the ones cofre shipped"), "{said}");
    assert_eq!(altered.versions().await, (1..=27).collect::<Vec<_>>());

    // As shipped, it is adopted.
    altered.set_checksum(5, &as_shipped).await;
    let after_baseline: Vec<i64> = (shipped(backend).await.into_iter())
        .map(|m| m.0)
        .filter(|v| *v > 28)
        .collect();
    adopted_in_check_mode(&altered.url, &after_baseline).await;
    assert_eq!(altered.versions().await, vec![28]);
    altered.drop_it().await;
}

#[tokio::test]
async fn sqlite_a_chain_database_becomes_the_baseline() {
    a_chain_database_becomes_the_baseline(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_chain_database_becomes_the_baseline() {
    if postgres_url().is_some() {
        a_chain_database_becomes_the_baseline(Backend::Postgres).await;
    }
}

#[tokio::test]
async fn sqlite_other_databases_are_refused_or_adopted_once_whole() {
    other_databases_are_refused_or_adopted_once_whole(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_other_databases_are_refused_or_adopted_once_whole() {
    if postgres_url().is_some() {
        other_databases_are_refused_or_adopted_once_whole(Backend::Postgres).await;
    }
}

/// The normalisation keeps what matters and drops what does not.
#[test]
fn sqlite_text_is_compared_without_its_layout() {
    assert_eq!(
        normalised(
            "CREATE TABLE IF NOT EXISTS \"t\" (\n    a TEXT -- it's a note\n, b INT DEFAULT 'x  ,y' )"
        ),
        "CREATE TABLE t(a TEXT,b INT DEFAULT 'x  ,y')"
    );
    assert_ne!(normalised("a = 'x'"), normalised("a = 'X'"));
    assert_ne!(normalised("a + 1"), normalised("a + 2"));
}
