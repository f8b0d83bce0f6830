//! Every parser that takes client text or bytes, fed arbitrary input:
//! each answers with a value or a clean refusal, never a panic; and what
//! the server writes out parses back to the same value.

use proptest::prelude::*;

use cofre_domain::card::BillMonth;
use cofre_domain::money::Money;
use cofre_domain::projection::{Frequency, Handle};
use cofre_domain::time::{format_date, parse_date};
use cofre_domain::transaction::{EntryId, TxStatus, TxType};
use cofre_domain::{AccountId, auth, ofx, receipt, series};

/// Text that looks like what the parsers expect, with every kind of
/// damage: random digits, separators, prefixes, unicode and control
/// characters.
fn near_miss() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9:.,+-]{0,30}",
        "-?[0-9]{0,20}([.,][0-9]{0,5})?",
        "[0-9]{1,6}-[0-9]{1,3}-[0-9]{1,3}",
        "mocked-(recurrence|installment|bill|x)?:[0-9a-f-]{0,40}:[0-9a-zA-Z:-]{0,16}",
        "[\\x00-\\x1f\\u{80}-\\u{10ffff}]{0,10}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn text_parsers_never_panic(text in near_miss()) {
        let _ = Money::parse(&text);
        let _ = text.parse::<Money>();
        let _ = parse_date(&text);
        let _ = cofre_domain::time::date_field("date", &text);
        let _ = Handle::parse(&text);
        let _ = EntryId::parse(&text);
        let _ = BillMonth::parse_key(&text);
        let _ = AccountId::parse(&text);
        let _ = Frequency::parse(&text);
        let _ = TxType::parse(&text);
        let _ = TxStatus::parse(&text);
        let _ = series::Scope::parse(&text);
        let _ = auth::parse_scopes(&text);
        let _ = auth::split_key(&text);
        let _ = receipt::parse_name(&text);
    }

    #[test]
    fn byte_parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2_048)) {
        let _ = ofx::parse(&bytes);
        let _ = receipt::ReceiptKind::sniff(&bytes);
    }

    #[test]
    fn ofx_shaped_garbage_never_panics(
        tags in proptest::collection::vec(
            ("(OFX|STMTTRN|BANKTRANLIST|TRNAMT|DTPOSTED|FITID|NAME|MEMO|TRNTYPE|CURDEF|BANKACCTFROM|CCACCTFROM|ACCTID|/OFX|/STMTTRN|[A-Z]{1,8})",
             "[ -~&;<>]{0,24}"),
            0..40),
        header in prop_oneof![Just("OFXHEADER:100\nDATA:OFXSGML\n\n"), Just("<?xml version=\"1.0\"?><?OFX OFXHEADER=\"200\"?>"), Just("")],
    ) {
        let mut text = header.to_owned();
        for (tag, value) in tags {
            text.push_str(&format!("<{tag}>{value}"));
        }
        let _ = ofx::parse(text.as_bytes());
    }

    #[test]
    fn money_written_out_parses_back(cents in -9_999_999_999_999_i64..=9_999_999_999_999) {
        let money = Money::from_cents(cents);
        prop_assert_eq!(Money::parse(&money.to_string()), Ok(money));
    }

    #[test]
    fn dates_written_out_parse_back(days in 0_i32..3_652_058) {
        let date = jiff::civil::date(1, 1, 1)
            .checked_add(jiff::Span::new().days(days))
            .unwrap();
        prop_assert_eq!(parse_date(format_date(date)), Some(date));
    }

    #[test]
    fn handles_written_out_parse_back(year in 1_i16..=9999, month in 1_i8..=12, n in 1_u16..=420, days in 0_i32..3_652_058) {
        let card = AccountId::new();
        let bill = Handle::Bill { card_id: card, year, month };
        prop_assert_eq!(Handle::parse(&bill.to_string()), Some(bill));
        let installment = Handle::Installment {
            purchase_id: cofre_domain::PurchaseId::new(),
            number: n,
        };
        prop_assert_eq!(Handle::parse(&installment.to_string()), Some(installment));
        let date = jiff::civil::date(1, 1, 1).checked_add(jiff::Span::new().days(days)).unwrap();
        let occurrence = Handle::Recurrence { rule_id: cofre_domain::RuleId::new(), date };
        prop_assert_eq!(Handle::parse(&occurrence.to_string()), Some(occurrence));
    }
}
