-- PostgreSQL's creation functions go (creations are stored by the store's
-- Rust code on both backends); nothing changes on SQLite, where every
-- creation always took that path. Kept so both backends share version
-- numbers.
SELECT 1;
