//! The batch: monthly rows, rules and plans with some of their entries
//! stored, everyday rows up to the row count, and the card bill payments.

use jiff::civil::Date;
use jiff::{Span, Timestamp};

use cofre_domain::projection::{Frequency, InstallmentPlan, RecurrenceRule, Schedule, Template};
use cofre_domain::transaction::{SeriesLink, TxType};
use cofre_domain::{AccountId, CategoryId, Money, PurchaseId, RuleId, UserId};
use cofre_store::{ImportBatch, ImportRow};

use super::builder::{Builder, FUTURE_DAYS, add_days, days_between, timestamp_of};
use super::cards::{due_bills, pay_bills, payment_rows};
use super::catalogue::{
    FIXED, Fixed, MONTHLY_RULES, PLANS, PlanKind, RuleKind, Slot, WEEKLY_RULES,
};
use super::rng::Rng;
use super::setup::Setup;
use super::{DemoError, Spec};

use TxType::{Credit, Debit};

/// About where the checking balance ends, in cents.
const CHECKING_TARGET: i64 = 1_800_000;
/// How far back rules start at most, in days (about four years).
const RULE_START_DAYS: i64 = 1_400;

/// Builds the batch for `spec`: exactly `spec.rows` stored rows, unless the
/// monthly rows, rule occurrences, installments and bill payments alone are
/// more.
pub fn generate(
    spec: &Spec,
    seed: u64,
    user: UserId,
    setup: &Setup,
    now: Timestamp,
    today: Date,
) -> Result<ImportBatch, DemoError> {
    let start = today
        .checked_sub(Span::new().years(spec.years.max(1)))
        .map_err(|e| DemoError::Invalid(format!("history start before {today}: {e}")))?;
    let card_start = today
        .checked_sub(Span::new().months(spec.card_months.max(1)))
        .map_err(|e| DemoError::Invalid(format!("card start before {today}: {e}")))?
        .max(start);
    let accounts = setup.accounts.clone();
    let mut b = Builder {
        rng: Rng::new(seed),
        setup,
        today,
        start,
        span_days: days_between(start, today).max(1),
        card_start,
        rows: Vec::with_capacity(spec.rows),
    };

    // Opening balances: hidden rows on the first day.
    let mut openings = vec![(accounts.checking, 350_000)];
    if let Some(savings) = accounts.savings {
        openings.push((savings, 1_000_000));
    }
    if let Some(second) = accounts.second_bank {
        openings.push((second, 120_000));
    }
    for (account, cents) in openings {
        b.push(
            account,
            start,
            Credit,
            cents,
            "Saldo inicial",
            "Outros",
            SeriesLink::None,
        );
        if let Some(row) = b.rows.last_mut() {
            row.state.hide_from_results = true;
        }
    }

    let salaries = monthly_rows(&mut b);

    let rules = make_rules(&mut b, spec.rules, user, now);
    let plans = make_plans(&mut b, spec.plans, user, now);
    series_rows(&mut b, &rules, &plans);

    // Everyday rows fill the rest, but for the bill payments, whose number
    // is known now and whose amounts once the card rows are all made.
    let bills = due_bills(&accounts.cards, card_start, today);
    let budget = spec.rows.saturating_sub(payment_rows(&bills));
    while b.rows.len() < budget {
        b.everyday(true, budget);
    }
    pay_bills(&mut b, &bills, &rules, &plans);

    // A bill with nothing to pay left its rows unused: top up off the
    // cards, so no bill changes.
    while b.rows.len() < spec.rows {
        b.everyday(false, spec.rows);
    }

    raise_salaries(&mut b.rows, &salaries, accounts.checking);
    // Written in the order the rows happened, as a history grown by use
    // is: made kind by kind (salaries, then each rule's rows, then
    // everyday rows on random days), a period's rows would lie scattered
    // over the whole table, one to a page, which no lived-in database
    // does. A day's rows keep the order they were made in.
    b.rows.sort_by_key(|row| row.state.date);
    Ok(ImportBatch {
        rows: b.rows,
        rules,
        plans,
    })
}

