-- cofre's whole schema on SQLite, as migrations 0001 to 0027 left it,
-- written once (issue 62). Those migrations are kept as test data only
-- (crates/store/tests/migrations_chain/sqlite); a database they made is
-- recorded as at this version when it is opened (src/sql_schema.rs), and
-- tests/schema_baseline.rs proves both ways give one schema. Never edit
-- this file: a change is a new migration, 0029 on.
--
-- Portable column types (ids and dates as TEXT, money as BIGINT cents,
-- timestamps as ISO-8601 TEXT) so both backends run the same queries.
-- Constraint names are the same on SQLite and PostgreSQL.
--
-- 1. What users store.  2. Data derived from it, kept by the triggers of
-- part 5.  3. Indexes.  4. The shared categories.  5. Triggers, by what
-- they keep. No trigger depends on another's firing first.

-- 1. What users store --------------------------------------------------

-- view_version is bumped by every write of the user's data (the store's
-- begin_write), in the write's transaction: answers are cached under it
-- and day stamps take it. sources_version and categories_version are
-- bumped by triggers (part 5) on what projections and the category list
-- are made from, so those caches reload only after such a change.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT,
    wage_cents BIGINT,
    monthly_living_cost_cents BIGINT,
    has_spouse BOOLEAN,
    has_children BOOLEAN,
    is_entrepreneur BOOLEAN,
    created_at TEXT NOT NULL,
    view_version BIGINT NOT NULL DEFAULT 0,
    sources_version BIGINT NOT NULL DEFAULT 0,
    categories_version BIGINT NOT NULL DEFAULT 0
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

-- user_id NULL: a shared category (part 4).
CREATE TABLE categories (
    id TEXT PRIMARY KEY,
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    parent_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
    icon_id TEXT,
    color_hex TEXT,
    created_at TEXT NOT NULL
);

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

-- external_id: the bank's id of a row that came from a bank (OFX), so an
-- overlapping statement imported again skips what is stored; NULL for
-- rows made through the API (NULLs never clash in a unique index).
-- bill_month: on both legs of a card bill's payment (the bank's DEBIT,
-- whose bill_to_account_id names the card, and the card's hidden CREDIT),
-- the 'YYYY-MM' of the due date of the bill it settles.
-- tag_count: how many tags the row has (kept by triggers), so a page looks
-- tags up only for rows that have some.
CREATE TABLE transactions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
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
    updated_at TEXT NOT NULL,
    external_id TEXT,
    bill_month TEXT,
    tag_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE transaction_tags (
    transaction_id TEXT NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    tag_id TEXT NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    CONSTRAINT transaction_tags_pk PRIMARY KEY (transaction_id, tag_id)
);

