//! Card bills from a card's money: what each cycle amounts to, what was
//! paid against it, its status, and the card's used limit (DECISIONS §11).
//! The store hands over a card's rows summed per day; projections and
//! payments come alongside; everything here is arithmetic on them.

use jiff::civil::Date;
use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

use uuid::Uuid;

use crate::card::{BillMonth, BillStatus, Cycle, Cycles, outstanding, status};
use crate::projection::Handle;
use crate::transaction::{EntryId, Transaction, TransactionState, TxStatus, TxType};
use crate::{AccountId, CategoryId, Money, TransactionId};

/// The seeded system category "Pagamento de fatura" (fixed id everywhere).
pub const BILL_PAYMENT_CATEGORY: CategoryId =
    CategoryId(Uuid::from_u128(0x8af325d4_0dc3_5e04_8d45_879337802f65));

/// A card as bills and the cashflow view need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardInfo {
    pub title: String,
    pub cycles: Cycles,
    /// The account its bills are paid from, when set.
    pub pay_from: Option<AccountId>,
    pub limit: Money,
}

impl CardInfo {
    /// Where the card's bills appear in the cashflow view.
    pub fn paying_account(&self, card_id: AccountId) -> AccountId {
        self.pay_from.unwrap_or(card_id)
    }
}

/// The card settings of an account; none for a bank account.
pub fn card_info(account: &crate::account::Account) -> Option<CardInfo> {
    account.state.credit.as_ref().map(|credit| CardInfo {
        title: account.state.title.clone(),
        cycles: Cycles::of(credit),
        pay_from: account.state.pay_bill_from_account_id,
        limit: credit.limit,
    })
}

/// A payment of a bill, validated: a transfer from a bank account to the
/// card, both legs naming the bill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBillPayment {
    pub card_id: AccountId,
    pub month: BillMonth,
    pub from_account_id: AccountId,
    pub group: Uuid,
    /// The DEBIT on the bank account (it joins the bill's payments).
    pub bank_leg: TransactionId,
    pub bank: TransactionState,
    /// The hidden CREDIT on the card.
    pub card_leg: TransactionId,
    pub card: TransactionState,
}

/// Builds a payment of `amount` on `date` against the bill of `month`.
pub fn bill_payment(
    card_id: AccountId,
    card: &CardInfo,
    month: BillMonth,
    from_account_id: AccountId,
    amount: Money,
    date: Date,
    today: Date,
) -> Result<NewBillPayment, crate::DomainError> {
    if !amount.is_positive() {
        return Err(crate::DomainError::field(
            "amount",
            "must be greater than 0",
        ));
    }
    let leg = |tx_type, hide_from_results| TransactionState {
        date,
        tx_type,
        status: TxStatus::default_for(date, today),
        amount,
        description: format!(
            "Pagamento fatura {} {:02}/{}",
            card.title,
            month.month(),
            month.year()
        ),
        notes: None,
        category_id: Some(BILL_PAYMENT_CATEGORY),
        tag_ids: Vec::new(),
        hide_from_results,
    };
    Ok(NewBillPayment {
        card_id,
        month,
        from_account_id,
        group: Uuid::now_v7(),
        bank_leg: TransactionId::new(),
        bank: leg(TxType::Debit, false),
        card_leg: TransactionId::new(),
        card: leg(TxType::Credit, true),
    })
}

/// The handle of the bill due in `month`.
pub fn bill_handle(card_id: AccountId, month: BillMonth) -> Handle {
    Handle::Bill {
        card_id,
        year: month.year(),
        month: month.month(),
    }
}

