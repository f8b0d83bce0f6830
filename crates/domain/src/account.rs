//! Accounts: bank accounts and credit cards. Creation and PATCH share one
//! rule, [`apply_changes`], so both validate the resulting account the same
//! way.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::icons::{CARD_ICONS, icon_exists, resolve_icon};
use crate::text::{TITLE_MAX, currency, required_text};
use crate::{AccountId, DomainError, FieldErrors, Money, UserId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", try_from = "String")]
pub enum AccountType {
    Bank,
    Credit,
}

impl AccountType {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountType::Bank => "BANK",
            AccountType::Credit => "CREDIT",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "BANK" => Some(AccountType::Bank),
            "CREDIT" => Some(AccountType::Credit),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", try_from = "String")]
pub enum SubType {
    SavingsAccount,
    CheckingAccount,
    CreditCard,
}

impl SubType {
    pub const ALL: [SubType; 3] = [
        SubType::SavingsAccount,
        SubType::CheckingAccount,
        SubType::CreditCard,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SubType::SavingsAccount => "SAVINGS_ACCOUNT",
            SubType::CheckingAccount => "CHECKING_ACCOUNT",
            SubType::CreditCard => "CREDIT_CARD",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        SubType::ALL.into_iter().find(|s| s.as_str() == text)
    }

    fn account_type(self) -> AccountType {
        match self {
            SubType::CreditCard => AccountType::Credit,
            SubType::SavingsAccount | SubType::CheckingAccount => AccountType::Bank,
        }
    }

    fn default_for(account_type: AccountType) -> Self {
        match account_type {
            AccountType::Bank => SubType::CheckingAccount,
            AccountType::Credit => SubType::CreditCard,
        }
    }

    fn default_title(self) -> &'static str {
        match self {
            SubType::SavingsAccount => "Poupança",
            SubType::CheckingAccount => "Conta corrente",
            SubType::CreditCard => "Cartão de crédito",
        }
    }
}

/// Billing settings of a credit card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditSettings {
    pub close_day: u8,
    pub due_day: u8,
    pub cycle_auto: bool,
    pub limit: Money,
}

pub const DEFAULT_DUE_DAY: u8 = 10;

/// The close day that follows a due day when `cycle_auto` is on: seven days
/// earlier, wrapping into the previous month (due 5 closes on the 29th).
pub fn auto_close_day(due_day: u8) -> u8 {
    let zero_based = (i16::from(due_day) - 1 - 7).rem_euclid(31);
    // rem_euclid(31) keeps the value in 0..31, so it always fits in u8.
    u8::try_from(zero_based + 1).unwrap_or(1)
}

/// The part of an account a client can change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountState {
    pub account_type: AccountType,
    pub sub_type: SubType,
    pub title: String,
    pub archived: bool,
    pub exclude_from_totals: bool,
    pub currency: String,
    pub credit: Option<CreditSettings>,
    pub pay_bill_from_account_id: Option<AccountId>,
    pub icon_id: Option<String>,
    pub card_icon_id: Option<String>,
}

impl AccountState {
    /// Whether the account's money enters the overview's and the reports'
    /// totals: not archived, not excluded, in the base currency.
    pub fn counts_in_totals(&self, base_currency: &str) -> bool {
        !self.archived && !self.exclude_from_totals && self.currency == base_currency
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub id: AccountId,
    pub user_id: UserId,
    pub state: AccountState,
    pub open_finance_connected: bool,
    pub connector_name: Option<String>,
    pub card_holders: Option<BTreeMap<String, String>>,
    pub created_at: Timestamp,
}

impl Account {
    /// About how many bytes this holds, its text included.
    pub fn approx_bytes(&self) -> usize {
        let text = |t: &Option<String>| t.as_ref().map_or(0, String::capacity);
        let holders: usize = self
            .card_holders
            .iter()
            .flatten()
            .map(|(k, v)| k.capacity() + v.capacity() + 64)
            .sum();
        std::mem::size_of::<Self>()
            + self.state.title.capacity()
            + self.state.currency.capacity()
            + text(&self.state.icon_id)
            + text(&self.state.card_icon_id)
            + text(&self.connector_name)
            + holders
    }
}

/// A field that PATCH may leave alone, clear (JSON null) or set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Patch::Keep)
    }
}

