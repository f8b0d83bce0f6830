-- A single-row creation in one statement (issue 12): the steps the
-- general write path sends one by one (BEGIN, the version bump, the
-- checks, the INSERT, its tags, the read-back, COMMIT: five round trips
-- or more, each holding the user's row lock while the client waits), run
-- by the server in one call, as SQLite runs them on the calling thread
-- (`crates/store/src/sqlite/here.rs`, whose order this keeps). Called on
-- its own, outside BEGIN, the call is its own transaction: a refusal
-- raises, and everything it did (the bump too) is rolled back.
--
-- It takes the values of the general path's INSERT (`insert_args` in
-- crates/store/src/sql_steps.rs, in that order), then the tag ids (a JSON
-- array) and whether the client chose the id.
--
-- A call is its own transaction, so a request cut off at its deadline
-- (its future dropped: crates/api/src/lib.rs) cannot roll it back; the
-- call is told the time its request has left (p_budget_ms, NULL outside a
-- request) and gives up when it has waited past it, for the user's other
-- writes say, keeping nothing.
--
-- Refusals, by SQLSTATE (crates/store/src/postgres.rs maps them):
--   CF001  the id is taken by another request (another user's row, or
--          another fingerprint)
--   CF002  no such category for the user
--   CF003  no such tag (its id is the message)
--   CF004  no such account for the user
--   CF005  past the request's time (p_budget_ms from the statement's start)
--
-- It gives the row as stored (a replay: as the first request stored it),
-- its tags as the read-back gives them ([id, title, color] each, NULL for
-- none), and whether it was a replay. The caller formats the row with the
-- columns it reads everywhere else.
CREATE FUNCTION cofre_create_row(
    p_id TEXT, p_user TEXT, p_account TEXT, p_date TEXT, p_type TEXT, p_status TEXT,
    p_amount_cents BIGINT, p_description TEXT, p_notes TEXT, p_category TEXT,
    p_created_by_user BOOLEAN, p_source TEXT, p_hide BOOLEAN, p_search_text TEXT,
    p_fingerprint TEXT, p_now TEXT, p_recurrence TEXT, p_period TEXT, p_purchase TEXT,
    p_number BIGINT, p_tags TEXT, p_client_chosen BOOLEAN, p_budget_ms BIGINT,
    OUT made transactions, OUT tags JSON, OUT deduped BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
    tag_ids TEXT[] := '{}';
    missing TEXT;
    cut_off TIMESTAMPTZ := statement_timestamp() + p_budget_ms * INTERVAL '1 millisecond';
BEGIN
    IF p_tags <> '[]' THEN
        tag_ids := ARRAY(SELECT json_array_elements_text(p_tags::json));
    END IF;
    UPDATE users SET view_version = view_version + 1 WHERE id = p_user;
    -- Its turn came (the user's other writes are done) too late.
    IF clock_timestamp() > cut_off THEN
        RAISE EXCEPTION 'past the request''s deadline' USING ERRCODE = 'CF005';
    END IF;
    deduped := FALSE;
    IF p_client_chosen THEN
        SELECT * INTO made FROM transactions t WHERE t.id = p_id;
        IF FOUND THEN
            IF made.user_id = p_user AND made.fingerprint = p_fingerprint THEN
                deduped := TRUE;
            ELSE
                RAISE EXCEPTION 'the id is taken' USING ERRCODE = 'CF001';
            END IF;
        END IF;
    END IF;
    IF NOT deduped THEN
        IF p_category IS NOT NULL AND NOT EXISTS (SELECT 1 FROM categories c
            WHERE c.id = p_category AND (c.user_id IS NULL OR c.user_id = p_user)) THEN
            RAISE EXCEPTION 'no such category' USING ERRCODE = 'CF002';
        END IF;
        IF cardinality(tag_ids) > 0 THEN
            SELECT w.tag_id INTO missing FROM unnest(tag_ids) WITH ORDINALITY AS w (tag_id, n)
            WHERE NOT EXISTS (SELECT 1 FROM tags g WHERE g.id = w.tag_id AND g.user_id = p_user)
            ORDER BY w.n LIMIT 1;
            IF missing IS NOT NULL THEN
                RAISE EXCEPTION '%', missing USING ERRCODE = 'CF003';
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
            RAISE EXCEPTION 'no such account' USING ERRCODE = 'CF004';
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
    IF clock_timestamp() > cut_off THEN
        RAISE EXCEPTION 'past the request''s deadline' USING ERRCODE = 'CF005';
    END IF;
END $$;