/// A bill as one cashflow entry: on the paying account, dated its due
/// date, a PENDING DEBIT of what is left to pay.
pub fn bill_entry(card_id: AccountId, card: &CardInfo, currency: &str, bill: &Bill) -> Transaction {
    let state = TransactionState {
        date: bill.cycle.due,
        tx_type: TxType::Debit,
        status: TxStatus::Pending,
        amount: bill.outstanding,
        description: format!("Fatura {}", card.title),
        notes: None,
        category_id: Some(BILL_PAYMENT_CATEGORY),
        tag_ids: Vec::new(),
        hide_from_results: false,
    };
    let id = EntryId::Projected(bill_handle(card_id, bill.cycle.month));
    let account = card.paying_account(card_id);
    let mut entry = Transaction::plain(id, account, currency.to_owned(), state);
    entry.bill_to_account_id = Some(card_id);
    entry.created_by_user = false;
    entry
}

/// A card's stored rows of one day and type, payment legs left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DayTotal {
    pub date: Date,
    pub tx_type: TxType,
    /// Whether these rows are installments of a purchase.
    pub installment: bool,
    pub amount: Money,
}

/// A projected entry on the card (an installment or a rule occurrence not
/// stored yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Charge {
    pub date: Date,
    pub tx_type: TxType,
    pub installment: bool,
    pub amount: Money,
}

/// A payment registered against a bill: its bank-side row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    pub id: TransactionId,
    pub month: BillMonth,
    pub amount: Money,
}

/// One bill, as the bills list and the overview show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bill {
    pub cycle: Cycle,
    /// Card DEBITs minus card CREDITs other than payments, stored and
    /// projected, dated in the cycle.
    pub amount: Money,
    pub paid: Money,
    pub outstanding: Money,
    pub amount_is_estimate: bool,
    pub status: BillStatus,
    /// Bank-side rows of the payments, oldest first.
    pub payment_ids: Vec<TransactionId>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    net: i64,
    projected: bool,
}

/// Consecutive stored days of one bill, summed before they reach the book.
struct Run {
    month: BillMonth,
    /// The days `month_of` gives `month`: its cycle.
    start: Date,
    close: Date,
    net: i64,
    /// Installment DEBITs, when there was one.
    installments: Option<i64>,
}

impl Run {
    fn of(cycles: &Cycles, date: Date) -> Self {
        let month = cycles.month_of(date);
        // A cycle that does not hold the day (none should) takes that day
        // alone.
        let (start, close) = match cycles.cycle(month) {
            Some(c) if c.start <= date && date <= c.close => (c.start, c.close),
            _ => (date, date),
        };
        Run {
            month,
            start,
            close,
            net: 0,
            installments: None,
        }
    }

    fn holds(&self, date: Date) -> bool {
        self.start <= date && date <= self.close
    }
}

/// Everything known about one card's money, bucketed by bill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardBook {
    cycles: Cycles,
    totals: BTreeMap<BillMonth, Totals>,
    /// Installment DEBITs per bill (stored and projected): the used limit
    /// counts those of bills not started yet.
    installments: BTreeMap<BillMonth, i64>,
    payments: BTreeMap<BillMonth, Vec<Payment>>,
}

fn signed(tx_type: TxType, amount: Money) -> i64 {
    match tx_type {
        TxType::Debit => amount.cents(),
        TxType::Credit => -amount.cents(),
    }
}

impl CardBook {
    pub fn new(
        cycles: Cycles,
        days: &[DayTotal],
        projected: &[Charge],
        payments: Vec<Payment>,
    ) -> Self {
        let mut book = Self::stored(cycles, days, payments);
        book.add_charges(projected);
        book
    }