/// What a create or PATCH request asks to change. Absent fields keep their
/// value (or take the default on creation).
#[derive(Clone, Debug, Default)]
pub struct AccountChanges {
    pub account_type: Option<AccountType>,
    pub sub_type: Option<SubType>,
    pub title: Option<String>,
    pub icon_id: Option<String>,
    pub icon_name: Option<String>,
    pub card_icon_id: Option<String>,
    pub currency_code: Option<String>,
    pub credit_limit: Patch<Money>,
    pub credit_close_day: Option<i64>,
    pub credit_due_day: Option<i64>,
    pub credit_due_day_of_month: Option<i64>,
    pub credit_cycle_auto: Option<bool>,
    pub pay_bill_from_account_id: Patch<AccountId>,
    pub exclude_from_totals: Option<bool>,
    pub archived: Option<bool>,
}

fn card_day(errors: &mut FieldErrors, field: &str, value: Option<i64>) -> Option<u8> {
    let value = value?;
    match u8::try_from(value) {
        Ok(day @ 1..=31) => Some(day),
        _ => {
            errors.add(field, "must be an integer from 1 to 31");
            None
        }
    }
}

/// Builds the account that results from `changes` applied to `current`
/// (`None` when creating). `pay_from` is the account named by
/// `pay_bill_from_account_id`, looked up among the user's accounts (`None`
/// when it does not exist or is not theirs).
pub fn apply_changes(
    current: Option<&Account>,
    changes: &AccountChanges,
    pay_from: Option<&Account>,
    default_currency: &str,
) -> Result<AccountState, DomainError> {
    let mut errors = FieldErrors::new();
    let base = current.map(|a| &a.state);

    let account_type = match (changes.account_type, base) {
        (Some(t), _) => t,
        (None, Some(base)) => base.account_type,
        (None, None) => {
            return Err(DomainError::field("type", "is required (BANK or CREDIT)"));
        }
    };
    let type_changed = base.is_some_and(|b| b.account_type != account_type);

    let sub_type = match changes.sub_type {
        Some(sub) if sub.account_type() != account_type => {
            errors.add(
                "sub_type",
                format!(
                    "{} does not fit an account of type {}",
                    sub.as_str(),
                    account_type.as_str()
                ),
            );
            SubType::default_for(account_type)
        }
        Some(sub) => sub,
        None => match base {
            Some(b) if !type_changed => b.sub_type,
            _ => SubType::default_for(account_type),
        },
    };

    let title = match &changes.title {
        Some(title) => errors
            .check(required_text("title", title, TITLE_MAX))
            .unwrap_or_default(),
        None => base.map_or_else(|| sub_type.default_title().to_owned(), |b| b.title.clone()),
    };

    let icon_id = match errors.check(resolve_icon(
        changes.icon_id.as_deref(),
        changes.icon_name.as_deref(),
    )) {
        Some(Some(icon)) => Some(icon),
        _ => base.and_then(|b| b.icon_id.clone()),
    };

    let currency = match &changes.currency_code {
        Some(code) => errors
            .check(currency("currency_code", code))
            .unwrap_or_default(),
        None => base.map_or_else(|| default_currency.to_owned(), |b| b.currency.clone()),
    };

    let is_card = account_type == AccountType::Credit;
    let card_icon_id = match &changes.card_icon_id {
        Some(_) if !is_card => {
            errors.add("card_icon_id", "only credit cards have card artwork");
            None
        }
        Some(id) if !icon_exists(CARD_ICONS, id) => {
            errors.add("card_icon_id", "unknown card icon id");
            None
        }
        Some(id) => Some(id.clone()),
        None if is_card => base.and_then(|b| b.card_icon_id.clone()),
        None => None,
    };

    let credit = if is_card {
        credit_settings(&mut errors, base.and_then(|b| b.credit.as_ref()), changes)
    } else {
        let card_only = [
            (
                "credit_limit",
                matches!(changes.credit_limit, Patch::Set(_)),
            ),
            ("credit_close_day", changes.credit_close_day.is_some()),
            ("credit_due_day", changes.credit_due_day.is_some()),
            (
                "credit_due_day_of_month",
                changes.credit_due_day_of_month.is_some(),
            ),
            ("credit_cycle_auto", changes.credit_cycle_auto.is_some()),
        ];
        for (field, sent) in card_only {
            if sent {
                errors.add(field, "only credit cards (type CREDIT) have this setting");
            }
        }
        None
    };

    let pay_bill_from_account_id = match &changes.pay_bill_from_account_id {
        Patch::Set(id) => {
            if !is_card {
                errors.add(
                    "pay_bill_from_account_id",
                    "only credit cards have a paying account",
                );
                None
            } else {
                match pay_from {
                    None => {
                        errors.add("pay_bill_from_account_id", "no such account");
                        None
                    }
                    Some(p) if current.is_some_and(|c| c.id == p.id) => {
                        errors.add("pay_bill_from_account_id", "a card cannot pay its own bill");
                        None
                    }
                    Some(p) if p.state.account_type != AccountType::Bank => {
                        errors.add(
                            "pay_bill_from_account_id",
                            "must be a bank account (type BANK)",
                        );
                        None
                    }
                    Some(_) => Some(*id),
                }
            }
        }
        Patch::Clear => None,
        Patch::Keep if is_card => base.and_then(|b| b.pay_bill_from_account_id),
        Patch::Keep => None,
    };

    errors.finish()?;
    Ok(AccountState {
        account_type,
        sub_type,
        title,
        archived: changes
            .archived
            .unwrap_or_else(|| base.is_some_and(|b| b.archived)),
        exclude_from_totals: changes
            .exclude_from_totals
            .unwrap_or_else(|| base.is_some_and(|b| b.exclude_from_totals)),
        currency,
        credit,
        pay_bill_from_account_id,
        icon_id,
        card_icon_id,
    })
}

