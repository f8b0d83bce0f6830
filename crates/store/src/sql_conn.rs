//! How the store's portable SQL runs on either backend. A [`Sql`] (text
//! with `$n` placeholders and its values) runs on any [`Conn`], and its
//! rows are read column by column through [`SqlRow`]: code written against
//! these two traits is one body for SQLite and PostgreSQL, and what the
//! backends' SQL spells differently is named by [`Dialect`].
//!
//! The traits hold sqlx's bounds inside their two implementations, so the
//! code that uses them is generic over a connection with no bound of
//! sqlx's to repeat at every function.

use std::future::Future;

use sqlx::{Arguments as _, AssertSqlSafe, Postgres, Sqlite};

use crate::sql_text::{Arg, Sql};
use crate::{StoreError, StoreResult};

/// What the backends spell differently, as statement text.
pub trait Dialect: sqlx::Database {
    /// JSON aggregate: a query's rows as one JSON array.
    const JSON_AGG: &'static str;
    /// JSON array constructor.
    const JSON_ARRAY: &'static str;
    /// A JSON value read from a column, as a JSON constructor takes it to
    /// nest it (not as a string).
    const JSON_NESTED: &'static str;
    /// Holds the users table against other writers for the rest of a
    /// write transaction (on SQLite, `BEGIN IMMEDIATE` already does).
    const LOCK_USERS: &'static str;
    /// The migrations table's name (`$1`), or NULL while it does not exist.
    const MIGRATIONS_TABLE_EXISTS: &'static str;

    /// What ends a `SELECT ... ORDER BY` key so that it locks the rows it
    /// reads for the rest of the transaction, in that order (PostgreSQL);
    /// none where a write transaction holds the whole database (SQLite).
    const LOCK_ROWS: Option<&'static str>;

    /// The rows of the JSON array of objects bound to `$param`, as a table
    /// `v` with `columns` (each a name and its PostgreSQL type).
    fn json_rows(param: usize, columns: &[(&str, &str)]) -> String;

    /// Statement texts built from the constants above, once per backend.
    fn texts() -> &'static DialectTexts;
}

/// Statement texts that depend on the dialect, built once.
pub struct DialectTexts {
    /// The start of an entries query (see `sql_decode::entries_query`).
    pub(crate) entries_select: String,
    /// What goes before an entries query to read it as one JSON page.
    pub(crate) entries_page_before: String,
    /// The steps of a set of creations.
    pub(crate) creations: crate::sql_store::create_set::Texts,
}

/// A connection the store's SQL runs on: a pooled one, or the one a write
/// transaction holds.
pub trait Conn: Send {
    type Db: Dialect;
    type Row: SqlRow;

    fn fetch_all(&mut self, sql: Sql) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    fn fetch_optional(
        &mut self,
        sql: Sql,
    ) -> impl Future<Output = StoreResult<Option<Self::Row>>> + Send;

    /// Runs a statement that answers no rows; how many rows it changed.
    fn execute(&mut self, sql: Sql) -> impl Future<Output = StoreResult<u64>> + Send;
}

/// A row answered by a [`Conn`].
pub trait SqlRow: Send + Sync + 'static {
    /// The value of a column, by name or position.
    fn col<'a, T: Col>(&self, at: impl Into<At<'a>>) -> StoreResult<T>;
}

/// Where a column is in a row.
#[derive(Clone, Copy)]
pub enum At<'a> {
    Name(&'a str),
    Index(usize),
}

impl<'a> From<&'a str> for At<'a> {
    fn from(name: &'a str) -> Self {
        At::Name(name)
    }
}

impl From<usize> for At<'_> {
    fn from(index: usize) -> Self {
        At::Index(index)
    }
}

/// A value both backends decode from a column (text, numbers, booleans,
/// and their NULLs).
pub trait Col: Sized + Send {
    fn from_sqlite(row: &sqlx::sqlite::SqliteRow, at: At<'_>) -> sqlx::Result<Self>;
    fn from_postgres(row: &sqlx::postgres::PgRow, at: At<'_>) -> sqlx::Result<Self>;
}

impl<T> Col for T
where
    T: Send,
    T: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
    T: for<'r> sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>,
{
    fn from_sqlite(row: &sqlx::sqlite::SqliteRow, at: At<'_>) -> sqlx::Result<Self> {
        get(row, at)
    }

    fn from_postgres(row: &sqlx::postgres::PgRow, at: At<'_>) -> sqlx::Result<Self> {
        get(row, at)
    }
}

fn get<R, T>(row: &R, at: At<'_>) -> sqlx::Result<T>
where
    R: sqlx::Row,
    T: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    usize: sqlx::ColumnIndex<R>,
{
    match at {
        At::Name(name) => row.try_get(name),
        At::Index(index) => row.try_get(index),
    }
}

impl SqlRow for sqlx::sqlite::SqliteRow {
    fn col<'a, T: Col>(&self, at: impl Into<At<'a>>) -> StoreResult<T> {
        Ok(T::from_sqlite(self, at.into())?)
    }
}

impl SqlRow for sqlx::postgres::PgRow {
    fn col<'a, T: Col>(&self, at: impl Into<At<'a>>) -> StoreResult<T> {
        Ok(T::from_postgres(self, at.into())?)
    }
}

/// `sql`'s text and its values as sqlx binds them for `DB`.
fn sqlx_parts<DB>(sql: Sql) -> StoreResult<(String, DB::Arguments)>
where
    DB: sqlx::Database,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<bool>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let Sql { text, args } = sql;
    let mut arguments = DB::Arguments::default();
    for arg in args {
        match arg {
            Arg::Text(value) => arguments.add(value),
            Arg::OptText(value) => arguments.add(value),
            Arg::Int(value) => arguments.add(value),
            Arg::OptInt(value) => arguments.add(value),
            Arg::Bool(value) => arguments.add(value),
            Arg::OptBool(value) => arguments.add(value),
        }
        .map_err(|err| StoreError::Database(sqlx::Error::Encode(err)))?;
    }
    Ok((text, arguments))
}

