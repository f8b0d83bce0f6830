-- The list's index carries each row's account, so the cashflow view, which
-- leaves out the cards' rows, tells a card's row from the index entry
-- alone: SQLite checks `account_id NOT IN (the cards)` before it seeks
-- the row in the table (a deferred seek), and reads only the rows it
-- keeps. Before, every card row in the way was read from the table to be
-- dropped, and after a write (which empties every reader's page cache)
-- each of those reads fetched a page from the file: a cashflow page read
-- right after a write grew with the user's card history.
DROP INDEX transactions_user_date;
CREATE INDEX transactions_user_date ON transactions (user_id, date DESC, id, account_id);
