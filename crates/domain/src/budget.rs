//! Budgets: a monthly limit for one category (its subcategories included
//! unless told otherwise), and how much of it a month has used. A limit
//! changes from a month on without rewriting earlier months: a budget keeps
//! every change as `(from_month, amount)`.

use jiff::Timestamp;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

use crate::card::BillMonth;
use crate::money::MAX_ABS_CENTS;
use crate::transaction::TxType;
use crate::view::Hashing;
use crate::{BudgetId, CategoryId, DomainError, FieldErrors, Money, UserId};

/// The first month a budget may cover. Bounding the months bounds every
/// walk over them (rollover walks a budget's months from its start).
pub const FIRST_MONTH: BillMonth = BillMonth::known(1900, 1);
/// The last month a budget may cover.
pub const LAST_MONTH: BillMonth = BillMonth::known(2199, 12);

/// `warning` from this share of the month's available money, unless
/// `COFRE_BUDGET_WARNING_PERCENT` says otherwise.
pub const DEFAULT_WARNING_PERCENT: u8 = 80;

/// Most budgets one user may have.
pub const MAX_BUDGETS_PER_USER: u64 = 500;

/// Most limit changes one budget keeps.
pub const MAX_LIMIT_CHANGES: usize = 240;

/// A limit in force from a month on (until the next change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitChange {
    pub from_month: BillMonth,
    pub amount: Money,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub id: BudgetId,
    pub user_id: UserId,
    pub category_id: CategoryId,
    pub include_subcategories: bool,
    pub rollover: bool,
    pub starts_on: BillMonth,
    pub ends_on: Option<BillMonth>,
    /// Oldest first; the first is at `starts_on`, none after `ends_on`.
    pub limits: Vec<LimitChange>,
    pub created_at: Timestamp,
}

impl Budget {
    /// The limit of the newest change: what the budget is set to now.
    pub fn amount(&self) -> Money {
        self.limits.last().map_or(Money::ZERO, |l| l.amount)
    }

    pub fn active_in(&self, month: BillMonth) -> bool {
        month >= self.starts_on && self.ends_on.is_none_or(|end| month <= end)
    }

    /// The month's limit; none when the budget does not cover the month.
    pub fn limit_in(&self, month: BillMonth) -> Option<Money> {
        if !self.active_in(month) {
            return None;
        }
        self.limits
            .iter()
            .rev()
            .find(|l| l.from_month <= month)
            .map(|l| l.amount)
    }

    /// Whether this budget and one over `[starts_on, ends_on]` share a month.
    pub fn overlaps(&self, starts_on: BillMonth, ends_on: Option<BillMonth>) -> bool {
        let self_end = self.ends_on.unwrap_or(LAST_MONTH);
        let other_end = ends_on.unwrap_or(LAST_MONTH);
        self.starts_on <= other_end && starts_on <= self_end
    }
}

/// `YYYY-MM` between [`FIRST_MONTH`] and [`LAST_MONTH`].
pub fn parse_month(field: &str, text: &str) -> Result<BillMonth, DomainError> {
    let month = BillMonth::parse_key(text)
        .ok_or_else(|| DomainError::field(field, "must be a month as YYYY-MM"))?;
    if !(FIRST_MONTH..=LAST_MONTH).contains(&month) {
        return Err(DomainError::field(
            field,
            format!(
                "must lie between {} and {}",
                FIRST_MONTH.key(),
                LAST_MONTH.key()
            ),
        ));
    }
    Ok(month)
}

fn limit_amount(field: &str, amount: Money) -> Result<Money, DomainError> {
    if !amount.is_positive() {
        return Err(DomainError::field(field, "must be greater than 0"));
    }
    if amount.cents() > MAX_ABS_CENTS {
        return Err(DomainError::field(field, "is too large"));
    }
    Ok(amount)
}

