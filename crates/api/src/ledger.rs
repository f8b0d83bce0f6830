//! The merged view as the API serves it: a page of stored rows from the
//! store, the projections of the same window from the pure view module,
//! merged into one page; and projected entries resolved by handle.

use jiff::Span;
use jiff::civil::Date;

use cofre_domain::UserId;
use cofre_domain::projection::Handle;
use cofre_domain::time::MAX_DATE;
use cofre_domain::transaction::{Page, PageRequest, Transaction, TransactionFilter, last_day};
use cofre_domain::view::{bills_page, merge, projected_page};
use cofre_store::{Store, StoreError, StoreResult};

use crate::cards;

/// One page of the merged view. In the cashflow view, card bills with
/// something left to pay stand in for the cards' rows; `today` decides
/// what a bill still owes.
pub async fn page(
    store: &dyn Store,
    user: UserId,
    filter: &TransactionFilter,
    request: &PageRequest,
    today: Date,
) -> StoreResult<Page<Transaction>> {
    let stored = store.list_transactions(user, filter, request).await?;
    // Projections after the cursor lie on or before its day.
    let upper = last_day(request.after.as_ref(), filter.to);
    if upper < filter.from {
        return Ok(stored);
    }
    // Sources of the whole window, so every page of a list shares them.
    let sources = store.view_sources(user, filter.from, filter.to).await?;
    // With a full page of stored rows, a projection dated before the last
    // of them cannot make the page: look no further back than that day.
    let lower = match stored.items.last() {
        Some(last) if stored.items.len() == request.limit => last.state.date.max(filter.from),
        _ => filter.from,
    };
    let projected = if lower == filter.from {
        projected_page(&sources, filter, request.after.as_ref(), request.limit)
    } else {
        let narrowed = TransactionFilter {
            from: lower,
            ..filter.clone()
        };
        projected_page(&sources, &narrowed, request.after.as_ref(), request.limit)
    };
    let mut merged = merge(stored.items, projected, request.limit);
    merged.has_more |= stored.has_more;
    if filter.cashflow && sources.accounts.values().any(|a| a.card.is_some()) {
        // The whole window, not just up to the cursor: every page then
        // shares one set of (cached) books; the cursor applies below.
        let bills = cards::cashflow_bills(store, user, filter.from, filter.to, today).await?;
        let bills = bills_page(&sources, filter, request.after.as_ref(), bills);
        if !bills.is_empty() {
            let more = merged.has_more;
            merged = merge(merged.items, bills, request.limit);
            merged.has_more |= more;
        }
    }
    if !merged.has_more
        && lower > filter.from
        && let Ok(before) = lower.yesterday()
    {
        // Projections before the narrowed window come on later pages.
        let older = TransactionFilter {
            to: before,
            ..filter.clone()
        };
        merged.has_more = !projected_page(&sources, &older, request.after.as_ref(), 0).is_empty();
    }
    Ok(merged)
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
