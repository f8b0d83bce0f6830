// The schema on opening: applied under the migration lock, checked, or
// refused when newer than this build (included by each backend).

/// Brings `pool`'s schema to what `migrator` knows, or checks it is there.
/// On PostgreSQL everything happens under the migration advisory lock
/// (sqlx's, taken again by `run`: it is re-entrant within a session), so
/// servers starting together on one database apply each migration once,
/// and the others wait and find the work done. SQLite has no such lock:
/// each migration is one transaction, and a process that loses the race
/// waits until the schema is complete.
async fn prepare_schema(
    pool: &sqlx::Pool<Db>,
    migrator: &sqlx::migrate::Migrator,
    migrations: crate::Migrations,
) -> StoreResult<crate::SchemaReport> {
    use sqlx::migrate::Migrate;

    let mut conn = pool.acquire().await?;
    conn.lock().await?;
    let result = prepare_locked(&mut conn, migrator, migrations).await;
    if conn.unlock().await.is_err() {
        // Closing the session releases its locks.
        let _ = conn.close().await;
    }
    result
}

async fn prepare_locked(
    conn: &mut <Db as sqlx::Database>::Connection,
    migrator: &sqlx::migrate::Migrator,
    migrations: crate::Migrations,
) -> StoreResult<crate::SchemaReport> {
    let known = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    let too_new = |database: i64| StoreError::SchemaTooNew { database, known };
    let before = applied_versions(conn, migrator).await?;
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
                    let now = applied_versions(conn, migrator).await?;
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
    let after = applied_versions(conn, migrator).await?;
    Ok(crate::SchemaReport {
        version: after.iter().copied().max().unwrap_or(0),
        applied_now: after.into_iter().filter(|v| !before.contains(v)).collect(),
    })
}

/// The versions applied so far; none on a database never migrated.
async fn applied_versions(
    conn: &mut <Db as sqlx::Database>::Connection,
    migrator: &sqlx::migrate::Migrator,
) -> StoreResult<Vec<i64>> {
    use sqlx::migrate::Migrate;

    let exists: Option<String> = sqlx::query_scalar(MIGRATIONS_TABLE_EXISTS)
        .bind(migrator.table_name.to_string())
        .fetch_one(&mut *conn)
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
