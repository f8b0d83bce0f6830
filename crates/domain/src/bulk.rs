//! Bulk edits: one change (or a deletion) applied to many stored rows at
//! once, with the guard rails a client needs to do that safely: a cap on the
//! rows one call may touch, an optional expected count, and the fields of
//! bank-connection rows that only the bank may change.

use crate::account::Patch;
use crate::transaction::{TransactionChanges, TransactionState, apply_changes};
use crate::{AccountId, DomainError, TransactionId};

/// Most rows one call may match.
pub const MAX_ROWS: usize = 5_000;

/// Fields of an open-finance row that come from the bank and stay as the
/// bank reported them.
pub const LOCKED_FIELDS: [&str; 5] = ["date", "amount", "type", "description", "account_id"];

/// Why a matched row was left as it was.
pub const OPEN_FINANCE_LOCKED: &str = "open_finance_locked";

/// Why a transfer leg kept its type or account: those change only with the
/// whole transfer (its amount, date and status go to every leg instead).
pub const TRANSFER_LEG_LOCKED: &str = "transfer_leg_locked";

/// What a matched row may not take of a change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowLocks {
    /// A bank-connection row: the bank's fields are locked.
    pub open_finance: bool,
    /// A leg of a transfer group: its type and account are locked.
    pub transfer_leg: bool,
}

/// The change of a bulk `set`: the fields of PATCH, plus moving rows to
/// another account.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BulkSet {
    pub changes: TransactionChanges,
    pub account_id: Option<AccountId>,
}

impl BulkSet {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.account_id.is_none()
    }

    /// Checks the values on their own (a description is not blank, an
    /// amount is positive...), before any row is read.
    pub fn validate(&self) -> Result<(), DomainError> {
        if self.is_empty() {
            return Err(DomainError::field(
                "set",
                "name at least one field to change",
            ));
        }
        let probe = TransactionState {
            date: jiff::civil::date(2000, 1, 1),
            tx_type: crate::transaction::TxType::Debit,
            status: crate::transaction::TxStatus::Posted,
            amount: crate::Money::from_cents(1),
            description: "probe".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
            hide_from_results: false,
        };
        apply_changes(&probe, &self.changes)
            .map(|_| ())
            .map_err(|err| prefix_fields(err, "set."))
    }

    /// The locked fields this change would touch, in [`LOCKED_FIELDS`] order.
    pub fn locked_fields(&self) -> Vec<&'static str> {
        let c = &self.changes;
        let touched = [
            c.date.is_some(),
            c.amount.is_some(),
            c.tx_type.is_some(),
            c.description.is_some(),
            self.account_id.is_some(),
        ];
        LOCKED_FIELDS
            .iter()
            .zip(touched)
            .filter_map(|(name, hit)| hit.then_some(*name))
            .collect()
    }

    /// The fields of this change a transfer leg cannot take alone.
    pub fn leg_locked_fields(&self) -> Vec<&'static str> {
        [
            (self.changes.tx_type.is_some(), "type"),
            (self.account_id.is_some(), "account_id"),
        ]
        .into_iter()
        .filter_map(|(hit, name)| hit.then_some(name))
        .collect()
    }

    /// What a transfer leg may take of this change.
    pub fn leg_unlocked(&self) -> BulkSet {
        BulkSet {
            changes: TransactionChanges {
                tx_type: None,
                ..self.changes.clone()
            },
            account_id: None,
        }
    }

    /// What an open-finance row may take of this change.
    pub fn unlocked(&self) -> BulkSet {
        BulkSet {
            changes: TransactionChanges {
                date: None,
                amount: None,
                tx_type: None,
                description: None,
                status: self.changes.status,
                notes: self.changes.notes.clone(),
                category_id: self.changes.category_id.clone(),
                tag_ids: self.changes.tag_ids.clone(),
                hide_from_results: self.changes.hide_from_results,
            },
            account_id: None,
        }
    }
}

/// A bulk request's action.
#[derive(Clone, Debug)]
pub enum BulkAction {
    Set(BulkSet),
    Delete,
}

/// A matched row left unchanged (in whole or in part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub id: TransactionId,
    pub reason: &'static str,
    /// The fields that could not be changed; empty for a refused deletion.
    pub fields: Vec<&'static str>,
}

/// What happens to one matched row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowPlan {
    /// Apply this change (for an open-finance row, only its unlocked part;
    /// `skipped` then reports the rest).
    Update {
        change: BulkSet,
        skipped: Option<Skipped>,
    },
    Delete,
    Skip(Skipped),
}

/// Decides one row: open-finance rows keep the bank's fields and are never
/// deleted by a bulk call; transfer legs keep their type and account (a
/// deletion takes the other legs too, in the store).
pub fn plan_row(id: TransactionId, locks: RowLocks, action: &BulkAction) -> RowPlan {
    match action {
        BulkAction::Delete if locks.open_finance => RowPlan::Skip(Skipped {
            id,
            reason: OPEN_FINANCE_LOCKED,
            fields: Vec::new(),
        }),
        BulkAction::Delete => RowPlan::Delete,
        BulkAction::Set(set) => {
            let (reason, locked, rest) = if locks.open_finance {
                (OPEN_FINANCE_LOCKED, set.locked_fields(), set.unlocked())
            } else if locks.transfer_leg {
                (
                    TRANSFER_LEG_LOCKED,
                    set.leg_locked_fields(),
                    set.leg_unlocked(),
                )
            } else {
                return RowPlan::Update {
                    change: set.clone(),
                    skipped: None,
                };
            };
            if locked.is_empty() {
                return RowPlan::Update {
                    change: set.clone(),
                    skipped: None,
                };
            }
            let skipped = Skipped {
                id,
                reason,
                fields: locked,
            };
            if rest.is_empty() {
                RowPlan::Skip(skipped)
            } else {
                RowPlan::Update {
                    change: rest,
                    skipped: Some(skipped),
                }
            }
        }
    }
}

