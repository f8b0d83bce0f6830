//! `GET /v1/export` and `cofre export`: everything of one user, so a person
//! can leave with their data. The small resources are read first (a
//! failure there is an ordinary problem document); then the stored rows go
//! out page by page through a bounded channel, so memory stays bounded
//! however long the history is, and a client that stops reading stops the
//! export.

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::mpsc;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use cofre_domain::projection::{InstallmentPlan, RecurrenceRule, Template};
use cofre_domain::time::{MAX_DATE, MIN_DATE, format_date, format_timestamp};
use cofre_domain::transaction::{PagePosition, PageRequest, Transaction, TransactionFilter};
use cofre_domain::{DomainError, UserId};
use cofre_store::{Store, StoreError};

use super::CommonErrors;
use super::accounts::AccountBody;
use super::budgets::BudgetBody;
use super::categories::CategoryBody;
use super::me::ProfileBody;
use super::tags::TagBody;
use super::transactions::{TransactionBody, write_entry};
use crate::AppState;
use crate::auth::{Auth, Read};
use crate::error::{ApiResult, Problem};
use crate::extract::AppQuery;
use crate::json::JsonMoney;

/// Stored rows read per page while streaming.
const PAGE_ROWS: usize = 500;
/// Pages the producer may run ahead of a slow reader.
const CHANNEL_PAGES: usize = 4;

/// The version of the export document's layout.
pub const EXPORT_VERSION: u32 = 1;

/// The columns of the CSV export, in order.
pub const CSV_COLUMNS: [&str; 22] = [
    "id",
    "date",
    "type",
    "status",
    "amount",
    "currency",
    "description",
    "notes",
    "account_id",
    "account_title",
    "category_id",
    "category_title",
    "tags",
    "hide_from_results",
    "recurrence_id",
    "installment_purchase_id",
    "installment_number",
    "installment_count",
    "transfer_group_id",
    "source",
    "original_description",
    "receipt_url",
];

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export_user_data))
}

/// `json` (default): one document with every resource; `csv`: the stored
/// transactions, one per line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    #[default]
    Json,
    Csv,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "json" => Some(ExportFormat::Json),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Json => "application/json",
            ExportFormat::Csv => "text/csv; charset=utf-8",
        }
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// Default `json`.
    #[param(inline, value_type = Option<ExportFormat>)]
    format: Option<String>,
}

