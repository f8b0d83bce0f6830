//! A transaction body written as JSON straight from the entry: field names
//! are literals written once, ids and days go from their binary form into
//! the output without a string of their own, and only the text a user gave
//! is escaped. A page of rows computed afresh spent a sixth of its CPU
//! building each row's strings and serialising them field by field.
//!
//! Every response that carries a transaction body writes it here;
//! [`TransactionBody`](super::bodies::TransactionBody) is its schema, and
//! the tests below hold this writer to the bytes that schema's serde
//! derive writes for the same entry.

use std::fmt::Write;

use uuid::Uuid;

use cofre_domain::RuleId;
use cofre_domain::projection::Handle;
use cofre_domain::text::push_padded;
use cofre_domain::time::push_date;
use cofre_domain::transaction::{EntryId, Transaction};
use jiff::civil::Date;

use crate::receipts;

/// About what one row takes, to size a page's buffer once.
const ROW_BYTES: usize = 768;

/// `{"transaction": entry}`, as `TransactionEnvelope` describes it.
pub fn write_envelope(t: &Transaction, public_url: &str) -> String {
    let mut out = String::with_capacity(ROW_BYTES);
    out.push_str("{\"transaction\":");
    write_entry(&mut out, t, public_url);
    out.push('}');
    out
}

/// A created row, as `CreatedTransaction` describes it.
pub fn write_created(t: &Transaction, deduped: bool, public_url: &str) -> String {
    let mut out = String::with_capacity(ROW_BYTES);
    out.push_str("{\"transaction\":");
    write_entry(&mut out, t, public_url);
    out.push_str(",\"deduped\":");
    flag(&mut out, deduped);
    out.push('}');
    out
}

/// A created rule and its next occurrence, as `CreatedRule` describes it.
pub fn write_rule(
    rule: RuleId,
    next: Option<&Transaction>,
    reused: bool,
    public_url: &str,
) -> String {
    let mut out = String::with_capacity(ROW_BYTES);
    out.push_str("{\"recurrence_id\":");
    uuid(&mut out, rule.0);
    out.push_str(",\"next_occurrence\":");
    opt(&mut out, next, |out, t| write_entry(out, t, public_url));
    out.push_str(",\"reused\":");
    flag(&mut out, reused);
    out.push('}');
    out
}

/// A page of entries as `TransactionPage` describes it.
pub fn write_page(
    items: &[Transaction],
    has_more: bool,
    next_cursor: Option<&str>,
    public_url: &str,
) -> String {
    let mut out = String::with_capacity(64 + items.len() * ROW_BYTES);
    out.push_str("{\"data\":[");
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_entry(&mut out, t, public_url);
    }
    out.push_str("],\"has_more\":");
    flag(&mut out, has_more);
    out.push_str(",\"next_cursor\":");
    opt(&mut out, next_cursor, text);
    out.push('}');
    out
}

