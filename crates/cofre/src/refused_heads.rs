//! Requests refused before any of cofre's code runs get a problem
//! document too. hyper answers a request line or headers it will not
//! parse by itself (`414` for a URI past 65,534 bytes, `431` for more than
//! 100 headers or a head past its buffer, `400` for one it cannot read),
//! with an empty body, and closes the connection. Those limits stay; the
//! connection's writes are watched for exactly those answers, and each is
//! replaced by the same status with the problem document a client's error
//! handler expects ([`cofre_api::error::refused_head`]).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Connections whose refused heads are answered with problem documents.
pub struct Listener(pub TcpListener);

impl axum::serve::Listener for Listener {
    type Io = Connection;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Connection, std::net::SocketAddr) {
        let (stream, address) = axum::serve::Listener::accept(&mut self.0).await;
        (
            Connection {
                stream,
                replacing: None,
            },
            address,
        )
    }

    fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.0.local_addr()
    }
}

/// A client's connection.
pub struct Connection {
    stream: TcpStream,
    /// The answer written in place of hyper's bare one, and how much of
    /// it has gone out.
    replacing: Option<(Vec<u8>, usize)>,
}

/// hyper's answer to a head it refused, if `written` is one: its whole
/// head (status line, `connection: close`, `content-length: 0` and
/// `date`), nothing else; then its status.
fn refused(written: &[u8]) -> Option<u16> {
    // hyper's answers are short; anything longer is something else.
    if written.len() > 256 || !written.ends_with(b"\r\n\r\n") {
        return None;
    }
    let text = std::str::from_utf8(written).ok()?;
    let mut lines = text.strip_suffix("\r\n\r\n")?.split("\r\n");
    let status = match lines.next()? {
        "HTTP/1.1 400 Bad Request" => 400,
        "HTTP/1.1 414 URI Too Long" => 414,
        "HTTP/1.1 431 Request Header Fields Too Large" => 431,
        _ => return None,
    };
    let mut headers: Vec<&str> = lines
        .map(|line| line.split_once(':').map_or("", |(name, _)| name))
        .collect();
    headers.sort_unstable();
    (headers == ["connection", "content-length", "date"]
        && text.contains("\r\ncontent-length: 0\r\n"))
    .then_some(status)
}

/// The answer to send instead of hyper's `written`, refused with `status`.
fn replacement(status: u16, written: &[u8]) -> Vec<u8> {
    let (reason, body) = cofre_api::error::refused_head(status);
    let date = std::str::from_utf8(written)
        .ok()
        .and_then(|text| text.split("\r\n").find(|line| line.starts_with("date:")))
        .unwrap_or("");
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nconnection: close\r\n\
         content-type: application/problem+json\r\ncontent-length: {}\r\n{date}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

impl Connection {
    /// Takes hyper's `written` as written, and starts sending its
    /// replacement (what does not go out now goes with the next write, the
    /// flush or the shutdown: hyper must not be asked for `written` again).
    fn replace(&mut self, cx: &mut Context<'_>, status: u16, written: &[u8]) -> io::Result<usize> {
        self.replacing = Some((replacement(status, written), 0));
        if let Poll::Ready(Err(err)) = self.poll_replacement(cx) {
            return Err(err);
        }
        Ok(written.len())
    }

    /// Sends what is left of a replacement; ready once it is all out.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, sent)) = &mut self.replacing {
            if *sent == bytes.len() {
                self.replacing = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.stream).poll_write(cx, &bytes[*sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *sent += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_replacement(cx))?;
        if let Some(status) = refused(buf) {
            return Poll::Ready(self.replace(cx, status, buf));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_replacement(cx))?;
        // A refused head comes alone: one slice, or one and empty ones.
        let mut written = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (written.next(), written.next())
            && let Some(status) = refused(only)
        {
            return Poll::Ready(self.replace(cx, status, only));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPER_414: &[u8] = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\n\
        content-length: 0\r\ndate: Sat, 05 Dec 2026 15:05:48 GMT\r\n\r\n";

    #[test]
    fn only_hyper_s_bare_refusals_are_replaced() {
        assert_eq!(refused(HYPER_414), Some(414));
        assert_eq!(
            refused(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
                  content-length: 0\r\ndate: Sat, 05 Dec 2026 15:05:48 GMT\r\n\r\n"
            ),
            Some(431)
        );
        // cofre's own answers carry a body and its type.
        assert_eq!(
            refused(
                b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\n\
                  content-length: 120\r\ndate: Sat, 05 Dec 2026 15:05:48 GMT\r\n\r\n"
            ),
            None
        );
        // A body that happened to start so, or a head with more after it.
        assert_eq!(refused(&[HYPER_414, b"{}"].concat()), None);
        assert_eq!(
            refused(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
    }

    #[test]
    fn the_replacement_is_a_problem_document_that_closes_the_connection() {
        let answer = String::from_utf8(replacement(414, HYPER_414)).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{head}");
        assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
        assert!(head.contains("\r\ncontent-type: application/problem+json\r\n"));
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())));
        assert!(
            head.ends_with("date: Sat, 05 Dec 2026 15:05:48 GMT"),
            "{head}"
        );
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 414);
        assert_eq!(problem["code"], "uri_too_long");
    }
}
