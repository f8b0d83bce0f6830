//! The deadline of the request a task serves. Most writes need not know
//! it: the request is cut off at its deadline by dropping its future,
//! which rolls back a transaction left open. A statement that commits on
//! its own (PostgreSQL's call of creations, run by a task of its own)
//! goes on when the request is dropped, so it is told how long it may
//! take and gives up, keeping nothing, when it would finish past that.

use std::future::Future;
use std::time::Instant;

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `work`, a request's handling, as a task whose request is cut off
/// at `deadline`.
pub async fn serve_until<F: Future>(deadline: Instant, work: F) -> F::Output {
    DEADLINE.scope(deadline, work).await
}

/// When the request this task serves is cut off, if it serves one.
pub(crate) fn deadline() -> Option<Instant> {
    DEADLINE.try_with(|deadline| *deadline).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_deadline_is_known_only_inside_a_request() {
        assert_eq!(deadline(), None);
        let at = Instant::now() + Duration::from_secs(5);
        assert_eq!(serve_until(at, async { deadline() }).await, Some(at));
        // A task of its own serves no request.
        let spawned = serve_until(at, async { tokio::spawn(async { deadline() }).await })
            .await
            .expect("task");
        assert_eq!(spawned, None);
    }
}
