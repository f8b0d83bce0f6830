-- cofre's whole schema on PostgreSQL, as migrations 0001 to 0027 left it,
-- written once (issue 62). Those migrations are kept as test data only
-- (crates/store/tests/migrations_chain/postgres); a database they made is
-- recorded as at this version when it is opened (src/sql_schema.rs), and
-- tests/schema_baseline.rs proves both ways give one schema. Never edit
-- this file: a change is a new migration, 0029 on.
--
-- Portable column types (ids and dates as TEXT, money as BIGINT cents,
-- timestamps as ISO-8601 TEXT) so both backends run the same queries.
-- Constraint names are the same on SQLite and PostgreSQL. Ordered text
-- keys (ids and dates the store sorts or ranges over) use the "C"
-- collation, so they sort bytewise, exactly as on SQLite.
--
-- 1. What users store.  2. Data derived from it, kept by part 5.
-- 3. Indexes.  4. The shared categories.  5. Triggers and their functions,
-- by what they keep.  6. Creations stored in one call.

-- 1. What users store --------------------------------------------------

-- view_version is bumped by every write of the user's data (the store's
-- begin_write, and the creation functions of part 6), in the write's
-- transaction: answers are cached under it and day stamps take it.
-- sources_version and categories_version are bumped by triggers (part 5)
-- on what projections and the category list are made from, so those
-- caches reload only after such a change.
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
-- tag_count: how many tags the row has (kept by a trigger), so a page
-- looks tags up only for rows that have some.
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
    id TEXT COLLATE "C" PRIMARY KEY,
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
);

-- 2. Derived data --------------------------------------------------------
--
-- Sums kept up to date by the functions and triggers of part 5, so no read
-- sums a whole history. Totals that fall to zero are kept (readers skip
-- them) and stamps only grow: a reader holding a version reloads exactly
-- what changed since. Every running total stays inside +-10^15 cents
-- (cofre_domain::money::MAX_TOTAL_CENTS): a row is at most
-- 99,999,999,999.99, so a total one row past the bound is still far inside
-- BIGINT, and the write that would cross it fails on the named range
-- constraint, which the store reports as a field error.

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

-- A card's rows per day, type and kind (installment or not), the payment
-- legs of its bills apart: what card bills are made of (cards only here;
-- SQLite keeps every account's). version is the account's money_version
-- when the total last changed, so a reader holding a card's days at
-- version v reloads `version > v`, by index.
CREATE TABLE day_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT COLLATE "C" NOT NULL,
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
    month TEXT COLLATE "C" NOT NULL,
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
    month TEXT COLLATE "C" NOT NULL,
    category_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    transfer BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT category_month_totals_pk PRIMARY KEY (account_id, month, category_id, type, status, transfer)
);

-- Each account's POSTED rows per day, moved (CREDIT +, DEBIT -): what
-- user_day_balances is summed from.
CREATE TABLE day_balances (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT COLLATE "C" NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT day_balances_pk PRIMARY KEY (account_id, date)
);

-- category_month_totals summed over a user's accounts, split by whether
-- the account is a card (the cashflow view leaves cards out): a budget or
-- report over all accounts reads one row per month and category.
CREATE TABLE user_category_month_totals (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    month TEXT COLLATE "C" NOT NULL,
    category_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    transfer BOOLEAN NOT NULL,
    card BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT user_category_month_totals_pk
        PRIMARY KEY (user_id, month, category_id, type, status, transfer, card)
);

-- day_balances summed over a user's counted accounts (not archived, not
-- excluded from totals) per currency and day, banks and cards apart: the
-- balance series of reports.
CREATE TABLE user_day_balances (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    date TEXT COLLATE "C" NOT NULL,
    banks BIGINT NOT NULL,
    cards BIGINT NOT NULL,
    CONSTRAINT user_day_balances_pk PRIMARY KEY (user_id, currency, date)
);

-- A stamp per user and month, moved by every change of that month's
-- user_category_month_totals: the key of the store's months cache, so a
-- purchase today leaves the cached months before it valid.
CREATE TABLE user_month_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    month TEXT COLLATE "C" NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_month_stamps_pk PRIMARY KEY (user_id, month)
);

-- A stamp per user and day: the view_version of the last write that
-- touched a stored row of that day or its tags. Every write bumps
-- view_version first, so "no stamp of these days above v" says no write
-- after v touched them: a kept page is checked against its days instead
-- of dropped on every write of its user.
CREATE TABLE user_day_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day TEXT COLLATE "C" NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_day_stamps_pk PRIMARY KEY (user_id, day)
);

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

-- The list's order (newest day first, id ascending within a day). SQLite's
-- list index differs (days ascending, read backwards, with the account):
-- PostgreSQL's B-tree fills its pages either way, and checks a scan's
-- other conditions on the table's row whatever the index holds.
CREATE INDEX transactions_user_date ON transactions (user_id, date DESC, id);
-- A card's rows by date: the amounts of its billing cycles (and the rows
-- a cascade from an account deletes).
CREATE INDEX transactions_account_date ON transactions (account_id, date);
-- Links most rows lack are partial indexes, holding only the rows that
-- have them: fewer index entries for every row written. Queries name the
-- links with = or ANY, which implies NOT NULL, so the planner still uses
-- them; the statement import's ON CONFLICT names the unique index's
-- condition.
CREATE INDEX transactions_recurrence ON transactions (recurrence_id, recurrence_period_date)
WHERE recurrence_id IS NOT NULL;
CREATE INDEX transactions_installment ON transactions (installment_purchase_id, installment_number)
WHERE installment_purchase_id IS NOT NULL;
CREATE UNIQUE INDEX transactions_account_external_id ON transactions (account_id, external_id)
WHERE external_id IS NOT NULL;
CREATE INDEX transactions_bill_payments ON transactions (bill_to_account_id, bill_month)
WHERE bill_to_account_id IS NOT NULL;

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

