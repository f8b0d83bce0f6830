//! `cofre import-ofx`: imports a bank statement file into an account (see
//! `cofre_api::import`).

use std::io::Read;
use std::path::Path;

use cofre_api::import::{self, ImportError, MAX_OFX_BYTES};
use cofre_domain::AccountId;
use cofre_domain::time::Clock;
use cofre_store::{Store, WriteContext};

/// Reads the file (refusing one over the limit before reading it all) and
/// checks the account id; both fail before the database is touched.
pub fn prepare(account: &str, file: &Path) -> Result<(AccountId, Vec<u8>), String> {
    let account = AccountId::parse(account.trim())
        .ok_or_else(|| format!("--account must be an account id (UUID), not {account:?}"))?;
    let shown = file.display();
    let handle = std::fs::File::open(file).map_err(|e| format!("cannot open {shown}: {e}"))?;
    let limit = u64::try_from(MAX_OFX_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    handle
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() > MAX_OFX_BYTES {
        return Err(format!(
            "{shown} is larger than {} MB: not a bank statement this command imports",
            MAX_OFX_BYTES / (1024 * 1024)
        ));
    }
    Ok((account, bytes))
}

pub async fn run(
    store: &dyn Store,
    clock: &Clock,
    account: AccountId,
    file: &Path,
    bytes: &[u8],
) -> Result<(), String> {
    let ctx = WriteContext {
        now: clock.now(),
        today: clock.today(),
    };
    let summary = import::import_ofx(store, account, bytes, ctx)
        .await
        .map_err(|e| match e {
            ImportError::Ofx(err) => format!(
                "{} is not a statement cofre can read: {err}",
                file.display()
            ),
            other => other.to_string(),
        })?;
    println!(
        "imported {} ({} already present) into account {account}",
        transactions(summary.added),
        summary.already_present
    );
    Ok(())
}

fn transactions(count: usize) -> String {
    match count {
        1 => "1 transaction".to_owned(),
        n => format!("{n} transactions"),
    }
}
