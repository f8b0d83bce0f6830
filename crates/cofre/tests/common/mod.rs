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
