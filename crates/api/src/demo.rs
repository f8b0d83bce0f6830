//! Demo data: a user with a lived-in history (accounts, tags, years of
//! rows, recurrence rules and installment purchases), so a newcomer sees a
//! realistic account and benchmarks share one dataset. Everything is built
//! with the domain types and written through the [`Store`]: the accounts and
//! tags one by one, the rest in one [`Store::import`] (all or nothing).
//!
//! Content is deterministic for a seed (a small splitmix64 generator, no
//! dependency); ids are fresh, so two runs differ only in ids.

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};
use std::collections::{BTreeMap, HashMap};

use cofre_domain::account::{AccountChanges, AccountType, Patch, SubType};
use cofre_domain::projection::{Frequency, InstallmentPlan, RecurrenceRule, Schedule, Template};
use cofre_domain::tag::new_tag;
use cofre_domain::transaction::{SeriesLink, TransactionState, TxStatus, TxType};
use cofre_domain::{
    AccountId, CategoryId, Money, PurchaseId, RuleId, TagId, TransactionId, UserId,
};
use cofre_store::{ImportBatch, ImportRow, Store, StoreError, WriteContext};

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 0x00C0_FFEE_2026;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// 2 accounts, about 300 rows over a year, 5 rules, 4 plans.
    Small,
    /// 4 accounts, 50,000 rows over 10 years, 40 rules, 60 plans.
    Heavy,
}

impl Profile {
    pub fn spec(self) -> Spec {
        match self {
            Profile::Small => Spec {
                all_accounts: false,
                rows: 300,
                years: 1,
                rules: 5,
                plans: 4,
            },
            Profile::Heavy => Spec {
                all_accounts: true,
                rows: 50_000,
                years: 10,
                rules: 40,
                plans: 60,
            },
        }
    }
}

/// How much to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Checking, savings, a second bank and a card; otherwise checking and card.
    pub all_accounts: bool,
    /// Stored rows, all kinds included (hidden opening balances, rows of
    /// rules and plans, bill payments).
    pub rows: usize,
    /// Years of history up to today.
    pub years: i16,
    /// Active recurrence rules (monthly and weekly).
    pub rules: usize,
    /// Installment purchases.
    pub plans: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("no user with id {0}")]
    NoSuchUser(UserId),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub accounts: usize,
    pub tags: usize,
    pub rows: usize,
    /// Of `rows`, those that are an occurrence of a rule or an installment.
    pub linked_rows: usize,
    pub rules: usize,
    pub plans: usize,
    pub first_date: Option<Date>,
    pub last_date: Option<Date>,
}

/// The accounts the data lands on.
#[derive(Clone, Debug)]
pub struct DemoAccounts {
    pub checking: AccountId,
    pub card: AccountId,
    pub savings: Option<AccountId>,
    pub second_bank: Option<AccountId>,
}

/// What [`generate`] needs from the database.
#[derive(Clone, Debug)]
pub struct Setup {
    pub accounts: DemoAccounts,
    /// Visible categories by exact title.
    pub categories: HashMap<String, CategoryId>,
    /// The demo tags, in [`TAGS`] order.
    pub tags: Vec<TagId>,
}

impl Setup {
    fn category(&self, title: &str) -> Option<CategoryId> {
        self.categories.get(title).copied()
    }
}

/// Tags the demo creates (or reuses when the user already has them).
pub const TAGS: [(&str, &str); 6] = [
    ("Viagem", "#1ABC9C"),
    ("Trabalho", "#3498DB"),
    ("Reembolsável", "#E67E22"),
    ("Presente", "#E84393"),
    ("Casa", "#8E44AD"),
    ("Pet", "#A0522D"),
];
const TAG_TRAVEL: usize = 0;
const TAG_HOME: usize = 4;

/// Fills `user` with demo data. Fails before writing anything when the user
/// does not exist; the rows, rules and plans are written in one transaction.
pub async fn fill(
    store: &dyn Store,
    user: UserId,
    spec: &Spec,
    seed: u64,
    now: Timestamp,
    today: Date,
) -> Result<Summary, DemoError> {
    match store.get_profile(user).await {
        Err(StoreError::NotFound) => return Err(DemoError::NoSuchUser(user)),
        other => other?,
    };
    let setup = prepare(store, user, spec, now, today).await?;
    let batch = generate(spec, seed, user, &setup, now, today)?;
    store.import(user, &batch, now).await?;
    Ok(summarize(&setup, &batch))
}

