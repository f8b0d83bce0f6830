//! `GET /v1/transactions`: the list query, its validation and cursors,
//! and the filter completed from stored data.

use axum::extract::State;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use cofre_domain::account::SubType;
use cofre_domain::category::with_descendants;
use cofre_domain::projection::Handle;
use cofre_domain::text::{lower, max_chars};
use cofre_domain::time::{date_field, format_date, parse_date};
use cofre_domain::transaction::{
    PagePosition, PageRequest, TransactionFilter, TxStatus, TxType, check_window, last_day,
};
use cofre_domain::{AccountId, CategoryId, DomainError, FieldErrors, TagId};

use cofre_store::PageDays;

use super::bodies::TransactionPage;
use super::body_json::write_page;
use super::flag;
use crate::AppState;
use crate::auth::{Auth, Read};
use crate::error::{ApiError, ApiResult, Problem};
use crate::extract::{AppQuery, json_response};
use crate::routes::CommonErrors;
use crate::{cards, ledger};

pub const DEFAULT_PAGE: usize = 50;
/// Most ids one list parameter may name.
pub const MAX_LIST: usize = 100;
pub const MAX_PAGE: usize = 100;

/// Query of the list. Values are taken as text and validated one by one,
/// so every bad parameter is named.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Window start, `YYYY-MM-DD` (required).
    #[param(required = true, value_type = String, format = Date)]
    from: Option<String>,
    /// Window end, `YYYY-MM-DD` (required); at most 366 days from `from`.
    #[param(required = true, value_type = String, format = Date)]
    to: Option<String>,
    /// Default `cashflow`.
    #[param(inline, value_type = Option<View>)]
    view: Option<String>,
    #[param(value_type = Option<TxStatus>)]
    status: Option<String>,
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<TxType>)]
    tx_type: Option<String>,
    /// Account ids, comma-separated.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    account_id: Option<String>,
    /// Category ids, comma-separated.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    category_id: Option<String>,
    /// Default `true`: a category also selects its subcategories.
    #[param(value_type = Option<bool>)]
    include_subcategories: Option<String>,
    /// Tag ids, comma-separated: rows with any of them.
    #[param(value_type = Option<Vec<uuid::Uuid>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    tag_id: Option<String>,
    /// `true`: only rows without a category.
    #[param(value_type = Option<bool>)]
    no_category: Option<String>,
    /// `true`: only rows without tags.
    #[param(value_type = Option<bool>)]
    no_tags: Option<String>,
    /// `true`: only entries of recurrence rules.
    #[param(value_type = Option<bool>)]
    is_recurring: Option<String>,
    /// `true`: only installments.
    #[param(value_type = Option<bool>)]
    is_installments: Option<String>,
    /// A `mocked-bill:<card id>:<YYYYMM>` handle: the card's rows dated in
    /// that bill's cycle.
    #[param(
        pattern = r"^mocked-bill:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}:[0-9]{4}(0[1-9]|1[0-2])$"
    )]
    bill_id: Option<String>,
    /// Account sub types, comma-separated.
    #[param(value_type = Option<Vec<SubType>>, style = Form, explode = false, min_items = 1, max_items = 100)]
    sub_type: Option<String>,
    /// `true`: only hidden rows; `false` (default): only visible rows.
    #[param(value_type = Option<bool>)]
    hidden: Option<String>,
    /// Case-insensitive text in description, notes or original description.
    #[param(max_length = 200)]
    search: Option<String>,
    /// Page size, default 50.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// `next_cursor` of the previous page.
    #[param(max_length = 400)]
    cursor: Option<String>,
}

/// How the list shows card spending: `cashflow` shows a card's bills where
/// the money leaves the bank, `ledger` every stored and projected row.
#[derive(Clone, Copy, PartialEq, Eq, ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum View {
    Cashflow,
    Ledger,
}

impl View {
    pub(in crate::routes) fn parse(text: &str) -> Option<View> {
        match text {
            "cashflow" => Some(View::Cashflow),
            "ledger" => Some(View::Ledger),
            _ => None,
        }
    }
}

pub(in crate::routes) fn id_list<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<Vec<T>> {
    let value = value?;
    let mut out = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match parse(part) {
            Some(id) => out.push(id),
            None => {
                errors.add(field, format!("{part:?} is not valid here"));
                return None;
            }
        }
    }
    if out.is_empty() {
        errors.add(field, "must list at least one value");
        return None;
    }
    if out.len() > MAX_LIST {
        errors.add(field, format!("may list at most {MAX_LIST} values"));
        return None;
    }
    Some(out)
}

