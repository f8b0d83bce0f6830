//! The merged view: stored rows plus the projected entries of rules and
//! plans, in one order (newest day first, ids ascending within a day) and
//! one cursor. Projections are produced per source, newest first from the
//! cursor on, and each source stops after `limit + 1` matches, so a page
//! costs the same however long the history is.

use jiff::civil::Date;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use crate::account::SubType;
use crate::bills::{BillSums, Charge};
use crate::card::BillMonth;
use crate::projection::{Handle, InstallmentPlan, RecurrenceRule, Template};
use crate::text::sort_by_title;
use crate::transaction::{
    EntryId, InstallmentRef, Page, PagePosition, TagRef, Transaction, TransactionFilter, TxStatus,
    TxType,
};
use crate::{AccountId, CategoryId, Money, TagId};

#[derive(Clone, Debug)]
pub struct AccountInfo {
    pub currency: String,
    pub sub_type: SubType,
    /// Set for credit cards.
    pub card: Option<crate::bills::CardInfo>,
}

/// The hashing of [`ViewSources`]' tables: looked up for every entry a
/// page makes (whether its handle is stored or deleted, its account), so
/// a hash cheaper than the standard library's SipHash shows in every page
/// computed afresh. The keys are ids and days of the user's own data; the
/// hasher is still seeded afresh for each table.
pub type Hashing = foldhash::fast::RandomState;

/// What projections are made from, loaded by the store for one user.
#[derive(Clone, Debug, Default)]
pub struct ViewSources {
    pub rules: Vec<RecurrenceRule>,
    pub plans: Vec<InstallmentPlan>,
    /// Handles whose entry is replaced by a stored row.
    pub materialized: HashSet<Handle, Hashing>,
    pub tombstones: HashSet<Handle, Hashing>,
    pub accounts: HashMap<AccountId, AccountInfo, Hashing>,
    pub tags: HashMap<TagId, TagRef, Hashing>,
}

impl ViewSources {
    /// About how many bytes this holds in memory (a little over, never
    /// under, the heap it owns), so caches of it can be bounded in bytes.
    pub fn approx_bytes(&self) -> usize {
        use std::mem::size_of;
        // A hash table entry costs its slot plus a control byte; tables
        // keep some slots free.
        fn table<K, V>(len: usize) -> usize {
            len.saturating_mul(size_of::<(K, V)>() + 1)
                .saturating_mul(8)
                / 7
        }
        let rules: usize = self.rules.iter().map(|r| r.template.heap_bytes()).sum();
        let plans: usize = self.plans.iter().map(|p| p.template.heap_bytes()).sum();
        let accounts: usize = self
            .accounts
            .values()
            .map(|a| a.currency.capacity() + a.card.as_ref().map_or(0, |_| 64))
            .sum();
        let tags: usize = self
            .tags
            .values()
            .map(|t| t.title.capacity() + t.color_hex.capacity())
            .sum();
        size_of::<Self>()
            + self.rules.capacity() * size_of::<RecurrenceRule>()
            + rules
            + self.plans.capacity() * size_of::<InstallmentPlan>()
            + plans
            + table::<Handle, ()>(self.materialized.capacity())
            + table::<Handle, ()>(self.tombstones.capacity())
            + table::<AccountId, AccountInfo>(self.accounts.capacity())
            + accounts
            + table::<TagId, TagRef>(self.tags.capacity())
            + tags
    }

    /// Whether a projection is shown: not replaced by a stored row, not
    /// hidden by a tombstone.
    pub fn live(&self, handle: &Handle) -> bool {
        !self.materialized.contains(handle) && !self.tombstones.contains(handle)
    }

    fn tags_of(&self, ids: &[TagId]) -> Vec<TagRef> {
        let mut tags: Vec<TagRef> = ids
            .iter()
            .filter_map(|id| self.tags.get(id).cloned())
            .collect();
        sort_by_title(&mut tags, |t| (&t.title, t.id));
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
        let id = EntryId::Projected(handle);
        let currency = account.currency.clone();
        let mut entry = Transaction::plain(id, account_id, currency, state);
        entry.tags = tags;
        entry.recurrence_id = series.recurrence_id;
        entry.recurrence_period_date = series.recurrence_id.map(|_| date);
        entry.installment = series.installment;
        Some(entry)
    }

