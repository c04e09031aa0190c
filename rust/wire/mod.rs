//! CAR wire checks, one module a part: RPC results and params (`rpc`), streaming JSON-RPC 2.0
//! transcripts (`transcript`), and the wire-schema bundle's own integrity (`bundle`); `shared`
//! holds the value reading and message quoting all three use.
//!
//! `python/pairling_fast/_fallback/wire/` mirrors these modules file for file and rule for rule:
//! the same codes, pointers, lines, messages and stats. The rules are written down in
//! `docs/wire.md`.

pub mod bundle;
pub mod rpc;
mod shared;
pub mod transcript;
