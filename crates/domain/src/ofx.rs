//! OFX statements (Open Financial Exchange), as banks export them: OFX 1.x
//! SGML and OFX 2.x XML. Pure: bytes in, a [`Statement`] or a typed
//! [`OfxError`] out, never a panic, whatever the input.
//!
//! Read: the transactions (`STMTTRN`) of the `BANKTRANLIST` of a bank
//! (`STMTRS`) or credit-card (`CCSTMTRS`) statement, and its `CURDEF`. The
//! sign of `TRNAMT` gives the direction (negative: DEBIT), its absolute
//! value the amount, exact. `FITID`, the bank's id of a transaction, is
//! required: a later import of an overlapping statement skips the ids it
//! already has, and a statement that lists one id twice yields it once.

mod markup;
#[cfg(test)]
mod tests;

use jiff::civil::Date;

use crate::Money;
use crate::money::MoneyError;
use crate::statement::{Statement, StatementKind, StatementRow};
use crate::text::{DESCRIPTION_MAX, currency};
use crate::transaction::TxType;

use markup::Element;

pub use markup::MAX_DEPTH;

/// The connector name of imported statements.
pub const CONNECTOR: &str = "OFX";

/// The OFX limit on a `FITID`.
pub const FITID_MAX: usize = 255;

/// `NAME` (32) and `MEMO` (255) as the OFX spec bounds them fit many times
/// over; longer text is cut here rather than refused.
pub const ORIGINAL_MAX: usize = 1_000;

/// Shown when a transaction has neither `NAME` nor `MEMO`.
pub const NO_DESCRIPTION: &str = "Sem descrição";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OfxError {
    #[error("not an OFX file: it has no <OFX> element")]
    NotOfx,
    #[error("line {line}: a tag does not end with '>' (is the file cut short?)")]
    UnterminatedTag { line: usize },
    #[error("line {line}: elements nested deeper than {MAX_DEPTH} levels")]
    TooDeep { line: usize },
    #[error("<{element}> opened at line {line} is never closed (is the file cut short?)")]
    Unclosed { element: String, line: usize },
    #[error("line {line}: </{element}> closes no open element")]
    StrayClose { element: String, line: usize },
    #[error("the file has no bank or credit-card statement (STMTRS or CCSTMTRS)")]
    NoStatement,
    #[error(
        "the file holds {count} statements of different accounts or currencies; \
         import one statement at a time"
    )]
    MultipleStatements { count: usize },
    #[error("line {line}: CURDEF {value:?} is not a 3-letter currency code")]
    BadCurrency { value: String, line: usize },
    #[error("transaction {index}{} (line {line}): {problem}", .fitid.as_ref().map(|f| format!(", FITID {f}")).unwrap_or_default())]
    Transaction {
        /// 1-based position among the file's transactions.
        index: usize,
        fitid: Option<String>,
        line: usize,
        problem: RowProblem,
    },
}

/// What is wrong with one transaction.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RowProblem {
    #[error("no FITID (the bank's id of the transaction, needed to import it only once)")]
    MissingFitid,
    #[error("FITID longer than {FITID_MAX} characters")]
    LongFitid,
    #[error("no TRNAMT (amount)")]
    MissingAmount,
    #[error("amount {0:?} is not a number")]
    BadAmount(String),
    #[error("amount {0:?} has more than 2 decimal places")]
    TooPrecise(String),
    #[error("amount {0:?} is too large")]
    TooLarge(String),
    #[error("amount is zero")]
    ZeroAmount,
    #[error("no DTPOSTED (date)")]
    MissingDate,
    #[error("date {0:?} is not an OFX date (YYYYMMDD, optionally HHMMSS[.XXX][offset:TZ])")]
    BadDate(String),
    #[error(
        "it is in {found}, not in the statement's {expected}: foreign-currency amounts are not supported"
    )]
    ForeignCurrency { found: String, expected: String },
}

