//! The one-call overview (DECISIONS §12): balance, card debt, open bills,
//! net worth, the bills due soon, this month's result and the forecast
//! balance of the month, each computed from the same entries the list and
//! bills endpoints show.

use jiff::ToSpan;
use jiff::civil::Date;
use std::collections::HashMap;

use crate::bills::{Bill, CardBook, CardInfo, bill_handle, open_total, sum};
use crate::transaction::{EntryId, Transaction, TransactionFilter, TxStatus, TxType};
use crate::view::{Hashing, ViewSources, each_projected};
use crate::{AccountId, Money};

/// What the overview needs of an account.
#[derive(Clone, Debug)]
pub struct AccountTotal {
    pub id: AccountId,
    pub is_card: bool,
    /// Not archived, not excluded from totals, in the base currency.
    pub counts: bool,
    pub balance: Money,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextBill {
    pub projected_bill_id: String,
    pub card_account_id: AccountId,
    pub description: String,
    pub amount: Money,
    pub due_date: Date,
    pub amount_is_estimate: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonthResult {
    pub receitas: Money,
    pub despesas: Money,
    pub resultado: Money,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    pub bills: Money,
    pub installments: Money,
    pub subscriptions: Money,
    pub scheduled: Money,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forecast {
    pub base: Money,
    pub expected_in: Money,
    pub committed_out: Committed,
    pub result: Money,
    pub explain: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overview {
    pub bank_balance: Money,
    pub card_debt: Money,
    pub open_bills_total: Money,
    pub net_worth: Money,
    pub next_bills: Vec<NextBill>,
    pub month: MonthResult,
    pub saldo_previsto: Forecast,
}

/// Days ahead that `next_bills` looks.
pub const NEXT_BILLS_DAYS: i64 = 30;

/// `R$ 1.234,56` (`-R$ 1.234,56` below zero), as a Brazilian reads money.
pub fn brl(amount: Money) -> String {
    let cents = amount.cents().unsigned_abs();
    let (units, rest) = (cents / 100, cents % 100);
    let digits = units.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push('.');
        }
        grouped.push(c);
    }
    let sign = if amount.is_negative() { "-" } else { "" };
    format!("{sign}R$ {grouped},{rest:02}")
}

/// What a month amount is, for the forecast's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// A stored row outside any series.
    Plain,
    Installment,
    Recurrence,
    /// A card bill's cashflow entry.
    Bill {
        card_id: AccountId,
    },
}

/// An amount of the month's cashflow view: the sum of stored rows that
/// share account, type, status and kind, or one projected entry or bill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonthItem {
    pub account_id: AccountId,
    pub tx_type: TxType,
    pub status: TxStatus,
    pub kind: ItemKind,
    pub amount: Money,
}

impl MonthItem {
    /// One entry of the view as an item.
    pub fn of(entry: &Transaction) -> Self {
        let kind = match entry.id {
            EntryId::Projected(crate::projection::Handle::Bill { card_id, .. }) => {
                ItemKind::Bill { card_id }
            }
            _ if entry.installment.is_some() => ItemKind::Installment,
            _ if entry.recurrence_id.is_some() => ItemKind::Recurrence,
            _ => ItemKind::Plain,
        };
        MonthItem {
            account_id: entry.account_id,
            tx_type: entry.state.tx_type,
            status: entry.state.status,
            kind,
            amount: entry.state.amount,
        }
    }
}

/// Most projected entries of one month the overview sums.
pub const MONTH_ENTRIES: usize = 100_000;

