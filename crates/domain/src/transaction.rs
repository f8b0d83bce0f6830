//! Transactions (ledger rows): creation defaults, PATCH rules, the list
//! filter, and the fingerprint that makes client-supplied ids idempotent.

use jiff::civil::Date;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::account::{Patch, SubType};
use crate::projection::{Frequency, Handle};
use crate::text::{DESCRIPTION_MAX, NOTES_MAX, lower, max_chars, required_text};
use crate::{
    AccountId, CategoryId, DomainError, FieldErrors, Money, PurchaseId, RuleId, TagId,
    TransactionId,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", try_from = "String")]
pub enum TxType {
    Debit,
    Credit,
}

impl TxType {
    pub fn as_str(self) -> &'static str {
        match self {
            TxType::Debit => "DEBIT",
            TxType::Credit => "CREDIT",
        }
    }

    /// The type its name (as text or bytes) names.
    pub fn parse(text: impl AsRef<[u8]>) -> Option<Self> {
        match text.as_ref() {
            b"DEBIT" => Some(TxType::Debit),
            b"CREDIT" => Some(TxType::Credit),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", try_from = "String")]
pub enum TxStatus {
    Pending,
    Posted,
}

impl TxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TxStatus::Pending => "PENDING",
            TxStatus::Posted => "POSTED",
        }
    }

    /// The status its name (as text or bytes) names.
    pub fn parse(text: impl AsRef<[u8]>) -> Option<Self> {
        match text.as_ref() {
            b"PENDING" => Some(TxStatus::Pending),
            b"POSTED" => Some(TxStatus::Posted),
            _ => None,
        }
    }

    /// POSTED for dates up to today, PENDING for the future.
    pub fn default_for(date: Date, today: Date) -> Self {
        if date <= today {
            TxStatus::Posted
        } else {
            TxStatus::Pending
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Api,
    OpenFinance,
    Manual,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Api => "API",
            Source::OpenFinance => "OPEN_FINANCE",
            Source::Manual => "MANUAL",
        }
    }

    /// The source its name (as text or bytes) names.
    pub fn parse(text: impl AsRef<[u8]>) -> Option<Self> {
        match text.as_ref() {
            b"API" => Some(Source::Api),
            b"OPEN_FINANCE" => Some(Source::OpenFinance),
            b"MANUAL" => Some(Source::Manual),
            _ => None,
        }
    }
}

/// A tag as shown inside a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagRef {
    pub id: TagId,
    pub title: String,
    pub color_hex: String,
}

/// The fields of a stored row that the owner decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionState {
    pub date: Date,
    pub tx_type: TxType,
    pub status: TxStatus,
    pub amount: Money,
    pub description: String,
    pub notes: Option<String>,
    pub category_id: Option<CategoryId>,
    pub tag_ids: Vec<TagId>,
    pub hide_from_results: bool,
}

/// How an entry is addressed: a stored row's UUID, or the handle of a
/// projected entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryId {
    Stored(TransactionId),
    Projected(Handle),
}

impl EntryId {
    pub fn stored(&self) -> Option<TransactionId> {
        match self {
            EntryId::Stored(id) => Some(*id),
            EntryId::Projected(_) => None,
        }
    }

    /// A UUID names a stored row; a `mocked-` handle a projection.
    pub fn parse(text: &str) -> Option<EntryId> {
        if text.starts_with(crate::projection::HANDLE_PREFIX) {
            Handle::parse(text).map(EntryId::Projected)
        } else {
            TransactionId::parse(text).map(EntryId::Stored)
        }
    }
}

impl std::fmt::Display for EntryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryId::Stored(id) => id.fmt(f),
            EntryId::Projected(handle) => handle.fmt(f),
        }
    }
}

/// A row's place in an installment purchase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstallmentRef {
    pub purchase_id: PurchaseId,
    pub number: u16,
    pub count: u16,
    pub total_amount: Money,
}

/// An entry of the ledger: a stored row, or a projected one (an
/// occurrence of a rule or an installment not stored yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    pub id: EntryId,
    pub account_id: AccountId,
    pub currency: String,
    pub state: TransactionState,
    pub tags: Vec<TagRef>,
    pub bill_to_account_id: Option<AccountId>,
    pub recurrence_id: Option<RuleId>,
    pub recurrence_period_date: Option<Date>,
    pub installment: Option<InstallmentRef>,
    pub transfer_group_id: Option<Uuid>,
    pub created_by_user: bool,
    pub source: Source,
    pub card_number: Option<String>,
    pub holder: Option<String>,
    pub holder_is_me: bool,
    pub original_description: Option<String>,
    pub receipt_name: Option<String>,
    pub open_finance: bool,
}

