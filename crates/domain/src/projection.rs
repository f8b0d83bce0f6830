//! Entries that do not exist as stored rows yet: occurrences of recurrence
//! rules and installments of purchases. Everything here is pure: schedules
//! are computed by index arithmetic (never by walking from the start), so a
//! ten-year-old daily rule costs the same as a new one.

use jiff::civil::Date;
use jiff::{Span, Timestamp};
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::text::push_padded;
use crate::time::{MAX_DATE, format_date, parse_date, push_date};
use crate::transaction::{TransactionState, TxStatus, TxType};
use crate::{
    AccountId, CategoryId, DomainError, FieldErrors, Money, PurchaseId, RuleId, TagId, UserId,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", try_from = "String")]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

impl Frequency {
    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Daily => "DAILY",
            Frequency::Weekly => "WEEKLY",
            Frequency::Monthly => "MONTHLY",
            Frequency::Yearly => "YEARLY",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Daily, Self::Weekly, Self::Monthly, Self::Yearly]
            .into_iter()
            .find(|f| f.as_str() == text)
    }
}

/// Only the string form is accepted.
impl TryFrom<String> for Frequency {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Frequency::parse(&text)
            .ok_or_else(|| format!("must be DAILY, WEEKLY, MONTHLY or YEARLY, not {text:?}"))
    }
}

pub const MAX_INTERVAL: u32 = 1_000;
pub const MAX_COUNT: u32 = 10_000;

/// When a rule's occurrences fall: the n-th (from 0) is `start` plus
/// `n * interval` units, monthly and yearly ones keeping the start's day
/// (clamped to short months), until `end_date` (inclusive) or `count`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub frequency: Frequency,
    pub interval: u32,
    pub start: Date,
    pub end_date: Option<Date>,
    pub count: Option<u32>,
}

fn month_index(date: Date) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month()) - 1
}

/// `date` moved by `months`, its day clamped to the month's last, as
/// adding a span of months does, without the span: computing a page's
/// projections added months to rule starts thousands of times a second.
fn add_months(date: Date, months: i64) -> Option<Date> {
    let index = month_index(date).checked_add(months)?;
    let year = i16::try_from(index.div_euclid(12)).ok()?;
    let month = i8::try_from(index.rem_euclid(12) + 1).ok()?;
    let last = Date::new(year, month, 1).ok()?.days_in_month();
    Date::new(year, month, date.day().min(last)).ok()
}

fn days_between(from: Date, to: Date) -> i64 {
    from.until(to)
        .map_or(i64::MAX, |span| i64::from(span.get_days()))
}

impl Schedule {
    pub fn validate(&self) -> Result<(), DomainError> {
        let mut errors = FieldErrors::new();
        if !(1..=MAX_INTERVAL).contains(&self.interval) {
            errors.add(
                "recurrence.interval",
                format!("must be from 1 to {MAX_INTERVAL}"),
            );
        }
        if let Some(count) = self.count
            && !(1..=MAX_COUNT).contains(&count)
        {
            errors.add("recurrence.count", format!("must be from 1 to {MAX_COUNT}"));
        }
        if let Some(end) = self.end_date
            && end < self.start
        {
            errors.add("recurrence.end_date", "must not be before the start date");
        }
        if errors.is_empty() && !self.stays_in_calendar() {
            errors.add("recurrence.count", self.past_calendar_message());
        }
        errors.finish()
    }

    /// Units (days or months) between occurrences.
    fn step(&self) -> i64 {
        let interval = i64::from(self.interval);
        match self.frequency {
            Frequency::Daily => interval,
            Frequency::Weekly => interval * 7,
            Frequency::Monthly => interval,
            Frequency::Yearly => interval * 12,
        }
    }

    /// Why a rule whose `count` leaves the calendar is refused.
    pub fn past_calendar_message(&self) -> String {
        format!(
            "would put occurrences after 9999-12-31, the last supported date: from {} at most {} fit (or send an end_date)",
            format_date(self.start),
            self.calendar_count()
        )
    }

    fn is_daily_kind(&self) -> bool {
        matches!(self.frequency, Frequency::Daily | Frequency::Weekly)
    }