    /// The book of the stored money alone; [`Self::add_charges`] adds the
    /// projected entries. Kept apart so a card's stored book can be built
    /// once and reused while its money is unchanged.
    pub fn stored(cycles: Cycles, days: &[DayTotal], payments: Vec<Payment>) -> Self {
        let mut book = CardBook {
            cycles,
            totals: BTreeMap::new(),
            installments: BTreeMap::new(),
            payments: BTreeMap::new(),
        };
        // The days come sorted: those of one bill are summed before they
        // reach the maps, so a day costs a comparison rather than a month
        // lookup and two map searches (a year of three cards' days is about
        // a thousand of them). Out of order, a day starts a run of its own.
        let mut run: Option<Run> = None;
        for d in days {
            let current = match run.take() {
                Some(current) if current.holds(d.date) => run.insert(current),
                ended => {
                    if let Some(ended) = ended {
                        book.add_run(ended);
                    }
                    run.insert(Run::of(&cycles, d.date))
                }
            };
            current.net = current.net.saturating_add(signed(d.tx_type, d.amount));
            if d.installment && d.tx_type == TxType::Debit {
                let sum = current.installments.get_or_insert(0);
                *sum = sum.saturating_add(d.amount.cents());
            }
        }
        if let Some(ended) = run {
            book.add_run(ended);
        }
        for payment in payments {
            book.payments
                .entry(payment.month)
                .or_default()
                .push(payment);
        }
        book
    }

    /// Adds projected entries to the book.
    pub fn add_charges(&mut self, projected: &[Charge]) {
        for c in projected {
            self.add(c.date, c.tx_type, c.installment, c.amount, true);
        }
    }

    fn add(
        &mut self,
        date: Date,
        tx_type: TxType,
        installment: bool,
        amount: Money,
        is_projection: bool,
    ) {
        let month = self.cycles.month_of(date);
        let totals = self.totals.entry(month).or_default();
        totals.net = totals.net.saturating_add(signed(tx_type, amount));
        totals.projected |= is_projection;
        if installment && tx_type == TxType::Debit {
            let sum = self.installments.entry(month).or_default();
            *sum = sum.saturating_add(amount.cents());
        }
    }

    fn add_run(&mut self, run: Run) {
        let totals = self.totals.entry(run.month).or_default();
        totals.net = totals.net.saturating_add(run.net);
        if let Some(cents) = run.installments {
            let sum = self.installments.entry(run.month).or_default();
            *sum = sum.saturating_add(cents);
        }
    }

    pub fn cycles(&self) -> &Cycles {
        &self.cycles
    }

    /// The bill due in `month`; none for a month without a cycle (one
    /// that lies wholly before the calendar).
    pub fn bill(&self, month: BillMonth, today: Date) -> Option<Bill> {
        Some(self.bill_of(self.cycles.cycle(month)?, today))
    }

    fn bill_of(&self, cycle: Cycle, today: Date) -> Bill {
        let month = cycle.month;
        let totals = self.totals.get(&month).copied().unwrap_or_default();
        let amount = Money::from_cents(totals.net);
        let payments = self.payments.get(&month).map_or(&[][..], Vec::as_slice);
        let paid = Money::from_cents(
            payments
                .iter()
                .fold(0_i64, |sum, p| sum.saturating_add(p.amount.cents())),
        );
        Bill {
            cycle,
            amount,
            paid,
            outstanding: outstanding(amount, paid),
            amount_is_estimate: today <= cycle.close || totals.projected,
            status: status(&cycle, amount, paid, today),
            payment_ids: payments.iter().map(|p| p.id).collect(),
        }
    }

    /// Bills whose due date lies in `[from, to]`, oldest first.
    pub fn due_between(&self, from: Date, to: Date, today: Date) -> Vec<Bill> {
        self.cycles
            .due_between(from, to)
            .into_iter()
            .map(|cycle| self.bill_of(cycle, today))
            .collect()
    }

    /// Every bill with money or payments whose cycle has started by
    /// `today` (past ones and the open one), oldest first: only the months
    /// that hold something, never a walk over the months between.
    pub fn started(&self, today: Date) -> Vec<Bill> {
        let current = self.cycles.month_of(today);
        let mut months: Vec<BillMonth> = self
            .totals
            .range(..=current)
            .map(|(month, _)| *month)
            .chain(self.payments.range(..=current).map(|(month, _)| *month))
            .collect();
        months.sort_unstable();
        months.dedup();
        months
            .into_iter()
            .filter_map(|month| self.bill(month, today))
            .collect()
    }

