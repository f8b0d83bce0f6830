//! Internal transfers: two rows, one on each account, tied by a
//! `transfer_group_id` and hidden from results (moving money between one's
//! own accounts is neither income nor expense), and the category rules of
//! marking and unmarking rows as transfers.

use jiff::civil::Date;
use uuid::Uuid;

use crate::text::{DESCRIPTION_MAX, required_text};
use crate::transaction::{TransactionChanges, TransactionState, TxStatus, TxType, notes_rule};
use crate::{AccountId, CategoryId, DomainError, FieldErrors, Money, TransactionId};

/// The seeded system category "Transferência" (fixed id on every install).
pub const TRANSFER_CATEGORY: CategoryId =
    CategoryId(Uuid::from_u128(0x037e8e7f_50d7_5892_ad50_75570da8c0ec));

/// Why a transfer leg's type cannot change alone.
pub const LEG_TYPE_LOCKED: &str = "a transfer leg's type is fixed by its side (money leaves \
    one account and enters the other): unmark-transfer first, or delete the transfer and \
    create it again";

/// Why a transfer leg cannot move to another account alone.
pub const LEG_ACCOUNT_LOCKED: &str = "a transfer leg cannot move to another account alone: \
    unmark-transfer first, or delete the transfer and create it again";

/// The part of a change to one leg of a transfer group that every other
/// leg takes too, in the same transaction: a transfer moves one amount, on
/// one date, in one status, on both sides. Description, notes, category,
/// tags and visibility stay per leg.
pub fn shared_leg_changes(changes: &TransactionChanges) -> TransactionChanges {
    TransactionChanges {
        date: changes.date,
        status: changes.status,
        amount: changes.amount,
        ..TransactionChanges::default()
    }
}

/// A transfer request, as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct TransferInput {
    pub from_account_id: Option<AccountId>,
    pub to_account_id: Option<AccountId>,
    pub amount: Option<Money>,
    pub description: Option<String>,
    pub date: Option<Date>,
    pub notes: Option<String>,
}

/// A validated transfer: the two legs to store in one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTransfer {
    pub group_id: Uuid,
    pub from_account_id: AccountId,
    pub to_account_id: AccountId,
    /// The DEBIT on the source account.
    pub sent_id: TransactionId,
    pub sent: TransactionState,
    /// The CREDIT on the destination account.
    pub received_id: TransactionId,
    pub received: TransactionState,
}

/// Validates a transfer. `today` decides the default date and status.
pub fn new_transfer(input: &TransferInput, today: Date) -> Result<NewTransfer, DomainError> {
    let mut errors = FieldErrors::new();
    if input.from_account_id.is_none() {
        errors.add("from_account_id", "is required");
    }
    match (input.from_account_id, input.to_account_id) {
        (_, None) => errors.add("to_account_id", "is required"),
        (Some(from), Some(to)) if from == to => errors.add(
            "to_account_id",
            "must differ from from_account_id: a transfer moves money between two accounts",
        ),
        _ => {}
    }
    match input.amount {
        None => errors.add("amount", "is required"),
        Some(amount) if !amount.is_positive() => errors.add("amount", "must be greater than 0"),
        Some(_) => {}
    }
    let description = match &input.description {
        None => {
            errors.add("description", "is required");
            None
        }
        Some(d) => errors.check(required_text("description", d, DESCRIPTION_MAX)),
    };
    let notes = input
        .notes
        .as_deref()
        .and_then(|n| notes_rule(&mut errors, n));
    errors.finish()?;
    let (Some(from), Some(to), Some(amount), Some(description)) = (
        input.from_account_id,
        input.to_account_id,
        input.amount,
        description,
    ) else {
        return Err(DomainError::field("body", "is incomplete"));
    };
    let date = input.date.unwrap_or(today);
    let leg = |tx_type| TransactionState {
        date,
        tx_type,
        status: TxStatus::default_for(date, today),
        amount,
        description: description.clone(),
        notes: notes.clone(),
        category_id: Some(TRANSFER_CATEGORY),
        tag_ids: Vec::new(),
        hide_from_results: true,
    };
    Ok(NewTransfer {
        group_id: Uuid::now_v7(),
        from_account_id: from,
        to_account_id: to,
        sent_id: TransactionId::new(),
        sent: leg(TxType::Debit),
        received_id: TransactionId::new(),
        received: leg(TxType::Credit),
    })
}

