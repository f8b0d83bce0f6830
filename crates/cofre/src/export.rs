//! `cofre export`: one user's data, as `GET /v1/export` gives it, written
//! to a file or to standard output as it is read.

use std::path::Path;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

use cofre_api::{ExportFormat, start_export};
use cofre_domain::UserId;
use cofre_domain::time::Clock;
use cofre_store::Store;

pub async fn run(
    store: Arc<dyn Store>,
    clock: &Clock,
    user: &str,
    format: &str,
    public_url: &str,
    out: Option<&Path>,
) -> Result<(), String> {
    let user = UserId::parse(user).ok_or("--user must be a user id (UUID)")?;
    let format = ExportFormat::parse(format).ok_or("--format must be json or csv")?;
    if let Some(path) = out
        && path.exists()
    {
        return Err(format!("{} exists: name a new file", path.display()));
    }
    let mut chunks = start_export(store, user, format, public_url.to_owned(), clock.now())
        .await
        .map_err(|e| format!("cannot export user {user}: {e}"))?;
    let mut sink: Box<dyn tokio::io::AsyncWrite + Unpin + Send> = match out {
        Some(path) => Box::new(
            tokio::fs::File::create_new(path)
                .await
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?,
        ),
        None => Box::new(tokio::io::stdout()),
    };
    while let Some(chunk) = chunks.recv().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        sink.write_all(&chunk)
            .await
            .map_err(|e| format!("cannot write the export: {e}"))?;
    }
    sink.flush()
        .await
        .map_err(|e| format!("cannot write the export: {e}"))?;
    if let Some(path) = out {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())?;
        eprintln!("exported user {user} to {}", path.display());
    }
    Ok(())
}