    /// The used limit: every unpaid bill whose cycle has started, plus
    /// every installment of the bills after the open one (less what was
    /// already paid against such a bill: paying ahead frees the limit).
    pub fn used_limit(&self, today: Date) -> Money {
        self.used_limit_of(&self.started(today), today)
    }

    /// [`Self::used_limit`] from the bills [`Self::started`] gave for
    /// `today`, for a caller that needs them for other figures too (the
    /// bills of ten years of history are a few hundred).
    pub fn used_limit_of(&self, started: &[Bill], today: Date) -> Money {
        let current = self.cycles.month_of(today);
        let later: i64 = self
            .installments
            .range((Excluded(current), Unbounded))
            .map(|(month, cents)| {
                let paid = self.payments.get(month).map_or(0_i64, |list| {
                    list.iter()
                        .fold(0_i64, |s, p| s.saturating_add(p.amount.cents()))
                });
                cents.saturating_sub(paid).max(0)
            })
            .fold(0_i64, i64::saturating_add);
        Money::from_cents(open_total(started).cents().saturating_add(later))
    }
}

/// Outstanding of `bills` ([`CardBook::started`]'s: every unpaid bill whose
/// cycle has started).
pub fn open_total(bills: &[Bill]) -> Money {
    sum(bills.iter().map(|b| b.outstanding))
}

/// What a payment of a bill may pay, decided from the bill as it stands
/// (read under the same write lock that stores the payment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentDecision {
    Pay(Money),
    /// The card never had this bill: a cycle that is neither open nor
    /// holds any charge or payment.
    NoSuchBill,
    /// The bill is paid (or, asked for no amount, has nothing owed).
    NothingToPay,
    /// An amount larger than what is left on a closed bill: the excess
    /// would go to no bill.
    MoreThanOwed {
        left: Money,
    },
}

/// Decides a payment of `bill` on `today`: with no amount, what is left
/// to pay; with one, any amount while the cycle is open or to come (paying
/// ahead), at most what is left once it has closed.
pub fn decide_payment(bill: &Bill, requested: Option<Money>, today: Date) -> PaymentDecision {
    let open = bill.cycle.contains(today);
    if !open && bill.amount == Money::ZERO && bill.paid == Money::ZERO {
        return PaymentDecision::NoSuchBill;
    }
    let left = bill.outstanding;
    match requested {
        None if left.is_positive() => PaymentDecision::Pay(left),
        None => PaymentDecision::NothingToPay,
        Some(amount) if today <= bill.cycle.close => PaymentDecision::Pay(amount),
        Some(_) if !left.is_positive() => PaymentDecision::NothingToPay,
        Some(amount) if amount > left => PaymentDecision::MoreThanOwed { left },
        Some(amount) => PaymentDecision::Pay(amount),
    }
}