    /// The date of the n-th occurrence from the start, ignoring the end.
    fn raw_nth(&self, n: u32) -> Option<Date> {
        let units = i64::from(n).checked_mul(self.step())?;
        if self.is_daily_kind() {
            self.start
                .checked_add(Span::new().try_days(units).ok()?)
                .ok()
        } else {
            add_months(self.start, units)
        }
    }

    fn within_end(&self, n: u32, date: Date) -> bool {
        self.count.is_none_or(|c| n < c) && self.end_date.is_none_or(|end| date <= end)
    }

    /// The n-th occurrence (from 0), if the rule produces it.
    pub fn nth(&self, n: u32) -> Option<Date> {
        let date = self.raw_nth(n)?;
        self.within_end(n, date).then_some(date)
    }

    /// Units from the start to `date`, in the schedule's unit.
    fn units_to(&self, date: Date) -> i64 {
        if self.is_daily_kind() {
            days_between(self.start, date)
        } else {
            month_index(date) - month_index(self.start)
        }
    }

    /// The index of `date` when it is an occurrence.
    pub fn index_of(&self, date: Date) -> Option<u32> {
        let units = self.units_to(date);
        if units < 0 || units % self.step() != 0 {
            return None;
        }
        let n = u32::try_from(units / self.step()).ok()?;
        (self.nth(n)? == date).then_some(n)
    }

    /// The first occurrence on or after `date`.
    pub fn first_on_or_after(&self, date: Date) -> Option<(u32, Date)> {
        let n = if date <= self.start {
            0
        } else {
            let units = self.units_to(date);
            // Ceiling division: the first index whose unit count reaches `date`.
            let n = u32::try_from((units + self.step() - 1) / self.step()).ok()?;
            // Monthly dates clamp to short months and may fall before
            // `date` within its month; the index before may already reach it.
            match n
                .checked_sub(1)
                .and_then(|p| self.raw_nth(p).map(|d| (p, d)))
            {
                Some((p, d)) if d >= date => p,
                _ => n,
            }
        };
        let found = self.raw_nth(n)?;
        let (n, found) = if found < date {
            (n + 1, self.raw_nth(n + 1)?)
        } else {
            (n, found)
        };
        self.within_end(n, found).then_some((n, found))
    }

    /// The last occurrence on or before `date`.
    pub fn last_on_or_before(&self, date: Date) -> Option<(u32, Date)> {
        let date = match self.end_date {
            Some(end) if end < date => end,
            _ => date,
        };
        if date < self.start {
            return None;
        }
        let mut n = u32::try_from(self.units_to(date) / self.step()).ok()?;
        if let Some(count) = self.count {
            n = n.min(count.checked_sub(1)?);
        }
        // Index n lies in `date`'s month at the latest; only a monthly date
        // clamped to a short month can pass `date`, and then index n - 1
        // lies in an earlier month: two candidates at most.
        (0..=n)
            .rev()
            .take(2)
            .find_map(|k| self.raw_nth(k).filter(|d| *d <= date).map(|d| (k, d)))
    }

    /// Whether every occurrence the rule produces lies in the supported
    /// calendar. An `end_date` is a date of the calendar, so only a
    /// `count` without one can reach past 9999-12-31; an open-ended rule
    /// simply stops at the calendar's end.
    pub fn stays_in_calendar(&self) -> bool {
        match (self.count, self.end_date) {
            (Some(count), None) => count
                .checked_sub(1)
                .is_none_or(|last| self.raw_nth(last).is_some()),
            _ => true,
        }
    }

    /// How many occurrences from the start fit in the calendar: the
    /// largest `count` allowed without an `end_date`.
    fn calendar_count(&self) -> u64 {
        let units = self.units_to(MAX_DATE);
        u64::try_from(units / self.step() + 1).unwrap_or(0)
    }

