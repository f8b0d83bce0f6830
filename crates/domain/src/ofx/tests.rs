use jiff::civil::date;
use proptest::prelude::*;

use super::*;

const SGML_HEADER: &str = "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\n\
    ENCODING:USASCII\r\nCHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n";

/// An SGML bank statement around `transactions` (SGML text, no end tags
/// on leaves).
fn sgml(transactions: &str) -> String {
    format!(
        "{SGML_HEADER}<OFX>\r\n<SIGNONMSGSRSV1>\r\n<SONRS>\r\n<STATUS>\r\n<CODE>0\r\n\
         <SEVERITY>INFO\r\n</STATUS>\r\n<DTSERVER>20261121\r\n<LANGUAGE>POR\r\n</SONRS>\r\n\
         </SIGNONMSGSRSV1>\r\n<BANKMSGSRSV1>\r\n<STMTTRNRS>\r\n<TRNUID>1\r\n<STMTRS>\r\n\
         <CURDEF>BRL\r\n<BANKACCTFROM>\r\n<BANKID>0341\r\n<ACCTID>12345-6\r\n\
         <ACCTTYPE>CHECKING\r\n</BANKACCTFROM>\r\n<BANKTRANLIST>\r\n<DTSTART>20261101\r\n\
         <DTEND>20261130\r\n{transactions}</BANKTRANLIST>\r\n<LEDGERBAL>\r\n<BALAMT>100.00\r\n\
         <DTASOF>20261121\r\n</LEDGERBAL>\r\n</STMTRS>\r\n</STMTTRNRS>\r\n</BANKMSGSRSV1>\r\n</OFX>\r\n"
    )
}

fn sgml_tx(fitid: &str, date: &str, amount: &str, name: &str) -> String {
    format!(
        "<STMTTRN>\r\n<TRNTYPE>OTHER\r\n<DTPOSTED>{date}\r\n<TRNAMT>{amount}\r\n\
         <FITID>{fitid}\r\n<NAME>{name}\r\n</STMTTRN>\r\n"
    )
}

const XML_CARD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
<OFX>
  <CREDITCARDMSGSRSV1>
    <CCSTMTTRNRS>
      <TRNUID>1</TRNUID>
      <STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>
      <CCSTMTRS>
        <CURDEF>BRL</CURDEF>
        <CCACCTFROM><ACCTID>5162********1234</ACCTID></CCACCTFROM>
        <BANKTRANLIST>
          <DTSTART>20261101</DTSTART><DTEND>20261121</DTEND>
          <STMTTRN>
            <TRNTYPE>DEBIT</TRNTYPE>
            <DTPOSTED>20261102193000[-3:BRT]</DTPOSTED>
            <TRNAMT>-42.90</TRNAMT>
            <FITID>nu-0001</FITID>
            <MEMO>iFood *Restaurante   Sabor</MEMO>
          </STMTTRN>
          <STMTTRN>
            <TRNTYPE>CREDIT</TRNTYPE>
            <DTPOSTED>20261107</DTPOSTED>
            <TRNAMT>1234.56</TRNAMT>
            <FITID>nu-0002</FITID>
            <NAME>Pagamento recebido</NAME>
            <MEMO></MEMO>
          </STMTTRN>
        </BANKTRANLIST>
      </CCSTMTRS>
    </CCSTMTTRNRS>
  </CREDITCARDMSGSRSV1>
</OFX>
"#;

fn only_row(text: &str) -> StatementRow {
    let statement = parse(text.as_bytes()).unwrap();
    assert_eq!(statement.rows.len(), 1, "{statement:?}");
    statement.rows.into_iter().next().unwrap()
}

fn row_problem(text: &str) -> (usize, Option<String>, RowProblem) {
    match parse(text.as_bytes()) {
        Err(OfxError::Transaction {
            index,
            fitid,
            problem,
            ..
        }) => (index, fitid, problem),
        other => panic!("expected a transaction error, got {other:?}"),
    }
}