    pub fn rule_entry(&self, rule: &RecurrenceRule, date: Date) -> Option<Transaction> {
        let handle = Handle::Recurrence {
            rule_id: rule.id,
            date,
        };
        let series = SeriesFields {
            recurrence_id: Some(rule.id),
            installment: None,
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

/// True when `entry` comes after the cursor position in list order (its
/// id is printed only to break a tie of days).
fn after(entry: &Transaction, position: Option<&PagePosition>) -> bool {
    let date = entry.state.date;
    position.is_none_or(|p| date < p.date || (date == p.date && entry.id.to_string() > p.id))
}

/// The list's order of two entries: newest day first, then ids ascending
/// as their text orders them, compared without printing them. A stored
/// row's UUID orders by its bytes as its text does, and before every
/// `mocked-` handle (hex digits and hyphens sort before `m`); handles by
/// [`Handle::text_cmp`].
pub fn list_order(a: &Transaction, b: &Transaction) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    b.state
        .date
        .cmp(&a.state.date)
        .then_with(|| match (&a.id, &b.id) {
            (EntryId::Stored(x), EntryId::Stored(y)) => x.cmp(y),
            (EntryId::Stored(_), EntryId::Projected(_)) => Ordering::Less,
            (EntryId::Projected(_), EntryId::Stored(_)) => Ordering::Greater,
            (EntryId::Projected(x), EntryId::Projected(y)) => x.text_cmp(y),
        })
}

/// Up to `limit + 1` projected entries after the cursor, in list order.
pub fn projected_page(
    sources: &ViewSources,
    filter: &TransactionFilter,
    position: Option<&PagePosition>,
    limit: usize,
) -> Vec<Transaction> {
    projected_entries(sources, filter, position)
        .take(limit + 1)
        .collect()
}

/// A source of projected entries: a rule, or an installment plan.
#[derive(Clone, Copy)]
enum Maker<'a> {
    Rule(&'a RecurrenceRule),
    Plan(&'a InstallmentPlan),
}

/// An occurrence of a source: its day, its handle, and what makes its entry.
type Occurrence<'a> = (Date, Handle, Maker<'a>);

/// One source's occurrences in a window, newest first: each entry is made
/// only when the walk takes it.
type Occurrences<'a> = Box<dyn Iterator<Item = Occurrence<'a>> + Send + 'a>;

/// The projected entries the filter keeps after the cursor, in list order,
/// each made when it is asked for: the sources' occurrences are walked
/// together, newest day first, so a caller that stops early (a page that
/// fills with stored rows) made no entry it did not take, and each source
/// is walked no further than the entries taken.
pub fn projected_entries<'a>(
    sources: &'a ViewSources,
    filter: &'a TransactionFilter,
    position: Option<&'a PagePosition>,
) -> impl Iterator<Item = Transaction> + Send + 'a {
    let upper = crate::transaction::last_day(position, filter.to);
    let walks = occurrence_walks(sources, filter, upper);
    // Each walk under its next occurrence, the next in list order on top;
    // a spent walk leaves.
    let mut heads: BinaryHeap<Head<'a>> = walks
        .into_iter()
        .filter_map(|mut walk| walk.next().map(|next| Head { next, walk }))
        .collect();
    std::iter::from_fn(move || {
        loop {
            let mut head = heads.peek_mut()?;
            let (_, handle, maker) = head.next;
            match head.walk.next() {
                Some(next) => head.next = next,
                None => drop(PeekMut::pop(head)),
            }
            if let Some(entry) = kept_entry(sources, filter, position, &handle, maker) {
                return Some(entry);
            }
        }
    })
}

