//! pairling_fast core: strict JSON parsing, RFC 8785 digests, JSON Schema validation and the
//! document checks built on them. Every module is plain Rust (`cargo test` needs no Python); the
//! PyO3 glue lives in `python/` (with `python/pyvalue.rs`) and is compiled only with the `python`
//! feature.

pub mod canonical;
pub mod car_event;
pub mod codes;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod graph;
pub mod journal;
pub mod parse;
pub mod progress;
pub mod report;
pub mod validate;
pub mod wire;

#[cfg(feature = "python")]
mod python;
