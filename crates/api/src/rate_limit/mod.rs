//! Per-token rate limits in fixed windows (a minute and a day by default,
//! and an hour for bulk calls). Counted in memory by [`MemoryLimiter`], or
//! in Redis by [`RedisLimiter`] so that every server of a fleet shares one
//! budget per key. Both only count; [`decide`] alone turns the counts into
//! a [`Decision`], so headers and `Retry-After` are computed one way.

mod redis;

pub use self::redis::{DEFAULT_PREFIX, DEFAULT_TIMEOUT, RedisLimiter};

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// One window: at most `limit` requests every `window_sec` seconds. A
/// limit of 0 turns the window off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub limit: u32,
    pub window_sec: u64,
}

/// Where one window stands after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowState {
    pub window: Window,
    /// Requests left in the current window (this one counted when allowed).
    pub remaining: u32,
    /// Seconds until the current window resets.
    pub reset: u64,
}

/// What the headers report: the window closest to its limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the reported window resets.
    pub reset: u64,
    /// When refused: seconds until every exhausted window has reset.
    pub retry_after: u64,
    /// Every window that was on, in the order asked.
    pub windows: Vec<WindowState>,
}

impl Decision {
    /// The state of `window` in this check, if it was on.
    pub fn window(&self, window: Window) -> Option<&WindowState> {
        self.windows.iter().find(|s| s.window == window)
    }
}

#[async_trait]
pub trait Limiter: Send + Sync {
    /// Counts one request of `key` against `windows` and decides; `None`
    /// when every window is off.
    async fn check(&self, key: &str, windows: &[Window]) -> Option<Decision>;
}

/// The windows that are on (a limit and a length above 0).
pub fn active(windows: &[Window]) -> Vec<Window> {
    windows
        .iter()
        .copied()
        .filter(|w| w.limit > 0 && w.window_sec > 0)
        .collect()
}

/// The decision for a request given `counts[i]`, the requests already
/// counted in the current window of `windows[i]` (active windows only), at
/// `now` (seconds since the epoch). Allowed only when every window is
/// under its limit; the backend counts the request in all of them then,
/// and in none otherwise.
pub fn decide(windows: &[Window], counts: &[u32], now: u64) -> Option<Decision> {
    let current = || windows.iter().zip(counts);
    let reset = |w: &Window| w.window_sec - now % w.window_sec;
    let allowed = current().all(|(w, count)| *count < w.limit);
    let retry_after = current()
        .filter(|(w, count)| **count >= w.limit)
        .map(|(w, _)| reset(w))
        .max()
        .unwrap_or(0);
    let states: Vec<WindowState> = current()
        .map(|(w, count)| {
            let used = if allowed { count + 1 } else { *count };
            WindowState {
                window: *w,
                remaining: w.limit.saturating_sub(used),
                reset: reset(w),
            }
        })
        .collect();
    let reported = *states.iter().min_by_key(|s| (s.remaining, s.reset))?;
    Some(Decision {
        allowed,
        limit: reported.window.limit,
        remaining: reported.remaining,
        reset: reported.reset,
        retry_after,
        windows: states,
    })
}

/// The limiter `cofre serve` uses: in memory without a Redis URL, shared
/// through Redis with one. An unparseable URL is an error; a Redis that
/// does not answer at start is a warning, and the server starts counting
/// on its own until it does (see [`RedisLimiter`]).
pub async fn from_redis_url(url: Option<&str>) -> Result<Arc<dyn Limiter>, String> {
    let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
        return Ok(Arc::new(MemoryLimiter::new()));
    };
    let limiter = RedisLimiter::new(url)?;
    limiter.connect_at_start().await;
    Ok(Arc::new(limiter))
}

#[derive(Default)]
pub struct MemoryLimiter {
    /// Each key's count in the current index of every window length it
    /// was checked against (keyed by the key alone, so a check finds its
    /// counts without building a key of its own).
    counters: Mutex<HashMap<String, Vec<Count>>>,
}

/// A key's requests in one window: `count` of them in the `index`-th
/// window of `window_sec` seconds since the epoch.
#[derive(Clone, Copy, Debug)]
struct Count {
    window_sec: u64,
    index: u64,
    count: u32,
}

/// Keys kept before the ones with nothing in a current window are let go.
const MAX_KEYS: usize = 100_000;

impl MemoryLimiter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The decision at `now` (seconds since the epoch); split out so tests
    /// can move time.
    pub fn check_at(&self, key: &str, windows: &[Window], now: u64) -> Option<Decision> {
        let active = active(windows);
        if active.is_empty() {
            return None;
        }
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if counters.len() > MAX_KEYS {
            counters.retain(|_, counts| counts.iter().any(|c| c.index == now / c.window_sec));
        }
        // One lookup of the key: read here, counted in below.
        let kept = counters.get_mut(key);
        let counts: Vec<u32> = active
            .iter()
            .map(|w| {
                kept.as_deref()
                    .and_then(|counts| counts.iter().find(|c| c.window_sec == w.window_sec))
                    .filter(|c| c.index == now / w.window_sec)
                    .map_or(0, |c| c.count)
            })
            .collect();
        let decision = decide(&active, &counts, now)?;
        if decision.allowed {
            let kept = match kept {
                Some(kept) => kept,
                None => counters.entry(key.to_owned()).or_default(),
            };
            for (w, count) in active.iter().zip(&counts) {
                let counted = Count {
                    window_sec: w.window_sec,
                    index: now / w.window_sec,
                    count: count + 1,
                };
                match kept.iter_mut().find(|c| c.window_sec == w.window_sec) {
                    Some(c) => *c = counted,
                    None => kept.push(counted),
                }
            }
        }
        Some(decision)
    }
}

