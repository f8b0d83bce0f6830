//! What the transaction routes answer: an entry as JSON, and the envelopes
//! of each operation's result.

use serde::Serialize;
use utoipa::ToSchema;

use cofre_domain::projection::Handle;
use cofre_domain::time::format_date;
use cofre_domain::transaction::{EntryId, Transaction, TxStatus, TxType};

use crate::json::JsonMoney;
use crate::receipts;

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

impl TransactionBody {
    pub fn from_entry(t: Transaction, public_url: &str) -> Self {
        let projection = match &t.id {
            EntryId::Stored(_) => None,
            EntryId::Projected(Handle::Recurrence { rule_id, date }) => {
                Some(ProjectionBody::Recurrence {
                    rule_id: rule_id.to_string(),
                    date: format_date(*date),
                })
            }
            EntryId::Projected(Handle::Installment {
                purchase_id,
                number,
            }) => Some(ProjectionBody::Installment {
                purchase_id: purchase_id.to_string(),
                number: *number,
                count: t.installment.map(|i| i.count),
            }),
            EntryId::Projected(Handle::Bill { card_id, .. }) => Some(ProjectionBody::Bill {
                card_id: card_id.to_string(),
            }),
        };
        Self {
            id: t.id.to_string(),
            projected: projection.is_some(),
            projection,
            date: format_date(t.state.date),
            tx_type: t.state.tx_type,
            status: t.state.status,
            amount: JsonMoney(t.state.amount),
            currency: t.currency,
            description: t.state.description,
            notes: t.state.notes,
            account_id: t.account_id.to_string(),
            bill_to_account_id: t.bill_to_account_id.map(|a| a.to_string()),
            category_id: t.state.category_id.map(|c| c.to_string()),
            tags: t
                .tags
                .into_iter()
                .map(|g| TagInTransaction {
                    id: g.id.to_string(),
                    title: g.title,
                    color_hex: g.color_hex,
                })
                .collect(),
            recurrence_id: t.recurrence_id.map(|r| r.to_string()),
            recurrence_period_date: t.recurrence_period_date.map(format_date),
            installment: t.installment.map(|i| InstallmentBody {
                purchase_id: i.purchase_id.to_string(),
                number: i.number,
                count: i.count,
                total_amount: JsonMoney(i.total_amount),
            }),
            transfer_group_id: t.transfer_group_id.map(|g| g.to_string()),
            created_by_user: t.created_by_user,
            source: t.source.as_str(),
            hide_from_results: t.state.hide_from_results,
            card_number: t.card_number,
            holder: t.holder,
            holder_is_me: t.holder_is_me,
            original_description: t.original_description,
            receipt_url: t.receipt_name.map(|name| receipts::url(public_url, &name)),
            open_finance: t.open_finance,
        }
    }
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
pub enum CreationResult {
    Transaction(CreatedTransaction),
    Rule(CreatedRule),
}