/// A recurrence rule as exported.
#[derive(Serialize, ToSchema)]
pub struct RuleBody {
    #[schema(format = Uuid)]
    pub id: String,
    #[schema(format = Uuid)]
    pub account_id: String,
    #[serde(flatten)]
    pub template: TemplateBody,
    pub frequency: cofre_domain::projection::Frequency,
    pub interval: u32,
    #[schema(format = Date)]
    pub start_date: String,
    #[schema(format = Date)]
    pub end_date: Option<String>,
    pub count: Option<u32>,
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// An installment purchase as exported; `amount` is the total.
#[derive(Serialize, ToSchema)]
pub struct PlanBody {
    #[schema(format = Uuid)]
    pub id: String,
    #[schema(format = Uuid)]
    pub account_id: String,
    #[serde(flatten)]
    pub template: TemplateBody,
    pub count: u16,
    #[schema(format = Date)]
    pub first_date: String,
    /// The whole series is hidden.
    pub hidden: bool,
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// What every entry of a rule or purchase is made from.
#[derive(Serialize, ToSchema)]
pub struct TemplateBody {
    #[serde(rename = "type")]
    pub tx_type: cofre_domain::transaction::TxType,
    pub amount: JsonMoney,
    pub description: String,
    pub notes: Option<String>,
    #[schema(format = Uuid)]
    pub category_id: Option<String>,
    pub tag_ids: Vec<String>,
}

impl From<&Template> for TemplateBody {
    fn from(t: &Template) -> Self {
        Self {
            tx_type: t.tx_type,
            amount: JsonMoney(t.amount),
            description: t.description.clone(),
            notes: t.notes.clone(),
            category_id: t.category_id.map(|c| c.to_string()),
            tag_ids: t.tag_ids.iter().map(ToString::to_string).collect(),
        }
    }
}

impl From<&RecurrenceRule> for RuleBody {
    fn from(r: &RecurrenceRule) -> Self {
        Self {
            id: r.id.to_string(),
            account_id: r.account_id.to_string(),
            template: (&r.template).into(),
            frequency: r.schedule.frequency,
            interval: r.schedule.interval,
            start_date: format_date(r.schedule.start),
            end_date: r.schedule.end_date.map(format_date),
            count: r.schedule.count,
            created_at: format_timestamp(r.created_at),
        }
    }
}

impl From<&InstallmentPlan> for PlanBody {
    fn from(p: &InstallmentPlan) -> Self {
        Self {
            id: p.id.to_string(),
            account_id: p.account_id.to_string(),
            template: (&p.template).into(),
            count: p.count,
            first_date: format_date(p.first_date),
            hidden: p.hidden,
            created_at: format_timestamp(p.created_at),
        }
    }
}

/// The JSON export, as one document. Its fields come in this order, and
/// `transactions` last: every stored row, hidden ones included, newest
/// first, each with its tags and its receipt's URL.
#[derive(Serialize, ToSchema)]
pub struct ExportDocument {
    /// `cofre-export`
    pub format: String,
    /// The layout's version: 1.
    pub version: u32,
    #[schema(format = DateTime)]
    pub exported_at: String,
    pub profile: ProfileBody,
    pub accounts: Vec<AccountBody>,
    /// The user's own categories and the system ones they can see.
    pub categories: Vec<CategoryBody>,
    pub tags: Vec<TagBody>,
    pub recurrence_rules: Vec<RuleBody>,
    pub installment_plans: Vec<PlanBody>,
    /// Monthly limits per category, each with its limit changes.
    pub budgets: Vec<BudgetBody>,
    /// Handles of projected entries the user deleted (`mocked-...`).
    pub deleted_occurrences: Vec<String>,
    pub transactions: Vec<TransactionBody>,
}

/// Everything of the user, streamed: JSON (`ExportDocument`) or CSV of the
/// stored transactions (columns in the order of the first line: id, date,
/// type, status, amount, currency, description, notes, account_id,
/// account_title, category_id, category_title, tags, hide_from_results,
/// recurrence_id, installment_purchase_id, installment_number,
/// installment_count, transfer_group_id, source, original_description,
/// receipt_url).
#[utoipa::path(get, path = "/v1/export", tag = "export", params(ExportQuery),
    responses((status = 200, description = "The export, streamed",
            content((ExportDocument = "application/json"), (String = "text/csv"))),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
async fn export_user_data(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<ExportQuery>,
) -> ApiResult<Response> {
    let format = match query.format.as_deref() {
        None => ExportFormat::Json,
        Some(text) => ExportFormat::parse(text)
            .ok_or_else(|| DomainError::field("format", "must be json or csv"))?,
    };
    let rx = start(
        state.store.clone(),
        auth.user(),
        format,
        state.config.public_url.clone(),
        state.clock.now(),
    )
    .await?;
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let disposition = match format {
        ExportFormat::Json => "attachment; filename=\"cofre-export.json\"",
        ExportFormat::Csv => "attachment; filename=\"cofre-transactions.csv\"",
    };
    Ok((
        [
            (header::CONTENT_TYPE, format.content_type()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// Reads the user's small resources, then starts streaming: the receiver
/// gives the export's chunks in order, an `Err` when a later read failed
/// (the export is then cut short and must not be taken as whole).
pub async fn start(
    store: Arc<dyn Store>,
    user: UserId,
    format: ExportFormat,
    public_url: String,
    now: jiff::Timestamp,
) -> Result<mpsc::Receiver<Result<Vec<u8>, std::io::Error>>, StoreError> {
    let profile = store.get_profile(user).await?;
    let accounts = store.list_accounts(user).await?;
    let categories = store.list_categories(user).await?;
    let tags = store.list_tags(user).await?;
    let sources = store.view_sources(user, MIN_DATE, MAX_DATE).await?;
    let budgets = store.list_budgets(user).await?;
    let titles = Titles {
        accounts: accounts
            .iter()
            .map(|a| (a.account.id.to_string(), a.account.state.title.clone()))
            .collect(),
        categories: categories
            .iter()
            .map(|c| (c.id.to_string(), c.title.clone()))
            .collect(),
    };
    let (tx, rx) = mpsc::channel(CHANNEL_PAGES);
    let head = match format {
        ExportFormat::Json => {
            let mut deleted: Vec<String> =
                sources.tombstones.iter().map(ToString::to_string).collect();
            deleted.sort();
            let mut head = format!(
                "{{\"format\":\"cofre-export\",\"version\":{EXPORT_VERSION},\"exported_at\":\"{}\"",
                format_timestamp(now)
            );
            let parts = [
                ("profile", to_json(&ProfileBody::from(profile))),
                (
                    "accounts",
                    to_json(
                        &accounts
                            .into_iter()
                            .map(AccountBody::from)
                            .collect::<Vec<_>>(),
                    ),
                ),
                (
                    "categories",
                    to_json(
                        &categories
                            .iter()
                            .cloned()
                            .map(CategoryBody::from)
                            .collect::<Vec<_>>(),
                    ),
                ),
                (
                    "tags",
                    to_json(&tags.into_iter().map(TagBody::from).collect::<Vec<_>>()),
                ),
                (
                    "recurrence_rules",
                    to_json(&sources.rules.iter().map(RuleBody::from).collect::<Vec<_>>()),
                ),
                (
                    "installment_plans",
                    to_json(&sources.plans.iter().map(PlanBody::from).collect::<Vec<_>>()),
                ),
                (
                    "budgets",
                    to_json(
                        &budgets
                            .into_iter()
                            .map(BudgetBody::from)
                            .collect::<Vec<_>>(),
                    ),
                ),
                ("deleted_occurrences", to_json(&deleted)),
            ];
            for (name, value) in parts {
                head.push_str(&format!(",\"{name}\":{value}"));
            }
            head.push_str(",\"transactions\":[");
            head.into_bytes()
        }
        ExportFormat::Csv => csv_line(CSV_COLUMNS.iter().map(|c| (*c).to_owned())),
    };
    tokio::spawn(async move {
        if tx.send(Ok(head)).await.is_err() {
            return;
        }
        if let Err(err) = stream_rows(&*store, user, format, &public_url, &titles, &tx).await {
            tracing::warn!(error = %err, "export cut short");
            let _ = tx
                .send(Err(std::io::Error::other(format!(
                    "export cut short: {err}"
                ))))
                .await;
            return;
        }
        let tail = match format {
            ExportFormat::Json => b"]}\n".to_vec(),
            ExportFormat::Csv => return,
        };
        let _ = tx.send(Ok(tail)).await;
    });
    Ok(rx)
}

/// Titles of accounts and categories by id, for the CSV columns.
struct Titles {
    accounts: std::collections::HashMap<String, String>,
    categories: std::collections::HashMap<String, String>,
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// Sends every stored row, visible ones then hidden ones, page by page.
/// Stops early (without error) when the reader is gone.
async fn stream_rows(
    store: &dyn Store,
    user: UserId,
    format: ExportFormat,
    public_url: &str,
    titles: &Titles,
    tx: &mpsc::Sender<Result<Vec<u8>, std::io::Error>>,
) -> Result<(), StoreError> {
    let mut first = true;
    for hidden in [false, true] {
        let mut filter = TransactionFilter::window(MIN_DATE, MAX_DATE);
        filter.hidden = hidden;
        let mut after: Option<PagePosition> = None;
        loop {
            let page = store
                .list_transactions(
                    user,
                    &filter,
                    &PageRequest {
                        limit: PAGE_ROWS,
                        after: after.clone(),
                    },
                )
                .await?;
            after = page.items.last().map(|t| PagePosition {
                date: t.state.date,
                id: t.id.to_string(),
            });
            let mut chunk = Vec::new();
            for row in page.items {
                match format {
                    ExportFormat::Json => {
                        if !first {
                            chunk.push(b',');
                        }
                        let mut body = String::new();
                        write_entry(&mut body, &row, public_url);
                        chunk.extend_from_slice(body.as_bytes());
                    }
                    ExportFormat::Csv => chunk.extend(csv_row(row, public_url, titles)),
                }
                first = false;
            }
            if !chunk.is_empty() && tx.send(Ok(chunk)).await.is_err() {
                return Ok(());
            }
            if !page.has_more {
                break;
            }
        }
    }
    Ok(())
}

/// One CSV line, fields quoted as RFC 4180 asks.
fn csv_line(fields: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    let fields: Vec<String> = fields.into_iter().collect();
    // Writing into memory cannot fail.
    let _ = writer.write_record(&fields);
    writer.into_inner().unwrap_or_default()
}

fn csv_row(t: Transaction, public_url: &str, titles: &Titles) -> Vec<u8> {
    let text = |v: Option<String>| v.unwrap_or_default();
    let account_id = t.account_id.to_string();
    let category_id = t.state.category_id.map(|c| c.to_string());
    let fields = [
        t.id.to_string(),
        format_date(t.state.date),
        t.state.tx_type.as_str().to_owned(),
        t.state.status.as_str().to_owned(),
        t.state.amount.to_string(),
        t.currency.clone(),
        t.state.description.clone(),
        text(t.state.notes.clone()),
        account_id.clone(),
        text(titles.accounts.get(&account_id).cloned()),
        text(category_id.clone()),
        text(category_id.and_then(|c| titles.categories.get(&c).cloned())),
        t.tags
            .iter()
            .map(|g| g.title.as_str())
            .collect::<Vec<_>>()
            .join(";"),
        t.state.hide_from_results.to_string(),
        text(t.recurrence_id.map(|r| r.to_string())),
        text(t.installment.map(|i| i.purchase_id.to_string())),
        text(t.installment.map(|i| i.number.to_string())),
        text(t.installment.map(|i| i.count.to_string())),
        text(t.transfer_group_id.map(|g| g.to_string())),
        t.source.as_str().to_owned(),
        text(t.original_description.clone()),
        text(
            t.receipt_name
                .as_deref()
                .map(|name| crate::receipts::url(public_url, name)),
        ),
    ];
    csv_line(fields)
}