-- Recurrence rules and installment purchases, whose entries are projected
-- until stored, and tombstones that hide single projected entries.
CREATE TABLE recurrence_rules (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type TEXT NOT NULL CONSTRAINT recurrence_rules_type_check CHECK (type IN ('DEBIT', 'CREDIT')),
    amount_cents BIGINT NOT NULL CONSTRAINT recurrence_rules_amount_check CHECK (amount_cents > 0),
    description TEXT NOT NULL,
    -- Lower-cased, trimmed description: equivalent rules are reused.
    description_key TEXT NOT NULL,
    notes TEXT,
    category_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
    -- Comma-separated tag ids.
    tag_ids TEXT NOT NULL,
    frequency TEXT NOT NULL,
    interval_count INTEGER NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT,
    occurrence_count INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE installment_plans (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type TEXT NOT NULL CONSTRAINT installment_plans_type_check CHECK (type IN ('DEBIT', 'CREDIT')),
    total_cents BIGINT NOT NULL CONSTRAINT installment_plans_total_check CHECK (total_cents > 0),
    description TEXT NOT NULL,
    notes TEXT,
    category_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
    tag_ids TEXT NOT NULL,
    installment_count INTEGER NOT NULL,
    first_date TEXT NOT NULL,
    -- Date of the last installment, so a window finds live plans by index.
    last_date TEXT NOT NULL,
    hidden BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE tombstones (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    handle TEXT NOT NULL,
    -- The rule, purchase or card the hidden entry belongs to.
    source_id TEXT NOT NULL,
    entry_date TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT tombstones_pk PRIMARY KEY (user_id, handle)
);

-- A monthly limit for one category from starts_on to ends_on (months as
-- 'YYYY-MM'; ends_on NULL: no end). budget_limits keeps every change of
-- the limit, each in force from its month until the next.
CREATE TABLE budgets (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    category_id TEXT NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    include_subcategories BOOLEAN NOT NULL,
    rollover BOOLEAN NOT NULL,
    starts_on TEXT NOT NULL,
    ends_on TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE budget_limits (
    budget_id TEXT NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    from_month TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    CONSTRAINT budget_limits_pk PRIMARY KEY (budget_id, from_month)
) WITHOUT ROWID;

-- 2. Derived data --------------------------------------------------------
--
-- Sums kept up to date by the triggers of part 5, so no read sums a whole
-- history. Totals that fall to zero are kept (readers skip them) and
-- stamps only grow: a reader holding a version reloads exactly what
-- changed since. Every running total stays inside +-10^15 cents
-- (cofre_domain::money::MAX_TOTAL_CENTS): a row is at most
-- 99,999,999,999.99, so a total one row past the bound is still a 64-bit
-- integer, and the write that would cross it fails on the named range
-- constraint, which the store reports as a field error. The WITHOUT ROWID
-- tables are ordered by their key: a range of it is read without a lookup
-- per row.

-- Each account's balance (its POSTED rows: CREDIT adds, DEBIT subtracts),
-- and money_version, bumped by any change to a row on the account or
-- billed to it: the card money cache's signal.
CREATE TABLE account_balances (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    posted_cents BIGINT NOT NULL
        CONSTRAINT account_balances_posted_cents_range
        CHECK (posted_cents BETWEEN -1000000000000000 AND 1000000000000000),
    money_version BIGINT NOT NULL DEFAULT 0
);

-- Each account's rows per day, type and kind (installment or not), the
-- payment legs of card bills apart: what card bills are made of. version
-- is the account's money_version when the total last changed, so a reader
-- holding a card's days at version v reloads `version > v`, by index.
CREATE TABLE day_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    type TEXT NOT NULL,
    installment BOOLEAN NOT NULL,
    cents BIGINT NOT NULL
        CONSTRAINT day_totals_cents_range
        CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000),
    version BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT day_totals_pk PRIMARY KEY (account_id, date, type, installment)
);

-- Each account's visible rows (not hidden from results) per month
-- ('YYYY-MM'), type, status and kind ('installment', 'recurrence' or
-- 'plain'): the overview's month.
CREATE TABLE month_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    cents BIGINT NOT NULL
        CONSTRAINT month_totals_cents_range
        CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000),
    CONSTRAINT month_totals_pk PRIMARY KEY (account_id, month, type, status, kind)
);

-- Each account's visible rows per month, category ('' for none), type,
-- status and whether the row is a transfer's leg: budgets and reports.
CREATE TABLE category_month_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    category_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    transfer BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT category_month_totals_pk PRIMARY KEY (account_id, month, category_id, type, status, transfer)
) WITHOUT ROWID;

-- Each account's POSTED rows per day, moved (CREDIT +, DEBIT -): what
-- user_day_balances is summed from.
CREATE TABLE day_balances (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT day_balances_pk PRIMARY KEY (account_id, date)
) WITHOUT ROWID;

-- category_month_totals summed over a user's accounts, split by whether
-- the account is a card (the cashflow view leaves cards out): a budget or
-- report over all accounts reads one row per month and category.
CREATE TABLE user_category_month_totals (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    category_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    transfer BOOLEAN NOT NULL,
    card BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT user_category_month_totals_pk
        PRIMARY KEY (user_id, month, category_id, type, status, transfer, card)
) WITHOUT ROWID;

