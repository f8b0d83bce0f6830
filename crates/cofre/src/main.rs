//! `cofre`: the server binary and its operator commands.

mod backup;
mod config;
mod demo;
mod export;
mod import;
mod log_fields;
mod refused_heads;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cofre_api::admin::{self, IssuedKey};
use cofre_api::{ApiConfig, AppState, Services};
use cofre_domain::auth::{format_scopes, parse_scopes};
use cofre_domain::time::format_timestamp;
use cofre_domain::{ApiKeyId, UserId};
use cofre_store::Store;

use config::{Common, ReceiptArgs, ServeArgs};

/// mimalloc instead of the C library's allocator: a request allocates and
/// frees many small values (a page's rows, their text, the response), and
/// glibc's malloc, merging its free lists, spent a visible share of a
/// page's CPU on them in a profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "cofre", version, about = "Self-hosted personal-finance API")]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API server (migrates the database; on an empty one, creates
    /// the first user and prints its API key once).
    Serve(ServeArgs),
    /// Manage users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Apply the database's pending migrations (under its migration lock)
    /// and print the schema version: for deploy pipelines that migrate
    /// once before starting servers with `--migrate check`.
    Migrate,
    /// Print the OpenAPI document.
    Openapi,
    /// Write a consistent copy of the SQLite database to a new file while
    /// the server keeps running (on PostgreSQL use pg_dump).
    Backup {
        /// The copy to write; it must not exist. Receipt files go to the
        /// folder beside it, named like it with `.receipts` added (with
        /// `--receipts-url` they stay in the bucket).
        #[arg(long)]
        out: PathBuf,
        /// Where receipt files live (as `cofre serve` has it).
        #[command(flatten)]
        receipts: ReceiptArgs,
    },
    /// Write everything of one user (profile, accounts, categories, tags,
    /// rules, installment purchases, every stored transaction with its tags
    /// and receipt URL) as JSON, or their transactions as CSV.
    Export {
        /// The user's id (UUID).
        #[arg(long)]
        user: String,
        /// `json` (every resource) or `csv` (transactions).
        #[arg(long, default_value = "json")]
        format: String,
        /// The file to write (it must not exist); default standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Base URL of receipt links (as `cofre serve` has it).
        #[arg(
            long,
            env = "COFRE_PUBLIC_URL",
            default_value = "http://127.0.0.1:8080"
        )]
        public_url: String,
    },
    /// Put a backup in place of the SQLite database. Stop the server first.
    Restore {
        /// A file written by `cofre backup`; its `.receipts` folder, when
        /// there, goes back into the receipts directory.
        #[arg(long)]
        from: PathBuf,
        /// Replace an existing database.
        #[arg(long)]
        force: bool,
        /// Where receipt files live (as `cofre serve` has it).
        #[command(flatten)]
        receipts: ReceiptArgs,
    },
    /// Fill an existing user with realistic demo data (accounts, credit
    /// cards, tags, years of transactions, recurrence rules, installment
    /// purchases, paid card bills).
    DemoData {
        /// The user's id (UUID).
        #[arg(long)]
        user: String,
        #[arg(long, value_enum, default_value = "small")]
        profile: demo::DemoProfile,
        /// Seed of the generator (same seed, same content; ids differ).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Import an OFX bank or credit-card statement into an account, as
    /// open-finance rows; transactions already imported are skipped.
    ImportOfx {
        /// The account's id (UUID); the rows belong to its owner.
        #[arg(long)]
        account: String,
        /// The statement file (OFX 1.x SGML or 2.x XML, at most 20 MB).
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum UsersCommand {
    /// Create a user and print its id.
    Create {
        #[arg(long)]
        name: String,
    },
    /// List every user (id, name, creation, unrevoked keys).
    List,
    /// Delete a user and everything of theirs, receipt files included.
    Delete {
        /// The user's id (UUID).
        user: String,
        /// Confirms: nothing of the user can be recovered afterwards.
        #[arg(long)]
        yes: bool,
        /// Where receipt files live (as `cofre serve` has it).
        #[command(flatten)]
        receipts: ReceiptArgs,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key for a user and print it (shown once).
    Create {
        #[arg(long)]
        user: String,
        /// `read`, `write` or `read,write`.
        #[arg(long, default_value = "read,write")]
        scopes: String,
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a key by its id (the part between `cofre_` and the next `_`).
    Revoke { key_id: String },
    /// Replace a key by a new one (same user, scopes and label), revoking
    /// the old one at once; prints the new key (shown once).
    Rotate { key_id: String },
    /// List a user's keys (never their secrets).
    List {
        #[arg(long)]
        user: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    config::init_tracing(&cli.common);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(workers) = cli.common.workers {
        runtime.worker_threads(workers.get());
    }
    let runtime = match runtime.build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cofre: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cofre: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn open_store(common: &Common) -> Result<Arc<dyn Store>, String> {
    Ok(open_store_with(
        common,
        cofre_store::DEFAULT_CACHE_BYTES,
        cofre_store::Migrations::Apply,
    )
    .await?
    .0)
}

async fn open_store_with(
    common: &Common,
    cache_bytes: u64,
    migrations: cofre_store::Migrations,
) -> Result<(Arc<dyn Store>, cofre_store::SchemaReport), String> {
    cofre_store::open(&common.database_url, cache_bytes, migrations)
        .await
        .map_err(|e| format!("cannot open database {}: {e}", common.database_url))
}

async fn run(cli: Cli) -> Result<(), String> {
    let clock = cli.common.clock()?;
    match cli.command {
        Command::Migrate => {
            let (_, report) = open_store_with(
                &cli.common,
                cofre_store::DEFAULT_CACHE_BYTES,
                cofre_store::Migrations::Apply,
            )
            .await?;
            println!(
                "schema at version {}; applied now: {}",
                report.version,
                if report.applied_now.is_empty() {
                    "none".to_owned()
                } else {
                    format!("{:?}", report.applied_now)
                }
            );
            Ok(())
        }
        Command::Openapi => {
            let doc = cofre_api::openapi()
                .to_pretty_json()
                .map_err(|e| e.to_string())?;
            println!("{doc}");
            Ok(())
        }
        Command::Backup { out, receipts } => {
            backup::check_target(&cli.common.database_url, &out)?;
            let store = open_store(&cli.common).await?;
            backup::backup(store.as_ref(), &cli.common.database_url, &out, &receipts).await
        }
        Command::Restore {
            from,
            force,
            receipts,
        } => backup::restore(&cli.common.database_url, &from, force, &receipts),
        Command::Export {
            user,
            format,
            out,
            public_url,
        } => {
            let store = open_store(&cli.common).await?;
            export::run(store, &clock, &user, &format, &public_url, out.as_deref()).await
        }
        Command::DemoData {
            user,
            profile,
            seed,
        } => {
            let store = open_store(&cli.common).await?;
            demo::run(store.as_ref(), &clock, &user, profile, seed).await
        }
        Command::ImportOfx { account, file } => {
            let (account, bytes) = import::prepare(&account, &file)?;
            let store = open_store(&cli.common).await?;
            import::run(store.as_ref(), &clock, account, &file, &bytes).await
        }
        Command::Serve(args) => {
            let limiter = cofre_api::rate_limit::from_redis_url(args.redis_url.as_deref()).await?;
            let cache_bytes = u64::from(args.store_cache_mb) << 20;
            let (store, schema) =
                open_store_with(&cli.common, cache_bytes, args.migrate.migrations()).await?;
            if !schema.applied_now.is_empty() {
                tracing::info!(version = schema.version, applied = ?schema.applied_now, "database migrated");
            }
            let listener = tokio::net::TcpListener::bind(&args.bind)
                .await
                .map_err(|e| format!("cannot listen on {}: {e}", args.bind))?;
            let public_url = match &args.public_url {
                Some(url) => url.clone(),
                None => listener
                    .local_addr()
                    .map(default_public_url)
                    .map_err(|e| format!("cannot read the bound address: {e}"))?,
            };
            if let Some((user, key)) = admin::bootstrap(store.as_ref(), clock.now())
                .await
                .map_err(|e| e.to_string())?
            {
                print_first_key(&public_url, user.id, &key);
            }
            let receipts = args.receipts.storage()?;
            receipts.prepare().await?;
            let state = AppState::new(Services {
                store,
                clock,
                limiter,
                config: Arc::new(ApiConfig {
                    public_url,
                    base_currency: args.base_currency()?,
                    budget_warning_percent: args.budget_warning_percent,
                    rate_limit_per_minute: args.rate_limit_per_minute,
                    rate_limit_per_day: args.rate_limit_per_day,
                    bulk_limit_per_hour: args.bulk_limit_per_hour,
                    receipts,
                    read_cache_bytes: usize::try_from(args.read_cache_mb)
                        .unwrap_or(usize::MAX)
                        .saturating_mul(1 << 20),
                    request_timeout: Duration::from_secs(args.request_timeout),
                    metrics_token: args.metrics_token()?,
                }),
            });
            serve(listener, state, Duration::from_secs(args.shutdown_grace)).await
        }
        Command::Users(UsersCommand::Create { name }) => {
            let store = open_store(&cli.common).await?;
            let name = cofre_domain::text::required_text("name", &name, 200)
                .map_err(|_| "--name must be 1 to 200 characters".to_owned())?;
            let user = store
                .create_user(Some(&name), clock.now())
                .await
                .map_err(|e| e.to_string())?;
            println!("{}", user.id);
            Ok(())
        }
        Command::Keys(KeysCommand::Create {
            user,
            scopes,
            label,
        }) => {
            let store = open_store(&cli.common).await?;
            let user = UserId::parse(&user).ok_or("--user must be a user id (UUID)")?;
            let scopes =
                parse_scopes(&scopes).map_err(|_| "--scopes must be read, write or read,write")?;
            let key = admin::issue_key(store.as_ref(), user, scopes, label, clock.now())
                .await
                .map_err(|e| e.to_string())?;
            println!("{}", key.token);
            Ok(())
        }
        Command::Users(UsersCommand::List) => {
            let store = open_store(&cli.common).await?;
            let users = store.list_users().await.map_err(|e| e.to_string())?;
            println!("USER_ID\tCREATED\tACTIVE_KEYS\tNAME");
            for user in users {
                println!(
                    "{}\t{}\t{}\t{}",
                    user.id,
                    format_timestamp(user.created_at),
                    user.active_keys,
                    user.name.unwrap_or_default()
                );
            }
            Ok(())
        }
        Command::Users(UsersCommand::Delete {
            user,
            yes,
            receipts: receipt_args,
        }) => {
            let id = UserId::parse(&user).ok_or("USER must be a user id (UUID)")?;
            if !yes {
                return Err(format!(
                    "this deletes every account, row, key and receipt of {user} for good: add --yes"
                ));
            }
            let storage = receipt_args.storage()?;
            let store = open_store(&cli.common).await?;
            let receipts = match store.delete_user(id).await {
                Err(cofre_store::StoreError::NotFound) => return Err(format!("no user {user}")),
                other => other.map_err(|e| e.to_string())?,
            };
            storage.remove(&receipts).await;
            println!("deleted user {user} and {} receipt files", receipts.len());
            Ok(())
        }
        Command::Keys(KeysCommand::Rotate { key_id }) => {
            let store = open_store(&cli.common).await?;
            let id = ApiKeyId::parse(&key_id).ok_or("KEY_ID must be a key id")?;
            let key = admin::rotate_key(store.as_ref(), id, clock.now())
                .await
                .map_err(|e| format!("cannot rotate {key_id}: {e}"))?;
            println!("{}", key.token);
            eprintln!("revoked {}", id.0.simple());
            Ok(())
        }
        Command::Keys(KeysCommand::Revoke { key_id }) => {
            let store = open_store(&cli.common).await?;
            let id = ApiKeyId::parse(&key_id).ok_or("KEY_ID must be a key id")?;
            if store
                .revoke_api_key(id, clock.now())
                .await
                .map_err(|e| e.to_string())?
            {
                println!("revoked {}", id.0.simple());
                Ok(())
            } else {
                Err(format!("no key with id {key_id}"))
            }
        }
        Command::Keys(KeysCommand::List { user }) => {
            let store = open_store(&cli.common).await?;
            let user = UserId::parse(&user).ok_or("--user must be a user id (UUID)")?;
            let keys = store.list_api_keys(user).await.map_err(|e| e.to_string())?;
            println!("KEY_ID\tSCOPES\tCREATED\tREVOKED\tLABEL");
            for key in keys {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    key.id.0.simple(),
                    format_scopes(&key.scopes),
                    format_timestamp(key.created_at),
                    key.revoked_at
                        .map(format_timestamp)
                        .unwrap_or_else(|| "-".into()),
                    key.label.unwrap_or_default()
                );
            }
            Ok(())
        }
    }
}

/// Copies a backup in place of the SQLite database `url` names (through a
/// temporary file and a rename, so a half-copied database never stands
/// there); the next start migrates it if it is older.
fn print_first_key(public_url: &str, user: UserId, key: &IssuedKey) {
    println!(
        "\n================================================================\n\
         cofre: first start. Created user {user} and an API key\n\
         with scopes read,write. It is shown ONCE; keep it now:\n\n    {token}\n\n\
         Try:  curl -H \"Authorization: Bearer {token}\" {url}/v1/me\n\
         ================================================================\n",
        token = key.token,
        url = public_url.trim_end_matches('/'),
    );
}

/// The URL of a server listening on `address`: an unspecified address
/// (all interfaces) is reached locally through loopback.
fn default_public_url(address: std::net::SocketAddr) -> String {
    let ip = match address.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}", std::net::SocketAddr::new(ip, address.port()))
}

async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    grace: Duration,
) -> Result<(), String> {
    let address = listener
        .local_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    tracing::info!(address = %address, "cofre listening");
    let (stopping, mut stop) = tokio::sync::watch::channel(false);
    let metrics_upkeep = tokio::spawn(cofre_api::keep_metrics());
    // Served as a made service: handed a `Router` itself, axum clones its
    // route table for every connection (`with_state(())` on a shared
    // router: more work than a whole point read), which a client that
    // does not keep its connection open paid on every request.
    // The router is whole already (its state given), so each connection
    // now shares it.
    let listener = refused_heads::Listener(listener);
    let server = axum::serve(listener, cofre_api::router(state).into_make_service())
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            let _ = stopping.send(true);
        })
        .into_future();
    // In-flight requests get `grace` to finish after the signal; past it
    // the process exits without them (what they had not committed is
    // rolled back by the database, as after a crash).
    let grace_over = async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        result = server => result.map_err(|e| e.to_string())?,
        () = grace_over => {
            tracing::warn!(grace_s = grace.as_secs(), "shutdown grace over; exiting with requests still in flight");
            // A request stuck in work that never yields would keep the
            // runtime from shutting down: leave without waiting for it.
            std::process::exit(0);
        }
    }
    metrics_upkeep.abort();
    tracing::info!("cofre stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM; in-flight requests then finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown signal received; finishing in-flight requests");
}

#[cfg(test)]
mod tests {
    use super::default_public_url;

    #[test]
    fn the_public_url_follows_the_bound_address() {
        let url = |a: &str| default_public_url(a.parse().unwrap());
        assert_eq!(url("127.0.0.1:18700"), "http://127.0.0.1:18700");
        assert_eq!(url("0.0.0.0:8080"), "http://127.0.0.1:8080");
        assert_eq!(url("[::]:8080"), "http://[::1]:8080");
        assert_eq!(url("192.168.0.10:80"), "http://192.168.0.10:80");
    }
}