/// Whether a change of category names a category to check.
pub fn named_category(set: &BulkSet) -> Option<crate::CategoryId> {
    match set.changes.category_id {
        Patch::Set(id) => Some(id),
        _ => None,
    }
}

/// Renames the fields of a validation error (`amount` -> `set.amount`).
pub fn prefix_fields(err: DomainError, prefix: &str) -> DomainError {
    match err {
        DomainError::Validation(list) => DomainError::Validation(
            list.into_iter()
                .map(|mut e| {
                    // An error about the whole value is named by the prefix.
                    e.field = if e.field.is_empty() {
                        prefix.trim_end_matches('.').to_owned()
                    } else {
                        format!("{prefix}{}", e.field)
                    };
                    e
                })
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CategoryId, Money};

    const OPEN_FINANCE: RowLocks = RowLocks {
        open_finance: true,
        transfer_leg: false,
    };

    #[test]
    fn transfer_legs_keep_type_and_account_and_take_the_rest() {
        let id = TransactionId::new();
        let leg = RowLocks {
            open_finance: false,
            transfer_leg: true,
        };
        let mut set = set_amount_and_category();
        set.changes.tx_type = Some(crate::transaction::TxType::Credit);
        set.account_id = Some(AccountId::new());
        let RowPlan::Update { change, skipped } = plan_row(id, leg, &BulkAction::Set(set)) else {
            panic!("the rest of the change applies");
        };
        assert_eq!(change.changes.tx_type, None);
        assert_eq!(change.account_id, None);
        assert!(change.changes.amount.is_some());
        let skipped = skipped.expect("reported");
        assert_eq!(skipped.reason, TRANSFER_LEG_LOCKED);
        assert_eq!(skipped.fields, ["type", "account_id"]);
        // Only locked fields: the row is skipped whole; a deletion goes on.
        let only_type = BulkSet {
            changes: TransactionChanges {
                tx_type: Some(crate::transaction::TxType::Credit),
                ..TransactionChanges::default()
            },
            account_id: None,
        };
        assert!(matches!(
            plan_row(id, leg, &BulkAction::Set(only_type)),
            RowPlan::Skip(_)
        ));
        assert_eq!(plan_row(id, leg, &BulkAction::Delete), RowPlan::Delete);
    }

    fn set_amount_and_category() -> BulkSet {
        BulkSet {
            changes: TransactionChanges {
                amount: Some(Money::from_cents(100)),
                category_id: Patch::Set(CategoryId::new()),
                ..Default::default()
            },
            account_id: None,
        }
    }

    #[test]
    fn ordinary_rows_take_the_whole_change() {
        let id = TransactionId::new();
        let action = BulkAction::Set(set_amount_and_category());
        match plan_row(id, RowLocks::default(), &action) {
            RowPlan::Update { change, skipped } => {
                assert_eq!(change.locked_fields(), ["amount"]);
                assert!(skipped.is_none());
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            plan_row(id, RowLocks::default(), &BulkAction::Delete),
            RowPlan::Delete
        );
    }

    #[test]
    fn open_finance_rows_take_only_unlocked_fields() {
        let id = TransactionId::new();
        let action = BulkAction::Set(set_amount_and_category());
        match plan_row(id, OPEN_FINANCE, &action) {
            RowPlan::Update { change, skipped } => {
                assert!(change.locked_fields().is_empty());
                assert!(matches!(change.changes.category_id, Patch::Set(_)));
                assert_eq!(change.changes.amount, None);
                let skipped = skipped.expect("reported");
                assert_eq!(skipped.fields, ["amount"]);
                assert_eq!(skipped.reason, OPEN_FINANCE_LOCKED);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn open_finance_rows_with_only_locked_fields_are_skipped_whole() {
        let id = TransactionId::new();
        let action = BulkAction::Set(BulkSet {
            changes: TransactionChanges {
                description: Some("x".into()),
                date: Some(jiff::civil::date(2026, 1, 1)),
                ..Default::default()
            },
            account_id: Some(AccountId::new()),
        });
        let RowPlan::Skip(skipped) = plan_row(id, OPEN_FINANCE, &action) else {
            panic!("not skipped")
        };
        assert_eq!(skipped.fields, ["date", "description", "account_id"]);
        let RowPlan::Skip(deleted) = plan_row(id, OPEN_FINANCE, &BulkAction::Delete) else {
            panic!("not skipped")
        };
        assert!(deleted.fields.is_empty());
    }

    #[test]
    fn validation_names_fields_under_set() {
        let bad = BulkSet {
            changes: TransactionChanges {
                amount: Some(Money::ZERO),
                description: Some("  ".into()),
                ..Default::default()
            },
            account_id: None,
        };
        let DomainError::Validation(list) = bad.validate().unwrap_err() else {
            panic!("not a validation error")
        };
        let fields: Vec<_> = list.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["set.amount", "set.description"]);
        assert!(BulkSet::default().validate().is_err());
    }
}