-- 5. Triggers and their functions, by what they keep -----------------------

-- account_balances: every account has its balance row from its creation.
CREATE FUNCTION cofre_account_balance_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO account_balances (account_id, posted_cents) VALUES (NEW.id, 0);
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_balance_row AFTER INSERT ON accounts
FOR EACH ROW EXECUTE FUNCTION cofre_account_balance_row();

-- What a row of transactions adds to every sum and stamp, from one lookup
-- of its account and owner: account_balances (balance and money_version,
-- of the account and of a card it is billed to), day_totals (cards only),
-- month_totals, category_month_totals and user_category_month_totals
-- with user_month_stamps, day_balances and user_day_balances, and
-- user_day_stamps. A row counts times `sign` (+1 put in, -1 taken out),
-- each part only when asked. Each sum is updated where it exists and
-- inserted, when adding, where it does not; taking out only changes sums
-- that exist: an account being deleted has lost them already (by
-- cascade), and its user-wide share left before (by
-- cofre_account_user_totals_add), so nothing is added for an account or
-- user no longer found. Gives TRUE: a value its caller assigns, which
-- PL/pgSQL evaluates without starting a query, as PERFORM would.
CREATE FUNCTION cofre_transaction_row_add(t transactions, sign BIGINT, totals BOOLEAN,
    months BOOLEAN, categories BOOLEAN, days BOOLEAN) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
    -- (No name here is a column's: PL/pgSQL would take it for one.)
    -- The row's amount as the day, month and category sums count it, and
    -- as balances do (CREDIT adds, DEBIT subtracts), each times sign.
    signed_cents BIGINT := sign * t.amount_cents;
    signed_moved BIGINT := sign * CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END;
    row_month TEXT := substr(t.date, 1, 7);
    row_kind TEXT := CASE WHEN t.installment_purchase_id IS NOT NULL THEN 'installment'
                          WHEN t.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;
    row_category TEXT := COALESCE(t.category_id, '');
    row_transfer BOOLEAN := t.transfer_group_id IS NOT NULL;
    adding BOOLEAN := sign > 0;
    account_owner TEXT;
    on_card BOOLEAN;
    in_totals BOOLEAN;
    account_currency TEXT;
    balance_version BIGINT;
    sum_found BOOLEAN;
BEGIN
    IF categories OR days OR (totals AND t.bill_month IS NULL) THEN
        SELECT a.user_id, a.type = 'CREDIT', NOT a.archived AND NOT a.exclude_from_totals, a.currency
        INTO account_owner, on_card, in_totals, account_currency
        FROM accounts a JOIN users u ON u.id = a.user_id WHERE a.id = t.account_id;
    END IF;

    IF totals THEN
        UPDATE account_balances
        SET posted_cents = posted_cents + CASE WHEN t.status = 'POSTED' THEN signed_moved ELSE 0 END,
            money_version = money_version + 1
        WHERE account_id = t.account_id
        RETURNING money_version INTO balance_version;
        IF t.bill_to_account_id <> t.account_id THEN
            UPDATE account_balances SET money_version = money_version + 1
            WHERE account_id = t.bill_to_account_id;
        END IF;
        IF t.bill_month IS NULL AND on_card THEN
            UPDATE day_totals
            SET cents = day_totals.cents + signed_cents, version = COALESCE(balance_version, 0)
            WHERE account_id = t.account_id AND date = t.date AND type = t.type
              AND installment = (t.installment_purchase_id IS NOT NULL);
            IF NOT FOUND AND adding THEN
                INSERT INTO day_totals (account_id, date, type, installment, cents, version)
                VALUES (t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL,
                    signed_cents, COALESCE(balance_version, 0))
                ON CONFLICT (account_id, date, type, installment)
                DO UPDATE SET cents = day_totals.cents + EXCLUDED.cents, version = EXCLUDED.version;
            END IF;
        END IF;
    END IF;

    IF months AND NOT t.hide_from_results THEN
        UPDATE month_totals SET cents = month_totals.cents + signed_cents
        WHERE account_id = t.account_id AND month = row_month AND type = t.type
          AND status = t.status AND kind = row_kind;
        IF NOT FOUND AND adding THEN
            INSERT INTO month_totals (account_id, month, type, status, kind, cents)
            VALUES (t.account_id, row_month, t.type, t.status, row_kind, signed_cents)
            ON CONFLICT (account_id, month, type, status, kind)
            DO UPDATE SET cents = month_totals.cents + EXCLUDED.cents;
        END IF;
    END IF;

    IF categories AND NOT t.hide_from_results THEN
        UPDATE category_month_totals SET cents = category_month_totals.cents + signed_cents
        WHERE account_id = t.account_id AND month = row_month AND category_id = row_category
          AND type = t.type AND status = t.status AND transfer = row_transfer;
        sum_found := FOUND;
        IF NOT sum_found AND adding THEN
            INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
            VALUES (t.account_id, row_month, row_category, t.type, t.status, row_transfer, signed_cents)
            ON CONFLICT (account_id, month, category_id, type, status, transfer)
            DO UPDATE SET cents = category_month_totals.cents + EXCLUDED.cents;
            sum_found := TRUE;
        END IF;
        IF sum_found AND account_owner IS NOT NULL THEN
            UPDATE user_category_month_totals SET cents = user_category_month_totals.cents + signed_cents
            WHERE user_id = account_owner AND month = row_month AND category_id = row_category
              AND type = t.type AND status = t.status AND transfer = row_transfer AND card = on_card;
            IF NOT FOUND THEN
                INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
                VALUES (account_owner, row_month, row_category, t.type, t.status, row_transfer, on_card, signed_cents)
                ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
                DO UPDATE SET cents = user_category_month_totals.cents + EXCLUDED.cents;
            END IF;
            UPDATE user_month_stamps SET stamp = user_month_stamps.stamp + 1
            WHERE user_id = account_owner AND month = row_month;
            IF NOT FOUND THEN
                INSERT INTO user_month_stamps (user_id, month, stamp) VALUES (account_owner, row_month, 1)
                ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
            END IF;
        END IF;
    END IF;

    IF days AND t.status = 'POSTED' THEN
        UPDATE day_balances SET cents = day_balances.cents + signed_moved
        WHERE account_id = t.account_id AND date = t.date;
        sum_found := FOUND;
        IF NOT sum_found AND adding THEN
            INSERT INTO day_balances (account_id, date, cents) VALUES (t.account_id, t.date, signed_moved)
            ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + EXCLUDED.cents;
            sum_found := TRUE;
        END IF;
        IF sum_found AND account_owner IS NOT NULL AND in_totals THEN
            UPDATE user_day_balances
            SET banks = user_day_balances.banks + CASE WHEN on_card THEN 0 ELSE signed_moved END,
                cards = user_day_balances.cards + CASE WHEN on_card THEN signed_moved ELSE 0 END
            WHERE user_id = account_owner AND currency = account_currency AND date = t.date;
            IF NOT FOUND THEN
                INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
                VALUES (account_owner, account_currency, t.date, CASE WHEN on_card THEN 0 ELSE signed_moved END,
                    CASE WHEN on_card THEN signed_moved ELSE 0 END)
                ON CONFLICT (user_id, currency, date) DO UPDATE
                SET banks = user_day_balances.banks + EXCLUDED.banks,
                    cards = user_day_balances.cards + EXCLUDED.cards;
            END IF;
        END IF;
    END IF;

    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, u.view_version FROM users u WHERE u.id = t.user_id
    ON CONFLICT (user_id, day) DO UPDATE
    SET stamp = GREATEST(user_day_stamps.stamp, EXCLUDED.stamp);
    RETURN TRUE;
END $$;

-- One trigger for what a row adds to the sums: the old row taken out and
-- the new one put in, each part only when a column it depends on changed
-- (the day is stamped always: any change of a row changes its day's
-- pages). It stands aside while a call of creations (part 6) adds its
-- rows up itself (cofre.sums_by_call 'on', set for that transaction
-- only); the WHEN says so without starting PL/pgSQL.
CREATE FUNCTION cofre_transaction_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    totals BOOLEAN := TRUE;
    months BOOLEAN := TRUE;
    categories BOOLEAN := TRUE;
    days BOOLEAN := TRUE;
    counted BOOLEAN;
BEGIN
    IF current_setting('cofre.sums_by_call', TRUE) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        days := (OLD.account_id, OLD.date, OLD.type, OLD.status, OLD.amount_cents)
            IS DISTINCT FROM (NEW.account_id, NEW.date, NEW.type, NEW.status, NEW.amount_cents);
        totals := days OR (OLD.installment_purchase_id, OLD.bill_month, OLD.bill_to_account_id)
            IS DISTINCT FROM (NEW.installment_purchase_id, NEW.bill_month, NEW.bill_to_account_id);
        months := days OR (OLD.installment_purchase_id, OLD.recurrence_id, OLD.hide_from_results)
            IS DISTINCT FROM (NEW.installment_purchase_id, NEW.recurrence_id, NEW.hide_from_results);
        categories := days OR (OLD.category_id, OLD.transfer_group_id, OLD.hide_from_results)
            IS DISTINCT FROM (NEW.category_id, NEW.transfer_group_id, NEW.hide_from_results);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        counted := cofre_transaction_row_add(OLD, -1, totals, months, categories, days);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        counted := cofre_transaction_row_add(NEW, 1, totals, months, categories, days);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER transactions_row AFTER INSERT OR UPDATE OR DELETE ON transactions
FOR EACH ROW WHEN (current_setting('cofre.sums_by_call', TRUE) IS DISTINCT FROM 'on')
EXECUTE FUNCTION cofre_transaction_row();

-- The same sums and stamps as cofre_transaction_row_add, for the new rows
-- of a call of creations, added once a call: one statement per sum, each
-- summing the call's rows by the sum's key, so no statement meets a sum
-- twice (ON CONFLICT may not). An account's money version and a month's
-- stamp move by their rows' count, as row by row. The rows' accounts
-- exist (the rows were just stored on them) and their users' row locks
-- are held, so no other transaction writes these sums meanwhile.
CREATE FUNCTION cofre_transaction_rows_add(added transactions[]) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE account_balances b
    SET posted_cents = b.posted_cents + s.moved, money_version = b.money_version + s.n
    FROM (SELECT t.account_id,
              SUM(CASE WHEN t.status <> 'POSTED' THEN 0 WHEN t.type = 'CREDIT' THEN t.amount_cents
                       ELSE -t.amount_cents END)::BIGINT AS moved,
              COUNT(*) AS n
          FROM unnest(added) t GROUP BY t.account_id) s
    WHERE b.account_id = s.account_id;
    UPDATE account_balances b SET money_version = b.money_version + s.n
    FROM (SELECT t.bill_to_account_id AS account_id, COUNT(*) AS n
          FROM unnest(added) t WHERE t.bill_to_account_id <> t.account_id
          GROUP BY t.bill_to_account_id) s
    WHERE b.account_id = s.account_id;
    INSERT INTO day_totals (account_id, date, type, installment, cents, version)
    SELECT t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL,
        SUM(t.amount_cents)::BIGINT, COALESCE(MAX(b.money_version), 0)
    FROM unnest(added) t JOIN accounts a ON a.id = t.account_id
    LEFT JOIN account_balances b ON b.account_id = t.account_id
    WHERE t.bill_month IS NULL AND a.type = 'CREDIT'
    GROUP BY t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL
    ON CONFLICT (account_id, date, type, installment)
    DO UPDATE SET cents = day_totals.cents + EXCLUDED.cents, version = EXCLUDED.version;

    INSERT INTO month_totals (account_id, month, type, status, kind, cents)
    SELECT t.account_id, substr(t.date, 1, 7), t.type, t.status,
        CASE WHEN t.installment_purchase_id IS NOT NULL THEN 'installment'
             WHEN t.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
        SUM(t.amount_cents)::BIGINT
    FROM unnest(added) t WHERE NOT t.hide_from_results
    GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (account_id, month, type, status, kind)
    DO UPDATE SET cents = month_totals.cents + EXCLUDED.cents;

    INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
    SELECT t.account_id, substr(t.date, 1, 7), COALESCE(t.category_id, ''), t.type, t.status,
        t.transfer_group_id IS NOT NULL, SUM(t.amount_cents)::BIGINT
    FROM unnest(added) t WHERE NOT t.hide_from_results
    GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (account_id, month, category_id, type, status, transfer)
    DO UPDATE SET cents = category_month_totals.cents + EXCLUDED.cents;
    INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
    SELECT a.user_id, substr(t.date, 1, 7), COALESCE(t.category_id, ''), t.type, t.status,
        t.transfer_group_id IS NOT NULL, a.type = 'CREDIT', SUM(t.amount_cents)::BIGINT
    FROM unnest(added) t JOIN accounts a ON a.id = t.account_id JOIN users u ON u.id = a.user_id
    WHERE NOT t.hide_from_results
    GROUP BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
    DO UPDATE SET cents = user_category_month_totals.cents + EXCLUDED.cents;
    INSERT INTO user_month_stamps (user_id, month, stamp)
    SELECT a.user_id, substr(t.date, 1, 7), COUNT(*)
    FROM unnest(added) t JOIN accounts a ON a.id = t.account_id JOIN users u ON u.id = a.user_id
    WHERE NOT t.hide_from_results
    GROUP BY 1, 2
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + EXCLUDED.stamp;

    INSERT INTO day_balances (account_id, date, cents)
    SELECT t.account_id, t.date,
        SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END)::BIGINT
    FROM unnest(added) t WHERE t.status = 'POSTED'
    GROUP BY 1, 2
    ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + EXCLUDED.cents;
    INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
    SELECT a.user_id, a.currency, t.date,
        SUM(CASE WHEN a.type = 'CREDIT' THEN 0 WHEN t.type = 'CREDIT' THEN t.amount_cents
                 ELSE -t.amount_cents END)::BIGINT,
        SUM(CASE WHEN a.type <> 'CREDIT' THEN 0 WHEN t.type = 'CREDIT' THEN t.amount_cents
                 ELSE -t.amount_cents END)::BIGINT
    FROM unnest(added) t JOIN accounts a ON a.id = t.account_id JOIN users u ON u.id = a.user_id
    WHERE t.status = 'POSTED' AND NOT a.archived AND NOT a.exclude_from_totals
    GROUP BY 1, 2, 3
    ON CONFLICT (user_id, currency, date) DO UPDATE
    SET banks = user_day_balances.banks + EXCLUDED.banks,
        cards = user_day_balances.cards + EXCLUDED.cards;

    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, MAX(u.view_version)
    FROM unnest(added) t JOIN users u ON u.id = t.user_id
    GROUP BY 1, 2
    ON CONFLICT (user_id, day) DO UPDATE
    SET stamp = GREATEST(user_day_stamps.stamp, EXCLUDED.stamp);
    RETURN TRUE;
