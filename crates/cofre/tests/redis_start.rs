//! `cofre serve` with `COFRE_REDIS_URL`: a URL that is not one stops the
//! start with a clear message; a Redis that does not answer is a warning,
//! and the server starts anyway, counting its rate limits alone.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn an_unparseable_redis_url_stops_the_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("cofre.db").display());
    for bad in [
        "not a url",
        "http://127.0.0.1:6379",
        "rediss://127.0.0.1:6379",
    ] {
        let output = common::cofre(
            &url,
            &["serve", "--bind", "127.0.0.1:0"],
            &[("COFRE_REDIS_URL", bad)],
        );
        assert!(!output.status.success(), "{bad:?} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("COFRE_REDIS_URL is not a usable Redis URL"),
            "{bad:?}: {stderr}"
        );
    }
}

#[test]
fn an_unreachable_redis_at_start_is_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env(
            "COFRE_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("cofre.db").display()),
        )
        .env("COFRE_RECEIPTS_DIR", dir.path().join("receipts"))
        .env("COFRE_REDIS_URL", format!("redis://127.0.0.1:{port}"))
        .env("COFRE_LOG", "info")
        .env("COFRE_LOG_FORMAT", "text")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cofre serve");
    let stderr = child.stderr.take().expect("stderr");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = received.recv_timeout(Duration::from_secs(30)) {
        let listening = line.contains("cofre listening");
        seen.push(line);
        if listening {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let log = seen.join("\n");
    assert!(log.contains("cofre listening"), "did not start:\n{log}");
    assert!(
        log.contains("WARN") && log.contains("Redis rate limiter unreachable"),
        "no warning:\n{log}"
    );
}