-- day_balances summed over a user's counted accounts (not archived, not
-- excluded from totals) per currency and day, banks and cards apart: the
-- balance series of reports.
CREATE TABLE user_day_balances (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    date TEXT NOT NULL,
    banks BIGINT NOT NULL,
    cards BIGINT NOT NULL,
    CONSTRAINT user_day_balances_pk PRIMARY KEY (user_id, currency, date)
) WITHOUT ROWID;

-- A stamp per user and month, moved by every change of that month's
-- user_category_month_totals: the key of the store's months cache, so a
-- purchase today leaves the cached months before it valid.
CREATE TABLE user_month_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_month_stamps_pk PRIMARY KEY (user_id, month)
) WITHOUT ROWID;

-- A stamp per user and day: the view_version of the last write that
-- touched a stored row of that day or its tags. Every write bumps
-- view_version first, so "no stamp of these days above v" says no write
-- after v touched them: a kept page is checked against its days instead
-- of dropped on every write of its user.
CREATE TABLE user_day_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_day_stamps_pk PRIMARY KEY (user_id, day)
) WITHOUT ROWID;

-- 3. Indexes -------------------------------------------------------------

CREATE INDEX api_keys_user ON api_keys (user_id);
CREATE INDEX accounts_user ON accounts (user_id, created_at);
CREATE INDEX categories_user ON categories (user_id);
CREATE INDEX transaction_tags_tag ON transaction_tags (tag_id);
CREATE INDEX recurrence_rules_user ON recurrence_rules (user_id, start_date);
CREATE INDEX installment_plans_user ON installment_plans (user_id, last_date);
CREATE INDEX tombstones_user_date ON tombstones (user_id, entry_date);
CREATE INDEX tombstones_source ON tombstones (source_id);
CREATE INDEX budgets_user ON budgets (user_id, category_id);
CREATE INDEX day_totals_version ON day_totals (account_id, version);

-- The list: days ascending, ids descending within a day, read backwards
-- for the list's order (newest day first, ids ascending) without a sort.
-- Ascending, a history written day by day fills its pages (descending,
-- each new day split the head page and left the index half empty). The
-- account rides along so the cashflow view drops card rows from the index
-- entry, without reading them from the table.
CREATE INDEX transactions_user_date ON transactions (user_id, date, id DESC, account_id);
-- A card's rows by date: the amounts of its billing cycles (and the rows
-- a cascade from an account deletes).
CREATE INDEX transactions_account_date ON transactions (account_id, date);
-- Links most rows lack are partial indexes, holding only the rows that
-- have them: fewer index entries for every row written. Every query that
-- reads one names its link with = or IN, which SQLite knows excludes NULL;
-- the statement import's ON CONFLICT names the unique index's condition.
CREATE INDEX transactions_recurrence ON transactions (recurrence_id, recurrence_period_date)
WHERE recurrence_id IS NOT NULL;
CREATE INDEX transactions_installment ON transactions (installment_purchase_id, installment_number)
WHERE installment_purchase_id IS NOT NULL;
CREATE UNIQUE INDEX transactions_account_external_id ON transactions (account_id, external_id)
WHERE external_id IS NOT NULL;
CREATE INDEX transactions_bill_payments ON transactions (bill_to_account_id, bill_month)
WHERE bill_to_account_id IS NOT NULL;
-- A card's bill payments read from the index alone, in the query's order:
-- they lie a month apart in the table, one page each to fetch otherwise.
CREATE INDEX transactions_bill_payments_cover
    ON transactions (bill_to_account_id, date, id, bill_month, amount_cents)
    WHERE bill_month IS NOT NULL;

-- 4. The shared categories -----------------------------------------------

-- Public system categories (user_id NULL); ids are fixed so every
-- installation and both backends agree on them. A migration that changes
-- them must bump every user's categories_version.
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

-- 5. Triggers, by what they keep -------------------------------------------

