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
        EntryId::Projected(handle) => text(out, &handle.to_string()),
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
    digits(out, u64::from(n));
}

/// Money as a JSON number with two decimals, as its `Display` writes it.
fn money(out: &mut String, amount: cofre_domain::Money) {
    let cents = amount.cents();
    if cents < 0 {
        out.push('-');
    }
    let abs = cents.unsigned_abs();
    digits(out, abs / 100);
    out.push('.');
    let fraction = abs % 100;
    digits(out, fraction / 10);
    digits(out, fraction % 10);
}

/// `n` in decimal, without the formatting machinery.
fn digits(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut start = buf.len();
    loop {
        start -= 1;
        // `n % 10` is a digit: it fits a byte.
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &byte in &buf[start..] {
        out.push(char::from(byte));
    }
}

/// A UUID, hyphenated and lower case, in quotes.
fn uuid(out: &mut String, id: Uuid) {
    let mut buf = Uuid::encode_buffer();
    out.push('"');
    out.push_str(id.hyphenated().encode_lower(&mut buf));
    out.push('"');
}

/// A day as `YYYY-MM-DD`, in quotes; years outside 0 to 9999 as the
/// date's own `Display` writes them.
fn day(out: &mut String, date: Date) {
    let year = date.year();
    out.push('"');
    if (0..=9999).contains(&year) {
        let digits = [
            year / 1000,
            year / 100 % 10,
            year / 10 % 10,
            year % 10,
            -1,
            i16::from(date.month()) / 10,
            i16::from(date.month()) % 10,
            -1,
            i16::from(date.day()) / 10,
            i16::from(date.day()) % 10,
        ];
        for d in digits {
            // Each is a digit 0 to 9, or -1 for the dash.
            out.push(match u8::try_from(d) {
                Ok(d) => char::from(b'0' + d),
                Err(_) => '-',
            });
        }
    } else {
        let _ = write!(out, "{date}");
    }
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
mod tests {
    use super::*;
    use crate::json::JsonMoney;
    use crate::routes::transactions::bodies::{
        InstallmentBody, ProjectionBody, TagInTransaction, TransactionBody,
    };
    use cofre_domain::time::format_date;
    use cofre_domain::transaction::{
        InstallmentRef, Source, TagRef, TransactionState, TxStatus, TxType,
    };
    use cofre_domain::{AccountId, CategoryId, Money, PurchaseId, TagId, TransactionId, UserId};
    use jiff::civil::date;
    use proptest::prelude::*;

    /// The entry as the schema's struct holds it: serde's derive writes
    /// the bytes the writer must match.
    fn oracle(t: Transaction, public_url: &str) -> TransactionBody {
        let projection = match &t.id {
            EntryId::Stored(_) => None,
            EntryId::Projected(Handle::Recurrence { rule_id, date }) => {
                Some(ProjectionBody::Recurrence {
                    rule_id: rule_id.to_string(),
                    date: format_date(*date),
                })
            }
            EntryId::Projected(Handle::Installment {
                purchase_id,
                number,
            }) => Some(ProjectionBody::Installment {
                purchase_id: purchase_id.to_string(),
                number: *number,
                count: t.installment.map(|i| i.count),
            }),
            EntryId::Projected(Handle::Bill { card_id, .. }) => Some(ProjectionBody::Bill {
                card_id: card_id.to_string(),
            }),
        };
        TransactionBody {
            id: t.id.to_string(),
            projected: projection.is_some(),
            projection,
            date: format_date(t.state.date),
            tx_type: t.state.tx_type,
            status: t.state.status,
            amount: JsonMoney(t.state.amount),
            currency: t.currency,
            description: t.state.description,
            notes: t.state.notes,
            account_id: t.account_id.to_string(),
            bill_to_account_id: t.bill_to_account_id.map(|a| a.to_string()),
            category_id: t.state.category_id.map(|c| c.to_string()),
            tags: t
                .tags
                .into_iter()
                .map(|g| TagInTransaction {
                    id: g.id.to_string(),
                    title: g.title,
                    color_hex: g.color_hex,
                })
                .collect(),
            recurrence_id: t.recurrence_id.map(|r| r.to_string()),
            recurrence_period_date: t.recurrence_period_date.map(format_date),
            installment: t.installment.map(|i| InstallmentBody {
                purchase_id: i.purchase_id.to_string(),
                number: i.number,
                count: i.count,
                total_amount: JsonMoney(i.total_amount),
            }),
            transfer_group_id: t.transfer_group_id.map(|g| g.to_string()),
            created_by_user: t.created_by_user,
            source: t.source.as_str(),
            hide_from_results: t.state.hide_from_results,
            card_number: t.card_number,
            holder: t.holder,
            holder_is_me: t.holder_is_me,
            original_description: t.original_description,
            receipt_url: t.receipt_name.map(|name| receipts::url(public_url, &name)),
            open_finance: t.open_finance,
        }
    }

    fn written(t: &Transaction) -> String {
        let mut out = String::new();
        write_entry(&mut out, t, "https://cofre.example/");
        out
    }

    fn expected(t: &Transaction) -> String {
        serde_json::to_string(&oracle(t.clone(), "https://cofre.example/")).unwrap()
    }

    fn plain(id: EntryId) -> Transaction {
        Transaction::plain(
            id,
            UserId::new(),
            AccountId::new(),
            "BRL".into(),
            TransactionState {
                date: date(2026, 8, 31),
                tx_type: TxType::Debit,
                status: TxStatus::Posted,
                amount: Money::from_cents(1072),
                description: "iCloud+".into(),
                notes: None,
                category_id: None,
                tag_ids: Vec::new(),
                hide_from_results: false,
            },
        )
    }

    /// Every field set, the text ones with `text` in them.
    fn full(id: EntryId, text: &str) -> Transaction {
        let mut t = plain(id);
        t.state.description = format!("d {text}");
        t.state.notes = Some(format!("n {text}"));
        t.state.category_id = Some(CategoryId::new());
        t.state.hide_from_results = true;
        t.state.status = TxStatus::Pending;
        t.state.tx_type = TxType::Credit;
        t.state.amount = Money::from_cents(-5);
        t.currency = format!("c{text}");
        t.tags = vec![
            TagRef {
                id: TagId::new(),
                title: format!("t {text}"),
                color_hex: "#ff0000".into(),
            },
            TagRef {
                id: TagId::new(),
                title: text.into(),
                color_hex: format!("#{text}"),
            },
        ];
        t.bill_to_account_id = Some(AccountId::new());
        t.recurrence_id = Some(RuleId::new());
        t.recurrence_period_date = Some(date(1, 1, 9));
        t.installment = Some(InstallmentRef {
            purchase_id: PurchaseId::new(),
            number: 12,
            count: 65535,
            total_amount: Money::from_cents(9_999_999_999_999),
        });
        t.transfer_group_id = Some(Uuid::new_v4());
        t.created_by_user = false;
        t.source = Source::OpenFinance;
        t.card_number = Some(format!("1234{text}"));
        t.holder = Some(format!("h {text}"));
        t.holder_is_me = true;
        t.original_description = Some(format!("o {text}"));
        t.receipt_name = Some(format!("r{text}.pdf"));
        t.open_finance = true;
        t
    }

    fn every_kind_of_id() -> Vec<EntryId> {
        vec![
            EntryId::Stored(TransactionId::new()),
            EntryId::Projected(Handle::Recurrence {
                rule_id: RuleId::new(),
                date: date(2026, 2, 28),
            }),
            EntryId::Projected(Handle::Installment {
                purchase_id: PurchaseId::new(),
                number: 100,
            }),
            EntryId::Projected(Handle::Bill {
                card_id: AccountId::new(),
                year: 2026,
                month: 11,
            }),
        ]
    }

    #[test]
    fn writes_what_the_schema_struct_serialises() {
        let tricky = "\"quoted\" back\\slash \u{0}\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f} \
                      é 日本 🎉 \u{2028} </script>";
        for id in every_kind_of_id() {
            let bare = plain(id);
            assert_eq!(written(&bare), expected(&bare));
            let mut counted = plain(id);
            counted.installment = Some(InstallmentRef {
                purchase_id: PurchaseId::new(),
                number: 3,
                count: 10,
                total_amount: Money::from_cents(100),
            });
            assert_eq!(written(&counted), expected(&counted));
            for text in ["", "plain", tricky] {
                let t = full(id, text);
                assert_eq!(written(&t), expected(&t));
            }
        }
    }

    #[test]
    fn pages_write_what_the_page_struct_serialises() {
        let items: Vec<Transaction> = every_kind_of_id()
            .into_iter()
            .map(|id| full(id, "x\"y"))
            .collect();
        for (has_more, cursor) in [(false, None), (true, Some("MjAyNi0wOC0zMXx4"))] {
            let page = crate::routes::transactions::bodies::TransactionPage {
                data: items
                    .iter()
                    .map(|t| oracle(t.clone(), "https://cofre.example"))
                    .collect(),
                has_more,
                next_cursor: cursor.map(str::to_owned),
            };
            assert_eq!(
                write_page(&items, has_more, cursor, "https://cofre.example"),
                serde_json::to_string(&page).unwrap()
            );
        }
        assert_eq!(
            write_page(&[], false, None, ""),
            r#"{"data":[],"has_more":false,"next_cursor":null}"#
        );
    }

    #[test]
    fn single_entries_nest_as_their_envelopes_serialise() {
        use crate::routes::transactions::bodies::{
            CreatedRule, CreatedTransaction, CreationResult, TransactionEnvelope,
        };
        let url = "https://cofre.example/";
        for id in every_kind_of_id() {
            let t = full(id, "a\nb\"c");
            let envelope = TransactionEnvelope {
                transaction: oracle(t.clone(), url),
            };
            assert_eq!(
                write_envelope(&t, url),
                serde_json::to_string(&envelope).unwrap()
            );
            for deduped in [false, true] {
                let created = CreationResult::Transaction(CreatedTransaction {
                    transaction: oracle(t.clone(), url),
                    deduped,
                });
                assert_eq!(
                    write_created(&t, deduped, url),
                    serde_json::to_string(&created).unwrap()
                );
                let rule = RuleId::new();
                for next in [None, Some(&t)] {
                    let created = CreationResult::Rule(CreatedRule {
                        recurrence_id: rule.to_string(),
                        next_occurrence: next.map(|t| oracle(t.clone(), url)),
                        reused: deduped,
                    });
                    assert_eq!(
                        write_rule(rule, next, deduped, url),
                        serde_json::to_string(&created).unwrap()
                    );
                }
            }
        }
    }

    proptest! {
        #[test]
        fn escapes_any_text_as_serde_json_does(
            value in prop_oneof![any::<String>(), "[\\x00-\\x20\"\\\\a-z\u{7f}é\u{2028}🎉]{0,40}"]
        ) {
            let mut out = String::new();
            text(&mut out, &value);
            prop_assert_eq!(out, serde_json::to_string(&value).unwrap());
        }

        #[test]
        fn writes_any_amount_and_count_as_their_display(cents in any::<i64>(), n in any::<u16>()) {
            let mut out = String::new();
            money(&mut out, Money::from_cents(cents));
            prop_assert_eq!(out, Money::from_cents(cents).to_string());
            let mut out = String::new();
            int(&mut out, n);
            prop_assert_eq!(out, n.to_string());
        }

        #[test]
        fn writes_any_day_as_its_display(year in -9999i16..=9999, month in 1i8..=12, day_of in 1i8..=28) {
            let d = date(year, month, day_of);
            let mut out = String::new();
            day(&mut out, d);
            prop_assert_eq!(out, format!("\"{d}\""));
        }
    }
}
