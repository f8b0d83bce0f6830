//! What a database error means for the caller: the database went away
//! (answer 503 and let the client retry), the transaction was rolled back
//! whole by a conflict (safe to run again), or anything else.

/// How a failed statement should be answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No connection, a dropped one, a server shutting down or refusing
    /// connections, or SQLite busy past its timeout.
    Unavailable,
    /// PostgreSQL rolled the transaction back on a serialization failure
    /// (40001) or a deadlock (40P01): nothing of it was kept.
    Conflict,
    Other,
}

pub(crate) fn classify(err: &sqlx::Error) -> Failure {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => Failure::Unavailable,
        sqlx::Error::Database(db) => db.code().map_or(Failure::Other, |code| by_code(&code)),
        _ => Failure::Other,
    }
}

/// [`classify`] for an error of SQLite's own readers ([`crate::sync_reads`]).
pub(crate) fn classify_sqlite(err: &rusqlite::Error) -> Failure {
    match err {
        rusqlite::Error::SqliteFailure(failure, _) => by_code(&failure.extended_code.to_string()),
        _ => Failure::Other,
    }
}

/// PostgreSQL SQLSTATEs, or SQLite's (extended) result codes as decimal
/// text.
fn by_code(code: &str) -> Failure {
    match code {
        "40001" | "40P01" => Failure::Conflict,
        // connection_exception (class 08), admin_shutdown, crash_shutdown,
        // cannot_connect_now, too_many_connections.
        "57P01" | "57P02" | "57P03" | "53300" => Failure::Unavailable,
        pg if pg.len() == 5 && pg.starts_with("08") => Failure::Unavailable,
        // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with their extended codes.
        sqlite => match sqlite.parse::<u32>() {
            Ok(n) if matches!(n & 0xff, 5 | 6) => Failure::Unavailable,
            _ => Failure::Other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_classified() {
        for code in ["40001", "40P01"] {
            assert_eq!(by_code(code), Failure::Conflict, "{code}");
        }
        for code in [
            "08006", "08003", "57P01", "57P03", "53300", "5", "261", "517", "6",
        ] {
            assert_eq!(by_code(code), Failure::Unavailable, "{code}");
        }
        for code in ["23505", "23514", "42P01", "19", "2067", "0800", "x"] {
            assert_eq!(by_code(code), Failure::Other, "{code}");
        }
    }

    #[test]
    fn lost_connections_are_unavailable() {
        assert_eq!(classify(&sqlx::Error::PoolTimedOut), Failure::Unavailable);
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(classify(&sqlx::Error::Io(io)), Failure::Unavailable);
        assert_eq!(classify(&sqlx::Error::RowNotFound), Failure::Other);
    }
}