END $$;

-- day_totals of an account that becomes a card, made afresh from its rows
-- in the transaction that changes its type: its money_version bumped,
-- every day total it has set to zero and stamped with that version, then
-- its rows' sums written over them with the same stamp. No total is
-- deleted, so a reader holding the card's days at an older version (it
-- was a card before) reloads every day that changed. An account that
-- stops being a card keeps its day totals, no longer kept up and unread.
CREATE FUNCTION cofre_card_days_afresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stamp BIGINT;
BEGIN
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id = NEW.id
    RETURNING money_version INTO stamp;
    UPDATE day_totals SET cents = 0, version = COALESCE(stamp, 0)
    WHERE account_id = NEW.id;
    INSERT INTO day_totals (account_id, date, type, installment, cents, version)
    SELECT t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL,
        SUM(t.amount_cents)::BIGINT, COALESCE(stamp, 0)
    FROM transactions t
    WHERE t.account_id = NEW.id AND t.bill_month IS NULL
    GROUP BY t.account_id, t.date, t.type, t.installment_purchase_id IS NOT NULL
    ON CONFLICT (account_id, date, type, installment)
    DO UPDATE SET cents = EXCLUDED.cents, version = EXCLUDED.version;
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_card_days AFTER UPDATE OF type ON accounts
FOR EACH ROW WHEN (NEW.type = 'CREDIT' AND OLD.type IS DISTINCT FROM 'CREDIT')
EXECUTE FUNCTION cofre_card_days_afresh();