-- account_balances (balance and money_version) and day_totals, from rows:
-- every account's day totals here (PostgreSQL keeps cards' only). Every
-- account has its balance row from its creation.
CREATE TRIGGER accounts_balance_row AFTER INSERT ON accounts
BEGIN
    INSERT INTO account_balances (account_id, posted_cents) VALUES (NEW.id, 0);
END;

CREATE TRIGGER transactions_totals_insert AFTER INSERT ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.status <> 'POSTED' THEN 0
            WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = NEW.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id = NEW.bill_to_account_id AND NEW.bill_to_account_id <> NEW.account_id;
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = NEW.account_id), 0)
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_delete AFTER DELETE ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.status <> 'POSTED' THEN 0
            WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = OLD.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id = OLD.bill_to_account_id AND OLD.bill_to_account_id <> OLD.account_id;
    UPDATE day_totals SET cents = cents - OLD.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = OLD.account_id), 0)
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_update AFTER UPDATE OF account_id, date, type, status, amount_cents,
    installment_purchase_id, bill_month, bill_to_account_id ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.status <> 'POSTED' THEN 0
            WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = OLD.account_id;
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.status <> 'POSTED' THEN 0
            WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = NEW.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id IN (OLD.bill_to_account_id, NEW.bill_to_account_id);
    UPDATE day_totals SET cents = cents - OLD.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = OLD.account_id), 0)
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = NEW.account_id), 0)
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

-- month_totals, from visible rows.
CREATE TRIGGER transactions_month_insert AFTER INSERT ON transactions
WHEN NEW.hide_from_results = FALSE
BEGIN
    INSERT INTO month_totals (account_id, month, type, status, kind, cents)
    VALUES (NEW.account_id, substr(NEW.date, 1, 7), NEW.type, NEW.status,
        CASE WHEN NEW.installment_purchase_id IS NOT NULL THEN 'installment'
             WHEN NEW.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
        NEW.amount_cents)
    ON CONFLICT (account_id, month, type, status, kind)
    DO UPDATE SET cents = month_totals.cents + excluded.cents;
END;

CREATE TRIGGER transactions_month_delete AFTER DELETE ON transactions
WHEN OLD.hide_from_results = FALSE
BEGIN
    UPDATE month_totals SET cents = cents - OLD.amount_cents
    WHERE account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND type = OLD.type AND status = OLD.status
      AND kind = CASE WHEN OLD.installment_purchase_id IS NOT NULL THEN 'installment'
                      WHEN OLD.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;
END;

CREATE TRIGGER transactions_month_update AFTER UPDATE OF account_id, date, type, status, amount_cents,
    installment_purchase_id, recurrence_id, hide_from_results ON transactions
BEGIN
    UPDATE month_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.hide_from_results = FALSE
      AND account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND type = OLD.type AND status = OLD.status
      AND kind = CASE WHEN OLD.installment_purchase_id IS NOT NULL THEN 'installment'
                      WHEN OLD.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;
    -- The WHERE also keeps SQLite from reading ON CONFLICT as a join's ON.
    INSERT INTO month_totals (account_id, month, type, status, kind, cents)
    SELECT NEW.account_id, substr(NEW.date, 1, 7), NEW.type, NEW.status,
        CASE WHEN NEW.installment_purchase_id IS NOT NULL THEN 'installment'
             WHEN NEW.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
        NEW.amount_cents
    WHERE NEW.hide_from_results = FALSE
    ON CONFLICT (account_id, month, type, status, kind)
    DO UPDATE SET cents = month_totals.cents + excluded.cents;
END;

-- category_month_totals, from visible rows.
CREATE TRIGGER transactions_category_insert AFTER INSERT ON transactions
WHEN NEW.hide_from_results = FALSE
BEGIN
    INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
    VALUES (NEW.account_id, substr(NEW.date, 1, 7), COALESCE(NEW.category_id, ''), NEW.type,
        NEW.status, NEW.transfer_group_id IS NOT NULL, NEW.amount_cents)
    ON CONFLICT (account_id, month, category_id, type, status, transfer)
    DO UPDATE SET cents = category_month_totals.cents + excluded.cents;
END;

