//! Records the versions of the crates that decide behaviour (from Cargo.lock) so
//! `pairling_fast.__build__` can report them in bug reports.

use std::{env, fs, path::Path};

const REPORTED_CRATES: &[&str] = &[
    "jsonschema",
    "pyo3",
    "serde_json",
    "sha2",
    "ryu-js",
    "rayon",
];

fn main() {
    let lock = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).unwrap_or_default();
    let mut found = Vec::new();
    let mut name: Option<&str> = None;
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"'));
        } else if let (Some(current), Some(value)) = (name, line.strip_prefix("version = ")) {
            if REPORTED_CRATES.contains(&current) {
                found.push(format!("{}={}", current, value.trim_matches('"')));
            }
            name = None;
        }
    }
    println!(
        "cargo:rustc-env=PAIRLING_FAST_DEPENDENCIES={}",
        found.join(",")
    );
}
