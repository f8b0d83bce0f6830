-- A call of several creations stored set by set, not row by row (issue 12).
--
-- Under 0021, cofre_create_rows took its creations one at a time: for each,
-- a call of cofre_create_one (its user's version bump, its key check, its
-- refusal checks and its INSERT, each a statement of its own) and about
-- twenty reads of values out of the creation's JSON, each parsing that
-- JSON again; each stored row then fired 0018's row trigger, only for it
-- to stand aside. Measured with PostgreSQL's function statistics, eight
-- users' creations in calls of eight took about 1.9 ms of PostgreSQL's
-- time a call: 110 µs a creation in cofre_create_one, 35 µs in the loop
-- around it, 17 µs in the trigger standing aside, and 0.7-0.8 ms adding
-- the call's rows to the sums. Now:
-- - the call's JSON is read as jsonb, parsed once;
-- - a call of more than one creation, none sharing an id, goes through
--   cofre_create_set (below): one statement reads every creation and
--   checks its key, one locks the call's users in id order and one bumps
--   them, one decides every creation's refusal or replay, one stores every
--   row left, one stores their tags, one adds them up (0021's
--   cofre_transaction_rows_add), one answers: the same decisions, in the
--   same order, as creation by creation (read the two side by side); a
--   call whose creations share an id (a client sending one id twice) is
--   still stored creation by creation, as a later one must see the
--   earlier one's row;
-- - the row trigger is not called at all while the call adds its rows up
--   itself (a WHEN on the trigger, read without starting PL/pgSQL).
--
-- cofre_create_set's statements are planned once a connection
-- (plan_cache_mode = force_generic_plan): planned afresh on every call they
-- cost more than they save. Each reads a table by its key, in a subquery
-- of its own (a plan that stays an index lookup whatever the table's size
-- when it was planned), but the users' lock and bump, by `= ANY` of the
-- call's users; a plan made while a table was small is made again once
-- it is analyzed (PostgreSQL drops a cached plan when its tables'
-- statistics change). A first try joining the call's creations to
-- transactions kept, on a new database, a plan scanning the whole table.

-- 0018's trigger, not called while a call adds its rows up itself (its
-- function's own check of cofre.sums_by_call, from 0021, stays for a
-- server of the build before, during a rolling upgrade).
DROP TRIGGER transactions_row ON transactions;
CREATE TRIGGER transactions_row AFTER INSERT OR UPDATE OR DELETE ON transactions
FOR EACH ROW WHEN (current_setting('cofre.sums_by_call', TRUE) IS DISTINCT FROM 'on')
EXECUTE FUNCTION cofre_transaction_row();

-- A creation of a call, as cofre_create_rows's JSON gives it, with what
-- the call decided of it so far.
CREATE TYPE cofre_creation AS (
    n INTEGER, id TEXT, user_id TEXT, account_id TEXT, date TEXT, type TEXT, status TEXT,
    amount_cents BIGINT, description TEXT, notes TEXT, category_id TEXT,
    created_by_user BOOLEAN, source TEXT, hide BOOLEAN, search_text TEXT, fingerprint TEXT,
    now TEXT, recurrence_id TEXT, period TEXT, purchase_id TEXT, number BIGINT, tag_ids TEXT[],
    client_chosen BOOLEAN, key_id TEXT, code TEXT, deduped BOOLEAN, missing_tag TEXT);

-- The creations of a call, stored as cofre_create_rows stores them one by
-- one (0020, 0021), set by set; their ids are distinct. Each creation is,
-- in turn: refused CF006 if its key (r->>22) is given and is not its
-- user's live key; its user's version bumped once a call, when it has a
-- creation the key check let through, the users locked in id order first
-- (as the caller sorts creations by user: two calls never wait for each
-- other in a cycle); given up whole (CF005) if that came past the cut-off;
-- replayed when its client-chosen id is the user's row with the same
-- fingerprint, refused CF001 when the id is another's; refused CF002,
-- CF003 (its first missing tag the message) or CF004 for a missing
-- category, tag or account; otherwise stored with its tags, and added to
-- the sums with the call's other rows.
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

-- 0021's function, reading its JSON as jsonb, and handing a call of
-- several creations with distinct ids to cofre_create_set.
CREATE OR REPLACE FUNCTION cofre_create_rows(p_rows TEXT, p_budget_ms BIGINT)
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
