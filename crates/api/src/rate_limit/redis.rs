//! Rate limits counted in Redis, so that every server sharing one Redis
//! shares each key's budget.
//!
//! One check is one round trip: a Lua script reads the counter of every
//! window, counts the request in all of them only when all are under
//! their limit, and answers the counts it read with Redis's own clock.
//! The clock is Redis's so that every server agrees on the window a
//! request falls in and on the seconds until it resets. The counts become
//! a [`Decision`] in [`decide`], the code the in-memory limiter uses.
//!
//! When Redis does not answer within [`DEFAULT_TIMEOUT`] the check fails
//! open to a per-process [`MemoryLimiter`]: each server still enforces
//! every limit on its own (so a fleet of N allows up to N times the limit
//! while Redis is away) and no request waits on Redis more than once per
//! [`PROBE_INTERVAL`]. The first answer from Redis after that makes the
//! counting shared again.

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use async_trait::async_trait;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Decision, Limiter, MemoryLimiter, Window, active, decide};

/// How Redis keys start: `cofre:rl:<key>:<window_sec>:<window_index>`.
pub const DEFAULT_PREFIX: &str = "cofre:rl:";

/// The longest a request waits on Redis before it is counted in memory.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

/// While falling back, Redis is asked again (by one request) this often.
const PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// While Redis stays away, one warning at most this often.
const WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// ARGV: the key's prefix (`cofre:rl:<key>:`), then `limit, window_sec`
/// for each window. Answers `{now, count_1, ..., count_n}`: the counts
/// before this request, which is counted in every window only when all
/// of them are under their limit. Each counter expires a second after its
/// window ends.
const SCRIPT: &str = r"
local time = redis.call('TIME')
local now = tonumber(time[1])
local n = (#ARGV - 1) / 2
local keys, counts, allowed = {}, {}, true
for i = 1, n do
  local limit = tonumber(ARGV[2 * i])
  local len = tonumber(ARGV[2 * i + 1])
  local index = math.floor(now / len)
  keys[i] = ARGV[1] .. ARGV[2 * i + 1] .. ':' .. string.format('%d', index)
  counts[i] = tonumber(redis.call('GET', keys[i]) or '0')
  if counts[i] >= limit then allowed = false end
end
if allowed then
  for i = 1, n do
    local len = tonumber(ARGV[2 * i + 1])
    local ttl = (math.floor(now / len) + 1) * len - now + 1
    redis.call('INCR', keys[i])
    redis.call('EXPIRE', keys[i], ttl)
  end
end
local reply = {now}
for i = 1, n do reply[i + 1] = counts[i] end
return reply
";

pub struct RedisLimiter {
    manager: ConnectionManager,
    script: ::redis::Script,
    prefix: String,
    timeout: Duration,
    fallback: MemoryLimiter,
    health: Health,
}

impl RedisLimiter {
    /// A limiter on the Redis at `url` (`redis://[user:password@]host[:port][/db]`)
    /// with the default key prefix and timeout. Only parses the URL; the
    /// connection is made on first use and remade whenever it drops.
    pub fn new(url: &str) -> Result<Self, String> {
        Self::with_options(url, DEFAULT_PREFIX, DEFAULT_TIMEOUT)
    }

    /// As [`RedisLimiter::new`], with the keys under `prefix` and each call
    /// to Redis cut off after `timeout`.
    pub fn with_options(url: &str, prefix: &str, timeout: Duration) -> Result<Self, String> {
        // The URL may hold a password: it is never repeated in messages.
        let client = ::redis::Client::open(url).map_err(|e| {
            format!("COFRE_REDIS_URL is not a usable Redis URL (redis://[user:password@]host[:port][/db]): {e}")
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(PROBE_INTERVAL);
        let manager = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| format!("cannot set up the Redis connection: {e}"))?;
        // The gauge must go to the recorder `/metrics` renders.
        crate::metrics_handle();
        metrics::gauge!("rate_limit_backend_fallback").increment(0.0);
        metrics::counter!("rate_limit_backend_errors_total").increment(0);
        Ok(Self {
            manager,
            script: ::redis::Script::new(SCRIPT),
            prefix: prefix.to_owned(),
            timeout,
            fallback: MemoryLimiter::new(),
            health: Health::new(),
        })
    }

    /// Connects (at start-up): logs whether limits are shared, and falls
    /// back to counting in this process when Redis does not answer.
    pub async fn connect_at_start(&self) {
        let mut conn = self.manager.clone();
        let ping = ::redis::cmd("PING");
        // The first connection may take a retry: give it a little longer.
        let answer =
            tokio::time::timeout(self.timeout * 4, ping.query_async::<String>(&mut conn)).await;
        match answer {
            Ok(Ok(_)) => tracing::info!(
                "rate limits are counted in Redis, shared by every server that uses it"
            ),
            Ok(Err(err)) => self.health.failed(&err.to_string()),
            Err(_) => self.health.failed("no answer at start-up"),
        }
    }

    /// Whether checks are being counted in this process only, Redis being
    /// unreachable.
    pub fn is_falling_back(&self) -> bool {
        self.health.falling_back.load(Ordering::Acquire)
    }

    /// The counts of `windows` (all on) before this request, and Redis's
    /// clock; the request is counted when all are under their limit.
    async fn count(&self, key: &str, windows: &[Window]) -> Result<(u64, Vec<u32>), String> {
        let mut invocation = self.script.prepare_invoke();
        invocation.arg(format!("{}{key}:", self.prefix));
        for w in windows {
            invocation.arg(w.limit).arg(w.window_sec);
        }
        let mut conn = self.manager.clone();
        let reply: Vec<i64> =
            tokio::time::timeout(self.timeout, invocation.invoke_async(&mut conn))
                .await
                .map_err(|_| format!("no answer within {} ms", self.timeout.as_millis()))?
                .map_err(|e| e.to_string())?;
        match reply.split_first() {
            Some((now, counts)) if counts.len() == windows.len() => Ok((
                u64::try_from(*now).unwrap_or(0),
                counts
                    .iter()
                    .map(|c| u32::try_from(*c).unwrap_or(u32::MAX))
                    .collect(),
            )),
            _ => Err(format!("unexpected script reply {reply:?}")),
        }
    }
}

#[async_trait]
impl Limiter for RedisLimiter {
    async fn check(&self, key: &str, windows: &[Window]) -> Option<Decision> {
        let active = active(windows);
        if active.is_empty() {
            return None;
        }
        if self.health.should_ask() {
            match self.count(key, &active).await {
                Ok((now, counts)) => {
                    self.health.answered();
                    return decide(&active, &counts, now);
                }
                Err(err) => self.health.failed(&err),
            }
        }
        self.fallback.check(key, windows).await
    }
}

impl Drop for RedisLimiter {
    fn drop(&mut self) {
        if self.is_falling_back() {
            metrics::gauge!("rate_limit_backend_fallback").decrement(1.0);
        }
    }
}

/// Whether Redis answers, and when to ask it again if not.
struct Health {
    falling_back: AtomicBool,
    started: Instant,
    /// While falling back: milliseconds after `started` before which
    /// Redis is not asked.
    probe_at_ms: AtomicU64,
    /// When the last warning was logged, and the failures since.
    warned: Mutex<(Option<Instant>, u64)>,
}

impl Health {
    fn new() -> Self {
        Self {
            falling_back: AtomicBool::new(false),
            started: Instant::now(),
            probe_at_ms: AtomicU64::new(0),
            warned: Mutex::new((None, 0)),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether this request asks Redis: always while it answers; while it
    /// does not, one request per [`PROBE_INTERVAL`] (the one that moves
    /// the next probe forward), so the others never wait on it.
    fn should_ask(&self) -> bool {
        if !self.falling_back.load(Ordering::Acquire) {
            return true;
        }
        let now = self.now_ms();
        let at = self.probe_at_ms.load(Ordering::Acquire);
        now >= at
            && self
                .probe_at_ms
                .compare_exchange(
                    at,
                    now + PROBE_INTERVAL.as_millis() as u64,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }

    fn answered(&self) {
        if self.falling_back.swap(false, Ordering::AcqRel) {
            metrics::gauge!("rate_limit_backend_fallback").decrement(1.0);
            let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
            tracing::info!(
                failures = warned.1,
                "Redis answers again: rate limits are shared across servers again"
            );
            *warned = (None, 0);
        }
    }

    fn failed(&self, error: &str) {
        metrics::counter!("rate_limit_backend_errors_total").increment(1);
        self.probe_at_ms.store(
            self.now_ms() + PROBE_INTERVAL.as_millis() as u64,
            Ordering::Release,
        );
        if !self.falling_back.swap(true, Ordering::AcqRel) {
            metrics::gauge!("rate_limit_backend_fallback").increment(1.0);
        }
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        warned.1 += 1;
        if warned.0.is_none_or(|at| at.elapsed() >= WARNING_INTERVAL) {
            tracing::warn!(
                %error,
                failures = warned.1,
                "Redis rate limiter unreachable: counting in this process only \
                 (each server enforces the limits on its own) until it answers"
            );
            *warned = (Some(Instant::now()), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Redis of the tests (`COFRE_TEST_REDIS_URL`); without it the
    /// test is skipped with a notice, except under `CI=true`.
    fn redis_url() -> Option<String> {
        match std::env::var("COFRE_TEST_REDIS_URL") {
            Ok(url) if !url.is_empty() => Some(url),
            _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true but COFRE_TEST_REDIS_URL is not set: the Redis tests must run")
            }
            _ => {
                eprintln!("SKIPPED (Redis): set COFRE_TEST_REDIS_URL to run this test");
                None
            }
        }
    }

    #[tokio::test]
    async fn limiters_on_one_redis_share_one_budget() {
        let Some(url) = redis_url() else { return };
        let prefix = format!("cofre:test:{}:", uuid::Uuid::new_v4().simple());
        let open = || RedisLimiter::with_options(&url, &prefix, Duration::from_secs(2)).unwrap();
        let (a, b) = (open(), open());
        // Windows far longer than the test, so that none ends during it.
        let long = Window {
            limit: 3,
            window_sec: 1_000_000,
        };
        let longer = Window {
            limit: 5,
            window_sec: 2_000_000,
        };
        let windows = [long, longer];
        let mut remaining = Vec::new();
        for limiter in [&a, &b, &a] {
            let d = limiter.check("k", &windows).await.unwrap();
            assert!(d.allowed);
            remaining.push(d.remaining);
        }
        assert_eq!(remaining, [2, 1, 0]);
        let refused = b.check("k", &windows).await.unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.limit, 3);
        assert_eq!(refused.retry_after, refused.reset);
        assert!((1..=1_000_000).contains(&refused.retry_after));
        // The refusal was counted in no window.
        assert_eq!(refused.window(longer).map(|s| s.remaining), Some(2));
        // Another key has its own budget.
        assert!(a.check("other", &windows).await.unwrap().allowed);
        assert!(!a.is_falling_back() && !b.is_falling_back());

        // The counters: one per key and window, named after the window,
        // gone a second after their window ends.
        let client = ::redis::Client::open(url.as_str()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let mut keys: Vec<String> = ::redis::cmd("KEYS")
            .arg(format!("{prefix}*"))
            .query_async(&mut conn)
            .await
            .unwrap();
        keys.sort();
        assert_eq!(keys.len(), 4, "{keys:?}");
        let counter = &keys[0];
        assert!(
            counter.starts_with(&format!("{prefix}k:1000000:")),
            "{counter}"
        );
        let value: u32 = ::redis::cmd("GET")
            .arg(counter)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(value, 3);
        let ttl: i64 = ::redis::cmd("TTL")
            .arg(counter)
            .query_async(&mut conn)
            .await
            .unwrap();
        let reset = i64::try_from(refused.window(long).unwrap().reset).unwrap();
        assert!(
            (reset - 1..=reset + 1).contains(&ttl),
            "ttl {ttl}, reset {reset}"
        );
        let _: () = ::redis::cmd("DEL")
            .arg(&keys)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}
