//! Recurrence rules and installment purchases as series: how they are
//! created, and what a scoped PATCH or DELETE of one of their entries does.
//! Each operation reads a loaded [`SeriesState`] and returns a
//! [`SeriesWrite`] that the store applies in one database transaction.

use jiff::civil::Date;
use jiff::{Span, Timestamp};

use crate::projection::{
    Handle, InstallmentPlan, MAX_INSTALLMENTS, MIN_INSTALLMENTS, RecurrenceRule, Schedule,
    Template, installments_that_fit,
};
use crate::time::format_date;
use crate::transaction::{
    NewTransaction, NewTransactionInput, SeriesLink, Transaction, TransactionChanges,
    TransactionState, TxStatus, apply_changes, new_transaction,
};
use crate::{DomainError, FieldErrors, PurchaseId, RuleId, TransactionId, UserId};

/// What a creation request asks for.
#[derive(Clone, Debug)]
pub enum Creation {
    Simple(NewTransaction),
    /// The plan, and installment 1 stored as a row.
    Installments {
        plan: InstallmentPlan,
        first: NewTransaction,
    },
    Recurrence(RecurrenceRule),
}

pub fn creation(
    input: &NewTransactionInput,
    user: UserId,
    today: Date,
    now: Timestamp,
) -> Result<Creation, DomainError> {
    let mut errors = FieldErrors::new();
    if input.installments.is_some() && input.recurrence.is_some() {
        errors.add(
            "recurrence",
            "send at most one of installments and recurrence",
        );
    }
    if let Some(count) = input.installments
        && !(MIN_INSTALLMENTS..=MAX_INSTALLMENTS).contains(&count)
    {
        errors.add(
            "installments.count",
            format!("must be from {MIN_INSTALLMENTS} to {MAX_INSTALLMENTS}"),
        );
    }
    if input.recurrence.is_some() {
        if input.id.is_some() {
            errors.add(
                "id",
                "applies to simple and installment creations; an equivalent rule is reused instead",
            );
        }
        if input.status.is_some() {
            errors.add(
                "status",
                "occurrences of a rule are PENDING until they are paid",
            );
        }
    }
    let new = errors.check(new_transaction(input, today));
    errors.finish()?;
    let Some(new) = new else {
        return Err(DomainError::field("body", "is incomplete"));
    };
    let template = Template {
        tx_type: new.state.tx_type,
        amount: new.state.amount,
        description: new.state.description.clone(),
        notes: new.state.notes.clone(),
        category_id: new.state.category_id,
        tag_ids: new.state.tag_ids.clone(),
    };
    if let Some(count) = input.installments {
        // Every installment must be a day of the calendar: one dated past
        // 9999-12-31 could never be listed, and the purchase would sum to
        // less than its total.
        let fit = installments_that_fit(new.state.date);
        if u32::from(count) > fit {
            return Err(DomainError::field(
                "installments.count",
                format!(
                    "would date installments after 9999-12-31, the last supported date: from {} at most {fit} fit",
                    format_date(new.state.date)
                ),
            ));
        }
        if new.state.amount.cents() < i64::from(count) {
            return Err(DomainError::field(
                "amount",
                format!("is too small to split into {count} installments of at least 0.01"),
            ));
        }
        let plan = InstallmentPlan {
            id: PurchaseId::new(),
            user_id: user,
            account_id: new.account_id,
            template,
            count,
            first_date: new.state.date,
            hidden: false,
            created_at: now,
        };
        let mut first = new;
        first.state.amount = plan.amount_of(1);
        first.link = SeriesLink::Installment {
            purchase_id: plan.id,
            number: 1,
        };
        return Ok(Creation::Installments { plan, first });
    }
    if let Some(recurrence) = &input.recurrence {
        let schedule = Schedule {
            frequency: recurrence.frequency,
            interval: recurrence.interval.unwrap_or(1),
            start: new.state.date,
            end_date: recurrence.end_date,
            count: recurrence.count,
        };
        schedule.validate()?;
        return Ok(Creation::Recurrence(RecurrenceRule {
            id: RuleId::new(),
            user_id: user,
            account_id: new.account_id,
            template,
            schedule,
            created_at: now,
        }));
    }
    Ok(Creation::Simple(new))
}

/// Which entries of a series a change or deletion reaches: this entry,
/// this and later ones, or all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(rename_all = "lowercase"))]
pub enum Scope {
    This,
    Future,
    All,
}

impl Scope {
    pub fn parse(text: &str) -> Option<Scope> {
        match text {
            "this" => Some(Scope::This),
            "future" => Some(Scope::Future),
            "all" => Some(Scope::All),
            _ => None,
        }
    }
}

/// Names a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesRef {
    Rule(RuleId),
    Plan(PurchaseId),
}