/// Creates the accounts and tags and reads the categories.
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
            .map(|(view, _)| view.account.id)
    };
    let checking = create(bank("Nubank", SubType::CheckingAccount, "bank")).await?;
    let savings = if spec.all_accounts {
        Some(
            create(bank(
                "Poupança Caixa",
                SubType::SavingsAccount,
                "piggy-bank",
            ))
            .await?,
        )
    } else {
        None
    };
    let second_bank = if spec.all_accounts {
        Some(create(bank("Itaú", SubType::CheckingAccount, "bank")).await?)
    } else {
        None
    };
    let card = create(AccountChanges {
        account_type: Some(AccountType::Credit),
        sub_type: Some(SubType::CreditCard),
        title: Some("Cartão Nubank".into()),
        icon_name: Some("credit-card".into()),
        card_icon_id: Some("card-mastercard".into()),
        credit_limit: Patch::Set(Money::from_cents(if spec.all_accounts {
            6_000_000
        } else {
            800_000
        })),
        credit_due_day: Some(i64::from(BILL_DUE_DAY)),
        pay_bill_from_account_id: Patch::Set(checking),
        ..AccountChanges::default()
    })
    .await?;

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
        .into_iter()
        .filter(|c| !c.archived)
        .map(|c| (c.title, c.id))
        .collect();
    Ok(Setup {
        accounts: DemoAccounts {
            checking,
            card,
            savings,
            second_bank,
        },
        categories,
        tags,
    })
}

fn summarize(setup: &Setup, batch: &ImportBatch) -> Summary {
    let a = &setup.accounts;
    Summary {
        accounts: 2 + usize::from(a.savings.is_some()) + usize::from(a.second_bank.is_some()),
        tags: setup.tags.len(),
        rows: batch.rows.len(),
        linked_rows: batch
            .rows
            .iter()
            .filter(|r| r.link != SeriesLink::None)
            .count(),
        rules: batch.rules.len(),
        plans: batch.plans.len(),
        first_date: batch.rows.iter().map(|r| r.state.date).min(),
        last_date: batch.rows.iter().map(|r| r.state.date).max(),
    }
}

// ------------------------------------------------------------ randomness

/// splitmix64: tiny, fast, and good enough for demo data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

// ------------------------------------------------------------ catalogue

#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// Mostly the credit card.
    Card,
    /// Mostly the checking account (some on the second bank).
    Bank,
    /// Card, checking or second bank.
    Any,
}

/// A kind of everyday row: (description, category, min cents, max cents,
/// weight, where it is paid, type).
struct Merchant(&'static str, &'static str, i64, i64, u32, Via, TxType);

use TxType::{Credit, Debit};
use Via::{Any, Bank, Card};