fn encode_cursor(position: &PagePosition) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}|{}", format_date(position.date), position.id))
}

fn decode_cursor(text: &str) -> Option<PagePosition> {
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (date, id) = text.split_once('|')?;
    // Ids are UUIDs or projection handles: nothing else reaches the database.
    let id_chars = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '_');
    if id.is_empty() || id.len() > 200 || !id.chars().all(id_chars) {
        return None;
    }
    Some(PagePosition {
        date: parse_date(date)?,
        id: id.to_owned(),
    })
}

impl ListQuery {
    /// The filter, the page, and whether categories include their
    /// subcategories (expanded by the handler, which knows the categories).
    pub(in crate::routes) fn parse(self) -> Result<ParsedList, DomainError> {
        let mut errors = FieldErrors::new();
        let from = match self.from.as_deref() {
            Some(d) => errors.check(date_field("from", d)),
            None => {
                errors.add("from", "is required (YYYY-MM-DD)");
                None
            }
        };
        let to = match self.to.as_deref() {
            Some(d) => errors.check(date_field("to", d)),
            None => {
                errors.add("to", "is required (YYYY-MM-DD)");
                None
            }
        };
        if let (Some(from), Some(to)) = (from, to) {
            errors.check(check_window(from, to));
        }
        let view = self.view.as_deref().and_then(|text| {
            let parsed = View::parse(text);
            if parsed.is_none() {
                errors.add("view", "must be cashflow or ledger");
            }
            parsed
        });
        let status = self.status.as_deref().and_then(|s| {
            let parsed = TxStatus::parse(s);
            if parsed.is_none() {
                errors.add("status", "must be PENDING or POSTED");
            }
            parsed
        });
        let tx_type = self.tx_type.as_deref().and_then(|s| {
            let parsed = TxType::parse(s);
            if parsed.is_none() {
                errors.add("type", "must be DEBIT or CREDIT");
            }
            parsed
        });
        let account_ids = id_list(
            &mut errors,
            "account_id",
            self.account_id.as_deref(),
            AccountId::parse,
        );
        let category_ids = id_list(
            &mut errors,
            "category_id",
            self.category_id.as_deref(),
            CategoryId::parse,
        );
        let tag_ids = id_list(&mut errors, "tag_id", self.tag_id.as_deref(), TagId::parse);
        let sub_types = id_list(
            &mut errors,
            "sub_type",
            self.sub_type.as_deref(),
            SubType::parse,
        );
        let include_subcategories = flag(
            &mut errors,
            "include_subcategories",
            self.include_subcategories.as_deref(),
            true,
        );
        let no_category = flag(
            &mut errors,
            "no_category",
            self.no_category.as_deref(),
            false,
        );
        let no_tags = flag(&mut errors, "no_tags", self.no_tags.as_deref(), false);
        let is_recurring = flag(
            &mut errors,
            "is_recurring",
            self.is_recurring.as_deref(),
            false,
        );
        let is_installments = flag(
            &mut errors,
            "is_installments",
            self.is_installments.as_deref(),
            false,
        );
        let hidden = flag(&mut errors, "hidden", self.hidden.as_deref(), false);
        let bill = self
            .bill_id
            .as_deref()
            .and_then(|text| match Handle::parse(text) {
                Some(handle @ Handle::Bill { .. }) => Some(handle),
                _ => {
                    errors.add(
                        "bill_id",
                        "must be a card bill handle, mocked-bill:<card id>:<YYYYMM>",
                    );
                    None
                }
            });
        let cashflow = view != Some(View::Ledger);
        let search = self
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(lower);
        if let Some(text) = &search {
            errors.check(max_chars("search", text, 200));
        }
        let limit = match self.limit.as_deref() {
            None => DEFAULT_PAGE,
            Some(text) => match text.parse::<usize>() {
                Ok(n @ 1..=MAX_PAGE) => n,
                _ => {
                    errors.add("limit", format!("must be an integer from 1 to {MAX_PAGE}"));
                    DEFAULT_PAGE
                }
            },
        };
        let after = self.cursor.as_deref().and_then(|c| {
            let position = decode_cursor(c);
            if position.is_none() {
                errors.add("cursor", "is not a cursor this API gave out");
            }
            position
        });
        errors.finish()?;
        let (Some(from), Some(to)) = (from, to) else {
            return Err(DomainError::field("from", "is required"));
        };
        Ok(ParsedList {
            filter: TransactionFilter {
                from,
                to,
                status,
                tx_type,
                account_ids,
                category_ids,
                tag_ids,
                no_category,
                no_tags,
                is_recurring,
                is_installments,
                sub_types,
                hidden,
                search,
                cashflow,
            },
            page: PageRequest { limit, after },
            include_subcategories,
            bill,
        })
    }
}

