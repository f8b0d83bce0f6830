-- One trigger for what a row of transactions adds to the sums, instead of
-- five on transactions and three more fired by the sums they change
-- (issue 12: a single-row write fired eight PL/pgSQL triggers, each
-- looking up the row's account again, and they were about a third of
-- PostgreSQL's CPU a write). The sums and stamps kept are the same as
-- 0006 to 0015 kept; what changed is only who writes them:
-- - cofre_transaction_row (below) takes the old row out and puts the new
--   one in, each part only when a column it depends on changed (the
--   triggers it replaces fired on the columns being set, changed or not);
-- - the user-wide sums (0011) and the month stamps (0012) are written with
--   the per-account ones, from one lookup of the account and its owner,
--   instead of by triggers on the per-account sums;
-- - an account's whole contribution moving (0011's
--   cofre_account_user_totals_add) now stamps the months it touches
--   itself, as the trigger on user_category_month_totals did.

DROP TRIGGER transactions_totals ON transactions;
DROP TRIGGER transactions_month_totals ON transactions;
DROP TRIGGER transactions_category_totals ON transactions;
DROP TRIGGER transactions_day_balances ON transactions;
DROP TRIGGER transactions_day_stamp ON transactions;
DROP TRIGGER category_month_totals_user_totals ON category_month_totals;
DROP TRIGGER day_balances_user_totals ON day_balances;
DROP TRIGGER user_category_month_totals_stamp ON user_category_month_totals;
DROP FUNCTION cofre_transaction_totals();
DROP FUNCTION cofre_transaction_month_totals();
DROP FUNCTION cofre_transaction_category_totals();
DROP FUNCTION cofre_transaction_day_balances();
DROP FUNCTION cofre_transactions_day_stamp();
DROP FUNCTION cofre_category_month_user_totals();
DROP FUNCTION cofre_day_balance_user_totals();
DROP FUNCTION cofre_user_month_stamp();

-- Adds `t` to every sum it counts in (sign 1) or takes it out (sign -1),
-- for the parts asked for; always stamps its day with the owner's view
-- version. Each sum is updated where it exists (nearly always: a day, a
-- month, a category already has rows) and only inserted, when adding,
-- where it does not; taking out only changes sums that exist: an account
-- being deleted has lost them already (by cascade), and its user-wide
-- share left before (0011), so nothing is added for an account or user
-- no longer found. Gives TRUE: a value its caller assigns, which PL/pgSQL
-- evaluates without starting a query, as PERFORM would.
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
    IF categories OR days THEN
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
        IF t.bill_month IS NULL THEN
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

-- The row taken out as it was and put in as it is; on an update, each part
-- only when something it depends on changed (the day is stamped always,
-- as before: any change of the row changes its day's pages).
CREATE FUNCTION cofre_transaction_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    totals BOOLEAN := TRUE;
    months BOOLEAN := TRUE;
    categories BOOLEAN := TRUE;
    days BOOLEAN := TRUE;
    counted BOOLEAN;
BEGIN
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
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_row();

-- 0011's, also stamping the months whose user-wide category sums it moves
-- (the trigger on user_category_month_totals that did is gone).
CREATE OR REPLACE FUNCTION cofre_account_user_totals_add(account accounts, sign BIGINT,
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
