//! Card bills as the API computes them: each card's stored money (summed
//! per day by the store, each card kept until a write changes it) plus the
//! projected entries on the card, bucketed into bills by the pure
//! [`cofre_domain::bills`] module.

use jiff::ToSpan;
use jiff::civil::{Date, date};
use std::sync::Arc;

use cofre_domain::bills::{Bill, BillSums, CardBook, CardInfo, bill_entry};
use cofre_domain::card::BillMonth;
use cofre_domain::time::{MAX_DATE, MIN_DATE};
use cofre_domain::transaction::Transaction;
use cofre_domain::{AccountId, UserId};
use cofre_store::{CardMoney, Store, StoreResult};

/// How far back a card's whole book looks for projected entries (rules on
/// a card that were never stored), and how far ahead (the longest plan is
/// 420 months).
const BOOK_START: Date = date(2000, 1, 1);
const BOOK_YEARS_AHEAD: i64 = 36;

/// A card with its book.
pub struct CardBooks {
    pub cards: Vec<(AccountId, CardInfo, String, CardBook)>,
}

impl CardBooks {
    pub fn get(&self, id: AccountId) -> Option<(&CardInfo, &str, &CardBook)> {
        self.cards
            .iter()
            .find(|(card, ..)| *card == id)
            .map(|(_, info, currency, book)| (info, currency.as_str(), book))
    }
}

/// The window of projections a card's whole history and future need.
pub fn whole_range(today: Date) -> (Date, Date) {
    // Near the end of the calendar the future is shorter.
    let end = today
        .checked_add(BOOK_YEARS_AHEAD.years())
        .map_or(MAX_DATE, |end| end.min(MAX_DATE));
    (BOOK_START.min(today), end)
}

/// The books of the user's cards (`only`: just these), with projected
/// entries dated in `[from, to]` (rule occurrences only up to each card's
/// open bill when `whole`; kept by the store until the projection sources
/// change, [`cofre_domain::view::card_charges`]): bills of cycles inside
/// that range are exact. The stored money and the payments are always
/// whole (their sums are kept with the card's money).
pub async fn books(
    store: &dyn Store,
    user: UserId,
    (from, to): (Date, Date),
    only: Option<AccountId>,
    whole: Option<Date>,
) -> StoreResult<CardBooks> {
    let sources = store.view_sources(user, from, to).await?;
    let wanted: Vec<(AccountId, CardInfo, String)> = sources
        .accounts
        .iter()
        .filter(|(id, _)| only.is_none_or(|o| o == **id))
        .filter_map(|(id, info)| {
            info.card
                .clone()
                .map(|card| (*id, card, info.currency.clone()))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(CardBooks { cards: Vec::new() });
    }
    let money = store.card_money(user).await?;
    let charges = store.card_charges(user, from, to, whole).await?;
    let empty = Arc::new(CardMoney::default());
    let mut cards: Vec<(AccountId, CardInfo, String, CardBook)> = wanted
        .into_iter()
        .map(|(id, info, currency)| {
            let stored = money.get(&id).unwrap_or(&empty);
            // Both sums of a book are of one set of cycles: the projected
            // entries' were summed under the card's cycles as the sources
            // they come from knew them.
            let projected = charges
                .binary_search_by_key(&id, |(card, _)| *card)
                .map_or_else(
                    |_| Arc::new(BillSums::empty(info.cycles)),
                    |at| charges[at].1.clone(),
                );
            // The card's stored sums of its whole history, built once and
            // brought up to date by each change of its money, serve every
            // window: a bill of a cycle inside it is exact either way.
            let sums = stored.stored_sums(*projected.cycles());
            let book = CardBook::of_parts(sums, projected, stored.bill_payments());
            (id, info, currency, book)
        })
        .collect();
    cards.sort_by_key(|(id, ..)| *id);
    Ok(CardBooks { cards })
}

/// The projection range that makes the bills due in `[from, to]` exact:
/// from the start of the first cycle to the close of the last.
pub fn bills_range(info: &CardInfo, from: Date, to: Date) -> (Date, Date) {
    let due = info.cycles.due_between(from, to);
    let start = due.first().map_or(from, |c| c.start.min(from));
    let end = due.last().map_or(to, |c| c.close.max(to));
    (start, end)
}

/// Cashflow entries of the bills due in `[from, to]` that have something
/// left to pay, for every card.
pub async fn cashflow_bills(
    store: &dyn Store,
    user: UserId,
    from: Date,
    to: Date,
    today: Date,
) -> StoreResult<Vec<Transaction>> {
    // A cycle starts at most two months before its due date, and never
    // before the calendar does.
    let start = from
        .checked_sub(70.days())
        .map_or(MIN_DATE, |start| start.max(MIN_DATE));
    let books = books(store, user, (start, to), None, None).await?;
    let mut entries = Vec::new();
    for (id, info, currency, book) in &books.cards {
        for bill in book.due_between(from, to, today) {
            if bill.outstanding.is_positive() {
                entries.push(bill_entry(*id, info, currency, &bill));
            }
        }
    }
    Ok(entries)
}

/// The card settings of one of the user's cards; none for a bank account
/// or an account that is not theirs. Read from the (cached) view sources
/// of `day`, which carry every account.
pub async fn card_of(
    store: &dyn Store,
    user: UserId,
    card: AccountId,
    day: Date,
) -> StoreResult<Option<CardInfo>> {
    let sources = store.view_sources(user, day, day).await?;
    Ok(sources.accounts.get(&card).and_then(|a| a.card.clone()))
}

/// The bill of `card` due in `month`, computed over exactly its cycle.
pub async fn bill(
    store: &dyn Store,
    user: UserId,
    card: AccountId,
    month: BillMonth,
    today: Date,
) -> StoreResult<Option<(CardInfo, String, Bill)>> {
    let Some(info) = card_of(store, user, card, today).await? else {
        return Ok(None);
    };
    // A month whose cycle lies before the calendar has no bill.
    let Some(cycle) = info.cycles.cycle(month) else {
        return Ok(None);
    };
    let books = books(store, user, (cycle.start, cycle.close), Some(card), None).await?;
    Ok(books.get(card).and_then(|(info, currency, book)| {
        let bill = book.bill(month, today)?;
        Some((info.clone(), currency.to_owned(), bill))
    }))
}

/// Per card, the whole book (every started bill exact, every future
/// installment counted).
pub async fn whole_books(store: &dyn Store, user: UserId, today: Date) -> StoreResult<CardBooks> {
    books(store, user, whole_range(today), None, Some(today)).await
}

/// The cashflow entry a bill handle names, if the view shows it now: the
/// bill has something left to pay and was not hidden.
pub async fn resolve_bill(
    store: &dyn Store,
    user: UserId,
    handle: &cofre_domain::projection::Handle,
    today: Date,
) -> StoreResult<Option<(Transaction, Bill)>> {
    let cofre_domain::projection::Handle::Bill {
        card_id,
        year,
        month,
    } = *handle
    else {
        return Ok(None);
    };
    let Some(month) = BillMonth::new(year, month) else {
        return Ok(None);
    };
    let Some((info, currency, bill)) = bill(store, user, card_id, month, today).await? else {
        return Ok(None);
    };
    if !bill.outstanding.is_positive() {
        return Ok(None);
    }
    let sources = store
        .view_sources(user, bill.cycle.due, bill.cycle.due)
        .await?;
    if sources.tombstones.contains(handle) {
        return Ok(None);
    }
    let entry = bill_entry(card_id, &info, &currency, &bill);
    Ok(Some((entry, bill)))
}
