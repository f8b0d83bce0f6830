-- A card's bill payments read by their own index alone. Every change of a
-- card reads all the payments of its bills again (one a month; sixty for
-- five years), in date order, and the index of migration 0005 names only
-- the card and the bill's month: each payment was then fetched from the
-- table. In a history written day by day the payments lie a month apart,
-- one to a table page, and the first read after a write (which fetches
-- every page it touches from the file again) fetched one page for each:
-- 76 reads for a card's five years, against 5 from this index. Only the
-- payments' rows are in it (the condition of the query), in the order the
-- query asks, so it costs other writes nothing.
CREATE INDEX transactions_bill_payments_cover
    ON transactions (bill_to_account_id, date, id, bill_month, amount_cents)
    WHERE bill_month IS NOT NULL;
