//! A request answered before its body was read to the end leaves that
//! body's rest on the connection, which hyper will not read: it closes the
//! connection after the response. Unless the response says so
//! (`Connection: close`), a client that keeps connections in a pool sends
//! its next request on the closing connection and loses it ("server
//! disconnected without sending a response"). So every response to a
//! request whose body was not read to its end says so: a 413 for a body
//! over the limit, a 401 before a body is looked at, a request cut off at
//! its deadline.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// Whether a request's body was read to its end.
pub struct Watch(Option<Arc<AtomicBool>>);

/// Watches `req`'s body (a request without one needs no watching).
pub fn watch(req: Request) -> (Request, Watch) {
    if req.body().is_end_stream() {
        return (req, Watch(None));
    }
    let ended = Arc::new(AtomicBool::new(false));
    let req = req.map(|inner| {
        Body::new(Watched {
            inner,
            ended: Arc::clone(&ended),
        })
    });
    (req, Watch(Some(ended)))
}

impl Watch {
    /// Marks `response` as the connection's last when the body was not
    /// read to its end.
    pub fn close_if_unread(self, response: &mut Response) {
        if let Some(ended) = self.0
            && !ended.load(Ordering::Acquire)
        {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
    }
}

/// A body that notes when it has given its last frame.
struct Watched {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let ended = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(Ok(_))) => self.inner.is_end_stream(),
            _ => false,
        };
        if ended {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    fn closes(response: &Response) -> bool {
        response.headers().get(header::CONNECTION) == Some(&HeaderValue::from_static("close"))
    }

    #[tokio::test]
    async fn a_body_left_unread_closes_the_connection() {
        let (req, watch) = watch(Request::new(Body::from("{\"amount\": 1}")));
        drop(req);
        let mut response = Response::new(Body::empty());
        watch.close_if_unread(&mut response);
        assert!(closes(&response));
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_or_none_keeps_it() {
        let (req, watch) = watch(Request::new(Body::from("{\"amount\": 1}")));
        to_bytes(req.into_body(), 1_000).await.unwrap();
        let mut response = Response::new(Body::empty());
        watch.close_if_unread(&mut response);
        assert!(!closes(&response));

        let (_req, watch) = super::watch(Request::new(Body::empty()));
        let mut response = Response::new(Body::empty());
        watch.close_if_unread(&mut response);
        assert!(!closes(&response));
    }

    #[tokio::test]
    async fn a_body_read_in_part_closes_it() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"{\"a\"")),
            Ok(Bytes::from_static(b": 1}")),
        ];
        let body = Body::from_stream(futures_util::stream::iter(chunks));
        let (req, watch) = watch(Request::new(body));
        let mut body = req.into_body();
        let first = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert!(first.is_some());
        let mut response = Response::new(Body::empty());
        watch.close_if_unread(&mut response);
        assert!(closes(&response));
    }
}
