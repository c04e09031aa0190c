//! CAR's event as `car-eventlog` 0.58.0 reads and hashes it (identical in 0.60.0).
//!
//! `parse` reads one journal line exactly as `EventLog::load_from_journal` does, with
//! `serde_json::from_slice::<Event>`: the same serde_json, the same field list and order (a JSON
//! array is read as the fields in declaration order, as serde's derived `visit_seq` does), the
//! same `Option<String>` ids (`null` is absent), `data: HashMap<String, Value>` defaulting to
//! empty (duplicate keys: the last wins), and the timestamp parsed by chrono's `DateTime<Utc>`
//! deserializer (its relaxed RFC 3339). Members CAR does not know are skipped by serde_json's
//! `ignore_value`, which checks syntax only (no number range, no recursion limit, no UTF-8 or
//! surrogate check inside strings).
//!
//! `digest` is CAR's private `event_digest` (car-eventlog `src/lib.rs`), byte for byte: the
//! `Display` of each `data` member is serde_json's compact form with every object's keys in
//! byte order, as CAR's build writes them (serde_json without `preserve_order`; this crate
//! enables it, so the keys are sorted here), numbers as serde_json writes them (ryu), and the
//! timestamp as chrono's `to_rfc3339()`. docs/digests.md states the rule.

use std::collections::HashMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The name of the chain rule, after the CAR release whose code defines it.
pub const CHAIN_RULE: &str = "car-eventlog-0.58.0.event_digest";

/// One event as CAR holds it after parsing its line.
#[derive(Debug, Deserialize)]
pub struct CarEvent {
    pub kind: Kind,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub policy_session_id: Option<String>,
    #[serde(default)]
    pub action_id: Option<String>,
    #[serde(default)]
    pub proposal_id: Option<String>,
    /// Hashed with ahash (random state, so still HashDoS-resistant): the order is irrelevant, the
    /// digest sorts the members, and SipHash was a visible share of a check's time.
    #[serde(default)]
    pub data: HashMap<String, Value, ahash::RandomState>,
    /// `None` when the line has no `timestamp`: CAR then takes `Utc::now()` at load time.
    #[serde(default)]
    pub timestamp: Stamp,
    #[serde(default)]
    pub prev_hash: Option<String>,
    #[serde(default)]
    pub hash: Option<String>,
}

/// An `EventKind` name, read through serde's enum protocol as CAR's derived enum is: a string,
/// or the externally tagged form `{"name": null}`.
#[derive(Debug)]
pub struct Kind(pub String);

/// CAR's `#[serde(default = "Utc::now")] timestamp: DateTime<Utc>`: absent gives the default,
/// `null` or a string chrono does not parse is an error.
#[derive(Debug, Default)]
pub struct Stamp(pub Option<DateTime<Utc>>);

impl<'de> Deserialize<'de> for Stamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        DateTime::<Utc>::deserialize(deserializer).map(|time| Stamp(Some(time)))
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = Kind;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("enum EventKind")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Kind, A::Error> {
                let (name, variant): (String, _) = data.variant()?;
                // The wire schema's kind enum is CAR 0.58.0's `EventKind` (the interop tests
                // compare the two lists).
                if !super::is_event_kind(&name) {
                    return Err(de::Error::custom(format_args!(
                        "unknown variant `{name}` of enum EventKind"
                    )));
                }
                variant.unit_variant()?;
                Ok(Kind(name))
            }
        }
        deserializer.deserialize_enum("EventKind", &[], KindVisitor)
    }
}

/// Reads one line (with or without its newline) as CAR does; the error is serde_json's message.
pub fn parse(line: &[u8]) -> Result<CarEvent, String> {
    serde_json::from_slice::<CarEvent>(line).map_err(|error| error.to_string())
}

/// Appends serde_json's compact text of `value` with every object's members in byte order of
/// their keys, as serde_json's default `BTreeMap` keeps them in CAR's build. Written straight into
/// `out`: no sorted copy of the value, no string per member.
fn write_sorted(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(members) => {
            let mut entries: Vec<(&String, &Value)> = members.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (index, (key, member)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_leaf(key, out);
                out.push(b':');
                write_sorted(member, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_sorted(item, out);
            }
            out.push(b']');
        }
        leaf => write_leaf(leaf, out),
    }
}

/// A string, number, boolean or null exactly as serde_json's compact serializer writes it.
fn write_leaf<T: serde::Serialize + ?Sized>(leaf: &T, out: &mut Vec<u8>) {
    serde_json::to_writer(out, leaf).expect("serde_json writes a JSON leaf into a Vec");
}