/// One entry, its fields in the order of `TransactionBody`.
pub fn write_entry(out: &mut String, t: &Transaction, public_url: &str) {
    out.push_str("{\"id\":");
    match &t.id {
        EntryId::Stored(id) => uuid(out, id.0),
        EntryId::Projected(handle) => {
            // A handle's text has nothing to escape.
            out.push('"');
            handle.push_to(out);
            out.push('"');
        }
    }
    out.push_str(",\"projected\":");
    match &t.id {
        EntryId::Stored(_) => out.push_str("false,\"projection\":null"),
        EntryId::Projected(Handle::Recurrence { rule_id, date }) => {
            out.push_str("true,\"projection\":{\"kind\":\"recurrence\",\"rule_id\":");
            uuid(out, rule_id.0);
            out.push_str(",\"date\":");
            day(out, *date);
            out.push('}');
        }
        EntryId::Projected(Handle::Installment {
            purchase_id,
            number,
        }) => {
            out.push_str("true,\"projection\":{\"kind\":\"installment\",\"purchase_id\":");
            uuid(out, purchase_id.0);
            out.push_str(",\"number\":");
            int(out, *number);
            out.push_str(",\"count\":");
            opt(out, t.installment.map(|i| i.count), int);
            out.push('}');
        }
        EntryId::Projected(Handle::Bill { card_id, .. }) => {
            out.push_str("true,\"projection\":{\"kind\":\"bill\",\"card_id\":");
            uuid(out, card_id.0);
            out.push('}');
        }
    }
    out.push_str(",\"date\":");
    day(out, t.state.date);
    out.push_str(",\"type\":\"");
    out.push_str(t.state.tx_type.as_str());
    out.push_str("\",\"status\":\"");
    out.push_str(t.state.status.as_str());
    out.push_str("\",\"amount\":");
    money(out, t.state.amount);
    out.push_str(",\"currency\":");
    text(out, &t.currency);
    out.push_str(",\"description\":");
    text(out, &t.state.description);
    out.push_str(",\"notes\":");
    opt(out, t.state.notes.as_deref(), text);
    out.push_str(",\"account_id\":");
    uuid(out, t.account_id.0);
    out.push_str(",\"bill_to_account_id\":");
    opt(out, t.bill_to_account_id.map(|a| a.0), uuid);
    out.push_str(",\"category_id\":");
    opt(out, t.state.category_id.map(|c| c.0), uuid);
    out.push_str(",\"tags\":[");
    for (i, tag) in t.tags.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"id\":");
        uuid(out, tag.id.0);
        out.push_str(",\"title\":");
        text(out, &tag.title);
        out.push_str(",\"color_hex\":");
        text(out, &tag.color_hex);
        out.push('}');
    }
    out.push_str("],\"recurrence_id\":");
    opt(out, t.recurrence_id.map(|r| r.0), uuid);
    out.push_str(",\"recurrence_period_date\":");
    opt(out, t.recurrence_period_date, day);
    out.push_str(",\"installment\":");
    opt(out, t.installment, |out, i| {
        out.push_str("{\"purchase_id\":");
        uuid(out, i.purchase_id.0);
        out.push_str(",\"number\":");
        int(out, i.number);
        out.push_str(",\"count\":");
        int(out, i.count);
        out.push_str(",\"total_amount\":");
        money(out, i.total_amount);
        out.push('}');
    });
    out.push_str(",\"transfer_group_id\":");
    opt(out, t.transfer_group_id, uuid);
    out.push_str(",\"created_by_user\":");
    flag(out, t.created_by_user);
    out.push_str(",\"source\":\"");
    out.push_str(t.source.as_str());
    out.push_str("\",\"hide_from_results\":");
    flag(out, t.state.hide_from_results);
    out.push_str(",\"card_number\":");
    opt(out, t.card_number.as_deref(), text);
    out.push_str(",\"holder\":");
    opt(out, t.holder.as_deref(), text);
    out.push_str(",\"holder_is_me\":");
    flag(out, t.holder_is_me);
    out.push_str(",\"original_description\":");
    opt(out, t.original_description.as_deref(), text);
    out.push_str(",\"receipt_url\":");
    opt(out, t.receipt_name.as_deref(), |out, name| {
        text(out, &receipts::url(public_url, name));
    });
    out.push_str(",\"open_finance\":");
    flag(out, t.open_finance);
    out.push('}');
}

/// `value` written by `write`, or `null`.
fn opt<T>(out: &mut String, value: Option<T>, write: impl FnOnce(&mut String, T)) {
    match value {
        Some(value) => write(out, value),
        None => out.push_str("null"),
    }
}

fn flag(out: &mut String, value: bool) {
    out.push_str(if value { "true" } else { "false" });
}

fn int(out: &mut String, n: u16) {
    push_padded(out, u64::from(n), 1);
}

/// Money as a JSON number with two decimals, as its `Display` writes it.
fn money(out: &mut String, amount: cofre_domain::Money) {
    let cents = amount.cents();
    if cents < 0 {
        out.push('-');
    }
    let abs = cents.unsigned_abs();
    push_padded(out, abs / 100, 1);
    out.push('.');
    push_padded(out, abs % 100, 2);
}

/// A UUID, hyphenated and lower case, in quotes.
fn uuid(out: &mut String, id: Uuid) {
    let mut buf = Uuid::encode_buffer();
    out.push('"');
    out.push_str(id.hyphenated().encode_lower(&mut buf));
    out.push('"');
}

/// A day as `YYYY-MM-DD` ([`push_date`]), in quotes.
fn day(out: &mut String, date: Date) {
    out.push('"');
    push_date(out, date);
    out.push('"');
}

/// A JSON string, escaped as serde_json escapes it: `"` and `\`, and the
/// control characters below U+0020 (the short forms where JSON has one,
/// `\u00XX` for the rest); everything else as is.
fn text(out: &mut String, value: &str) {
    out.push('"');
    let mut start = 0;
    for (i, byte) in value.bytes().enumerate() {
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `i` is the index of an ASCII byte: a character boundary.
        out.push_str(&value[start..i]);
        if short.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&value[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests;
