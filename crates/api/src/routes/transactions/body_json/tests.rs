//! The writer held to the bytes serde's derive of the schema types writes.

use super::*;
use crate::json::JsonMoney;
use crate::routes::transactions::bodies::{
    InstallmentBody, ProjectionBody, TagInTransaction, TransactionBody,
};
use cofre_domain::time::format_date;
use cofre_domain::transaction::{
    InstallmentRef, Source, TagRef, TransactionState, TxStatus, TxType,
};
use cofre_domain::{AccountId, CategoryId, Money, PurchaseId, TagId, TransactionId};
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