/// `format!("{}", value)` in CAR's build: serde_json's compact text with sorted object keys.
pub fn display(value: &Value) -> String {
    let mut out = Vec::new();
    write_sorted(value, &mut out);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The timestamp as CAR hashes it: chrono's `to_rfc3339()` of the `DateTime<Utc>`.
pub fn timestamp_text(time: &DateTime<Utc>) -> String {
    time.to_rfc3339()
}

/// CAR's `event_digest` of an event, with its recorded `prev_hash` (absent counts as empty, as in
/// `verify_chain`). `None` when the event has no timestamp: CAR hashes the time of loading then,
/// so no stored hash can match.
pub fn digest(event: &CarEvent) -> Option<String> {
    let timestamp = event.timestamp.0.as_ref()?;
    // The whole preimage in one buffer, hashed once.
    let mut input = Vec::with_capacity(256);
    fn text(member: &Option<String>) -> &[u8] {
        member.as_deref().unwrap_or("").as_bytes()
    }
    input.extend_from_slice(text(&event.prev_hash));
    input.push(0x1e);
    // `serde_json::to_string(kind)`: the variant name as a JSON string.
    write_leaf(event.kind.0.as_str(), &mut input);
    if event.run_id.is_some() || event.client_id.is_some() || event.policy_session_id.is_some() {
        input.push(0x1d);
        input.extend_from_slice(text(&event.run_id));
        input.push(0x1f);
        input.extend_from_slice(text(&event.client_id));
        input.push(0x1f);
        input.extend_from_slice(text(&event.policy_session_id));
    }
    input.push(0x1e);
    input.extend_from_slice(text(&event.action_id));
    input.push(0x1e);
    input.extend_from_slice(text(&event.proposal_id));
    input.push(0x1e);
    // `key=Display(value)` for each member in key order, joined by U+001F.
    let mut members: Vec<(&String, &Value)> = event.data.iter().collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (index, (key, value)) in members.into_iter().enumerate() {
        if index > 0 {
            input.push(0x1f);
        }
        input.extend_from_slice(key.as_bytes());
        input.push(b'=');
        write_sorted(value, &mut input);
    }
    input.push(0x1e);
    input.extend_from_slice(timestamp_text(timestamp).as_bytes());
    Some(crate::canonical::lower_hex(&Sha256::digest(&input)))
}

/// CAR's digest of one journal line (the `hash` a writer sets, with the line's `prev_hash`).
pub fn line_digest(line: &[u8]) -> Result<String, String> {
    let event = parse(line)?;
    digest(&event)
        .ok_or_else(|| "no \"timestamp\": CAR would hash the time it loads the journal".to_string())
}

/// One journal line linked to its predecessor as CAR's `EventLog` writes it: `object`, the text
/// of a non-empty JSON object without `prev_hash` and `hash`, gains `"prev_hash"` (the previous
/// event's hash, `""` at a chain's start) and then `"hash"`, the `event_digest` of the line so
/// far. Returns the line (no newline) and its hash. The Rust side's one place that sets a link
/// (for the unit tests' and the benchmark's chained journals); links are verified by the
/// journal check's ordered stage.
pub fn chain_line(object: &str, previous: &str) -> Result<(String, String), String> {
    let body = object
        .trim_end()
        .strip_suffix('}')
        .ok_or_else(|| "not the text of a JSON object".to_string())?;
    let previous = serde_json::to_string(previous).map_err(|error| error.to_string())?;
    let linked = format!("{body},\"prev_hash\":{previous}");
    let hash = line_digest(format!("{linked}}}").as_bytes())?;
    Ok((format!("{linked},\"hash\":\"{hash}\"}}"), hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_as_car_does() {
        let event = parse(br#"{"kind":{"run_started":null},"action_id":null,"x":1e400}"#).unwrap();
        assert_eq!(event.kind.0, "run_started");
        assert!(event.action_id.is_none() && event.timestamp.0.is_none());
        let array = parse(br#"["state_changed",null,null,null,"a0"]"#).unwrap();
        assert_eq!(array.action_id.as_deref(), Some("a0"));
        assert!(parse(br#"{"kind":"nope"}"#).is_err());
        assert!(parse(br#"{"kind":"run_started","kind":"run_started"}"#).is_err());
        assert!(parse(br#"{"kind":"run_started","data":{"a":1e400}}"#).is_err());
        assert!(parse(br#"{"kind":"run_started","timestamp":null}"#).is_err());
        let dup = parse(br#"{"kind":"run_started","data":{"a":1,"a":2}}"#).unwrap();
        assert_eq!(dup.data["a"], 2);
    }

    #[test]
    fn renders_values_as_car_build_does() {
        let value: Value =
            serde_json::from_str(r#"{"b":[1e20,-0.0,1.0,18446744073709551616],"a":"\u001f/é"}"#)
                .unwrap();
        assert_eq!(
            display(&value),
            r#"{"a":"\u001f/é","b":[1e+20,-0.0,1.0,1.8446744073709552e+19]}"#
        );
        let time: DateTime<Utc> = "2026-01-01 12:30:60.5+0530".parse().unwrap();
        assert_eq!(timestamp_text(&time), "2026-01-01T07:00:60.500+00:00");
    }
}
