//! The readers' own statements: prepared on a reader's connection and
//! read a value at a time straight from SQLite's column values.
//!
//! The driver reads a value in four calls into SQLite (the column count
//! for its bounds check, then the column's type, its text and its length,
//! each of these three entering and leaving the connection's mutex); a
//! list page reads 28 values a row, and those calls were the dearest part
//! of a row after SQLite's own stepping. Here a row's values are found
//! with one call ([`ffi::sqlite3_column_value`] of its first column; see
//! [`Layout`]) and read with calls on each value that take no lock. The
//! types the store reads with ([`ValueRef`], [`FromSql`]) are the
//! driver's, so a value reads alike either way.

use std::ffi::{CStr, c_int};
use std::ptr::NonNull;

use rusqlite::types::{FromSql, ValueRef};
use rusqlite::{Connection, ffi};

use crate::StoreError;
use crate::sql_text::{Arg, Sql};

/// A connection of the readers and the statements prepared on it.
pub(crate) struct Reader {
    // Declared before the connection, so dropped (finalized) before it
    // closes: SQLite does not close a connection with statements left.
    statements: hashlink::LruCache<Box<str>, Statement>,
    conn: Connection,
}

impl Reader {
    /// A reader of `conn`, keeping up to `capacity` statements.
    pub(crate) fn new(conn: Connection, capacity: usize) -> Self {
        Self {
            statements: hashlink::LruCache::new(capacity.max(1)),
            conn,
        }
    }

    /// Runs `sql` with its values bound, `read` taking its rows; the
    /// statement is reset (its bindings cleared) whatever `read` does.
    pub(crate) fn query<R>(
        &mut self,
        sql: &Sql,
        read: impl FnOnce(&mut Rows<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        if !self.statements.contains_key(sql.text.as_str()) {
            let statement = Statement::prepare(&self.conn, &sql.text)?;
            self.statements.insert(sql.text.as_str().into(), statement);
        }
        let statement = self
            .statements
            .get_mut(sql.text.as_str())
            .expect("the statement was just kept");
        let mut rows = Rows {
            statement: Running::bind(statement, &sql.args)?,
            done: false,
            layout: Layout::Unknown,
        };
        read(&mut rows)
    }
}

/// A statement prepared on a reader's connection.
struct Statement {
    raw: NonNull<ffi::sqlite3_stmt>,
    /// The connection's handle, for its error messages.
    db: *mut ffi::sqlite3,
    /// The columns of a row.
    columns: usize,
    /// The statement's parameter index of `$1`, `$2`, … in order.
    slots: Vec<c_int>,
}

// SAFETY: a statement is used only through its reader, by the one thread
// that holds the reader (taken from the idle set, never shared), like the
// connection it belongs to, which is `Send`.
unsafe impl Send for Statement {}

impl Statement {
    fn prepare(conn: &Connection, text: &str) -> Result<Self, StoreError> {
        let length = c_int::try_from(text.len())
            .map_err(|_| StoreError::Corrupt("a statement too long for SQLite".into()))?;
        // SAFETY: the handle is `conn`'s, open for the call; SQLite reads
        // `length` bytes of `text` and writes the statement's pointer.
        let db = unsafe { conn.handle() };
        let mut raw = std::ptr::null_mut();
        let code = unsafe {
            ffi::sqlite3_prepare_v3(
                db,
                text.as_ptr().cast(),
                length,
                ffi::SQLITE_PREPARE_PERSISTENT,
                &mut raw,
                std::ptr::null_mut(),
            )
        };
        if code != ffi::SQLITE_OK {
            return Err(failure(db, code));
        }
        let raw = NonNull::new(raw)
            .ok_or_else(|| StoreError::Corrupt("a statement with no SQL in it".into()))?;
        let mut statement = Self {
            raw,
            db,
            columns: 0,
            slots: Vec::new(),
        };
        // SAFETY: `raw` is the statement just prepared.
        unsafe {
            statement.columns =
                usize::try_from(ffi::sqlite3_column_count(raw.as_ptr())).unwrap_or(0);
            let count = ffi::sqlite3_bind_parameter_count(raw.as_ptr());
            for index in 1..=count {
                let name = ffi::sqlite3_bind_parameter_name(raw.as_ptr(), index);
                let n = (!name.is_null())
                    .then(|| CStr::from_ptr(name).to_str().ok())
                    .flatten()
                    .and_then(|name| name.strip_prefix('$'))
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| StoreError::Corrupt(format!("parameter {index} is not $n")))?;
                if statement.slots.len() < n {
                    statement.slots.resize(n, 0);
                }
                statement.slots[n - 1] = index;
            }
        }
        Ok(statement)
    }
}

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: the statement is this one's alone and not used after.
        unsafe { ffi::sqlite3_finalize(self.raw.as_ptr()) };
    }
}

