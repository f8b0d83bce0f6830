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
CREATE INDEX recurrence_rules_user ON recurrence_rules (user_id, start_date);

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
CREATE INDEX installment_plans_user ON installment_plans (user_id, last_date);

CREATE TABLE tombstones (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    handle TEXT NOT NULL,
    -- The rule, purchase or card the hidden entry belongs to.
    source_id TEXT NOT NULL,
    entry_date TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT tombstones_pk PRIMARY KEY (user_id, handle)
);
CREATE INDEX tombstones_user_date ON tombstones (user_id, entry_date);
CREATE INDEX tombstones_source ON tombstones (source_id);

CREATE INDEX transactions_recurrence ON transactions (recurrence_id, recurrence_period_date);
CREATE INDEX transactions_installment ON transactions (installment_purchase_id, installment_number);
