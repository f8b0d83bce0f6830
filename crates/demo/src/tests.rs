use jiff::Timestamp;
use jiff::civil::{Date, date};
use std::collections::BTreeMap;

use cofre_domain::account::auto_close_day;
use cofre_domain::card::{BillMonth, Cycle, Cycles};
use cofre_domain::transaction::{SeriesLink, TransactionState, TxStatus, TxType};
use cofre_domain::{AccountId, CategoryId, Money, TagId, UserId};
use cofre_store::ImportBatch;

use super::catalogue::CARDS;
use super::*;

const TODAY: Date = date(2026, 11, 22);

fn now() -> Timestamp {
    "2026-11-22T15:00:00Z".parse().expect("timestamp")
}

fn setup(cards: usize) -> Setup {
    let titles = [
        "Mercado",
        "Salário",
        "Aluguel",
        "Assinaturas",
        "Outros",
        "Compras",
        "Pagamento de fatura",
    ];
    Setup {
        accounts: DemoAccounts {
            checking: AccountId::new(),
            savings: Some(AccountId::new()),
            second_bank: Some(AccountId::new()),
            cards: CARDS
                .iter()
                .take(cards)
                .map(|c| DemoCard {
                    id: AccountId::new(),
                    title: c.0.to_owned(),
                    cycles: Cycles::new(auto_close_day(c.1), c.1),
                })
                .collect(),
        },
        categories: titles
            .iter()
            .map(|t| ((*t).to_owned(), CategoryId::new()))
            .collect(),
        tags: TAGS.iter().map(|_| TagId::new()).collect(),
    }
}

fn heavy() -> (Setup, ImportBatch) {
    let setup = setup(3);
    let spec = Profile::Heavy.spec();
    let batch = generate(&spec, DEFAULT_SEED, UserId::new(), &setup, now(), TODAY).expect("batch");
    (setup, batch)
}

/// A bill's amount counted the slow way: every entry of the card, stored
/// or projected, that the cycle contains (DECISIONS §11).
fn amount_of(card: AccountId, cycle: &Cycle, batch: &ImportBatch) -> i64 {
    let signed = |t: TxType, m: Money| match t {
        TxType::Debit => m.cents(),
        TxType::Credit => -m.cents(),
    };
    let stored_links: Vec<SeriesLink> = batch
        .rows
        .iter()
        .map(|r| r.link)
        .filter(|l| *l != SeriesLink::None)
        .collect();
    let mut cents: i64 = batch
        .rows
        .iter()
        .filter(|r| r.account_id == card && r.payment.is_none() && cycle.contains(r.state.date))
        .map(|r| signed(r.state.tx_type, r.state.amount))
        .sum();
    for plan in batch.plans.iter().filter(|p| p.account_id == card) {
        for number in 1..=plan.count {
            let link = SeriesLink::Installment {
                purchase_id: plan.id,
                number,
            };
            let date = plan.date_of(number).expect("installment date");
            if cycle.contains(date) && !stored_links.contains(&link) {
                cents += signed(plan.template.tx_type, plan.amount_of(number));
            }
        }
    }
    for rule in batch.rules.iter().filter(|r| r.account_id == card) {
        for (_, date) in rule.schedule.ascending(cycle.start, cycle.close) {
            let link = SeriesLink::Recurrence {
                rule_id: rule.id,
                period_date: date,
            };
            if !stored_links.contains(&link) {
                cents += signed(rule.template.tx_type, rule.template.amount);
            }
        }
    }
    cents
}

#[test]
fn rows_are_written_in_the_order_they_happened() {
    let (_, batch) = heavy();
    assert!(
        batch
            .rows
            .windows(2)
            .all(|pair| pair[0].state.date <= pair[1].state.date)
    );
    // The opening balances still come first, on the history's first day.
    assert!(batch.rows[..3].iter().all(|r| r.state.hide_from_results));
}