/// A budget as a client asks for it, before validation.
#[derive(Clone, Debug, Default)]
pub struct BudgetInput<'a> {
    pub category_id: Option<&'a str>,
    pub amount: Option<Money>,
    pub include_subcategories: Option<bool>,
    pub rollover: Option<bool>,
    pub starts_on: Option<&'a str>,
    pub ends_on: Option<&'a str>,
}

/// Validates a new budget; `current` is the month it starts in when the
/// client names none. The category's ownership is the store's to check.
pub fn new_budget(
    user: UserId,
    input: &BudgetInput<'_>,
    current: BillMonth,
    now: Timestamp,
) -> Result<Budget, DomainError> {
    let mut errors = FieldErrors::new();
    let category_id = match input.category_id {
        None => {
            errors.add("category_id", "is required");
            None
        }
        Some(text) => {
            let id = CategoryId::parse(text);
            if id.is_none() {
                errors.add("category_id", "must be a category id");
            }
            id
        }
    };
    let amount = match input.amount {
        None => {
            errors.add("amount", "is required");
            None
        }
        Some(amount) => errors.check(limit_amount("amount", amount)),
    };
    let starts_on = match input.starts_on {
        None => Some(current.clamp(FIRST_MONTH, LAST_MONTH)),
        Some(text) => errors.check(parse_month("starts_on", text)),
    };
    let ends_on = input
        .ends_on
        .and_then(|text| errors.check(parse_month("ends_on", text)));
    if let (Some(start), Some(end)) = (starts_on, ends_on)
        && end < start
    {
        errors.add("ends_on", "must not be before starts_on");
    }
    errors.finish()?;
    let (Some(category_id), Some(amount), Some(starts_on)) = (category_id, amount, starts_on)
    else {
        return Err(DomainError::field("body", "is incomplete"));
    };
    Ok(Budget {
        id: BudgetId::new(),
        user_id: user,
        category_id,
        include_subcategories: input.include_subcategories.unwrap_or(true),
        rollover: input.rollover.unwrap_or(false),
        starts_on,
        ends_on,
        limits: vec![LimitChange {
            from_month: starts_on,
            amount,
        }],
        created_at: now,
    })
}

/// A change of a budget, as a client sends it: only the fields sent change.
#[derive(Clone, Debug, Default)]
pub struct BudgetPatch<'a> {
    pub category_id: Option<&'a str>,
    pub amount: Option<Money>,
    /// With `amount`: the month the new limit starts; earlier months keep
    /// theirs. Without it the new amount is the limit of every month.
    pub from_month: Option<&'a str>,
    pub include_subcategories: Option<bool>,
    pub rollover: Option<bool>,
    pub starts_on: Option<&'a str>,
    /// `Some(None)`: the budget no longer ends.
    pub ends_on: Option<Option<&'a str>>,
}

impl BudgetPatch<'_> {
    fn is_empty(&self) -> bool {
        self.category_id.is_none()
            && self.amount.is_none()
            && self.from_month.is_none()
            && self.include_subcategories.is_none()
            && self.rollover.is_none()
            && self.starts_on.is_none()
            && self.ends_on.is_none()
    }
}

