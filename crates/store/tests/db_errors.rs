//! What real PostgreSQL failures become: a serialization failure and a
//! deadlock are `Conflict` (safe to run again; the API replays them), a
//! terminated session and a server that does not answer are `Unavailable`
//! (503 with `Retry-After`), never a bare database error (500).

use sqlx::{Connection, PgConnection};
use std::time::Duration;

use cofre_store::StoreError;

fn postgres_url() -> Option<String> {
    match std::env::var("COFRE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but COFRE_TEST_POSTGRES_URL is not set: these tests must run")
        }
        _ => {
            eprintln!("SKIPPED (PostgreSQL): set COFRE_TEST_POSTGRES_URL to run db_errors");
            None
        }
    }
}

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url).await.expect("connect")
}

async fn run(conn: &mut PgConnection, sql: &str) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .map(drop)
}

/// A table of its own, dropped afterwards.
struct Table {
    url: String,
    name: String,
}

impl Table {
    async fn new(url: &str, rows: &str) -> Table {
        let name = format!("cofre_conflict_{}", uuid::Uuid::new_v4().simple());
        let mut admin = connect(url).await;
        run(
            &mut admin,
            &format!(
                "CREATE TABLE {name} (id INT PRIMARY KEY, v INT); INSERT INTO {name} VALUES {rows}"
            ),
        )
        .await
        .expect("create table");
        Table {
            url: url.to_owned(),
            name,
        }
    }

    async fn drop_it(self) {
        let mut admin = connect(&self.url).await;
        run(&mut admin, &format!("DROP TABLE {}", self.name))
            .await
            .expect("drop table");
    }
}

#[tokio::test]
async fn serialization_failures_are_conflicts() {
    let Some(url) = postgres_url() else { return };
    let table = Table::new(&url, "(0, 0)").await;
    let t = &table.name;
    let mut a = connect(&url).await;
    let mut b = connect(&url).await;
    for conn in [&mut a, &mut b] {
        run(conn, "BEGIN ISOLATION LEVEL SERIALIZABLE")
            .await
            .unwrap();
        run(conn, &format!("SELECT SUM(v) FROM {t}")).await.unwrap();
    }
    // Write skew: each decided from a sum the other changes.
    run(&mut a, &format!("INSERT INTO {t} VALUES (1, 1)"))
        .await
        .unwrap();
    run(&mut b, &format!("INSERT INTO {t} VALUES (2, 1)"))
        .await
        .unwrap();
    run(&mut a, "COMMIT").await.unwrap();
    let err = run(&mut b, "COMMIT")
        .await
        .expect_err("write skew committed");
    assert!(
        matches!(StoreError::from(err), StoreError::Conflict(_)),
        "not a conflict"
    );
    table.drop_it().await;
}

#[tokio::test]
async fn deadlocks_are_conflicts() {
    let Some(url) = postgres_url() else { return };
    let table = Table::new(&url, "(1, 0), (2, 0)").await;
    let t = table.name.clone();
    let mut a = connect(&url).await;
    let mut b = connect(&url).await;
    for conn in [&mut a, &mut b] {
        run(conn, "SET deadlock_timeout = '100ms'; BEGIN")
            .await
            .unwrap();
    }
    run(&mut a, &format!("UPDATE {t} SET v = 1 WHERE id = 1"))
        .await
        .unwrap();
    run(&mut b, &format!("UPDATE {t} SET v = 1 WHERE id = 2"))
        .await
        .unwrap();
    let crossing = {
        let t = t.clone();
        tokio::spawn(async move {
            let result = run(&mut a, &format!("UPDATE {t} SET v = 2 WHERE id = 2")).await;
            (a, result)
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = run(&mut b, &format!("UPDATE {t} SET v = 2 WHERE id = 1")).await;
    let (mut a, first) = crossing.await.unwrap();
    let failed: Vec<sqlx::Error> = [first, second]
        .into_iter()
        .filter_map(Result::err)
        .collect();
    assert_eq!(failed.len(), 1, "one of the two is chosen as the victim");
    for err in failed {
        assert!(
            matches!(StoreError::from(err), StoreError::Conflict(_)),
            "not a conflict"
        );
    }
    let _ = run(&mut a, "ROLLBACK").await;
    let _ = run(&mut b, "ROLLBACK").await;
    table.drop_it().await;
}

#[tokio::test]
async fn lost_sessions_and_absent_servers_are_unavailable() {
    let Some(url) = postgres_url() else { return };
    let mut victim = connect(&url).await;
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut victim)
        .await
        .unwrap();
    let mut admin = connect(&url).await;
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .execute(&mut admin)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let err = sqlx::query("SELECT 1")
        .execute(&mut victim)
        .await
        .expect_err("a terminated session answered");
    assert!(
        matches!(StoreError::from(err), StoreError::Unavailable(_)),
        "a terminated session is not 'unavailable'"
    );

    // Nothing listens on this port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let err = PgConnection::connect(&format!("postgres://postgres@127.0.0.1:{port}/postgres"))
        .await
        .expect_err("nothing listens there");
    assert!(
        matches!(StoreError::from(err), StoreError::Unavailable(_)),
        "a refused connection is not 'unavailable'"
    );
}