#[test]
fn heavy_has_the_promised_shape() {
    let (setup, batch) = heavy();
    assert_eq!(batch.rows.len(), 50_000);
    assert_eq!(batch.rules.len(), 40);
    assert_eq!(batch.plans.len(), 60);
    let first = batch.rows.iter().map(|r| r.state.date).min().unwrap();
    assert_eq!(first, date(2016, 11, 22));
    assert!(batch.rows.iter().all(|r| r.state.amount.is_positive()));
    assert!(
        batch
            .rows
            .iter()
            .all(|r| r.state.date <= date(2026, 12, 22))
    );
    let future_posted = batch
        .rows
        .iter()
        .filter(|r| r.state.date > TODAY && r.state.status == TxStatus::Posted)
        .count();
    assert_eq!(future_posted, 0);
    let pending = batch
        .rows
        .iter()
        .filter(|r| r.state.status == TxStatus::Pending)
        .count();
    assert!(pending > 100 && pending < 2_000, "{pending}");
    let tagged = batch
        .rows
        .iter()
        .filter(|r| !r.state.tag_ids.is_empty())
        .count();
    assert!(tagged > 1_000, "{tagged}");
    for rule in &batch.rules {
        assert!(rule.schedule.start < TODAY);
        assert!(rule.schedule.end_date.is_none_or(|end| end > TODAY));
        assert!(rule.schedule.validate().is_ok());
    }
    let linked = batch
        .rows
        .iter()
        .filter(|r| r.link != SeriesLink::None)
        .count();
    assert!(linked > 60, "{linked}");

    // Every plan is on a card; 2 to 12 installments, a few of 18 and 24,
    // some still running after today.
    let accounts = &setup.accounts;
    assert!(batch.plans.iter().all(|p| accounts.is_card(p.account_id)));
    assert!(batch.plans.iter().all(|p| (2..=24).contains(&p.count)));
    let long = |n| batch.plans.iter().filter(|p| p.count == n).count();
    assert!(long(18) >= 2 && long(24) >= 2, "{} {}", long(18), long(24));
    let running = batch
        .plans
        .iter()
        .filter(|p| p.date_of(p.count).is_some_and(|last| last > TODAY))
        .count();
    assert!(running >= 10, "{running}");
    // Every card gets purchases, refunds and rules.
    for card in &accounts.cards {
        let rows = batch.rows.iter().filter(|r| r.account_id == card.id);
        let (debits, credits) = rows.fold((0, 0), |(d, c), r| match (r.state.tx_type, r.payment) {
            (TxType::Debit, _) => (d + 1, c),
            (TxType::Credit, None) => (d, c + 1),
            (TxType::Credit, Some(_)) => (d, c),
        });
        assert!(
            debits > 1_000 && credits > 5,
            "{}: {debits} {credits}",
            card.title
        );
        assert!(batch.rules.iter().any(|r| r.account_id == card.id));
    }
}

#[test]
fn card_entries_stay_in_the_card_window() {
    let (setup, batch) = heavy();
    let card_start = date(2021, 11, 22);
    let accounts = &setup.accounts;
    for row in batch.rows.iter().filter(|r| accounts.is_card(r.account_id)) {
        assert!(row.state.date >= card_start, "{:?}", row.state);
        if row.link == SeriesLink::None {
            // Purchases, refunds and payments: nothing scheduled.
            assert!(row.state.date <= TODAY, "{:?}", row.state);
        }
    }
    for plan in &batch.plans {
        assert!(plan.first_date >= card_start, "{plan:?}");
        assert!(plan.first_date <= date(2026, 12, 22), "{plan:?}");
    }
    for rule in batch
        .rules
        .iter()
        .filter(|r| accounts.is_card(r.account_id))
    {
        assert!(rule.schedule.start >= card_start, "{rule:?}");
    }
    // Card purchases reach back to the window's first weeks.
    let first = batch
        .rows
        .iter()
        .filter(|r| accounts.is_card(r.account_id))
        .map(|r| r.state.date)
        .min();
    assert!(first.is_some_and(|d| d < date(2021, 12, 10)), "{first:?}");
}

#[test]
fn payments_settle_each_bill_at_its_amount() {
    let (setup, batch) = heavy();
    let accounts = &setup.accounts;
    let bill_category = setup.categories.get("Pagamento de fatura").copied();
    // Bank-side legs by card and bill; every leg has its twin on the card.
    let mut paid: BTreeMap<(AccountId, BillMonth), Vec<i64>> = BTreeMap::new();
    for row in batch.rows.iter().filter(|r| r.payment.is_some()) {
        let leg = row.payment.unwrap();
        let twins: Vec<_> = batch
            .rows
            .iter()
            .filter(|r| r.payment.is_some_and(|p| p.group == leg.group))
            .collect();
        assert_eq!(twins.len(), 2);
        assert!(twins.iter().all(|t| t.state.amount == row.state.amount));
        assert!(twins.iter().all(|t| t.state.date == row.state.date));
        assert_eq!(row.state.category_id, bill_category);
        if leg.bank_side {
            assert_eq!(row.account_id, accounts.checking);
            assert_eq!(row.state.tx_type, TxType::Debit);
            assert!(!row.state.hide_from_results);
            paid.entry((leg.card_id, leg.month))
                .or_default()
                .push(row.state.amount.cents());
        } else {
            assert_eq!(row.account_id, leg.card_id);
            assert_eq!(row.state.tx_type, TxType::Credit);
            assert!(row.state.hide_from_results);
        }
        let card = accounts.cards.iter().find(|c| c.id == leg.card_id).unwrap();
        let cycle = card
            .cycles
            .cycle(leg.month)
            .expect("a bill of the calendar");
        assert!(cycle.close < row.state.date && row.state.date <= cycle.due);
        assert_eq!(row.state.status, TxStatus::Posted);
    }

    let (mut split, mut partial, mut bills) = (0, 0, 0);
    for card in &accounts.cards {
        let amounts = bill_amounts(card, &batch, TODAY);
        // From the bill holding the first day of card purchases.
        let first_due = card.cycles.cycle_of(date(2021, 11, 22)).due;
        for cycle in card.cycles.due_between(first_due, date(2027, 6, 30)) {
            let amount = amount_of(card.id, &cycle, &batch);
            let payments = paid.remove(&(card.id, cycle.month)).unwrap_or_default();
            if cycle.close < TODAY {
                let computed = amounts.get(&cycle.month).map_or(0, |m| m.cents());
                assert_eq!(computed, amount, "{} {cycle:?}", card.title);
            }
            if cycle.due >= TODAY {
                // The open bill, and a closed one not yet due: unpaid.
                assert!(payments.is_empty(), "{} {cycle:?}", card.title);
                continue;
            }
            assert!(amount > 0, "{} {cycle:?}: {amount}", card.title);
            bills += 1;
            let total: i64 = payments.iter().sum();
            match payments.len() {
                1 if total < amount => partial += 1,
                1 => assert_eq!(total, amount, "{} {cycle:?}", card.title),
                2 => {
                    assert_eq!(total, amount, "{} {cycle:?}", card.title);
                    split += 1;
                }
                n => panic!("{} {cycle:?}: {n} payments", card.title),
            }
        }
    }
    assert!(paid.is_empty(), "payments of no bill: {paid:?}");
    assert_eq!((split, partial), (1, 1));
    // Five years of bills on three cards.
    assert!((175..=183).contains(&bills), "{bills}");
}