/// The budget after `patch`, validated.
pub fn apply_patch(budget: &Budget, patch: &BudgetPatch<'_>) -> Result<Budget, DomainError> {
    let mut errors = FieldErrors::new();
    if patch.is_empty() {
        errors.add("body", "send at least one field to change");
    }
    let mut next = budget.clone();
    if let Some(text) = patch.category_id {
        match CategoryId::parse(text) {
            Some(id) => next.category_id = id,
            None => errors.add("category_id", "must be a category id"),
        }
    }
    if let Some(flag) = patch.include_subcategories {
        next.include_subcategories = flag;
    }
    if let Some(flag) = patch.rollover {
        next.rollover = flag;
    }
    if let Some(text) = patch.starts_on
        && let Some(month) = errors.check(parse_month("starts_on", text))
    {
        next.starts_on = month;
    }
    if let Some(end) = patch.ends_on {
        next.ends_on = end.and_then(|text| errors.check(parse_month("ends_on", text)));
    }
    if next.ends_on.is_some_and(|end| end < next.starts_on) {
        errors.add("ends_on", "must not be before starts_on");
    }
    let amount = patch
        .amount
        .and_then(|a| errors.check(limit_amount("amount", a)));
    let from_month = patch
        .from_month
        .and_then(|text| errors.check(parse_month("from_month", text)));
    if patch.from_month.is_some() && patch.amount.is_none() {
        errors.add(
            "from_month",
            "needs an amount: the limit that starts that month",
        );
    }
    if let Some(from) = from_month
        && (from < next.starts_on || next.ends_on.is_some_and(|end| from > end))
    {
        errors.add("from_month", "must be a month the budget covers");
    }
    errors.finish()?;
    next.limits = reshape_limits(&budget.limits, next.starts_on, next.ends_on);
    if let Some(amount) = amount {
        match from_month {
            None => {
                next.limits = vec![LimitChange {
                    from_month: next.starts_on,
                    amount,
                }];
            }
            Some(from) => {
                next.limits.retain(|l| l.from_month < from);
                next.limits.push(LimitChange {
                    from_month: from,
                    amount,
                });
            }
        }
    }
    if next.limits.len() > MAX_LIMIT_CHANGES {
        return Err(DomainError::field(
            "from_month",
            format!("a budget keeps at most {MAX_LIMIT_CHANGES} limit changes"),
        ));
    }
    Ok(next)
}

/// The limit changes of a budget moved to `[starts_on, ends_on]`: the
/// limit in force at the new start becomes the first, changes outside
/// the months are dropped.
fn reshape_limits(
    limits: &[LimitChange],
    starts_on: BillMonth,
    ends_on: Option<BillMonth>,
) -> Vec<LimitChange> {
    let first = limits
        .iter()
        .rev()
        .find(|l| l.from_month <= starts_on)
        .or_else(|| limits.first())
        .map_or(Money::ZERO, |l| l.amount);
    let mut out = vec![LimitChange {
        from_month: starts_on,
        amount: first,
    }];
    out.extend(
        limits
            .iter()
            .filter(|l| l.from_month > starts_on && ends_on.is_none_or(|end| l.from_month <= end))
            .copied(),
    );
    out
}

/// What a set of categories spent and has still to come in a month:
/// DEBITs minus CREDITs (refunds), POSTED rows and projections dated
/// before today in `spent`, PENDING rows and projections from today on in
/// `committed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub spent: Money,
    pub committed: Money,
}

impl Usage {
    pub fn used(self) -> Money {
        self.spent.saturating_add(self.committed)
    }

    fn plus(self, other: Usage) -> Usage {
        Usage {
            spent: self.spent.saturating_add(other.spent),
            committed: self.committed.saturating_add(other.committed),
        }
    }
}

/// Spending per month and category, summed from the entries that count
/// (visible, no transfer or bill payment legs: the caller's to choose).
#[derive(Clone, Debug, Default)]
pub struct Spending {
    /// Month first: a month's usage reads that month's categories only,
    /// not every month's (rollover asks for each month since a start).
    /// Every stored and projected sum of the months is added here (the
    /// overview's budgets add a thousand or more), so the tables hash as
    /// the view's do.
    by: HashMap<BillMonth, HashMap<Option<CategoryId>, Usage, Hashing>, Hashing>,
}

impl Spending {
    /// Adds an amount of one type; `posted` rows are spent, the rest
    /// committed.
    pub fn add(
        &mut self,
        month: BillMonth,
        category: Option<CategoryId>,
        tx_type: TxType,
        posted: bool,
        amount: Money,
    ) {
        let signed = match tx_type {
            TxType::Debit => amount,
            TxType::Credit => Money::from_cents(amount.cents().saturating_neg()),
        };
        let usage = if posted {
            Usage {
                spent: signed,
                committed: Money::ZERO,
            }
        } else {
            Usage {
                spent: Money::ZERO,
                committed: signed,
            }
        };
        let slot = self
            .by
            .entry(month)
            .or_default()
            .entry(category)
            .or_default();
        *slot = slot.plus(usage);
    }