/// The stored entries of rules and plans. On a card everything up to
/// today is stored, as on a card statement (so a card's balance is what
/// its unpaid bills owe), but for one cheap subscription in eight and one
/// purchase in twenty, left projected as the API leaves them until they
/// are confirmed: a few paid bills hold projected entries. Elsewhere the
/// last one or two occurrences of a quarter of the rules, installment 1 of
/// every plan (as the API stores it) and every installment up to today of
/// a third of them.
fn series_rows(b: &mut Builder<'_>, rules: &[RecurrenceRule], plans: &[InstallmentPlan]) {
    let today = b.today;
    let setup = b.setup;
    for (i, rule) in rules.iter().enumerate() {
        let on_card = setup.accounts.is_card(rule.account_id);
        let keep = match (on_card, i % 8 == 1, i % 4 == 0) {
            (true, false, _) => usize::MAX,
            (false, _, true) => 1 + (i / 4) % 2,
            _ => 0,
        };
        let dates: Vec<Date> = rule
            .schedule
            .descending(rule.schedule.start, today)
            .take(keep)
            .map(|(_, d)| d)
            .collect();
        for date in dates {
            let t = &rule.template;
            // Bank debits vary a little (a bill); a card subscription does not.
            let cents = if on_card {
                t.amount.cents()
            } else {
                t.amount.cents() + b.rng.range(0, t.amount.cents() / 20)
            };
            let link = SeriesLink::Recurrence {
                rule_id: rule.id,
                period_date: date,
            };
            let category = category_title(setup, t.category_id);
            b.push(
                rule.account_id,
                date,
                t.tx_type,
                cents,
                &t.description,
                category,
                link,
            );
        }
    }
    for (i, plan) in plans.iter().enumerate() {
        let upto = match (setup.accounts.is_card(plan.account_id), i) {
            (true, i) if i % 20 != 7 => plan.count,
            (false, i) if i % 3 == 0 => plan.count,
            _ => 1,
        };
        for number in 1..=upto {
            let Some(date) = plan.date_of(number) else {
                continue;
            };
            if number > 1 && date > today {
                break;
            }
            let t = &plan.template;
            let category = category_title(setup, t.category_id);
            let link = SeriesLink::Installment {
                purchase_id: plan.id,
                number,
            };
            b.push(
                plan.account_id,
                date,
                t.tx_type,
                plan.amount_of(number).cents(),
                &t.description,
                category,
                link,
            );
            if let Some(row) = b.rows.last_mut() {
                row.state.tag_ids = t.tag_ids.clone();
            }
        }
    }
}

/// Salary, rent, utilities, savings and its interest, every month of the
/// history and the coming weeks. Returns the indexes of the salary rows.
fn monthly_rows(b: &mut Builder<'_>) -> Vec<usize> {
    let accounts = b.setup.accounts.clone();
    let last_day = add_days(b.today, FUTURE_DAYS).unwrap_or(b.today);
    let mut savings_balance: i64 = 1_000_000;
    let mut salaries: Vec<usize> = Vec::new();
    for month in month_starts(b.start, last_day) {
        for fixed in FIXED {
            let Fixed(description, category, day, min, max, slot, tx_type) = *fixed;
            let account = match slot {
                Slot::Checking => Some(accounts.checking),
                Slot::Savings => accounts.savings,
                Slot::Second => accounts.second_bank,
            };
            let Some(account) = account else { continue };
            let Ok(date) = Date::new(month.year(), month.month(), day) else {
                continue;
            };
            if date < b.start || date > last_day {
                continue;
            }
            let raw = b.rng.range(min, max);
            let cents = b.inflate(raw, date);
            if let Slot::Savings = slot {
                // A transfer: out of checking, into savings, then interest.
                b.push(
                    accounts.checking,
                    date,
                    Debit,
                    cents,
                    description,
                    category,
                    SeriesLink::None,
                );
                b.push(
                    account,
                    date,
                    Credit,
                    cents,
                    "Aplicação recebida",
                    "Investimentos",
                    SeriesLink::None,
                );
                savings_balance += cents;
                if let Ok(day_28) = Date::new(month.year(), month.month(), 28)
                    && day_28 <= last_day
                {
                    let interest = (savings_balance * 6 / 1000).max(1);
                    savings_balance += interest;
                    b.push(
                        account,
                        day_28,
                        Credit,
                        interest,
                        "Rendimento da poupança",
                        "Investimentos",
                        SeriesLink::None,
                    );
                }
                continue;
            }
            if tx_type == Credit && account == accounts.checking {
                salaries.push(b.rows.len());
            }
            b.push(
                account,
                date,
                tx_type,
                cents,
                description,
                category,
                SeriesLink::None,
            );
        }
    }
    salaries
}

/// However busy the history, income covers it: salaries grow so that
/// checking ends the history with a modest positive balance.
fn raise_salaries(rows: &mut [ImportRow], salaries: &[usize], checking: AccountId) {
    let flow: i64 = rows
        .iter()
        .filter(|r| r.account_id == checking)
        .map(|r| match r.state.tx_type {
            Credit => r.state.amount.cents(),
            Debit => -r.state.amount.cents(),
        })
        .sum();
    let missing = CHECKING_TARGET - flow;
    let paid: i64 = salaries
        .iter()
        .filter_map(|&i| rows.get(i))
        .map(|r| r.state.amount.cents())
        .sum();
    if missing <= 0 || paid <= 0 {
        return;
    }
    for &i in salaries {
        if let Some(row) = rows.get_mut(i) {
            let cents = row.state.amount.cents();
            let raise = i128::from(missing) * i128::from(cents) / i128::from(paid);
            row.state.amount = Money::from_cents(cents + i64::try_from(raise).unwrap_or(0));
        }
    }
}

