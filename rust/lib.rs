//! pairling_fast core: strict JSON parsing, RFC 8785 digests, JSON Schema validation and the
//! document checks built on them. Every module is plain Rust (`cargo test` needs no Python); the
//! PyO3 glue lives in `python/` (with `python/pyvalue.rs`) and is compiled only with the `python`
//! feature.

mod best_match;
pub mod canonical;
pub mod codes;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod graph;
pub mod journal;
pub mod json_indent;
mod key_order;
pub mod parse;
pub mod progress;
pub mod report;
pub mod tape;
pub mod validate;
pub mod wire;

#[cfg(feature = "python")]
mod python;

/// mimalloc instead of the system allocator (the extension builds with it, pyproject.toml): a
/// journal check makes several small allocations per line on every thread, and glibc's malloc
/// spent 44 % of the CPU there and serialised the threads on its arena locks (issue #19). Only
/// Rust's allocations go through it; Python keeps its own.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