#[rustfmt::skip]
const MERCHANTS: &[Merchant] = &[
    Merchant("Padaria Pão Quente", "Padaria e café", 600, 4_500, 10, Any, Debit),
    Merchant("Padaria Real", "Padaria e café", 800, 3_800, 6, Any, Debit),
    Merchant("Starbucks", "Padaria e café", 1_200, 4_800, 3, Card, Debit),
    Merchant("Mercado Extra", "Mercado", 3_500, 42_000, 8, Card, Debit),
    Merchant("Carrefour", "Mercado", 5_000, 65_000, 5, Card, Debit),
    Merchant("Pão de Açúcar", "Mercado", 2_500, 38_000, 5, Card, Debit),
    Merchant("Assaí Atacadista", "Mercado", 15_000, 95_000, 2, Card, Debit),
    Merchant("Hortifruti", "Mercado", 1_800, 9_500, 4, Any, Debit),
    Merchant("iFood", "Delivery", 2_500, 13_000, 9, Card, Debit),
    Merchant("Rappi", "Delivery", 2_200, 9_800, 3, Card, Debit),
    Merchant("Uber", "Táxi e aplicativos", 900, 6_500, 9, Card, Debit),
    Merchant("99", "Táxi e aplicativos", 800, 4_200, 4, Card, Debit),
    Merchant("Posto Ipiranga", "Combustível", 8_000, 32_000, 4, Card, Debit),
    Merchant("Posto Shell", "Combustível", 8_000, 30_000, 3, Card, Debit),
    Merchant("Drogasil", "Farmácia", 1_500, 18_000, 4, Card, Debit),
    Merchant("Droga Raia", "Farmácia", 1_200, 15_000, 3, Card, Debit),
    Merchant("Restaurante Coco Bambu", "Restaurantes", 9_000, 38_000, 2, Card, Debit),
    Merchant("Outback Steakhouse", "Restaurantes", 8_000, 32_000, 2, Card, Debit),
    Merchant("Lanchonete da Esquina", "Restaurantes", 1_500, 4_500, 5, Any, Debit),
    Merchant("Restaurante por quilo", "Restaurantes", 2_200, 6_500, 6, Any, Debit),
    Merchant("Amazon", "Compras", 2_500, 42_000, 4, Card, Debit),
    Merchant("Mercado Livre", "Compras", 2_000, 55_000, 4, Card, Debit),
    Merchant("Shopee", "Compras", 1_500, 16_000, 3, Card, Debit),
    Merchant("Renner", "Roupas", 6_000, 42_000, 2, Card, Debit),
    Merchant("C&A", "Roupas", 4_000, 30_000, 2, Card, Debit),
    Merchant("Zara", "Roupas", 9_000, 60_000, 1, Card, Debit),
    Merchant("Cinemark", "Cinema e shows", 2_500, 9_000, 2, Card, Debit),
    Merchant("Ingresso.com", "Cinema e shows", 4_000, 48_000, 1, Card, Debit),
    Merchant("Petz", "Pets", 4_000, 26_000, 2, Card, Debit),
    Merchant("Cobasi", "Pets", 3_000, 22_000, 1, Card, Debit),
    Merchant("Livraria Cultura", "Livros", 3_000, 16_000, 1, Card, Debit),
    Merchant("Sem Parar", "Estacionamento e pedágio", 1_000, 8_500, 2, Card, Debit),
    Merchant("Estacionamento Shopping", "Estacionamento e pedágio", 800, 3_200, 2, Any, Debit),
    Merchant("Metrô SP", "Transporte público", 440, 2_000, 3, Bank, Debit),
    Merchant("Recarga Bilhete Único", "Transporte público", 2_000, 10_000, 2, Bank, Debit),
    Merchant("Barbearia do Zé", "Cuidados pessoais", 4_000, 9_000, 1, Bank, Debit),
    Merchant("Salão de beleza", "Cuidados pessoais", 6_000, 26_000, 1, Card, Debit),
    Merchant("Consulta médica", "Consultas e exames", 20_000, 55_000, 1, Bank, Debit),
    Merchant("Laboratório Fleury", "Consultas e exames", 8_000, 40_000, 1, Card, Debit),
    Merchant("Fast Shop", "Eletrônicos", 15_000, 350_000, 1, Card, Debit),
    Merchant("Booking.com", "Viagens", 30_000, 240_000, 1, Card, Debit),
    Merchant("Pix enviado", "Transferência", 1_000, 60_000, 3, Bank, Debit),
    Merchant("Saque Banco24Horas", "Outros", 5_000, 40_000, 1, Bank, Debit),
    Merchant("Pix recebido", "Outras receitas", 2_000, 50_000, 3, Bank, Credit),
    Merchant("Reembolso", "Outras receitas", 3_000, 30_000, 1, Bank, Credit),
    Merchant("Freelance - nota fiscal", "Outras receitas", 80_000, 450_000, 1, Bank, Credit),
];

const MERCHANT_WEIGHT: u64 = {
    let mut sum = 0;
    let mut i = 0;
    while i < MERCHANTS.len() {
        sum += MERCHANTS[i].4 as u64;
        i += 1;
    }
    sum
};