impl Transaction {
    /// An entry with what every entry has; links, flags and bank fields
    /// empty (an API-made, user-made entry).
    pub fn plain(
        id: EntryId,
        account_id: AccountId,
        currency: String,
        state: TransactionState,
    ) -> Self {
        Transaction {
            id,
            account_id,
            currency,
            state,
            tags: Vec::new(),
            bill_to_account_id: None,
            recurrence_id: None,
            recurrence_period_date: None,
            installment: None,
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
}

/// A creation request, as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct NewTransactionInput {
    pub id: Option<TransactionId>,
    pub account_id: Option<AccountId>,
    pub tx_type: Option<TxType>,
    pub amount: Option<Money>,
    pub description: Option<String>,
    pub date: Option<Date>,
    pub status: Option<TxStatus>,
    pub notes: Option<String>,
    pub category_id: Option<CategoryId>,
    pub tag_ids: Vec<TagId>,
    /// `installments.count`: an installment purchase.
    pub installments: Option<u16>,
    /// A recurrence rule.
    pub recurrence: Option<RecurrenceInput>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecurrenceInput {
    pub frequency: Frequency,
    pub interval: Option<u32>,
    pub end_date: Option<Date>,
    pub count: Option<u32>,
}

/// Which series a stored row belongs to, and where in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeriesLink {
    #[default]
    None,
    Recurrence {
        rule_id: RuleId,
        period_date: Date,
    },
    Installment {
        purchase_id: PurchaseId,
        number: u16,
    },
}

/// A validated creation, ready to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTransaction {
    pub id: TransactionId,
    /// Whether the client chose the id (and so may replay the request).
    pub client_chosen_id: bool,
    pub account_id: AccountId,
    pub state: TransactionState,
    pub link: SeriesLink,
    /// SHA-256 of the request as sent: a replay with the same id must match.
    pub fingerprint: String,
}

pub const MAX_TAGS: usize = 50;

fn amount_rule(errors: &mut FieldErrors, amount: Money) {
    if !amount.is_positive() {
        errors.add("amount", "must be greater than 0");
    }
}

