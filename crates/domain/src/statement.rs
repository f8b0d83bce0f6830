//! A statement as a bank sends it (today from an OFX file, later from a
//! bank connection): rows that carry the bank's own id, and the rules for
//! turning them into open-finance ledger rows of one account.

use jiff::civil::Date;

use crate::account::{Account, AccountType};
use crate::transaction::{TransactionState, TxStatus, TxType};
use crate::{DomainError, Money};

/// Which kind of account the statement is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatementKind {
    /// A checking or savings account statement (OFX `STMTRS`).
    Bank,
    /// A credit-card statement (OFX `CCSTMTRS`).
    CreditCard,
}

impl StatementKind {
    fn account_type(self) -> AccountType {
        match self {
            StatementKind::Bank => AccountType::Bank,
            StatementKind::CreditCard => AccountType::Credit,
        }
    }

    fn name(self) -> &'static str {
        match self {
            StatementKind::Bank => "a bank statement",
            StatementKind::CreditCard => "a credit-card statement",
        }
    }
}

/// One movement as the bank reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementRow {
    /// The bank's id of the movement (OFX `FITID`): the same movement keeps
    /// it in every statement, so an import skips the ones it already has.
    pub external_id: String,
    pub date: Date,
    pub tx_type: TxType,
    /// Positive; `tx_type` gives the direction.
    pub amount: Money,
    pub description: String,
    /// The text as received, kept for search and for the user's reference.
    pub original_description: Option<String>,
}

impl StatementRow {
    /// The row as stored: POSTED up to today, PENDING when the bank dates
    /// it in the future (scheduled movements).
    pub fn state(&self, today: Date) -> TransactionState {
        TransactionState {
            date: self.date,
            tx_type: self.tx_type,
            status: TxStatus::default_for(self.date, today),
            amount: self.amount,
            description: self.description.clone(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
            hide_from_results: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The connection the rows come from, shown as the account's
    /// `open_finance.connector_name` (e.g. "OFX").
    pub connector: String,
    pub kind: StatementKind,
    /// The statement's currency (OFX `CURDEF`), upper case; None when the
    /// file does not say.
    pub currency: Option<String>,
    /// Rows with distinct `external_id`s, in the order of the file.
    pub rows: Vec<StatementRow>,
    /// Rows dropped because the statement listed their id earlier.
    pub repeated: usize,
}

/// Whether `statement` may be imported into `account`: a live account of
/// the matching kind and currency. The message names the mismatch, for the
/// operator who picked the account.
pub fn check_target(statement: &Statement, account: &Account) -> Result<(), DomainError> {
    let state = &account.state;
    if state.archived {
        return Err(DomainError::field(
            "account_id",
            "the account is archived: unarchive it before importing into it",
        ));
    }
    if state.account_type != statement.kind.account_type() {
        return Err(DomainError::field(
            "account_id",
            format!(
                "{} cannot go into a {} account",
                statement.kind.name(),
                state.account_type.as_str()
            ),
        ));
    }
    if let Some(currency) = &statement.currency
        && !currency.eq_ignore_ascii_case(&state.currency)
    {
        return Err(DomainError::field(
            "currency",
            format!(
                "the statement is in {currency} but the account is in {}",
                state.currency
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::{AccountChanges, apply_changes};
    use crate::{AccountId, UserId};
    use jiff::civil::date;

    fn account(account_type: AccountType, currency: &str, archived: bool) -> Account {
        let changes = AccountChanges {
            account_type: Some(account_type),
            currency_code: Some(currency.into()),
            archived: Some(archived),
            ..Default::default()
        };
        Account {
            id: AccountId::new(),
            user_id: UserId::new(),
            state: apply_changes(None, &changes, None, "BRL").unwrap(),
            open_finance_connected: false,
            connector_name: None,
            card_holders: None,
            created_at: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    fn statement(kind: StatementKind, currency: Option<&str>) -> Statement {
        Statement {
            connector: "OFX".into(),
            kind,
            currency: currency.map(Into::into),
            rows: Vec::new(),
            repeated: 0,
        }
    }

    fn message(err: DomainError) -> String {
        match err {
            DomainError::Validation(list) => list[0].message.clone(),
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn target_must_match_kind_currency_and_be_live() {
        let bank = statement(StatementKind::Bank, Some("BRL"));
        assert!(check_target(&bank, &account(AccountType::Bank, "BRL", false)).is_ok());
        let no_currency = statement(StatementKind::Bank, None);
        assert!(check_target(&no_currency, &account(AccountType::Bank, "USD", false)).is_ok());

        let err = check_target(&bank, &account(AccountType::Bank, "USD", false)).unwrap_err();
        assert_eq!(
            message(err),
            "the statement is in BRL but the account is in USD"
        );
        let err = check_target(&bank, &account(AccountType::Bank, "BRL", true)).unwrap_err();
        assert!(message(err).contains("archived"));
        let err = check_target(&bank, &account(AccountType::Credit, "BRL", false)).unwrap_err();
        assert_eq!(
            message(err),
            "a bank statement cannot go into a CREDIT account"
        );
        let card = statement(StatementKind::CreditCard, Some("BRL"));
        assert!(check_target(&card, &account(AccountType::Credit, "BRL", false)).is_ok());
        assert!(check_target(&card, &account(AccountType::Bank, "BRL", false)).is_err());
    }

    #[test]
    fn future_rows_are_pending() {
        let row = StatementRow {
            external_id: "1".into(),
            date: date(2026, 11, 23),
            tx_type: TxType::Debit,
            amount: Money::from_cents(100),
            description: "Boleto agendado".into(),
            original_description: None,
        };
        assert_eq!(row.state(date(2026, 11, 22)).status, TxStatus::Pending);
        assert_eq!(row.state(date(2026, 11, 23)).status, TxStatus::Posted);
        assert_eq!(row.state(date(2026, 11, 23)).description, "Boleto agendado");
    }
}
