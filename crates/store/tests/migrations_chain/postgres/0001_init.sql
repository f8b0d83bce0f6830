-- cofre schema v1. Portable column types (ids and dates as TEXT, money as
-- BIGINT cents, timestamps as ISO-8601 TEXT) so both backends run the same
-- queries. Constraint names are the same on SQLite and PostgreSQL.

-- PostgreSQL: ordered text keys use the "C" collation so ids and dates
-- sort bytewise, exactly as on SQLite.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT,
    wage_cents BIGINT,
    monthly_living_cost_cents BIGINT,
    has_spouse BOOLEAN,
    has_children BOOLEAN,
    is_entrepreneur BOOLEAN,
    created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    secret_hash TEXT NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type TEXT NOT NULL CONSTRAINT accounts_type_check CHECK (type IN ('BANK', 'CREDIT')),
    sub_type TEXT NOT NULL,
    title TEXT NOT NULL,
    archived BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_from_totals BOOLEAN NOT NULL DEFAULT FALSE,
    currency TEXT NOT NULL,
    credit_close_day INTEGER,
    credit_due_day INTEGER,
    credit_cycle_auto BOOLEAN,
    credit_limit_cents BIGINT,
    pay_bill_from_account_id TEXT REFERENCES accounts (id) ON DELETE SET NULL,
    icon_id TEXT,
    card_icon_id TEXT,
    open_finance_connected BOOLEAN NOT NULL DEFAULT FALSE,
    connector_name TEXT,
    card_holders TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX accounts_user ON accounts (user_id, created_at);

