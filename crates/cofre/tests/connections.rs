//! Kept connections, as a client that pools them sees them: an answer
//! given before the request's body was read to its end (a body over the
//! limit) says `Connection: close`, since the server then closes the
//! connection, and a client that reused it would lose its next request;
//! an answer to a request read whole keeps the connection for the next.
//! Heads the HTTP layer refuses (a URI past 65,534 bytes, too many or too
//! long headers, a line it cannot read) are answered with problem
//! documents too. Over raw HTTP/1.1 to the real binary, on SQLite and on
//! PostgreSQL.

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

mod common;

use common::database::Database;
use common::server::Server;

/// One answer read off `conn`: its status, its headers (names in lower
/// case) and its body.
async fn answer(conn: &mut BufReader<TcpStream>) -> (u16, HashMap<String, String>, Vec<u8>) {
    let mut line = String::new();
    conn.read_line(&mut line).await.expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {line:?}"));
    let mut headers = HashMap::new();
    loop {
        line.clear();
        conn.read_line(&mut line).await.expect("header line");
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|n| n.parse().ok())
        .expect("a content-length");
    let mut body = vec![0; length];
    conn.read_exact(&mut body).await.expect("body");
    (status, headers, body)
}

/// A POST of `body` (or of its first `sent` bytes, the length declared
/// being the whole) with the user's key.
async fn post(conn: &mut BufReader<TcpStream>, key: &str, path: &str, body: &[u8], sent: usize) {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: cofre\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let stream = conn.get_mut();
    stream.write_all(head.as_bytes()).await.expect("send head");
    match stream.write_all(&body[..sent]).await {
        Ok(()) => {}
        // A server that answers before the whole body came may close the
        // connection while the rest is still being sent; its answer is
        // then already on the way back, and is what the caller reads.
        Err(error) if sent < body.len() || body.len() > LIMIT => {
            assert!(
                matches!(
                    error.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ),
                "send body: {error}"
            );
        }
        Err(error) => panic!("send body: {error}"),
    }
}

/// The body limit the server is started with (its default, 1 MiB).
const LIMIT: usize = 1024 * 1024;

async fn connections_and_refused_heads(database: Database, url: String) {
    let receipts = tempfile::tempdir().expect("receipts");
    let (server, key) = Server::start(&url, receipts.path(), &[]).await;
    let key = key.expect("key");
    let address = server.base.trim_start_matches("http://").to_owned();
    let connect = || async { BufReader::new(TcpStream::connect(&address).await.expect("connect")) };

    // A body read whole: the connection serves the next request.
    let mut conn = connect().await;
    let account = br#"{"type": "BANK", "title": "Conta"}"#;
    for n in 0..3 {
        post(&mut conn, &key, "/v1/accounts", account, account.len()).await;
        let (status, headers, body) = answer(&mut conn).await;
        assert_eq!(
            status,
            201,
            "request {n}: {}",
            String::from_utf8_lossy(&body)
        );
        assert!(!headers.contains_key("connection"), "{headers:?}");
    }

    // A body over the limit, many times: each 413 names the problem and
    // says the connection closes, however much of the rest had come.
    let oversized = vec![b' '; 3 * 1024 * 1024];
    for n in 0..20 {
        let mut conn = connect().await;
        // Past the 1 MiB limit, the whole body or a part of it.
        let sent = [1_100_000, 2_000_000, oversized.len()][n % 3];
        post(&mut conn, &key, "/v1/transactions", &oversized, sent).await;
        let (status, headers, body) =
            tokio::time::timeout(Duration::from_secs(10), answer(&mut conn))
                .await
                .expect("an answer before the whole body came");
        assert_eq!(status, 413, "{}", String::from_utf8_lossy(&body));
        assert_eq!(
            headers.get("connection").map(String::as_str),
            Some("close"),
            "try {n}: {headers:?}"
        );
        let problem: serde_json::Value = serde_json::from_slice(&body).expect("a problem");
        assert_eq!(problem["status"], 413, "{problem}");
    }

    // Heads refused before any route: the status, a problem document
    // naming the problem, and the connection closed.
    let many: String = (0..150).map(|i| format!("X-Header-{i}: v\r\n")).collect();
    let long = format!("X-Long: {}\r\n", "b".repeat(500_000));
    let refused = [
        (
            format!(
                "GET /v1/me?q={} HTTP/1.1\r\nHost: cofre\r\n\r\n",
                "a".repeat(100_000)
            ),
            414,
            "uri_too_long",
        ),
        (
            format!("GET /v1/me HTTP/1.1\r\nHost: cofre\r\n{many}\r\n"),
            431,
            "headers_too_large",
        ),
        (
            format!("GET /v1/me HTTP/1.1\r\nHost: cofre\r\n{long}\r\n"),
            431,
            "headers_too_large",
        ),
        (
            "GET /v1/me HTTP/1.1\r\nHost cofre\r\n\r\n".to_owned(),
            400,
            "malformed_request",
        ),
    ];
    for (request, status, code) in refused {
        let mut conn = connect().await;
        conn.get_mut()
            .write_all(request.as_bytes())
            .await
            .expect("send");
        let (got, headers, body) = answer(&mut conn).await;
        assert_eq!(got, status, "{}", String::from_utf8_lossy(&body));
        assert_eq!(
            headers.get("content-type").map(String::as_str),
            Some("application/problem+json"),
            "{headers:?}"
        );
        assert_eq!(headers.get("connection").map(String::as_str), Some("close"));
        let problem: serde_json::Value = serde_json::from_slice(&body).expect("a problem");
        assert_eq!(problem["status"], status, "{problem}");
        assert_eq!(problem["code"], code, "{problem}");
    }
    // The server goes on serving.
    let mut conn = connect().await;
    post(&mut conn, &key, "/v1/accounts", account, account.len()).await;
    assert_eq!(answer(&mut conn).await.0, 201);
    server.kill();
    database.drop_it().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_connections_and_refused_heads() {
    let (database, url) = Database::sqlite().await;
    connections_and_refused_heads(database, url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_connections_and_refused_heads() {
    if let Some((database, url)) = Database::postgres().await {
        connections_and_refused_heads(database, url).await;
    }
}
