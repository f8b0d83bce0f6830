-- The sums of 0010 summed again over each user's accounts, so a budget or
-- report over all of a user's accounts reads one row per month and
-- category (or per day) instead of one per account, and its cost does not
-- follow how many accounts had rows in each (issue 13: flat in history).
--
-- Kept from the per-account tables by triggers: every change of an
-- account's sum adds its difference here. An account's whole contribution
-- moves when what decides where it counts changes (its type; for the day
-- sums also archived, excluded and currency) and leaves before the account
-- is deleted (its per-account rows then go by cascade, adding nothing).
-- Totals that fall to zero are kept, readers skip them. While a user is
-- being deleted (everything of theirs goes by cascade, in no set order),
-- nothing is added for them.

-- category_month_totals over a user's accounts, split by whether the
-- account is a card (the cashflow view leaves cards out).
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

INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
SELECT a.user_id, m.month, m.category_id, m.type, m.status, m.transfer, a.type = 'CREDIT', SUM(m.cents)
FROM category_month_totals m JOIN accounts a ON a.id = m.account_id
GROUP BY a.user_id, m.month, m.category_id, m.type, m.status, m.transfer, a.type = 'CREDIT';

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

-- day_balances over a user's accounts that count in totals (not archived,
-- not excluded), per currency: the reports read the base currency's.
CREATE TABLE user_day_balances (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    date TEXT NOT NULL,
    banks BIGINT NOT NULL,
    cards BIGINT NOT NULL,
    CONSTRAINT user_day_balances_pk PRIMARY KEY (user_id, currency, date)
) WITHOUT ROWID;

INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
SELECT a.user_id, a.currency, d.date,
    SUM(CASE WHEN a.type = 'CREDIT' THEN 0 ELSE d.cents END),
    SUM(CASE WHEN a.type = 'CREDIT' THEN d.cents ELSE 0 END)
FROM day_balances d JOIN accounts a ON a.id = d.account_id
WHERE NOT a.archived AND NOT a.exclude_from_totals
GROUP BY a.user_id, a.currency, d.date;

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

-- An account's whole contribution, taken out as it was and put back as it
-- is, when what decides where it counts changes.
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

-- A deleted account's contribution leaves before its rows go (by cascade,
-- when the account can no longer be found, so their triggers add nothing).
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