/// Adds amounts (saturating: totals of real money never get near the end).
pub fn sum(amounts: impl Iterator<Item = Money>) -> Money {
    Money::from_cents(amounts.fold(0_i64, |s, m| s.saturating_add(m.cents())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn bill_of(amount: i64, paid: i64) -> Bill {
        let cycle = Cycles::new(3, 10).cycle(m(2026, 11)).unwrap();
        Bill {
            cycle,
            amount: Money::from_cents(amount),
            paid: Money::from_cents(paid),
            outstanding: outstanding(Money::from_cents(amount), Money::from_cents(paid)),
            amount_is_estimate: false,
            status: BillStatus::Fechada,
            payment_ids: Vec::new(),
        }
    }

    #[test]
    fn a_closed_bill_pays_what_is_left_and_no_more() {
        use PaymentDecision::*;
        let after_close = date(2026, 11, 5);
        let cents = Money::from_cents;
        assert_eq!(
            decide_payment(&bill_of(5_000, 0), None, after_close),
            Pay(cents(5_000))
        );
        assert_eq!(
            decide_payment(&bill_of(5_000, 2_000), None, after_close),
            Pay(cents(3_000))
        );
        assert_eq!(
            decide_payment(&bill_of(5_000, 5_000), None, after_close),
            NothingToPay
        );
        assert_eq!(
            decide_payment(&bill_of(5_000, 5_000), Some(cents(1)), after_close),
            NothingToPay
        );
        assert_eq!(
            decide_payment(&bill_of(5_000, 2_000), Some(cents(3_001)), after_close),
            MoreThanOwed { left: cents(3_000) }
        );
        assert_eq!(
            decide_payment(&bill_of(5_000, 2_000), Some(cents(1_000)), after_close),
            Pay(cents(1_000))
        );
    }

    #[test]
    fn an_open_bill_can_be_paid_ahead_and_an_empty_past_one_never_existed() {
        use PaymentDecision::*;
        let cents = Money::from_cents;
        let open = date(2026, 10, 20);
        assert_eq!(
            decide_payment(&bill_of(0, 0), Some(cents(900)), open),
            Pay(cents(900))
        );
        assert_eq!(decide_payment(&bill_of(0, 0), None, open), NothingToPay);
        assert_eq!(
            decide_payment(&bill_of(5_000, 5_000), Some(cents(10)), open),
            Pay(cents(10))
        );
        // Before its cycle, a bill with charges (installments) can be paid
        // ahead; one with nothing in it is not a bill of the card.
        let before = date(2026, 9, 1);
        assert_eq!(
            decide_payment(&bill_of(4_000, 0), None, before),
            Pay(cents(4_000))
        );
        assert_eq!(
            decide_payment(&bill_of(0, 0), Some(cents(1)), before),
            NoSuchBill
        );
        let after = date(2027, 1, 1);
        assert_eq!(
            decide_payment(&bill_of(0, 0), Some(cents(1)), after),
            NoSuchBill
        );
    }

    fn m(year: i16, month: i8) -> BillMonth {
        BillMonth::new(year, month).unwrap()
    }

    fn day(date: Date, tx_type: TxType, cents: i64) -> DayTotal {
        DayTotal {
            date,
            tx_type,
            installment: false,
            amount: Money::from_cents(cents),
        }
    }

    fn book() -> CardBook {
        // Close 3, due 10. October bill: Sep 4..Oct 3; November: Oct 4..Nov 3.
        CardBook::new(
            Cycles::new(3, 10),
            &[
                day(date(2026, 9, 20), TxType::Debit, 10_000),
                day(date(2026, 10, 3), TxType::Debit, 5_000), // close day: October bill
                day(date(2026, 10, 4), TxType::Debit, 20_000),
                day(date(2026, 10, 20), TxType::Credit, 2_000), // a refund
                day(date(2026, 11, 10), TxType::Debit, 7_000),
            ],
            &[Charge {
                date: date(2027, 1, 15),
                tx_type: TxType::Debit,
                installment: true,
                amount: Money::from_cents(3_000),
            }],
            vec![Payment {
                id: TransactionId::new(),
                month: m(2026, 10),
                amount: Money::from_cents(15_000),
            }],
        )
    }

    #[test]
    fn amounts_net_refunds_and_skip_payments() {
        let today = date(2026, 11, 22);
        let october = book().bill(m(2026, 10), today).unwrap();
        assert_eq!(october.amount, Money::from_cents(15_000));
        assert_eq!(october.status, BillStatus::Paga);
        assert_eq!(october.outstanding, Money::ZERO);
        assert!(!october.amount_is_estimate);
        let november = book().bill(m(2026, 11), today).unwrap();
        assert_eq!(november.amount, Money::from_cents(18_000));
        assert_eq!(november.status, BillStatus::Vencida);
        let december = book().bill(m(2026, 12), today).unwrap();
        assert_eq!(december.status, BillStatus::Aberta);
        assert!(december.amount_is_estimate);
        let february = book().bill(m(2027, 2), today).unwrap();
        assert!(february.amount_is_estimate, "holds a projection");
        assert_eq!(february.amount, Money::from_cents(3_000));
    }

    #[test]
    fn used_limit_is_open_bills_plus_later_installments() {
        let today = date(2026, 11, 22);
        let b = book();
        // Unpaid: November 180.00 (overdue) + December 70.00 (open).
        assert_eq!(open_total(&b.started(today)), Money::from_cents(25_000));
        assert_eq!(b.used_limit(today), Money::from_cents(28_000));
        let months: Vec<BillMonth> = b.started(today).iter().map(|x| x.cycle.month).collect();
        assert_eq!(months, [m(2026, 10), m(2026, 11), m(2026, 12)]);
    }

    #[test]
    fn paying_a_later_bill_ahead_frees_the_limit() {
        let today = date(2026, 11, 22);
        let mut b = book();
        b.payments.entry(m(2027, 2)).or_default().push(Payment {
            id: TransactionId::new(),
            month: m(2027, 2),
            amount: Money::from_cents(1_000),
        });
        assert_eq!(b.used_limit(today), Money::from_cents(27_000));
        b.payments.entry(m(2027, 2)).or_default().push(Payment {
            id: TransactionId::new(),
            month: m(2027, 2),
            amount: Money::from_cents(9_000),
        });
        assert_eq!(
            b.used_limit(today),
            Money::from_cents(25_000),
            "never below zero"
        );
    }

    #[test]
    fn due_between_lists_every_cycle_even_empty_ones() {
        let bills = book().due_between(date(2026, 10, 1), date(2027, 1, 31), date(2026, 11, 22));
        let months: Vec<BillMonth> = bills.iter().map(|b| b.cycle.month).collect();
        assert_eq!(months, [m(2026, 10), m(2026, 11), m(2026, 12), m(2027, 1)]);
        assert_eq!(bills[3].amount, Money::ZERO);
    }

    mod stored_days {
        use super::*;
        use proptest::prelude::*;

        /// The book as it was built before runs: every day looked up alone.
        fn day_by_day(cycles: Cycles, days: &[DayTotal]) -> CardBook {
            let mut book = CardBook::stored(cycles, &[], Vec::new());
            for d in days {
                book.add(d.date, d.tx_type, d.installment, d.amount, false);
            }
            book
        }

        fn days(first: Date) -> impl Strategy<Value = Vec<DayTotal>> {
            proptest::collection::vec(
                (
                    0i64..1_500,
                    any::<bool>(),
                    any::<bool>(),
                    -50_000i64..50_000,
                ),
                0..120,
            )
            .prop_map(move |raw| {
                raw.into_iter()
                    .filter_map(|(offset, debit, installment, cents)| {
                        Some(DayTotal {
                            date: first.checked_add(jiff::Span::new().days(offset)).ok()?,
                            tx_type: if debit { TxType::Debit } else { TxType::Credit },
                            installment,
                            amount: Money::from_cents(cents),
                        })
                    })
                    .collect()
            })
        }

        proptest! {
            /// Sorted or not, near the calendar's ends or not, summing the
            /// days of one bill together gives the book of one day at a time.
            #[test]
            fn runs_give_the_book_of_single_days(
                close in 1u8..=31,
                due in 1u8..=31,
                start in prop::sample::select(vec![
                    date(2024, 1, 1), date(2028, 2, 27), crate::time::MIN_DATE, date(9995, 12, 1),
                ]),
                mut days in days(date(2024, 1, 1)),
                sorted in any::<bool>(),
            ) {
                let shift = start - date(2024, 1, 1);
                let mut days: Vec<DayTotal> = days
                    .drain(..)
                    .filter_map(|d| Some(DayTotal { date: d.date.checked_add(shift).ok()?, ..d }))
                    .collect();
                if sorted {
                    days.sort_by_key(|d| d.date);
                }
                let cycles = Cycles::new(close, due);
                prop_assert_eq!(CardBook::stored(cycles, &days, Vec::new()), day_by_day(cycles, &days));
            }
        }
    }
}
