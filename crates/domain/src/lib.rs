//! Pure rules of cofre: identifiers, money, dates, and what makes an
//! account, category, tag or transaction valid. No HTTP and no SQL here, so
//! every rule can be unit-tested on its own and reused by every layer.

pub mod account;
pub mod auth;
pub mod bills;
pub mod budget;
pub mod bulk;
pub mod card;
pub mod category;
pub mod duplicates;
pub mod icons;
pub mod ids;
pub mod money;
pub mod ofx;
pub mod overview;
pub mod profile;
pub mod projection;
pub mod receipt;
pub mod report;
pub mod series;
pub mod statement;
pub mod tag;
pub mod text;
pub mod time;
pub mod transaction;
pub mod transfer;
pub mod validation;
pub mod view;

pub use ids::*;
pub use money::Money;
pub use validation::{DomainError, FieldError, FieldErrors};
