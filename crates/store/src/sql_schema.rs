//! The schema on opening: applied under the migration lock, checked, or
//! refused when newer than this build; a database made by the migrations
//! the baseline replaced is recorded as at the baseline.

use sqlx::migrate::Migrate;
use sqlx::pool::PoolConnection;

use crate::backend::Backend;
use crate::sql_conn::{Conn, Dialect, SqlRow};
use crate::sql_text::{Arg, Sql};
use crate::{StoreError, StoreResult};

/// Brings `pool`'s schema to what `migrator` knows, or checks it is there.
/// On PostgreSQL everything happens under the migration advisory lock
/// (sqlx's, taken again by `run`: it is re-entrant within a session), so
/// servers starting together on one database apply each migration once,
/// and the others wait and find the work done. SQLite has no such lock:
/// each migration is one transaction, and a process that loses the race
/// waits until the schema is complete.
pub(crate) async fn prepare_schema<B: Backend>(
    pool: &sqlx::Pool<B>,
    migrator: &sqlx::migrate::Migrator,
    migrations: crate::Migrations,
) -> StoreResult<crate::SchemaReport> {
    let mut conn = pool.acquire().await?;
    conn.lock().await?;
    let result = prepare_locked(&mut conn, migrator, migrations).await;
    if conn.unlock().await.is_err() {
        // Closing the session releases its locks.
        let _ = conn.close().await;
    }
    result
}

