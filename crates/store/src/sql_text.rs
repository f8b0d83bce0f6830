//! Statements built in pieces: portable text with `$n` placeholders and
//! the values they stand for, owned, so one statement runs either through
//! sqlx (both backends, inside or outside a transaction; `sql_bind.rs`) or
//! on SQLite's readers of the calling thread ([`crate::sync_reads`]).

/// The value of one `$n` placeholder.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Text(String),
    /// Text or NULL (a NULL bound as text, so PostgreSQL infers its type).
    OptText(Option<String>),
    Int(i64),
    /// A number or NULL (a NULL bound as a number, so PostgreSQL infers
    /// its type).
    OptInt(Option<i64>),
    Bool(bool),
    /// A boolean or NULL (a NULL bound as a boolean, so PostgreSQL infers
    /// its type).
    OptBool(Option<bool>),
}

impl From<String> for Arg {
    fn from(value: String) -> Self {
        Arg::Text(value)
    }
}

impl From<&str> for Arg {
    fn from(value: &str) -> Self {
        Arg::Text(value.to_owned())
    }
}

impl From<Option<String>> for Arg {
    fn from(value: Option<String>) -> Self {
        Arg::OptText(value)
    }
}

impl From<i64> for Arg {
    fn from(value: i64) -> Self {
        Arg::Int(value)
    }
}

/// A small number (a day, a count), bound as any number is.
impl From<i32> for Arg {
    fn from(value: i32) -> Self {
        Arg::Int(i64::from(value))
    }
}

impl From<Option<i32>> for Arg {
    fn from(value: Option<i32>) -> Self {
        Arg::OptInt(value.map(i64::from))
    }
}

impl From<Option<i64>> for Arg {
    fn from(value: Option<i64>) -> Self {
        Arg::OptInt(value)
    }
}

impl From<Option<bool>> for Arg {
    fn from(value: Option<bool>) -> Self {
        Arg::OptBool(value)
    }
}

impl From<bool> for Arg {
    fn from(value: bool) -> Self {
        Arg::Bool(value)
    }
}

/// A statement under construction. Every placeholder is written by
/// [`Sql::push_bind`] (or text given whole to [`Sql::with`]), so `$n` is
/// always the n-th value.
#[derive(Debug)]
pub struct Sql {
    pub(crate) text: String,
    pub(crate) args: Vec<Arg>,
}

impl Sql {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            args: Vec::new(),
        }
    }

    /// A whole statement whose text already holds `$1` to `$n`, one for
    /// each of `args` in order.
    pub(crate) fn with<const N: usize>(text: impl Into<String>, args: [Arg; N]) -> Self {
        Self {
            text: text.into(),
            args: args.into(),
        }
    }

    pub(crate) fn push(&mut self, text: impl std::fmt::Display) -> &mut Self {
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.text, "{text}");
        self
    }

    /// This statement inside `before` and `after` (a subquery of an outer
    /// select, say), its values kept: the outer text must hold no
    /// placeholder of its own.
    pub(crate) fn within(&self, before: &str, after: &str) -> Sql {
        Sql {
            text: format!("{before}{}{after}", self.text),
            args: self.args.clone(),
        }
    }

    /// A placeholder for `value`.
    pub(crate) fn push_bind(&mut self, value: impl Into<Arg>) -> &mut Self {
        self.args.push(value.into());
        let n = self.args.len();
        self.push(format_args!("${n}"))
    }

    /// A placeholder for each of `values`, separated by commas.
    pub(crate) fn push_binds<T: Into<Arg>>(
        &mut self,
        values: impl IntoIterator<Item = T>,
    ) -> &mut Self {
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                self.text.push_str(", ");
            }
            self.push_bind(value);
        }
        self
    }

    /// `VALUES (…), (…)`: one parenthesised tuple per item, each filled
    /// by `each` with [`Sql::push_binds`] or [`Sql::push_bind`] and commas.
    pub(crate) fn push_values<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut each: impl FnMut(&mut Values<'_>, T),
    ) -> &mut Self {
        self.text.push_str("VALUES ");
        for (i, item) in items.into_iter().enumerate() {
            self.text.push_str(if i > 0 { ", (" } else { "(" });
            each(
                &mut Values {
                    sql: self,
                    first: true,
                },
                item,
            );
            self.text.push(')');
        }
        self
    }
}

/// One tuple of [`Sql::push_values`].
pub(crate) struct Values<'a> {
    sql: &'a mut Sql,
    first: bool,
}

impl Values<'_> {
    pub(crate) fn push_bind(&mut self, value: impl Into<Arg>) -> &mut Self {
        if !std::mem::take(&mut self.first) {
            self.sql.text.push_str(", ");
        }
        self.sql.push_bind(value);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_the_values_in_order() {
        let mut sql = Sql::new("SELECT id FROM t WHERE a = ");
        sql.push_bind("x")
            .push(" AND b IN (")
            .push_binds([1_i64, 2])
            .push(")");
        assert_eq!(sql.text, "SELECT id FROM t WHERE a = $1 AND b IN ($2, $3)");
        assert_eq!(
            sql.args,
            vec![Arg::Text("x".into()), Arg::Int(1), Arg::Int(2)]
        );
    }

    #[test]
    fn values_are_one_tuple_per_item() {
        let mut sql = Sql::new("INSERT INTO t (a, b) ");
        sql.push_values(["p", "q"], |values, item| {
            values.push_bind(item).push_bind(true);
        });
        assert_eq!(sql.text, "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
        assert_eq!(sql.args.len(), 4);
    }

    #[test]
    fn a_wrapped_statement_keeps_its_values_and_their_numbers() {
        let mut inner = Sql::new("SELECT id FROM t WHERE a = ");
        inner.push_bind("x");
        let outer = inner.within("SELECT count(*) FROM (", ") p");
        assert_eq!(
            outer.text,
            "SELECT count(*) FROM (SELECT id FROM t WHERE a = $1) p"
        );
        assert_eq!(outer.args, inner.args);
    }
}