#[test]
fn small_pays_its_card_bills() {
    let setup = setup(1);
    let spec = Profile::Small.spec();
    let batch = generate(&spec, DEFAULT_SEED, UserId::new(), &setup, now(), TODAY).unwrap();
    assert_eq!(batch.rows.len(), 300);
    let card = &setup.accounts.cards[0];
    let payments = batch
        .rows
        .iter()
        .filter(|r| {
            r.payment
                .is_some_and(|p| p.bank_side && p.card_id == card.id)
        })
        .count();
    assert!((4..=7).contains(&payments), "{payments}");
    let first = batch
        .rows
        .iter()
        .filter(|r| r.account_id == card.id)
        .map(|r| r.state.date)
        .min();
    assert!(first.is_some_and(|d| d >= date(2026, 5, 22)), "{first:?}");
}

#[test]
fn no_cards_no_card_rows() {
    let setup = setup(0);
    let spec = Spec {
        cards: 0,
        ..Profile::Small.spec()
    };
    let batch = generate(&spec, 3, UserId::new(), &setup, now(), TODAY).unwrap();
    assert_eq!(batch.rows.len(), 300);
    assert!(batch.rows.iter().all(|r| r.payment.is_none()));
    let checking = setup.accounts.checking;
    assert!(batch.plans.iter().all(|p| p.account_id == checking));
}

#[test]
fn same_seed_same_content() {
    let setup = setup(1);
    let spec = Profile::Small.spec();
    let states = |batch: &ImportBatch| -> Vec<(TransactionState, bool)> {
        batch
            .rows
            .iter()
            .map(|r| (r.state.clone(), r.payment.is_some()))
            .collect()
    };
    let a = generate(&spec, 7, UserId::new(), &setup, now(), TODAY).unwrap();
    let b = generate(&spec, 7, UserId::new(), &setup, now(), TODAY).unwrap();
    let c = generate(&spec, 8, UserId::new(), &setup, now(), TODAY).unwrap();
    assert_eq!(a.rows.len(), 300);
    assert_eq!(states(&a), states(&b));
    assert_ne!(states(&a), states(&c));
}

#[test]
fn cards_owe_their_unpaid_bills() {
    let (setup, batch) = heavy();
    // Everything past on a card is stored, so its balance (POSTED rows) is
    // debt: the open bill and what is left of the partly paid one.
    for card in &setup.accounts.cards {
        let balance: i64 = batch
            .rows
            .iter()
            .filter(|r| r.account_id == card.id && r.state.status == TxStatus::Posted)
            .map(|r| match r.state.tx_type {
                TxType::Debit => -r.state.amount.cents(),
                TxType::Credit => r.state.amount.cents(),
            })
            .sum();
        assert!(balance < 0, "{}: {balance}", card.title);
    }
    // But for a few entries left projected, which some paid bills hold.
    let stored: Vec<SeriesLink> = batch.rows.iter().map(|r| r.link).collect();
    let projected_past = batch
        .plans
        .iter()
        .flat_map(|p| (1..=p.count).map(move |number| (p, number)))
        .filter(|(p, number)| {
            let link = SeriesLink::Installment {
                purchase_id: p.id,
                number: *number,
            };
            p.date_of(*number).is_some_and(|d| d < TODAY) && !stored.contains(&link)
        })
        .count();
    assert!(projected_past > 0);
}