/// The error SQLite gave `code` for, as the driver reports it.
#[cold]
fn failure(db: *mut ffi::sqlite3, code: c_int) -> StoreError {
    // SAFETY: `db` is an open connection's handle; its message is text
    // SQLite owns until the next call, copied here.
    let message = unsafe {
        let text = ffi::sqlite3_errmsg(db);
        (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), message).into()
}

/// A statement with its values bound, reset when dropped.
struct Running<'s>(&'s mut Statement);

impl<'s> Running<'s> {
    fn bind(statement: &'s mut Statement, args: &[Arg]) -> Result<Self, StoreError> {
        let running = Running(statement);
        let statement = &*running.0;
        let raw = statement.raw.as_ptr();
        for (i, arg) in args.iter().enumerate() {
            let index = statement.slots.get(i).copied().filter(|index| *index > 0);
            let index = index.ok_or_else(|| {
                StoreError::from(rusqlite::Error::InvalidParameterName(format!("${}", i + 1)))
            })?;
            // SAFETY: `index` is one of the statement's parameters; SQLite
            // copies the text's `length` bytes (TRANSIENT).
            let code = match super::arg_value(arg) {
                ValueRef::Null => unsafe { ffi::sqlite3_bind_null(raw, index) },
                ValueRef::Integer(n) => unsafe { ffi::sqlite3_bind_int64(raw, index, n) },
                ValueRef::Text(text) => {
                    let length = c_int::try_from(text.len())
                        .map_err(|_| StoreError::Corrupt("a value too long for SQLite".into()))?;
                    unsafe {
                        ffi::sqlite3_bind_text(
                            raw,
                            index,
                            text.as_ptr().cast(),
                            length,
                            ffi::SQLITE_TRANSIENT(),
                        )
                    }
                }
                ValueRef::Real(_) | ValueRef::Blob(_) => {
                    unreachable!("an argument is text, an integer or NULL")
                }
            };
            if code != ffi::SQLITE_OK {
                return Err(failure(statement.db, code));
            }
        }
        Ok(running)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        // SAFETY: the statement is held for this run; resetting ends it
        // (every row read from it is gone: rows borrow the run).
        unsafe {
            ffi::sqlite3_reset(self.0.raw.as_ptr());
            ffi::sqlite3_clear_bindings(self.0.raw.as_ptr());
        }
    }
}

/// Where a row's values are.
///
/// SQLite answers a row as registers `P1` to `P1+P2-1` of its machine
/// (the `ResultRow` opcode, <https://www.sqlite.org/opcode.html>): the
/// values lie one after another, a register's size apart, and
/// `sqlite3_column_value(i)` is the `i`-th of them. So after one call
/// for the first value, the others are found by adding. That is checked
/// on each run's first row against SQLite's own answer for every column;
/// a build of SQLite where it did not hold would be read a call a value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    /// Not checked yet in this run.
    Unknown,
    /// Value `i` lies `i * stride` bytes after the first.
    Strided(usize),
    /// Each value is asked of SQLite.
    Called,
}

/// The rows of a running statement, read one at a time.
pub(crate) struct Rows<'s> {
    statement: Running<'s>,
    /// The statement answered its last row (stepping it again would run
    /// it again).
    done: bool,
    layout: Layout,
}

impl Rows<'_> {
    /// The next row, `None` after the last. A row borrows the rows: it
    /// is gone before the statement steps again.
    pub(crate) fn next(&mut self) -> Result<Option<Row<'_>>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let statement = &*self.statement.0;
        let raw = statement.raw.as_ptr();
        // SAFETY: the statement is bound and held for this run.
        match unsafe { ffi::sqlite3_step(raw) } {
            ffi::SQLITE_ROW => {
                if statement.columns == 0 {
                    let first = std::ptr::null_mut();
                    return Ok(Some(Row::new(statement, first, Layout::Called)));
                }
                // SAFETY: the statement stands on a row with a column 0.
                let first = unsafe { ffi::sqlite3_column_value(raw, 0) };
                if self.layout == Layout::Unknown {
                    self.layout = layout_of(raw, statement.columns, first);
                }
                Ok(Some(Row::new(statement, first, self.layout)))
            }
            ffi::SQLITE_DONE => {
                self.done = true;
                Ok(None)
            }
            code => {
                self.done = true;
                Err(failure(statement.db, code))
            }
        }
    }
}

