//! `cofre serve` as a child process, and a client with a user's key.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Today, pinned, so that every row dated before it is POSTED.
pub const NOW: &str = "2026-11-22T15:00:00Z";

/// A running `cofre serve`.
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// Starts the binary on `url` and waits until it is ready; on the first
    /// start also returns the API key it prints once.
    pub async fn start(
        url: &str,
        receipts: &std::path::Path,
        extra: &[(&str, &str)],
    ) -> (Server, Option<String>) {
        Self::start_command(
            Command::new(env!("CARGO_BIN_EXE_cofre")),
            url,
            receipts,
            extra,
        )
        .await
    }

    /// [`Server::start`], the process pinned to one core (`taskset`), as
    /// on a one-core host: its threads take turns on that core.
    pub async fn start_on_one_core(
        url: &str,
        receipts: &std::path::Path,
        extra: &[(&str, &str)],
    ) -> (Server, Option<String>) {
        let mut command = Command::new("taskset");
        command.args(["--cpu-list", "0", env!("CARGO_BIN_EXE_cofre")]);
        Self::start_command(command, url, receipts, extra).await
    }

    async fn start_command(
        mut command: Command,
        url: &str,
        receipts: &std::path::Path,
        extra: &[(&str, &str)],
    ) -> (Server, Option<String>) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let base = format!("http://127.0.0.1:{port}");
        command
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .env("COFRE_DATABASE_URL", url)
            .env("COFRE_NOW", NOW)
            .env("COFRE_RECEIPTS_DIR", receipts)
            .env("COFRE_RATE_LIMIT_PER_MINUTE", "0")
            .env("COFRE_RATE_LIMIT_PER_DAY", "0")
            .env("COFRE_LOG", "error")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, value) in extra {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start cofre serve");
        // The banner (first start only) comes before the server listens;
        // a thread reads the rest so the pipe never fills.
        let stdout = child.stdout.take().expect("stdout");
        let (found, key) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut token = None;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let text = line.trim();
                if text.starts_with("cofre_") {
                    token = Some(text.to_owned());
                } else if text.starts_with("Try:")
                    && let Some(token) = token.take()
                {
                    let _ = found.send((token, text.to_owned()));
                }
            }
        });
        let server = Server { child, base };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = client
                .get(format!("{}/readyz", server.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "cofre serve did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The banner was written before the server listened; its reader
        // thread may still be on its way on a busy machine.
        let key = key
            .recv_timeout(Duration::from_secs(1))
            .ok()
            .map(|(token, try_line)| {
                // The banner's example names the address the server listens on.
                assert!(
                    try_line.contains(&format!("{}/v1/me", server.base)),
                    "{try_line} does not name {}",
                    server.base
                );
                token
            });
        (server, key)
    }

    /// The server on one core and one runtime worker with a deadline of
    /// `deadline_s` seconds and the read cache off, a client with the
    /// first key, and a bank account: for the liveness tests.
    pub async fn start_starved(
        url: &str,
        receipts: &std::path::Path,
        deadline_s: u64,
    ) -> (Server, Api, String) {
        let deadline = deadline_s.to_string();
        let settings = [
            ("COFRE_WORKERS", "1"),
            ("COFRE_REQUEST_TIMEOUT", deadline.as_str()),
            ("COFRE_READ_CACHE_MB", "0"),
        ];
        let (server, key) = Self::start_on_one_core(url, receipts, &settings).await;
        let api = Api {
            http: reqwest::Client::new(),
            base: server.base.clone(),
            key: key.expect("the first start prints a key"),
        };
        let account = api
            .create(
                "/v1/accounts",
                serde_json::json!({"type": "BANK", "title": "Conta"}),
                "/id",
            )
            .await;
        (server, api, account)
    }

    pub fn kill(mut self) {
        // SIGKILL: no shutdown code runs, as in a power cut of the process.
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }
}

/// A test that fails before it kills its servers leaves none behind.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A client with the user's key.
#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub key: String,
}

impl Api {
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> reqwest::Result<(u16, Value)> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .timeout(Duration::from_secs(10));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let text = response.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// POSTs `body` to `path`, expects 2xx, and gives the `id` at
    /// `pointer` of the answer (`/id`, `/transaction/id`).
    pub async fn create(&self, path: &str, body: Value, pointer: &str) -> String {
        let answer = self.ok(reqwest::Method::POST, path, Some(&body)).await;
        answer
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no {pointer} in {answer}"))
            .to_owned()
    }

    pub async fn ok(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Value {
        let (status, body) = self.send(method, path, body).await.expect("request");
        assert!((200..300).contains(&status), "{path}: {status} {body}");
        body
    }
}
