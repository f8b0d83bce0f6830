-- Every running total stays inside +-10^15 cents (10,000,000,000,000.00),
-- the bound cofre documents (cofre_domain::money::MAX_TOTAL_CENTS). A row is
-- at most 99,999,999,999.99, so a total one row past the bound is still far
-- inside BIGINT: no trigger ever overflows. The write that would cross the
-- bound fails on the named constraint, which the store reports as a field
-- error. Same constraint names as on SQLite.
ALTER TABLE account_balances ADD CONSTRAINT account_balances_posted_cents_range
    CHECK (posted_cents BETWEEN -1000000000000000 AND 1000000000000000);
ALTER TABLE day_totals ADD CONSTRAINT day_totals_cents_range
    CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000);
ALTER TABLE month_totals ADD CONSTRAINT month_totals_cents_range
    CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000);