-- user_category_month_totals (with its months' stamps) and
-- user_day_balances, when an account's whole contribution moves: adds
-- `sign` times it as `account` says where it counts, its category sums
-- when `categories`, its day sums when `days` (and the account counts in
-- totals). It moves when what decides where it counts changes (its type;
-- for the day sums also archived, excluded and currency), and leaves
-- before the account is deleted (its rows then go by cascade, when the
-- account can no longer be found, so they add nothing). While a user is
-- being deleted, nothing is added for them.
CREATE FUNCTION cofre_account_user_totals_add(account accounts, sign BIGINT,
    categories BOOLEAN, days BOOLEAN) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF categories THEN
        INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
        SELECT account.user_id, m.month, m.category_id, m.type, m.status, m.transfer,
            account.type = 'CREDIT', sign * m.cents
        FROM category_month_totals m WHERE m.account_id = account.id
        ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
        DO UPDATE SET cents = user_category_month_totals.cents + EXCLUDED.cents;
        INSERT INTO user_month_stamps (user_id, month, stamp)
        SELECT DISTINCT account.user_id, m.month, 1
        FROM category_month_totals m WHERE m.account_id = account.id
        ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
    END IF;
    IF days AND NOT account.archived AND NOT account.exclude_from_totals THEN
        INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
        SELECT account.user_id, account.currency, d.date,
            CASE WHEN account.type = 'CREDIT' THEN 0 ELSE sign * d.cents END,
            CASE WHEN account.type = 'CREDIT' THEN sign * d.cents ELSE 0 END
        FROM day_balances d WHERE d.account_id = account.id
        ON CONFLICT (user_id, currency, date) DO UPDATE
        SET banks = user_day_balances.banks + EXCLUDED.banks,
            cards = user_day_balances.cards + EXCLUDED.cards;
    END IF;
END $$;

CREATE FUNCTION cofre_account_user_totals_move() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    categories BOOLEAN := OLD.type IS DISTINCT FROM NEW.type;
    days BOOLEAN := OLD.type IS DISTINCT FROM NEW.type
        OR OLD.archived IS DISTINCT FROM NEW.archived
        OR OLD.exclude_from_totals IS DISTINCT FROM NEW.exclude_from_totals
        OR OLD.currency IS DISTINCT FROM NEW.currency;
BEGIN
    IF categories OR days THEN
        PERFORM cofre_account_user_totals_add(OLD, -1, categories, days);
        PERFORM cofre_account_user_totals_add(NEW, 1, categories, days);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_user_totals_move
AFTER UPDATE OF type, archived, exclude_from_totals, currency ON accounts
FOR EACH ROW EXECUTE FUNCTION cofre_account_user_totals_move();

CREATE FUNCTION cofre_account_user_totals_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) THEN
        PERFORM cofre_account_user_totals_add(OLD, -1, TRUE, TRUE);
    END IF;
    RETURN OLD;