const NOTES: &[&str] = &[
    "dividido com a Ana",
    "reembolsar pela empresa",
    "presente de aniversário",
    "compra do mês",
    "pago no Pix",
    "ver garantia",
];

/// A rule's template: (description, category, min cents, max cents, on the card, type).
struct RuleKind(&'static str, &'static str, i64, i64, bool, TxType);

#[rustfmt::skip]
const MONTHLY_RULES: &[RuleKind] = &[
    RuleKind("Netflix", "Assinaturas", 3_990, 5_990, true, Debit),
    RuleKind("Spotify Família", "Assinaturas", 3_490, 4_090, true, Debit),
    RuleKind("Academia Smart Fit", "Saúde", 9_990, 14_990, true, Debit),
    RuleKind("Plano de saúde Unimed", "Plano de saúde", 45_000, 98_000, false, Debit),
    RuleKind("Disney+", "Assinaturas", 2_790, 4_390, true, Debit),
    RuleKind("Amazon Prime", "Assinaturas", 1_490, 1_990, true, Debit),
    RuleKind("Max", "Assinaturas", 2_990, 4_490, true, Debit),
    RuleKind("YouTube Premium", "Assinaturas", 2_090, 2_690, true, Debit),
    RuleKind("iCloud+", "Assinaturas", 490, 1_490, true, Debit),
    RuleKind("Google One", "Assinaturas", 699, 999, true, Debit),
    RuleKind("Xbox Game Pass", "Assinaturas", 4_499, 5_999, true, Debit),
    RuleKind("Globoplay", "Assinaturas", 2_290, 3_490, true, Debit),
    RuleKind("Plano odontológico", "Plano de saúde", 4_500, 9_000, false, Debit),
    RuleKind("Seguro do carro Porto", "Transporte", 18_000, 32_000, false, Debit),
    RuleKind("Seguro residencial", "Moradia", 3_500, 7_000, false, Debit),
    RuleKind("Mensalidade escolar", "Educação", 120_000, 240_000, false, Debit),
    RuleKind("Curso de inglês", "Cursos", 28_000, 45_000, false, Debit),
    RuleKind("Previdência privada", "Investimentos", 30_000, 100_000, false, Debit),
    RuleKind("Consórcio imóvel", "Investimentos", 60_000, 120_000, false, Debit),
    RuleKind("Doação Médicos Sem Fronteiras", "Presentes e doações", 3_000, 10_000, true, Debit),
    RuleKind("Estacionamento mensal", "Estacionamento e pedágio", 25_000, 40_000, false, Debit),
    RuleKind("Folha de S.Paulo digital", "Assinaturas", 1_990, 2_990, true, Debit),
    RuleKind("ChatGPT Plus", "Assinaturas", 9_990, 11_000, true, Debit),
    RuleKind("Microsoft 365", "Assinaturas", 3_000, 4_500, true, Debit),
    RuleKind("Clube do vinho", "Alimentação", 9_000, 16_000, true, Debit),
    RuleKind("Ração do Thor", "Pets", 18_000, 28_000, true, Debit),
    RuleKind("Vaga de garagem", "Moradia", 15_000, 25_000, false, Debit),
    RuleKind("Aluguel recebido - sala comercial", "Outras receitas", 150_000, 250_000, false, Credit),
];

#[rustfmt::skip]
const WEEKLY_RULES: &[RuleKind] = &[
    RuleKind("Feira livre", "Mercado", 6_000, 14_000, false, Debit),
    RuleKind("Diarista", "Moradia", 15_000, 22_000, false, Debit),
    RuleKind("Aula de violão", "Cursos", 8_000, 12_000, false, Debit),
    RuleKind("Personal trainer", "Saúde", 10_000, 18_000, false, Debit),
    RuleKind("Terapia", "Consultas e exames", 18_000, 30_000, false, Debit),
    RuleKind("Pilates", "Saúde", 7_000, 11_000, true, Debit),
    RuleKind("Futebol society", "Lazer", 3_000, 5_000, false, Debit),
    RuleKind("Lavanderia", "Outros", 4_000, 8_000, true, Debit),
    RuleKind("Aula de natação das crianças", "Cursos", 9_000, 13_000, false, Debit),
    RuleKind("Mesada das crianças", "Outros", 2_000, 5_000, false, Debit),
    RuleKind("Jardinagem", "Moradia", 12_000, 20_000, false, Debit),
    RuleKind("Passeador de cães", "Pets", 6_000, 9_000, false, Debit),
];