fn credit_settings(
    errors: &mut FieldErrors,
    base: Option<&CreditSettings>,
    changes: &AccountChanges,
) -> Option<CreditSettings> {
    let due = card_day(errors, "credit_due_day", changes.credit_due_day);
    let due_alias = card_day(
        errors,
        "credit_due_day_of_month",
        changes.credit_due_day_of_month,
    );
    let close = card_day(errors, "credit_close_day", changes.credit_close_day);

    let due_day = match (due, due_alias) {
        (Some(a), Some(b)) if a != b => {
            errors.add(
                "credit_due_day_of_month",
                "is a synonym of credit_due_day and must have the same value",
            );
            a
        }
        (Some(day), _) | (None, Some(day)) => day,
        (None, None) => base.map_or(DEFAULT_DUE_DAY, |b| b.due_day),
    };

    let cycle_auto = changes
        .credit_cycle_auto
        .unwrap_or(match (changes.credit_close_day, base) {
            (Some(_), _) => false,
            (None, Some(b)) => b.cycle_auto,
            (None, None) => true,
        });

    let derived = auto_close_day(due_day);
    let close_day = if cycle_auto {
        if close.is_some_and(|c| c != derived) {
            errors.add(
                "credit_close_day",
                format!(
                    "follows the due day while credit_cycle_auto is true (would be {derived}); send credit_cycle_auto false to set it"
                ),
            );
        }
        derived
    } else {
        close.unwrap_or_else(|| {
            base.filter(|b| !b.cycle_auto)
                .map_or(derived, |b| b.close_day)
        })
    };

    let limit = match changes.credit_limit {
        Patch::Set(limit) if limit.is_negative() => {
            errors.add("credit_limit", "must not be negative");
            Money::ZERO
        }
        Patch::Set(limit) => limit,
        Patch::Clear => Money::ZERO,
        Patch::Keep => base.map_or(Money::ZERO, |b| b.limit),
    };

    Some(CreditSettings {
        close_day,
        due_day,
        cycle_auto,
        limit,
    })
}

/// Only the string form is accepted (serde would also take `{"NAME": null}`).
impl TryFrom<String> for AccountType {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        AccountType::parse(&text).ok_or_else(|| format!("must be BANK or CREDIT, not {text:?}"))
    }
}