CREATE TABLE categories (
    id TEXT PRIMARY KEY,
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    parent_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
    icon_id TEXT,
    color_hex TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX categories_user ON categories (user_id);

CREATE TABLE category_archives (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    category_id TEXT NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    CONSTRAINT category_archives_pk PRIMARY KEY (user_id, category_id)
);

CREATE TABLE tags (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    title_key TEXT NOT NULL,
    color_hex TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT tags_user_title_key UNIQUE (user_id, title_key)
);

CREATE TABLE transactions (
    id TEXT COLLATE "C" PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT COLLATE "C" NOT NULL,
    type TEXT NOT NULL CONSTRAINT transactions_type_check CHECK (type IN ('DEBIT', 'CREDIT')),
    status TEXT NOT NULL CONSTRAINT transactions_status_check CHECK (status IN ('PENDING', 'POSTED')),
    amount_cents BIGINT NOT NULL CONSTRAINT transactions_amount_check CHECK (amount_cents > 0),
    currency TEXT NOT NULL,
    description TEXT NOT NULL,
    notes TEXT,
    bill_to_account_id TEXT REFERENCES accounts (id) ON DELETE SET NULL,
    category_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
    recurrence_id TEXT,
    recurrence_period_date TEXT,
    installment_purchase_id TEXT,
    installment_number INTEGER,
    transfer_group_id TEXT,
    created_by_user BOOLEAN NOT NULL,
    source TEXT NOT NULL,
    hide_from_results BOOLEAN NOT NULL DEFAULT FALSE,
    card_number TEXT,
    holder TEXT,
    holder_is_me BOOLEAN NOT NULL DEFAULT FALSE,
    original_description TEXT,
    receipt_name TEXT,
    open_finance BOOLEAN NOT NULL DEFAULT FALSE,
    search_text TEXT NOT NULL,
    fingerprint TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- The list's order (newest day first, id ascending within a day).
CREATE INDEX transactions_user_date ON transactions (user_id, date DESC, id);
-- Balances: POSTED rows per account.
CREATE INDEX transactions_account_status ON transactions (account_id, status, type, amount_cents);

CREATE TABLE transaction_tags (
    transaction_id TEXT NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    tag_id TEXT NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    CONSTRAINT transaction_tags_pk PRIMARY KEY (transaction_id, tag_id)
);
CREATE INDEX transaction_tags_tag ON transaction_tags (tag_id);

-- Public system categories (user_id NULL); ids are fixed so every
-- installation and both backends agree on them.
INSERT INTO categories (id, user_id, title, parent_id, icon_id, color_hex, created_at) VALUES
    ('30b679d8-1fd0-5798-9807-ef2de0278a88', NULL, 'Alimentação', NULL, 'ic-food', '#E67E22', '2026-01-01T00:00:00.000Z'),
    ('59d30ba9-d83c-5466-9d40-eea54f663061', NULL, 'Restaurantes', '30b679d8-1fd0-5798-9807-ef2de0278a88', 'ic-restaurant', NULL, '2026-01-01T00:00:00.000Z'),
    ('c3149de7-6a34-5ec9-82c1-991512be4b93', NULL, 'Delivery', '30b679d8-1fd0-5798-9807-ef2de0278a88', 'ic-food', NULL, '2026-01-01T00:00:00.000Z'),
    ('3df4f6fd-7fc6-5124-93f5-398d7e480fc2', NULL, 'Padaria e café', '30b679d8-1fd0-5798-9807-ef2de0278a88', 'ic-food', NULL, '2026-01-01T00:00:00.000Z'),
    ('ed3eb088-9c3c-517a-b01a-f1d78fb4b16d', NULL, 'Mercado', NULL, 'ic-groceries', '#27AE60', '2026-01-01T00:00:00.000Z'),
    ('fb40980d-a83c-577b-801c-e59fc3e556ad', NULL, 'Transporte', NULL, 'ic-car', '#2980B9', '2026-01-01T00:00:00.000Z'),
    ('e2acefd6-fe20-5ec8-81a7-a5b24b43f6a2', NULL, 'Combustível', 'fb40980d-a83c-577b-801c-e59fc3e556ad', 'ic-fuel', NULL, '2026-01-01T00:00:00.000Z'),
    ('3f239498-9717-5c8f-9557-d1111811f0a1', NULL, 'Transporte público', 'fb40980d-a83c-577b-801c-e59fc3e556ad', 'ic-bus', NULL, '2026-01-01T00:00:00.000Z'),
    ('4fe848bf-3d08-5ef3-87e7-2fb08fcabdfe', NULL, 'Táxi e aplicativos', 'fb40980d-a83c-577b-801c-e59fc3e556ad', 'ic-car', NULL, '2026-01-01T00:00:00.000Z'),
    ('eb4057b7-3fbd-5497-b5db-888062ba691d', NULL, 'Estacionamento e pedágio', 'fb40980d-a83c-577b-801c-e59fc3e556ad', 'ic-car', NULL, '2026-01-01T00:00:00.000Z'),
    ('8992cf85-236f-519a-9acd-49e0b83e5322', NULL, 'Moradia', NULL, 'ic-home', '#8E44AD', '2026-01-01T00:00:00.000Z'),
    ('1c4a905b-d78c-5fbe-8fe3-23e919a5b6c4', NULL, 'Aluguel', '8992cf85-236f-519a-9acd-49e0b83e5322', 'ic-home', NULL, '2026-01-01T00:00:00.000Z'),
    ('6607543a-9b4a-54f2-af76-07c2db480778', NULL, 'Condomínio', '8992cf85-236f-519a-9acd-49e0b83e5322', 'ic-home', NULL, '2026-01-01T00:00:00.000Z'),
    ('3897d892-ee6a-5976-9d0b-bafd8ed54c4e', NULL, 'Energia', '8992cf85-236f-519a-9acd-49e0b83e5322', 'ic-bolt', NULL, '2026-01-01T00:00:00.000Z'),
    ('6f25fb40-d571-58ae-8028-1bd9226f2be0', NULL, 'Água', '8992cf85-236f-519a-9acd-49e0b83e5322', 'ic-water', NULL, '2026-01-01T00:00:00.000Z'),
    ('d84f6479-3669-56eb-934b-631a63b3dd97', NULL, 'Internet e telefone', '8992cf85-236f-519a-9acd-49e0b83e5322', 'ic-wifi', NULL, '2026-01-01T00:00:00.000Z'),
    ('f4574ffc-b434-5d40-bfe6-3c55235ce565', NULL, 'Saúde', NULL, 'ic-health', '#C0392B', '2026-01-01T00:00:00.000Z'),
    ('b58df018-d0fd-5801-b90e-3ead58de0718', NULL, 'Farmácia', 'f4574ffc-b434-5d40-bfe6-3c55235ce565', 'ic-pharmacy', NULL, '2026-01-01T00:00:00.000Z'),
    ('949cdd81-ab77-5912-a2ab-539920abf3fa', NULL, 'Plano de saúde', 'f4574ffc-b434-5d40-bfe6-3c55235ce565', 'ic-health', NULL, '2026-01-01T00:00:00.000Z'),
    ('93f91730-decd-524d-b74c-89750a30c487', NULL, 'Consultas e exames', 'f4574ffc-b434-5d40-bfe6-3c55235ce565', 'ic-health', NULL, '2026-01-01T00:00:00.000Z'),
    ('2147a821-9ff8-5b36-a9c7-712d216609d6', NULL, 'Educação', NULL, 'ic-education', '#16A085', '2026-01-01T00:00:00.000Z'),
    ('5c51a90e-cf3a-545e-9e62-abe75fe6d2c1', NULL, 'Cursos', '2147a821-9ff8-5b36-a9c7-712d216609d6', 'ic-education', NULL, '2026-01-01T00:00:00.000Z'),
    ('a6920f11-5cf8-5cda-af97-127628259c5f', NULL, 'Livros', '2147a821-9ff8-5b36-a9c7-712d216609d6', 'ic-book', NULL, '2026-01-01T00:00:00.000Z'),
    ('348b36e8-3bfa-5dee-ba18-dcaa2d707dd6', NULL, 'Lazer', NULL, 'ic-leisure', '#F1C40F', '2026-01-01T00:00:00.000Z'),
    ('2e2ab7f4-7460-575c-b31a-9b3b8a9c3742', NULL, 'Viagens', '348b36e8-3bfa-5dee-ba18-dcaa2d707dd6', 'ic-travel', NULL, '2026-01-01T00:00:00.000Z'),
    ('b7a4a848-c64c-5d62-b7f6-a35ed4b48866', NULL, 'Cinema e shows', '348b36e8-3bfa-5dee-ba18-dcaa2d707dd6', 'ic-movie', NULL, '2026-01-01T00:00:00.000Z'),
    ('0aac8527-a4a3-5f90-8e68-f4d67d3edfe8', NULL, 'Compras', NULL, 'ic-shopping', '#D35400', '2026-01-01T00:00:00.000Z'),
    ('dfc3f6d0-2f6d-52f0-8e6d-301c5f048a87', NULL, 'Roupas', '0aac8527-a4a3-5f90-8e68-f4d67d3edfe8', 'ic-clothes', NULL, '2026-01-01T00:00:00.000Z'),
    ('8b33b503-bd7c-56f5-825d-1a3f9053a67b', NULL, 'Eletrônicos', '0aac8527-a4a3-5f90-8e68-f4d67d3edfe8', 'ic-shopping', NULL, '2026-01-01T00:00:00.000Z'),
    ('4de49b45-4d14-5fbf-82f4-199813322ebe', NULL, 'Assinaturas', NULL, 'ic-subscription', '#7F8C8D', '2026-01-01T00:00:00.000Z'),
    ('03e16e38-b72d-59ef-be18-8190de187642', NULL, 'Cuidados pessoais', NULL, 'ic-beauty', '#E84393', '2026-01-01T00:00:00.000Z'),
    ('e2a66c06-c9ab-5992-86d8-d7e27ad1744e', NULL, 'Pets', NULL, 'ic-pet', '#A0522D', '2026-01-01T00:00:00.000Z'),
    ('4e4abca2-0850-5bf5-ac7a-8bf0bac43a49', NULL, 'Presentes e doações', NULL, 'ic-gift', '#FF7675', '2026-01-01T00:00:00.000Z'),
    ('4c489a35-36d5-521f-8564-d50e83fef1b1', NULL, 'Salário', NULL, 'ic-salary', '#2ECC71', '2026-01-01T00:00:00.000Z'),
    ('d894753e-b83d-5216-befb-0bcb5b67a731', NULL, 'Outras receitas', NULL, 'ic-income', '#1ABC9C', '2026-01-01T00:00:00.000Z'),
    ('5f1f2138-cd9c-5aec-86a6-a04b97b2b892', NULL, 'Investimentos', NULL, 'ic-investment', '#34495E', '2026-01-01T00:00:00.000Z'),
    ('4b818ba2-7b71-539b-989d-e80750a23462', NULL, 'Impostos e taxas', NULL, 'ic-tax', '#95A5A6', '2026-01-01T00:00:00.000Z'),
    ('037e8e7f-50d7-5892-ad50-75570da8c0ec', NULL, 'Transferência', NULL, 'ic-transfer', '#3498DB', '2026-01-01T00:00:00.000Z'),
    ('8af325d4-0dc3-5e04-8d45-879337802f65', NULL, 'Pagamento de fatura', NULL, 'ic-bill', '#9B59B6', '2026-01-01T00:00:00.000Z'),
    ('996a8ac4-8cf9-58c9-be9e-47b6e80a1fa0', NULL, 'Outros', NULL, 'ic-other', '#BDC3C7', '2026-01-01T00:00:00.000Z');