#[derive(Clone, Debug)]
pub enum Series {
    Rule(RecurrenceRule),
    Plan(InstallmentPlan),
}

/// A series with its stored rows and tombstones, loaded in one transaction.
#[derive(Clone, Debug)]
pub struct SeriesState {
    pub series: Series,
    pub rows: Vec<Transaction>,
    pub tombstones: Vec<Handle>,
}

/// The entry of a series an operation addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A projected entry, by its handle.
    Projected(Handle),
    /// A stored row of the series.
    Stored(TransactionId),
    /// A rule given by its id, with the occurrence or cut-off day (`None`
    /// only makes sense for the whole rule).
    RuleDate(Option<Date>),
}

/// A row the write creates: a materialised entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesRow {
    pub id: TransactionId,
    pub state: TransactionState,
    pub link: SeriesLink,
}

/// Everything one operation changes, applied atomically by the store.
#[derive(Clone, Debug, Default)]
pub struct SeriesWrite {
    pub insert: Vec<SeriesRow>,
    pub update: Vec<(TransactionId, TransactionState)>,
    pub relink: Vec<(TransactionId, RuleId)>,
    pub delete: Vec<TransactionId>,
    /// Rules to insert or replace.
    pub put_rules: Vec<RecurrenceRule>,
    pub delete_rule: Option<RuleId>,
    pub put_plan: Option<InstallmentPlan>,
    pub delete_plan: Option<PurchaseId>,
    /// Handles to hide, with the date of the entry each hides.
    pub tombstones: Vec<(Handle, Date)>,
}

/// What the response reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub target_id: String,
    pub affected_ids: Vec<String>,
    pub message: Option<String>,
}

/// The key of an entry within its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Date(Date),
    Number(u16),
}

fn row_key(row: &Transaction) -> Option<Key> {
    match (row.recurrence_period_date, row.installment) {
        (Some(date), _) => Some(Key::Date(date)),
        (None, Some(i)) => Some(Key::Number(i.number)),
        _ => None,
    }
}

impl SeriesState {
    fn handle(&self, key: Key) -> Option<Handle> {
        match (&self.series, key) {
            (Series::Rule(rule), Key::Date(date)) => Some(Handle::Recurrence {
                rule_id: rule.id,
                date,
            }),
            (Series::Plan(plan), Key::Number(number)) => Some(Handle::Installment {
                purchase_id: plan.id,
                number,
            }),
            _ => None,
        }
    }

    fn stored_at(&self, key: Key) -> Option<&Transaction> {
        self.rows.iter().find(|r| row_key(r) == Some(key))
    }

    fn is_tombstoned(&self, key: Key) -> bool {
        self.handle(key)
            .is_some_and(|h| self.tombstones.contains(&h))
    }

    /// Whether the series produces an entry at `key` at all.
    fn produces(&self, key: Key) -> bool {
        match (&self.series, key) {
            (Series::Rule(rule), Key::Date(date)) => rule.schedule.index_of(date).is_some(),
            (Series::Plan(plan), Key::Number(n)) => (1..=plan.count).contains(&n),
            _ => false,
        }
    }

    /// Resolves the target into its key, checking it exists as addressed.
    fn resolve(&self, target: Target) -> Result<Key, DomainError> {
        match target {
            Target::Projected(handle) => {
                let key = match handle {
                    Handle::Recurrence { date, .. } => Key::Date(date),
                    Handle::Installment { number, .. } => Key::Number(number),
                    Handle::Bill { .. } => return Err(DomainError::ProjectionNotFound),
                };
                if self.handle(key) != Some(handle)
                    || !self.produces(key)
                    || self.stored_at(key).is_some()
                    || self.is_tombstoned(key)
                    || matches!(&self.series, Series::Plan(p) if p.hidden)
                {
                    return Err(DomainError::ProjectionNotFound);
                }
                Ok(key)
            }
            Target::Stored(id) => self
                .rows
                .iter()
                .find(|r| r.id.stored() == Some(id))
                .and_then(row_key)
                .ok_or_else(|| DomainError::field("id", "is not an entry of this series")),
            Target::RuleDate(Some(date)) => {
                if self.produces(Key::Date(date)) {
                    Ok(Key::Date(date))
                } else {
                    Err(DomainError::field(
                        "date",
                        "is not an occurrence of this rule",
                    ))
                }
            }
            Target::RuleDate(None) => Err(DomainError::field(
                "date",
                "is required to address part of a rule (or use scope=all)",
            )),
        }
    }