pub(crate) fn notes_rule(errors: &mut FieldErrors, notes: &str) -> Option<String> {
    errors.check(max_chars("notes", notes, NOTES_MAX))?;
    let trimmed = notes.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

fn tags_rule(errors: &mut FieldErrors, tag_ids: &[TagId]) -> Vec<TagId> {
    let mut out: Vec<TagId> = Vec::with_capacity(tag_ids.len());
    for id in tag_ids {
        if !out.contains(id) {
            out.push(*id);
        }
    }
    if out.len() > MAX_TAGS {
        errors.add(
            "tag_ids",
            format!("at most {MAX_TAGS} tags per transaction"),
        );
    }
    out
}

/// Validates a creation. `today` decides the default date and status.
pub fn new_transaction(
    input: &NewTransactionInput,
    today: Date,
) -> Result<NewTransaction, DomainError> {
    let mut errors = FieldErrors::new();
    if input.account_id.is_none() {
        errors.add("account_id", "is required");
    }
    if input.tx_type.is_none() {
        errors.add("type", "is required (DEBIT or CREDIT)");
    }
    match input.amount {
        None => errors.add("amount", "is required"),
        Some(amount) => amount_rule(&mut errors, amount),
    }
    let description = match &input.description {
        None => {
            errors.add("description", "is required");
            None
        }
        Some(d) => errors.check(required_text("description", d, DESCRIPTION_MAX)),
    };
    let notes = input
        .notes
        .as_deref()
        .and_then(|n| notes_rule(&mut errors, n));
    let tag_ids = tags_rule(&mut errors, &input.tag_ids);
    errors.finish()?;

    let date = input.date.unwrap_or(today);
    let (Some(account_id), Some(tx_type), Some(amount), Some(description)) =
        (input.account_id, input.tx_type, input.amount, description)
    else {
        return Err(DomainError::field("body", "is incomplete"));
    };
    Ok(NewTransaction {
        id: input.id.unwrap_or_default(),
        client_chosen_id: input.id.is_some(),
        account_id,
        link: SeriesLink::None,
        fingerprint: fingerprint(input),
        state: TransactionState {
            date,
            tx_type,
            status: input.status.unwrap_or(TxStatus::default_for(date, today)),
            amount,
            description,
            notes,
            category_id: input.category_id,
            tag_ids,
            hide_from_results: false,
        },
    })
}

/// Hash of the request as sent (not of defaults filled in later), so a
/// replay on another day still matches.
fn fingerprint(input: &NewTransactionInput) -> String {
    let mut tags: Vec<String> = input.tag_ids.iter().map(ToString::to_string).collect();
    tags.sort();
    tags.dedup();
    let text = format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        input.account_id.map(|a| a.to_string()),
        input.tx_type.map(TxType::as_str),
        input.amount.map(Money::cents),
        input.description.as_deref().map(str::trim),
        input.date.map(crate::time::format_date),
        input.status.map(TxStatus::as_str),
        input.notes.as_deref().map(str::trim),
        input.category_id.map(|c| c.to_string()),
        tags,
        input.installments,
        input.recurrence,
    );
    crate::text::hex(&Sha256::digest(text.as_bytes()))
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionChanges {
    pub date: Option<Date>,
    pub tx_type: Option<TxType>,
    pub status: Option<TxStatus>,
    pub amount: Option<Money>,
    pub description: Option<String>,
    pub notes: Patch<String>,
    pub category_id: Patch<CategoryId>,
    pub tag_ids: Option<Vec<TagId>>,
    pub hide_from_results: Option<bool>,
}

impl TransactionChanges {
    pub fn is_empty(&self) -> bool {
        self.date.is_none()
            && self.tx_type.is_none()
            && self.status.is_none()
            && self.amount.is_none()
            && self.description.is_none()
            && self.notes.is_keep()
            && self.category_id.is_keep()
            && self.tag_ids.is_none()
            && self.hide_from_results.is_none()
    }
}

pub fn apply_changes(
    current: &TransactionState,
    changes: &TransactionChanges,
) -> Result<TransactionState, DomainError> {
    let mut errors = FieldErrors::new();
    if let Some(amount) = changes.amount {
        amount_rule(&mut errors, amount);
    }
    let description = match &changes.description {
        Some(d) => errors.check(required_text("description", d, DESCRIPTION_MAX)),
        None => Some(current.description.clone()),
    };
    let notes = match &changes.notes {
        Patch::Set(n) => notes_rule(&mut errors, n),
        Patch::Clear => None,
        Patch::Keep => current.notes.clone(),
    };
    let tag_ids = match &changes.tag_ids {
        Some(ids) => tags_rule(&mut errors, ids),
        None => current.tag_ids.clone(),
    };
    errors.finish()?;
    Ok(TransactionState {
        date: changes.date.unwrap_or(current.date),
        tx_type: changes.tx_type.unwrap_or(current.tx_type),
        status: changes.status.unwrap_or(current.status),
        amount: changes.amount.unwrap_or(current.amount),
        description: description.unwrap_or_default(),
        notes,
        category_id: match changes.category_id {
            Patch::Set(id) => Some(id),
            Patch::Clear => None,
            Patch::Keep => current.category_id,
        },
        tag_ids,
        hide_from_results: changes
            .hide_from_results
            .unwrap_or(current.hide_from_results),
    })
}

/// Lower-cased text the `search` filter looks in: description, notes and
/// the bank's original description.
pub fn search_text(description: &str, notes: Option<&str>, original: Option<&str>) -> String {
    let mut text = lower(description);
    for part in [notes, original].into_iter().flatten() {
        text.push('\n');
        text.push_str(&lower(part));
    }
    text
}

/// The longest window the list accepts: 366 days counting both ends.
pub const MAX_WINDOW_DAYS: i32 = 365;

pub fn check_window(from: Date, to: Date) -> Result<(), DomainError> {
    if to < from {
        return Err(DomainError::field("to", "must not be before from"));
    }
    // A Date span's largest unit is the day, so get_days is the whole length.
    let days = from.until(to).map_or(i32::MAX, |span| span.get_days());
    if days > MAX_WINDOW_DAYS {
        return Err(DomainError::field(
            "to",
            "the window from..to may span at most 366 days",
        ));
    }
    Ok(())
}

/// Which rows a list returns. Ids that match nothing simply select nothing.
#[derive(Clone, Debug)]
pub struct TransactionFilter {
    pub from: Date,
    pub to: Date,
    pub status: Option<TxStatus>,
    pub tx_type: Option<TxType>,
    pub account_ids: Option<Vec<AccountId>>,
    /// Already expanded to subcategories when the client asked for that.
    pub category_ids: Option<Vec<CategoryId>>,
    pub tag_ids: Option<Vec<TagId>>,
    pub no_category: bool,
    pub no_tags: bool,
    pub is_recurring: bool,
    pub is_installments: bool,
    pub sub_types: Option<Vec<SubType>>,
    pub hidden: bool,
    /// Lower-cased search text.
    pub search: Option<String>,
    /// The cashflow view: no rows of credit cards (their bills stand in).
    pub cashflow: bool,
}

impl TransactionFilter {
    /// Every visible entry of the window, nothing else filtered.
    pub fn window(from: Date, to: Date) -> Self {
        TransactionFilter {
            from,
            to,
            status: None,
            tx_type: None,
            account_ids: None,
            category_ids: None,
            tag_ids: None,
            no_category: false,
            no_tags: false,
            is_recurring: false,
            is_installments: false,
            sub_types: None,
            hidden: false,
            search: None,
            cashflow: false,
        }
    }
}

/// The position after which a page starts: the (date, id) of the last entry
/// served. Pages run newest day first, ids ascending within a day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePosition {
    pub date: Date,
    pub id: String,
}

