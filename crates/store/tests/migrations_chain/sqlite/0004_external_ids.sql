-- Rows that come from a bank (OFX imports today, bank connections later)
-- carry the bank's id of the movement, so importing an overlapping
-- statement again skips what is already stored. Rows created through the
-- API have none; NULLs never clash in a unique index, on either backend.
ALTER TABLE transactions ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX transactions_account_external_id ON transactions (account_id, external_id);