END $$;

CREATE TRIGGER accounts_user_totals_delete
BEFORE DELETE ON accounts
FOR EACH ROW EXECUTE FUNCTION cofre_account_user_totals_delete();

-- user_day_stamps, when a row's tags change: its tags are part of the row
-- as a page shows it. (A row's own changes stamp its day through
-- cofre_transaction_row_add; when the row is deleted, that already
-- stamped the day.) cofre_stamp_day is PL/pgSQL, not SQL, so its plan is
-- kept for the session: PostgreSQL plans a SQL function it cannot inline
-- on every call.
CREATE FUNCTION cofre_stamp_day(owner TEXT, on_day TEXT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT owner, on_day, u.view_version FROM users u WHERE u.id = owner
    ON CONFLICT (user_id, day) DO UPDATE
    SET stamp = GREATEST(user_day_stamps.stamp, EXCLUDED.stamp);
END $$;

CREATE FUNCTION cofre_transaction_tags_day_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tagged TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        tagged := OLD.transaction_id;
    ELSE
        tagged := NEW.transaction_id;
    END IF;
    PERFORM cofre_stamp_day(t.user_id, t.date) FROM transactions t WHERE t.id = tagged;
    RETURN NULL;
END $$;

CREATE TRIGGER transaction_tags_day_stamp
AFTER INSERT OR DELETE ON transaction_tags
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_tags_day_stamp();

-- transactions.tag_count, from transaction_tags.
CREATE FUNCTION cofre_transaction_tags_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE transactions SET tag_count = tag_count - 1 WHERE id = OLD.transaction_id;
    ELSE
        UPDATE transactions SET tag_count = tag_count + 1 WHERE id = NEW.transaction_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER transaction_tags_count
AFTER INSERT OR DELETE ON transaction_tags
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_tags_count();

-- users.sources_version, bumped by any change to what projections are made
-- from: rules, plans, accounts, tags, tombstones, and the stored rows that
-- replace a rule's or a plan's entry (a plain purchase leaves it, so the
-- cached projection sources stay valid).
CREATE FUNCTION cofre_sources_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
        UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER recurrence_rules_sources AFTER INSERT OR UPDATE OR DELETE ON recurrence_rules
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER installment_plans_sources AFTER INSERT OR UPDATE OR DELETE ON installment_plans
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER accounts_sources AFTER INSERT OR UPDATE OR DELETE ON accounts
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER tags_sources AFTER INSERT OR UPDATE OR DELETE ON tags
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER tombstones_sources AFTER INSERT OR UPDATE OR DELETE ON tombstones
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER transactions_sources_insert AFTER INSERT ON transactions
FOR EACH ROW WHEN (NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER transactions_sources_update
AFTER UPDATE OF user_id, recurrence_id, recurrence_period_date, installment_purchase_id, installment_number
ON transactions
FOR EACH ROW WHEN (OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
    OR NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER transactions_sources_delete AFTER DELETE ON transactions
FOR EACH ROW WHEN (OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();

-- users.categories_version, bumped by any change to the categories a user
-- sees: their own, and which ones they archived.
CREATE FUNCTION cofre_categories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
        UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER categories_version AFTER INSERT OR UPDATE OR DELETE ON categories
FOR EACH ROW EXECUTE FUNCTION cofre_categories_changed();
CREATE TRIGGER category_archives_version AFTER INSERT OR UPDATE OR DELETE ON category_archives
FOR EACH ROW EXECUTE FUNCTION cofre_categories_changed();

-- 6. Creations stored in one call ------------------------------------------
--
-- Single-row creations that arrive together (crates/store/src/postgres/
-- creations.rs) are stored by one call of cofre_create_rows: one
-- statement, so one transaction and one WAL flush. Each creation takes
-- the values of the Rust path's INSERT (`insert_args` in sql_steps.rs, in
-- that order), then its tag ids (a JSON array), whether the client chose
-- the id, and the API key to check (a key the request was authenticated
-- with from memory). The caller sorts creations by user, so calls take
-- the users' row locks in one order and never wait for each other in a
-- cycle. Refusals, as SQLSTATE codes or answered codes (postgres.rs maps
-- them):
--   CF001  the id is taken by another request (another user's row, or
--          another fingerprint)
--   CF002  no such category for the user
--   CF003  no such tag (its id is the message)
--   CF004  no such account for the user
--   CF005  past the request's time: the call keeps nothing
--   CF006  the API key is revoked or not the user's
-- A refused creation leaves nothing behind but its user's version bump
-- (which only tells caches to look again).

-- One creation: its user's version bumped (when p_bump: a call's later
-- creations for the same user need not), then the replay and refusal
-- checks, the INSERT and its tags. A refusal is answered as a code and a
-- message, so a call goes on without a subtransaction each.
CREATE FUNCTION cofre_create_one(
    p_id TEXT, p_user TEXT, p_account TEXT, p_date TEXT, p_type TEXT, p_status TEXT,
    p_amount_cents BIGINT, p_description TEXT, p_notes TEXT, p_category TEXT,
    p_created_by_user BOOLEAN, p_source TEXT, p_hide BOOLEAN, p_search_text TEXT,
    p_fingerprint TEXT, p_now TEXT, p_recurrence TEXT, p_period TEXT, p_purchase TEXT,
    p_number BIGINT, p_tags TEXT, p_client_chosen BOOLEAN, p_cut_off TIMESTAMPTZ,
    p_bump BOOLEAN,
    OUT made transactions, OUT tags JSON, OUT deduped BOOLEAN, OUT code TEXT, OUT message TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    tag_ids TEXT[] := '{}';
BEGIN
    IF p_tags <> '[]' THEN
        tag_ids := ARRAY(SELECT json_array_elements_text(p_tags::json));
    END IF;
    IF p_bump THEN
        UPDATE users SET view_version = view_version + 1 WHERE id = p_user;
    END IF;
    -- Its turn came (the user's other writes are done) too late.
    IF clock_timestamp() > p_cut_off THEN
        code := 'CF005';
        message := 'past the request''s deadline';
        RETURN;
    END IF;
    deduped := FALSE;
    IF p_client_chosen THEN
        SELECT * INTO made FROM transactions t WHERE t.id = p_id;
        IF FOUND THEN
            IF made.user_id = p_user AND made.fingerprint = p_fingerprint THEN
                deduped := TRUE;
            ELSE
                made := NULL;
                code := 'CF001';
                message := 'the id is taken';
                RETURN;
            END IF;
        END IF;
    END IF;
    IF NOT deduped THEN
        IF p_category IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories c
            WHERE c.id = p_category AND (c.user_id IS NULL OR c.user_id = p_user)) THEN
            code := 'CF002';
            message := 'no such category';
            RETURN;
        END IF;
        IF cardinality(tag_ids) > 0 THEN
            SELECT w.tag_id INTO message FROM unnest(tag_ids) WITH ORDINALITY AS w (tag_id, n)
            WHERE NOT EXISTS (SELECT 1 FROM tags g WHERE g.id = w.tag_id AND g.user_id = p_user)
            ORDER BY w.n LIMIT 1;
            IF message IS NOT NULL THEN
                code := 'CF003';
                RETURN;
            END IF;
        END IF;
        INSERT INTO transactions (id, user_id, account_id, date, type, status, amount_cents,
            currency, description, notes, category_id, created_by_user, source, hide_from_results,
            search_text, fingerprint, created_at, updated_at, recurrence_id, recurrence_period_date,
            installment_purchase_id, installment_number)
        SELECT p_id, p_user, p_account, p_date, p_type, p_status, p_amount_cents, a.currency,
            p_description, p_notes, p_category, p_created_by_user, p_source, p_hide,
            p_search_text, p_fingerprint, p_now, p_now, p_recurrence, p_period, p_purchase, p_number
        FROM accounts a WHERE a.id = p_account AND a.user_id = p_user
        RETURNING * INTO made;
        IF NOT FOUND THEN
            code := 'CF004';
            message := 'no such account';
            RETURN;
        END IF;
        IF cardinality(tag_ids) > 0 THEN
            INSERT INTO transaction_tags (transaction_id, tag_id) SELECT p_id, unnest(tag_ids);
            -- As stored, with the tag count the tags' trigger set.
            SELECT * INTO made FROM transactions t WHERE t.id = p_id;
        END IF;
    END IF;
    IF made.tag_count > 0 THEN
        SELECT json_agg(json_build_array(g.id, g.title, g.color_hex)) INTO tags
        FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
        WHERE tt.transaction_id = p_id;
    END IF;
END $$;

-- The creations of a call: p_rows is the text of a JSON array with one
-- array per creation; p_budget_ms the least time any of their requests
-- has left. Several creations with distinct ids go to cofre_create_set;
-- otherwise (one, or a client sending one id twice, where a later one must
-- see the earlier one's row) creation by creation through
-- cofre_create_one, the row trigger standing aside when there are several
-- and the rows then added up once. One row per creation, in p_rows's
-- order (n counts from 1). Any error fails the whole call; the caller
-- then stores each creation in a call of its own.
CREATE FUNCTION cofre_create_rows(p_rows TEXT, p_budget_ms BIGINT)
RETURNS TABLE (n INTEGER, made transactions, tags JSON, deduped BOOLEAN, code TEXT, message TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    r JSONB;
    c RECORD;
    last_user TEXT;
    added transactions[] := '{}';
    counted BOOLEAN;
    all_rows JSONB := p_rows::jsonb;
    by_call BOOLEAN := jsonb_array_length(all_rows) > 1;
    cut_off TIMESTAMPTZ := statement_timestamp() + p_budget_ms * INTERVAL '1 millisecond';
BEGIN
    IF by_call AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(all_rows) AS e
                               GROUP BY e->>0 HAVING COUNT(*) > 1) THEN
        RETURN QUERY SELECT * FROM cofre_create_set(all_rows, cut_off);
        RETURN;
    END IF;
    IF by_call THEN
        PERFORM set_config('cofre.sums_by_call', 'on', TRUE);
    END IF;
    n := 0;
    FOR r IN SELECT e FROM jsonb_array_elements(all_rows) AS e LOOP
        n := n + 1;
        IF r->>22 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_keys k
            WHERE k.id = r->>22 AND k.user_id = r->>1 AND k.revoked_at IS NULL) THEN
            made := NULL;
            tags := NULL;
            deduped := NULL;
            code := 'CF006';
            message := 'the API key is revoked';
            RETURN NEXT;
            CONTINUE;
        END IF;
        SELECT * INTO c FROM cofre_create_one(r->>0, r->>1, r->>2, r->>3, r->>4, r->>5,
            (r->>6)::BIGINT, r->>7, r->>8, r->>9, (r->>10)::BOOLEAN, r->>11,
            (r->>12)::BOOLEAN, r->>13, r->>14, r->>15, r->>16, r->>17, r->>18,
            (r->>19)::BIGINT, r->>20, (r->>21)::BOOLEAN, cut_off,
            last_user IS DISTINCT FROM r->>1);
        last_user := r->>1;
        IF c.code = 'CF005' THEN
            RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
        END IF;
        IF by_call AND c.code IS NULL AND NOT c.deduped THEN
            added := added || c.made;
        END IF;
        made := c.made;
        tags := c.tags;
        deduped := c.deduped;
        code := c.code;
        message := c.message;
        RETURN NEXT;
    END LOOP;
    IF by_call THEN
        PERFORM set_config('cofre.sums_by_call', 'off', TRUE);
        IF cardinality(added) > 0 THEN
            counted := cofre_transaction_rows_add(added);
        END IF;
    END IF;
    IF clock_timestamp() > cut_off THEN
        RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
    END IF;
END $$;

-- A creation of a call, as cofre_create_rows's JSON gives it, with what
-- the call decided of it so far.
CREATE TYPE cofre_creation AS (
    n INTEGER, id TEXT, user_id TEXT, account_id TEXT, date TEXT, type TEXT, status TEXT,
    amount_cents BIGINT, description TEXT, notes TEXT, category_id TEXT,
    created_by_user BOOLEAN, source TEXT, hide BOOLEAN, search_text TEXT, fingerprint TEXT,
    now TEXT, recurrence_id TEXT, period TEXT, purchase_id TEXT, number BIGINT, tag_ids TEXT[],
    client_chosen BOOLEAN, key_id TEXT, code TEXT, deduped BOOLEAN, missing_tag TEXT);

-- The creations of a call with distinct ids, set by set: the same
-- decisions, in the same order, as cofre_create_one creation by creation
-- (read the two side by side), in one statement per step: read every
-- creation and check its key (CF006), lock the call's users in id order
-- and bump them, decide every refusal or replay, store every row left,
-- store their tags, add them up (cofre_transaction_rows_add), answer. Its
-- statements are planned once a connection (force_generic_plan): planned
-- afresh on every call they cost more than they save. Each reads a table
-- by its key in a subquery of its own, a plan that stays an index lookup
-- whatever the table's size when it was planned.
CREATE FUNCTION cofre_create_set(p_rows JSONB, p_cut_off TIMESTAMPTZ)
RETURNS TABLE (n INTEGER, made transactions, tags JSON, deduped BOOLEAN, code TEXT, message TEXT)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    cs cofre_creation[];
    stored transactions[];
    counted BOOLEAN;
BEGIN
    PERFORM set_config('cofre.sums_by_call', 'on', TRUE);
    cs := ARRAY(
        SELECT ROW(e.k::INTEGER, e.r->>0, e.r->>1, e.r->>2, e.r->>3, e.r->>4, e.r->>5,
            (e.r->>6)::BIGINT, e.r->>7, e.r->>8, e.r->>9, (e.r->>10)::BOOLEAN, e.r->>11,
            (e.r->>12)::BOOLEAN, e.r->>13, e.r->>14, e.r->>15, e.r->>16, e.r->>17, e.r->>18,
            (e.r->>19)::BIGINT,
            CASE WHEN e.r->>20 = '[]' THEN '{}'::TEXT[]
                 ELSE ARRAY(SELECT jsonb_array_elements_text((e.r->>20)::jsonb)) END,
            (e.r->>21)::BOOLEAN, e.r->>22,
            CASE WHEN e.r->>22 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_keys k
                WHERE k.id = e.r->>22 AND k.user_id = e.r->>1 AND k.revoked_at IS NULL)
                THEN 'CF006' END,
            FALSE, NULL)::cofre_creation
        FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS e (r, k)
        ORDER BY e.k);

    PERFORM 1 FROM users u
    WHERE u.id = ANY (ARRAY(SELECT c.user_id FROM unnest(cs) c WHERE c.code IS NULL))
    ORDER BY u.id COLLATE "C" FOR UPDATE;
    UPDATE users u SET view_version = u.view_version + 1
    WHERE u.id = ANY (ARRAY(SELECT c.user_id FROM unnest(cs) c WHERE c.code IS NULL));
    IF clock_timestamp() > p_cut_off THEN
        RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
    END IF;

    cs := ARRAY(
        SELECT ROW(c.n, c.id, c.user_id, c.account_id, c.date, c.type, c.status, c.amount_cents,
            c.description, c.notes, c.category_id, c.created_by_user, c.source, c.hide,
            c.search_text, c.fingerprint, c.now, c.recurrence_id, c.period, c.purchase_id,
            c.number, c.tag_ids, c.client_chosen, c.key_id,
            CASE WHEN c.code IS NOT NULL THEN c.code
                 WHEN o.taken AND o.same THEN NULL
                 WHEN o.taken THEN 'CF001'
                 WHEN c.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories g
                     WHERE g.id = c.category_id AND (g.user_id IS NULL OR g.user_id = c.user_id))
                     THEN 'CF002'
                 WHEN o.missing_tag IS NOT NULL THEN 'CF003'
                 WHEN NOT EXISTS (SELECT 1 FROM accounts a
                     WHERE a.id = c.account_id AND a.user_id = c.user_id) THEN 'CF004'
            END,
            c.code IS NULL AND o.taken AND o.same, o.missing_tag)::cofre_creation
        FROM unnest(cs) c
        CROSS JOIN LATERAL (SELECT
            COALESCE(old.taken, FALSE) AS taken, COALESCE(old.same, FALSE) AS same,
            CASE WHEN cardinality(c.tag_ids) > 0 THEN
                (SELECT w.tag_id FROM unnest(c.tag_ids) WITH ORDINALITY AS w (tag_id, k)
                 WHERE NOT EXISTS (SELECT 1 FROM tags g WHERE g.id = w.tag_id AND g.user_id = c.user_id)
                 ORDER BY w.k LIMIT 1) END AS missing_tag
            FROM (SELECT TRUE AS taken,
                      COALESCE(t.user_id = c.user_id AND t.fingerprint = c.fingerprint, FALSE) AS same
                  FROM transactions t WHERE c.client_chosen AND t.id = c.id) old
            RIGHT JOIN (SELECT 1) one ON TRUE) o
        ORDER BY c.n);

    WITH ins AS (
        INSERT INTO transactions AS t (id, user_id, account_id, date, type, status, amount_cents,
            currency, description, notes, category_id, created_by_user, source, hide_from_results,
            search_text, fingerprint, created_at, updated_at, recurrence_id, recurrence_period_date,
            installment_purchase_id, installment_number)
        SELECT c.id, c.user_id, c.account_id, c.date, c.type, c.status, c.amount_cents,
            (SELECT a.currency FROM accounts a WHERE a.id = c.account_id),
            c.description, c.notes, c.category_id, c.created_by_user, c.source, c.hide,
            c.search_text, c.fingerprint, c.now, c.now, c.recurrence_id, c.period, c.purchase_id,
            c.number
        FROM unnest(cs) c
        WHERE c.code IS NULL AND NOT c.deduped
        ORDER BY c.n
        RETURNING t)
    SELECT array_agg(ins.t) INTO stored FROM ins;

    IF EXISTS (SELECT 1 FROM unnest(cs) c
               WHERE c.code IS NULL AND cardinality(c.tag_ids) > 0) THEN
        INSERT INTO transaction_tags (transaction_id, tag_id)
        SELECT c.id, unnest(c.tag_ids) FROM unnest(cs) c
        WHERE c.code IS NULL AND NOT c.deduped AND cardinality(c.tag_ids) > 0;
    END IF;

    PERFORM set_config('cofre.sums_by_call', 'off', TRUE);
    IF cardinality(stored) > 0 THEN
        counted := cofre_transaction_rows_add(stored);
    END IF;
    IF clock_timestamp() > p_cut_off THEN
        RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
    END IF;

    RETURN QUERY
    SELECT c.n, m.t,
        CASE WHEN (m.t).tag_count > 0 THEN
            (SELECT json_agg(json_build_array(g.id, g.title, g.color_hex))
             FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
             WHERE tt.transaction_id = c.id) END,
        c.deduped, c.code,
        CASE c.code WHEN 'CF006' THEN 'the API key is revoked' WHEN 'CF001' THEN 'the id is taken'
            WHEN 'CF002' THEN 'no such category' WHEN 'CF003' THEN c.missing_tag
            WHEN 'CF004' THEN 'no such account' END
    FROM unnest(cs) c
    CROSS JOIN LATERAL (SELECT CASE WHEN c.code IS NULL THEN
        (SELECT t FROM transactions t WHERE t.id = c.id) END AS t) m
    ORDER BY c.n;
END $$;
