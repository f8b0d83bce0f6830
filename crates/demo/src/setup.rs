//! The accounts, cards and tags demo rows land on, created through the
//! store, and the categories they name, read back.

use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::HashMap;

use cofre_domain::account::{AccountChanges, AccountType, Patch, SubType};
use cofre_domain::card::Cycles;
use cofre_domain::tag::new_tag;
use cofre_domain::{AccountId, CategoryId, Money, TagId, UserId};
use cofre_store::{Store, WriteContext};

use super::catalogue::{CARDS, CardKind, TAGS};
use super::{DemoError, Spec};

/// A credit card of the demo, paid from checking.
#[derive(Clone, Debug)]
pub struct DemoCard {
    pub id: AccountId,
    pub title: String,
    /// Its billing cycles, from the settings the store saved.
    pub cycles: Cycles,
}

/// The accounts the data lands on.
#[derive(Clone, Debug)]
pub struct DemoAccounts {
    pub checking: AccountId,
    pub savings: Option<AccountId>,
    pub second_bank: Option<AccountId>,
    /// In catalogue order: the first takes the largest share of purchases.
    pub cards: Vec<DemoCard>,
}

impl DemoAccounts {
    pub fn is_card(&self, id: AccountId) -> bool {
        self.cards.iter().any(|c| c.id == id)
    }
}

/// What [`generate`](super::generate) needs from the database.
#[derive(Clone, Debug)]
pub struct Setup {
    pub accounts: DemoAccounts,
    /// Visible categories by exact title.
    pub categories: HashMap<String, CategoryId>,
    /// The demo tags, in [`TAGS`] order.
    pub tags: Vec<TagId>,
}

impl Setup {
    pub(super) fn category(&self, title: &str) -> Option<CategoryId> {
        self.categories.get(title).copied()
    }
}

/// How many times the catalogue's card limits a user gets: they fit about
/// 40 rows a month (the small profile has 25); the heavy profile, with
/// about 400, spends ten times as much on its cards.
fn limit_scale(spec: &Spec) -> i64 {
    let months = usize::try_from(spec.years.max(1)).unwrap_or(1) * 12;
    i64::try_from(spec.rows / months / 40)
        .unwrap_or(i64::MAX)
        .clamp(1, 20)
}

/// Creates the accounts, cards and tags and reads the categories.
pub async fn prepare(
    store: &dyn Store,
    user: UserId,
    spec: &Spec,
    now: Timestamp,
    today: Date,
) -> Result<Setup, DemoError> {
    let ctx = WriteContext { now, today };
    let bank = |title: &str, sub_type: SubType, icon: &str| AccountChanges {
        account_type: Some(AccountType::Bank),
        sub_type: Some(sub_type),
        title: Some(title.to_owned()),
        icon_name: Some(icon.to_owned()),
        ..AccountChanges::default()
    };
    let create = |changes: AccountChanges| async move {
        store
            .create_account(user, &changes, None, "BRL", ctx)
            .await
            .map(|(view, _)| view.account)
    };
    let checking = create(bank("Nubank", SubType::CheckingAccount, "bank"))
        .await?
        .id;
    let savings = if spec.all_accounts {
        let changes = bank("Poupança Caixa", SubType::SavingsAccount, "piggy-bank");
        Some(create(changes).await?.id)
    } else {
        None
    };
    let second_bank = if spec.all_accounts {
        Some(
            create(bank("Itaú", SubType::CheckingAccount, "bank"))
                .await?
                .id,
        )
    } else {
        None
    };
    let mut cards = Vec::new();
    let scale = limit_scale(spec);
    for &CardKind(title, due_day, limit, artwork, _) in CARDS.iter().take(spec.cards) {
        let account = create(AccountChanges {
            account_type: Some(AccountType::Credit),
            sub_type: Some(SubType::CreditCard),
            title: Some(title.to_owned()),
            icon_name: Some("credit-card".into()),
            card_icon_id: Some(artwork.into()),
            credit_limit: Patch::Set(Money::from_cents(limit * scale)),
            credit_due_day: Some(i64::from(due_day)),
            credit_cycle_auto: Some(true),
            pay_bill_from_account_id: Patch::Set(checking),
            ..AccountChanges::default()
        })
        .await?;
        let credit = account.state.credit.as_ref().ok_or_else(|| {
            DemoError::Invalid(format!("card {title:?} was stored without credit settings"))
        })?;
        cards.push(DemoCard {
            id: account.id,
            title: title.to_owned(),
            cycles: Cycles::of(credit),
        });
    }

    let existing = store.list_tags(user).await?;
    let mut tags = Vec::with_capacity(TAGS.len());
    for (title, color) in TAGS {
        let new = new_tag(title, color).map_err(|e| DemoError::Invalid(format!("{e:?}")))?;
        let id = match existing
            .iter()
            .find(|t| t.title.to_lowercase() == new.title_key)
        {
            Some(tag) => tag.id,
            None => store.create_tag(user, &new, now).await?.id,
        };
        tags.push(id);
    }

    let categories = store
        .list_categories(user)
        .await?
        .iter()
        .filter(|c| !c.archived)
        .map(|c| (c.title.clone(), c.id))
        .collect();
    Ok(Setup {
        accounts: DemoAccounts {
            checking,
            savings,
            second_bank,
            cards,
        },
        categories,
        tags,
    })
}
