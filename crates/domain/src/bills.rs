//! Card bills from a card's money: what each cycle amounts to, what was
//! paid against it, its status, and the card's used limit (DECISIONS §11).
//! The store hands over a card's rows summed per day; projections and
//! payments come alongside; everything here is arithmetic on them.

use jiff::civil::Date;

use uuid::Uuid;

mod book;
pub use book::{BillPayments, BillSums, CardBook, by_bill};

use crate::card::{BillMonth, BillStatus, Cycle, Cycles};
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
    use crate::card::outstanding;
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
}
