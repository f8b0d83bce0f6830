//! Rebuilds the store when a migration is added or changed: `sqlx::migrate!`
//! embeds the files at compile time, and cargo would otherwise not notice a
//! new one.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
