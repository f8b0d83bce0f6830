//! The merged view: stored rows plus the projected entries of rules and
//! plans, in one order (newest day first, ids ascending within a day) and
//! one cursor. Projections are produced per source, newest first from the
//! cursor on, and each source stops after `limit + 1` matches, so a page
//! costs the same however long the history is.

use jiff::civil::Date;
use std::collections::{HashMap, HashSet};

use crate::account::SubType;
use crate::projection::{Handle, InstallmentPlan, RecurrenceRule, Template};
use crate::text::sort_key;
use crate::transaction::{
    EntryId, InstallmentRef, Page, PagePosition, Source, TagRef, Transaction, TransactionFilter,
    TxStatus,
};
use crate::{AccountId, Money, TagId};

#[derive(Clone, Debug)]
pub struct AccountInfo {
    pub currency: String,
    pub sub_type: SubType,
}

/// What projections are made from, loaded by the store for one user.
#[derive(Clone, Debug, Default)]
pub struct ViewSources {
    pub rules: Vec<RecurrenceRule>,
    pub plans: Vec<InstallmentPlan>,
    /// Handles whose entry is replaced by a stored row.
    pub materialized: HashSet<Handle>,
    pub tombstones: HashSet<Handle>,
    pub accounts: HashMap<AccountId, AccountInfo>,
    pub tags: HashMap<TagId, TagRef>,
}

impl ViewSources {
    fn live(&self, handle: &Handle) -> bool {
        !self.materialized.contains(handle) && !self.tombstones.contains(handle)
    }

    fn tags_of(&self, ids: &[TagId]) -> Vec<TagRef> {
        let mut tags: Vec<TagRef> = ids
            .iter()
            .filter_map(|id| self.tags.get(id).cloned())
            .collect();
        tags.sort_by(|a, b| {
            sort_key(&a.title)
                .cmp(&sort_key(&b.title))
                .then(a.id.cmp(&b.id))
        });
        tags
    }

    /// A projected entry; `series` holds what the caller knows of its rule
    /// or plan: (recurrence id, period date, installment, owner, created).
    fn entry(
        &self,
        handle: Handle,
        account_id: AccountId,
        template: &Template,
        date: Date,
        amount: Money,
        series: SeriesFields,
    ) -> Option<Transaction> {
        let account = self.accounts.get(&account_id)?;
        let mut state = template.state(date, amount);
        let tags = self.tags_of(&template.tag_ids);
        state.tag_ids = tags.iter().map(|t| t.id).collect();
        Some(Transaction {
            id: EntryId::Projected(handle),
            user_id: series.user_id,
            account_id,
            currency: account.currency.clone(),
            state,
            tags,
            bill_to_account_id: None,
            recurrence_id: series.recurrence_id,
            recurrence_period_date: series.recurrence_id.map(|_| date),
            installment: series.installment,
            transfer_group_id: None,
            created_by_user: true,
            source: Source::Api,
            card_number: None,
            holder: None,
            holder_is_me: false,
            original_description: None,
            receipt_name: None,
            open_finance: false,
            created_at: series.created_at,
        })
    }

    pub fn rule_entry(&self, rule: &RecurrenceRule, date: Date) -> Option<Transaction> {
        let handle = Handle::Recurrence {
            rule_id: rule.id,
            date,
        };
        let series = SeriesFields {
            recurrence_id: Some(rule.id),
            installment: None,
            user_id: rule.user_id,
            created_at: rule.created_at,
        };
        self.entry(
            handle,
            rule.account_id,
            &rule.template,
            date,
            rule.template.amount,
            series,
        )
    }

    pub fn plan_entry(&self, plan: &InstallmentPlan, number: u16) -> Option<Transaction> {
        let handle = Handle::Installment {
            purchase_id: plan.id,
            number,
        };
        let date = plan.date_of(number)?;
        let series = SeriesFields {
            recurrence_id: None,
            installment: Some(InstallmentRef {
                purchase_id: plan.id,
                number,
                count: plan.count,
                total_amount: plan.template.amount,
            }),
            user_id: plan.user_id,
            created_at: plan.created_at,
        };
        self.entry(
            handle,
            plan.account_id,
            &plan.template,
            date,
            plan.amount_of(number),
            series,
        )
    }

    /// The projected entry a handle names, when the rules produce it.
    pub fn resolve(&self, handle: &Handle) -> Option<Transaction> {
        if !self.live(handle) {
            return None;
        }
        match *handle {
            Handle::Recurrence { rule_id, date } => {
                let rule = self.rules.iter().find(|r| r.id == rule_id)?;
                rule.schedule.index_of(date)?;
                self.rule_entry(rule, date)
            }
            Handle::Installment {
                purchase_id,
                number,
            } => {
                let plan = self
                    .plans
                    .iter()
                    .find(|p| p.id == purchase_id && !p.hidden)?;
                (1..=plan.count).contains(&number).then_some(())?;
                self.plan_entry(plan, number)
            }
            Handle::Bill { .. } => None,
        }
    }
}

