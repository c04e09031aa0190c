//! The properties the fuzz targets in `fuzz/` check, one function per target. They live here so
//! `cargo test` replays the committed crash inputs (`fuzz/regressions/<target>/*`) through exactly
//! the code the fuzzer ran. Compiled for tests and with the `fuzzing` feature only.

use crate::codes;
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{Map, Number, Value};

use crate::journal::{self, car_payloads, ChainMode, Options, Profile};
use crate::{canonical, parse, validate};

/// `parse_strict` on arbitrary bytes: never a panic, and whatever it accepts has a canonical form
/// that parses back to the same canonical bytes.
pub fn check_parse_strict(data: &[u8]) {
    if let Ok(value) = parse::parse_strict(data) {
        check_canonical_round_trip(&value);
    }
}

/// The canonicalizer on structured values, including what the parser never produces (any f64, a
/// nesting deeper than the limit): canonical bytes and digest agree, and round-trip.
pub fn check_canonicalize(data: &[u8]) {
    let Ok(value) = arbitrary_json(&mut Unstructured::new(data), 1) else {
        return;
    };
    let canonical = canonical::canonicalize(&value);
    let digest = canonical::digest_hex(&value);
    match (&canonical, &digest) {
        (Ok(_), Ok(hex)) => {
            assert!(nesting(&value) <= parse::MAX_DEPTH);
            assert_eq!(hex.len(), 64);
            check_canonical_round_trip(&value);
        }
        (Err(error), Err(same)) => {
            assert_eq!(error, same, "canonical bytes and digest fail alike");
            assert!(
                [codes::INTEGER_OUT_OF_RANGE, codes::TOO_DEEP].contains(&error.code),
                "{error}"
            );
            assert_eq!(
                error.code == codes::TOO_DEEP,
                nesting(&value) > parse::MAX_DEPTH
            );
        }
        _ => panic!("canonicalize gave {canonical:?} but digest_hex {digest:?}"),
    }
}

/// Parse, then validate against the bundled `car.journal.event`: never a panic, `is_valid` agrees
/// with the violations, and every violation is located.
pub fn check_validate_journal_event(data: &[u8]) {
    let Ok(event) = parse::parse_strict(data) else {
        return;
    };
    let validator = validate::bundled_validator("car.journal.event").expect("bundled schema");
    let violations = validator.violations(&event);
    assert_eq!(validator.is_valid(&event), violations.is_empty());
    for violation in violations {
        assert!(violation.pointer.is_empty() || violation.pointer.starts_with('/'));
        assert!(violation.schema_pointer.starts_with('/'));
    }
}

/// A whole journal checked with the per-line fast path on and off: the same report (every
/// finding, every stat). The first byte picks the options (profile, chain mode, CAR release,
/// payload contracts, lifecycle), the rest is the journal, so the fuzzer explores both.
pub fn check_journal_fast_and_full(data: &[u8]) {
    let Some((&switches, journal)) = data.split_first() else {
        return;
    };
    let bundles = validate::wire_bundles();
    let options = Options {
        profile: [Profile::Strict, Profile::CarCompatible][usize::from(switches & 1)],
        chain: [
            ChainMode::Auto,
            ChainMode::Require,
            ChainMode::Off,
            ChainMode::Auto,
        ][usize::from(switches >> 1 & 3)],
        car_version: bundles[usize::from(switches >> 3 & 3) % bundles.len()].version,
        payloads: [
            car_payloads::Mode::Warn,
            car_payloads::Mode::Error,
            car_payloads::Mode::Off,
        ][usize::from(switches >> 5 & 3) % 3],
        lifecycle: switches & 0x80 == 0,
        max_findings: None,
        fast_path: true,
        ..Options::default()
    };
    let check = |fast_path: bool| {
        let options = Options {
            fast_path,
            ..options.clone()
        };
        journal::check_journal(journal, &options, || false).expect("an in-memory read")
    };
    let (fast, full) = (check(true), check(false));
    assert_eq!(fast.findings, full.findings, "{options:?}");
    assert_eq!(fast.stats, full.stats, "{options:?}");
}

fn check_canonical_round_trip(value: &Value) {
    let Ok(canonical) = canonical::canonicalize(value) else {
        return;
    };
    // The documented exception (docs/limits.md): an integral float in (2^53, 1e21) is written as
    // integer digits, which parse back as an integer beyond the canonical range (PF005 when
    // canonicalizing it), or beyond 64 bits from 2^64 on (PF005 when parsing it).
    let reparsed = match parse::parse_strict(&canonical) {
        Ok(reparsed) => reparsed,
        Err(error) => return assert_eq!(error.code, codes::INTEGER_OUT_OF_RANGE, "{error}"),
    };
    match canonical::canonicalize(&reparsed) {
        Ok(again) => assert_eq!(again, canonical, "canonicalization is idempotent"),
        Err(error) => assert_eq!(error.code, codes::INTEGER_OUT_OF_RANGE, "{error}"),
    }
}

/// Deep enough to cross `MAX_DEPTH`, shallow enough for the fuzzer's stack.
const DEEPEST: usize = parse::MAX_DEPTH + 8;
/// Members per container, so one input cannot grow a value without bound.
const WIDEST: usize = 16;

fn arbitrary_json(input: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Value> {
    let kinds = if depth >= DEEPEST { 5 } else { 7 };
    Ok(match input.int_in_range(0..=kinds)? {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(input)?),
        2 => Value::Number(i64::arbitrary(input)?.into()),
        3 => Value::Number(u64::arbitrary(input)?.into()),
        4 => Number::from_f64(f64::arbitrary(input)?).map_or(Value::Null, Value::Number),
        5 => Value::String(String::arbitrary(input)?),
        6 => {
            let mut items = Vec::new();
            while items.len() < WIDEST && bool::arbitrary(input)? {
                items.push(arbitrary_json(input, depth + 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let mut members = Map::new();
            while members.len() < WIDEST && bool::arbitrary(input)? {
                let key = String::arbitrary(input)?;
                members.insert(key, arbitrary_json(input, depth + 1)?);
            }
            Value::Object(members)
        }
    })
}

fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every committed input of `fuzz/regressions/<target>/`, run through that target's check.
    fn replay(target: &str, check: fn(&[u8])) {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions")
            .join(target);
        let mut replayed = 0;
        for entry in std::fs::read_dir(&folder).expect("regression folder") {
            let path = entry.expect("regression input").path();
            check(&std::fs::read(&path).expect("readable input"));
            replayed += 1;
        }
        assert!(replayed > 0, "no inputs in {}", folder.display());
    }

    #[test]
    fn parse_strict_regressions() {
        replay("parse_strict", check_parse_strict);
    }

    #[test]
    fn canonicalize_regressions() {
        replay("canonicalize", check_canonicalize);
    }

    #[test]
    fn validate_journal_event_regressions() {
        replay("validate_journal_event", check_validate_journal_event);
    }

    #[test]
    fn journal_fast_and_full_regressions() {
        replay("journal_fast_and_full", check_journal_fast_and_full);
    }
}