/// The projected entries of the cashflow view (visible, off the cards)
/// dated in `[from, to]`, as month items summed per account, type, status
/// and kind: what the overview adds to its month's stored sums, which are
/// summed the same way. A pure function of the sources, so it can be kept
/// beside them; at most [`MONTH_ENTRIES`] entries are summed.
pub fn projected_items(sources: &ViewSources, from: Date, to: Date) -> Vec<MonthItem> {
    let filter = TransactionFilter {
        cashflow: true,
        ..TransactionFilter::window(from, to)
    };
    let mut sums: HashMap<(AccountId, TxType, TxStatus, ItemKind), Money, Hashing> =
        HashMap::default();
    each_projected(sources, &filter, MONTH_ENTRIES, |entry| {
        let item = MonthItem::of(entry);
        let key = (item.account_id, item.tx_type, item.status, item.kind);
        let sum = sums.entry(key).or_default();
        *sum = sum.saturating_add(item.amount);
    });
    sums.into_iter()
        .map(|((account_id, tx_type, status, kind), amount)| MonthItem {
            account_id,
            tx_type,
            status,
            kind,
            amount,
        })
        .collect()
}

fn total<'a>(items: impl Iterator<Item = &'a MonthItem>) -> Money {
    sum(items.map(|t| t.amount))
}

