//! Per-token rate limits in fixed windows (a minute and a day by default).
//! Kept in memory; a shared backend (Redis) can replace [`MemoryLimiter`]
//! behind the same trait.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// One window: at most `limit` requests every `window_sec` seconds. A
/// limit of 0 turns the window off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub limit: u32,
    pub window_sec: u64,
}

/// What the headers report: the window closest to its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the reported window resets.
    pub reset: u64,
    /// When refused: seconds until every exhausted window has reset.
    pub retry_after: u64,
}

pub trait Limiter: Send + Sync {
    /// Counts one request of `key` against `windows` and decides.
    fn check(&self, key: &str, windows: &[Window]) -> Option<Decision>;
}

#[derive(Default)]
pub struct MemoryLimiter {
    // (key, window length) -> (window index, count in it)
    counters: Mutex<HashMap<(String, u64), (u64, u32)>>,
}

impl MemoryLimiter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The decision at `now` (seconds since the epoch); split out so tests
    /// can move time.
    pub fn check_at(&self, key: &str, windows: &[Window], now: u64) -> Option<Decision> {
        let active: Vec<Window> = windows
            .iter()
            .copied()
            .filter(|w| w.limit > 0 && w.window_sec > 0)
            .collect();
        if active.is_empty() {
            return None;
        }
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if counters.len() > 100_000 {
            counters.retain(|(_, len), (index, _)| *index == now / len);
        }
        let current: Vec<(Window, u32, u64)> = active
            .iter()
            .map(|w| {
                let index = now / w.window_sec;
                let count = match counters.get(&(key.to_owned(), w.window_sec)) {
                    Some((i, c)) if *i == index => *c,
                    _ => 0,
                };
                (*w, count, w.window_sec - now % w.window_sec)
            })
            .collect();
        let allowed = current.iter().all(|(w, count, _)| *count < w.limit);
        if allowed {
            for (w, count, _) in &current {
                counters.insert(
                    (key.to_owned(), w.window_sec),
                    (now / w.window_sec, count + 1),
                );
            }
        }
        let retry_after = current
            .iter()
            .filter(|(w, count, _)| *count >= w.limit)
            .map(|(_, _, reset)| *reset)
            .max()
            .unwrap_or(0);
        let (window, count, reset) = current
            .iter()
            .map(|(w, count, reset)| {
                let used = if allowed { count + 1 } else { *count };
                (*w, used, *reset)
            })
            .min_by_key(|(w, used, reset)| (w.limit.saturating_sub(*used), *reset))?;
        Some(Decision {
            allowed,
            limit: window.limit,
            remaining: window.limit.saturating_sub(count),
            reset,
            retry_after,
        })
    }
}

impl Limiter for MemoryLimiter {
    fn check(&self, key: &str, windows: &[Window]) -> Option<Decision> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.check_at(key, windows, now)
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
}