    /// The state of the entry at `key` before any change: the stored row,
    /// or the projection.
    fn entry_state(&self, key: Key) -> Option<TransactionState> {
        if let Some(row) = self.stored_at(key) {
            return Some(row.state.clone());
        }
        match (&self.series, key) {
            (Series::Rule(rule), Key::Date(date)) => {
                Some(rule.template.state(date, rule.template.amount))
            }
            (Series::Plan(plan), Key::Number(n)) => {
                Some(plan.template.state(plan.date_of(n)?, plan.amount_of(n)))
            }
            _ => None,
        }
    }

    fn link(&self, key: Key) -> SeriesLink {
        match (&self.series, key) {
            (Series::Rule(rule), Key::Date(period_date)) => SeriesLink::Recurrence {
                rule_id: rule.id,
                period_date,
            },
            (Series::Plan(plan), Key::Number(number)) => SeriesLink::Installment {
                purchase_id: plan.id,
                number,
            },
            _ => SeriesLink::None,
        }
    }

    /// The id the response names for `key`: the stored row, or the handle.
    fn id_of(&self, key: Key) -> String {
        match self.stored_at(key) {
            Some(row) => row.id.to_string(),
            None => self.handle(key).map(|h| h.to_string()).unwrap_or_default(),
        }
    }
}

/// Fields that can only change for one entry at a time.
fn only_this(changes: &TransactionChanges, allow_date: bool) -> Result<(), DomainError> {
    let mut errors = FieldErrors::new();
    let single = [
        ("date", changes.date.is_some() && !allow_date),
        ("status", changes.status.is_some()),
        ("hide_from_results", changes.hide_from_results.is_some()),
    ];
    for (field, sent) in single {
        if sent {
            errors.add(
                field,
                "can only change for one entry at a time (scope this)",
            );
        }
    }
    errors.finish()
}

/// The template with the changes applied.
fn changed_template(
    template: &Template,
    changes: &TransactionChanges,
) -> Result<Template, DomainError> {
    let state = apply_changes(&template.state(Date::MIN, template.amount), changes)?;
    Ok(Template {
        tx_type: state.tx_type,
        amount: state.amount,
        description: state.description,
        notes: state.notes,
        category_id: state.category_id,
        tag_ids: state.tag_ids,
    })
}

