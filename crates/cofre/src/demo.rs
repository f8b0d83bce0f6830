//! `cofre demo-data`: fills an existing user with realistic data (see
//! `cofre_demo` for what is generated).

use clap::ValueEnum;
use std::time::Instant;

use cofre_demo::{self as demo, DEFAULT_SEED, DemoError, Profile};
use cofre_domain::UserId;
use cofre_domain::time::{Clock, format_date};
use cofre_store::Store;

/// How much data to generate.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DemoProfile {
    /// Checking and a credit card, about 300 rows over a year, 5 rules, 4
    /// installment plans, the card's past bills paid.
    Small,
    /// 3 bank accounts and 3 credit cards, 50,000 rows over 10 years (5
    /// years of card purchases, their bills paid), 40 rules, 60
    /// installment plans on the cards.
    Heavy,
}

impl DemoProfile {
    fn profile(self) -> Profile {
        match self {
            DemoProfile::Small => Profile::Small,
            DemoProfile::Heavy => Profile::Heavy,
        }
    }

    fn name(self) -> &'static str {
        match self {
            DemoProfile::Small => "small",
            DemoProfile::Heavy => "heavy",
        }
    }
}

pub async fn run(
    store: &dyn Store,
    clock: &Clock,
    user: &str,
    profile: DemoProfile,
    seed: Option<u64>,
) -> Result<(), String> {
    let user = UserId::parse(user.trim())
        .ok_or_else(|| format!("--user must be a user id (UUID), not {user:?}"))?;
    let started = Instant::now();
    let summary = demo::fill(
        store,
        user,
        &profile.profile().spec(),
        seed.unwrap_or(DEFAULT_SEED),
        clock.now(),
        clock.today(),
    )
    .await
    .map_err(|e| match e {
        DemoError::NoSuchUser(id) => format!(
            "no user with id {id} in this database (create one with `cofre users create --name ...`)"
        ),
        other => format!("demo data not written: {other}"),
    })?;
    let span = match (summary.first_date, summary.last_date) {
        (Some(first), Some(last)) => format!("{} to {}", format_date(first), format_date(last)),
        _ => "no dates".to_owned(),
    };
    let cards = match summary.cards {
        1 => "1 card".to_owned(),
        n => format!("{n} cards"),
    };
    println!(
        "demo-data ({}) for user {user}: {} accounts ({cards}), {} tags, {} rows ({} of rules and installments, \
         {} bill payments, {span}), {} recurrence rules, {} installment plans, {} budgets in {:.1}s",
        profile.name(),
        summary.accounts,
        summary.tags,
        summary.rows,
        summary.linked_rows,
        summary.bill_payments,
        summary.rules,
        summary.plans,
        summary.budgets,
        started.elapsed().as_secs_f64(),
    );
    Ok(())
}