/// The category of a row being marked as a transfer: the user's choice
/// stays; only a row without one gets "Transferência".
pub fn category_when_marked(current: Option<CategoryId>) -> Option<CategoryId> {
    current.or(Some(TRANSFER_CATEGORY))
}

/// The category of a row being released from a transfer: "Transferência"
/// goes back to no category, a category the user chose stays.
pub fn category_when_unmarked(current: Option<CategoryId>) -> Option<CategoryId> {
    current.filter(|c| *c != TRANSFER_CATEGORY)
}

/// A row that older clients marked as a transfer without a group: hidden,
/// in "Transferência", with no pair.
pub fn is_legacy_transfer(
    transfer_group: Option<Uuid>,
    hidden: bool,
    category: Option<CategoryId>,
) -> bool {
    transfer_group.is_none() && hidden && category == Some(TRANSFER_CATEGORY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn input() -> TransferInput {
        TransferInput {
            from_account_id: Some(AccountId::new()),
            to_account_id: Some(AccountId::new()),
            amount: Some(Money::from_cents(15_000)),
            description: Some(" Reserva ".into()),
            ..Default::default()
        }
    }

    #[test]
    fn builds_two_hidden_legs_in_transferencia() {
        let t = new_transfer(&input(), date(2026, 11, 22)).unwrap();
        assert_eq!(t.sent.tx_type, TxType::Debit);
        assert_eq!(t.received.tx_type, TxType::Credit);
        for leg in [&t.sent, &t.received] {
            assert!(leg.hide_from_results);
            assert_eq!(leg.category_id, Some(TRANSFER_CATEGORY));
            assert_eq!(leg.amount, Money::from_cents(15_000));
            assert_eq!(leg.description, "Reserva");
            assert_eq!(leg.status, TxStatus::Posted);
        }
        assert_ne!(t.sent_id, t.received_id);
    }

    #[test]
    fn a_future_transfer_is_pending() {
        let future = TransferInput {
            date: Some(date(2026, 12, 1)),
            ..input()
        };
        let t = new_transfer(&future, date(2026, 11, 22)).unwrap();
        assert_eq!(t.sent.status, TxStatus::Pending);
        assert_eq!(t.received.date, date(2026, 12, 1));
    }

    #[test]
    fn refuses_same_account_and_non_positive_amounts() {
        let account = AccountId::new();
        let same = TransferInput {
            from_account_id: Some(account),
            to_account_id: Some(account),
            amount: Some(Money::ZERO),
            ..input()
        };
        let DomainError::Validation(list) = new_transfer(&same, date(2026, 1, 1)).unwrap_err()
        else {
            panic!("not a validation error")
        };
        let fields: Vec<_> = list.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["to_account_id", "amount"]);
    }

    #[test]
    fn names_every_missing_field() {
        let DomainError::Validation(list) =
            new_transfer(&TransferInput::default(), date(2026, 1, 1)).unwrap_err()
        else {
            panic!("not a validation error")
        };
        let fields: Vec<_> = list.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["from_account_id", "to_account_id", "amount", "description"]
        );
    }

    #[test]
    fn marking_keeps_user_categories_and_unmarking_clears_only_transferencia() {
        let chosen = CategoryId::new();
        assert_eq!(category_when_marked(None), Some(TRANSFER_CATEGORY));
        assert_eq!(category_when_marked(Some(chosen)), Some(chosen));
        assert_eq!(category_when_unmarked(Some(TRANSFER_CATEGORY)), None);
        assert_eq!(category_when_unmarked(Some(chosen)), Some(chosen));
        assert!(is_legacy_transfer(None, true, Some(TRANSFER_CATEGORY)));
        assert!(!is_legacy_transfer(None, false, Some(TRANSFER_CATEGORY)));
        assert!(!is_legacy_transfer(
            Some(Uuid::nil()),
            true,
            Some(TRANSFER_CATEGORY)
        ));
    }
}