    /// Occurrences in `[from, to]`, newest first.
    pub fn descending(&self, from: Date, to: Date) -> impl Iterator<Item = (u32, Date)> + '_ {
        let mut next = self.last_on_or_before(to);
        std::iter::from_fn(move || {
            let (n, date) = next?;
            if date < from {
                return None;
            }
            next = n
                .checked_sub(1)
                .and_then(|p| self.raw_nth(p).map(|d| (p, d)));
            Some((n, date))
        })
    }

    /// Occurrences in `[from, to]`, oldest first.
    pub fn ascending(&self, from: Date, to: Date) -> impl Iterator<Item = (u32, Date)> + '_ {
        let mut next = self.first_on_or_after(from);
        std::iter::from_fn(move || {
            let (n, date) = next?;
            if date > to {
                return None;
            }
            next = n.checked_add(1).and_then(|m| self.nth(m).map(|d| (m, d)));
            Some((n, date))
        })
    }
}

/// Installment `number` (from 1) of `count` parts of `total`: equal cents,
/// the leftover cents on the first part.
pub fn installment_amount(total: Money, count: u16, number: u16) -> Money {
    let count_i = i64::from(count.max(1));
    let base = total.cents() / count_i;
    let leftover = total.cents() - base * count_i;
    if number == 1 {
        Money::from_cents(base + leftover)
    } else {
        Money::from_cents(base)
    }
}

/// Installment `number` (from 1) is dated `number - 1` months after the
/// first, keeping its day (clamped to short months).
pub fn installment_date(first: Date, number: u16) -> Option<Date> {
    add_months(first, i64::from(number.checked_sub(1)?))
}

pub const MIN_INSTALLMENTS: u16 = 2;
pub const MAX_INSTALLMENTS: u16 = 420;

/// How many monthly installments from `first` fit in the supported
/// calendar (the last dated in 9999-12 at the latest).
pub fn installments_that_fit(first: Date) -> u32 {
    let months = month_index(MAX_DATE) - month_index(first) + 1;
    u32::try_from(months.max(0)).unwrap_or(u32::MAX)
}

/// What every entry of a rule or plan shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub tx_type: TxType,
    pub amount: Money,
    pub description: String,
    pub notes: Option<String>,
    pub category_id: Option<CategoryId>,
    pub tag_ids: Vec<TagId>,
}

impl Template {
    /// Heap bytes of its text and tags, for caches bounded in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.description.capacity()
            + self.notes.as_ref().map_or(0, String::capacity)
            + self.tag_ids.capacity() * std::mem::size_of::<TagId>()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecurrenceRule {
    pub id: RuleId,
    pub user_id: UserId,
    pub account_id: AccountId,
    pub template: Template,
    pub schedule: Schedule,
    pub created_at: Timestamp,
}

/// An installment purchase: `template.amount` is the total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallmentPlan {
    pub id: PurchaseId,
    pub user_id: UserId,
    pub account_id: AccountId,
    pub template: Template,
    pub count: u16,
    pub first_date: Date,
    /// `hide_series`: no installment is projected and stored ones are hidden.
    pub hidden: bool,
    pub created_at: Timestamp,
}

impl InstallmentPlan {
    pub fn amount_of(&self, number: u16) -> Money {
        installment_amount(self.template.amount, self.count, number)
    }

    pub fn date_of(&self, number: u16) -> Option<Date> {
        installment_date(self.first_date, number)
    }

    /// Installments dated in `[from, to]`, newest first. Installment `k`
    /// falls in the `k - 1`-th month after the first's and the dates rise
    /// with `k`, so the walk starts at the one in `to`'s month and stops at
    /// the first before `from`: a page's window costs the installments it
    /// holds, not the plan's whole count (up to 420) for every plan.
    pub fn descending(&self, from: Date, to: Date) -> impl Iterator<Item = (u16, Date)> + '_ {
        let in_to_month = month_index(to) - month_index(self.first_date) + 1;
        let top = u16::try_from(in_to_month.clamp(0, i64::from(self.count))).unwrap_or(0);
        (1..=top)
            .rev()
            .filter_map(|k| self.date_of(k).map(|d| (k, d)))
            .skip_while(move |(_, d)| *d > to)
            .take_while(move |(_, d)| *d >= from)
    }
}

impl Template {
    /// The entry state of one projected occurrence: always PENDING.
    pub fn state(&self, date: Date, amount: Money) -> TransactionState {
        TransactionState {
            date,
            tx_type: self.tx_type,
            status: TxStatus::Pending,
            amount,
            description: self.description.clone(),
            notes: self.notes.clone(),
            category_id: self.category_id,
            tag_ids: self.tag_ids.clone(),
            hide_from_results: false,
        }
    }
}