/// Each source's occurrences from `upper` back to the filter's start,
/// newest first: the rules and the plans not hidden, of the filter's
/// accounts.
fn occurrence_walks<'a>(
    sources: &'a ViewSources,
    filter: &'a TransactionFilter,
    upper: Date,
) -> Vec<Occurrences<'a>> {
    let from = filter.from;
    let wanted = |account: &AccountId| {
        filter
            .account_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(account))
    };
    let mut walks: Vec<Occurrences<'a>> = Vec::new();
    for rule in sources.rules.iter().filter(|r| wanted(&r.account_id)) {
        walks.push(Box::new(rule.schedule.descending(from, upper).map(
            move |(_, date)| {
                let handle = Handle::Recurrence {
                    rule_id: rule.id,
                    date,
                };
                (date, handle, Maker::Rule(rule))
            },
        )));
    }
    for plan in sources
        .plans
        .iter()
        .filter(|p| !p.hidden && wanted(&p.account_id))
    {
        walks.push(Box::new(plan.descending(from, upper).map(
            move |(number, date)| {
                let handle = Handle::Installment {
                    purchase_id: plan.id,
                    number,
                };
                (date, handle, Maker::Plan(plan))
            },
        )));
    }
    walks
}

/// A walk of a source and its next occurrence, ordered so that the one
/// whose occurrence comes first in list order (the newest day, then the
/// handle first as text) is the greatest.
struct Head<'a> {
    next: Occurrence<'a>,
    walk: Occurrences<'a>,
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (&self.next, &other.next);
        a.0.cmp(&b.0).then_with(|| b.1.text_cmp(&a.1))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Head<'_> {}

/// The entry of a live `handle`, when the filter keeps it and it comes
/// after the cursor.
fn kept_entry(
    sources: &ViewSources,
    filter: &TransactionFilter,
    position: Option<&PagePosition>,
    handle: &Handle,
    maker: Maker<'_>,
) -> Option<Transaction> {
    if !sources.live(handle) {
        return None;
    }
    let entry = match (maker, *handle) {
        (Maker::Rule(rule), Handle::Recurrence { date, .. }) => sources.rule_entry(rule, date)?,
        (Maker::Plan(plan), Handle::Installment { number, .. }) => {
            sources.plan_entry(plan, number)?
        }
        _ => return None,
    };
    let info = sources.accounts.get(&entry.account_id)?;
    if filter.cashflow && info.card.is_some() {
        return None;
    }
    (matches(filter, &entry, info.sub_type) && after(&entry, position)).then_some(entry)
}

/// Hands every projected entry the filter keeps in its window to `each`,
/// in no order, one at a time (nothing is collected, so a long window
/// costs time, not memory); false, after at most `limit + 1` entries, when
/// the window holds more than `limit` (the caller refuses it rather than
/// sum part of it).
pub fn each_projected(
    sources: &ViewSources,
    filter: &TransactionFilter,
    limit: usize,
    mut each: impl FnMut(&Transaction),
) -> bool {
    let mut seen = 0_usize;
    for walk in occurrence_walks(sources, filter, filter.to) {
        // A source with more than `limit` entries already refuses the window.
        let mut taken = 0_usize;
        for (_, handle, maker) in walk {
            if taken > limit {
                break;
            }
            if let Some(entry) = kept_entry(sources, filter, None, &handle, maker) {
                taken += 1;
                seen += 1;
                if seen <= limit {
                    each(&entry);
                }
            }
        }
    }
    seen <= limit
}

/// Most projected entries one figure sums: a window holding more is
/// refused (narrow it) rather than summed in part.
pub const MAX_PROJECTED: usize = 200_000;

/// Projected entries of one account, month, category, type and status,
/// summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectedTotal {
    pub account_id: AccountId,
    pub month: BillMonth,
    pub category_id: Option<CategoryId>,
    pub tx_type: TxType,
    pub status: TxStatus,
    pub amount: Money,
}

