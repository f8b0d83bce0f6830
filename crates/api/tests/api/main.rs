//! Black-box HTTP tests: the real router against a real database, every
//! scenario on SQLite and on PostgreSQL (`COFRE_TEST_POSTGRES_URL`).

mod support;

mod accounts;
mod auth;
mod authz;
mod bounds;
mod budgets;
mod bulk;
mod caps;
mod cards;
mod categories;
mod concurrency;
mod deadline;
mod demo;
mod duplicate_keys;
mod export;
mod hostile;
mod kept_pages;
mod limits;
mod listing;
mod open_finance;
mod operations;
mod overview;
mod profile;
mod projections;
mod read_cache;
mod receipts;
mod receipts_s3;
mod reports;
mod shared_limits;
mod tags;
mod totals;
mod transactions;
mod transfer_legs;
mod transfers;