async fn prepare_locked<B: Backend>(
    conn: &mut PoolConnection<B>,
    migrator: &sqlx::migrate::Migrator,
    migrations: crate::Migrations,
) -> StoreResult<crate::SchemaReport> {
    let known = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    let too_new = |database: i64| StoreError::SchemaTooNew { database, known };
    let mut before = applied_versions(&mut **conn, migrator).await?;
    let mut adopted = false;
    if !before.is_empty() && before.iter().all(|v| *v < BASELINE) {
        adopted = adopt_old_chain::<B>(&mut **conn, migrator).await?;
        before = applied_versions(&mut **conn, migrator).await?;
    }
    if let Some(&newest) = before.iter().max()
        && before.iter().any(|v| !migrator.version_exists(*v))
    {
        return Err(too_new(newest));
    }
    let pending: Vec<i64> = migrator
        .iter()
        .map(|m| m.version)
        .filter(|v| !before.contains(v))
        .collect();
    match migrations {
        crate::Migrations::Check if !pending.is_empty() => {
            return Err(StoreError::MigrationsPending { pending });
        }
        crate::Migrations::Check => {}
        crate::Migrations::Apply if pending.is_empty() => {}
        crate::Migrations::Apply => match migrator.run(&mut *conn).await {
            Ok(()) => {}
            Err(sqlx::migrate::MigrateError::VersionMissing(version)) => {
                return Err(too_new(version));
            }
            // SQLite: another process is applying the same migrations.
            // Fine once it has applied them all (waited for, boundedly);
            // otherwise the failure is real.
            Err(err) => {
                let mut waits = 0;
                loop {
                    let now = applied_versions(&mut **conn, migrator).await?;
                    if migrator.iter().all(|m| now.contains(&m.version)) {
                        break;
                    }
                    if waits == 100 {
                        return Err(err.into());
                    }
                    waits += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        },
    }
    let after = applied_versions(&mut **conn, migrator).await?;
    Ok(crate::SchemaReport {
        version: after.iter().copied().max().unwrap_or(0),
        applied_now: after
            .into_iter()
            .filter(|v| !before.contains(v) || (adopted && *v == BASELINE))
            .collect(),
    })
}

/// The migration that holds the whole schema (`0028_baseline.sql`). It
/// replaced migrations 1 to 27, which are kept as test data only
/// (`tests/migrations_chain`); `tests/schema_baseline.rs` proves that a
/// database they made has the baseline's schema.
const BASELINE: i64 = 28;

/// How each of migrations 1 to 27 was recorded by sqlx on this backend: the
/// first 24 bytes (of 48), in hex, of the SHA-384 of its file, in order.
fn old_chain<B: Backend>() -> &'static [&'static str; 27] {
    const SQLITE: [&str; 27] = [
        "d19eea84f70bb137627c815f557b6d687394217b2fd6b037",
        "20d233ec440437daaa88024dd3be601aa0dc075065ca312c",
        "3ae686dc3e05589ff85b4737506d473193bf3a72c784c91e",
        "d0a1e961c95432eec24bb1214fe1572105a9dfd9249e8c1d",
        "a7593367d3f24315f612bc3dcd81f1708bbb10e8494cb715",
        "143e01a55bf8d647311b0cb18b0d42d4f725ec8972baaa3a",
        "2d6dcd442b9472c9bb440c2b9493657e936acac02e7b72ab",
        "5649d8f6833e48d1b64d5aaf2ff6cd4be64ed37a14725576",
        "ef0b5cda5ebfd1a370bed249641d0110706fbffa47cce0ad",
        "45858d6e2f9d591b6c6bd07f8b5f4db69a47ad07cef6c828",
        "57fdfa6e565acc29f2192a13fe6b326227b0e3a4b59a8c71",
        "617f40fc14137df442b9b1cef77d3edfc3e0c5100e265ce2",
        "58a5aa8bf55648f46e0f31ecec77df4f5f23e1aa2cb42965",
        "89051f79c0bdeb5c063f675785d46b12249fcf5a794cf59b",
        "f6230ae9f414328e48e2b8ddddc75deeb418f8e97ee33244",
        "9ed3b3bcd1009f11f6bfb4ddcefc7b8ba0ea300211390fd4",
        "d86dd68731dd817e579ae582313bbd4cda4df07b74b73058",
        "21f29667a3d081463fb2294a0b0869bca2eada4d5c200a49",
        "9a41aefec1035d675fe7d7668fde4ad45026a1117e1edecb",
        "14237745259a257224a746e602e24f517789e81d05d1a3ae",
        "664b9aaf6d13acd54c190d0c0ceaddcc0a2d37b7a9b27b67",
        "a414d061e8a5848f09d6768497d333b3708cc765cfe1245e",
        "eac45caf25e52eb72962302ebc0e9177264f72594e88c82d",
        "ce44b7e33ee3058d97796684c0f23ad7413c9926ccb64d96",
        "0d26b09f138c3d03c1fc764da639f1b757bb87fe06b00cce",
        "3091eb12d31e1cb2f2a9290d9e275e51be495ea662b5f06f",
        "1ac91fd3d5517d93f1c270eaa391c43a5aea7ab652211bff",
    ];
    const POSTGRES: [&str; 27] = [
        "ac58a97c7389f33420df869f1429b6c5f8a1c3beb70678b2",
        "20d233ec440437daaa88024dd3be601aa0dc075065ca312c",
        "3ae686dc3e05589ff85b4737506d473193bf3a72c784c91e",
        "d0a1e961c95432eec24bb1214fe1572105a9dfd9249e8c1d",
        "a7593367d3f24315f612bc3dcd81f1708bbb10e8494cb715",
        "fb2917815dcba3bef3c1d376444501faf6630952024c58f2",
        "53496c7e6c5eeb3aa3a78f0d3555b74aa943f7c030ab04d0",
        "ad4d4593ef3ea7bfacefe1c2c070e77f7f23eeebd61c4112",
        "314ad4353de5f3aa6974af83ff5b45723d0b6ea7a41bf939",
        "2f2e883eee794fd3efafa4e6dd6213fac3059cb5a3804bcd",
        "17bf89972e7d2b49cf6d1fd5dae78312d38b0d18d864bb9e",
        "a0f3721f9a1a16e5c2a9ac10b417e66503e0ca246622130c",
        "791f3a47856280b3dbf94de4e1a76ba7fe24f5ce0e930e4f",
        "fc4b75e881b5e924c0c0023b3a8849273a35b4f4250b6752",
        "6979a7724293584edff0a06c3b918e412b7b2bb604df24b9",
        "f321610e2dbc8481095b7fc458bc27cd6dd583f3f82f42a1",
        "bf289ef6d30b081af16a543a860e7c1f2e3bd69458053753",
        "769bf84e50b0da60c53f9ea09a722ab042f920d064fe1eac",
        "ed382db144c6d5f075fcb11fcd198789eee414fe2927a79d",
        "3b534e96a43d668e2972579bc5b6cf3b1d6f089f8307ec30",
        "49344f85f6a3b2319bfbd32011e78d6e538126004b7b5cf4",
        "84e9ea6f81b94923e842f41bddac19eb52d2b7af7ea4bf6a",
        "e3369b19adfb722f1adeb3b0dac5f5708311d857b88d2c48",
        "2ac355bc04da5441307dd8ef45774a24828676318827edf7",
        "27f17c42b8465960188494b4f58f156043dd4af85ebaadd0",
        "6ecd3ae1dd441c7cc1d7488a17c86ccc034b418ad4dc98f1",
        "e42a399f0d8cd6b2479b2dba5901ed1391d90b6373fba277",
    ];
    if B::NAME == "SQLite" {
        &SQLITE
    } else {
        &POSTGRES
    }
}

/// Brings a database whose applied migrations all predate the baseline to
/// it: when they are exactly the old chain (1 to 27, each applied whole
/// from the file this backend shipped), their schema is the baseline's, so
/// their rows in sqlx's table are replaced by the baseline's, recorded as
/// sqlx records a migration it skips (`Migrate::skip`), in one
/// transaction. No table, row or trigger of cofre's is touched. Refuses a
/// database partway through the old chain or with other migrations. Gives
/// whether it recorded the baseline (not when another process just did).
async fn adopt_old_chain<B: Backend>(
    conn: &mut B::Connection,
    migrator: &sqlx::migrate::Migrator,
) -> StoreResult<bool> {
    let Some(baseline) = migrator.iter().find(|m| m.version == BASELINE) else {
        return Ok(false);
    };
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    // Writing first, so on SQLite the transaction takes the write lock
    // before it reads anything (no other process can adopt meanwhile), and
    // what it read is exactly what it removed.
    let mut removed: Vec<(i64, Vec<u8>, bool)> = Sql::new(format!(
        "DELETE FROM {} WHERE version < {BASELINE} RETURNING version, checksum, success",
        migrator.table_name
    ))
    .fetch_all(&mut *tx)
    .await?
    .iter()
    .map(|row| Ok((row.col(0)?, row.col(1)?, row.col(2)?)))
    .collect::<StoreResult<_>>()?;
    removed.sort_by_key(|(version, _, _)| *version);
    let shipped = old_chain::<B>();
    let intact = removed.len() <= shipped.len()
        && removed.iter().zip(1..).zip(shipped).all(
            |(((version, checksum, success), n), shipped)| {
                let recorded: String = checksum
                    .iter()
                    .take(24)
                    .map(|b| format!("{b:02x}"))
                    .collect();
                *version == n && *success && recorded == *shipped
            },
        );
    let refused = match removed.len() {
        // Another process recorded the baseline since the versions were read.
        0 => None,
        _ if !intact => Some(OLD_CHAIN_ALTERED),
        n if n < shipped.len() => Some(OLD_CHAIN_PARTWAY),
        _ => {
            tx.skip(&migrator.table_name, baseline).await?;
            tx.commit().await?;
            tracing::info!(
                version = BASELINE,
                "the schema made by migrations 1 to 27 is the baseline's: recorded as such"
            );
            return Ok(true);
        }
    };
    tx.rollback().await?;
    refused.map_or(Ok(false), |why| Err(StoreError::Unsupported(why)))
}

const OLD_CHAIN_PARTWAY: &str = "the database stopped partway through cofre's first \
    migrations (versions 1 to 27), which this cofre replaced by one baseline (version \
    28): finish them with `cofre migrate` of a cofre built before the baseline (see \
    CONTRIBUTING.md, Migrations), then start this one";

const OLD_CHAIN_ALTERED: &str = "the database's migrations before version 28 are not the \
    ones cofre shipped (a checksum differs, one is missing or failed): this cofre cannot \
    tell its schema from the baseline's (version 28) that replaced them";

/// The versions applied so far; none on a database never migrated.
async fn applied_versions<C: Conn + Migrate>(
    conn: &mut C,
    migrator: &sqlx::migrate::Migrator,
) -> StoreResult<Vec<i64>> {
    let exists: Option<String> = Sql::with(
        <C::Db as Dialect>::MIGRATIONS_TABLE_EXISTS,
        [Arg::Text(migrator.table_name.to_string())],
    )
    .scalar(&mut *conn)
    .await?;
    if exists.is_none() {
        return Ok(Vec::new());
    }
    Ok(conn
        .list_applied_migrations(&migrator.table_name)
        .await?
        .into_iter()
        .map(|m| m.version)
        .collect())
}