/// An installment purchase: (description, category, min total cents, max total cents, max count, tag).
struct PlanKind(&'static str, &'static str, i64, i64, i64, Option<usize>);

#[rustfmt::skip]
const PLANS: &[PlanKind] = &[
    PlanKind("Magazine Luiza - geladeira", "Compras", 250_000, 600_000, 12, Some(TAG_HOME)),
    PlanKind("Casas Bahia - sofá", "Compras", 180_000, 450_000, 10, Some(TAG_HOME)),
    PlanKind("Apple Store - iPhone", "Eletrônicos", 500_000, 1_000_000, 12, None),
    PlanKind("Fast Shop - notebook", "Eletrônicos", 350_000, 900_000, 10, Some(1)),
    PlanKind("Passagem aérea LATAM", "Viagens", 120_000, 600_000, 10, Some(TAG_TRAVEL)),
    PlanKind("Hotel Booking.com", "Viagens", 90_000, 400_000, 6, Some(TAG_TRAVEL)),
    PlanKind("Decathlon - bicicleta", "Compras", 150_000, 400_000, 10, None),
    PlanKind("Tok&Stok - mesa de jantar", "Compras", 200_000, 500_000, 12, Some(TAG_HOME)),
    PlanKind("Dentista - tratamento", "Consultas e exames", 100_000, 600_000, 12, None),
    PlanKind("Curso de pós-graduação", "Cursos", 600_000, 2_400_000, 24, Some(1)),
    PlanKind("Pneus Pirelli", "Transporte", 160_000, 320_000, 6, None),
    PlanKind("Amazon - smart TV", "Eletrônicos", 200_000, 500_000, 10, None),
    PlanKind("Mercado Livre - ar-condicionado", "Compras", 180_000, 400_000, 10, Some(TAG_HOME)),
    PlanKind("Renner - roupas de inverno", "Roupas", 40_000, 120_000, 5, None),
    PlanKind("IPVA", "Impostos e taxas", 120_000, 450_000, 5, None),
    PlanKind("Óculos de grau", "Saúde", 60_000, 250_000, 6, None),
];

// ------------------------------------------------------------ generation

/// The credit card's due day; bills are paid from checking on this day.
const BILL_DUE_DAY: i8 = 10;
/// About where the checking balance ends, in cents.
const CHECKING_TARGET: i64 = 1_800_000;
/// How far after today scheduled (PENDING) rows reach.
const FUTURE_DAYS: i64 = 30;

fn add_days(date: Date, days: i64) -> Option<Date> {
    date.checked_add(Span::new().try_days(days).ok()?).ok()
}

fn days_between(from: Date, to: Date) -> i64 {
    from.until(to).map_or(0, |s| i64::from(s.get_days()))
}

fn timestamp_of(date: Date, fallback: Timestamp) -> Timestamp {
    date.at(12, 0, 0, 0)
        .to_zoned(TimeZone::UTC)
        .map_or(fallback, |z| z.timestamp())
}

/// A monthly row of the history: (description, category, day, min cents,
/// max cents, which account, type).
struct Fixed(&'static str, &'static str, i8, i64, i64, Slot, TxType);

#[derive(Clone, Copy)]
enum Slot {
    Checking,
    Savings,
    Second,
}

#[rustfmt::skip]
const FIXED: &[Fixed] = &[
    Fixed("Salário", "Salário", 5, 650_000, 700_000, Slot::Checking, Credit),
    Fixed("Aluguel", "Aluguel", 10, 280_000, 290_000, Slot::Checking, Debit),
    Fixed("Condomínio", "Condomínio", 10, 68_000, 78_000, Slot::Checking, Debit),
    Fixed("Enel - conta de luz", "Energia", 15, 12_000, 38_000, Slot::Checking, Debit),
    Fixed("Sabesp - conta de água", "Água", 18, 6_000, 18_000, Slot::Checking, Debit),
    Fixed("Vivo Fibra", "Internet e telefone", 20, 9_990, 12_990, Slot::Checking, Debit),
    Fixed("Aplicação na poupança", "Investimentos", 6, 30_000, 150_000, Slot::Savings, Debit),
    Fixed("Tarifa do pacote de serviços", "Impostos e taxas", 1, 2_990, 4_590, Slot::Second, Debit),
];