#[derive(Clone, Debug)]
pub struct PageRequest {
    pub limit: usize,
    pub after: Option<PagePosition>,
}

/// Which stored rows, read in list order, can make a page they share with
/// entries from elsewhere (projections, bills): those are never stored,
/// so within a day they come after every stored row, and only their days
/// matter. A stored row makes the page when fewer than `limit` entries
/// come before it: the rows read before it and the others dated after
/// its day. The first row that does not make it ends the read, and tells
/// the page has more. The others' days are drawn one at a time, as far as
/// the rows read need (and one further).
pub struct PageCut<'a> {
    limit: usize,
    /// The others' days, newest first.
    others: &'a mut (dyn Iterator<Item = Date> + Send),
    /// The next of them, drawn and not yet counted.
    next: Option<Date>,
    read: usize,
    /// How many of the others are dated after the last row read.
    ahead: usize,
}

impl<'a> PageCut<'a> {
    /// A cut for a page of `limit` shared with entries dated `others`,
    /// newest first.
    pub fn new(limit: usize, others: &'a mut (dyn Iterator<Item = Date> + Send)) -> Self {
        let next = others.next();
        Self {
            limit,
            others,
            next,
            read: 0,
            ahead: 0,
        }
    }

    /// Whether the next stored row, dated `date` (no later than the row
    /// before it), makes the page.
    pub fn admits(&mut self, date: Date) -> bool {
        // Past the page's worth of others, more change nothing.
        while self.ahead < self.limit
            && let Some(day) = self.next.filter(|&day| day > date)
        {
            self.ahead += 1;
            let next = self.others.next();
            debug_assert!(next.is_none_or(|next| next <= day), "others newest first");
            self.next = next;
        }
        self.read += 1;
        self.read - 1 + self.ahead < self.limit
    }
}

/// The last day a page after `position` can show in a window ending on
/// `to`: entries after a cursor lie on or before its day.
pub fn last_day(position: Option<&PagePosition>, to: Date) -> Date {
    position.map_or(to, |p| p.date.min(to))
}

#[derive(Clone, Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub has_more: bool,
}

/// Only the string form is accepted (serde would also take `{"NAME": null}`).
impl TryFrom<String> for TxType {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        TxType::parse(&text).ok_or_else(|| format!("must be DEBIT or CREDIT, not {text:?}"))
    }
}