/// Whether the `columns` values of the row `raw` stands on lie one
/// register apart from `first`, its column 0 (see [`Layout`]): compared
/// with SQLite's answer for each.
#[cold]
fn layout_of(
    raw: *mut ffi::sqlite3_stmt,
    columns: usize,
    first: *mut ffi::sqlite3_value,
) -> Layout {
    if columns == 1 {
        return Layout::Strided(0);
    }
    // SAFETY: the statement stands on a row; each `i` is one of its
    // columns. Only the pointers are compared.
    let at = |i: usize| unsafe { ffi::sqlite3_column_value(raw, i as c_int) } as usize;
    let Some(stride) = at(1).checked_sub(first as usize).filter(|s| *s > 0) else {
        return Layout::Called;
    };
    let strided = (2..columns).all(|i| {
        i.checked_mul(stride)
            .and_then(|offset| (first as usize).checked_add(offset))
            == Some(at(i))
    });
    if strided {
        Layout::Strided(stride)
    } else {
        Layout::Called
    }
}

/// The row a statement stands on.
pub(crate) struct Row<'r> {
    statement: &'r Statement,
    /// Column 0's value (null for a row of no columns).
    first: *mut ffi::sqlite3_value,
    layout: Layout,
}

impl<'r> Row<'r> {
    fn new(statement: &'r Statement, first: *mut ffi::sqlite3_value, layout: Layout) -> Self {
        Self {
            statement,
            first,
            layout,
        }
    }