#[test]
fn reads_an_sgml_bank_statement() {
    let text = sgml(&format!(
        "{}{}",
        sgml_tx("A1", "20261105", "-12.34", "PADARIA"),
        sgml_tx("A2", "20261106", "5250.00", "SALARIO")
    ));
    let statement = parse(text.as_bytes()).unwrap();
    assert_eq!(statement.kind, StatementKind::Bank);
    assert_eq!(statement.currency.as_deref(), Some("BRL"));
    assert_eq!(statement.connector, "OFX");
    assert_eq!(statement.repeated, 0);
    let rows = &statement.rows;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].external_id, "A1");
    assert_eq!(rows[0].date, date(2026, 11, 5));
    assert_eq!(rows[0].tx_type, TxType::Debit);
    assert_eq!(rows[0].amount, Money::from_cents(1234));
    assert_eq!(rows[0].description, "PADARIA");
    assert_eq!(rows[0].original_description.as_deref(), Some("PADARIA"));
    assert_eq!(rows[1].tx_type, TxType::Credit);
    assert_eq!(rows[1].amount, Money::from_cents(525_000));
}

#[test]
fn reads_an_xml_credit_card_statement() {
    let statement = parse(XML_CARD.as_bytes()).unwrap();
    assert_eq!(statement.kind, StatementKind::CreditCard);
    assert_eq!(statement.currency.as_deref(), Some("BRL"));
    let rows = &statement.rows;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].date, date(2026, 11, 2));
    assert_eq!(rows[0].tx_type, TxType::Debit);
    assert_eq!(rows[0].amount, Money::from_cents(4290));
    // MEMO alone: the description, blanks collapsed; the original as sent.
    assert_eq!(rows[0].description, "iFood *Restaurante Sabor");
    assert_eq!(
        rows[0].original_description.as_deref(),
        Some("iFood *Restaurante   Sabor")
    );
    assert_eq!(rows[1].tx_type, TxType::Credit);
    assert_eq!(rows[1].amount, Money::from_cents(123_456));
    assert_eq!(rows[1].description, "Pagamento recebido");
    assert_eq!(
        rows[1].original_description.as_deref(),
        Some("Pagamento recebido")
    );
}

#[test]
fn name_and_memo_make_the_original_description() {
    let tx = "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20261103<TRNAMT>-1850.00<FITID>X\
              <NAME>PIX ENVIADO<MEMO>João Imóveis</STMTTRN>";
    let row = only_row(&sgml(tx));
    assert_eq!(row.description, "PIX ENVIADO");
    assert_eq!(
        row.original_description.as_deref(),
        Some("PIX ENVIADO - João Imóveis")
    );
    // The same text twice is said once.
    let tx = "<STMTTRN><DTPOSTED>20261103<TRNAMT>-1<FITID>X<NAME>TARIFA<MEMO>TARIFA \
              </STMTTRN>";
    assert_eq!(
        only_row(&sgml(tx)).original_description.as_deref(),
        Some("TARIFA")
    );
    // PAYEE's NAME stands in for NAME; with no text at all, a placeholder.
    let tx = "<STMTTRN><DTPOSTED>20261103<TRNAMT>-1<FITID>X<PAYEE><NAME>ENEL<ADDR1>Rua 1\
              </PAYEE></STMTTRN>";
    assert_eq!(only_row(&sgml(tx)).description, "ENEL");
    let tx = "<STMTTRN><DTPOSTED>20261103<TRNAMT>-1<FITID>X<NAME><MEMO></STMTTRN>";
    let row = only_row(&sgml(tx));
    assert_eq!(row.description, NO_DESCRIPTION);
    assert_eq!(row.original_description, None);
}

#[test]
fn long_text_is_cut_not_refused() {
    let long = "x".repeat(2_000);
    let row = only_row(&sgml(&sgml_tx("L", "20261101", "-1", &long)));
    assert_eq!(row.description.chars().count(), DESCRIPTION_MAX);
    assert_eq!(
        row.original_description.map(|o| o.chars().count()),
        Some(ORIGINAL_MAX)
    );
}

