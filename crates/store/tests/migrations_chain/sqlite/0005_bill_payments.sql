-- Card bills. A bill payment is a transfer whose two legs (the DEBIT on the
-- bank account, which carries bill_to_account_id = the card, and the hidden
-- CREDIT on the card) name the bill they settle: the year and month of its
-- due date, 'YYYY-MM'.
ALTER TABLE transactions ADD COLUMN bill_month TEXT;
CREATE INDEX transactions_bill_payments ON transactions (bill_to_account_id, bill_month);
-- A card's rows by date: the amounts of its billing cycles.
CREATE INDEX transactions_account_date ON transactions (account_id, date);
