//! The row builder: the rows of the batch as they are made, the history's
//! calendar, and the everyday rows (a weighted merchant on a random day).

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

use cofre_domain::transaction::{SeriesLink, TransactionState, TxStatus, TxType};
use cofre_domain::{AccountId, Money, TransactionId};
use cofre_store::ImportRow;

use super::catalogue::{CARDS, MERCHANTS, Merchant, NOTES, Via};
use super::rng::Rng;
use super::setup::Setup;

/// How far after today scheduled (PENDING) rows reach.
pub(super) const FUTURE_DAYS: i64 = 30;

pub(super) fn add_days(date: Date, days: i64) -> Option<Date> {
    date.checked_add(Span::new().try_days(days).ok()?).ok()
}

pub(super) fn days_between(from: Date, to: Date) -> i64 {
    from.until(to).map_or(0, |s| i64::from(s.get_days()))
}

pub(super) fn timestamp_of(date: Date, fallback: Timestamp) -> Timestamp {
    date.at(12, 0, 0, 0)
        .to_zoned(TimeZone::UTC)
        .map_or(fallback, |z| z.timestamp())
}

pub(super) struct Builder<'a> {
    pub rng: Rng,
    pub setup: &'a Setup,
    pub today: Date,
    /// The history's first day.
    pub start: Date,
    pub span_days: i64,
    /// The first day of card purchases (no card rows before it).
    pub card_start: Date,
    pub rows: Vec<ImportRow>,
}

impl Builder<'_> {
    /// Prices grow along the history (about 1.8x over ten years).
    pub fn inflate(&self, cents: i64, date: Date) -> i64 {
        let done = days_between(self.start, date).clamp(0, self.span_days.max(1));
        let permille = 550 + 450 * done / self.span_days.max(1);
        (cents * permille / 1000).max(1)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        account_id: AccountId,
        date: Date,
        tx_type: TxType,
        cents: i64,
        description: &str,
        category: &str,
        link: SeriesLink,
    ) {
        let state = TransactionState {
            date,
            tx_type,
            status: TxStatus::default_for(date, self.today),
            amount: Money::from_cents(cents.max(1)),
            description: description.to_owned(),
            notes: None,
            category_id: self.setup.category(category),
            tag_ids: Vec::new(),
            hide_from_results: false,
        };
        self.rows.push(ImportRow {
            id: TransactionId::new(),
            account_id,
            state,
            link,
            payment: None,
        });
    }

    /// A card by the catalogue's shares (the first takes most purchases).
    pub fn pick_card(&mut self) -> Option<AccountId> {
        let cards = &self.setup.accounts.cards;
        let index = self
            .rng
            .weighted(CARDS.iter().take(cards.len()).map(|c| c.4))?;
        cards.get(index).map(|card| card.id)
    }

    /// One everyday row: a weighted merchant on a random day of the
    /// history (a few scheduled in the coming weeks), sometimes tagged or
    /// annotated, now and then refunded on its card. Rows land on a card
    /// only when `card` allows it and the day lies in the card window (up
    /// to today: nothing is scheduled on a card). `budget`: the row count a
    /// refund must not push the batch past.
    pub fn everyday(&mut self, card: bool, budget: usize) {
        let accounts = self.setup.accounts.clone();
        let today = self.today;
        let date = if self.rng.chance(8) {
            add_days(today, self.rng.range(1, FUTURE_DAYS))
        } else {
            add_days(self.start, self.rng.range(0, self.span_days))
        }
        .unwrap_or(today);
        let index = self
            .rng
            .weighted(MERCHANTS.iter().map(|m| u64::from(m.4)))
            .unwrap_or(0);
        let merchant = &MERCHANTS[index];
        let Merchant(description, category, min, max, _, via, tx_type) = *merchant;
        let roll = self.rng.below(100);
        let card_day = card && self.card_start <= date && date <= today;
        let bank = |share: u64| match accounts.second_bank {
            Some(second) if roll < share => Some(second),
            _ => Some(accounts.checking),
        };
        let account = match (via, tx_type) {
            (_, TxType::Credit) | (Via::Bank, _) => bank(20),
            (Via::Card, _) if card_day && roll < 85 => self.pick_card(),
            (Via::Card, _) => Some(accounts.checking),
            (Via::Any, _) if card_day && roll < 55 => self.pick_card(),
            // Without a card, as many on the second bank as with one.
            (Via::Any, _) if card_day => bank(65),
            (Via::Any, _) => bank(22),
        }
        .unwrap_or(accounts.checking);
        let raw = self.rng.range(min, max);
        let cents = self.inflate(raw, date);
        self.push(
            account,
            date,
            tx_type,
            cents,
            description,
            category,
            SeriesLink::None,
        );
        let on_card = accounts.is_card(account);
        let recent_card = on_card && days_between(date, today) < 2;
        let tagged = self.rng.chance(40);
        let two_tags = self.rng.chance(5);
        let noted = self.rng.chance(30);
        let setup = self.setup;
        let tags = &setup.tags;
        let first_tag = tags
            .get(self.rng.below(tags.len() as u64) as usize)
            .copied();
        let second_tag = tags
            .get(self.rng.below(tags.len() as u64) as usize)
            .copied();
        let note = *self.rng.pick(NOTES);
        let refund = self.rng.chance(6);
        if let Some(row) = self.rows.last_mut() {
            if recent_card {
                // Card purchases of the last two days are not settled yet.
                row.state.status = TxStatus::Pending;
            }
            if (tagged || two_tags)
                && let Some(tag) = first_tag
            {
                row.state.tag_ids.push(tag);
            }
            if two_tags
                && let Some(tag) = second_tag
                && !row.state.tag_ids.contains(&tag)
            {
                row.state.tag_ids.push(tag);
            }
            if noted {
                row.state.notes = Some(note.to_owned());
            }
        }
        // A refund on the card a few days later: a CREDIT the bill subtracts.
        if on_card && tx_type == TxType::Debit && refund && self.rows.len() < budget {
            let back = add_days(date, self.rng.range(2, 12))
                .unwrap_or(date)
                .min(today);
            let part = if self.rng.chance(500) {
                cents
            } else {
                (cents * self.rng.range(20, 90) / 100).max(1)
            };
            self.push(
                account,
                back,
                TxType::Credit,
                part,
                &format!("Estorno - {description}"),
                category,
                SeriesLink::None,
            );
        }
    }
}
