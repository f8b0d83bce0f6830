//! Migrations for a fleet, through the real binary on SQLite and
//! PostgreSQL: `cofre migrate` applies once and reports, several run
//! together apply each migration once, `serve --migrate check` refuses a
//! schema that is behind, and every command refuses a schema newer than
//! this build knows.

use std::process::Output;

mod common;

use common::database::Database;

/// The migrations this build carries, in order: the numbers of the files
/// of crates/store/migrations, the same on both backends.
fn versions() -> Vec<i64> {
    let numbers = |backend: &str| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../store/migrations")
            .join(backend);
        let mut numbers: Vec<i64> = std::fs::read_dir(dir)
            .expect("the migrations")
            .map(|entry| {
                let name = entry.expect("a migration").file_name();
                let name = name.to_string_lossy();
                name.split('_').next().unwrap().parse::<i64>().unwrap()
            })
            .collect();
        numbers.sort_unstable();
        assert!(!numbers.is_empty(), "at least one migration");
        numbers
    };
    assert_eq!(numbers("sqlite"), numbers("postgres"));
    numbers("sqlite")
}

fn text(output: &Output) -> (bool, String) {
    let mut all = String::from_utf8_lossy(&output.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.success(), all)
}

async fn migrations_are_applied_once_checked_and_never_downgraded(url: &str) {
    let versions = versions();
    let newest = *versions.last().expect("at least one migration");
    // Behind: a server in check mode refuses, naming the way out.
    let (ok, said) = text(&common::cofre(
        url,
        &["serve", "--migrate", "check", "--bind", "127.0.0.1:0"],
        &[],
    ));
    assert!(!ok, "serve --migrate check started on an empty database");
    assert!(
        said.contains("lacks migrations") && said.contains("cofre migrate"),
        "{said}"
    );

    // Three deploy steps at once: each migration is applied by one.
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let url = url.to_owned();
            std::thread::spawn(move || text(&common::cofre(&url, &["migrate"], &[])))
        })
        .collect();
    let mut applied = Vec::new();
    for run in runs {
        let (ok, said) = run.join().expect("migrate");
        assert!(ok, "{said}");
        assert!(
            said.contains(&format!("schema at version {newest}")),
            "{said}"
        );
        applied.push(said);
    }
    // PostgreSQL's advisory lock makes the others wait and find the work
    // done; SQLite has no such lock, and the processes that lose the race
    // wait until the schema is complete (each migration is applied once
    // all the same: its transaction fails in the others).
    if url.starts_with("postgres") {
        let full: String = format!("{versions:?}");
        let applying: Vec<_> = applied
            .iter()
            .filter(|s| !s.contains("applied now: none"))
            .collect();
        assert_eq!(applying.len(), 1, "{applied:?}");
        assert!(applying[0].contains(&full), "{applying:?}");
    }

    let (ok, said) = text(&common::cofre(url, &["migrate"], &[]));
    assert!(ok && said.contains("applied now: none"), "{said}");

    // A newer cofre migrated this database: refuse rather than guess.
    record_migration(url, 99).await;
    for args in [
        &["migrate"][..],
        &["serve", "--bind", "127.0.0.1:0"][..],
        &["users", "list"][..],
    ] {
        let (ok, said) = text(&common::cofre(url, args, &[]));
        assert!(!ok, "{args:?} ran on a newer schema");
        assert!(
            said.contains(&format!(
                "schema is at version 99, newer than this cofre knows (up to {newest})"
            )),
            "{args:?}: {said}"
        );
    }
}

/// Marks migration `version` as applied, as a newer build would have.
async fn record_migration(url: &str, version: i64) {
    let insert = "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
                  execution_time) VALUES ($1, 'from the future', TRUE, $2, 0)";
    let checksum = vec![0u8; 48];
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.expect("sqlite");
        sqlx::query(insert)
            .bind(version)
            .bind(checksum)
            .execute(&pool)
            .await
            .expect("insert");
    } else {
        let pool = sqlx::PgPool::connect(url).await.expect("postgres");
        sqlx::query(insert)
            .bind(version)
            .bind(checksum)
            .execute(&pool)
            .await
            .expect("insert");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_migrations() {
    let (database, url) = Database::sqlite().await;
    migrations_are_applied_once_checked_and_never_downgraded(&url).await;
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_migrations() {
    if let Some((database, url)) = Database::postgres().await {
        migrations_are_applied_once_checked_and_never_downgraded(&url).await;
        database.drop_it().await;
    }
}