/// `sql` as sqlx runs it on `DB`.
fn sqlx_query<DB>(sql: Sql) -> StoreResult<sqlx::query::Query<'static, DB, DB::Arguments>>
where
    DB: sqlx::Database,
    DB::Arguments: sqlx::IntoArguments<DB>,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<bool>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let (text, arguments) = sqlx_parts::<DB>(sql)?;
    Ok(sqlx::query_with(AssertSqlSafe(text), arguments))
}

impl Conn for sqlx::SqliteConnection {
    type Db = Sqlite;
    type Row = sqlx::sqlite::SqliteRow;

    async fn fetch_all(&mut self, sql: Sql) -> StoreResult<Vec<Self::Row>> {
        Ok(sqlx_query::<Sqlite>(sql)?.fetch_all(self).await?)
    }

    async fn fetch_optional(&mut self, sql: Sql) -> StoreResult<Option<Self::Row>> {
        Ok(sqlx_query::<Sqlite>(sql)?.fetch_optional(self).await?)
    }

    async fn execute(&mut self, sql: Sql) -> StoreResult<u64> {
        Ok(sqlx_query::<Sqlite>(sql)?
            .execute(self)
            .await?
            .rows_affected())
    }
}

impl Conn for sqlx::PgConnection {
    type Db = Postgres;
    type Row = sqlx::postgres::PgRow;

    async fn fetch_all(&mut self, sql: Sql) -> StoreResult<Vec<Self::Row>> {
        Ok(sqlx_query::<Postgres>(sql)?.fetch_all(self).await?)
    }

    async fn fetch_optional(&mut self, sql: Sql) -> StoreResult<Option<Self::Row>> {
        Ok(sqlx_query::<Postgres>(sql)?.fetch_optional(self).await?)
    }

    async fn execute(&mut self, sql: Sql) -> StoreResult<u64> {
        Ok(sqlx_query::<Postgres>(sql)?
            .execute(self)
            .await?
            .rows_affected())
    }
}

impl Sql {
    /// The value of the next `$n` of a text written whole.
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.args.push(value.into());
        self
    }

    pub(crate) async fn fetch_all<C: Conn>(self, conn: &mut C) -> StoreResult<Vec<C::Row>> {
        conn.fetch_all(self).await
    }

    pub(crate) async fn fetch_optional<C: Conn>(self, conn: &mut C) -> StoreResult<Option<C::Row>> {
        conn.fetch_optional(self).await
    }

    /// The one row the statement answers; none is an error, as sqlx's
    /// `fetch_one` has it.
    pub(crate) async fn fetch_one<C: Conn>(self, conn: &mut C) -> StoreResult<C::Row> {
        conn.fetch_optional(self)
            .await?
            .ok_or(StoreError::Database(sqlx::Error::RowNotFound))
    }

    /// Runs the statement; how many rows it changed.
    pub(crate) async fn execute<C: Conn>(self, conn: &mut C) -> StoreResult<u64> {
        conn.execute(self).await
    }

    /// The first column of the one row the statement answers.
    pub(crate) async fn scalar<T: Col, C: Conn>(self, conn: &mut C) -> StoreResult<T> {
        self.fetch_one(conn).await?.col(0)
    }

    /// The first column of the row the statement answers, if one.
    pub(crate) async fn scalar_optional<T: Col, C: Conn>(
        self,
        conn: &mut C,
    ) -> StoreResult<Option<T>> {
        match conn.fetch_optional(self).await? {
            Some(row) => row.col(0).map(Some),
            None => Ok(None),
        }
    }

    /// The first column of every row the statement answers.
    pub(crate) async fn scalars<T: Col, C: Conn>(self, conn: &mut C) -> StoreResult<Vec<T>> {
        conn.fetch_all(self)
            .await?
            .iter()
            .map(|row| row.col(0))
            .collect()
    }
}