/// Computes the overview.
/// - `accounts`: every account with its balance;
/// - `cards`: each card's book (whole history and future);
/// - `month`: the cashflow view of the current month, visible entries,
///   stored (summed) and projected, of every account (the month counts
///   those of counting accounts, and a bill entry only when its card
///   counts too);
/// - `month_end`: the last day of the current month.
pub fn overview(
    accounts: &[AccountTotal],
    cards: &[(AccountId, &CardInfo, &CardBook)],
    month_items: &[MonthItem],
    today: Date,
    month_end: Date,
) -> Overview {
    let counting = |id: &AccountId| accounts.iter().any(|a| a.id == *id && a.counts);
    let counting_bank = |id: &AccountId| {
        accounts
            .iter()
            .any(|a| a.id == *id && a.counts && !a.is_card)
    };
    let bank_balance = sum(accounts
        .iter()
        .filter(|a| a.counts && !a.is_card)
        .map(|a| a.balance));
    let cards: Vec<&(AccountId, &CardInfo, &CardBook)> =
        cards.iter().filter(|(id, ..)| counting(id)).collect();
    // Each card's started bills left to pay, worked out once for the three
    // figures drawn from them (the debt, the open bills and the forecast's
    // bills), none of which a paid bill changes.
    let started: Vec<Vec<Bill>> = cards
        .iter()
        .map(|(_, _, book)| book.unpaid_started(today))
        .collect();
    let card_debt = sum(cards
        .iter()
        .zip(&started)
        .map(|((_, _, book), bills)| book.used_limit_of(bills, today)));
    let open_bills_total = sum(started.iter().map(|bills| open_total(bills)));
    let soon = today
        .checked_add(NEXT_BILLS_DAYS.days())
        .unwrap_or(Date::MAX);
    let mut next_bills: Vec<NextBill> = cards
        .iter()
        .flat_map(|(id, info, book)| {
            book.due_between(today, soon, today)
                .into_iter()
                .filter(|b| b.outstanding.is_positive())
                .map(|b| NextBill {
                    projected_bill_id: bill_handle(*id, b.cycle.month).to_string(),
                    card_account_id: *id,
                    description: format!("Fatura {}", info.title),
                    amount: b.outstanding,
                    due_date: b.cycle.due,
                    amount_is_estimate: b.amount_is_estimate,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    next_bills.sort_by(|a, b| {
        (a.due_date, &a.projected_bill_id).cmp(&(b.due_date, &b.projected_bill_id))
    });

    // A bill entry is its card's money: it counts when the card counts
    // too, not just the account paying it (an archived, excluded or
    // foreign-currency card's bill stays out of the totals).
    let bill_card = |item: &MonthItem| match item.kind {
        ItemKind::Bill { card_id } => Some(card_id),
        _ => None,
    };
    let in_month: Vec<&MonthItem> = month_items
        .iter()
        .filter(|t| counting(&t.account_id) && bill_card(t).is_none_or(|card| counting(&card)))
        .collect();
    let of_type = |tx_type| {
        in_month
            .iter()
            .copied()
            .filter(move |t| t.tx_type == tx_type)
    };
    let receitas = total(of_type(TxType::Credit));
    let despesas = total(of_type(TxType::Debit));
    let month = MonthResult {
        receitas,
        despesas,
        resultado: receitas.saturating_sub(despesas),
    };

    // The forecast: bank accounts that count, entries not yet POSTED; the
    // bills come from the cards (overdue ones too).
    let pending: Vec<&MonthItem> = month_items
        .iter()
        .filter(|t| {
            counting_bank(&t.account_id) && t.status != TxStatus::Posted && bill_card(t).is_none()
        })
        .collect();
    let debits = |kind: ItemKind| {
        total(
            pending
                .iter()
                .copied()
                .filter(move |t| t.tx_type == TxType::Debit && t.kind == kind),
        )
    };
    let expected_in = total(
        pending
            .iter()
            .copied()
            .filter(|t| t.tx_type == TxType::Credit),
    );
    let installments = debits(ItemKind::Installment);
    let subscriptions = debits(ItemKind::Recurrence);
    let scheduled = debits(ItemKind::Plain);
    let bills = sum(started
        .iter()
        .flatten()
        .filter(|b| b.cycle.due <= month_end)
        .map(|b| b.outstanding));
    let committed = sum([bills, installments, subscriptions, scheduled].into_iter());
    let result = bank_balance
        .saturating_add(expected_in)
        .saturating_sub(committed);
    let explain = vec![
        format!("Saldo atual em contas: {}", brl(bank_balance)),
        format!("Receitas previstas no mês: {}", brl(expected_in)),
        format!("Faturas a pagar: {}", brl(bills)),
        format!("Parcelas a pagar: {}", brl(installments)),
        format!("Assinaturas e contas recorrentes: {}", brl(subscriptions)),
        format!("Outros lançamentos agendados: {}", brl(scheduled)),
        format!("Saldo previsto no fim do mês: {}", brl(result)),
    ];
    Overview {
        bank_balance,
        card_debt,
        open_bills_total,
        net_worth: bank_balance.saturating_sub(card_debt),
        next_bills,
        month,
        saldo_previsto: Forecast {
            base: bank_balance,
            expected_in,
            committed_out: Committed {
                bills,
                installments,
                subscriptions,
                scheduled,
            },
            result,
            explain,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TransactionId;
    use crate::bills::{DayTotal, Payment};
    use crate::card::{BillMonth, Cycles};
    use crate::transaction::TransactionState;
    use jiff::civil::date;

    #[test]
    fn brl_groups_thousands_with_dots() {
        assert_eq!(brl(Money::from_cents(123_456)), "R$ 1.234,56");
        assert_eq!(brl(Money::from_cents(5)), "R$ 0,05");
        assert_eq!(brl(Money::from_cents(-100_000_000)), "-R$ 1.000.000,00");
        assert_eq!(brl(Money::ZERO), "R$ 0,00");
    }

    fn entry(account: AccountId, tx_type: TxType, status: TxStatus, cents: i64) -> Transaction {
        let state = TransactionState {
            date: date(2026, 11, 25),
            tx_type,
            status,
            amount: Money::from_cents(cents),
            description: "x".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
            hide_from_results: false,
        };
        let id = EntryId::Stored(TransactionId::new());
        Transaction::plain(id, account, "BRL".into(), state)
    }

    #[test]
    fn forecast_adds_up_its_terms() {
        let (bank, excluded, card) = (AccountId::new(), AccountId::new(), AccountId::new());
        let accounts = [
            AccountTotal {
                id: bank,
                is_card: false,
                counts: true,
                balance: Money::from_cents(500_000),
            },
            AccountTotal {
                id: excluded,
                is_card: false,
                counts: false,
                balance: Money::from_cents(99_900),
            },
            AccountTotal {
                id: card,
                is_card: true,
                counts: true,
                balance: Money::from_cents(-30_000),
            },
        ];
        let info = CardInfo {
            title: "Nu".into(),
            cycles: Cycles::new(3, 10),
            pay_from: Some(bank),
            limit: Money::from_cents(1_000_000),
        };
        // November bill (Oct 4..Nov 3) 300.00, 100.00 paid; December open 50.00.
        let book = CardBook::new(
            info.cycles,
            &[
                DayTotal {
                    date: date(2026, 10, 10),
                    tx_type: TxType::Debit,
                    installment: false,
                    amount: Money::from_cents(30_000),
                },
                DayTotal {
                    date: date(2026, 11, 20),
                    tx_type: TxType::Debit,
                    installment: false,
                    amount: Money::from_cents(5_000),
                },
            ],
            &[],
            vec![Payment {
                id: TransactionId::new(),
                month: BillMonth::new(2026, 11).unwrap(),
                amount: Money::from_cents(10_000),
            }],
        );
        let entries = [
            entry(bank, TxType::Credit, TxStatus::Pending, 700_000),
            entry(bank, TxType::Debit, TxStatus::Pending, 20_000),
            entry(bank, TxType::Debit, TxStatus::Posted, 1_000),
            entry(excluded, TxType::Credit, TxStatus::Pending, 123),
        ];
        let o = overview(
            &accounts,
            &[(card, &info, &book)],
            &entries.iter().map(MonthItem::of).collect::<Vec<_>>(),
            date(2026, 11, 22),
            date(2026, 11, 30),
        );
        assert_eq!(o.bank_balance, Money::from_cents(500_000));
        assert_eq!(o.open_bills_total, Money::from_cents(25_000));
        assert_eq!(o.card_debt, Money::from_cents(25_000));
        assert_eq!(o.net_worth, Money::from_cents(475_000));
        assert_eq!(o.month.receitas, Money::from_cents(700_000));
        assert_eq!(o.month.despesas, Money::from_cents(21_000));
        let f = &o.saldo_previsto;
        assert_eq!(f.expected_in, Money::from_cents(700_000));
        assert_eq!(
            f.committed_out.bills,
            Money::from_cents(20_000),
            "overdue November only"
        );
        assert_eq!(f.committed_out.scheduled, Money::from_cents(20_000));
        assert_eq!(f.result, Money::from_cents(500_000 + 700_000 - 40_000));
        assert_eq!(f.explain[2], "Faturas a pagar: R$ 200,00");
        assert_eq!(o.next_bills.len(), 1);
        assert_eq!(o.next_bills[0].due_date, date(2026, 12, 10));
        assert_eq!(o.next_bills[0].amount, Money::from_cents(5_000));
    }

    #[test]
    fn a_bill_counts_in_the_month_only_when_its_card_counts() {
        // Both cards' bills stand on the counting bank account in the
        // cashflow view; only the counting card's enters the month.
        let (bank, counted, left_out) = (AccountId::new(), AccountId::new(), AccountId::new());
        let account = |id, is_card, counts| AccountTotal {
            id,
            is_card,
            counts,
            balance: Money::ZERO,
        };
        let accounts = [
            account(bank, false, true),
            account(counted, true, true),
            account(left_out, true, false),
        ];
        let info = CardInfo {
            title: "Cartão".into(),
            cycles: Cycles::new(3, 10),
            pay_from: Some(bank),
            limit: Money::ZERO,
        };
        let book = CardBook::new(
            info.cycles,
            &[DayTotal {
                date: date(2026, 10, 10),
                tx_type: TxType::Debit,
                installment: false,
                amount: Money::from_cents(1_000),
            }],
            &[],
            Vec::new(),
        );
        let (today, month_end) = (date(2026, 11, 22), date(2026, 11, 30));
        let bill = book.bill(BillMonth::new(2026, 11).unwrap(), today).unwrap();
        let entries = [
            crate::bills::bill_entry(counted, &info, "BRL", &bill),
            crate::bills::bill_entry(left_out, &info, "USD", &bill),
        ];
        assert!(entries.iter().all(|e| e.account_id == bank));
        let o = overview(
            &accounts,
            &[(counted, &info, &book), (left_out, &info, &book)],
            &entries.iter().map(MonthItem::of).collect::<Vec<_>>(),
            today,
            month_end,
        );
        assert_eq!(o.month.despesas, Money::from_cents(1_000));
        assert_eq!(
            o.saldo_previsto.committed_out.bills,
            Money::from_cents(1_000)
        );
        assert_eq!(o.open_bills_total, Money::from_cents(1_000));
    }
}
