//! The straightforward design of a journal check, as a user would write it with a SIMD JSON
//! parser: each line parsed with simd-json into a value, its members checked (an object; `kind`
//! a string; the ids strings or null; `data` an object; `timestamp` a date-time chrono reads; no
//! other member), CAR's digest input rendered from the parsed value (car-eventlog's
//! `event_digest`: docs/digests.md), SHA-256, and each `prev_hash` compared with the `hash`
//! before it. Counts a line verified when its digest is its `hash` and its link holds, so
//! benches/compare.py can check that it computed what the journal check computes.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use simd_json::prelude::*;
use simd_json::BorrowedValue as Value;

const IDS: [&str; 6] = [
    "run_id",
    "client_id",
    "policy_session_id",
    "action_id",
    "proposal_id",
    "prev_hash",
];
const MEMBERS: [&str; 9] = [
    "kind",
    "run_id",
    "client_id",
    "policy_session_id",
    "action_id",
    "proposal_id",
    "data",
    "timestamp",
    "prev_hash",
];

/// One checked line: its `hash` and `prev_hash` and whether its digest is its `hash`.
struct Event {
    hash: Option<String>,
    previous: Option<String>,
    digest_matches: bool,
}

fn main() -> Result<(), String> {
    journal_baselines::run(
        |text| {
            let mut scratch = Vec::new();
            let mut input = Vec::with_capacity(1024);
            let mut piece = journal_baselines::Piece::default();
            let mut last: Option<String> = None;
            for line in journal_baselines::lines(text) {
                piece.events += 1;
                let Some(event) = check_line(line, &mut scratch, &mut input) else {
                    last = None;
                    continue;
                };
                if piece.events == 1 {
                    let named = event.previous.clone().unwrap_or_default();
                    piece.first = Some((named, event.digest_matches));
                } else {
                    let link = last.as_deref() == Some(event.previous.as_deref().unwrap_or(""));
                    piece.verified += u64::from(event.digest_matches && link);
                }
                last = event.hash;
            }
            piece.last_hash = last;
            piece
        },
        |before: &String, named: &String| before == named,
    )
}

fn check_line(line: &[u8], scratch: &mut Vec<u8>, input: &mut Vec<u8>) -> Option<Event> {
    scratch.clear();
    scratch.extend_from_slice(line);
    let value = simd_json::to_borrowed_value(scratch).ok()?;
    let object = value.as_object()?;
    let known = |name: &str| MEMBERS.contains(&name) || name == "hash";
    if !object.keys().all(|name| known(name)) {
        return None;
    }
    let kind = object.get("kind")?.as_str()?;
    for id in IDS {
        match object.get(id) {
            None => {}
            Some(member) if member.is_null() || member.is_str() => {}
            Some(_) => return None,
        }
    }
    let data = match object.get("data") {
        None => None,
        Some(member) => Some(member.as_object()?),
    };
    let timestamp: DateTime<Utc> = object.get("timestamp")?.as_str()?.parse().ok()?;
    let text = |name: &str| object.get(name).and_then(|v| v.as_str()).unwrap_or("");
    let present = |name: &str| object.get(name).and_then(|v| v.as_str()).is_some();

    input.clear();
    input.extend_from_slice(text("prev_hash").as_bytes());
    input.push(0x1e);
    write_string(kind, input);
    if present("run_id") || present("client_id") || present("policy_session_id") {
        input.push(0x1d);
        input.extend_from_slice(text("run_id").as_bytes());
        input.push(0x1f);
        input.extend_from_slice(text("client_id").as_bytes());
        input.push(0x1f);
        input.extend_from_slice(text("policy_session_id").as_bytes());
    }
    input.push(0x1e);
    input.extend_from_slice(text("action_id").as_bytes());
    input.push(0x1e);
    input.extend_from_slice(text("proposal_id").as_bytes());
    input.push(0x1e);
    if let Some(data) = data {
        let mut members: Vec<_> = data.iter().collect();
        members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (index, (key, member)) in members.into_iter().enumerate() {
            if index > 0 {
                input.push(0x1f);
            }
            input.extend_from_slice(key.as_bytes());
            input.push(b'=');
            write_sorted(member, input);
        }
    }
    input.push(0x1e);
    input.extend_from_slice(timestamp.to_rfc3339().as_bytes());
    let digest = lower_hex(&Sha256::digest(&input[..]));
    let hash = object.get("hash").and_then(|v| v.as_str());
    Some(Event {
        digest_matches: hash == Some(digest.as_str()),
        hash: hash.map(str::to_string),
        previous: object
            .get("prev_hash")
            .and_then(|v| v.as_str())
            .map(str::to_string),
    })
}

/// serde_json's compact text of `value` with every object's keys in byte order (CAR's `Display`).
fn write_sorted(value: &Value, out: &mut Vec<u8>) {
    if let Some(object) = value.as_object() {
        let mut members: Vec<_> = object.iter().collect();
        members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        out.push(b'{');
        for (index, (key, member)) in members.into_iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_string(key, out);
            out.push(b':');
            write_sorted(member, out);
        }
        out.push(b'}');
    } else if let Some(items) = value.as_array() {
        out.push(b'[');
        for (index, item) in items.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_sorted(item, out);
        }
        out.push(b']');
    } else if let Some(text) = value.as_str() {
        write_string(text, out);
    } else if let Some(number) = value.as_i64() {
        out.extend_from_slice(number.to_string().as_bytes());
    } else if let Some(number) = value.as_u64() {
        out.extend_from_slice(number.to_string().as_bytes());
    } else if let Some(number) = value.as_f64() {
        if number.is_finite() {
            out.extend_from_slice(ryu::Buffer::new().format_finite(number).as_bytes());
        } else {
            out.extend_from_slice(b"null");
        }
    } else if let Some(flag) = value.as_bool() {
        out.extend_from_slice(if flag { b"true" } else { b"false" });
    } else {
        out.extend_from_slice(b"null");
    }
}

/// A JSON string as serde_json writes it.
fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for &byte in text.as_bytes() {
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => {
                out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
            }
            _ => out.push(byte),
        }
    }
    out.push(b'"');
}

fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 15)] as char);
    }
    text
}