    /// Moves an amount of one type, added as not posted, from `committed`
    /// to `spent`: a projected entry dated before today has happened,
    /// whether or not it was ever stored.
    pub fn settle(
        &mut self,
        month: BillMonth,
        category: Option<CategoryId>,
        tx_type: TxType,
        amount: Money,
    ) {
        self.add(month, category, tx_type, true, amount);
        let undo = Money::from_cents(amount.cents().saturating_neg());
        self.add(month, category, tx_type, false, undo);
    }

    /// Each category's usage in `month`.
    fn month(&self, month: BillMonth) -> impl Iterator<Item = (&Option<CategoryId>, &Usage)> {
        self.by.get(&month).into_iter().flatten()
    }

    /// The month's usage of the categories in `set`.
    pub fn usage<S: BuildHasher>(&self, month: BillMonth, set: &HashSet<CategoryId, S>) -> Usage {
        self.month(month)
            .filter(|(c, _)| c.is_some_and(|c| set.contains(&c)))
            .fold(Usage::default(), |acc, (_, u)| acc.plus(*u))
    }

    /// The month's spending outside `covered`, category by category (rows
    /// without a category as one): a category whose CREDITs exceed its
    /// DEBITs is income, not a refund, and counts as nothing (in `spent`
    /// and in `committed` each), so a salary does not hide the spending.
    pub fn outside<S: BuildHasher>(
        &self,
        month: BillMonth,
        covered: &HashSet<CategoryId, S>,
    ) -> Usage {
        let floor = |m: Money| m.max(Money::ZERO);
        self.month(month)
            .filter(|(c, _)| c.is_none_or(|c| !covered.contains(&c)))
            .fold(Usage::default(), |acc, (_, u)| {
                acc.plus(Usage {
                    spent: floor(u.spent),
                    committed: floor(u.committed),
                })
            })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warning,
    Over,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Over => "over",
        }
    }
}

/// A budget's figures for one month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonthStatus {
    pub limit: Money,
    /// What earlier months left (negative: overspent), with `rollover`.
    pub rollover_in: Money,
    /// limit + rollover_in.
    pub available: Money,
    pub usage: Usage,
    /// available - spent - committed.
    pub remaining: Money,
    /// (spent + committed) / available, in hundredths of a percent; none
    /// when nothing is available.
    pub percent_used_bp: Option<i64>,
    pub level: Level,
}