/// Every projected entry of a whole window (no other filter) summed per
/// account, month, category, type and status: what budgets and reports
/// add to the stored totals. A pure function of the sources, so it can be
/// kept beside them; `None` when the window holds more than
/// [`MAX_PROJECTED`] entries.
pub fn projected_totals(
    sources: &ViewSources,
    from: Date,
    to: Date,
) -> Option<Vec<ProjectedTotal>> {
    type Key = (AccountId, BillMonth, Option<CategoryId>, TxType, TxStatus);
    let mut sums: HashMap<Key, Money> = HashMap::new();
    let whole = TransactionFilter::window(from, to);
    let complete = each_projected(sources, &whole, MAX_PROJECTED, |entry| {
        let s = &entry.state;
        let key = (
            entry.account_id,
            BillMonth::of(s.date),
            s.category_id,
            s.tx_type,
            s.status,
        );
        let slot = sums.entry(key).or_default();
        *slot = slot.saturating_add(s.amount);
    });
    complete.then(|| {
        sums.into_iter()
            .map(
                |((account_id, month, category_id, tx_type, status), amount)| ProjectedTotal {
                    account_id,
                    month,
                    category_id,
                    tx_type,
                    status,
                    amount,
                },
            )
            .collect()
    })
}

/// The projected entries on each of the user's cards (sorted by card),
/// summed per bill under the card's cycles: installments dated in `[from,
/// to]`, rule occurrences in `[from, rules_to]`, where `rules_to` is `to`,
/// or with `whole = Some(today)` the close of the card's open bill (a bill
/// needs the occurrences of its own cycle; only installments count beyond
/// the open bill). A pure function of the sources, so it can be kept
/// beside them, and every book made from it shares its sums.
pub fn card_charges(
    sources: &ViewSources,
    from: Date,
    to: Date,
    whole: Option<Date>,
) -> Vec<(AccountId, Arc<BillSums>)> {
    let mut cards: Vec<(AccountId, Arc<BillSums>)> = sources
        .accounts
        .iter()
        .filter_map(|(id, info)| {
            let cycles = info.card.as_ref()?.cycles;
            let rules_to = whole.map_or(to, |today| cycles.cycle_of(today).close);
            let charges = charges_on(sources, *id, from, to, rules_to);
            Some((*id, Arc::new(BillSums::of_charges(cycles, &charges))))
        })
        .collect();
    cards.sort_unstable_by_key(|(id, _)| *id);
    cards
}

fn charges_on(
    sources: &ViewSources,
    card: AccountId,
    from: Date,
    to: Date,
    rules_to: Date,
) -> Vec<Charge> {
    let mut out = Vec::new();
    for rule in sources.rules.iter().filter(|r| r.account_id == card) {
        for (_, date) in rule.schedule.descending(from, rules_to.min(to)) {
            let handle = Handle::Recurrence {
                rule_id: rule.id,
                date,
            };
            if sources.live(&handle) {
                out.push(Charge {
                    date,
                    tx_type: rule.template.tx_type,
                    installment: false,
                    amount: rule.template.amount,
                });
            }
        }
    }
    for plan in sources
        .plans
        .iter()
        .filter(|p| p.account_id == card && !p.hidden)
    {
        for (number, date) in plan.descending(from, to) {
            let handle = Handle::Installment {
                purchase_id: plan.id,
                number,
            };
            if sources.live(&handle) {
                out.push(Charge {
                    date,
                    tx_type: plan.template.tx_type,
                    installment: true,
                    amount: plan.amount_of(number),
                });
            }
        }
    }
    out
}

/// The bill entries of the cashflow view that a page may show: those the
/// filter keeps, after the cursor, in list order.
pub fn bills_page(
    sources: &ViewSources,
    filter: &TransactionFilter,
    position: Option<&PagePosition>,
    bills: Vec<Transaction>,
) -> Vec<Transaction> {
    let mut found: Vec<Transaction> = bills
        .into_iter()
        .filter(|entry| {
            let handle = match entry.id {
                EntryId::Projected(handle) => handle,
                EntryId::Stored(_) => return false,
            };
            !sources.tombstones.contains(&handle)
                && entry.state.date >= filter.from
                && entry.state.date <= filter.to
                && after(entry, position)
                && sources
                    .accounts
                    .get(&entry.account_id)
                    .is_some_and(|info| matches(filter, entry, info.sub_type))
        })
        .collect();
    found.sort_by(list_order);
    found
}