struct Builder<'a> {
    rng: Rng,
    setup: &'a Setup,
    today: Date,
    start: Date,
    span_days: i64,
    rows: Vec<ImportRow>,
}

impl Builder<'_> {
    /// Prices grow along the history (about 1.8x over ten years).
    fn inflate(&self, cents: i64, date: Date) -> i64 {
        let done = days_between(self.start, date).clamp(0, self.span_days.max(1));
        let permille = 550 + 450 * done / self.span_days.max(1);
        (cents * permille / 1000).max(1)
    }

    fn status(&self, date: Date) -> TxStatus {
        TxStatus::default_for(date, self.today)
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
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
            status: self.status(date),
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

    /// One everyday row: a weighted merchant on a random day of the
    /// history (a few scheduled in the coming weeks), sometimes tagged or
    /// annotated. `card`: whether it may land on the credit card.
    fn everyday(&mut self, card: bool) {
        let accounts = self.setup.accounts.clone();
        let today = self.today;
        let date = if self.rng.chance(8) {
            add_days(today, self.rng.range(1, FUTURE_DAYS))
        } else {
            add_days(self.start, self.rng.range(0, self.span_days))
        }
        .unwrap_or(today);
        let mut ticket = self.rng.below(MERCHANT_WEIGHT);
        let merchant = MERCHANTS
            .iter()
            .find(|m| {
                let w = u64::from(m.4);
                if ticket < w {
                    true
                } else {
                    ticket -= w;
                    false
                }
            })
            .unwrap_or(&MERCHANTS[0]);
        let Merchant(description, category, min, max, _, via, tx_type) = *merchant;
        let roll = self.rng.below(100);
        let account = match (via, tx_type) {
            (_, Credit) | (Bank, _) => match accounts.second_bank {
                Some(second) if roll < 20 => second,
                _ => accounts.checking,
            },
            (Card, _) if card && roll < 85 => accounts.card,
            (Card, _) => accounts.checking,
            (Any, _) if card && roll < 55 => accounts.card,
            (Any, _) => match accounts.second_bank {
                Some(second) if roll < 65 => second,
                _ => accounts.checking,
            },
        };
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
        let recent_card =
            account == accounts.card && date <= today && days_between(date, today) < 2;
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
    }
}

