-- Each creation's API key checked in its call of creations (issue 12).
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
-- A creation on its own now goes through this function too (one element;
-- crates/store/src/postgres/creations.rs), as it must have its key
-- checked; 0019's cofre_create_row is no longer called. A call of one
-- creation leaves its row to the row trigger, as cofre_create_row did:
-- 0021's one statement a sum, each grouping and joining the call's rows,
-- cost more than the trigger's ten short statements for a single row
-- (measured, 8 clients of one user: 2,688-2,919 rows a second in three
-- runs with every call's sums added by call, 2,834-4,150 in five with a
-- single creation's left to the trigger; eight users 2,322-2,521 against
-- 2,499-3,653).
--
-- 0021's function, with that check first, and its sums added by call only
-- for more than one creation.
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
        IF c.code IS NULL AND NOT c.deduped THEN
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