/// Merges a page of stored rows (up to `limit + 1`, in list order) with
/// projected entries (likewise) into one page: the first `limit` of both in
/// list order; on a tie (never between a stored row and another) the
/// stored row first. Each entry is moved once, straight into the page
/// (stored rows a run at a time, in the slice each run is found in), and
/// those past the page not at all: an entry is hundreds of bytes, and
/// handing each through a peeking iterator copied it four times.
pub fn merge(
    stored: Vec<Transaction>,
    projected: Vec<Transaction>,
    limit: usize,
) -> Page<Transaction> {
    let has_more = stored.len() + projected.len() > limit;
    let size = (stored.len() + projected.len()).min(limit);
    let mut items = Vec::with_capacity(size);
    let mut stored = stored.into_iter();
    let mut projected = projected.into_iter();
    while items.len() < size {
        // The stored rows that come before the next projected entry.
        let rows = stored.as_slice();
        let run = match projected.as_slice().first() {
            Some(next) => rows
                .iter()
                .take_while(|row| list_order(row, next).is_le())
                .count(),
            None => rows.len(),
        };
        items.extend(stored.by_ref().take(run.min(size - items.len())));
        if items.len() < size {
            items.extend(projected.next());
        }
    }
    Page { items, has_more }
}

/// Two runs of entries, each in list order, as one in list order; on a
/// tie (never between a stored row and another) `a` comes first.
pub fn in_list_order<A, B>(a: A, b: B) -> impl Iterator<Item = Transaction> + Send
where
    A: Iterator<Item = Transaction> + Send,
    B: Iterator<Item = Transaction> + Send,
{
    let mut a = a.peekable();
    let mut b = b.peekable();
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if list_order(x, y).is_gt() => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::{Frequency, Schedule};
    use crate::transaction::TxType;
    use crate::{PurchaseId, RuleId, TransactionId, UserId};
    use jiff::Timestamp;
    use jiff::civil::date;

    fn template() -> Template {
        Template {
            tx_type: TxType::Debit,
            amount: Money::from_cents(5_000),
            description: "Academia".into(),
            notes: None,
            category_id: None,
            tag_ids: Vec::new(),
        }
    }

    fn filter() -> TransactionFilter {
        TransactionFilter::window(date(2026, 1, 1), date(2026, 12, 31))
    }

    /// A weekly rule, a 12x purchase, and stored rows that replace some of
    /// their entries or stand alone on the same days.
    fn fixture() -> (ViewSources, Vec<Transaction>) {
        let account = AccountId::new();
        let rule = RecurrenceRule {
            id: RuleId::new(),
            user_id: UserId::new(),
            account_id: account,
            template: template(),
            schedule: Schedule {
                frequency: Frequency::Weekly,
                interval: 1,
                start: date(2026, 1, 5),
                end_date: None,
                count: None,
            },
            created_at: Timestamp::UNIX_EPOCH,
        };
        let plan = InstallmentPlan {
            id: PurchaseId::new(),
            user_id: UserId::new(),
            account_id: account,
            template: template(),
            count: 12,
            first_date: date(2026, 1, 5),
            hidden: false,
            created_at: Timestamp::UNIX_EPOCH,
        };
        let mut sources = ViewSources::default();
        sources.accounts.insert(
            account,
            AccountInfo {
                currency: "BRL".into(),
                sub_type: SubType::CheckingAccount,
                card: None,
            },
        );
        // Materialised: the rule's 2026-03-02 occurrence and installment 4.
        let replaced = Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 3, 2),
        };
        sources.materialized.insert(replaced);
        sources.materialized.insert(Handle::Installment {
            purchase_id: plan.id,
            number: 4,
        });
        sources.tombstones.insert(Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 3, 9),
        });
        let mut stored = Vec::new();
        for (i, day) in [
            date(2026, 3, 2),
            date(2026, 4, 5),
            date(2026, 4, 5),
            date(2026, 1, 5),
            date(2026, 6, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let mut entry = sources.rule_entry(&rule, date(2026, 1, 5)).expect("entry");
            entry.id = EntryId::Stored(TransactionId::new());
            entry.state.date = day;
            entry.state.status = if i % 2 == 0 {
                TxStatus::Posted
            } else {
                TxStatus::Pending
            };
            entry.recurrence_id = None;
            stored.push(entry);
        }
        sources.rules.push(rule);
        sources.plans.push(plan);
        stored.sort_by(list_order);
        (sources, stored)
    }

    #[test]
    fn plans_before_across_and_after_a_window_give_exactly_its_installments() {
        let (mut sources, _) = fixture();
        sources.rules.clear();
        let template_plan = sources.plans[0].clone();
        sources.plans.clear();
        // Firsts from well before the window to after it, short and long.
        for (first, count) in [
            (date(2024, 1, 31), 3),
            (date(2025, 12, 31), 2),
            (date(2025, 12, 31), 3),
            (date(2026, 2, 28), 1),
            (date(2025, 6, 15), 24),
            (date(2026, 3, 31), 2),
            (date(2026, 4, 1), 5),
            (date(9999, 11, 30), 5),
        ] {
            sources.plans.push(InstallmentPlan {
                id: PurchaseId::new(),
                count,
                first_date: first,
                ..template_plan.clone()
            });
        }
        for (from, to) in [
            (date(2026, 2, 1), date(2026, 3, 31)),
            (date(2026, 1, 1), date(2026, 1, 31)),
            (date(2026, 3, 31), date(2026, 3, 31)),
            (date(2026, 2, 28), date(2026, 3, 5)),
            (date(2026, 4, 1), date(2026, 4, 1)),
            (date(2020, 1, 1), date(9999, 12, 31)),
        ] {
            let filter = TransactionFilter::window(from, to);
            let materialized = &sources.materialized;
            let mut expected: Vec<String> = sources
                .plans
                .iter()
                .flat_map(|plan| {
                    (1..=plan.count).filter_map(move |n| {
                        let day = plan.date_of(n)?;
                        let handle = Handle::Installment {
                            purchase_id: plan.id,
                            number: n,
                        };
                        let stored = materialized.contains(&handle);
                        (from <= day && day <= to && !stored).then(|| handle.to_string())
                    })
                })
                .collect();
            expected.sort();
            let mut got: Vec<String> = projected_entries(&sources, &filter, None)
                .map(|e| e.id.to_string())
                .collect();
            got.sort();
            assert_eq!(got, expected, "{from}..{to}");
        }
    }

    #[test]
    fn list_order_is_newest_day_then_id_text() {
        let (_, stored) = fixture();
        let base = stored[0].clone();
        let days = [date(2026, 3, 1), date(2026, 3, 2)];
        let mut entries = Vec::new();
        for i in 0..400u16 {
            let mut entry = base.clone();
            entry.state.date = days[usize::from(i % 2)];
            entry.id = match i % 5 {
                0 => EntryId::Stored(TransactionId::new()),
                1 => EntryId::Stored(TransactionId(uuid::Uuid::new_v4())),
                2 => EntryId::Projected(Handle::Recurrence {
                    rule_id: RuleId::new(),
                    date: entry.state.date,
                }),
                3 => EntryId::Projected(Handle::Installment {
                    purchase_id: PurchaseId::new(),
                    number: i,
                }),
                _ => EntryId::Projected(Handle::Bill {
                    card_id: AccountId::new(),
                    year: 2026,
                    month: 3,
                }),
            };
            entries.push(entry);
        }
        let mut by_text = entries.clone();
        by_text.sort_by_key(|e| (std::cmp::Reverse(e.state.date), e.id.to_string()));
        entries.sort_by(list_order);
        let ids = |list: &[Transaction]| list.iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids(&entries), ids(&by_text));
    }

    #[test]
    fn merge_is_the_first_entries_of_both_runs_in_list_order() {
        let (sources, stored) = fixture();
        let projected = projected_page(&sources, &filter(), None, 10_000);
        for limit in [
            0,
            1,
            7,
            50,
            stored.len(),
            stored.len() + projected.len() + 3,
        ] {
            let mut expected = stored.clone();
            expected.extend(projected.iter().cloned());
            expected.sort_by(list_order);
            let merged = merge(stored.clone(), projected.clone(), limit);
            let ids = |list: &[Transaction]| list.iter().map(|e| e.id).collect::<Vec<_>>();
            assert_eq!(
                ids(&merged.items),
                ids(&expected[..limit.min(expected.len())])
            );
            assert_eq!(merged.has_more, expected.len() > limit, "limit {limit}");
        }
    }

    /// A store's answer: stored rows after the cursor, up to `limit + 1`.
    fn stored_page(
        stored: &[Transaction],
        position: Option<&PagePosition>,
        limit: usize,
    ) -> Page<Transaction> {
        let mut items: Vec<Transaction> = stored
            .iter()
            .filter(|e| after(e, position))
            .take(limit + 1)
            .cloned()
            .collect();
        let has_more = items.len() > limit;
        items.truncate(limit);
        Page { items, has_more }
    }

    fn all_pages(
        sources: &ViewSources,
        stored: &[Transaction],
        filter: &TransactionFilter,
        limit: usize,
    ) -> Vec<String> {
        let mut ids = Vec::new();
        let mut position: Option<PagePosition> = None;
        loop {
            let rows = stored_page(stored, position.as_ref(), limit);
            let projected = projected_page(sources, filter, position.as_ref(), limit);
            let mut page = merge(rows.items, projected, limit);
            page.has_more |= rows.has_more;
            ids.extend(page.items.iter().map(|e| e.id.to_string()));
            let Some(last) = page.items.last() else { break };
            if !page.has_more {
                break;
            }
            position = Some(PagePosition {
                date: last.state.date,
                id: last.id.to_string(),
            });
        }
        ids
    }

    #[test]
    fn projected_entries_come_in_list_order_each_once() {
        let (sources, _) = fixture();
        let ids = |entries: &[Transaction]| -> Vec<String> {
            entries.iter().map(|e| e.id.to_string()).collect()
        };
        let made: Vec<Transaction> = projected_entries(&sources, &filter(), None).collect();
        assert!(made.windows(2).all(|w| list_order(&w[0], &w[1]).is_lt()));
        let mut every = Vec::new();
        assert!(each_projected(&sources, &filter(), MAX_PROJECTED, |e| {
            every.push(e.clone());
        }));
        every.sort_by(list_order);
        assert_eq!(ids(&made), ids(&every));
        // After a cursor on a day the rule and the purchase share (the
        // first of its two entries): the rest, in order.
        let shared = made
            .iter()
            .position(|e| e.state.date == date(2026, 1, 5))
            .expect("the shared day");
        assert_eq!(made[shared + 1].state.date, date(2026, 1, 5));
        let position = PagePosition {
            date: made[shared].state.date,
            id: made[shared].id.to_string(),
        };
        let rest: Vec<Transaction> =
            projected_entries(&sources, &filter(), Some(&position)).collect();
        assert_eq!(ids(&rest), ids(&made[shared + 1..]));
    }

    #[test]
    fn replaced_and_deleted_entries_are_not_projected() {
        let (sources, _) = fixture();
        let all = projected_page(&sources, &filter(), None, 10_000);
        let ids: Vec<String> = all.iter().map(|e| e.id.to_string()).collect();
        for gone in sources.materialized.iter().chain(&sources.tombstones) {
            assert!(!ids.contains(&gone.to_string()), "{gone} still projected");
        }
        // 52 Mondays in 2026 minus one replaced and one deleted; 12 installments minus one.
        assert_eq!(all.iter().filter(|e| e.recurrence_id.is_some()).count(), 50);
        assert_eq!(all.iter().filter(|e| e.installment.is_some()).count(), 11);
        assert!(all.iter().all(|e| e.state.status == TxStatus::Pending));
    }

    #[test]
    fn sums_see_every_projected_entry_once_or_refuse_the_window() {
        let (sources, _) = fixture();
        let page = projected_page(&sources, &filter(), None, 10_000);
        let mut seen = Vec::new();
        assert!(each_projected(&sources, &filter(), 61, |e| seen.push(e.id.to_string())));
        seen.sort();
        let mut listed: Vec<String> = page.iter().map(|e| e.id.to_string()).collect();
        listed.sort();
        assert_eq!(seen, listed);
        // One entry more than the limit: refused, and no more than the
        // limit handed over.
        let mut count = 0;
        assert!(!each_projected(&sources, &filter(), 60, |_| count += 1));
        assert!(count <= 60);
    }

    #[test]
    fn projected_totals_sum_each_entry_of_the_window_once() {
        let (sources, _) = fixture();
        let window = filter();
        let totals = projected_totals(&sources, window.from, window.to).unwrap();
        type Key = (AccountId, BillMonth, Option<CategoryId>, TxType, TxStatus);
        let mut expected: HashMap<Key, i64> = HashMap::new();
        assert!(each_projected(&sources, &window, MAX_PROJECTED, |e| {
            let s = &e.state;
            let key = (
                e.account_id,
                BillMonth::of(s.date),
                s.category_id,
                s.tx_type,
                s.status,
            );
            *expected.entry(key).or_default() += e.state.amount.cents();
        }));
        let got: HashMap<_, i64> = totals
            .iter()
            .map(|t| {
                let key = (t.account_id, t.month, t.category_id, t.tx_type, t.status);
                (key, t.amount.cents())
            })
            .collect();
        assert_eq!(got.len(), totals.len(), "one total per key");
        assert_eq!(got, expected);
        assert!(totals.iter().map(|t| t.amount.cents()).sum::<i64>() > 0);
    }

    #[test]
    fn every_page_size_gives_the_same_list_with_no_entry_twice() {
        let (sources, stored) = fixture();
        let full = all_pages(&sources, &stored, &filter(), 10_000);
        assert_eq!(full.len(), 50 + 11 + stored.len());
        let unique: HashSet<&String> = full.iter().collect();
        assert_eq!(unique.len(), full.len(), "an entry appears twice");
        for limit in [1, 2, 3, 7, 50] {
            assert_eq!(
                all_pages(&sources, &stored, &filter(), limit),
                full,
                "limit {limit}"
            );
        }
    }

    #[test]
    fn filters_apply_to_projections() {
        let (sources, _) = fixture();
        let posted = TransactionFilter {
            status: Some(TxStatus::Posted),
            ..filter()
        };
        assert!(projected_page(&sources, &posted, None, 100).is_empty());
        let hidden = TransactionFilter {
            hidden: true,
            ..filter()
        };
        assert!(projected_page(&sources, &hidden, None, 100).is_empty());
        let installments = TransactionFilter {
            is_installments: true,
            ..filter()
        };
        assert_eq!(projected_page(&sources, &installments, None, 100).len(), 11);
        let other_account = TransactionFilter {
            account_ids: Some(vec![AccountId::new()]),
            ..filter()
        };
        assert!(projected_page(&sources, &other_account, None, 100).is_empty());
        let search = TransactionFilter {
            search: Some("academia".into()),
            ..filter()
        };
        assert_eq!(projected_page(&sources, &search, None, 1).len(), 2);
    }

    #[test]
    fn a_handle_resolves_only_while_produced() {
        let (sources, _) = fixture();
        let rule = &sources.rules[0];
        let live = Handle::Recurrence {
            rule_id: rule.id,
            date: date(2026, 3, 16),
        };
        assert_eq!(
            sources.resolve(&live).map(|e| e.id),
            Some(EntryId::Projected(live))
        );
        for gone in [
            Handle::Recurrence {
                rule_id: rule.id,
                date: date(2026, 3, 2),
            },
            Handle::Recurrence {
                rule_id: rule.id,
                date: date(2026, 3, 9),
            },
            Handle::Recurrence {
                rule_id: rule.id,
                date: date(2026, 3, 10),
            },
            Handle::Installment {
                purchase_id: sources.plans[0].id,
                number: 13,
            },
        ] {
            assert_eq!(sources.resolve(&gone), None, "{gone}");
        }
    }
}