/// How a projected entry is addressed in place of a UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Handle {
    Recurrence {
        rule_id: RuleId,
        date: Date,
    },
    Installment {
        purchase_id: PurchaseId,
        number: u16,
    },
    Bill {
        card_id: AccountId,
        year: i16,
        month: i8,
    },
}

pub const HANDLE_PREFIX: &str = "mocked-";

impl Handle {
    pub fn parse(text: &str) -> Option<Handle> {
        let rest = text.strip_prefix(HANDLE_PREFIX)?;
        let (kind, rest) = rest.split_once(':')?;
        let (id, key) = rest.split_once(':')?;
        match kind {
            "recurrence" => Some(Handle::Recurrence {
                rule_id: RuleId::parse(id)?,
                date: parse_date(key)?,
            }),
            "installment" => {
                let number: u16 = key.parse().ok()?;
                (key == number.to_string()).then_some(())?;
                Some(Handle::Installment {
                    purchase_id: PurchaseId::parse(id)?,
                    number,
                })
            }
            "bill" => {
                let (y, m) = (key.get(..4)?, key.get(4..)?);
                if key.len() != 6 || !key.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let (year, month): (i16, i8) = (y.parse().ok()?, m.parse().ok()?);
                (1..=12).contains(&month).then_some(())?;
                Some(Handle::Bill {
                    card_id: AccountId::parse(id)?,
                    year,
                    month,
                })
            }
            _ => None,
        }
    }

    /// How two handles' text (see `Display`) orders, without printing
    /// them: by kind as its name sorts (`bill`, `installment`,
    /// `recurrence`), then field by field as printed. UUIDs order by
    /// their bytes as their text does, days and bill months are printed
    /// at a fixed width; only an installment's number is printed without
    /// padding (`10` before `9`), so two of one purchase compare as text.
    pub fn text_cmp(&self, other: &Handle) -> std::cmp::Ordering {
        let kind = |handle: &Handle| match handle {
            Handle::Bill { .. } => 0,
            Handle::Installment { .. } => 1,
            Handle::Recurrence { .. } => 2,
        };
        match (self, other) {
            (
                Handle::Recurrence { rule_id, date },
                Handle::Recurrence {
                    rule_id: other_rule,
                    date: other_date,
                },
            ) => (rule_id, date).cmp(&(other_rule, other_date)),
            (
                Handle::Installment {
                    purchase_id,
                    number,
                },
                Handle::Installment {
                    purchase_id: other_purchase,
                    number: other_number,
                },
            ) => purchase_id
                .cmp(other_purchase)
                .then_with(|| number.to_string().cmp(&other_number.to_string())),
            (
                Handle::Bill {
                    card_id,
                    year,
                    month,
                },
                Handle::Bill {
                    card_id: other_card,
                    year: other_year,
                    month: other_month,
                },
            ) => (card_id, year, month).cmp(&(other_card, other_year, other_month)),
            _ => kind(self).cmp(&kind(other)),
        }
    }