fn category_title(setup: &Setup, id: Option<CategoryId>) -> &str {
    id.and_then(|id| {
        setup
            .categories
            .iter()
            .find(|(_, c)| **c == id)
            .map(|(t, _)| t.as_str())
    })
    .unwrap_or("")
}

/// The first day of every month from `from`'s month through `to`'s.
fn month_starts(from: Date, to: Date) -> Vec<Date> {
    let mut out = Vec::new();
    let Ok(mut month) = Date::new(from.year(), from.month(), 1) else {
        return out;
    };
    while month <= to {
        out.push(month);
        match month.checked_add(Span::new().months(1)) {
            Ok(next) => month = next,
            Err(_) => break,
        }
    }
    out
}

/// Card `i` of the setup, by turns; checking when there is no card.
fn card_for(b: &Builder<'_>, i: usize) -> AccountId {
    let cards = &b.setup.accounts.cards;
    cards
        .get(i % cards.len().max(1))
        .map_or(b.setup.accounts.checking, |c| c.id)
}

/// Monthly and weekly rules (about 70/30), started in the past (on a card:
/// in the card window), still active.
fn make_rules(
    b: &mut Builder<'_>,
    count: usize,
    user: UserId,
    now: Timestamp,
) -> Vec<RecurrenceRule> {
    let today = b.today;
    let weekly_count = count * 3 / 10;
    let mut rules = Vec::with_capacity(count);
    for i in 0..count {
        let weekly = i >= count - weekly_count;
        let (list, frequency) = if weekly {
            (WEEKLY_RULES, Frequency::Weekly)
        } else {
            (MONTHLY_RULES, Frequency::Monthly)
        };
        let index = if weekly {
            i - (count - weekly_count)
        } else {
            i
        };
        let RuleKind(description, category, min, max, on_card, tx_type) = list[index % list.len()];
        let round = index / list.len();
        let description = if round == 0 {
            description.to_owned()
        } else {
            format!("{description} ({})", round + 1)
        };
        let on_card = on_card && !b.setup.accounts.cards.is_empty();
        let earliest = if on_card { b.card_start } else { b.start };
        let back = days_between(earliest, today).clamp(20, RULE_START_DAYS);
        let start = add_days(today, -b.rng.range(20, back)).unwrap_or(today);
        // Some rules end, but not before a year from now.
        let end_date = if i % 5 == 4 {
            add_days(today, b.rng.range(366, 1_000))
        } else {
            None
        };
        let interval = if weekly && index % 6 == 5 { 2 } else { 1 };
        let account_id = if on_card {
            card_for(b, i)
        } else {
            match b.setup.accounts.second_bank {
                Some(second) if i % 7 == 3 => second,
                _ => b.setup.accounts.checking,
            }
        };
        let cents = b.rng.range(min, max);
        rules.push(RecurrenceRule {
            id: RuleId::new(),
            user_id: user,
            account_id,
            template: Template {
                tx_type,
                amount: Money::from_cents(cents),
                description,
                notes: None,
                category_id: b.setup.category(category),
                tag_ids: Vec::new(),
            },
            schedule: Schedule {
                frequency,
                interval,
                start,
                end_date,
                count: None,
            },
            created_at: timestamp_of(start, now),
        });
    }
    rules
}

/// Installment purchases on the cards (by turns), 2 to 12 installments and
/// a few of 18 or 24. Most first dates lie in the last ~11 months, a third
/// anywhere in the card window, and one in ten in the coming weeks, so
/// many are still running and future installments exist.
fn make_plans(
    b: &mut Builder<'_>,
    count: usize,
    user: UserId,
    now: Timestamp,
) -> Vec<InstallmentPlan> {
    let today = b.today;
    let window = days_between(b.card_start, today);
    let mut plans = Vec::with_capacity(count);
    for i in 0..count {
        let PlanKind(description, category, min, max, max_count, tag) = PLANS[i % PLANS.len()];
        let installments = match i % 15 {
            4 if max_count >= 10 => 18,
            11 if max_count >= 10 => 24,
            _ => b.rng.range(2, max_count.clamp(2, 12)),
        };
        let first_date = if i % 10 == 9 {
            add_days(today, b.rng.range(1, 25))
        } else if i % 3 == 0 {
            add_days(today, -b.rng.range(0, window))
        } else {
            add_days(today, -b.rng.range(0, window.min(330)))
        }
        .unwrap_or(today);
        let tag_ids = tag
            .and_then(|t| b.setup.tags.get(t).copied())
            .into_iter()
            .collect();
        plans.push(InstallmentPlan {
            id: PurchaseId::new(),
            user_id: user,
            account_id: card_for(b, i),
            template: Template {
                tx_type: Debit,
                amount: Money::from_cents(b.rng.range(min, max)),
                description: description.to_owned(),
                notes: None,
                category_id: b.setup.category(category),
                tag_ids,
            },
            count: u16::try_from(installments).unwrap_or(2),
            first_date,
            hidden: false,
            created_at: timestamp_of(first_date.min(today), now),
        });
    }
    plans
}