/// PATCH of an entry of a series. A stored row with scope `this` is a
/// plain row edit and never comes here.
pub fn patch(
    state: &SeriesState,
    target: Target,
    scope: Scope,
    changes: &TransactionChanges,
) -> Result<(SeriesWrite, Outcome), DomainError> {
    let key = state.resolve(target)?;
    let mut write = SeriesWrite::default();
    match (scope, &state.series) {
        (Scope::This, _) => {
            let entry = state
                .entry_state(key)
                .ok_or(DomainError::ProjectionNotFound)?;
            let row = SeriesRow {
                id: TransactionId::new(),
                state: apply_changes(&entry, changes)?,
                link: state.link(key),
            };
            let id = row.id.to_string();
            write.insert.push(row);
            let message = format!(
                "This entry is now a stored row ({id}); the rest of the series is unchanged."
            );
            Ok((
                write,
                Outcome {
                    target_id: id.clone(),
                    affected_ids: vec![id],
                    message: Some(message),
                },
            ))
        }
        (Scope::Future | Scope::All, Series::Plan(plan)) => {
            only_this(changes, false)?;
            let Key::Number(from) = key else {
                return Err(DomainError::ProjectionNotFound);
            };
            let first = if scope == Scope::All { 1 } else { from };
            let mut affected = Vec::new();
            let mut target_id = String::new();
            for number in first..=plan.count {
                let k = Key::Number(number);
                if state.is_tombstoned(k) {
                    continue;
                }
                let id = match state.stored_at(k) {
                    Some(row) => {
                        let is_target = number == from;
                        if row.state.status == TxStatus::Posted && !is_target {
                            continue;
                        }
                        let id = row.id.stored().ok_or(DomainError::ProjectionNotFound)?;
                        write.update.push((id, apply_changes(&row.state, changes)?));
                        id
                    }
                    None => {
                        let entry = state
                            .entry_state(k)
                            .ok_or(DomainError::ProjectionNotFound)?;
                        let row = SeriesRow {
                            id: TransactionId::new(),
                            state: apply_changes(&entry, changes)?,
                            link: state.link(k),
                        };
                        let id = row.id;
                        write.insert.push(row);
                        id
                    }
                };
                if number == from {
                    target_id = id.to_string();
                }
                affected.push(id.to_string());
            }
            let message = format!(
                "Installments {first} to {} of {} changed and stored; POSTED installments other than this one keep their values.",
                plan.count, plan.count
            );
            Ok((
                write,
                Outcome {
                    target_id,
                    affected_ids: affected,
                    message: Some(message),
                },
            ))
        }
        (Scope::All, Series::Rule(rule)) => {
            only_this(changes, false)?;
            let mut next = rule.clone();
            next.template = changed_template(&rule.template, changes)?;
            let mut affected = vec![state.id_of(key)];
            for row in &state.rows {
                if row.state.status == TxStatus::Posted {
                    continue;
                }
                let Some(id) = row.id.stored() else { continue };
                write.update.push((id, apply_changes(&row.state, changes)?));
                if !affected.contains(&id.to_string()) {
                    affected.push(id.to_string());
                }
            }
            let pending = write.update.len();
            write.put_rules.push(next);
            let message = format!(
                "The rule and {pending} pending stored entr{} changed; POSTED entries keep their values.",
                if pending == 1 { "y" } else { "ies" }
            );
            Ok((
                write,
                Outcome {
                    target_id: state.id_of(key),
                    affected_ids: affected,
                    message: Some(message),
                },
            ))
        }
        (Scope::Future, Series::Rule(rule)) => {
            only_this(changes, true)?;
            let Key::Date(at) = key else {
                return Err(DomainError::ProjectionNotFound);
            };
            let index = rule
                .schedule
                .index_of(at)
                .ok_or(DomainError::ProjectionNotFound)?;
            let new_start = changes.date.unwrap_or(at);
            if index == 0 && new_start == rule.schedule.start {
                // From the first occurrence on is the whole rule.
                return patch(state, target, Scope::All, changes);
            }
            let mut new_rule = rule.clone();
            new_rule.id = RuleId::new();
            new_rule.template = changed_template(&rule.template, changes)?;
            new_rule.schedule = Schedule {
                start: new_start,
                count: rule.schedule.count.map(|c| c.saturating_sub(index)),
                ..rule.schedule.clone()
            };
            if let Some(end) = new_rule.schedule.end_date
                && end < new_start
            {
                new_rule.schedule.end_date = Some(new_start);
            }
            // Moving the remaining occurrences later may push the last
            // of them past the calendar: the date sent is what to fix.
            if changes.date.is_some() && !new_rule.schedule.stays_in_calendar() {
                return Err(DomainError::field(
                    "date",
                    new_rule.schedule.past_calendar_message(),
                ));
            }
            new_rule.schedule.validate()?;
            // Index 0 is the rule's start: nothing of it stays. Any later
            // occurrence has a day before it in the calendar.
            match at.yesterday() {
                Ok(day_before) if index > 0 => {
                    let mut old_rule = rule.clone();
                    old_rule.schedule.end_date = Some(day_before);
                    write.put_rules.push(old_rule);
                }
                _ => write.delete_rule = Some(rule.id),
            }
            let new_first = Handle::Recurrence {
                rule_id: new_rule.id,
                date: new_start,
            };
            let mut affected = vec![new_first.to_string()];
            // Later stored rows and deletions follow the new rule.
            for row in &state.rows {
                let (Some(id), Some(period)) = (row.id.stored(), row.recurrence_period_date) else {
                    continue;
                };
                if period < at {
                    continue;
                }
                write.relink.push((id, new_rule.id));
                if row.state.status != TxStatus::Posted {
                    let mut row_changes = changes.clone();
                    row_changes.date = None;
                    write
                        .update
                        .push((id, apply_changes(&row.state, &row_changes)?));
                }
                affected.push(id.to_string());
            }
            for handle in &state.tombstones {
                if let Handle::Recurrence { date, .. } = handle
                    && *date >= at
                {
                    write.tombstones.push((
                        Handle::Recurrence {
                            rule_id: new_rule.id,
                            date: *date,
                        },
                        *date,
                    ));
                }
            }
            let target_id = match target {
                Target::Stored(id) => id.to_string(),
                _ => new_first.to_string(),
            };
            let message = format!(
                "The series was split: occurrences before {} keep the old values (rule {}); from {} on they follow the new rule {}.",
                format_date(at),
                rule.id,
                format_date(new_start),
                new_rule.id
            );
            write.put_rules.push(new_rule);
            Ok((
                write,
                Outcome {
                    target_id,
                    affected_ids: affected,
                    message: Some(message),
                },
            ))
        }
    }
}

