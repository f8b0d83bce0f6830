-- Fewer index entries for every row written. Each INSERT into
-- transactions also inserted into every one of its eight indexes, and a
-- batch of writes by several users changed a page of each per-account
-- index for each account (every changed page is written to the WAL at
-- commit):
-- - transactions_account_status served the balances summed from rows,
--   which the running totals (0006) replaced; no query reads it now
--   (rows by account use transactions_account_date, as do the foreign
--   keys' cascades).
-- - The indexes of links most rows do not have (a rule, an installment
--   plan, a bank's id, a bill paid) are partial: only rows that have the
--   link are in them. Every query that reads one names the link with =
--   or IN, which SQLite knows excludes NULL, so it still uses the index;
--   the statement import's ON CONFLICT names the index's condition.
DROP INDEX transactions_account_status;

DROP INDEX transactions_recurrence;
CREATE INDEX transactions_recurrence ON transactions (recurrence_id, recurrence_period_date)
WHERE recurrence_id IS NOT NULL;

DROP INDEX transactions_installment;
CREATE INDEX transactions_installment ON transactions (installment_purchase_id, installment_number)
WHERE installment_purchase_id IS NOT NULL;

DROP INDEX transactions_account_external_id;
CREATE UNIQUE INDEX transactions_account_external_id ON transactions (account_id, external_id)
WHERE external_id IS NOT NULL;

DROP INDEX transactions_bill_payments;
CREATE INDEX transactions_bill_payments ON transactions (bill_to_account_id, bill_month)
WHERE bill_to_account_id IS NOT NULL;