CREATE TRIGGER transactions_category_delete AFTER DELETE ON transactions
WHEN OLD.hide_from_results = FALSE
BEGIN
    UPDATE category_month_totals SET cents = cents - OLD.amount_cents
    WHERE account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND category_id = COALESCE(OLD.category_id, '') AND type = OLD.type
      AND status = OLD.status AND transfer = (OLD.transfer_group_id IS NOT NULL);
END;

CREATE TRIGGER transactions_category_update AFTER UPDATE OF account_id, date, type, status,
    amount_cents, category_id, transfer_group_id, hide_from_results ON transactions
BEGIN
    UPDATE category_month_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.hide_from_results = FALSE
      AND account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND category_id = COALESCE(OLD.category_id, '') AND type = OLD.type
      AND status = OLD.status AND transfer = (OLD.transfer_group_id IS NOT NULL);
    -- The WHERE also keeps SQLite from reading ON CONFLICT as a join's ON.
    INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
    SELECT NEW.account_id, substr(NEW.date, 1, 7), COALESCE(NEW.category_id, ''), NEW.type,
        NEW.status, NEW.transfer_group_id IS NOT NULL, NEW.amount_cents
    WHERE NEW.hide_from_results = FALSE
    ON CONFLICT (account_id, month, category_id, type, status, transfer)
    DO UPDATE SET cents = category_month_totals.cents + excluded.cents;
END;

-- day_balances, from POSTED rows.
CREATE TRIGGER transactions_day_balance_insert AFTER INSERT ON transactions
WHEN NEW.status = 'POSTED'
BEGIN
    INSERT INTO day_balances (account_id, date, cents)
    VALUES (NEW.account_id, NEW.date,
        CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END)
    ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + excluded.cents;
END;

CREATE TRIGGER transactions_day_balance_delete AFTER DELETE ON transactions
WHEN OLD.status = 'POSTED'
BEGIN
    UPDATE day_balances
    SET cents = cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE account_id = OLD.account_id AND date = OLD.date;
END;

CREATE TRIGGER transactions_day_balance_update AFTER UPDATE OF account_id, date, type, status,
    amount_cents ON transactions
BEGIN
    UPDATE day_balances
    SET cents = cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE OLD.status = 'POSTED' AND account_id = OLD.account_id AND date = OLD.date;
    INSERT INTO day_balances (account_id, date, cents)
    SELECT NEW.account_id, NEW.date,
        CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END
    WHERE NEW.status = 'POSTED'
    ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + excluded.cents;
END;

-- user_category_month_totals and user_day_balances, from the per-account
-- sums: every change of an account's sum adds its difference. An
-- account's whole contribution moves when what decides where it counts
-- changes (its type; for the day sums also archived, excluded and
-- currency), and leaves before the account is deleted (its per-account
-- sums then go by cascade, adding nothing). While a user is being deleted
-- (the join on users finds none), nothing is added for them.
CREATE TRIGGER category_month_totals_user_insert AFTER INSERT ON category_month_totals
BEGIN
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT a.user_id, NEW.month, NEW.category_id, NEW.type, NEW.status, NEW.transfer,
        a.type = 'CREDIT', NEW.cents
    FROM accounts a JOIN users u ON u.id = a.user_id WHERE a.id = NEW.account_id
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + excluded.cents;
END;

CREATE TRIGGER category_month_totals_user_update AFTER UPDATE OF cents ON category_month_totals
WHEN NEW.cents <> OLD.cents
BEGIN
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT a.user_id, NEW.month, NEW.category_id, NEW.type, NEW.status, NEW.transfer,
        a.type = 'CREDIT', NEW.cents - OLD.cents
    FROM accounts a JOIN users u ON u.id = a.user_id WHERE a.id = NEW.account_id
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + excluded.cents;
END;

