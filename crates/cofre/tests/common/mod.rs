//! Runs the real binary, for the tests of its commands. Each test binary
//! uses a part of this, so what one leaves unused is no warning.
#![allow(dead_code)]

pub mod database;
pub mod instances;
pub mod server;

use std::process::{Command, Output};

/// `cofre ARGS` on `database_url`, with `env` set and warnings-only logs.
pub fn cofre(database_url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args(args)
        .env("COFRE_DATABASE_URL", database_url)
        .env("COFRE_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run cofre")
}

/// The URL of a server the tests need, from the variable `var` (the repo's
/// scripts set it); without it the test is skipped with a notice, except
/// under `CI=true`, where skipping is a failure.
pub fn server_url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but {var} is not set: the {what} tests must run")
        }
        _ => {
            eprintln!("SKIPPED ({what}): set {var} (scripts/test sets it) to run this test");
            None
        }
    }
}
