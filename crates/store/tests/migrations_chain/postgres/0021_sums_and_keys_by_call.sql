-- A call of creations adds its rows to the sums once a call, not once a
-- row, and checks the API key of each creation whose request was
-- authenticated from memory (issue 12).
--
-- Under 0020, each row a call of cofre_create_rows stored fired 0018's
-- row trigger: ten sum and stamp statements a row, one after another, the
-- same sums again and again when the rows are one user's (about 200 µs a
-- row of PostgreSQL's time for eight users, 250-300 µs for one). Now a
-- call of more than one creation stores its rows with the row trigger
-- standing aside, then adds them up in one statement per sum, each
-- summing the call's rows by the sum's key: the same sums and stamps, in
-- as many statements a call as a row took before.
--
-- The row trigger stands aside only while cofre.sums_by_call is 'on',
-- which cofre_create_rows sets for its own transaction (set_config's
-- is_local) and turns off before it adds its rows up. While it is on, the
-- call writes nothing of transactions but its own new rows and their tag
-- counts (0016's trigger, as their tags are stored); a tag count changes
-- no sum, and its day stamp is the one the call gives each row's day.
--
-- Differences from row by row, none seen by a reader (the call is one
-- transaction, so no one sees a sum half added):
-- - the day totals a call touches are stamped with their account's
--   money version after the whole call (row by row: after each row), so
--   a card's cached days still read every total changed since they were
--   read;
-- - the range checks (0008) see each sum once the call's rows are all in,
--   not after each; a call whose sums end out of range fails whole, and
--   its creations are stored again one a call (creations.rs), each then
--   checked as it would be alone.

-- 0018's trigger, standing aside while a call adds its rows up itself.
CREATE OR REPLACE FUNCTION cofre_transaction_row() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Adds new rows to every sum they count in and stamps their days, as
-- cofre_transaction_row_add(t, 1, TRUE, TRUE, TRUE, TRUE) does for each
-- (read the two side by side): one statement a sum, each grouping the
-- rows by the sum's key, so no statement meets a sum twice (ON CONFLICT
-- may not). An account's money version moves by its rows' count, a
-- month's stamp by its rows' count, as row by row. The rows' accounts
-- exist (the rows were just stored on them, in this transaction) and are
-- their users', whose row locks the caller holds, so every sum written
-- here is one no other transaction is writing.
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
    FROM unnest(added) t LEFT JOIN account_balances b ON b.account_id = t.account_id
    WHERE t.bill_month IS NULL
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

-- Each creation's API key is checked in its call of creations too.
-- A server that authenticated a creation's request from the keys it
-- read before (crates/api/src/auth.rs: only for single-row creations on
-- PostgreSQL, where reading the key again was a round trip of its own on
-- every request) hands the key's id to the call, and the call checks it
-- in its own transaction, so a key revoked since it was read stores
-- nothing, as a fresh read of it would have refused.
--
-- A creation's array may now hold a 24th value (r->>22): that key's id,
-- or NULL for a request whose key was read for it. A creation with a key
-- is stored only if the key is still its user's and not revoked when the
-- call reads it; otherwise it is refused with CF006 before anything of it
-- is written (its user's version bump too: the bump goes to the user's
-- next creation in the call). A key's scopes never change, so the write
-- scope the server checked from memory still holds.
--   CF006  the API key is revoked or gone
--
--
-- A creation on its own goes through cofre_create_rows too (one element;
-- crates/store/src/postgres/creations.rs), as it must have its key
-- checked; 0019's cofre_create_row is no longer called. A call of one
-- creation leaves its row to the row trigger, as cofre_create_row did:
-- the one statement a sum above, each grouping and joining the call's
-- rows, cost more than the trigger's ten short statements for one row
-- (measured, 8 clients of one user: 2,688-2,919 rows a second in three
-- runs with every call's sums added by call, 2,834-4,150 in five with a
-- single creation's left to the trigger; eight users 2,322-2,521 against
-- 2,499-3,653).
--
-- 0020's function: each creation's key checked first when one is given;
-- for more than one creation, the rows added to the sums once the call
-- has stored them all (the rows stored: not a replay's, which was added
-- when first stored, nor a refused creation's, which stored none).
CREATE OR REPLACE FUNCTION cofre_create_rows(p_rows TEXT, p_budget_ms BIGINT)
RETURNS TABLE (n INTEGER, made transactions, tags JSON, deduped BOOLEAN, code TEXT, message TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    r JSON;
    c RECORD;
    last_user TEXT;
    added transactions[] := '{}';
    counted BOOLEAN;
    all_rows JSON := p_rows::json;
    by_call BOOLEAN := json_array_length(all_rows) > 1;
    cut_off TIMESTAMPTZ := statement_timestamp() + p_budget_ms * INTERVAL '1 millisecond';
BEGIN
    IF by_call THEN
        PERFORM set_config('cofre.sums_by_call', 'on', TRUE);
    END IF;
    n := 0;
    FOR r IN SELECT e FROM json_array_elements(all_rows) AS e LOOP
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
