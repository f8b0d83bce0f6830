//! The deadline of the request a task serves. Most writes need not know
//! it: the request is cut off at its deadline by dropping its future,
//! which rolls back a transaction left open. A statement that commits on
//! its own (PostgreSQL's one-call creation, migration 0019) goes on in the
//! server when its sender is dropped, so it is told how long it may take
//! and gives up, keeping nothing, when it would finish past that.

use std::future::Future;
use std::time::{Duration, Instant};

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `work`, a request's handling, as a task whose request is cut off
/// at `deadline`.
pub async fn serve_until<F: Future>(deadline: Instant, work: F) -> F::Output {
    DEADLINE.scope(deadline, work).await
}

/// What is left of the time of the request this task serves, if it
/// serves one.
pub(crate) fn time_left() -> Option<Duration> {
    DEADLINE
        .try_with(|deadline| deadline.saturating_duration_since(Instant::now()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn time_is_left_only_inside_a_request() {
        assert_eq!(time_left(), None);
        let left = serve_until(Instant::now() + Duration::from_secs(5), async {
            time_left()
        })
        .await
        .expect("inside a request");
        assert!(
            left > Duration::from_secs(4) && left <= Duration::from_secs(5),
            "{left:?}"
        );
        let past = serve_until(Instant::now(), async { time_left() }).await;
        assert_eq!(past, Some(Duration::ZERO));
    }
}
