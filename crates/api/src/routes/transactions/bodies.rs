//! What the transaction routes answer: an entry as JSON, and the envelopes
//! of each operation's result. Every response that carries an entry is
//! written by [`super::body_json`]; the types here holding a
//! [`TransactionBody`] are its schemas (and, in tests, the structs whose
//! serde output the writer must match).

use serde::Serialize;
use utoipa::ToSchema;

use cofre_domain::transaction::{TxStatus, TxType};

use crate::json::JsonMoney;

#[derive(Serialize, ToSchema)]
pub struct TagInTransaction {
    pub id: String,
    pub title: String,
    pub color_hex: String,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionBody {
    /// A UUID for stored rows; a `mocked-` handle for projected entries.
    pub id: String,
    pub projected: bool,
    /// Null for stored rows; for projected entries, what they come from.
    pub projection: Option<ProjectionBody>,
    #[schema(format = Date)]
    pub date: String,
    #[serde(rename = "type")]
    pub tx_type: TxType,
    pub status: TxStatus,
    /// Always positive; `type` gives the direction.
    pub amount: JsonMoney,
    pub currency: String,
    pub description: String,
    pub notes: Option<String>,
    pub account_id: String,
    pub bill_to_account_id: Option<String>,
    pub category_id: Option<String>,
    pub tags: Vec<TagInTransaction>,
    pub recurrence_id: Option<String>,
    #[schema(format = Date)]
    pub recurrence_period_date: Option<String>,
    pub installment: Option<InstallmentBody>,
    pub transfer_group_id: Option<String>,
    pub created_by_user: bool,
    /// `API`, `OPEN_FINANCE` or `MANUAL`
    pub source: &'static str,
    pub hide_from_results: bool,
    pub card_number: Option<String>,
    pub holder: Option<String>,
    pub holder_is_me: bool,
    pub original_description: Option<String>,
    pub receipt_url: Option<String>,
    pub open_finance: bool,
}

/// What a projected entry comes from, by `kind`.
#[derive(Serialize, ToSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "a schema: body_json writes projections")
)]
pub enum ProjectionBody {
    /// An occurrence of a recurrence rule, on `date`.
    Recurrence {
        #[schema(format = Uuid)]
        rule_id: String,
        #[schema(format = Date)]
        date: String,
    },
    /// Part `number` of `count` of an installment purchase.
    Installment {
        #[schema(format = Uuid)]
        purchase_id: String,
        number: u16,
        count: Option<u16>,
    },
    /// A credit card's bill.
    Bill {
        #[schema(format = Uuid)]
        card_id: String,
    },
}

/// `installment` of an entry.
#[derive(Serialize, ToSchema)]
pub struct InstallmentBody {
    pub purchase_id: String,
    pub number: u16,
    pub count: u16,
    pub total_amount: JsonMoney,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionEnvelope {
    pub transaction: TransactionBody,
}

#[derive(Serialize, ToSchema)]
pub struct CreatedTransaction {
    pub transaction: TransactionBody,
    /// True when this replays an earlier creation with the same `id`.
    pub deduped: bool,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionPage {
    pub data: Vec<TransactionBody>,
    pub has_more: bool,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct UpdateResult {
    pub updated_transaction_id: String,
    pub affected_ids: Vec<String>,
    pub message: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DeleteResult {
    pub deleted_transaction_id: String,
    pub affected_ids: Vec<String>,
}

/// A created recurrence rule.
#[derive(Serialize, ToSchema)]
pub struct CreatedRule {
    pub recurrence_id: String,
    /// The first occurrence on or after today; null when the rule has ended.
    pub next_occurrence: Option<TransactionBody>,
    /// True when an equivalent rule existed and was reused (status 200).
    pub reused: bool,
}

/// What POST /v1/transactions answers.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "a schema: body_json writes creations")
)]
pub enum CreationResult {
    Transaction(CreatedTransaction),
    Rule(CreatedRule),
}