#[test]
fn windows_1252_text_is_decoded() {
    let text = sgml(&sgml_tx(
        "L1",
        "20261108",
        "-237.46",
        "PÃO DE AÇÚCAR – SÃO JOSÉ",
    ));
    let (bytes, unmappable) = encode_1252(&text);
    assert!(!unmappable);
    assert!(std::str::from_utf8(&bytes).is_err(), "really not UTF-8");
    let statement = parse(&bytes).unwrap();
    assert_eq!(statement.rows[0].description, "PÃO DE AÇÚCAR – SÃO JOSÉ");
    // Valid UTF-8 is read as UTF-8 even under a CHARSET:1252 header.
    assert_eq!(
        parse(text.as_bytes()).unwrap().rows[0].description,
        "PÃO DE AÇÚCAR – SÃO JOSÉ"
    );
}

/// Windows-1252 bytes of `text` (the few characters the test needs).
fn encode_1252(text: &str) -> (Vec<u8>, bool) {
    let mut unmappable = false;
    let bytes: Vec<u8> = text
        .chars()
        .map(|c| match c {
            '–' => 0x96,
            c if (c as u32) < 0x100 => c as u8,
            _ => {
                unmappable = true;
                b'?'
            }
        })
        .collect();
    (bytes, unmappable)
}

#[test]
fn entities_are_decoded_and_bare_ampersands_kept() {
    let row = only_row(&sgml(&sgml_tx(
        "E",
        "20261110",
        "-159.99",
        "C&amp;A &lt;MODAS&gt;",
    )));
    assert_eq!(row.description, "C&A <MODAS>");
    let row = only_row(&sgml(&sgml_tx("E", "20261110", "-159.99", "C&A MODAS")));
    assert_eq!(row.description, "C&A MODAS");
}

#[test]
fn dates_take_the_calendar_day_as_written() {
    for (text, expected) in [
        ("20261105", date(2026, 11, 5)),
        ("20261105235959", date(2026, 11, 5)),
        ("20261105235959.000", date(2026, 11, 5)),
        ("20261105235959.000[-3:BRT]", date(2026, 11, 5)),
        ("20261105235959[-03:BRT]", date(2026, 11, 5)),
        ("20261105000000[+5.30:IST]", date(2026, 11, 5)),
        ("20261105120000[0:GMT]", date(2026, 11, 5)),
        ("20261105[-3]", date(2026, 11, 5)),
        ("202611051200", date(2026, 11, 5)),
        ("20240229", date(2024, 2, 29)),
    ] {
        assert_eq!(parse_date(text), Some(expected), "{text}");
    }
    for text in [
        "",
        "2026110",
        "20261305",
        "20250229",
        "2026-11-05",
        "20261105T1200",
        "202611051",
        "20261105.000",
        "20261105120000[BRT]",
        "20261105120000[-3:BRT",
        "20261105120000[-3:BRT]x",
        "２０２６１１０５",
    ] {
        assert_eq!(parse_date(text), None, "{text}");
    }
}

#[test]
fn amounts_are_exact_and_signed() {
    for (text, cents) in [
        ("-12.34", -1234),
        ("12.34", 1234),
        ("+12.3", 1230),
        ("100", 10_000),
        (".5", 50),
        ("-0.01", -1),
        ("-1234,56", -123_456),
        ("12.340", 1234),
        ("-00012.00", -1200),
    ] {
        assert_eq!(parse_amount(text), Ok(Money::from_cents(cents)), "{text}");
    }
    assert_eq!(
        parse_amount("1.234"),
        Err(RowProblem::TooPrecise("1.234".into()))
    );
    assert_eq!(parse_amount("0.00"), Err(RowProblem::ZeroAmount));
    assert_eq!(parse_amount("-0"), Err(RowProblem::ZeroAmount));
    assert_eq!(
        parse_amount("100000000000"),
        Err(RowProblem::TooLarge("100000000000".into()))
    );
    for bad in [
        "", "-", ".", "1.234,56", "1,234.56", "1e3", "12 34", "R$ 10", "--1", "0x10",
    ] {
        assert_eq!(
            parse_amount(bad),
            Err(RowProblem::BadAmount(bad.into())),
            "{bad}"
        );
    }
}

