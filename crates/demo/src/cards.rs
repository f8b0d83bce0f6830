//! Card bills of the demo history, and their payments.
//!
//! A bill's amount is what DECISIONS §11 says the API computes: the card's
//! DEBITs minus its CREDITs other than payments, stored and projected
//! (installments and rule occurrences no stored row replaces), dated in the
//! cycle. Every bill due before today is paid with that exact amount by a
//! payment (a DEBIT on checking and a hidden CREDIT on the card, one
//! transfer group, both naming the bill), dated between close and due date;
//! one is paid in two parts and one only in part. The open bill and a
//! closed one not yet due stay unpaid.

use jiff::civil::Date;
use std::collections::{BTreeMap, HashSet};

use cofre_domain::card::{BillMonth, Cycle, Cycles, PaymentLeg};
use cofre_domain::projection::{InstallmentPlan, RecurrenceRule};
use cofre_domain::transaction::{SeriesLink, TxType};
use cofre_domain::{AccountId, Money, PurchaseId, RuleId};
use cofre_store::{ImportBatch, ImportRow};

use super::builder::{Builder, add_days, days_between};
use super::setup::DemoCard;

/// Bill amounts of one card by due month (a month with no entry is absent).
pub type BillAmounts = BTreeMap<BillMonth, Money>;

/// The amounts of `card`'s bills from the entries of `batch` dated up to
/// `through`: exact for every bill that closes on or before `through`.
pub fn bill_amounts(card: &DemoCard, batch: &ImportBatch, through: Date) -> BillAmounts {
    amounts(
        card.id,
        &card.cycles,
        &batch.rows,
        &batch.rules,
        &batch.plans,
        through,
    )
}

fn signed(tx_type: TxType, amount: Money) -> i64 {
    match tx_type {
        TxType::Debit => amount.cents(),
        TxType::Credit => -amount.cents(),
    }
}

fn amounts(
    card: AccountId,
    cycles: &Cycles,
    rows: &[ImportRow],
    rules: &[RecurrenceRule],
    plans: &[InstallmentPlan],
    through: Date,
) -> BillAmounts {
    // Projections a stored row replaces (any account: the link decides).
    let mut occurrences: HashSet<(RuleId, Date)> = HashSet::new();
    let mut installments: HashSet<(PurchaseId, u16)> = HashSet::new();
    for row in rows {
        match row.link {
            SeriesLink::None => {}
            SeriesLink::Recurrence {
                rule_id,
                period_date,
            } => {
                occurrences.insert((rule_id, period_date));
            }
            SeriesLink::Installment {
                purchase_id,
                number,
            } => {
                installments.insert((purchase_id, number));
            }
        }
    }
    let mut cents: BTreeMap<BillMonth, i64> = BTreeMap::new();
    let mut add = |date: Date, value: i64| {
        if date <= through {
            *cents.entry(cycles.month_of(date)).or_default() += value;
        }
    };
    for row in rows
        .iter()
        .filter(|r| r.account_id == card && r.payment.is_none())
    {
        add(row.state.date, signed(row.state.tx_type, row.state.amount));
    }
    for plan in plans.iter().filter(|p| p.account_id == card && !p.hidden) {
        for number in 1..=plan.count {
            if installments.contains(&(plan.id, number)) {
                continue;
            }
            if let Some(date) = plan.date_of(number) {
                add(date, signed(plan.template.tx_type, plan.amount_of(number)));
            }
        }
    }
    for rule in rules.iter().filter(|r| r.account_id == card) {
        for (_, date) in rule.schedule.ascending(rule.schedule.start, through) {
            if !occurrences.contains(&(rule.id, date)) {
                add(date, signed(rule.template.tx_type, rule.template.amount));
            }
        }
    }
    cents
        .into_iter()
        .map(|(month, c)| (month, Money::from_cents(c)))
        .collect()
}

/// How a bill is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Settle {
    /// One payment of the whole amount.
    Full,
    /// Two payments adding up to the amount.
    Split,
    /// One payment of part of the amount: the bill stays overdue.
    Partial,
}

impl Settle {
    /// Stored rows its payments take (two per payment).
    fn rows(self) -> usize {
        match self {
            Settle::Full | Settle::Partial => 2,
            Settle::Split => 4,
        }
    }
}

/// A bill the history pays: due before today.
#[derive(Clone, Copy, Debug)]
pub(super) struct DueBill {
    /// Index into the setup's cards.
    pub card: usize,
    pub cycle: Cycle,
    pub settle: Settle,
}

