-- Day totals are kept for cards only (issue 12).
--
-- day_totals (0006, stamped with versions in 0009) are the per-day sums a
-- card's bills are made of, and only card reads use them (the card money
-- of crates/store/src/sql_cards.rs); yet every row on any account added
-- to them. They were the dearest sum a PostgreSQL creation wrote: their
-- version is indexed (for the card read's `version > v`), so no update of
-- one is HOT and each writes both their indexes again. Measured with
-- function statistics on a call of eight users' bank creations, adding a
-- call's rows to the sums took 0.53-0.63 ms a call without them against
-- 0.62-0.76 with, alternated on two speeds of the machine
-- (docs/performance.md, twenty-fifth round). Now:
-- - a row adds to day_totals only when its account is a card, in the row
--   trigger's function (0018's, below, reading the account's type also
--   when only the totals change) and in a call's sums (0021's, below);
-- - an account that becomes a card gets its day totals made afresh from
--   its rows, in the same transaction as the change of type (the trigger
--   below): its money version is bumped, every day total it has is set to
--   zero and stamped with that version, then its rows' sums are written
--   over them with the same stamp. No total is deleted, so a reader
--   holding the card's days at an older version (it was a card before)
--   reloads every day that changed, by `version > v`, as after any write.
--   The change of type and every write of its rows hold the owner's row
--   lock (each bumps users.view_version first), so no row is stored
--   between the sums being read and the type being set.
-- - an account that stops being a card keeps the day totals it had, no
--   longer kept up; nothing reads them while it is not a card, and they
--   are made afresh if it becomes one again.
-- Day totals of accounts that are not cards, kept until now, stay where
-- they are: made afresh too if their account becomes a card.
--
-- On SQLite (its migration 0023) every account's day totals are still
-- kept, by its row triggers.

-- 0018's function, adding to day_totals only for a card.
CREATE OR REPLACE FUNCTION cofre_transaction_row_add(t transactions, sign BIGINT, totals BOOLEAN,
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

-- 0021's function, adding a call's rows to day_totals only for cards.
CREATE OR REPLACE FUNCTION cofre_transaction_rows_add(added transactions[]) RETURNS BOOLEAN
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

-- An account that becomes a card: its day totals made afresh from its rows.
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