    /// The handle's text (what `Display` writes) appended to `out`: a page
    /// writes one for each projected entry, and the formatting machinery
    /// cost several times the text.
    pub fn push_to(&self, out: &mut String) {
        out.push_str(HANDLE_PREFIX);
        let (kind, id) = match self {
            Handle::Recurrence { rule_id, .. } => ("recurrence:", rule_id.0),
            Handle::Installment { purchase_id, .. } => ("installment:", purchase_id.0),
            Handle::Bill { card_id, .. } => ("bill:", card_id.0),
        };
        out.push_str(kind);
        let mut buf = uuid::Uuid::encode_buffer();
        out.push_str(id.hyphenated().encode_lower(&mut buf));
        out.push(':');
        match *self {
            Handle::Recurrence { date, .. } => push_date(out, date),
            Handle::Installment { number, .. } => push_padded(out, u64::from(number), 1),
            Handle::Bill { year, month, .. } => match (u16::try_from(year), u16::try_from(month)) {
                (Ok(year), Ok(month)) if year <= 9999 => {
                    push_padded(out, u64::from(year), 4);
                    push_padded(out, u64::from(month), 2);
                }
                // Not a month of the calendar: as `format!` pads it.
                _ => {
                    use fmt::Write;
                    // Writing to a String cannot fail.
                    let _ = write!(out, "{year:04}{month:02}");
                }
            },
        }
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(80);
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MIN_DATE;
    use jiff::civil::date;
    use proptest::prelude::*;

    proptest! {
        /// Months added by index land where a span of months does: the
        /// day clamped to short months, years crossed both ways, and
        /// nothing past the calendar's ends.
        #[test]
        fn months_add_as_a_span_of_months_does(
            year in -9999i16..=9999,
            month in 1i8..=12,
            day in 1i8..=31,
            months in -200_000i64..=200_000,
        ) {
            let Ok(start) = Date::new(year, month, day) else {
                return Ok(());
            };
            let by_span = Span::new()
                .try_months(months)
                .ok()
                .and_then(|span| start.checked_add(span).ok());
            prop_assert_eq!(add_months(start, months), by_span);
        }

        /// A handle's text is what `format!` wrote for it before
        /// [`Handle::push_to`]: every kind, every number, any year and
        /// month of a bill (padded as `{:04}` and `{:02}` pad them).
        #[test]
        fn handles_write_as_format_wrote_them(
            id in any::<u128>(),
            days in 0i32..3_652_058,
            number in any::<u16>(),
            year in any::<i16>(),
            month in any::<i8>(),
        ) {
            let id = uuid::Uuid::from_u128(id);
            let day = MIN_DATE.checked_add(Span::new().days(days)).unwrap();
            let cases = [
                (
                    Handle::Recurrence { rule_id: RuleId(id), date: day },
                    format!("mocked-recurrence:{id}:{}", format_date(day)),
                ),
                (
                    Handle::Installment { purchase_id: PurchaseId(id), number },
                    format!("mocked-installment:{id}:{number}"),
                ),
                (
                    Handle::Bill { card_id: AccountId(id), year, month },
                    format!("mocked-bill:{id}:{year:04}{month:02}"),
                ),
            ];
            for (handle, expected) in cases {
                prop_assert_eq!(handle.to_string(), expected);
            }
        }
    }

    #[test]
    fn handles_compare_as_their_text_does() {
        let rules = [RuleId::new(), RuleId(uuid::Uuid::new_v4())];
        let purchases = [PurchaseId::new(), PurchaseId(uuid::Uuid::new_v4())];
        let cards = [AccountId::new(), AccountId(uuid::Uuid::new_v4())];
        let mut handles = Vec::new();
        for (i, rule_id) in rules.into_iter().enumerate() {
            for day in [
                date(1, 1, 1),
                date(2026, 3, 9),
                date(2026, 3, 10),
                date(9999, 12, 31),
            ] {
                handles.push(Handle::Recurrence { rule_id, date: day });
            }
            for number in [1, 2, 9, 10, 11, 100, 420] {
                handles.push(Handle::Installment {
                    purchase_id: purchases[i],
                    number,
                });
            }
            for (year, month) in [(1, 1), (2026, 9), (2026, 10), (2027, 1), (9999, 12)] {
                handles.push(Handle::Bill {
                    card_id: cards[i],
                    year,
                    month,
                });
            }
        }
        for a in &handles {
            for b in &handles {
                assert_eq!(
                    a.text_cmp(b),
                    a.to_string().cmp(&b.to_string()),
                    "{a} against {b}"
                );
            }
        }
    }

    fn schedule(frequency: Frequency, interval: u32, start: Date) -> Schedule {
        Schedule {
            frequency,
            interval,
            start,
            end_date: None,
            count: None,
        }
    }

    #[test]
    fn monthly_keeps_the_start_day_clamped() {
        let s = schedule(Frequency::Monthly, 1, date(2026, 1, 31));
        let dates: Vec<Date> = (0..4).filter_map(|n| s.nth(n)).collect();
        assert_eq!(
            dates,
            [
                date(2026, 1, 31),
                date(2026, 2, 28),
                date(2026, 3, 31),
                date(2026, 4, 30)
            ]
        );
        assert_eq!(s.index_of(date(2026, 2, 28)), Some(1));
        assert_eq!(s.index_of(date(2026, 2, 27)), None);
        assert_eq!(
            s.first_on_or_after(date(2026, 2, 1)),
            Some((1, date(2026, 2, 28)))
        );
        assert_eq!(
            s.last_on_or_before(date(2026, 3, 30)),
            Some((1, date(2026, 2, 28)))
        );
    }

    #[test]
    fn yearly_leap_day() {
        let s = schedule(Frequency::Yearly, 1, date(2024, 2, 29));
        assert_eq!(s.nth(1), Some(date(2025, 2, 28)));
        assert_eq!(s.nth(4), Some(date(2028, 2, 29)));
        assert_eq!(s.index_of(date(2025, 2, 28)), Some(1));
    }

    #[test]
    fn weekly_with_interval_and_end() {
        let s = Schedule {
            end_date: Some(date(2026, 3, 1)),
            ..schedule(Frequency::Weekly, 2, date(2026, 1, 1))
        };
        let all: Vec<Date> = s
            .ascending(date(2025, 1, 1), date(2027, 1, 1))
            .map(|(_, d)| d)
            .collect();
        assert_eq!(
            all,
            [
                date(2026, 1, 1),
                date(2026, 1, 15),
                date(2026, 1, 29),
                date(2026, 2, 12),
                date(2026, 2, 26)
            ]
        );
        let back: Vec<Date> = s
            .descending(date(2025, 1, 1), date(2027, 1, 1))
            .map(|(_, d)| d)
            .collect();
        assert_eq!(back, all.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(s.index_of(date(2026, 3, 12)), None);
    }

    #[test]
    fn count_limits_occurrences() {
        let s = Schedule {
            count: Some(3),
            ..schedule(Frequency::Daily, 1, date(2026, 1, 1))
        };
        assert_eq!(s.nth(2), Some(date(2026, 1, 3)));
        assert_eq!(s.nth(3), None);
        assert_eq!(
            s.last_on_or_before(date(2030, 1, 1)),
            Some((2, date(2026, 1, 3)))
        );
        assert_eq!(s.first_on_or_after(date(2026, 1, 4)), None);
    }

    #[test]
    fn far_from_the_start_is_direct() {
        let s = schedule(Frequency::Daily, 1, date(2000, 1, 1));
        assert_eq!(
            s.first_on_or_after(date(2026, 11, 22)),
            Some((9822, date(2026, 11, 22)))
        );
        assert_eq!(
            s.descending(date(2026, 11, 20), date(2026, 11, 22)).count(),
            3
        );
    }

    #[test]
    fn installments_split_exactly() {
        let total = Money::from_cents(10_000);
        let parts: Vec<Money> = (1..=3).map(|k| installment_amount(total, 3, k)).collect();
        assert_eq!(
            parts,
            [
                Money::from_cents(3334),
                Money::from_cents(3333),
                Money::from_cents(3333)
            ]
        );
        assert_eq!(
            installment_date(date(2026, 1, 31), 2),
            Some(date(2026, 2, 28))
        );
        assert_eq!(
            installment_date(date(2026, 1, 31), 3),
            Some(date(2026, 3, 31))
        );
    }

    #[test]
    fn handles_round_trip() {
        let handles = [
            Handle::Recurrence {
                rule_id: RuleId::new(),
                date: date(2026, 2, 28),
            },
            Handle::Installment {
                purchase_id: PurchaseId::new(),
                number: 12,
            },
            Handle::Bill {
                card_id: AccountId::new(),
                year: 2026,
                month: 3,
            },
        ];
        for h in handles {
            assert_eq!(Handle::parse(&h.to_string()), Some(h));
        }
        for bad in [
            "mocked-recurrence:x:2026-01-01",
            "mocked-installment:00000000-0000-4000-8000-000000000000:01",
            "mocked-installment:00000000-0000-4000-8000-000000000000:x",
            "mocked-bill:00000000-0000-4000-8000-000000000000:202613",
            "mocked-other:00000000-0000-4000-8000-000000000000:1",
            "recurrence:00000000-0000-4000-8000-000000000000:2026-01-01",
        ] {
            assert_eq!(Handle::parse(bad), None, "{bad}");
        }
    }
}
