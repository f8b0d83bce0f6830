-- Fewer index entries for every row written (see the SQLite migration of
-- the same number): transactions_account_status, which no query reads
-- since the running totals (0006), is dropped, and the indexes of links
-- most rows do not have hold only the rows that have them. Queries name
-- those links with = or ANY, which implies NOT NULL, so the planner
-- still uses the partial indexes; the statement import's ON CONFLICT
-- names the unique index's condition.
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
