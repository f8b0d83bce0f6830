//! `cofre-floor`: the least an HTTP + JSON + SQLite request can cost on this
//! machine, the floor cofre's own figures are measured against
//! (`scripts/bench-side-by-side`). A bare axum + rusqlite server with no
//! auth, no validation beyond the shape of a body, no cache and no
//! projections: 5 columns a row, straight from the rows `cofre serve` keeps.
//!
//!     cofre-floor DATABASE BIND [USER]
//!
//! DATABASE is cofre's own SQLite file (a `sqlite://` prefix is dropped), so
//! both servers read the very same rows; USER is whose rows it reads (by
//! default the user with the most rows). It opens the file as cofre does
//! (WAL, `synchronous=FULL`), so a write is as durable as cofre's.
//!
//! - `GET /tx/{id}`: one row by id.
//! - `GET /page?from=&to=&limit=50&after=`: a page of the window's rows,
//!   newest day first, id ascending within a day (cofre's order), by keyset:
//!   `after` is the previous page's `next_after`.
//! - `GET /month?from=&to=`: the whole window in one response.
//! - `POST /tx` with `{account_id, amount, date, description}`: one INSERT,
//!   its own fsync'd transaction, into `floor_writes` (created if missing),
//!   so cofre's rows are never touched.
//!
//! Reads run inline on the tokio worker with that thread's own connection:
//! a read from the page cache takes microseconds, less than any hand-off to
//! another thread would. The write waits for an fsync, so it runs on the
//! blocking pool, through the one writer connection SQLite allows anyway.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::{Value, json};

type Failure = (StatusCode, String);

struct Floor {
    database: String,
    user: String,
    writer: Mutex<Connection>,
}

thread_local! {
    static READER: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

// The 5 columns the floor answers with, by id and by window of days, in
// cofre's order (newest day first, id ascending within a day) so one index,
// `transactions_user_date`, serves both servers.
macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT id, date, amount_cents, description, account_id FROM transactions WHERE ",
            $where
        )
    };
}
const BY_ID: &str = select!("id = ?1 AND user_id = ?2");
const WINDOW: &str = select!(
    "user_id = ?1 AND hide_from_results = FALSE AND date >= ?2 AND date <= ?3 ORDER BY date DESC, id"
);
const PAGE: &str = select!(
    "user_id = ?1 AND hide_from_results = FALSE AND date >= ?2 AND date <= ?3 \
     AND (date < ?4 OR id > ?5) ORDER BY date DESC, id LIMIT ?6"
);

fn open(database: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open(database)?;
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.busy_timeout(Duration::from_secs(10))?;
    Ok(conn)
}

fn internal(e: rusqlite::Error) -> Failure {
    eprintln!("cofre-floor: {e}");
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

fn bad(what: &str) -> Failure {
    (
        StatusCode::BAD_REQUEST,
        format!("{what} is missing or wrong"),
    )
}

/// Runs `f` with this worker thread's reader, opening it on first use.
fn read<T>(
    floor: &Floor,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, Failure> {
    READER.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(open(&floor.database).map_err(internal)?);
        }
        f(slot.as_ref().expect("opened above")).map_err(internal)
    })
}

fn to_json(row: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": row.get::<_, String>(0)?,
        "date": row.get::<_, String>(1)?,
        "amount": row.get::<_, i64>(2)?,
        "description": row.get::<_, String>(3)?,
        "account_id": row.get::<_, String>(4)?,
    }))
}

async fn point(
    State(floor): State<Arc<Floor>>,
    Path(id): Path<String>,
) -> Result<Response, Failure> {
    let row = read(&floor, |conn| {
        conn.prepare_cached(BY_ID)?
            .query_row(params![id, floor.user], to_json)
            .optional()
    })?;
    Ok(match row {
        Some(row) => Json(row).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    })
}

fn window(query: &HashMap<String, String>) -> Result<(&str, &str), Failure> {
    let from = query.get("from").ok_or_else(|| bad("from"))?;
    let to = query.get("to").ok_or_else(|| bad("to"))?;
    Ok((from.as_str(), to.as_str()))
}