/// A list query, validated.
pub(in crate::routes) struct ParsedList {
    pub filter: TransactionFilter,
    pub page: PageRequest,
    /// Whether categories include their subcategories (expanded by
    /// [`resolve_filter`], which knows the categories).
    pub include_subcategories: bool,
    /// `bill_id`: the rows of one card cycle.
    pub bill: Option<Handle>,
}

/// Completes a parsed filter with what only stored data tells: the
/// subcategories of its categories, and the card cycle of `bill_id` (the
/// card's rows dated in it, whatever the view).
pub(in crate::routes) async fn resolve_filter(
    state: &AppState,
    user: cofre_domain::UserId,
    parsed: ParsedList,
) -> ApiResult<TransactionFilter> {
    let mut filter =
        expand_categories(state, user, parsed.filter, parsed.include_subcategories).await?;
    if let Some(Handle::Bill {
        card_id,
        year,
        month,
    }) = parsed.bill
    {
        let card = cards::card_of(state.store.as_ref(), user, card_id, filter.from)
            .await?
            .ok_or_else(|| ApiError::field("bill_id", "names no card of yours"))?;
        // A month outside the calendar, or whose cycle lies before it,
        // holds no rows.
        let cycle = cofre_domain::card::BillMonth::new(year, month)
            .and_then(|month| card.cycles.cycle(month));
        let on_card = filter
            .account_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&card_id));
        filter.account_ids = Some(if on_card { vec![card_id] } else { Vec::new() });
        filter.cashflow = false;
        let (from, to) = match cycle {
            Some(cycle) => (filter.from.max(cycle.start), filter.to.min(cycle.close)),
            None => (filter.to, filter.from),
        };
        if from <= to {
            (filter.from, filter.to) = (from, to);
        } else {
            // The cycle lies outside the window: nothing to show.
            filter.account_ids = Some(Vec::new());
        }
    }
    Ok(filter)
}

/// Adds the subcategories of the filter's categories when asked to.
pub(super) async fn expand_categories(
    state: &AppState,
    user: cofre_domain::UserId,
    mut filter: TransactionFilter,
    include_subcategories: bool,
) -> ApiResult<TransactionFilter> {
    if include_subcategories && let Some(roots) = &filter.category_ids {
        let visible = state.store.list_categories(user).await?;
        filter.category_ids = Some(with_descendants(&visible, roots));
    }
    Ok(filter)
}

/// Merged view of the user's entries inside a window: stored rows and the
/// projected occurrences of rules and installments, newest day first, ids
/// ascending within a day.
#[utoipa::path(get, path = "/v1/transactions", tag = "transactions", params(ListQuery),
    responses((status = 200, body = TransactionPage),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        CommonErrors))]
pub(super) async fn list_transactions(
    State(state): State<AppState>,
    auth: Auth<Read>,
    AppQuery(query): AppQuery<ListQuery>,
) -> ApiResult<Response> {
    let parsed = query.parse()?;
    let page = parsed.page.clone();
    // The stored days the page shows: from the window's start to its
    // cursor's day (said in the response, for whoever keeps it).
    let days = PageDays {
        user: auth.user(),
        from: parsed.filter.from,
        to: last_day(page.after.as_ref(), parsed.filter.to),
    };
    let filter = resolve_filter(&state, auth.user(), parsed).await?;
    let today = state.clock.today();
    let result = ledger::page(state.store.as_ref(), auth.user(), &filter, &page, today).await?;
    let next_cursor = match (result.has_more, result.items.last()) {
        (true, Some(last)) => Some(encode_cursor(&PagePosition {
            date: last.state.date,
            id: last.id.to_string(),
        })),
        _ => None,
    };
    let mut response = json_response(write_page(
        &result.items,
        result.has_more,
        next_cursor.as_deref(),
        &state.config.public_url,
    ));
    response.extensions_mut().insert(days);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cofre_domain::TransactionId;
    use jiff::civil::date;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        let position = PagePosition {
            date: date(2026, 11, 22),
            id: TransactionId::new().to_string(),
        };
        assert_eq!(decode_cursor(&encode_cursor(&position)), Some(position));
        assert_eq!(decode_cursor("not-a-cursor"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("2026-13-01|x")), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|")), None);
        assert_eq!(
            decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|a\0b")),
            None
        );
        assert_eq!(
            decode_cursor(&URL_SAFE_NO_PAD.encode("2026-01-01|a'b")),
            None
        );
    }
}