/// Seconds since the epoch by this machine's clock.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[async_trait]
impl Limiter for MemoryLimiter {
    async fn check(&self, key: &str, windows: &[Window]) -> Option<Decision> {
        self.check_at(key, windows, unix_now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Window = Window {
        limit: 3,
        window_sec: 60,
    };
    const DAY: Window = Window {
        limit: 5,
        window_sec: 86_400,
    };

    #[test]
    fn counts_down_and_refuses_at_the_limit() {
        let limiter = MemoryLimiter::new();
        let now = 86_400 * 100 + 10;
        let remaining: Vec<u32> = (0..3)
            .map(|_| limiter.check_at("k", &[MINUTE], now).unwrap().remaining)
            .collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refused = limiter.check_at("k", &[MINUTE], now).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, 50);
        assert_eq!(refused.reset, 50);
        // Another key has its own budget; the next window starts afresh.
        assert!(limiter.check_at("other", &[MINUTE], now).unwrap().allowed);
        assert!(limiter.check_at("k", &[MINUTE], now + 50).unwrap().allowed);
    }

    #[test]
    fn the_day_window_binds_across_minutes() {
        let limiter = MemoryLimiter::new();
        let start = 86_400 * 100;
        for i in 0..5 {
            assert!(
                limiter
                    .check_at("k", &[MINUTE, DAY], start + i * 60)
                    .unwrap()
                    .allowed
            );
        }
        let refused = limiter.check_at("k", &[MINUTE, DAY], start + 600).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.limit, 5);
        assert_eq!(refused.retry_after, 86_400 - 600);
    }

    #[test]
    fn zero_turns_a_window_off() {
        let limiter = MemoryLimiter::new();
        let off = Window {
            limit: 0,
            window_sec: 60,
        };
        assert_eq!(limiter.check_at("k", &[off], 0), None);
    }

    #[test]
    fn decides_from_counts_and_reports_every_window() {
        let now = 86_400 * 100 + 3_610;
        let d = decide(&[MINUTE, DAY], &[1, 4], now).unwrap();
        assert!(d.allowed);
        // This request takes the day's last one: the day is reported.
        assert_eq!((d.limit, d.remaining, d.reset), (5, 0, 86_400 - 3_610));
        assert_eq!(d.retry_after, 0);
        assert_eq!(
            d.window(MINUTE),
            Some(&WindowState {
                window: MINUTE,
                remaining: 1,
                reset: 50
            })
        );
        assert_eq!(d.window(DAY).map(|s| s.remaining), Some(0));
    }

    #[test]
    fn a_refusal_counts_nothing_and_waits_for_the_full_windows() {
        let now = 86_400 * 100 + 10;
        let d = decide(&[MINUTE, DAY], &[3, 2], now).unwrap();
        assert!(!d.allowed);
        assert_eq!((d.limit, d.remaining, d.reset), (3, 0, 50));
        assert_eq!(d.retry_after, 50);
        assert_eq!(d.window(DAY).map(|s| s.remaining), Some(3));
        let both = decide(&[MINUTE, DAY], &[3, 5], now).unwrap();
        assert_eq!(both.retry_after, 86_400 - 10);

        let limiter = MemoryLimiter::new();
        for _ in 0..3 {
            limiter.check_at("k", &[MINUTE, DAY], now);
        }
        for _ in 0..5 {
            assert!(!limiter.check_at("k", &[MINUTE, DAY], now).unwrap().allowed);
        }
        // The refusals did not use up the day.
        let next = limiter.check_at("k", &[MINUTE, DAY], now + 60).unwrap();
        assert!(next.allowed);
        assert_eq!(next.window(DAY).map(|s| s.remaining), Some(1));
    }

    #[test]
    fn keys_with_nothing_in_a_current_window_are_let_go_past_the_bound() {
        let limiter = MemoryLimiter::new();
        let now = 86_400 * 100 + 10;
        for i in 0..=MAX_KEYS {
            limiter.check_at(&format!("k{i}"), &[MINUTE, DAY], now);
        }
        let kept = || limiter.counters.lock().unwrap().len();
        assert_eq!(kept(), MAX_KEYS + 1);
        // A minute later every key still has its day: none is let go.
        limiter.check_at("late", &[MINUTE, DAY], now + 60);
        assert_eq!(kept(), MAX_KEYS + 2);
        // A day later nothing of theirs counts: only the new key is kept.
        let next_day = now + 86_400;
        limiter.check_at("next", &[MINUTE, DAY], next_day);
        assert_eq!(kept(), 1);
    }

    #[test]
    fn nothing_to_decide_without_windows() {
        assert_eq!(decide(&[], &[], 0), None);
        assert!(
            active(&[Window {
                limit: 3,
                window_sec: 0
            }])
            .is_empty()
        );
    }
}