/// Which bill, counted back from each card's latest bill due before
/// today (1 = that bill), is paid in two parts (first card) or only in part
/// (second card).
const SPLIT_BACK: usize = 6;
const PARTIAL_BACK: usize = 4;

/// The bills of every card due before `today`, from the one holding
/// `first_purchase` on: the ones the history pays.
pub(super) fn due_bills(cards: &[DemoCard], first_purchase: Date, today: Date) -> Vec<DueBill> {
    let mut out = Vec::new();
    let Ok(yesterday) = today.yesterday() else {
        return out;
    };
    for (index, card) in cards.iter().enumerate() {
        let first_due = card.cycles.cycle_of(first_purchase).due;
        let cycles = card.cycles.due_between(first_due, yesterday);
        let count = cycles.len();
        out.extend(cycles.into_iter().enumerate().map(|(k, cycle)| {
            let back = count - k;
            let settle = match (index, back) {
                (0, SPLIT_BACK) => Settle::Split,
                (1, PARTIAL_BACK) => Settle::Partial,
                _ => Settle::Full,
            };
            DueBill {
                card: index,
                cycle,
                settle,
            }
        }));
    }
    out
}

/// Stored rows the payments of `bills` take.
pub(super) fn payment_rows(bills: &[DueBill]) -> usize {
    bills.iter().map(|b| b.settle.rows()).sum()
}

/// Pays `bills` from checking with the amounts of the rows, rules and plans
/// generated so far (every entry of a due bill is dated before today, so
/// they are final). A bill with nothing to pay gets no payment: the caller
/// fills its reserved rows with other rows.
pub(super) fn pay_bills(
    b: &mut Builder<'_>,
    bills: &[DueBill],
    rules: &[RecurrenceRule],
    plans: &[InstallmentPlan],
) {
    let cards = b.setup.accounts.cards.clone();
    let checking = b.setup.accounts.checking;
    let today = b.today;
    let by_card: Vec<BillAmounts> = cards
        .iter()
        .map(|card| amounts(card.id, &card.cycles, &b.rows, rules, plans, today))
        .collect();
    for bill in bills {
        let (Some(card), Some(amounts)) = (cards.get(bill.card), by_card.get(bill.card)) else {
            continue;
        };
        let cycle = bill.cycle;
        let amount = amounts.get(&cycle.month).map_or(0, |m| m.cents());
        if amount <= 0 {
            continue;
        }
        // Paid between the day after the close and the due date.
        let window = days_between(cycle.close, cycle.due).max(1);
        let day = |b: &mut Builder<'_>| {
            add_days(cycle.close, b.rng.range(1, window)).unwrap_or(cycle.due)
        };
        match bill.settle {
            Settle::Full => {
                let date = day(b);
                pay(b, card, checking, cycle.month, date, amount);
            }
            Settle::Split if amount >= 2 => {
                let first = (amount * b.rng.range(30, 70) / 100).clamp(1, amount - 1);
                let date = day(b);
                pay(b, card, checking, cycle.month, date, first);
                pay(b, card, checking, cycle.month, cycle.due, amount - first);
            }
            Settle::Split => pay(b, card, checking, cycle.month, cycle.due, amount),
            Settle::Partial if amount >= 2 => {
                let part = (amount * b.rng.range(40, 80) / 100).clamp(1, amount - 1);
                pay(b, card, checking, cycle.month, cycle.due, part);
            }
            // A bill of one cent cannot be paid in part: it stays unpaid.
            Settle::Partial => {}
        }
    }
}

/// One payment: the DEBIT on the paying account (visible: it is the bill in
/// the cashflow) and the hidden CREDIT on the card, one transfer group.
fn pay(
    b: &mut Builder<'_>,
    card: &DemoCard,
    from: AccountId,
    month: BillMonth,
    date: Date,
    cents: i64,
) {
    let group = uuid::Uuid::now_v7();
    let leg = |bank_side| PaymentLeg {
        card_id: card.id,
        month,
        group,
        bank_side,
    };
    let description = format!("Pagamento de fatura - {}", card.title);
    b.push(
        from,
        date,
        TxType::Debit,
        cents,
        &description,
        "Pagamento de fatura",
        SeriesLink::None,
    );
    if let Some(row) = b.rows.last_mut() {
        row.payment = Some(leg(true));
    }
    b.push(
        card.id,
        date,
        TxType::Credit,
        cents,
        "Pagamento recebido",
        "Pagamento de fatura",
        SeriesLink::None,
    );
    if let Some(row) = b.rows.last_mut() {
        row.state.hide_from_results = true;
        row.payment = Some(leg(false));
    }
}
