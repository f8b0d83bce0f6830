//! Settings: every flag also reads a `COFRE_*` environment variable.

use clap::{Args, ValueEnum};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use std::path::PathBuf;

use cofre_domain::time::Clock;

#[derive(Args)]
pub struct Common {
    /// `sqlite://PATH` (created if missing) or `postgres://USER@HOST/DB`.
    #[arg(
        long,
        global = true,
        env = "COFRE_DATABASE_URL",
        default_value = "sqlite://cofre.db"
    )]
    pub database_url: String,
    /// Pins the clock to an RFC 3339 instant (tests and demos).
    #[arg(long, global = true, env = "COFRE_NOW")]
    pub now: Option<String>,
    /// Time zone of "today" and "this month".
    #[arg(
        long,
        global = true,
        env = "COFRE_TIMEZONE",
        default_value = "America/Sao_Paulo"
    )]
    pub timezone: String,
    /// Threads that serve requests (default: one per core the process may
    /// run on). One is enough on a one-core host.
    #[arg(long, global = true, env = "COFRE_WORKERS",
        value_parser = clap::value_parser!(std::num::NonZeroUsize))]
    pub workers: Option<std::num::NonZeroUsize>,
    /// Log format on stderr.
    #[arg(long, global = true, env = "COFRE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum MigrateMode {
    Auto,
    Check,
}

impl MigrateMode {
    pub fn migrations(self) -> cofre_store::Migrations {
        match self {
            MigrateMode::Auto => cofre_store::Migrations::Apply,
            MigrateMode::Check => cofre_store::Migrations::Check,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Json,
    Text,
}

impl Common {
    pub fn clock(&self) -> Result<Clock, String> {
        let zone = TimeZone::get(&self.timezone).map_err(|e| {
            format!(
                "COFRE_TIMEZONE {:?} is not a known time zone: {e}",
                self.timezone
            )
        })?;
        let pinned = self
            .now
            .as_deref()
            .map(|text| {
                text.parse::<Timestamp>()
                    .map_err(|e| format!("COFRE_NOW {text:?} is not an RFC 3339 instant: {e}"))
            })
            .transpose()?;
        Ok(Clock::new(pinned, zone))
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "COFRE_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Base URL clients use to reach this server (receipt links, the
    /// first-start banner); by default the address it listens on.
    #[arg(long, env = "COFRE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Currency of new accounts and of totals.
    #[arg(long, env = "COFRE_BASE_CURRENCY", default_value = "BRL")]
    pub base_currency: String,
    /// Share of a budget's available money (percent, 1 to 100) from which
    /// its month is a `warning`.
    #[arg(long, env = "COFRE_BUDGET_WARNING_PERCENT", default_value_t = 80,
        value_parser = clap::value_parser!(u8).range(1..=100))]
    pub budget_warning_percent: u8,
    /// Requests per key per minute (0 turns the window off).
    #[arg(long, env = "COFRE_RATE_LIMIT_PER_MINUTE", default_value_t = 300)]
    pub rate_limit_per_minute: u32,
    /// Requests per key per day (0 turns the window off).
    #[arg(long, env = "COFRE_RATE_LIMIT_PER_DAY", default_value_t = 50_000)]
    pub rate_limit_per_day: u32,
    /// Bulk-edit calls per key per hour, on top of the other limits (0
    /// turns it off).
    #[arg(long, env = "COFRE_BULK_LIMIT_PER_HOUR", default_value_t = 10)]
    pub bulk_limit_per_hour: u32,
    #[command(flatten)]
    pub receipts: ReceiptArgs,
    /// Megabytes of memory for answers to repeated reads, kept until the
    /// user's data changes (0 turns the cache off).
    #[arg(long, env = "COFRE_READ_CACHE_MB", default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(0..=65_536))]
    pub read_cache_mb: u32,
    /// Megabytes of memory for the store's caches of projection sources,
    /// their summed entries, months of category sums, categories and card
    /// totals, shared by all users.
    #[arg(long, env = "COFRE_STORE_CACHE_MB", default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub store_cache_mb: u32,
    /// Seconds one request may run before it is cut off with a 503 problem.
    #[arg(long, env = "COFRE_REQUEST_TIMEOUT", default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..=600))]
    pub request_timeout: u64,
    /// Seconds in-flight requests get to finish after SIGTERM or Ctrl-C;
    /// past that the process exits anyway.
    #[arg(long, env = "COFRE_SHUTDOWN_GRACE", default_value_t = 15,
        value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub shutdown_grace: u64,
    /// `auto`: apply pending migrations at start, under the database's
    /// migration lock; `check`: apply none and refuse to start while any
    /// is pending (run `cofre migrate` first). Both refuse a schema newer
    /// than this build knows.
    #[arg(long, env = "COFRE_MIGRATE", value_enum, default_value_t = MigrateMode::Auto)]
    pub migrate: MigrateMode,
    /// When set, `/metrics` answers only `Authorization: Bearer <token>`
    /// (at least 16 characters).
    #[arg(long, env = "COFRE_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// `redis://[user:password@]host[:port][/db]`: count rate limits in
    /// this Redis, shared by every server using it. Unset: each server
    /// counts in its own memory.
    #[arg(long, env = "COFRE_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
}

/// Where receipt files live; `serve`, `backup`, `restore` and `users
/// delete` take the same settings.
#[derive(Args)]
pub struct ReceiptArgs {
    /// Directory of receipt files (created if missing), unless
    /// `--receipts-url` names a bucket.
    #[arg(long, env = "COFRE_RECEIPTS_DIR", default_value = "./receipts")]
    pub receipts_dir: PathBuf,
    /// `s3://BUCKET/optional/prefix`: receipt files in S3-compatible
    /// storage, shared by every server (configured by AWS_ENDPOINT_URL,
    /// AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP).
    #[arg(long, env = "COFRE_RECEIPTS_URL")]
    pub receipts_url: Option<String>,
}

impl ReceiptArgs {
    /// The bucket, when one is named.
    pub fn url(&self) -> Option<&str> {
        self.receipts_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }

    pub fn storage(&self) -> Result<cofre_api::receipts::ReceiptStorage, String> {
        cofre_api::receipts::ReceiptStorage::from_settings(&self.receipts_dir, self.url())
    }
}

impl ServeArgs {
    pub fn metrics_token(&self) -> Result<Option<String>, String> {
        match self.metrics_token.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(token) if token.chars().count() >= 16 => Ok(Some(token.to_owned())),
            Some(_) => Err("COFRE_METRICS_TOKEN must be at least 16 characters".into()),
        }
    }

    pub fn base_currency(&self) -> Result<String, String> {
        cofre_domain::text::currency("base_currency", &self.base_currency).map_err(|_| {
            format!(
                "COFRE_BASE_CURRENCY {:?} is not a 3-letter code",
                self.base_currency
            )
        })
    }
}

pub fn init_tracing(common: &Common) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("COFRE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match common.log_format {
        LogFormat::Json => builder
            .json()
            .fmt_fields(crate::log_fields::JsonSpanFields)
            .init(),
        LogFormat::Text => builder.init(),
    }
}