/// Reads a statement file.
pub fn parse(bytes: &[u8]) -> Result<Statement, OfxError> {
    let text = markup::decode(bytes);
    // A broken file that never names OFX is some other file altogether.
    let root = markup::parse(&text).map_err(|err| {
        let names_ofx = text
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"<OFX"));
        if names_ofx { err } else { OfxError::NotOfx }
    })?;
    let ofx = find(&root, "OFX").ok_or(OfxError::NotOfx)?;
    let mut found = Vec::new();
    statements(ofx, &mut found);
    let parts = found
        .into_iter()
        .map(|(kind, node)| Part::read(kind, node))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = parts.first() else {
        return Err(OfxError::NoStatement);
    };
    let (kind, account, currency) = (first.kind, first.account, first.currency.clone());
    if parts
        .iter()
        .any(|p| p.kind != kind || p.account != account || p.currency != currency)
    {
        return Err(OfxError::MultipleStatements { count: parts.len() });
    }
    // Several statements of one account (some banks split by period) are
    // read as one.
    let mut statement = Statement {
        connector: CONNECTOR.to_owned(),
        kind,
        currency,
        rows: Vec::new(),
        repeated: 0,
    };
    let mut seen = std::collections::HashSet::new();
    let mut index = 0;
    for part in parts {
        for node in part.transactions {
            index += 1;
            let row = row(node, statement.currency.as_deref()).map_err(|(fitid, problem)| {
                OfxError::Transaction {
                    index,
                    fitid,
                    line: node.line,
                    problem,
                }
            })?;
            if seen.insert(row.external_id.clone()) {
                statement.rows.push(row);
            } else {
                statement.repeated += 1;
            }
        }
    }
    Ok(statement)
}

/// One `STMTRS` or `CCSTMTRS`.
struct Part<'a> {
    kind: StatementKind,
    /// `ACCTID` of the account the bank names.
    account: Option<&'a str>,
    currency: Option<String>,
    transactions: Vec<&'a Element>,
}

impl<'a> Part<'a> {
    fn read(kind: StatementKind, node: &'a Element) -> Result<Self, OfxError> {
        let from = match kind {
            StatementKind::Bank => "BANKACCTFROM",
            StatementKind::CreditCard => "CCACCTFROM",
        };
        let currency = node
            .child("CURDEF")
            .and_then(|element| Some((element.line, element.value.as_deref()?)))
            .map(|(line, value)| {
                currency("CURDEF", value).map_err(|_| OfxError::BadCurrency {
                    value: value.to_owned(),
                    line,
                })
            })
            .transpose()?;
        let transactions = node
            .child("BANKTRANLIST")
            .map(|list| {
                list.children
                    .iter()
                    .filter(|c| c.name == "STMTTRN")
                    .collect()
            })
            .unwrap_or_default();
        Ok(Part {
            kind,
            account: node.child(from).and_then(|f| f.leaf("ACCTID")),
            currency,
            transactions,
        })
    }
}

/// The first element called `name`, depth first.
fn find<'a>(element: &'a Element, name: &str) -> Option<&'a Element> {
    if element.name == name {
        return Some(element);
    }
    element.children.iter().find_map(|c| find(c, name))
}

/// Every statement under `element`, in document order. The tree is at most
/// [`MAX_DEPTH`] deep, so recursion is bounded.
fn statements<'a>(element: &'a Element, out: &mut Vec<(StatementKind, &'a Element)>) {
    for child in &element.children {
        match child.name.as_str() {
            "STMTRS" => out.push((StatementKind::Bank, child)),
            "CCSTMTRS" => out.push((StatementKind::CreditCard, child)),
            _ => statements(child, out),
        }
    }
}

/// A transaction, or its FITID (when it has one) and what is wrong with it.
fn row(
    node: &Element,
    statement_currency: Option<&str>,
) -> Result<StatementRow, (Option<String>, RowProblem)> {
    let fitid = node.leaf("FITID").map(str::to_owned);
    let fail = |problem: RowProblem| (fitid.clone(), problem);
    let Some(external_id) = fitid.clone() else {
        return Err(fail(RowProblem::MissingFitid));
    };
    if external_id.chars().count() > FITID_MAX {
        return Err(fail(RowProblem::LongFitid));
    }
    let amount_text = node
        .leaf("TRNAMT")
        .ok_or_else(|| fail(RowProblem::MissingAmount))?;
    let signed = parse_amount(amount_text).map_err(fail)?;
    let date_text = node
        .leaf("DTPOSTED")
        .ok_or_else(|| fail(RowProblem::MissingDate))?;
    let date = parse_date(date_text).ok_or_else(|| fail(RowProblem::BadDate(date_text.into())))?;
    // With a CURRENCY aggregate, TRNAMT is in that currency (ORIGCURRENCY
    // only informs: the amount is already in CURDEF).
    if let (Some(found), Some(expected)) = (
        node.child("CURRENCY").and_then(|c| c.leaf("CURSYM")),
        statement_currency,
    ) && !found.eq_ignore_ascii_case(expected)
    {
        return Err(fail(RowProblem::ForeignCurrency {
            found: found.to_owned(),
            expected: expected.to_owned(),
        }));
    }
    let name = node
        .leaf("NAME")
        .or_else(|| node.child("PAYEE").and_then(|p| p.leaf("NAME")));
    let (description, original_description) = describe(name, node.leaf("MEMO"));
    Ok(StatementRow {
        external_id,
        date,
        tx_type: if signed.is_negative() {
            TxType::Debit
        } else {
            TxType::Credit
        },
        amount: signed.abs(),
        description,
        original_description,
    })
}

