//! PostgreSQL: the path past one machine; many `cofre serve` processes can
//! share one database.

use sqlx::postgres::PgPoolOptions;

type Db = sqlx::Postgres;
const BEGIN_WRITE: &str = "BEGIN";
/// JSON aggregate and row constructor: a query's rows as one value.
const JSON_AGG: &str = "json_agg";
const JSON_ARRAY: &str = "json_build_array";

impl SqlStore {
    /// Opens `url` with caches of about `cache_bytes` (see
    /// [`crate::DEFAULT_CACHE_BYTES`]).
    pub async fn connect(url: &str, cache_bytes: u64) -> Result<Self, crate::StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .connect(url)
            .await?;
        sqlx::migrate!("migrations/postgres").run(&pool).await?;
        Ok(Self::from_pool(pool, cache_bytes))
    }

    /// A server-side copy is `pg_dump`'s work, not this process's.
    async fn backup_into(&self, _to: &std::path::Path) -> Result<(), crate::StoreError> {
        Err(crate::StoreError::Unsupported(
            "on PostgreSQL, back up with pg_dump (see the README)",
        ))
    }
}

include!("sql_store.rs");
include!("sql_decode.rs");
include!("sql_steps.rs");
include!("sql_series.rs");
include!("sql_users.rs");
include!("sql_accounts.rs");
include!("sql_categories.rs");
include!("sql_transactions.rs");
include!("sql_operations.rs");
include!("sql_import.rs");
include!("sql_receipts.rs");
include!("sql_cards.rs");