#[test]
fn a_bad_transaction_is_named() {
    let good = sgml_tx("OK1", "20261101", "-1.00", "A");
    let text = sgml(&format!(
        "{good}{}",
        sgml_tx("B2", "20261102", "-1.239", "B")
    ));
    assert_eq!(
        row_problem(&text),
        (
            2,
            Some("B2".into()),
            RowProblem::TooPrecise("-1.239".into())
        )
    );
    let message = parse(text.as_bytes()).unwrap_err().to_string();
    assert!(
        message.starts_with("transaction 2, FITID B2 (line "),
        "{message}"
    );
    assert!(message.ends_with("amount \"-1.239\" has more than 2 decimal places"));

    let zero = sgml(&sgml_tx("Z", "20261101", "0.00", "A"));
    assert_eq!(
        row_problem(&zero),
        (1, Some("Z".into()), RowProblem::ZeroAmount)
    );
    let bad_date = sgml(&sgml_tx("D", "20261131", "-1", "A"));
    assert_eq!(
        row_problem(&bad_date).2,
        RowProblem::BadDate("20261131".into())
    );
    let no_amount = sgml("<STMTTRN><DTPOSTED>20261101<FITID>N<NAME>A</STMTTRN>");
    assert_eq!(row_problem(&no_amount).2, RowProblem::MissingAmount);
    let no_date = sgml("<STMTTRN><TRNAMT>-1<FITID>N<NAME>A</STMTTRN>");
    assert_eq!(row_problem(&no_date).2, RowProblem::MissingDate);
    let long_id = sgml(&sgml_tx(&"9".repeat(256), "20261101", "-1", "A"));
    assert_eq!(row_problem(&long_id).2, RowProblem::LongFitid);
}

#[test]
fn fitid_is_required() {
    let text = sgml(
        "<STMTTRN>\r\n<TRNTYPE>DEBIT\r\n<DTPOSTED>20261101\r\n<TRNAMT>-5.00\r\n</STMTTRN>\r\n",
    );
    let err = parse(text.as_bytes()).unwrap_err();
    assert_eq!(
        err,
        OfxError::Transaction {
            index: 1,
            fitid: None,
            line: 35,
            problem: RowProblem::MissingFitid
        }
    );
    assert!(
        err.to_string()
            .starts_with("transaction 1 (line 35): no FITID")
    );
}

#[test]
fn a_fitid_listed_twice_is_imported_once() {
    let text = sgml(&format!(
        "{}{}{}",
        sgml_tx("SAME", "20261101", "-1.00", "first"),
        sgml_tx("OTHER", "20261101", "-2.00", "other"),
        sgml_tx("SAME", "20261101", "-1.00", "again")
    ));
    let statement = parse(text.as_bytes()).unwrap();
    let ids: Vec<&str> = statement
        .rows
        .iter()
        .map(|r| r.external_id.as_str())
        .collect();
    assert_eq!(ids, ["SAME", "OTHER"]);
    assert_eq!(statement.rows[0].description, "first");
    assert_eq!(statement.repeated, 1);
}

#[test]
fn foreign_currency_rows_are_refused() {
    let tx = "<STMTTRN><DTPOSTED>20261101<TRNAMT>-10.00<FITID>F<NAME>AMAZON\
              <CURRENCY><CURRATE>5.1<CURSYM>USD</CURRENCY></STMTTRN>";
    assert_eq!(
        row_problem(&sgml(tx)).2,
        RowProblem::ForeignCurrency {
            found: "USD".into(),
            expected: "BRL".into()
        }
    );
    // ORIGCURRENCY only informs: the amount is already in CURDEF.
    let tx = "<STMTTRN><DTPOSTED>20261101<TRNAMT>-51.00<FITID>F<NAME>AMAZON\
              <ORIGCURRENCY><CURRATE>5.1<CURSYM>USD</ORIGCURRENCY></STMTTRN>";
    assert_eq!(only_row(&sgml(tx)).amount, Money::from_cents(5100));
}

#[test]
fn statement_level_problems() {
    assert_eq!(parse(b"").unwrap_err(), OfxError::NotOfx);
    assert_eq!(parse(b"hello, world").unwrap_err(), OfxError::NotOfx);
    assert_eq!(
        parse(b"<html><body>Not here</body></html>").unwrap_err(),
        OfxError::NotOfx
    );
    assert_eq!(
        parse(b"<html><p>broken</div></html>").unwrap_err(),
        OfxError::NotOfx
    );
    assert_eq!(
        parse(b"<OFX><SIGNONMSGSRSV1></SIGNONMSGSRSV1></OFX>").unwrap_err(),
        OfxError::NoStatement
    );
    let bad_currency = sgml("").replace("<CURDEF>BRL", "<CURDEF>REAIS");
    assert!(matches!(
        parse(bad_currency.as_bytes()),
        Err(OfxError::BadCurrency { ref value, .. }) if value == "REAIS"
    ));
    // Cut short in the middle of a transaction.
    let full = sgml(&sgml_tx("A", "20261101", "-1", "A"));
    let cut = &full[..full.find("<FITID>").unwrap()];
    assert!(matches!(
        parse(cut.as_bytes()),
        Err(OfxError::Unclosed { .. })
    ));
}