/// Builds the batch for `spec`: exactly `spec.rows` stored rows, unless the
/// monthly rows, rule occurrences and installments alone are more.
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
    let accounts = setup.accounts.clone();
    let mut b = Builder {
        rng: Rng(seed),
        setup,
        today,
        start,
        span_days: days_between(start, today).max(1),
        rows: Vec::with_capacity(spec.rows),
    };
    let last_day = add_days(today, FUTURE_DAYS).unwrap_or(today);

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

    // Monthly rows: salary, rent, bills, savings and its interest.
    let months = month_starts(start, last_day);
    let mut savings_balance: i64 = 1_000_000;
    let mut salaries: Vec<usize> = Vec::new();
    for &month in &months {
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
            if date < start || date > last_day {
                continue;
            }
            let raw = b.rng.range(min, max);
            let cents = b.inflate(raw, date);
            match slot {
                Slot::Savings => {
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
                }
                Slot::Checking | Slot::Second => {
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
        }
    }

    // Rules, and a few of their occurrences stored (confirmed by the user).
    let rules = make_rules(&mut b, spec.rules, user, today, now);
    for (i, rule) in rules.iter().enumerate() {
        if i % 4 != 0 {
            continue;
        }
        let keep = 1 + (i / 4) % 2;
        let dates: Vec<Date> = rule
            .schedule
            .descending(rule.schedule.start, today)
            .take(keep)
            .map(|(_, d)| d)
            .collect();
        for date in dates {
            let t = &rule.template;
            let cents = t.amount.cents() + b.rng.range(0, t.amount.cents() / 20);
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

    // Installment purchases: installment 1 stored (as the API does), and
    // for a third of them every installment up to today.
    let plans = make_plans(&mut b, spec.plans, user, today, now);
    for (i, plan) in plans.iter().enumerate() {
        let upto = if i % 3 == 0 { plan.count } else { 1 };
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

    // Bill payments: one pair a month, counted now, amounts known later.
    let bills: Vec<Date> = months
        .iter()
        .filter_map(|m| Date::new(m.year(), m.month(), BILL_DUE_DAY).ok())
        .filter(|d| *d > start && *d <= last_day)
        .collect();

    // Everyday rows fill the rest.
    let everyday = spec.rows.saturating_sub(b.rows.len() + 2 * bills.len());
    for _ in 0..everyday {
        b.everyday(true);
    }

    // Each bill pays the previous month's card spending.
    let mut spent: BTreeMap<(i16, i8), i64> = BTreeMap::new();
    for row in b.rows.iter().filter(|r| r.account_id == accounts.card) {
        let key = (row.state.date.year(), row.state.date.month());
        let signed = match row.state.tx_type {
            Debit => row.state.amount.cents(),
            Credit => -row.state.amount.cents(),
        };
        *spent.entry(key).or_default() += signed;
    }
    for due in bills {
        let Ok(closed) = due.checked_sub(Span::new().months(1)) else {
            continue;
        };
        let cents = spent
            .get(&(closed.year(), closed.month()))
            .copied()
            .unwrap_or(0);
        if cents <= 0 {
            continue;
        }
        b.push(
            accounts.checking,
            due,
            Debit,
            cents,
            "Pagamento de fatura - Cartão Nubank",
            "Pagamento de fatura",
            SeriesLink::None,
        );
        b.push(
            accounts.card,
            due,
            Credit,
            cents,
            "Pagamento recebido",
            "Pagamento de fatura",
            SeriesLink::None,
        );
    }

    // A month without card spending pays no bill: top up off the card.
    while b.rows.len() < spec.rows {
        b.everyday(false);
    }

    // However busy the history, income covers it: salaries grow so that
    // checking ends the history with a modest positive balance.
    let flow = |rows: &[ImportRow]| -> i64 {
        rows.iter()
            .filter(|r| r.account_id == accounts.checking)
            .map(|r| match r.state.tx_type {
                Credit => r.state.amount.cents(),
                Debit => -r.state.amount.cents(),
            })
            .sum()
    };
    let missing = CHECKING_TARGET - flow(&b.rows);
    let paid: i64 = salaries
        .iter()
        .filter_map(|&i| b.rows.get(i))
        .map(|r| r.state.amount.cents())
        .sum();
    if missing > 0 && paid > 0 {
        for &i in &salaries {
            if let Some(row) = b.rows.get_mut(i) {
                let cents = row.state.amount.cents();
                let raise = i128::from(missing) * i128::from(cents) / i128::from(paid);
                row.state.amount = Money::from_cents(cents + i64::try_from(raise).unwrap_or(0));
            }
        }
    }

    Ok(ImportBatch {
        rows: b.rows,
        rules,
        plans,
    })
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

/// Monthly and weekly rules (about 70/30), started in the past, still active.
fn make_rules(
    b: &mut Builder<'_>,
    count: usize,
    user: UserId,
    today: Date,
    now: Timestamp,
) -> Vec<RecurrenceRule> {
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
        let start = add_days(today, -b.rng.range(20, 1_400)).unwrap_or(today);
        // Some rules end, but not before a year from now.
        let end_date = if i % 5 == 4 {
            add_days(today, b.rng.range(366, 1_000))
        } else {
            None
        };
        let interval = if weekly && index % 6 == 5 { 2 } else { 1 };
        let account_id = if on_card {
            b.setup.accounts.card
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

/// Installment purchases with recent first dates (most within the last
/// year, a few starting in the coming weeks), so many are still running.
fn make_plans(
    b: &mut Builder<'_>,
    count: usize,
    user: UserId,
    today: Date,
    now: Timestamp,
) -> Vec<InstallmentPlan> {
    let mut plans = Vec::with_capacity(count);
    for i in 0..count {
        let PlanKind(description, category, min, max, max_count, tag) = PLANS[i % PLANS.len()];
        let installments = b.rng.range(2, max_count.clamp(2, 24));
        let first_date = if i % 10 == 9 {
            add_days(today, b.rng.range(1, 25))
        } else {
            add_days(today, -b.rng.range(0, 330))
        }
        .unwrap_or(today);
        let account_id = if i % 5 == 2 {
            // A store carnet, paid from checking.
            b.setup.accounts.checking
        } else {
            b.setup.accounts.card
        };
        let tag_ids = tag
            .and_then(|t| b.setup.tags.get(t).copied())
            .into_iter()
            .collect();
        plans.push(InstallmentPlan {
            id: PurchaseId::new(),
            user_id: user,
            account_id,
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

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn setup() -> Setup {
        let titles = [
            "Mercado",
            "Salário",
            "Aluguel",
            "Assinaturas",
            "Outros",
            "Compras",
        ];
        Setup {
            accounts: DemoAccounts {
                checking: AccountId::new(),
                card: AccountId::new(),
                savings: Some(AccountId::new()),
                second_bank: Some(AccountId::new()),
            },
            categories: titles
                .iter()
                .map(|t| ((*t).to_owned(), CategoryId::new()))
                .collect(),
            tags: TAGS.iter().map(|_| TagId::new()).collect(),
        }
    }

    #[test]
    fn heavy_has_the_promised_shape() {
        let today = date(2026, 11, 22);
        let now: Timestamp = "2026-11-22T15:00:00Z".parse().unwrap();
        let setup = setup();
        let spec = Profile::Heavy.spec();
        let batch = generate(&spec, DEFAULT_SEED, UserId::new(), &setup, now, today).unwrap();
        assert_eq!(batch.rows.len(), 50_000);
        assert_eq!(batch.rules.len(), 40);
        assert_eq!(batch.plans.len(), 60);
        let first = batch.rows.iter().map(|r| r.state.date).min().unwrap();
        assert_eq!(first, date(2016, 11, 22));
        assert!(batch.rows.iter().all(|r| r.state.amount.is_positive()));
        assert!(
            batch
                .rows
                .iter()
                .all(|r| r.state.date <= date(2026, 12, 22))
        );
        let future_posted = batch
            .rows
            .iter()
            .filter(|r| r.state.date > today && r.state.status == TxStatus::Posted)
            .count();
        assert_eq!(future_posted, 0);
        let pending = batch
            .rows
            .iter()
            .filter(|r| r.state.status == TxStatus::Pending)
            .count();
        assert!(pending > 100 && pending < 2_000, "{pending}");
        assert!(
            batch
                .rows
                .iter()
                .filter(|r| !r.state.tag_ids.is_empty())
                .count()
                > 1_000
        );
        for rule in &batch.rules {
            assert!(rule.schedule.start < today);
            assert!(rule.schedule.end_date.is_none_or(|end| end > today));
            assert!(rule.schedule.validate().is_ok());
        }
        assert!(batch.plans.iter().all(|p| (2..=24).contains(&p.count)));
        let linked = batch
            .rows
            .iter()
            .filter(|r| r.link != SeriesLink::None)
            .count();
        assert!(linked > 60, "{linked}");
    }

    #[test]
    fn same_seed_same_content() {
        let today = date(2026, 11, 22);
        let now: Timestamp = "2026-11-22T15:00:00Z".parse().unwrap();
        let setup = setup();
        let spec = Profile::Small.spec();
        let a = generate(&spec, 7, UserId::new(), &setup, now, today).unwrap();
        let b = generate(&spec, 7, UserId::new(), &setup, now, today).unwrap();
        assert_eq!(a.rows.len(), 300);
        let states = |batch: &ImportBatch| -> Vec<TransactionState> {
            batch.rows.iter().map(|r| r.state.clone()).collect()
        };
        assert_eq!(states(&a), states(&b));
    }
}
