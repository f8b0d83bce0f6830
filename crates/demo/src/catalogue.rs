//! What demo rows are made of: merchants, monthly bills, rules, installment
//! purchases and the credit cards, with Brazilian names and prices (in
//! cents, at the end of the history; older rows are cheaper).

use cofre_domain::transaction::TxType;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Via {
    /// Mostly a credit card.
    Card,
    /// Mostly the checking account (some on the second bank).
    Bank,
    /// Card, checking or second bank.
    Any,
}

/// A kind of everyday row: (description, category, min cents, max cents,
/// weight, where it is paid, type).
pub(super) struct Merchant(
    pub &'static str,
    pub &'static str,
    pub i64,
    pub i64,
    pub u32,
    pub Via,
    pub TxType,
);

use TxType::{Credit, Debit};
use Via::{Any, Bank, Card};

#[rustfmt::skip]
pub(super) const MERCHANTS: &[Merchant] = &[
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

pub(super) const NOTES: &[&str] = &[
    "dividido com a Ana",
    "reembolsar pela empresa",
    "presente de aniversário",
    "compra do mês",
    "pago no Pix",
    "ver garantia",
];

/// A rule's template: (description, category, min cents, max cents, on the card, type).
/// A rule's template: (description, category, min cents, max cents, on a card, type).
pub(super) struct RuleKind(
    pub &'static str,
    pub &'static str,
    pub i64,
    pub i64,
    pub bool,
    pub TxType,
);

#[rustfmt::skip]
pub(super) const MONTHLY_RULES: &[RuleKind] = &[
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
pub(super) const WEEKLY_RULES: &[RuleKind] = &[
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

/// An installment purchase: (description, category, min total cents, max
/// total cents, max count, tag).
pub(super) struct PlanKind(
    pub &'static str,
    pub &'static str,
    pub i64,
    pub i64,
    pub i64,
    pub Option<usize>,
);

#[rustfmt::skip]
pub(super) const PLANS: &[PlanKind] = &[
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

/// A monthly row of the history: (description, category, day, min cents,
/// max cents, which account, type).
pub(super) struct Fixed(
    pub &'static str,
    pub &'static str,
    pub i8,
    pub i64,
    pub i64,
    pub Slot,
    pub TxType,
);

#[derive(Clone, Copy)]
pub(super) enum Slot {
    Checking,
    Savings,
    Second,
}

#[rustfmt::skip]
pub(super) const FIXED: &[Fixed] = &[
    Fixed("Salário", "Salário", 5, 650_000, 700_000, Slot::Checking, Credit),
    Fixed("Aluguel", "Aluguel", 10, 280_000, 290_000, Slot::Checking, Debit),
    Fixed("Condomínio", "Condomínio", 10, 68_000, 78_000, Slot::Checking, Debit),
    Fixed("Enel - conta de luz", "Energia", 15, 12_000, 38_000, Slot::Checking, Debit),
    Fixed("Sabesp - conta de água", "Água", 18, 6_000, 18_000, Slot::Checking, Debit),
    Fixed("Vivo Fibra", "Internet e telefone", 20, 9_990, 12_990, Slot::Checking, Debit),
    Fixed("Aplicação na poupança", "Investimentos", 6, 30_000, 150_000, Slot::Savings, Debit),
    Fixed("Tarifa do pacote de serviços", "Impostos e taxas", 1, 2_990, 4_590, Slot::Second, Debit),
];

/// Tags the demo creates (or reuses when the user already has them).
pub const TAGS: [(&str, &str); 6] = [
    ("Viagem", "#1ABC9C"),
    ("Trabalho", "#3498DB"),
    ("Reembolsável", "#E67E22"),
    ("Presente", "#E84393"),
    ("Casa", "#8E44AD"),
    ("Pet", "#A0522D"),
];
pub(super) const TAG_TRAVEL: usize = 0;
pub(super) const TAG_HOME: usize = 4;

/// A credit card of the demo: (title, due day, limit in cents for a modest
/// spender (the setup scales it to the profile), card artwork, share of the
/// card purchases). The close day follows the due day
/// (`cycle_auto`, seven days before), which gives three kinds of cycle:
/// Nubank due 10 closes on the 3rd of the same month, Itaú due 5 closes on
/// the 29th of the month before, C6 due 7 closes on the month's last day
/// (31, clamped in short months).
pub(super) struct CardKind(pub &'static str, pub u8, pub i64, pub &'static str, pub u64);

#[rustfmt::skip]
pub(super) const CARDS: &[CardKind] = &[
    CardKind("Nubank Ultravioleta", 10, 800_000, "card-mastercard", 50),
    CardKind("Itaú Personnalité Visa", 5, 1_500_000, "card-visa", 30),
    CardKind("C6 Carbon", 7, 500_000, "card-mastercard", 20),
];