/// Only the string form is accepted (serde would also take `{"NAME": null}`).
impl TryFrom<String> for SubType {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        SubType::parse(&text).ok_or_else(|| {
            format!("must be SAVINGS_ACCOUNT, CHECKING_ACCOUNT or CREDIT_CARD, not {text:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(changes: AccountChanges) -> Result<AccountState, DomainError> {
        apply_changes(None, &changes, None, "BRL")
    }

    fn account(state: AccountState) -> Account {
        Account {
            id: AccountId::new(),
            user_id: UserId::new(),
            state,
            open_finance_connected: false,
            connector_name: None,
            card_holders: None,
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    fn fields(err: DomainError) -> Vec<String> {
        let DomainError::Validation(list) = err else {
            panic!("not a validation error")
        };
        list.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn bank_defaults() {
        let state = create(AccountChanges {
            account_type: Some(AccountType::Bank),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(state.sub_type, SubType::CheckingAccount);
        assert_eq!(state.title, "Conta corrente");
        assert_eq!(state.currency, "BRL");
        assert_eq!(state.credit, None);
    }

    #[test]
    fn card_defaults_due_10_close_3() {
        let state = create(AccountChanges {
            account_type: Some(AccountType::Credit),
            ..Default::default()
        })
        .unwrap();
        let credit = state.credit.unwrap();
        assert_eq!(
            (credit.due_day, credit.close_day, credit.cycle_auto),
            (10, 3, true)
        );
        assert_eq!(credit.limit, Money::ZERO);
    }

    #[test]
    fn auto_close_day_wraps_into_previous_month() {
        assert_eq!(auto_close_day(10), 3);
        assert_eq!(auto_close_day(8), 1);
        assert_eq!(auto_close_day(7), 31);
        assert_eq!(auto_close_day(5), 29);
        assert_eq!(auto_close_day(1), 25);
        assert_eq!(auto_close_day(31), 24);
    }

    #[test]
    fn explicit_close_day_turns_auto_off() {
        let state = create(AccountChanges {
            account_type: Some(AccountType::Credit),
            credit_close_day: Some(28),
            credit_due_day_of_month: Some(5),
            ..Default::default()
        })
        .unwrap();
        let credit = state.credit.unwrap();
        assert_eq!(
            (credit.due_day, credit.close_day, credit.cycle_auto),
            (5, 28, false)
        );
    }

    #[test]
    fn rejects_bad_days_and_mismatched_synonyms() {
        let err = create(AccountChanges {
            account_type: Some(AccountType::Credit),
            credit_close_day: Some(0),
            credit_due_day: Some(32),
            credit_due_day_of_month: Some(5),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(fields(err), vec!["credit_due_day", "credit_close_day"]);
        let err = create(AccountChanges {
            account_type: Some(AccountType::Credit),
            credit_due_day: Some(4),
            credit_due_day_of_month: Some(5),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(fields(err), vec!["credit_due_day_of_month"]);
    }

    #[test]
    fn card_fields_on_a_bank_account_are_named() {
        let err = create(AccountChanges {
            account_type: Some(AccountType::Bank),
            sub_type: Some(SubType::CreditCard),
            credit_limit: Patch::Set(Money::from_cents(100)),
            card_icon_id: Some("card-visa".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            fields(err),
            vec!["sub_type", "card_icon_id", "credit_limit"]
        );
    }

    #[test]
    fn type_is_required_on_creation() {
        assert_eq!(
            fields(create(AccountChanges::default()).unwrap_err()),
            vec!["type"]
        );
    }

    #[test]
    fn pay_from_must_be_a_bank_account() {
        let bank = account(
            create(AccountChanges {
                account_type: Some(AccountType::Bank),
                ..Default::default()
            })
            .unwrap(),
        );
        let card = account(
            create(AccountChanges {
                account_type: Some(AccountType::Credit),
                ..Default::default()
            })
            .unwrap(),
        );
        let ok = apply_changes(
            Some(&card),
            &AccountChanges {
                pay_bill_from_account_id: Patch::Set(bank.id),
                ..Default::default()
            },
            Some(&bank),
            "BRL",
        )
        .unwrap();
        assert_eq!(ok.pay_bill_from_account_id, Some(bank.id));
        let err = apply_changes(
            Some(&card),
            &AccountChanges {
                pay_bill_from_account_id: Patch::Set(card.id),
                ..Default::default()
            },
            Some(&card),
            "BRL",
        )
        .unwrap_err();
        assert_eq!(fields(err), vec!["pay_bill_from_account_id"]);
    }

    #[test]
    fn patch_keeps_what_was_not_sent() {
        let card = account(
            create(AccountChanges {
                account_type: Some(AccountType::Credit),
                title: Some("Nubank".into()),
                credit_limit: Patch::Set(Money::from_cents(500_000)),
                credit_close_day: Some(2),
                credit_due_day: Some(9),
                ..Default::default()
            })
            .unwrap(),
        );
        let state = apply_changes(
            Some(&card),
            &AccountChanges {
                archived: Some(true),
                ..Default::default()
            },
            None,
            "BRL",
        )
        .unwrap();
        assert_eq!(state.title, "Nubank");
        assert!(state.archived);
        assert_eq!(state.credit, card.state.credit);
        let cleared = apply_changes(
            Some(&card),
            &AccountChanges {
                credit_limit: Patch::Clear,
                ..Default::default()
            },
            None,
            "BRL",
        )
        .unwrap();
        assert_eq!(cleared.credit.unwrap().limit, Money::ZERO);
    }
}
