//! The merged view as the API serves it: a page of stored rows from the
//! store, the projections of the same window from the pure view module,
//! merged into one page; and projected entries resolved by handle.

use std::sync::Arc;

use jiff::Span;
use jiff::civil::Date;

use cofre_domain::UserId;
use cofre_domain::projection::Handle;
use cofre_domain::time::MAX_DATE;
use cofre_domain::transaction::{Page, PageRequest, Transaction, TransactionFilter, last_day};
use cofre_domain::view::{bills_page, in_list_order, merge, projected_entries};
use cofre_store::{Store, StoreError, StoreResult};

use crate::cards;

/// How many times a page is made again when the projection sources
/// changed while it was read; the last try is served as it is.
const TRIES: usize = 3;

/// One page of the merged view. In the cashflow view, card bills with
/// something left to pay stand in for the cards' rows; `today` decides
/// what a bill still owes.
///
/// The entries from elsewhere (projections, bills) are made in memory,
/// one at a time in list order, as the store reads the stored rows: it
/// reads only the rows that make the page
/// ([`PageCut`](cofre_domain::transaction::PageCut)), and only the
/// entries the page can show are made. A write between reading the
/// sources and the rows could show a projection beside the row that
/// replaced it, so the page is made again when the sources changed
/// meanwhile.
pub async fn page(
    store: &dyn Store,
    user: UserId,
    filter: &TransactionFilter,
    request: &PageRequest,
    today: Date,
) -> StoreResult<Page<Transaction>> {
    // Projections after the cursor lie on or before its day.
    let upper = last_day(request.after.as_ref(), filter.to);
    if upper < filter.from {
        return store.list_transactions(user, filter, request).await;
    }
    let after = request.after.as_ref();
    let mut tries = 1;
    loop {
        // Sources of the whole window, so every page of a list shares them.
        let sources = store.view_sources(user, filter.from, filter.to).await?;
        let mut bills = Vec::new();
        if filter.cashflow && sources.accounts.values().any(|a| a.card.is_some()) {
            // The whole window, not just up to the cursor: every page then
            // shares one set of (cached) books; the cursor applies below.
            let books = cards::cashflow_bills(store, user, filter.from, filter.to, today).await?;
            bills = bills_page(&sources, filter, after, books);
        }
        let mut others = Drawn::new(in_list_order(
            projected_entries(&sources, filter, after),
            bills.into_iter(),
        ));
        let stored = store
            .list_transactions_beside(user, filter, request, &mut others)
            .await?;
        if tries < TRIES {
            let now = store.view_sources(user, filter.from, filter.to).await?;
            if !Arc::ptr_eq(&now, &sources) {
                tries += 1;
                continue;
            }
        }
        // Enough others to fill the page and tell whether it has more.
        while stored.items.len() + others.drawn.len() <= request.limit && others.next().is_some() {}
        let mut merged = merge(stored.items, others.drawn, request.limit);
        merged.has_more |= stored.has_more;
        return Ok(merged);
    }
}

/// Entries handed over by day, each kept as it is drawn.
struct Drawn<I> {
    entries: I,
    drawn: Vec<Transaction>,
}

impl<I> Drawn<I> {
    fn new(entries: I) -> Self {
        Self {
            entries,
            drawn: Vec::new(),
        }
    }
}

impl<I: Iterator<Item = Transaction>> Iterator for Drawn<I> {
    type Item = Date;

    fn next(&mut self) -> Option<Date> {
        let entry = self.entries.next()?;
        let date = entry.state.date;
        self.drawn.push(entry);
        Some(date)
    }
}

/// The projected entry a handle names, if the rules produce it now.
pub async fn resolve(
    store: &dyn Store,
    user: UserId,
    handle: &Handle,
) -> StoreResult<Option<Transaction>> {
    let date = match *handle {
        Handle::Recurrence { date, .. } => date,
        Handle::Installment {
            purchase_id,
            number,
        } => match store.get_plan(user, purchase_id).await {
            Ok(plan) => match plan.date_of(number) {
                Some(date) => date,
                None => return Ok(None),
            },
            Err(StoreError::NotFound) => return Ok(None),
            Err(err) => return Err(err),
        },
        Handle::Bill { .. } => return Ok(None),
    };
    let sources = store.view_sources(user, date, date).await?;
    Ok(sources.resolve(handle))
}

/// The first entry of a rule on or after `date` (a projection, or nothing
/// when the rule has ended).
pub async fn next_occurrence(
    store: &dyn Store,
    user: UserId,
    rule: &cofre_domain::projection::RecurrenceRule,
    date: jiff::civil::Date,
) -> StoreResult<Option<Transaction>> {
    let Some((_, first)) = rule.schedule.first_on_or_after(date) else {
        return Ok(None);
    };
    // A year ahead bounds the search; a rule whose next year is all
    // deleted or stored has no next occurrence to show.
    let until = first
        .checked_add(Span::new().days(365))
        .map_or(MAX_DATE, |until| until.min(MAX_DATE));
    let sources = store.view_sources(user, first, until).await?;
    Ok(rule.schedule.ascending(first, until).find_map(|(_, day)| {
        sources.resolve(&Handle::Recurrence {
            rule_id: rule.id,
            date: day,
        })
    }))
}