CREATE TRIGGER day_balances_user_insert AFTER INSERT ON day_balances
BEGIN
    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT a.user_id, a.currency, NEW.date,
        CASE WHEN a.type = 'CREDIT' THEN 0 ELSE NEW.cents END,
        CASE WHEN a.type = 'CREDIT' THEN NEW.cents ELSE 0 END
    FROM accounts a JOIN users u ON u.id = a.user_id
    WHERE a.id = NEW.account_id AND NOT a.archived AND NOT a.exclude_from_totals
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + excluded.banks,
        cards = user_day_balances.cards + excluded.cards;
END;

CREATE TRIGGER day_balances_user_update AFTER UPDATE OF cents ON day_balances
WHEN NEW.cents <> OLD.cents
BEGIN
    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT a.user_id, a.currency, NEW.date,
        CASE WHEN a.type = 'CREDIT' THEN 0 ELSE NEW.cents - OLD.cents END,
        CASE WHEN a.type = 'CREDIT' THEN NEW.cents - OLD.cents ELSE 0 END
    FROM accounts a JOIN users u ON u.id = a.user_id
    WHERE a.id = NEW.account_id AND NOT a.archived AND NOT a.exclude_from_totals
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + excluded.banks,
        cards = user_day_balances.cards + excluded.cards;
END;

CREATE TRIGGER accounts_user_totals_move AFTER UPDATE OF type, archived, exclude_from_totals,
    currency ON accounts
WHEN OLD.type IS NOT NEW.type OR OLD.archived IS NOT NEW.archived
    OR OLD.exclude_from_totals IS NOT NEW.exclude_from_totals OR OLD.currency IS NOT NEW.currency
BEGIN
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT OLD.user_id, month, category_id, type, status, transfer, OLD.type = 'CREDIT', -cents
    FROM category_month_totals WHERE account_id = OLD.id AND OLD.type IS NOT NEW.type
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + excluded.cents;
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT NEW.user_id, month, category_id, type, status, transfer, NEW.type = 'CREDIT', cents
    FROM category_month_totals WHERE account_id = NEW.id AND OLD.type IS NOT NEW.type
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + excluded.cents;

    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT OLD.user_id, OLD.currency, date,
        CASE WHEN OLD.type = 'CREDIT' THEN 0 ELSE -cents END,
        CASE WHEN OLD.type = 'CREDIT' THEN -cents ELSE 0 END
    FROM day_balances
    WHERE account_id = OLD.id AND NOT OLD.archived AND NOT OLD.exclude_from_totals
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + excluded.banks,
        cards = user_day_balances.cards + excluded.cards;
    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT NEW.user_id, NEW.currency, date,
        CASE WHEN NEW.type = 'CREDIT' THEN 0 ELSE cents END,
        CASE WHEN NEW.type = 'CREDIT' THEN cents ELSE 0 END
    FROM day_balances
    WHERE account_id = NEW.id AND NOT NEW.archived AND NOT NEW.exclude_from_totals
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + excluded.banks,
        cards = user_day_balances.cards + excluded.cards;
END;

CREATE TRIGGER accounts_user_totals_delete BEFORE DELETE ON accounts
WHEN EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)
BEGIN
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT OLD.user_id, month, category_id, type, status, transfer, OLD.type = 'CREDIT', -cents
    FROM category_month_totals WHERE account_id = OLD.id
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + excluded.cents;
    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT OLD.user_id, OLD.currency, date,
        CASE WHEN OLD.type = 'CREDIT' THEN 0 ELSE -cents END,
        CASE WHEN OLD.type = 'CREDIT' THEN -cents ELSE 0 END
    FROM day_balances
    WHERE account_id = OLD.id AND NOT OLD.archived AND NOT OLD.exclude_from_totals
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + excluded.banks,
        cards = user_day_balances.cards + excluded.cards;
END;

-- user_month_stamps, from every change of user_category_month_totals.
CREATE TRIGGER user_category_month_totals_stamp_insert AFTER INSERT ON user_category_month_totals
BEGIN
    INSERT INTO user_month_stamps (user_id, month, stamp) VALUES (NEW.user_id, NEW.month, 1)
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
END;

