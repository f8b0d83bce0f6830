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

INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
SELECT a.user_id, m.month, m.category_id, m.type, m.status, m.transfer, a.type = 'CREDIT', SUM(m.cents)
FROM category_month_totals m JOIN accounts a ON a.id = m.account_id
GROUP BY a.user_id, m.month, m.category_id, m.type, m.status, m.transfer, a.type = 'CREDIT';

-- day_balances over a user's accounts that count in totals (not archived,
-- not excluded), per currency: the reports read the base currency's.
CREATE TABLE user_day_balances (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    currency TEXT NOT NULL,
    date TEXT COLLATE "C" NOT NULL,
    banks BIGINT NOT NULL,
    cards BIGINT NOT NULL,
    CONSTRAINT user_day_balances_pk PRIMARY KEY (user_id, currency, date)
);

INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
SELECT a.user_id, a.currency, d.date,
    SUM(CASE WHEN a.type = 'CREDIT' THEN 0 ELSE d.cents END),
    SUM(CASE WHEN a.type = 'CREDIT' THEN d.cents ELSE 0 END)
FROM day_balances d JOIN accounts a ON a.id = d.account_id
WHERE NOT a.archived AND NOT a.exclude_from_totals
GROUP BY a.user_id, a.currency, d.date;

CREATE FUNCTION cofre_category_month_user_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta BIGINT := NEW.cents;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        delta := NEW.cents - OLD.cents;
    END IF;
    IF delta <> 0 OR TG_OP = 'INSERT' THEN
        INSERT INTO user_category_month_totals (user_id, month, category_id, type, status, transfer, card, cents)
        SELECT a.user_id, NEW.month, NEW.category_id, NEW.type, NEW.status, NEW.transfer,
            a.type = 'CREDIT', delta
        FROM accounts a JOIN users u ON u.id = a.user_id WHERE a.id = NEW.account_id
        ON CONFLICT (user_id, month, category_id, type, status, transfer, card)
        DO UPDATE SET cents = user_category_month_totals.cents + EXCLUDED.cents;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER category_month_totals_user_totals
AFTER INSERT OR UPDATE OF cents ON category_month_totals
FOR EACH ROW EXECUTE FUNCTION cofre_category_month_user_totals();

CREATE FUNCTION cofre_day_balance_user_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta BIGINT := NEW.cents;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        delta := NEW.cents - OLD.cents;
    END IF;
    IF delta <> 0 OR TG_OP = 'INSERT' THEN
        INSERT INTO user_day_balances (user_id, currency, date, banks, cards)
        SELECT a.user_id, a.currency, NEW.date,
            CASE WHEN a.type = 'CREDIT' THEN 0 ELSE delta END,
            CASE WHEN a.type = 'CREDIT' THEN delta ELSE 0 END
        FROM accounts a JOIN users u ON u.id = a.user_id
        WHERE a.id = NEW.account_id AND NOT a.archived AND NOT a.exclude_from_totals
        ON CONFLICT (user_id, currency, date) DO UPDATE
        SET banks = user_day_balances.banks + EXCLUDED.banks,
            cards = user_day_balances.cards + EXCLUDED.cards;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER day_balances_user_totals
AFTER INSERT OR UPDATE OF cents ON day_balances
FOR EACH ROW EXECUTE FUNCTION cofre_day_balance_user_totals();

-- Adds `sign` times an account's whole contribution as `account` says
-- where it counts: its category sums when `categories`, its day sums when
-- `days` (and the account counts in totals).
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

-- An account's whole contribution, taken out as it was and put back as it
-- is, when what decides where it counts changes.
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

-- A deleted account's contribution leaves before its rows go (by cascade,
-- when the account can no longer be found, so their triggers add nothing).
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
