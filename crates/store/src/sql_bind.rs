// Running a [`crate::sql_text::Sql`] through sqlx, with `Db`'s argument
// types. Included by `sqlite.rs` and `postgres.rs` with the other `sql_*.rs`
// files.

use crate::sql_text::{Arg, Sql};

/// A built statement as sqlx runs it.
trait Bind {
    /// The statement, with its values bound in order.
    fn query(self) -> StoreResult<sqlx::query::Query<'static, Db, DbArguments>>;

    /// The statement, answering one column.
    fn query_scalar<O>(self) -> StoreResult<sqlx::query::QueryScalar<'static, Db, O, DbArguments>>
    where
        (O,): for<'r> sqlx::FromRow<'r, DbRow>;
}

impl Bind for Sql {
    fn query(self) -> StoreResult<sqlx::query::Query<'static, Db, DbArguments>> {
        let (text, arguments) = sqlx_parts(self)?;
        Ok(sqlx::query_with(sqlx::AssertSqlSafe(text), arguments))
    }

    fn query_scalar<O>(self) -> StoreResult<sqlx::query::QueryScalar<'static, Db, O, DbArguments>>
    where
        (O,): for<'r> sqlx::FromRow<'r, DbRow>,
    {
        let (text, arguments) = sqlx_parts(self)?;
        Ok(sqlx::query_scalar_with(
            sqlx::AssertSqlSafe(text),
            arguments,
        ))
    }
}

type DbArguments = <Db as sqlx::Database>::Arguments;

/// The text and the values as sqlx binds them.
fn sqlx_parts(sql: Sql) -> StoreResult<(String, DbArguments)> {
    use sqlx::Arguments;
    let Sql { text, args } = sql;
    let mut arguments = DbArguments::default();
    for arg in args {
        match arg {
            Arg::Text(value) => arguments.add(value),
            Arg::OptText(value) => arguments.add(value),
            Arg::Int(value) => arguments.add(value),
            Arg::OptInt(value) => arguments.add(value),
            Arg::Bool(value) => arguments.add(value),
        }
        .map_err(|err| StoreError::Database(sqlx::Error::Encode(err)))?;
    }
    Ok((text, arguments))
}
