//! The readers' statements: prepared once per connection and kept in the
//! driver's statement cache, their values bound by `$n`, their rows read
//! through the driver's own API. The types the store reads with
//! ([`ValueRef`], [`FromSql`]) are the driver's, so a value reads alike
//! here and through sqlx.

use rusqlite::types::{FromSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Statement};

use crate::StoreError;
use crate::sql_text::{Arg, Sql};

/// A connection of the readers, its statements kept in its cache.
pub(crate) struct Reader {
    conn: Connection,
}

impl Reader {
    /// A reader of `conn`, keeping up to `capacity` statements.
    pub(crate) fn new(conn: Connection, capacity: usize) -> Self {
        conn.set_prepared_statement_cache_capacity(capacity.max(1));
        Self { conn }
    }

    /// Runs `sql` with its values bound, `read` taking its rows; the
    /// statement is reset and its bindings cleared whatever `read` does
    /// (the driver does both when a kept statement goes back to its
    /// cache).
    pub(crate) fn query<R>(
        &mut self,
        sql: &Sql,
        read: impl FnOnce(&mut Rows<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut statement = self.conn.prepare_cached(&sql.text)?;
        bind(&mut statement, &sql.args)?;
        read(&mut Rows {
            rows: statement.raw_query(),
            gave_a_row: false,
        })
    }
}

/// Binds `args` to `statement`, the n-th to `$n` wherever it stands in the
/// text (`$n` is a named parameter to SQLite).
pub(crate) fn bind(statement: &mut Statement<'_>, args: &[Arg]) -> Result<(), StoreError> {
    for (i, arg) in args.iter().enumerate() {
        let name = format!("${}", i + 1);
        let index = statement
            .parameter_index(&name)?
            .ok_or(rusqlite::Error::InvalidParameterName(name))?;
        statement.raw_bind_parameter(index, ToSqlOutput::Borrowed(super::arg_value(arg)))?;
    }
    Ok(())
}

/// The rows of a running statement.
pub(crate) struct Rows<'s> {
    rows: rusqlite::Rows<'s>,
    gave_a_row: bool,
}

impl Rows<'_> {
    /// The next row, `None` once the statement has answered every row
    /// (and however often asked after).
    pub(crate) fn next(&mut self) -> Result<Option<Row<'_>>, StoreError> {
        let row = self.rows.next()?;
        self.gave_a_row |= row.is_some();
        Ok(row.map(Row))
    }

    /// Whether [`Self::next`] has given a row.
    pub(crate) fn gave_a_row(&self) -> bool {
        self.gave_a_row
    }
}

/// One row of a running statement.
pub(crate) struct Row<'r>(&'r rusqlite::Row<'r>);

impl Row<'_> {
    /// Column `i`'s value, borrowed from the row.
    #[inline]
    pub(crate) fn get_ref(&self, i: usize) -> Result<ValueRef<'_>, StoreError> {
        Ok(self.0.get_ref(i)?)
    }

    /// Column `i`'s value as `T`.
    pub(crate) fn get<T: FromSql>(&self, i: usize) -> Result<T, StoreError> {
        Ok(self.0.get(i)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(capacity: usize) -> Reader {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (n INTEGER, r REAL, s TEXT, b BLOB);
             INSERT INTO t VALUES (-7, 2.5, 'Café \"X\"', x'00ff'), (NULL, NULL, '', x'');",
        )
        .unwrap();
        Reader::new(conn, capacity)
    }

    #[test]
    fn reads_every_type_and_no_column_past_the_last() {
        let mut reader = reader(4);
        let sql = Sql::new("SELECT n, r, s, b, n + 1, s || 'é' FROM t ORDER BY rowid");
        let values = reader
            .query(&sql, |rows| {
                let mut values = Vec::new();
                while let Some(row) = rows.next()? {
                    for i in 0..6 {
                        values.push(format!("{:?}", row.get_ref(i)?));
                    }
                    assert!(row.get_ref(6).is_err(), "no column past the last");
                }
                Ok(values)
            })
            .unwrap();
        assert_eq!(values.len(), 12);
        assert_eq!(values[0], format!("{:?}", ValueRef::Integer(-7)));
        assert_eq!(values[1], format!("{:?}", ValueRef::Real(2.5)));
        assert_eq!(
            values[2],
            format!("{:?}", ValueRef::Text("Café \"X\"".as_bytes()))
        );
        assert_eq!(values[3], format!("{:?}", ValueRef::Blob(&[0, 0xff])));
        assert_eq!(values[6], format!("{:?}", ValueRef::Null));
        assert_eq!(values[9], format!("{:?}", ValueRef::Blob(&[])));
        let text = reader.query(&Sql::new("SELECT s FROM t ORDER BY rowid"), |rows| {
            rows.next()?.unwrap().get::<String>(0)
        });
        assert_eq!(text.unwrap(), "Café \"X\"");
    }

    #[test]
    fn binds_each_value_afresh_and_clears_what_a_run_bound() {
        let mut reader = reader(4);
        let sql = "SELECT count(*) FROM t WHERE s = $1 OR n = $2";
        let count = |reader: &mut Reader, args: Vec<Arg>| {
            reader
                .query(
                    &Sql {
                        text: sql.into(),
                        args,
                    },
                    |rows| rows.next()?.unwrap().get::<i64>(0),
                )
                .unwrap()
        };
        assert_eq!(
            count(&mut reader, vec![Arg::Text(String::new()), Arg::Int(-7)]),
            2
        );
        assert_eq!(
            count(&mut reader, vec![Arg::OptText(None), Arg::Int(-7)]),
            1
        );
        // The same statement run with one value: `$2` is NULL again, not
        // the -7 of the runs before.
        assert_eq!(count(&mut reader, vec![Arg::Text(String::new())]), 1);
        let too_many = Sql::with("SELECT $1", [Arg::Int(1), Arg::Int(2)]);
        let err = reader.query(&too_many, |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("$2"), "{err}");
    }

    #[test]
    fn an_error_midway_leaves_the_reader_working() {
        // One statement kept: each new one lets the one before go.
        let mut reader = reader(1);
        // The first row reads; the second fails (integer overflow).
        let overflow = Sql::new(
            "SELECT CASE WHEN rowid = 2 THEN abs(-9223372036854775808) ELSE n END \
             FROM t ORDER BY rowid",
        );
        let mut read = 0;
        let failed = reader.query(&overflow, |rows| {
            while rows.next()?.is_some() {
                read += 1;
            }
            Ok(())
        });
        assert!(failed.unwrap_err().to_string().contains("overflow"));
        assert_eq!(read, 1);
        assert!(reader.query(&Sql::new("SELEC 1"), |_| Ok(())).is_err());
        for n in 0..5 {
            let sql = Sql::with(format!("SELECT $1 + {n}"), [Arg::Int(10)]);
            let value = reader.query(&sql, |rows| rows.next()?.unwrap().get::<i64>(0));
            assert_eq!(value.unwrap(), 10 + n);
        }
        // A statement read to its end answers no more rows, however often
        // it is asked.
        let rows = reader.query(&Sql::new("SELECT 1"), |rows| {
            let first = rows.next()?.is_some();
            Ok((first, rows.next()?.is_none(), rows.next()?.is_none()))
        });
        assert_eq!(rows.unwrap(), (true, true, true));
    }
}