    /// Column `i`'s value, borrowed from the row (inlined: a caller that
    /// wants one type keeps only its branch).
    #[inline(always)]
    pub(crate) fn get_ref(&self, i: usize) -> Result<ValueRef<'_>, StoreError> {
        if i >= self.statement.columns {
            return Err(rusqlite::Error::InvalidColumnIndex(i).into());
        }
        // SAFETY: the statement stands on this row (it cannot step while
        // the row is borrowed) and `i` is one of its columns: its value is
        // register `i` of the row's ([`Layout`], checked on this run's
        // first row), or SQLite finds it. The value is read by this thread
        // alone (see `Statement`), so it needs no lock; its text or bytes
        // stay where they are until the statement steps or is reset, which
        // the borrow of the row rules out, and each is read the way its
        // type is, so none is converted.
        unsafe {
            let value = match self.layout {
                Layout::Strided(stride) => self.first.byte_add(i * stride),
                Layout::Unknown | Layout::Called => {
                    ffi::sqlite3_column_value(self.statement.raw.as_ptr(), i as c_int)
                }
            };
            Ok(match ffi::sqlite3_value_type(value) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(value)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(value)),
                ffi::SQLITE_TEXT => {
                    let text = ffi::sqlite3_value_text(value);
                    let length = ffi::sqlite3_value_bytes(value);
                    if text.is_null() {
                        return Err(failure(self.statement.db, ffi::SQLITE_NOMEM));
                    }
                    ValueRef::Text(std::slice::from_raw_parts(text, length.max(0) as usize))
                }
                ffi::SQLITE_BLOB => {
                    let blob = ffi::sqlite3_value_blob(value);
                    let length = ffi::sqlite3_value_bytes(value);
                    if length <= 0 {
                        // An empty BLOB's pointer is NULL.
                        ValueRef::Blob(&[])
                    } else if blob.is_null() {
                        return Err(failure(self.statement.db, ffi::SQLITE_NOMEM));
                    } else {
                        ValueRef::Blob(std::slice::from_raw_parts(blob.cast(), length as usize))
                    }
                }
                _ => ValueRef::Null,
            })
        }
    }

    /// Column `i`'s value as `T`.
    pub(crate) fn get<T: FromSql>(&self, i: usize) -> Result<T, StoreError> {
        let value = self.get_ref(i)?;
        T::column_result(value).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(e)).into()
        })
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

    /// Every value of `sql`'s rows, as the driver reads them and as a
    /// reader does.
    fn both(reader: &mut Reader, sql: &str) -> (Vec<String>, Vec<String>) {
        let mut driver = Vec::new();
        let mut statement = reader.conn.prepare(sql).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for i in 0..columns {
                driver.push(format!("{:?}", row.get_ref(i).unwrap()));
            }
        }
        drop(rows);
        drop(statement);
        let ours = reader
            .query(&Sql::new(sql), |rows| {
                let mut ours = Vec::new();
                while let Some(row) = rows.next()? {
                    for i in 0..columns {
                        ours.push(format!("{:?}", row.get_ref(i)?));
                    }
                    assert!(row.get_ref(columns).is_err(), "no column past the last");
                }
                Ok(ours)
            })
            .unwrap();
        (driver, ours)
    }

    #[test]
    fn reads_every_type_as_the_driver_does() {
        let mut reader = reader(4);
        let (driver, ours) = both(
            &mut reader,
            "SELECT n, r, s, b, n + 1, s || 'é' FROM t ORDER BY rowid",
        );
        assert_eq!(ours, driver);
        assert_eq!(ours.len(), 12);
        assert_eq!(
            ours[2],
            format!("{:?}", ValueRef::Text("Café \"X\"".as_bytes()))
        );
        assert_eq!(ours[3], format!("{:?}", ValueRef::Blob(&[0, 0xff])));
        assert_eq!(ours[6], format!("{:?}", ValueRef::Null));
        assert_eq!(ours[9], format!("{:?}", ValueRef::Blob(&[])));
    }

    #[test]
    fn a_rows_values_are_found_a_register_apart_and_read_alike_asked_one_by_one() {
        let mut reader = reader(4);
        let sql = Sql::new("SELECT n, r, s, b, n + 1, s || 'é', 7 FROM t ORDER BY rowid");
        let mut read = |called: bool| {
            reader
                .query(&sql, |rows| {
                    if called {
                        rows.layout = Layout::Called;
                    }
                    let (mut values, mut layouts) = (Vec::new(), Vec::new());
                    while let Some(row) = rows.next()? {
                        layouts.push(row.layout);
                        for i in 0..7 {
                            values.push(format!("{:?}", row.get_ref(i)?));
                        }
                    }
                    Ok((values, layouts))
                })
                .unwrap()
        };
        let (strided, layouts) = read(false);
        assert_eq!(layouts.len(), 2);
        assert!(
            layouts
                .iter()
                .all(|layout| matches!(layout, Layout::Strided(stride) if *stride > 0)),
            "{layouts:?}"
        );
        let (called, layouts) = read(true);
        assert_eq!(layouts, [Layout::Called, Layout::Called]);
        assert_eq!(strided, called);
        assert_eq!(strided.len(), 14);
        // One column needs no stride.
        let one = reader.query(&Sql::new("SELECT s FROM t ORDER BY rowid"), |rows| {
            let row = rows.next()?.unwrap();
            Ok((row.layout, row.get::<String>(0)?))
        });
        assert_eq!(one.unwrap(), (Layout::Strided(0), "Café \"X\"".to_owned()));
        // Values that do not lie where the stride says are asked one by
        // one: the check compares every column with SQLite's answer.
        let elsewhere = reader.query(&Sql::new("SELECT n, s, b FROM t"), |rows| {
            let row = rows.next()?.unwrap();
            let raw = row.statement.raw.as_ptr();
            let shifted = row.first.wrapping_byte_add(8);
            Ok((
                layout_of(raw, 3, row.first),
                layout_of(raw, 3, shifted),
                layout_of(raw, 4, row.first),
            ))
        });
        let (right, shifted, past_the_last) = elsewhere.unwrap();
        assert!(matches!(right, Layout::Strided(stride) if stride > 0));
        assert_eq!(shifted, Layout::Called);
        assert_eq!(
            past_the_last,
            Layout::Called,
            "a column past the last is not a register"
        );
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
    fn an_error_midway_leaves_the_reader_working_and_statements_are_let_go() {
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
        assert_eq!(reader.statements.len(), 1);
        // A statement read to its end answers no more rows, however often
        // it is asked.
        let rows = reader.query(&Sql::new("SELECT 1"), |rows| {
            let first = rows.next()?.is_some();
            Ok((first, rows.next()?.is_none(), rows.next()?.is_none()))
        });
        assert_eq!(rows.unwrap(), (true, true, true));
    }
}