#[test]
fn statements_of_one_account_are_merged_others_refused() {
    let one = sgml(&sgml_tx("A", "20261101", "-1", "A"));
    let statement_of = |text: &str| {
        let start = text.find("<STMTTRNRS>").unwrap();
        let end = text.find("</STMTTRNRS>").unwrap() + "</STMTTRNRS>".len();
        text[start..end].to_owned()
    };
    let second = statement_of(&sgml(&sgml_tx("B", "20261102", "-2", "B")));
    let merged = one.replace("</BANKMSGSRSV1>", &format!("{second}</BANKMSGSRSV1>"));
    let statement = parse(merged.as_bytes()).unwrap();
    assert_eq!(statement.rows.len(), 2);

    let other_account = second.replace("12345-6", "99999-9");
    let mixed = one.replace(
        "</BANKMSGSRSV1>",
        &format!("{other_account}</BANKMSGSRSV1>"),
    );
    assert_eq!(
        parse(mixed.as_bytes()).unwrap_err(),
        OfxError::MultipleStatements { count: 2 }
    );
}

#[test]
fn an_empty_transaction_list_is_a_valid_statement() {
    let statement = parse(sgml("").as_bytes()).unwrap();
    assert!(statement.rows.is_empty());
}

#[test]
fn sgml_on_one_line_and_lower_case_tags() {
    let text = "OFXHEADER:100 DATA:OFXSGML <ofx><bankmsgsrsv1><stmttrnrs><stmtrs>\
                <curdef>brl<banktranlist><stmttrn><trnamt>-3.5<dtposted>20261101\
                <fitid>1<memo>x</stmttrn></banktranlist></stmtrs></stmttrnrs>\
                </bankmsgsrsv1></ofx>";
    let statement = parse(text.as_bytes()).unwrap();
    assert_eq!(statement.currency.as_deref(), Some("BRL"));
    assert_eq!(statement.rows[0].amount, Money::from_cents(350));
}

/// Fragments that, shuffled, make plausible broken statements.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<OFX>".to_owned()),
        Just("</OFX>".to_owned()),
        Just("<STMTRS>".to_owned()),
        Just("</STMTRS>".to_owned()),
        Just("<CCSTMTRS>".to_owned()),
        Just("<BANKTRANLIST>".to_owned()),
        Just("</BANKTRANLIST>".to_owned()),
        Just("<STMTTRN>".to_owned()),
        Just("</STMTTRN>".to_owned()),
        Just("<CURDEF>BRL".to_owned()),
        Just("<FITID>1".to_owned()),
        Just("<![CDATA[".to_owned()),
        Just("<!--".to_owned()),
        Just("&#x1F600;&amp;&".to_owned()),
        "[<>/&;#A-Z0-9.:\\[\\]\\-+ ]{0,12}",
        ("<TRNAMT>", "[-+.,0-9]{0,8}").prop_map(|(t, v)| format!("{t}{v}")),
        ("<DTPOSTED>", "[0-9\\[\\]:.A-Z-]{0,24}").prop_map(|(t, v)| format!("{t}{v}")),
    ]
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse(text.as_bytes());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn shuffled_statement_fragments_never_panic(parts in proptest::collection::vec(fragment(), 0..60)) {
        let _ = parse(parts.concat().as_bytes());
    }

    #[test]
    fn every_two_decimal_amount_round_trips(cents in -9_999_999_999_999i64..=9_999_999_999_999) {
        prop_assume!(cents != 0);
        let text = Money::from_cents(cents).to_string();
        prop_assert_eq!(parse_amount(&text), Ok(Money::from_cents(cents)));
    }
}
