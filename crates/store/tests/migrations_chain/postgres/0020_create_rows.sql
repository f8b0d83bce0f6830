-- Concurrent single-row creations in one call (issue 12): group commit on
-- PostgreSQL. crates/store/src/postgres/creations.rs gathers the
-- creations that arrive while earlier calls run and stores them in one
-- call of cofre_create_rows: one statement, and so one transaction and one
-- WAL flush, for all of them.
--
-- The steps of 0019's cofre_create_row move to cofre_create_one (its
-- p_bump says whether to bump the user's version: a call's later
-- creations for the same user need not), which
-- gives a refusal as a code and a message instead of raising it: every
-- refusal is decided before anything is written but the user's version
-- bump (taken first, as before: it holds the user's row lock, so the
-- replay check and the INSERT see every earlier write of the user), so a
-- refused creation of a call leaves nothing behind but that bump (which
-- only tells caches to look again), and the call goes on without a
-- subtransaction each (one cost about 50 µs a creation). cofre_create_row is now cofre_create_one
-- raising its refusal, so a creation on its own still rolls back whole,
-- its bump too.
--
-- Refusals, as 0019's SQLSTATEs:
--   CF001  the id is taken by another request (another user's row, or
--          another fingerprint)
--   CF002  no such category for the user
--   CF003  no such tag (its id is the message)
--   CF004  no such account for the user
--   CF005  past the request's time (p_budget_ms from the statement's start)
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

-- 0019's function, its steps now cofre_create_one's: a refusal raises, so
-- the whole call (the bump too) is rolled back.
CREATE OR REPLACE FUNCTION cofre_create_row(
    p_id TEXT, p_user TEXT, p_account TEXT, p_date TEXT, p_type TEXT, p_status TEXT,
    p_amount_cents BIGINT, p_description TEXT, p_notes TEXT, p_category TEXT,
    p_created_by_user BOOLEAN, p_source TEXT, p_hide BOOLEAN, p_search_text TEXT,
    p_fingerprint TEXT, p_now TEXT, p_recurrence TEXT, p_period TEXT, p_purchase TEXT,
    p_number BIGINT, p_tags TEXT, p_client_chosen BOOLEAN, p_budget_ms BIGINT,
    OUT made transactions, OUT tags JSON, OUT deduped BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
    cut_off TIMESTAMPTZ := statement_timestamp() + p_budget_ms * INTERVAL '1 millisecond';
    c RECORD;
BEGIN
    SELECT * INTO c FROM cofre_create_one(p_id, p_user, p_account, p_date, p_type, p_status,
        p_amount_cents, p_description, p_notes, p_category, p_created_by_user, p_source, p_hide,
        p_search_text, p_fingerprint, p_now, p_recurrence, p_period, p_purchase, p_number,
        p_tags, p_client_chosen, cut_off, TRUE);
    IF c.code IS NOT NULL THEN
        RAISE EXCEPTION '%', c.message USING ERRCODE = c.code;
    END IF;
    IF clock_timestamp() > cut_off THEN
        RAISE EXCEPTION 'past the request''s deadline' USING ERRCODE = 'CF005';
    END IF;
    made := c.made;
    tags := c.tags;
    deduped := c.deduped;
END $$;

-- Creations in one call. p_rows is the text of a JSON array with one
-- array per creation: cofre_create_row's arguments but the last, in its
-- order (the tags as their JSON text). The caller sorts the creations by
-- user, so every call takes the users' row locks in the same order and
-- two calls never wait for each other in a cycle, and each user's version
-- is bumped once a call, by its first creation (its row lock is then
-- held to the commit, which the rest of its creations share).
--
-- p_budget_ms is the least time any of the creations' requests has left:
-- a call whose commit would come later than that (it waited for a lock,
-- say) raises CF005 and keeps nothing, as cofre_create_row does for one.
-- Any other error (a running total taken out of range, say) fails the
-- whole call too; the caller then stores each creation in a call of its
-- own, so each gets the answer it would have got alone.
--
-- It gives one row per creation, in p_rows's order (n counts from 1):
-- cofre_create_one's answer.
CREATE FUNCTION cofre_create_rows(p_rows TEXT, p_budget_ms BIGINT)
RETURNS TABLE (n INTEGER, made transactions, tags JSON, deduped BOOLEAN, code TEXT, message TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    r JSON;
    c RECORD;
    last_user TEXT;
    cut_off TIMESTAMPTZ := statement_timestamp() + p_budget_ms * INTERVAL '1 millisecond';
BEGIN
    n := 0;
    FOR r IN SELECT e FROM json_array_elements(p_rows::json) AS e LOOP
        n := n + 1;
        SELECT * INTO c FROM cofre_create_one(r->>0, r->>1, r->>2, r->>3, r->>4, r->>5,
            (r->>6)::BIGINT, r->>7, r->>8, r->>9, (r->>10)::BOOLEAN, r->>11,
            (r->>12)::BOOLEAN, r->>13, r->>14, r->>15, r->>16, r->>17, r->>18,
            (r->>19)::BIGINT, r->>20, (r->>21)::BOOLEAN, cut_off,
            last_user IS DISTINCT FROM r->>1);
        last_user := r->>1;
        IF c.code = 'CF005' THEN
            RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
        END IF;
        made := c.made;
        tags := c.tags;
        deduped := c.deduped;
        code := c.code;
        message := c.message;
        RETURN NEXT;
    END LOOP;
    IF clock_timestamp() > cut_off THEN
        RAISE EXCEPTION 'past the requests'' deadline' USING ERRCODE = 'CF005';
    END IF;
END $$;
