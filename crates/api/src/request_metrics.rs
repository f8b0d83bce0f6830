//! Every request's count and duration, by method, route and status
//! (`http_requests_total`, `http_request_duration_seconds`), through
//! handles registered once for each set of labels instead of once a
//! request: registering builds the labels' key (copying the route and
//! the status into strings) and looks it up in the recorder's registry:
//! work every request repeated for the few sets of labels a server ever
//! sees.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use metrics::{Counter, Histogram, Label};

/// The most sets of labels kept: routes, methods and statuses are all
/// bounded (the router's own paths, `unmatched`, the methods
/// [`crate::method_label`] names, three-digit statuses), so this is a
/// guard, not a limit met; past it a request's metrics are registered
/// as they come, as before.
const MAX_KEPT: usize = 4096;

/// One set of labels' handles.
#[derive(Clone)]
struct Handles {
    method: &'static str,
    status: u16,
    count: Counter,
    duration: Histogram,
}

impl Handles {
    fn of(&self, method: &'static str, status: u16) -> bool {
        self.method == method && self.status == status
    }

    fn record(&self, seconds: f64) {
        self.count.increment(1);
        self.duration.record(seconds);
    }
}

/// The handles kept, by route, then method and status (a route sees a
/// few of each).
static KEPT: LazyLock<RwLock<HashMap<Box<str>, Vec<Handles>>>> = LazyLock::new(RwLock::default);

/// Counts one request of `method` to `route` answered with `status`,
/// which took `seconds`.
pub fn record(method: &'static str, route: &str, status: u16, seconds: f64) {
    {
        // The handles hold no invariant a panic could break halfway.
        let kept = KEPT.read().unwrap_or_else(PoisonError::into_inner);
        let found = kept
            .get(route)
            .and_then(|of_route| of_route.iter().find(|h| h.of(method, status)));
        if let Some(handles) = found {
            handles.record(seconds);
            return;
        }
    }
    keep(method, route, status).record(seconds);
}

/// Registers the handles of a set of labels, and keeps them unless
/// [`MAX_KEPT`] are kept already.
fn keep(method: &'static str, route: &str, status: u16) -> Handles {
    let labels = [
        Label::from_static_parts("method", method),
        Label::new("route", route.to_owned()),
        Label::new("status", status.to_string()),
    ];
    let handles = Handles {
        method,
        status,
        count: metrics::counter!("http_requests_total", labels.iter()),
        duration: metrics::histogram!("http_request_duration_seconds", labels.iter()),
    };
    let mut kept = KEPT.write().unwrap_or_else(PoisonError::into_inner);
    // Counted only here, when a set of labels is first seen.
    if kept.values().map(Vec::len).sum::<usize>() < MAX_KEPT {
        let of_route = kept.entry(route.into()).or_default();
        // Another request may have kept the same labels meanwhile.
        if !of_route.iter().any(|h| h.of(method, status)) {
            of_route.push(handles.clone());
        }
    }
    handles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_of_labels_is_kept_once() {
        record("GET", "/test/kept-once", 200, 0.001);
        record("GET", "/test/kept-once", 200, 0.002);
        record("GET", "/test/kept-once", 404, 0.001);
        record("POST", "/test/kept-once", 200, 0.001);
        let kept = KEPT.read().unwrap();
        let of_route = &kept["/test/kept-once"];
        assert_eq!(of_route.len(), 3);
    }
}