async fn page(
    State(floor): State<Arc<Floor>>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>, Failure> {
    let (from, to) = window(&query)?;
    let limit = match query.get("limit") {
        Some(limit) => limit
            .parse::<u32>()
            .map_err(|_| bad("limit"))?
            .clamp(1, 1000),
        None => 50,
    };
    // `after` is `DATE_ID` of the previous page's last row; the next rows
    // are on earlier days, or on that day with a greater id.
    let (last_date, last_id) = match query.get("after") {
        Some(after) => after.split_once('_').ok_or_else(|| bad("after"))?,
        None => ("9999-12-31", ""),
    };
    let mut rows = read(&floor, |conn| {
        let upper = to.min(last_date);
        let mut statement = conn.prepare_cached(PAGE)?;
        let rows = statement.query_map(
            params![floor.user, from, upper, last_date, last_id, limit + 1],
            to_json,
        )?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    let limit = limit as usize;
    let next_after = if rows.len() > limit {
        rows.truncate(limit);
        let last = &rows[limit - 1];
        Some(format!(
            "{}_{}",
            last["date"].as_str().unwrap_or_default(),
            last["id"].as_str().unwrap_or_default()
        ))
    } else {
        None
    };
    Ok(Json(json!({"data": rows, "next_after": next_after})))
}

async fn month(
    State(floor): State<Arc<Floor>>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>, Failure> {
    let (from, to) = window(&query)?;
    let rows = read(&floor, |conn| {
        let mut statement = conn.prepare_cached(WINDOW)?;
        let rows = statement.query_map(params![floor.user, from, to], to_json)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    Ok(Json(json!({"data": rows})))
}

async fn insert(
    State(floor): State<Arc<Floor>>,
    Json(body): Json<Value>,
) -> Result<Response, Failure> {
    let text = |field: &str| {
        body[field]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| bad(field))
    };
    let (account, description) = (text("account_id")?, text("description")?);
    let date = body["date"].as_str().unwrap_or("1970-01-01").to_owned();
    let amount = body["amount"]
        .as_f64()
        .filter(|a| *a > 0.0)
        .ok_or_else(|| bad("amount"))?;
    let cents = (amount * 100.0).round() as i64;
    let id = tokio::task::spawn_blocking(move || {
        let conn = floor.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        conn.prepare_cached(
            "INSERT INTO floor_writes (account_id, date, amount_cents, description) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![account, date, cents, description])?;
        Ok::<_, rusqlite::Error>(conn.last_insert_rowid())
    })
    .await
    .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    .map_err(internal)?;
    Ok((StatusCode::CREATED, Json(json!({"id": id}))).into_response())
}

fn start(database: String, user: Option<String>) -> rusqlite::Result<Floor> {
    let writer = open(&database)?;
    writer.execute_batch(
        "CREATE TABLE IF NOT EXISTS floor_writes (id INTEGER PRIMARY KEY, account_id TEXT NOT NULL, \
         date TEXT NOT NULL, amount_cents INTEGER NOT NULL, description TEXT NOT NULL)",
    )?;
    let user = match user {
        Some(user) => user,
        None => writer.query_row(
            "SELECT user_id FROM transactions GROUP BY user_id ORDER BY count(*) DESC LIMIT 1",
            [],
            |row| row.get(0),
        )?,
    };
    Ok(Floor {
        database,
        user,
        writer: Mutex::new(writer),
    })
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(database), Some(bind)) = (args.next(), args.next()) else {
        return Err("usage: cofre-floor DATABASE BIND [USER]".into());
    };
    let database = database
        .strip_prefix("sqlite://")
        .unwrap_or(&database)
        .to_owned();
    let floor =
        start(database, args.next()).map_err(|e| format!("cannot open the database: {e}"))?;
    eprintln!("cofre-floor: rows of user {} on {bind}", floor.user);
    let app = Router::new()
        .route("/tx", post(insert))
        .route("/tx/{id}", get(point))
        .route("/page", get(page))
        .route("/month", get(month))
        .with_state(Arc::new(floor));
    let listener = tokio::net::TcpListener::bind(&bind)
        .await
        .map_err(|e| format!("cannot bind {bind}: {e}"))?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}
