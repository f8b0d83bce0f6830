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
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rusqlite::{Connection, Row, params};
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

/// Writes one row as a JSON object straight into `out`, as a serde derive
/// would, with no value tree in between.
fn push_row(out: &mut Vec<u8>, row: &Row<'_>) -> rusqlite::Result<()> {
    let text = |i| row.get_ref(i)?.as_str().map_err(rusqlite::Error::from);
    let string = |out: &mut Vec<u8>, s: &str| {
        serde_json::to_writer(out, s).expect("a Vec takes any write");
    };
    out.extend_from_slice(b"{\"id\":");
    string(out, text(0)?);
    out.extend_from_slice(b",\"date\":");
    string(out, text(1)?);
    write!(
        out,
        ",\"amount\":{},\"description\":",
        row.get::<_, i64>(2)?
    )
    .expect("a Vec takes any write");
    string(out, text(3)?);
    out.extend_from_slice(b",\"account_id\":");
    string(out, text(4)?);
    out.push(b'}');
    Ok(())
}

fn json_body(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn point(
    State(floor): State<Arc<Floor>>,
    Path(id): Path<String>,
) -> Result<Response, Failure> {
    let body = read(&floor, |conn| {
        let mut statement = conn.prepare_cached(BY_ID)?;
        let mut rows = statement.query(params![id, floor.user])?;
        let mut out = Vec::with_capacity(256);
        match rows.next()? {
            Some(row) => push_row(&mut out, row).map(|()| Some(out)),
            None => Ok(None),
        }
    })?;
    Ok(match body {
        Some(body) => json_body(body),
        None => StatusCode::NOT_FOUND.into_response(),
    })
}

fn window(query: &HashMap<String, String>) -> Result<(&str, &str), Failure> {
    let from = query.get("from").ok_or_else(|| bad("from"))?;
    let to = query.get("to").ok_or_else(|| bad("to"))?;
    Ok((from.as_str(), to.as_str()))
}

/// `{"data":[rows...]` of up to `limit` rows, and the `DATE_ID` of the last
/// one when more follow.
fn rows_json(
    mut rows: rusqlite::Rows<'_>,
    limit: usize,
) -> rusqlite::Result<(Vec<u8>, Option<String>)> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"data\":[");
    let (mut count, mut last) = (0, None);
    while let Some(row) = rows.next()? {
        if count == limit {
            return Ok((out, last));
        }
        if count > 0 {
            out.push(b',');
        }
        push_row(&mut out, row)?;
        count += 1;
        if count == limit {
            last = Some(format!(
                "{}_{}",
                row.get_ref(1)?.as_str()?,
                row.get_ref(0)?.as_str()?
            ));
        }
    }
    Ok((out, None))
}

async fn page(
    State(floor): State<Arc<Floor>>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Failure> {
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
    let (mut body, next_after) = read(&floor, |conn| {
        let upper = to.min(last_date);
        let mut statement = conn.prepare_cached(PAGE)?;
        let rows = statement.query(params![
            floor.user,
            from,
            upper,
            last_date,
            last_id,
            limit + 1
        ])?;
        rows_json(rows, limit as usize)
    })?;
    body.extend_from_slice(b"],\"next_after\":");
    serde_json::to_writer(&mut body, &next_after).expect("a Vec takes any write");
    body.push(b'}');
    Ok(json_body(body))
}

async fn month(
    State(floor): State<Arc<Floor>>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Failure> {
    let (from, to) = window(&query)?;
    let (mut body, _) = read(&floor, |conn| {
        let mut statement = conn.prepare_cached(WINDOW)?;
        rows_json(statement.query(params![floor.user, from, to])?, usize::MAX)
    })?;
    body.extend_from_slice(b"]}");
    Ok(json_body(body))
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