/// `-12.34`, `+12.34`, `12`, `.5`, and `-12,34` (a decimal comma, seen in
/// files of Brazilian banks). Exact; more than 2 decimals is refused.
fn parse_amount(text: &str) -> Result<Money, RowProblem> {
    let bad = || RowProblem::BadAmount(text.to_owned());
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let separators = unsigned
        .bytes()
        .filter(|b| matches!(b, b'.' | b','))
        .count();
    let shape_ok = separators <= 1
        && unsigned.bytes().any(|b| b.is_ascii_digit())
        && unsigned
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b','));
    if !shape_ok {
        return Err(bad());
    }
    let mut plain = String::with_capacity(unsigned.len() + 3);
    if negative {
        plain.push('-');
    }
    if unsigned.starts_with(['.', ',']) {
        plain.push('0');
    }
    plain.push_str(&unsigned.replace(',', "."));
    if plain.ends_with('.') {
        plain.push('0');
    }
    let amount = Money::parse(&plain).map_err(|e| match e {
        MoneyError::TooPrecise => RowProblem::TooPrecise(text.to_owned()),
        MoneyError::TooLarge => RowProblem::TooLarge(text.to_owned()),
        MoneyError::NotANumber => bad(),
    })?;
    if amount == Money::ZERO {
        return Err(RowProblem::ZeroAmount);
    }
    Ok(amount)
}

/// The calendar date as written: `YYYYMMDD`, optionally followed by a time
/// (`HHMM` or `HHMMSS`), fractions (`.XXX`) and a zone (`[-3:BRT]`). The
/// zone does not move the date: the bank's day is the day.
fn parse_date(text: &str) -> Option<Date> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i16> {
        let part = bytes.get(range)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let year = digits(0..4)?;
    let month = i8::try_from(digits(4..6)?).ok()?;
    let day = i8::try_from(digits(6..8)?).ok()?;
    let date = Date::new(year, month, day).ok()?;

    let mut rest = &text[8..];
    let time_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !matches!(time_len, 0 | 4 | 6) {
        return None;
    }
    rest = &rest[time_len..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if time_len == 0 || len == 0 {
            return None;
        }
        rest = &fraction[len..];
    }
    if let Some(zone) = rest.strip_prefix('[') {
        let zone = zone.strip_suffix(']')?;
        let offset = zone.split_once(':').map_or(zone, |(offset, _)| offset);
        let offset = offset.strip_prefix(['-', '+']).unwrap_or(offset);
        let offset_ok = !offset.is_empty()
            && offset.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && !zone.contains(['[', ']']);
        if !offset_ok {
            return None;
        }
        rest = "";
    }
    rest.is_empty().then_some(date)
}

/// The description (`NAME`, else `MEMO`, blanks collapsed, at most
/// [`DESCRIPTION_MAX`] characters) and the original text: both as received,
/// "NAME - MEMO" when they differ.
fn describe(name: Option<&str>, memo: Option<&str>) -> (String, Option<String>) {
    let name = name.filter(|n| !n.is_empty());
    let memo = memo.filter(|m| !m.is_empty());
    let original = match (name, memo) {
        (Some(n), Some(m)) if collapse(n) != collapse(m) => Some(format!("{n} - {m}")),
        (Some(text), _) | (None, Some(text)) => Some(text.to_owned()),
        (None, None) => None,
    };
    let description = name
        .or(memo)
        .map(|text| truncate(&collapse(text), DESCRIPTION_MAX))
        .unwrap_or_else(|| NO_DESCRIPTION.to_owned());
    (
        description,
        original.map(|text| truncate(&text, ORIGINAL_MAX)),
    )
}

/// Runs of blanks become one space (bank files pad with spaces).
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => text[..end].trim_end().to_owned(),
        None => text.to_owned(),
    }
}