/// Only the string form is accepted (serde would also take `{"NAME": null}`).
impl TryFrom<String> for TxStatus {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        TxStatus::parse(&text).ok_or_else(|| format!("must be PENDING or POSTED, not {text:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn a_page_ends_on_its_cursor_s_day_inside_the_window() {
        let to = date(2026, 11, 30);
        let at = |day| PagePosition {
            date: date(2026, 11, day),
            id: "x".into(),
        };
        assert_eq!(last_day(None, to), to);
        assert_eq!(last_day(Some(&at(12)), to), date(2026, 11, 12));
        // A cursor from a wider window never reaches past this one.
        let later = PagePosition {
            date: date(2026, 12, 5),
            id: "x".into(),
        };
        assert_eq!(last_day(Some(&later), to), to);
    }

    proptest::proptest! {
        /// A cut keeps exactly the stored rows among the first `limit`
        /// entries of the merged list (newest day first, stored rows
        /// before the others within a day), and refuses a row exactly
        /// when a stored row falls past them.
        #[test]
        fn a_cut_keeps_the_stored_rows_of_the_merged_page(
            mut stored in proptest::collection::vec(0i8..20, 0..40),
            mut others in proptest::collection::vec(0i8..20, 0..40),
            limit in 1usize..30,
        ) {
            let day = |d: i8| date(2026, 1, d + 1);
            stored.sort_unstable_by(|a, b| b.cmp(a));
            others.sort_unstable_by(|a, b| b.cmp(a));
            // The merged list: (day, 0) for a stored row, (day, 1) for another.
            let mut merged: Vec<(i8, u8)> = stored.iter().map(|&d| (d, 0)).collect();
            merged.extend(others.iter().map(|&d| (d, 1)));
            merged.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let in_page = merged.iter().take(limit).filter(|e| e.1 == 0).count();
            let drawn = std::sync::atomic::AtomicUsize::new(0);
            let mut others = others.into_iter().map(day).inspect(|_| {
                drawn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            });
            let mut cut = PageCut::new(limit, &mut others);
            let kept = stored.iter().take_while(|&&d| cut.admits(day(d))).count();
            proptest::prop_assert_eq!(kept, in_page);
            proptest::prop_assert_eq!(kept < stored.len(), stored.len() > in_page);
            // Drawn as far as needed: the page's worth and one more.
            proptest::prop_assert!(drawn.into_inner() <= limit + 1);
        }
    }

    fn input() -> NewTransactionInput {
        NewTransactionInput {
            account_id: Some(AccountId::new()),
            tx_type: Some(TxType::Debit),
            amount: Some(Money::from_cents(1234)),
            description: Some(" Padaria ".into()),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_date_today_and_status_by_date() {
        let today = date(2026, 11, 22);
        let t = new_transaction(&input(), today).unwrap();
        assert_eq!(t.state.date, today);
        assert_eq!(t.state.status, TxStatus::Posted);
        assert_eq!(t.state.description, "Padaria");
        let future = NewTransactionInput {
            date: Some(date(2026, 11, 23)),
            ..input()
        };
        assert_eq!(
            new_transaction(&future, today).unwrap().state.status,
            TxStatus::Pending
        );
    }

    #[test]
    fn names_every_missing_field() {
        let err = new_transaction(&NewTransactionInput::default(), date(2026, 1, 1)).unwrap_err();
        let DomainError::Validation(list) = err else {
            panic!("not a validation error")
        };
        let fields: Vec<_> = list.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["account_id", "type", "amount", "description"]);
    }

    #[test]
    fn amount_must_be_positive() {
        let zero = NewTransactionInput {
            amount: Some(Money::ZERO),
            ..input()
        };
        assert!(new_transaction(&zero, date(2026, 1, 1)).is_err());
    }

    #[test]
    fn fingerprint_ignores_defaults_but_not_content() {
        let a = input();
        let t1 = new_transaction(&a, date(2026, 1, 1)).unwrap();
        let t2 = new_transaction(&a, date(2026, 1, 2)).unwrap();
        assert_eq!(t1.fingerprint, t2.fingerprint);
        let b = NewTransactionInput {
            amount: Some(Money::from_cents(1235)),
            ..a
        };
        assert_ne!(
            new_transaction(&b, date(2026, 1, 1)).unwrap().fingerprint,
            t1.fingerprint
        );
    }

    #[test]
    fn window_is_at_most_366_days() {
        assert!(check_window(date(2026, 1, 1), date(2026, 12, 31)).is_ok());
        assert!(check_window(date(2024, 1, 1), date(2024, 12, 31)).is_ok()); // leap: 366 days
        assert!(check_window(date(2024, 1, 1), date(2025, 1, 1)).is_err());
        assert!(check_window(date(2026, 1, 2), date(2026, 1, 1)).is_err());
        assert!(check_window(date(2026, 1, 1), date(2026, 1, 1)).is_ok());
    }

    #[test]
    fn patch_changes_only_what_is_sent() {
        let state = new_transaction(&input(), date(2026, 1, 1)).unwrap().state;
        let next = apply_changes(
            &state,
            &TransactionChanges {
                notes: Patch::Set("  ".into()),
                hide_from_results: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(next.notes, None);
        assert!(next.hide_from_results);
        assert_eq!(next.amount, state.amount);
    }

    #[test]
    fn search_text_is_lower_case() {
        assert_eq!(search_text("PÃO", Some("Açúcar"), None), "pão\naçúcar");
    }
}