CREATE TRIGGER user_category_month_totals_stamp_update AFTER UPDATE ON user_category_month_totals
BEGIN
    INSERT INTO user_month_stamps (user_id, month, stamp)
    SELECT OLD.user_id, OLD.month, 1 WHERE OLD.user_id IS NOT NEW.user_id OR OLD.month IS NOT NEW.month
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
    INSERT INTO user_month_stamps (user_id, month, stamp) VALUES (NEW.user_id, NEW.month, 1)
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
END;

-- user_day_stamps, from every change of a stored row or of its tags.
CREATE TRIGGER transactions_day_stamp_insert AFTER INSERT ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT NEW.user_id, NEW.date, u.view_version FROM users u WHERE u.id = NEW.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transactions_day_stamp_update AFTER UPDATE ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT OLD.user_id, OLD.date, u.view_version FROM users u
    WHERE u.id = OLD.user_id AND (OLD.user_id IS NOT NEW.user_id OR OLD.date IS NOT NEW.date)
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT NEW.user_id, NEW.date, u.view_version FROM users u WHERE u.id = NEW.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transactions_day_stamp_delete AFTER DELETE ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT OLD.user_id, OLD.date, u.view_version FROM users u WHERE u.id = OLD.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transaction_tags_day_stamp_insert AFTER INSERT ON transaction_tags
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, u.view_version
    FROM transactions t JOIN users u ON u.id = t.user_id WHERE t.id = NEW.transaction_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transaction_tags_day_stamp_delete AFTER DELETE ON transaction_tags
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, u.view_version
    FROM transactions t JOIN users u ON u.id = t.user_id WHERE t.id = OLD.transaction_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

-- transactions.tag_count, from transaction_tags.
CREATE TRIGGER transaction_tags_count_insert AFTER INSERT ON transaction_tags
BEGIN
    UPDATE transactions SET tag_count = tag_count + 1 WHERE id = NEW.transaction_id;
END;

CREATE TRIGGER transaction_tags_count_delete AFTER DELETE ON transaction_tags
BEGIN
    UPDATE transactions SET tag_count = tag_count - 1 WHERE id = OLD.transaction_id;
END;

-- users.sources_version, bumped by any change to what projections are made
-- from: rules, plans, accounts, tags, tombstones, and the stored rows that
-- replace a rule's or a plan's entry (a plain purchase leaves it, so the
-- cached projection sources stay valid).
CREATE TRIGGER recurrence_rules_sources_insert AFTER INSERT ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER recurrence_rules_sources_update AFTER UPDATE ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER recurrence_rules_sources_delete AFTER DELETE ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER installment_plans_sources_insert AFTER INSERT ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER installment_plans_sources_update AFTER UPDATE ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER installment_plans_sources_delete AFTER DELETE ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER accounts_sources_insert AFTER INSERT ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER accounts_sources_update AFTER UPDATE ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER accounts_sources_delete AFTER DELETE ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER tags_sources_insert AFTER INSERT ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER tags_sources_update AFTER UPDATE ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER tags_sources_delete AFTER DELETE ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER tombstones_sources_insert AFTER INSERT ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER tombstones_sources_update AFTER UPDATE ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER tombstones_sources_delete AFTER DELETE ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER transactions_sources_insert AFTER INSERT ON transactions
WHEN NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER transactions_sources_update AFTER UPDATE OF user_id, recurrence_id, recurrence_period_date,
    installment_purchase_id, installment_number ON transactions
WHEN OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
  OR NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER transactions_sources_delete AFTER DELETE ON transactions
WHEN OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

-- users.categories_version, bumped by any change to the categories a user
-- sees: their own, and which ones they archived.
CREATE TRIGGER categories_version_insert AFTER INSERT ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER categories_version_update AFTER UPDATE ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1
    WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER categories_version_delete AFTER DELETE ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER category_archives_version_insert AFTER INSERT ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER category_archives_version_update AFTER UPDATE ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1
    WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER category_archives_version_delete AFTER DELETE ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
END;