/// What a projected entry takes from its rule or plan.
struct SeriesFields {
    recurrence_id: Option<crate::RuleId>,
    installment: Option<InstallmentRef>,
    user_id: crate::UserId,
    created_at: jiff::Timestamp,
}

/// Whether a projected entry passes the list's filters.
fn matches(filter: &TransactionFilter, entry: &Transaction, sub_type: SubType) -> bool {
    let state = &entry.state;
    filter.status.is_none_or(|s| s == TxStatus::Pending)
        && !filter.hidden
        && filter.tx_type.is_none_or(|t| t == state.tx_type)
        && filter
            .account_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&entry.account_id))
        && filter
            .sub_types
            .as_ref()
            .is_none_or(|s| s.contains(&sub_type))
        && filter
            .category_ids
            .as_ref()
            .is_none_or(|ids| state.category_id.is_some_and(|c| ids.contains(&c)))
        && filter
            .tag_ids
            .as_ref()
            .is_none_or(|ids| state.tag_ids.iter().any(|t| ids.contains(t)))
        && (!filter.no_category || state.category_id.is_none())
        && (!filter.no_tags || state.tag_ids.is_empty())
        && (!filter.is_recurring || entry.recurrence_id.is_some())
        && (!filter.is_installments || entry.installment.is_some())
        && filter.search.as_ref().is_none_or(|needle| {
            crate::transaction::search_text(&state.description, state.notes.as_deref(), None)
                .contains(needle.as_str())
        })
}

/// True when (date, id) comes after the cursor position in list order.
fn after(date: Date, id: &str, position: Option<&PagePosition>) -> bool {
    position.is_none_or(|p| date < p.date || (date == p.date && id > p.id.as_str()))
}

/// One sort key per entry: newest day first, ids ascending within a day.
fn order_key(entry: &Transaction) -> (std::cmp::Reverse<Date>, String) {
    (std::cmp::Reverse(entry.state.date), entry.id.to_string())
}

/// Up to `limit + 1` projected entries after the cursor, in list order.
pub fn projected_page(
    sources: &ViewSources,
    filter: &TransactionFilter,
    position: Option<&PagePosition>,
    limit: usize,
) -> Vec<Transaction> {
    let upper = position.map_or(filter.to, |p| p.date.min(filter.to));
    let mut found: Vec<((std::cmp::Reverse<Date>, String), Transaction)> = Vec::new();
    let mut take = |entry: Transaction, taken: &mut usize| {
        let Some(info) = sources.accounts.get(&entry.account_id) else {
            return;
        };
        let key = order_key(&entry);
        if after(entry.state.date, &key.1, position) && matches(filter, &entry, info.sub_type) {
            found.push((key, entry));
            *taken += 1;
        }
    };
    let wanted = limit + 1;
    for rule in &sources.rules {
        if filter
            .account_ids
            .as_ref()
            .is_some_and(|ids| !ids.contains(&rule.account_id))
        {
            continue;
        }
        let mut taken = 0;
        for (_, date) in rule.schedule.descending(filter.from, upper) {
            if taken >= wanted {
                break;
            }
            let handle = Handle::Recurrence {
                rule_id: rule.id,
                date,
            };
            if sources.live(&handle)
                && let Some(entry) = sources.rule_entry(rule, date)
            {
                take(entry, &mut taken);
            }
        }
    }
    for plan in sources.plans.iter().filter(|p| !p.hidden) {
        if filter
            .account_ids
            .as_ref()
            .is_some_and(|ids| !ids.contains(&plan.account_id))
        {
            continue;
        }
        let mut taken = 0;
        for (number, _) in plan.descending(filter.from, upper) {
            if taken >= wanted {
                break;
            }
            let handle = Handle::Installment {
                purchase_id: plan.id,
                number,
            };
            if sources.live(&handle)
                && let Some(entry) = sources.plan_entry(plan, number)
            {
                take(entry, &mut taken);
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.truncate(wanted);
    found.into_iter().map(|(_, e)| e).collect()
}

/// Merges a page of stored rows (up to `limit + 1`, in list order) with
/// projected entries (likewise) into one page.
pub fn merge(
    stored: Vec<Transaction>,
    projected: Vec<Transaction>,
    limit: usize,
) -> Page<Transaction> {
    let mut all: Vec<((std::cmp::Reverse<Date>, String), Transaction)> = stored
        .into_iter()
        .chain(projected)
        .map(|e| (order_key(&e), e))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let has_more = all.len() > limit;
    all.truncate(limit);
    Page {
        items: all.into_iter().map(|(_, e)| e).collect(),
        has_more,
    }
}
