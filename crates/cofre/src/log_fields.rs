//! A span's fields in the JSON log, written straight into the span's
//! string as one JSON object. The fmt layer writes a span's fields when
//! the span is made, and every request makes one (its method, path and
//! request id, `cofre_api::request_span`) whether or not anything is
//! logged in it; `tracing-subscriber`'s own `JsonFields` gathers them in a
//! map of JSON values first and then writes them a few bytes at a time
//! through an adaptor that checks each piece is UTF-8: a cost every
//! request paid, out of proportion to a short one such as a point read.
//! The log line reads the same: the event formatter parses this
//! object back as it parses `JsonFields`' one.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormattedFields;
use tracing_subscriber::fmt::format::{FormatFields, Writer};

/// Span fields as a JSON object (`{"name":value,…}`).
#[derive(Debug, Default)]
pub struct JsonSpanFields;

impl<'w> FormatFields<'w> for JsonSpanFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut object = Object::default();
        fields.record(&mut object);
        object.finish()?;
        writer.write_str(&object.out)
    }

    fn add_fields(
        &self,
        current: &'w mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let mut object = Object::default();
        fields.record(&mut object);
        object.finish()?;
        join(&mut current.fields, &object.out);
        Ok(())
    }
}

/// Adds the members of the object `more` to the object `into` (either may
/// be empty, as a span with no fields is).
fn join(into: &mut String, more: &str) {
    let Some(members) = more.strip_prefix('{').and_then(|m| m.strip_suffix('}')) else {
        return;
    };
    if members.is_empty() {
        return;
    }
    if into.is_empty() || into == "{}" {
        into.clear();
        into.push_str(more);
        return;
    }
    // `into` is an object with members: open it again at its end.
    into.pop();
    into.push(',');
    into.push_str(members);
    into.push('}');
}

/// Writes the fields it visits as members of one JSON object.
#[derive(Default)]
struct Object {
    out: String,
    /// The first value that could not be written as JSON, if any.
    failed: Option<serde_json::Error>,
}

impl Object {
    fn member(&mut self, field: &Field, value: serde_json::Result<String>) {
        match value {
            Ok(value) => {
                self.out.push(if self.out.is_empty() { '{' } else { ',' });
                // A field's name is a Rust identifier, but quoted as JSON
                // all the same.
                match serde_json::to_string(field.name()) {
                    Ok(name) => self.out.push_str(&name),
                    Err(err) => {
                        self.failed.get_or_insert(err);
                        return;
                    }
                }
                self.out.push(':');
                self.out.push_str(&value);
            }
            Err(err) => {
                self.failed.get_or_insert(err);
            }
        }
    }

    fn finish(&mut self) -> fmt::Result {
        if self.failed.is_some() {
            return Err(fmt::Error);
        }
        if self.out.is_empty() {
            self.out.push('{');
        }
        self.out.push('}');
        Ok(())
    }
}

impl Visit for Object {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.member(field, serde_json::to_string(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.member(field, Ok(value.to_string()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.member(field, Ok(value.to_string()));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.member(field, Ok(value.to_string()));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // As `JsonFields` writes it: a number, or null when not finite.
        self.member(
            field,
            serde_json::to_string(&serde_json::Value::from(value)),
        );
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.member(field, serde_json::to_string(&format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    /// What the log writes, kept.
    #[derive(Clone, Default)]
    struct Kept(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Kept {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Kept {
        type Writer = Kept;
        fn make_writer(&'a self) -> Kept {
            self.clone()
        }
    }

    /// The JSON log lines `log` writes, with span fields written by
    /// `JsonSpanFields` or by `tracing-subscriber`'s own `JsonFields`.
    fn lines(ours: bool, log: impl FnOnce()) -> Vec<serde_json::Value> {
        let kept = Kept::default();
        let builder = tracing_subscriber::fmt().json().with_writer(kept.clone());
        if ours {
            let subscriber = builder.fmt_fields(JsonSpanFields).finish();
            tracing::subscriber::with_default(subscriber, log);
        } else {
            tracing::subscriber::with_default(builder.finish(), log);
        }
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| {
                let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
                // The moment differs between the two runs.
                value.as_object_mut().unwrap().remove("timestamp");
                value
            })
            .collect()
    }

    fn logged() {
        let id = "my \"trace\" \\ 42\n";
        let span = tracing::info_span!(
            "request",
            method = "GET",
            uri = "/v1/transactions?from=2026-01-01",
            request_id = id,
            attempt = tracing::field::Empty,
        );
        let _entered = span.enter();
        tracing::warn!(error = "boom", "inside the request");
        span.record("attempt", 2u64);
        let inner = tracing::info_span!(
            "inner",
            n = -3i64,
            ok = true,
            ratio = 0.5f64,
            bad = f64::NAN,
            debug = ?vec![1, 2]
        );
        let _inner = inner.enter();
        tracing::error!("inside both");
        let empty = tracing::info_span!("empty");
        let _empty = empty.enter();
        tracing::info!("inside all three");
    }

    #[test]
    fn log_lines_read_as_with_the_fields_of_tracing_subscriber() {
        let ours = lines(true, logged);
        assert_eq!(ours.len(), 3);
        assert_eq!(ours, lines(false, logged));
        assert_eq!(ours[0]["span"]["request_id"], "my \"trace\" \\ 42\n");
        assert_eq!(ours[1]["span"]["bad"], serde_json::Value::Null);
        assert_eq!(ours[1]["spans"][0]["attempt"], 2);
    }

    #[test]
    fn objects_join_whatever_is_empty() {
        let mut into = String::new();
        join(&mut into, "{}");
        assert_eq!(into, "");
        join(&mut into, r#"{"a":1}"#);
        assert_eq!(into, r#"{"a":1}"#);
        join(&mut into, r#"{"b":"}"}"#);
        assert_eq!(into, r#"{"a":1,"b":"}"}"#);
        let mut empty = "{}".to_owned();
        join(&mut empty, r#"{"c":true}"#);
        assert_eq!(empty, r#"{"c":true}"#);
    }
}