/// The budget's figures for `month` (none when it does not cover it).
/// `usage` gives a month's usage of the budget's categories; with
/// rollover it is asked for every month from the start, so the walk is
/// bounded by [`FIRST_MONTH`]..=[`LAST_MONTH`].
pub fn month_status(
    budget: &Budget,
    month: BillMonth,
    usage: impl Fn(BillMonth) -> Usage,
    warning_percent: u8,
) -> Option<MonthStatus> {
    let limit = budget.limit_in(month)?;
    let mut carry = Money::ZERO;
    if budget.rollover {
        for earlier in BillMonth::range(budget.starts_on, month).take_while(|m| *m < month) {
            let left = budget.limit_in(earlier).unwrap_or(Money::ZERO);
            carry = carry
                .saturating_add(left)
                .saturating_sub(usage(earlier).used());
        }
    }
    let available = limit.saturating_add(carry);
    let now = usage(month);
    let used = now.used();
    let remaining = available.saturating_sub(used);
    let percent_used_bp = available.is_positive().then(|| {
        let bp = i128::from(used.cents()) * 10_000;
        let whole = i128::from(available.cents());
        // Rounded half away from zero, to hundredths of a percent.
        let rounded = (bp.abs() * 2 + whole) / (whole * 2) * bp.signum();
        i64::try_from(rounded).unwrap_or(i64::MAX)
    });
    let level = if used > available {
        Level::Over
    } else if available.is_positive()
        && i128::from(used.cents()) * 100
            >= i128::from(available.cents()) * i128::from(warning_percent)
    {
        Level::Warning
    } else {
        Level::Ok
    };
    Some(MonthStatus {
        limit,
        rollover_in: carry,
        available,
        usage: now,
        remaining,
        percent_used_bp,
        level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn month(text: &str) -> BillMonth {
        BillMonth::parse_key(text).unwrap()
    }

    fn money(cents: i64) -> Money {
        Money::from_cents(cents)
    }

    fn budget(limit: i64, rollover: bool) -> Budget {
        new_budget(
            UserId::new(),
            &BudgetInput {
                category_id: Some("30b679d8-1fd0-5798-9807-ef2de0278a88"),
                amount: Some(money(limit)),
                rollover: Some(rollover),
                starts_on: Some("2026-01"),
                ..BudgetInput::default()
            },
            month("2026-11"),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap()
    }

    #[test]
    fn new_budgets_are_validated_field_by_field() {
        let err = new_budget(
            UserId::new(),
            &BudgetInput {
                category_id: Some("nope"),
                amount: Some(money(0)),
                starts_on: Some("2026-13"),
                ends_on: Some("1800-01"),
                ..BudgetInput::default()
            },
            month("2026-11"),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap_err();
        let DomainError::Validation(fields) = err else {
            panic!("not a validation error");
        };
        let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["category_id", "amount", "starts_on", "ends_on"]);
        let start = new_budget(
            UserId::new(),
            &BudgetInput {
                category_id: Some("30b679d8-1fd0-5798-9807-ef2de0278a88"),
                amount: Some(money(100)),
                ..BudgetInput::default()
            },
            month("2026-11"),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert_eq!(start.starts_on, month("2026-11"));
        assert!(start.include_subcategories && !start.rollover);
    }

    #[test]
    fn a_limit_changed_from_a_month_keeps_the_earlier_months() {
        let b = budget(50_000, false);
        let changed = apply_patch(
            &b,
            &BudgetPatch {
                amount: Some(money(80_000)),
                from_month: Some("2026-06"),
                ..BudgetPatch::default()
            },
        )
        .unwrap();
        assert_eq!(changed.limit_in(month("2026-05")), Some(money(50_000)));
        assert_eq!(changed.limit_in(month("2026-06")), Some(money(80_000)));
        assert_eq!(changed.amount(), money(80_000));
        // A second change before the first replaces what followed it.
        let again = apply_patch(
            &changed,
            &BudgetPatch {
                amount: Some(money(60_000)),
                from_month: Some("2026-03"),
                ..BudgetPatch::default()
            },
        )
        .unwrap();
        assert_eq!(again.limit_in(month("2026-02")), Some(money(50_000)));
        assert_eq!(again.limit_in(month("2026-09")), Some(money(60_000)));
        // Without from_month the amount is every month's.
        let all = apply_patch(
            &again,
            &BudgetPatch {
                amount: Some(money(1)),
                ..BudgetPatch::default()
            },
        )
        .unwrap();
        assert_eq!(all.limits.len(), 1);
        assert_eq!(all.limit_in(month("2026-01")), Some(money(1)));
        // A later start takes the limit then in force.
        let later = apply_patch(
            &changed,
            &BudgetPatch {
                starts_on: Some("2026-07"),
                ..BudgetPatch::default()
            },
        )
        .unwrap();
        assert_eq!(
            later.limits,
            [LimitChange {
                from_month: month("2026-07"),
                amount: money(80_000),
            }]
        );
    }

    #[test]
    fn patches_outside_the_budget_are_refused() {
        let b = budget(100, false);
        for patch in [
            BudgetPatch::default(),
            BudgetPatch {
                from_month: Some("2026-02"),
                ..BudgetPatch::default()
            },
            BudgetPatch {
                amount: Some(money(5)),
                from_month: Some("2025-12"),
                ..BudgetPatch::default()
            },
            BudgetPatch {
                ends_on: Some(Some("2025-01")),
                ..BudgetPatch::default()
            },
        ] {
            assert!(apply_patch(&b, &patch).is_err(), "{patch:?}");
        }
    }

    #[test]
    fn status_levels_follow_what_is_used_of_what_is_available() {
        let b = budget(10_000, false);
        let at = |spent: i64, committed: i64| {
            month_status(
                &b,
                month("2026-03"),
                |_| Usage {
                    spent: money(spent),
                    committed: money(committed),
                },
                80,
            )
            .unwrap()
        };
        assert_eq!(at(5_000, 0).level, Level::Ok);
        assert_eq!(at(5_000, 0).percent_used_bp, Some(5_000));
        assert_eq!(at(7_000, 1_000).level, Level::Warning);
        assert_eq!(at(10_000, 0).level, Level::Warning);
        let over = at(9_000, 1_001);
        assert_eq!(over.level, Level::Over);
        assert_eq!(over.remaining, money(-1));
        assert_eq!(at(1, 0).percent_used_bp, Some(1));
        assert!(month_status(&b, month("2025-12"), |_| Usage::default(), 80).is_none());
    }

    #[test]
    fn rollover_carries_what_was_left_or_overspent() {
        let b = budget(10_000, true);
        let usage = |m: BillMonth| Usage {
            spent: money(if m == month("2026-01") { 4_000 } else { 13_000 }),
            committed: Money::ZERO,
        };
        // January leaves 60.00, February overspends by 30.00 + 60.00 = -30.00.
        let feb = month_status(&b, month("2026-02"), usage, 80).unwrap();
        assert_eq!(feb.rollover_in, money(6_000));
        assert_eq!(feb.available, money(16_000));
        let mar = month_status(&b, month("2026-03"), usage, 80).unwrap();
        assert_eq!(mar.rollover_in, money(3_000));
        assert_eq!(mar.available, money(13_000));
    }

    #[test]
    fn a_settled_amount_moves_from_committed_to_spent() {
        let food = CategoryId::new();
        let m = month("2026-10");
        let set: HashSet<CategoryId> = [food].into_iter().collect();
        let mut s = Spending::default();
        s.add(m, Some(food), TxType::Debit, false, money(3_333));
        s.add(m, Some(food), TxType::Credit, false, money(1_000));
        s.settle(m, Some(food), TxType::Debit, money(3_333));
        s.settle(m, Some(food), TxType::Credit, money(1_000));
        assert_eq!(
            s.usage(m, &set),
            Usage {
                spent: money(2_333),
                committed: Money::ZERO,
            }
        );
    }

    #[test]
    fn spending_nets_refunds_and_splits_spent_from_committed() {
        let food = CategoryId::new();
        let other = CategoryId::new();
        let m = month("2026-03");
        let mut s = Spending::default();
        s.add(m, Some(food), TxType::Debit, true, money(1_000));
        s.add(m, Some(food), TxType::Credit, true, money(300));
        s.add(m, Some(food), TxType::Debit, false, money(200));
        s.add(m, Some(other), TxType::Debit, true, money(50));
        s.add(m, None, TxType::Debit, true, money(7));
        let salary = CategoryId::new();
        s.add(m, Some(salary), TxType::Credit, true, money(900_000));
        s.add(m, Some(salary), TxType::Credit, false, money(1));
        let set: HashSet<_> = [food].into();
        assert_eq!(
            s.usage(m, &set),
            Usage {
                spent: money(700),
                committed: money(200),
            }
        );
        // Income outside the budgets hides no spending.
        assert_eq!(s.outside(m, &set).spent, money(57));
        assert_eq!(s.outside(m, &set).committed, Money::ZERO);
    }
}