/// DELETE of an entry of a series.
pub fn delete(
    state: &SeriesState,
    target: Target,
    scope: Scope,
    preserve_posted: bool,
    hide_series: bool,
) -> Result<(SeriesWrite, Outcome), DomainError> {
    let mut write = SeriesWrite::default();
    let mut affected = Vec::new();
    if hide_series {
        let Series::Plan(plan) = &state.series else {
            return Err(DomainError::field(
                "hide_series",
                "applies to installment purchases only",
            ));
        };
        let mut hidden = plan.clone();
        hidden.hidden = true;
        write.put_plan = Some(hidden);
        for row in &state.rows {
            let Some(id) = row.id.stored() else { continue };
            let mut next = row.state.clone();
            next.hide_from_results = true;
            write.update.push((id, next));
            affected.push(id.to_string());
        }
        let message = "The whole installment series is hidden.".to_owned();
        return Ok((
            write,
            Outcome {
                target_id: String::new(),
                affected_ids: affected,
                message: Some(message),
            },
        ));
    }
    let key = match (target, scope, &state.series) {
        // A cut-off day need not be an occurrence itself.
        (Target::RuleDate(Some(date)), Scope::Future | Scope::All, _) => Key::Date(date),
        (Target::RuleDate(None), Scope::All, Series::Rule(rule)) => Key::Date(rule.schedule.start),
        _ => state.resolve(target)?,
    };
    let keep = |row: &Transaction| preserve_posted && row.state.status == TxStatus::Posted;
    match scope {
        Scope::This => {
            // One entry, asked for by name: it goes even when POSTED, and a
            // tombstone keeps its projection from coming back.
            let handle = state.handle(key).ok_or(DomainError::ProjectionNotFound)?;
            let date = match (&state.series, key) {
                (Series::Rule(_), Key::Date(date)) => Some(date),
                (Series::Plan(plan), Key::Number(n)) => plan.date_of(n),
                _ => None,
            }
            .ok_or(DomainError::ProjectionNotFound)?;
            if let Some(id) = state.stored_at(key).and_then(|row| row.id.stored()) {
                write.delete.push(id);
                affected.push(id.to_string());
            } else {
                affected.push(handle.to_string());
            }
            write.tombstones.push((handle, date));
        }
        Scope::Future | Scope::All => {
            let from_start = scope == Scope::All;
            let in_scope = |k: Key| match (k, key) {
                _ if from_start => true,
                (Key::Date(d), Key::Date(at)) => d >= at,
                (Key::Number(n), Key::Number(at)) => n >= at,
                _ => false,
            };
            let mut kept = false;
            for row in &state.rows {
                let (Some(id), Some(k)) = (row.id.stored(), row_key(row)) else {
                    continue;
                };
                if !in_scope(k) {
                    continue;
                }
                if keep(row) {
                    kept = true;
                    continue;
                }
                write.delete.push(id);
                affected.push(id.to_string());
            }
            match &state.series {
                Series::Rule(rule) => {
                    let Key::Date(at) = key else {
                        return Err(DomainError::ProjectionNotFound);
                    };
                    if from_start || at <= rule.schedule.start {
                        write.delete_rule = Some(rule.id);
                    } else {
                        let mut ended = rule.clone();
                        ended.schedule.end_date = at.checked_sub(Span::new().days(1)).ok();
                        write.put_rules.push(ended);
                    }
                    affected.insert(0, rule.id.to_string());
                }
                Series::Plan(plan) => {
                    if from_start {
                        if kept {
                            // POSTED installments stay: keep the plan (hidden)
                            // so they still show which purchase they belong to.
                            let mut hidden = plan.clone();
                            hidden.hidden = true;
                            write.put_plan = Some(hidden);
                        } else {
                            write.delete_plan = Some(plan.id);
                        }
                    } else {
                        // Every slot in scope gets a tombstone, stored or
                        // projected, so a deleted row never comes back as a
                        // projection; kept POSTED rows still hold theirs.
                        for number in 1..=plan.count {
                            let k = Key::Number(number);
                            if !in_scope(k)
                                || state.is_tombstoned(k)
                                || state.stored_at(k).is_some_and(&keep)
                            {
                                continue;
                            }
                            let (Some(handle), Some(date)) =
                                (state.handle(k), plan.date_of(number))
                            else {
                                continue;
                            };
                            write.tombstones.push((handle, date));
                            if state.stored_at(k).is_none() {
                                affected.push(handle.to_string());
                            }
                        }
                    }
                }
            }
        }
    }
    Ok((
        write,
        Outcome {
            target_id: String::new(),
            affected_ids: affected,
            message: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::Frequency;
    use crate::transaction::{EntryId, InstallmentRef, Source, TxType};
    use crate::{AccountId, Money};
    use jiff::civil::date;

    fn template(cents: i64) -> Template {
        Template {
            tx_type: TxType::Debit,
            amount: Money::from_cents(cents),
            description: "Academia".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
        }
    }

    fn rule() -> RecurrenceRule {
        RecurrenceRule {
            id: RuleId::new(),
            user_id: UserId::new(),
            account_id: AccountId::new(),
            template: template(9990),
            schedule: Schedule {
                frequency: Frequency::Monthly,
                interval: 1,
                start: date(2026, 1, 31),
                end_date: None,
                count: Some(12),
            },
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    fn plan() -> InstallmentPlan {
        InstallmentPlan {
            id: PurchaseId::new(),
            user_id: UserId::new(),
            account_id: AccountId::new(),
            template: template(120_005),
            count: 12,
            first_date: date(2026, 1, 31),
            hidden: false,
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    /// A stored row in slot `link` of a series, with `status`.
    fn row(
        link: SeriesLink,
        plan: Option<&InstallmentPlan>,
        status: TxStatus,
        date: Date,
    ) -> Transaction {
        let mut state = template(100).state(date, Money::from_cents(100));
        state.status = status;
        let (recurrence_id, recurrence_period_date, installment) = match link {
            SeriesLink::Recurrence {
                rule_id,
                period_date,
            } => (Some(rule_id), Some(period_date), None),
            SeriesLink::Installment {
                purchase_id,
                number,
            } => (
                None,
                None,
                plan.map(|p| InstallmentRef {
                    purchase_id,
                    number,
                    count: p.count,
                    total_amount: p.template.amount,
                }),
            ),
            SeriesLink::None => (None, None, None),
        };
        Transaction {
            id: EntryId::Stored(TransactionId::new()),
            account_id: AccountId::new(),
            currency: "BRL".into(),
            state,
            tags: Vec::new(),
            bill_to_account_id: None,
            recurrence_id,
            recurrence_period_date,
            installment,
            transfer_group_id: None,
            created_by_user: true,
            source: Source::Api,
            card_number: None,
            holder: None,
            holder_is_me: false,
            original_description: None,
            receipt_name: None,
            open_finance: false,
        }
    }

    fn occurrence_row(rule: &RecurrenceRule, date: Date, status: TxStatus) -> Transaction {
        let link = SeriesLink::Recurrence {
            rule_id: rule.id,
            period_date: date,
        };
        row(link, None, status, date)
    }

    fn installment_row(plan: &InstallmentPlan, number: u16, status: TxStatus) -> Transaction {
        let link = SeriesLink::Installment {
            purchase_id: plan.id,
            number,
        };
        let date = plan.date_of(number).expect("an installment date");
        row(link, Some(plan), status, date)
    }

    fn notes(text: &str) -> TransactionChanges {
        TransactionChanges {
            notes: crate::account::Patch::Set(text.into()),
            ..Default::default()
        }
    }

    #[test]
    fn creation_splits_a_purchase_and_links_installment_one() {
        let input = NewTransactionInput {
            account_id: Some(AccountId::new()),
            tx_type: Some(TxType::Debit),
            amount: Some(Money::from_cents(120_005)),
            description: Some("Notebook".into()),
            installments: Some(12),
            ..Default::default()
        };
        let Creation::Installments { plan, first } = creation(
            &input,
            UserId::new(),
            date(2026, 11, 22),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap() else {
            panic!("not a purchase")
        };
        assert_eq!(first.state.amount, Money::from_cents(10_005));
        assert_eq!(
            first.link,
            SeriesLink::Installment {
                purchase_id: plan.id,
                number: 1
            }
        );
        let too_small = NewTransactionInput {
            amount: Some(Money::from_cents(5)),
            ..input.clone()
        };
        assert!(
            creation(
                &too_small,
                UserId::new(),
                date(2026, 11, 22),
                Timestamp::UNIX_EPOCH
            )
            .is_err()
        );
        let both = NewTransactionInput {
            recurrence: Some(crate::transaction::RecurrenceInput {
                frequency: Frequency::Weekly,
                interval: None,
                end_date: None,
                count: None,
            }),
            ..input
        };
        assert!(
            creation(
                &both,
                UserId::new(),
                date(2026, 11, 22),
                Timestamp::UNIX_EPOCH
            )
            .is_err()
        );
    }

    #[test]
    fn this_materialises_one_projection_with_the_change() {
        let plan = plan();
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: Vec::new(),
            tombstones: Vec::new(),
        };
        let target = Target::Projected(Handle::Installment {
            purchase_id: plan.id,
            number: 3,
        });
        let (write, outcome) = patch(&state, target, Scope::This, &notes("moved")).unwrap();
        assert_eq!(write.insert.len(), 1);
        let inserted = &write.insert[0];
        assert_eq!(
            inserted.link,
            SeriesLink::Installment {
                purchase_id: plan.id,
                number: 3
            }
        );
        assert_eq!(inserted.state.date, date(2026, 3, 31));
        assert_eq!(inserted.state.amount, Money::from_cents(10_000));
        assert_eq!(inserted.state.notes.as_deref(), Some("moved"));
        assert_eq!(inserted.state.status, TxStatus::Pending);
        assert_eq!(outcome.target_id, inserted.id.to_string());
    }

    #[test]
    fn a_materialised_or_deleted_slot_is_no_longer_a_projection() {
        let plan = plan();
        let stored = installment_row(&plan, 2, TxStatus::Posted);
        let gone = Handle::Installment {
            purchase_id: plan.id,
            number: 4,
        };
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: vec![stored],
            tombstones: vec![gone],
        };
        for number in [2, 4, 0, 13] {
            let target = Target::Projected(Handle::Installment {
                purchase_id: plan.id,
                number,
            });
            assert_eq!(
                patch(&state, target, Scope::This, &notes("x")).unwrap_err(),
                DomainError::ProjectionNotFound,
                "{number}"
            );
        }
    }

    #[test]
    fn future_on_installments_stores_the_rest_and_skips_posted_and_deleted() {
        let plan = plan();
        let posted = installment_row(&plan, 10, TxStatus::Posted);
        let pending = installment_row(&plan, 11, TxStatus::Pending);
        let pending_id = pending.id.stored().unwrap();
        let gone = Handle::Installment {
            purchase_id: plan.id,
            number: 12,
        };
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: vec![posted, pending],
            tombstones: vec![gone],
        };
        let target = Target::Projected(Handle::Installment {
            purchase_id: plan.id,
            number: 8,
        });
        let (write, outcome) =
            patch(&state, target, Scope::Future, &notes("renegotiated")).unwrap();
        let numbers: Vec<SeriesLink> = write.insert.iter().map(|r| r.link).collect();
        assert_eq!(
            numbers,
            [8, 9].map(|number| SeriesLink::Installment {
                purchase_id: plan.id,
                number
            })
        );
        assert_eq!(write.update.len(), 1);
        assert_eq!(write.update[0].0, pending_id);
        assert_eq!(outcome.affected_ids.len(), 3);
        let dated = TransactionChanges {
            date: Some(date(2027, 1, 1)),
            ..Default::default()
        };
        assert!(patch(&state, target, Scope::Future, &dated).is_err());
    }

    #[test]
    fn all_on_a_rule_changes_it_and_its_pending_rows_only() {
        let rule = rule();
        let posted = occurrence_row(&rule, date(2026, 1, 31), TxStatus::Posted);
        let pending = occurrence_row(&rule, date(2026, 2, 28), TxStatus::Pending);
        let pending_id = pending.id.stored().unwrap();
        let state = SeriesState {
            series: Series::Rule(rule.clone()),
            rows: vec![posted, pending],
            tombstones: Vec::new(),
        };
        let change = TransactionChanges {
            amount: Some(Money::from_cents(10_990)),
            ..Default::default()
        };
        let target = Target::Projected(Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 4, 30),
        });
        let (write, _) = patch(&state, target, Scope::All, &change).unwrap();
        assert_eq!(write.put_rules.len(), 1);
        assert_eq!(
            write.put_rules[0].template.amount,
            Money::from_cents(10_990)
        );
        assert_eq!(write.put_rules[0].schedule, rule.schedule);
        assert_eq!(write.update.len(), 1);
        assert_eq!(write.update[0].0, pending_id);
    }

    #[test]
    fn future_on_a_rule_forks_it() {
        let rule = rule();
        let later = occurrence_row(&rule, date(2026, 6, 30), TxStatus::Pending);
        let later_id = later.id.stored().unwrap();
        let deleted = Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 7, 31),
        };
        let state = SeriesState {
            series: Series::Rule(rule.clone()),
            rows: vec![later],
            tombstones: vec![deleted],
        };
        let change = TransactionChanges {
            amount: Some(Money::from_cents(12_990)),
            ..Default::default()
        };
        let target = Target::Projected(Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 4, 30),
        });
        let (write, outcome) = patch(&state, target, Scope::Future, &change).unwrap();
        let old = write.put_rules.iter().find(|r| r.id == rule.id).unwrap();
        let new = write.put_rules.iter().find(|r| r.id != rule.id).unwrap();
        assert_eq!(old.schedule.end_date, Some(date(2026, 4, 29)));
        assert_eq!(old.template.amount, Money::from_cents(9990));
        assert_eq!(new.schedule.start, date(2026, 4, 30));
        // Index 3 of 12: nine occurrences remain.
        assert_eq!(new.schedule.count, Some(9));
        assert_eq!(new.template.amount, Money::from_cents(12_990));
        assert_eq!(write.relink, [(later_id, new.id)]);
        assert_eq!(
            write.tombstones,
            [(
                Handle::Recurrence {
                    rule_id: new.id,
                    date: date(2026, 7, 31)
                },
                date(2026, 7, 31)
            )]
        );
        assert!(outcome.message.unwrap().contains("split"));
    }

    #[test]
    fn deleting_one_entry_leaves_a_tombstone() {
        let plan = plan();
        let stored = installment_row(&plan, 2, TxStatus::Posted);
        let stored_id = stored.id.stored().unwrap();
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: vec![stored],
            tombstones: Vec::new(),
        };
        let (write, _) =
            delete(&state, Target::Stored(stored_id), Scope::This, true, false).unwrap();
        assert_eq!(write.delete, [stored_id]);
        let slot = Handle::Installment {
            purchase_id: plan.id,
            number: 2,
        };
        assert_eq!(write.tombstones, [(slot, date(2026, 2, 28))]);
        let projected = Handle::Installment {
            purchase_id: plan.id,
            number: 5,
        };
        let (write, _) = delete(
            &state,
            Target::Projected(projected),
            Scope::This,
            true,
            false,
        )
        .unwrap();
        assert!(write.delete.is_empty());
        assert_eq!(write.tombstones, [(projected, date(2026, 5, 31))]);
    }

    #[test]
    fn deleting_future_installments_tombstones_deleted_rows_too() {
        let plan = plan();
        let stored = installment_row(&plan, 5, TxStatus::Pending);
        let stored_id = stored.id.stored().unwrap();
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: vec![stored],
            tombstones: Vec::new(),
        };
        let target = Target::Projected(Handle::Installment {
            purchase_id: plan.id,
            number: 3,
        });
        let (write, _) = delete(&state, target, Scope::Future, true, false).unwrap();
        assert_eq!(write.delete, [stored_id]);
        let numbers: Vec<u16> = write
            .tombstones
            .iter()
            .filter_map(|(h, _)| match h {
                Handle::Installment { number, .. } => Some(*number),
                _ => None,
            })
            .collect();
        assert_eq!(numbers, (3..=12).collect::<Vec<u16>>());
    }

    #[test]
    fn a_rule_ends_at_any_cut_off_day() {
        let rule = rule();
        let state = SeriesState {
            series: Series::Rule(rule.clone()),
            rows: Vec::new(),
            tombstones: Vec::new(),
        };
        let (write, _) = delete(
            &state,
            Target::RuleDate(Some(date(2026, 6, 15))),
            Scope::Future,
            true,
            false,
        )
        .unwrap();
        assert_eq!(
            write.put_rules[0].schedule.end_date,
            Some(date(2026, 6, 14))
        );
        assert!(
            delete(
                &state,
                Target::RuleDate(Some(date(2026, 6, 15))),
                Scope::This,
                true,
                false
            )
            .is_err()
        );
    }

    #[test]
    fn deleting_the_future_ends_a_rule_and_keeps_posted_rows() {
        let rule = rule();
        let posted = occurrence_row(&rule, date(2026, 8, 31), TxStatus::Posted);
        let pending = occurrence_row(&rule, date(2026, 9, 30), TxStatus::Pending);
        let pending_id = pending.id.stored().unwrap();
        let state = SeriesState {
            series: Series::Rule(rule.clone()),
            rows: vec![posted, pending],
            tombstones: Vec::new(),
        };
        let (write, _) = delete(
            &state,
            Target::RuleDate(Some(date(2026, 6, 30))),
            Scope::Future,
            true,
            false,
        )
        .unwrap();
        assert_eq!(
            write.put_rules[0].schedule.end_date,
            Some(date(2026, 6, 29))
        );
        assert_eq!(write.delete, [pending_id]);
        let (write, _) = delete(
            &state,
            Target::RuleDate(Some(date(2026, 6, 30))),
            Scope::All,
            false,
            false,
        )
        .unwrap();
        assert_eq!(write.delete_rule, Some(rule.id));
        assert_eq!(write.delete.len(), 2);
    }

    #[test]
    fn deleting_a_purchase_with_posted_rows_keeps_it_hidden() {
        let plan = plan();
        let posted = installment_row(&plan, 1, TxStatus::Posted);
        let state = SeriesState {
            series: Series::Plan(plan.clone()),
            rows: vec![posted],
            tombstones: Vec::new(),
        };
        let target = Target::Projected(Handle::Installment {
            purchase_id: plan.id,
            number: 5,
        });
        let (write, _) = delete(&state, target, Scope::All, true, false).unwrap();
        assert!(write.delete.is_empty());
        assert_eq!(write.delete_plan, None);
        assert!(write.put_plan.as_ref().is_some_and(|p| p.hidden));
        let (hidden, _) = delete(&state, target, Scope::This, true, true).unwrap();
        assert!(hidden.put_plan.is_some_and(|p| p.hidden));
        assert!(hidden.update.iter().all(|(_, s)| s.hide_from_results));
        let rule_state = SeriesState {
            series: Series::Rule(rule()),
            rows: Vec::new(),
            tombstones: Vec::new(),
        };
        assert!(
            delete(
                &rule_state,
                Target::RuleDate(Some(date(2026, 1, 31))),
                Scope::This,
                true,
                true
            )
            .is_err()
        );
    }
}
