//! The fast path for the common journal line: a survey of the raw bytes (`fast/survey.rs`: its
//! quotes and backslashes, its byte range), then one scan of them that decides whether the
//! full path (strict parse into a `serde_json::Value`, schema validation, CAR's serde reading,
//! `car_event::digest`) would report nothing for the line, and if so yields the same `EventFacts`
//! — ids, CAR's chain digest, the timestamp — straight from the line's spans.
//!
//! It claims a line only when it is sure: an object of distinct, known `journal.event` members
//! (the bundle's shape is checked once, `Shape::of`), every id a plain string, `kind` one CAR's
//! parser and the bundle both know, `data` an object, `timestamp` a `date-time` chrono reads, no
//! escape except in string values inside `data`, and there only the escapes serde_json writes
//! back unchanged (`Scanner::escaped_string`), integers within
//! 64 bits and finite floats (re-rendered by serde_json itself for the digest, as CAR's reading
//! does), distinct keys at every level, nesting within `MAX_DEPTH`, a terminated line. Anything else returns `None` and the
//! line takes the full path, which owns every finding. The Python fallback has no fast path: this
//! is an optimisation of the Rust core, and the differential tests (below, and
//! tests/test_journal_fast.py) hold it to the full path's answers.

use std::cell::RefCell;
use std::ops::Range;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::car_payloads::Mode;
use super::{
    instant, ChainHash, ChainMode, EventFacts, EventSchema, Instant, Options, Text, Uncomputable,
};
use crate::key_order::{self, Key};
use crate::validate;
use std::cmp::Ordering;
use survey::Survey;

/// The first pass over a line: its quotes and backslashes, its byte range.
mod survey;

/// Nesting the fast path follows; deeper lines take the full path, which enforces the strict
/// parser's limit (512) and CAR's (serde_json's recursion limit, 128). Far above what journals hold.
const MAX_DEPTH: usize = 64;

/// The top-level members of `journal.event`, in the order of CAR's `Event` fields.
const MEMBERS: [&str; 10] = [
    "kind",
    "run_id",
    "client_id",
    "policy_session_id",
    "action_id",
    "proposal_id",
    "data",
    "timestamp",
    "prev_hash",
    "hash",
];
const KIND: usize = 0;
const RUN_ID: usize = 1;
const CLIENT_ID: usize = 2;
const POLICY_SESSION_ID: usize = 3;
const ACTION_ID: usize = 4;
const PROPOSAL_ID: usize = 5;
const DATA: usize = 6;
const TIMESTAMP: usize = 7;
const PREV_HASH: usize = 8;
const HASH: usize = 9;

/// Which of `MEMBERS` `key` is. A match on the names, not a search of `MEMBERS`: each arm
/// compares against a constant length, which the compiler does inline (a search called
/// `memcmp` for every name it passed).
fn slot_of(key: &[u8]) -> Option<usize> {
    Some(match key {
        b"kind" => KIND,
        b"run_id" => RUN_ID,
        b"client_id" => CLIENT_ID,
        b"policy_session_id" => POLICY_SESSION_ID,
        b"action_id" => ACTION_ID,
        b"proposal_id" => PROPOSAL_ID,
        b"data" => DATA,
        b"timestamp" => TIMESTAMP,
        b"prev_hash" => PREV_HASH,
        b"hash" => HASH,
        _ => return None,
    })
}

/// Whether a bundle's `journal.event` is the shape this module checks by hand. A bundle whose
/// event schema says anything else (another member, another type, a new constraint) never takes
/// the fast path.
pub(super) fn shape_is_known(schema: &Value) -> bool {
    let id = json!({"type": ["string", "null"]});
    let mut expected = serde_json::Map::new();
    for name in MEMBERS {
        let member = match name {
            "kind" => json!({"$ref": "#/definitions/EventKind"}),
            "data" => json!({"additionalProperties": true, "type": "object"}),
            "timestamp" => json!({"format": "date-time", "type": "string"}),
            _ => id.clone(),
        };
        expected.insert(name.to_string(), member);
    }
    let Some(properties) = schema["properties"].as_object() else {
        return false;
    };
    // Descriptions do not constrain: compare the members without them.
    let same_members = properties.len() == expected.len()
        && properties.iter().all(|(name, member)| {
            let mut member = member.clone();
            if let Some(object) = member.as_object_mut() {
                object.remove("description");
            }
            expected.get(name) == Some(&member)
        });
    let kinds_are_string_enums = schema["definitions"]["EventKind"]["oneOf"]
        .as_array()
        .is_some_and(|branches| {
            branches.iter().all(|branch| {
                branch["type"] == "string"
                    && branch["enum"].is_array()
                    && branch.as_object().is_some_and(|b| {
                        b.keys()
                            .all(|key| matches!(key.as_str(), "type" | "enum" | "description"))
                    })
            })
        });
    let mut rest = schema.as_object().cloned().unwrap_or_default();
    for ignored in [
        "$schema",
        "definitions",
        "description",
        "properties",
        "title",
    ] {
        rest.remove(ignored);
    }
    same_members
        && kinds_are_string_enums
        && Value::Object(rest)
            == json!({
                "additionalProperties": false,
                "required": ["kind", "data", "timestamp"],
                "type": "object",
            })
}

/// A member of an object: where its key's text (inside the quotes) and its value lie.
#[derive(Clone)]
struct Member {
    key: Range<usize>,
    value: Range<usize>,
    /// The key's first eight bytes, big-endian and zero-padded: sorting by it first compares
    /// most pairs of keys without reading them again (`memcmp` was a tenth of the fast path).
    prefix: u64,
}

impl Member {
    fn key_in<'t>(&self, text: &'t [u8]) -> Key<'t> {
        Key {
            prefix: self.prefix,
            bytes: &text[self.key.clone()],
        }
    }
}

struct Scanner<'a> {
    text: &'a [u8],
    /// Where `text`'s quotes and backslashes are, and its byte range: a line whose smallest
    /// byte is a space or above holds no control character inside a string, so the common line
    /// is not checked string by string (one with a tab or `\r` as whitespace is).
    survey: &'a Survey,
    at: usize,
    /// The members of the objects being scanned, innermost last (one allocation per line).
    members: Vec<Member>,
}

impl<'a> Scanner<'a> {
    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn byte(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.byte()? == byte).then(|| self.at += 1)
    }

    /// A string with no escape and no control character: its content, which is also its
    /// decoded text. Keys and the top-level members are read so: their decoded bytes are then
    /// their raw bytes (ids, key order, duplicate keys).
    fn string(&mut self) -> Option<Range<usize>> {
        let (span, escaped) = self.quoted()?;
        (!escaped).then_some(span)
    }

    /// A string value inside `data`, whose escapes, if any, are among those serde_json writes
    /// back as they are (`\"`, `\\`, `\n`, `\t`, `\r`, `\b`, `\f`): its raw text is then
    /// serde_json's text of it. `\/` and `\u` escapes take the full path.
    fn escaped_string(&mut self) -> Option<Range<usize>> {
        self.quoted().map(|(span, _)| span)
    }

    /// The content of a string whose escapes are all among `escaped_string`'s, and whether it
    /// has any (the scan that finds its end sees them: no second pass for `string`).
    fn quoted(&mut self) -> Option<(Range<usize>, bool)> {
        self.whitespace();
        if self.byte()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            at = self.survey.next_mark(at)?;
            if self.text[at] == b'"' {
                break;
            }
            if !matches!(
                self.text.get(at + 1),
                Some(b'"' | b'\\' | b'n' | b't' | b'r' | b'b' | b'f')
            ) {
                return None;
            }
            escaped = true;
            at += 2;
        }
        if self.survey.low < 0x20 && has_control(&self.text[start..at]) {
            return None;
        }
        self.at = at + 1;
        Some((start..at, escaped))
    }

    /// A number the strict parser accepts: an integer within `i64::MIN..=u64::MAX`, or a float
    /// that is finite (a float with a long exponent takes the full path: the strict parser reads
    /// those specially).
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        let negative = self.byte()? == b'-';
        let whole = start + usize::from(negative);
        let digits = |from: usize| {
            self.text[from..]
                .iter()
                .take_while(|byte| byte.is_ascii_digit())
                .count()
        };
        let whole_digits = digits(whole);
        if whole_digits == 0 || (self.text[whole] == b'0' && whole_digits > 1) {
            return None;
        }
        let mut end = whole + whole_digits;
        let mut float = false;
        if self.text.get(end) == Some(&b'.') {
            let fraction = digits(end + 1);
            if fraction == 0 {
                return None;
            }
            end += 1 + fraction;
            float = true;
        }
        let exponent = matches!(self.text.get(end), Some(b'e' | b'E'));
        if exponent {
            end += 1;
            if let Some(b'+' | b'-') = self.text.get(end) {
                end += 1;
            }
            let exponent_digits = digits(end);
            if exponent_digits == 0 || exponent_digits > 3 {
                return None;
            }
            end += exponent_digits;
            float = true;
        }
        // The grammar above admits ASCII only: this is never `None`, and is only read for the
        // rare numbers the grammar cannot settle.
        let literal = || std::str::from_utf8(&self.text[start..end]).ok();
        let readable = if float {
            // Without an exponent and below 10^308, within f64's range (up to about 1.8 x 10^308):
            // the grammar alone says finite. Only the rest is converted to find out.
            (!exponent && whole_digits <= 308) || literal()?.parse::<f64>().ok()?.is_finite()
        } else if whole_digits <= 18 {
            // Below 10^18, within i64 either side.
            true
        } else {
            let magnitude = literal()?.trim_start_matches('-').parse::<u64>().ok()?;
            !negative || magnitude <= 1 << 63
        };
        self.at = end;
        readable.then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.text[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    /// One value of `data`, checked; `depth` counts the containers around it.
    fn value(&mut self, depth: usize) -> Option<Range<usize>> {
        self.whitespace();
        let start = self.at;
        match self.byte()? {
            b'"' => {
                self.escaped_string()?;
            }
            b'{' => {
                // Nested members were only needed to check their own object's keys.
                let first = self.object(depth + 1)?;
                self.members.truncate(first);
            }
            b'[' => self.array(depth + 1)?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(start..self.at)
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.whitespace();
        if self.byte()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.value(depth)?;
            self.whitespace();
            match self.byte()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An object of distinct keys; its members are left on `members` from the returned index on
    /// (sorted by key), for the caller to read and truncate.
    fn object(&mut self, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        let first = self.members.len();
        self.whitespace();
        if self.byte()? == b'}' {
            self.at += 1;
            return Some(first);
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value(depth)?;
            let prefix = key_order::prefix(&self.text[key.clone()]);
            self.members.push(Member { key, value, prefix });
            self.whitespace();
            match self.byte()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    break;
                }
                _ => return None,
            }
        }
        let text = self.text;
        let members = &mut self.members[first..];
        // Most pairs differ in their prefixes, decided before the keys are sliced out of the line.
        let order = |a: &Member, b: &Member| {
            (a.prefix.cmp(&b.prefix)).then_with(|| key_order::order(a.key_in(text), b.key_in(text)))
        };
        members.sort_unstable_by(order);
        let distinct = members
            .windows(2)
            .all(|pair| order(&pair[0], &pair[1]) != Ordering::Equal);
        distinct.then_some(first)
    }
}

/// Whether `bytes` hold a control character (below 0x20), which no JSON string may hold raw:
/// read string by string only on a line that has one somewhere (a tab or `\r` as whitespace).
fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().any(|&byte| byte < 0x20)
}

/// Appends serde_json's compact text of an already checked value of `scanner`'s line, objects'
/// members in key order (CAR's `Display` of a `data` value, `car_event::write_sorted`). The
/// members of nested objects go on top of `scanner.members` and are gone again after: no
/// allocation per object.
fn render(scanner: &mut Scanner<'_>, value: Range<usize>, out: &mut Vec<u8>) {
    // A scalar's span is known: it is written without being read again (most of `data`).
    if !matches!(scanner.text[value.start], b'{' | b'[') {
        write_scalar(&scanner.text[value], out);
        return;
    }
    scanner.at = value.start;
    render_value(scanner, out);
}

/// Appends serde_json's text of a string, literal or number token.
fn write_scalar(token: &[u8], out: &mut Vec<u8>) {
    // A string, literal or integer is written as it reads. serde_json reads a float, and `-0`,
    // as an f64 and writes it back its own way (ryu): so do the same here.
    let number = matches!(token[0], b'-' | b'0'..=b'9');
    let rewritten = number
        && (token.starts_with(b"-0") || token.iter().any(|b| matches!(b, b'.' | b'e' | b'E')));
    if rewritten {
        let number: serde_json::Number =
            serde_json::from_slice(token).expect("a number the fast path checked");
        serde_json::to_writer(&mut *out, &number).expect("writing into a Vec");
    } else {
        out.extend_from_slice(token);
    }
}

fn render_value(scanner: &mut Scanner<'_>, out: &mut Vec<u8>) {
    scanner.whitespace();
    let start = scanner.at;
    match scanner.byte() {
        Some(b'{') => {
            let first = scanner
                .object(0)
                .expect("a value the fast path checked reads again");
            // Members are written in key order, not text order: where the object ends is where
            // the scan goes on from after them.
            let end = scanner.at;
            out.push(b'{');
            for index in first..scanner.members.len() {
                if index > first {
                    out.push(b',');
                }
                let Member { key, value, .. } = scanner.members[index].clone();
                out.push(b'"');
                out.extend_from_slice(&scanner.text[key]);
                out.extend_from_slice(b"\":");
                render(scanner, value, out);
            }
            scanner.members.truncate(first);
            scanner.at = end;
            out.push(b'}');
        }
        Some(b'[') => {
            scanner.at += 1;
            out.push(b'[');
            scanner.whitespace();
            if scanner.byte() == Some(b']') {
                scanner.at += 1;
            } else {
                loop {
                    render_value(scanner, out);
                    scanner.whitespace();
                    let separator = scanner.byte();
                    scanner.at += 1;
                    if separator == Some(b']') {
                        break;
                    }
                    out.push(b',');
                }
            }
            out.push(b']');
        }
        _ => {
            scanner
                .value(0)
                .expect("a value the fast path checked reads again");
            write_scalar(&scanner.text[start..scanner.at], out);
        }
    }
}

/// A timestamp as CAR reads and hashes it: the instant, and what gives chrono's `to_rfc3339()`
/// text (car-eventlog's `event_digest` hashes `timestamp.to_rfc3339()`).
struct Stamp {
    instant: Instant,
    text: StampText,
}

enum StampText {
    /// The common form (`utc_stamp`: seconds below 60, UTC): its UTC date and time of day,
    /// `YYYY-MM-DDTHH:MM:SS`, which `to_rfc3339` begins with; the fraction follows from the
    /// nanoseconds (below a second).
    Common([u8; 19]),
    /// Any other timestamp (a leap second, an offset, a year beyond four digits): CAR's own
    /// text, `car_event::timestamp_text` (chrono writes a leap second as `:60` and the
    /// nanoseconds beyond the second as its fraction).
    Car(Box<str>),
}

impl Stamp {
    fn of(time: &chrono::DateTime<chrono::Utc>) -> Self {
        Stamp {
            instant: instant(time),
            text: StampText::Car(super::car_event::timestamp_text(time).into()),
        }
    }

    /// chrono's `to_rfc3339()`: for the common form `SecondsFormat::AutoSi` (no fraction, or 3,
    /// 6 or 9 digits, whichever shows the nanoseconds exactly) and `+00:00`.
    fn write_rfc3339(&self, out: &mut Vec<u8>) {
        let civil = match &self.text {
            StampText::Common(civil) => civil,
            StampText::Car(text) => return out.extend_from_slice(text.as_bytes()),
        };
        out.extend_from_slice(civil);
        let nanos = self.instant.1;
        debug_assert!(nanos < 1_000_000_000, "the common form has no leap second");
        let digits = match nanos {
            0 => 0,
            _ if nanos % 1_000_000 == 0 => 3,
            _ if nanos % 1_000 == 0 => 6,
            _ => 9,
        };
        if digits > 0 {
            let mut text = [b'0'; 9];
            let mut rest = nanos;
            for digit in text.iter_mut().rev() {
                *digit = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            out.push(b'.');
            out.extend_from_slice(&text[..digits]);
        }
        out.extend_from_slice(b"+00:00");
    }
}

/// The common timestamp, `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (seconds below 60, at most nine
/// fraction digits), validated and read without chrono: `Some` only for a valid `date-time`
/// (`validate::is_date_time`, which then need not read it again). Anything else is `None`, left to
/// `is_date_time` and chrono.
fn utc_stamp(text: &str) -> Option<Stamp> {
    let bytes = text.as_bytes();
    let separated = |at: usize, byte: u8| bytes[at] == byte;
    if bytes.len() < 20
        || !separated(4, b'-')
        || !separated(7, b'-')
        || !separated(10, b'T')
        || !separated(13, b':')
        || !separated(16, b':')
        || bytes[bytes.len() - 1] != b'Z'
    {
        return None;
    }
    // The fixed fields' digits checked at once and read without a branch per digit (reading
    // them field by field, a branch a digit, was 4-5 % of a check's CPU: perf, issue #47).
    const DIGITS: [usize; 14] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    if DIGITS
        .iter()
        .fold(false, |bad, &at| bad | (bytes[at].wrapping_sub(b'0') > 9))
    {
        return None;
    }
    let pair = |at: usize| i64::from(bytes[at] - b'0') * 10 + i64::from(bytes[at + 1] - b'0');
    let (year, month, day) = (pair(0) * 100 + pair(2), pair(5), pair(8));
    let (hour, minute, second) = (pair(11), pair(14), pair(17));
    let day_exists = validate::day_exists(year as u32, month as u32, day as u32);
    if year == 0 || !day_exists || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let fraction = &bytes[19..bytes.len() - 1];
    let nanos = match fraction {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let value = digits.iter().try_fold(0i64, |value, &byte| {
                byte.is_ascii_digit()
                    .then(|| value * 10 + i64::from(byte - b'0'))
            })?;
            value * 10i64.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let shifted = if month <= 2 { year - 1 } else { year };
    let era = shifted.div_euclid(400);
    let year_of_era = shifted - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    let mut civil = [0; 19];
    civil.copy_from_slice(&bytes[..19]);
    Some(Stamp {
        instant: (seconds, u32::try_from(nanos).ok()?),
        text: StampText::Common(civil),
    })
}

thread_local! {
    /// Each worker's buffers, reused from line to line (an allocation per line was a large share
    /// of the per-line stage): the members scanned, CAR's digest input and the line's survey.
    static SCRATCH: RefCell<(Vec<Member>, Vec<u8>, Survey)> = RefCell::default();
}

/// Whether the full path would report nothing for the line; if so its facts are written into
/// `facts` (in place: they are a few hundred bytes), else the line takes the full path and
/// `facts` holds nothing of use. `text` is the line without its newline and trailing `\r`.
pub(super) fn facts(
    text: &[u8],
    terminated: bool,
    options: &Options,
    schema: &EventSchema,
    facts: &mut EventFacts,
) -> bool {
    if !schema.fast || !terminated {
        return false;
    }
    SCRATCH.with_borrow_mut(|(members, input, survey)| {
        members.clear();
        input.clear();
        survey.of(text);
        let line = if survey.high < 0x80 {
            // SAFETY: every byte is below 0x80: ASCII, so UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(text) })
        } else {
            std::str::from_utf8(text).ok()
        };
        let mut scanner = Scanner {
            text,
            survey,
            at: 0,
            members: std::mem::take(members),
        };
        let claimed = line
            .and_then(|line| scanned_facts(&mut scanner, line, options, schema, input, facts))
            .is_some();
        *members = scanner.members;
        claimed
    })
}

/// The facts of `scanner`'s line, whose text is `line`.
fn scanned_facts(
    scanner: &mut Scanner<'_>,
    line: &str,
    options: &Options,
    schema: &EventSchema,
    input: &mut Vec<u8>,
    facts: &mut EventFacts,
) -> Option<()> {
    let text = scanner.text;
    scanner.expect(b'{')?;
    let mut spans: [Option<Range<usize>>; MEMBERS.len()] = Default::default();
    let mut data_members = 0..0;
    scanner.whitespace();
    if scanner.byte()? != b'}' {
        loop {
            let key = scanner.string()?;
            let slot = slot_of(&text[key.clone()])?;
            if spans[slot].is_some() {
                return None;
            }
            scanner.expect(b':')?;
            scanner.whitespace();
            spans[slot] = Some(if slot == DATA {
                if scanner.byte()? != b'{' {
                    return None;
                }
                let start = scanner.at;
                let first = scanner.object(2)?;
                data_members = first..scanner.members.len();
                start..scanner.at
            } else {
                scanner.string()?
            });
            scanner.whitespace();
            match scanner.byte()? {
                b',' => scanner.at += 1,
                b'}' => break,
                _ => return None,
            }
        }
    }
    scanner.at += 1;
    scanner.whitespace();
    if scanner.at != text.len() {
        return None;
    }
    // Spans end at ASCII quotes and braces: char boundaries of the UTF-8 line.
    let member = |slot: usize| spans[slot].clone().map(|span| &line[span]);
    let kind = member(KIND)?;
    // The bundle's kinds (the schema) and the release's parser's (for the chain digest and the
    // car-compatible profile) both know it.
    let car = super::car_parser_schema(options.car_version);
    let kind_index = *schema.kinds.get(kind)?;
    if !std::ptr::eq(schema, car) && !car.kinds.contains_key(kind) {
        return None;
    }
    member(DATA)?;
    // A line whose `data` breaks a payload contract has a finding: the full path reports it.
    if options.payloads != Mode::Off
        && !schema.payloads.admits(
            kind_index,
            scanner.members[data_members.clone()]
                .iter()
                .map(|member| (member.key_in(text), &text[member.value.clone()])),
        )
    {
        return None;
    }
    let stamp = member(TIMESTAMP)?;
    let time = match utc_stamp(stamp) {
        Some(time) => time,
        None if validate::is_date_time(stamp) => {
            Stamp::of(&stamp.parse::<chrono::DateTime<chrono::Utc>>().ok()?)
        }
        None => return None,
    };
    let hash = member(HASH).map(ChainHash::new);
    let recomputed = (hash.is_some() && options.chain != ChainMode::Off).then(|| {
        let part = |slot: usize| member(slot).unwrap_or_default().as_bytes();
        input.extend_from_slice(part(PREV_HASH));
        input.push(0x1e);
        input.push(b'"');
        input.extend_from_slice(kind.as_bytes());
        input.push(b'"');
        if [RUN_ID, CLIENT_ID, POLICY_SESSION_ID]
            .iter()
            .any(|&slot| spans[slot].is_some())
        {
            input.push(0x1d);
            input.extend_from_slice(part(RUN_ID));
            input.push(0x1f);
            input.extend_from_slice(part(CLIENT_ID));
            input.push(0x1f);
            input.extend_from_slice(part(POLICY_SESSION_ID));
        }
        input.push(0x1e);
        input.extend_from_slice(part(ACTION_ID));
        input.push(0x1e);
        input.extend_from_slice(part(PROPOSAL_ID));
        input.push(0x1e);
        for index in data_members.clone() {
            if index > data_members.start {
                input.push(0x1f);
            }
            let Member { key, value, .. } = scanner.members[index].clone();
            input.extend_from_slice(&text[key]);
            input.push(b'=');
            render(scanner, value, input);
        }
        input.push(0x1e);
        time.write_rfc3339(input);
        Ok::<_, Uncomputable>(ChainHash::Digest(Sha256::digest(&*input).into()))
    });
    // Under car-compatible the facts are CAR's reading (`car_facts`): for such a line, the same.
    Text::assign(&mut facts.kind, Some(kind));
    facts.kind_index = u16::try_from(kind_index).ok();
    Text::assign(&mut facts.run_id, member(RUN_ID));
    Text::assign(&mut facts.proposal_id, member(PROPOSAL_ID));
    Text::assign(&mut facts.action_id, member(ACTION_ID));
    facts.hash = hash;
    facts.prev_hash = member(PREV_HASH).map(ChainHash::new);
    facts.recomputed = recomputed;
    facts.timestamp = Some(time.instant);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::{check_line, CheckedLine, Outcome, Profile, RawLine};
    use super::*;
    use crate::codes;

    /// Lines of every shape the fast path claims or must refuse: chained and not, nested data
    /// with unsorted keys, arrays, literals, wide integers, non-ASCII, whitespace.
    fn base_lines() -> Vec<String> {
        let mut lines = Vec::new();
        let mut previous = String::new();
        let bodies = [
            r#""kind":"run_started","run_id":"r1","data":{"agent_id":"a","intent":"i","started_at":"2026-01-01T00:00:00Z"}"#,
            r#""kind":"state_changed","data":{"q":"a \" b \\ c \n \t \r \b \f","r":["\"\""]}"#,
            r#""kind":"action_succeeded","data":{"f":[0.1,5e-324,1E+2,-0,-0.0,2.50,1e22,0.30000000000000004]}"#,
            r#""kind":"proposal_received","run_id":"r1","proposal_id":"p1","data":{"z":1,"a":{"y":[true,false,null,-5,18446744073709551615],"b":"é ☃"},"source":"s","action_count":0,"proposal":{},"proposal_digest":"d","tokens_in":-0,"cost_usd":1}"#,
            r#""kind":"action_executing","run_id":"r1","proposal_id":"p1","action_id":"a0","client_id":"c","data":{"n":-9223372036854775808,"s":"x y"}"#,
            r#""kind":"action_succeeded","policy_session_id":"s","proposal_id":"p1","action_id":"a0","data":{"nested":{"k":{"j":{"i":[[],{}]}}}}"#,
            r#""kind":"run_completed","run_id":"r1","data":{"b":"2","a":"1","ab":"3","":0,"termination_kind":"outcome","completion_digest":"d","termination":{"kind":"incomplete"}}"#,
        ];
        for (index, body) in bodies.iter().enumerate() {
            let stamp = format!(r#""timestamp":"2026-01-01T00:00:0{index}.12{index}Z""#);
            let unchained = format!("{{{body},{stamp}}}");
            let event = format!(r#"{{{body},{stamp},"prev_hash":"{previous}"}}"#);
            let hash =
                crate::journal::car_event::line_digest(event.as_bytes()).expect("CAR reads it");
            let chained = format!(
                "{{ {body} ,\t{stamp}, \"prev_hash\" : \"{previous}\" , \"hash\":\"{hash}\" }} "
            );
            previous = hash;
            lines.push(unchained);
            lines.push(chained);
        }
        lines
    }

    /// A small deterministic generator (xorshift), so a failure replays.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, bound: usize) -> usize {
            (self.next() % bound as u64) as usize
        }
    }

    /// A random edit of a line: bytes and tokens that change how a line reads.
    fn mutate(line: &str, random: &mut Random) -> Vec<u8> {
        const PIECES: [&str; 32] = [
            "\\",
            "\"",
            ",",
            ":",
            "{",
            "}",
            "[",
            "]",
            " ",
            "\t",
            "\r",
            "1",
            "0",
            "-",
            "-0",
            ".5",
            "e3",
            "1.0",
            "null",
            "true",
            "é",
            "\u{1}",
            "\\u0041",
            "\\ud800",
            "\\n",
            "\"kind\":",
            "\"data\":{},",
            "\"x\":1,",
            "99999999999999999999",
            "Z",
            "+05:30",
            "\u{c}",
        ];
        let mut bytes = line.as_bytes().to_vec();
        for _ in 0..=random.below(3) {
            let at = random.below(bytes.len() + 1);
            match random.below(4) {
                0 if at < bytes.len() => {
                    bytes.remove(at);
                }
                1 if at < bytes.len() => bytes[at] = random.next() as u8,
                _ => {
                    let piece = PIECES[random.below(PIECES.len())].as_bytes();
                    bytes.splice(at..at, piece.iter().copied());
                }
            }
        }
        bytes
    }

    fn option_sets() -> Vec<Options> {
        let mut sets = Vec::new();
        for bundle in validate::wire_bundles() {
            for chain in [ChainMode::Auto, ChainMode::Off] {
                for profile in [Profile::Strict, Profile::CarCompatible] {
                    sets.push(Options {
                        chain,
                        profile,
                        car_version: bundle.version,
                        fast_path: false,
                        ..Options::default()
                    });
                }
            }
            for payloads in [Mode::Off, Mode::Error] {
                sets.push(Options {
                    car_version: bundle.version,
                    fast_path: false,
                    payloads,
                    ..Options::default()
                });
            }
        }
        sets
    }

    #[test]
    fn lines_breaking_a_payload_contract_take_the_full_path() {
        let stamp = r#""timestamp":"2026-01-01T00:00:00Z""#;
        let broken = [
            r#""kind":"run_started","data":{"agent_id":"a","intent":"i"}"#,
            r#""kind":"run_started","data":{"agent_id":1,"intent":"i","started_at":"t"}"#,
            r#""kind":"inference_metered","data":{"tokens_in":"12"}"#,
            r#""kind":"state_changed","data":{"tokens_out":-1}"#,
            r#""kind":"state_changed","data":{"duration_ms":"5"}"#,
            r#""kind":"state_changed","data":{"tokens_in":1.5}"#,
        ];
        for options in option_sets() {
            for body in broken {
                let line = format!("{{{body},{stamp}}}");
                let claimed = compare(line.as_bytes(), true, &options);
                let checked = options.payloads != Mode::Off
                    && validate::wire_bundle_of_release(options.car_version).is_some();
                assert_eq!(claimed, !checked, "{line} {options:?}");
            }
        }
    }

    /// The fast path's facts of a line, if it claims it.
    fn claimed_facts(text: &[u8], terminated: bool, options: &Options) -> Option<EventFacts> {
        let mut claimed = EventFacts::default();
        let schema = super::super::event_schema(options.car_version);
        facts(text, terminated, options, schema, &mut claimed).then_some(claimed)
    }

    /// Checks one line both ways under `options`; whether the fast path claimed it.
    fn compare(line: &[u8], terminated: bool, options: &Options) -> bool {
        let raw = RawLine::Text {
            number: 7,
            span: 0..line.len(),
            terminated,
        };
        let full: CheckedLine = check_line(&raw, line, options);
        let fast_options = Options {
            fast_path: true,
            ..options.clone()
        };
        let fast: CheckedLine = check_line(&raw, line, &fast_options);
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        let claimed = claimed_facts(text, terminated, options);
        let shown = String::from_utf8_lossy(line);
        assert_eq!(fast.findings, full.findings, "{shown}");
        match (&fast.outcome, &full.outcome) {
            (Outcome::Event(a), Outcome::Event(b)) => assert_eq!(a, b, "{shown}"),
            (Outcome::Blank, Outcome::Blank) | (Outcome::Invalid, Outcome::Invalid) => {}
            _ => panic!("outcomes differ: {shown}"),
        }
        if claimed.is_some() {
            assert!(
                full.findings.is_empty(),
                "claimed a line with findings: {shown}"
            );
        }
        claimed.is_some()
    }

    #[test]
    fn the_fast_path_claims_common_lines_and_agrees_with_the_full_path() {
        for options in option_sets() {
            for line in base_lines() {
                assert!(
                    compare(line.as_bytes(), true, &options),
                    "not claimed: {line}"
                );
                compare(line.as_bytes(), false, &options);
            }
        }
    }

    #[test]
    fn mutated_lines_give_the_full_paths_answers() {
        let lines = base_lines();
        let sets = option_sets();
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        let (mut claimed, mut total) = (0, 0);
        for _ in 0..6_000 {
            let line = &lines[random.below(lines.len())];
            let mutated = mutate(line, &mut random);
            let options = &sets[random.below(sets.len())];
            total += 1;
            claimed += usize::from(compare(&mutated, true, options));
        }
        // Both sides are exercised: many mutants still read, many do not.
        assert!(
            claimed > total / 20 && claimed < total * 19 / 20,
            "{claimed} of {total}"
        );
    }

    /// A leap second (`:60`, in UTC or through an offset) is hashed with chrono's text
    /// (`23:59:60+00:00`, no fraction), as car-eventlog's `event_digest` hashes
    /// `timestamp.to_rfc3339()`: the fast path claims the line and gives CAR's digest, and a
    /// `hash` over the text with a fraction is a mismatch on both paths (issue 45, first case).
    #[test]
    fn leap_seconds_are_hashed_with_cars_text() {
        let car = "8796ac0e61b61d0ebf036fbb02130c1136c5a6094614b5f05606598e5312d4cd";
        let line = format!(
            r#"{{"kind":"state_changed","data":{{}},"timestamp":"2026-12-31T23:59:60Z","prev_hash":"","hash":"{car}"}}"#
        );
        assert_eq!(
            crate::journal::car_event::line_digest(line.as_bytes()).as_deref(),
            Ok(car)
        );
        for stamp in [
            "2026-12-31T23:59:60Z",
            "2026-12-31T18:59:60-05:00",
            "2026-12-31T23:59:60.5Z",
        ] {
            let unhashed = format!(
                r#"{{"kind":"state_changed","data":{{}},"timestamp":"{stamp}","prev_hash":""}}"#
            );
            let digest =
                crate::journal::car_event::line_digest(unhashed.as_bytes()).expect("CAR reads it");
            let hashed = format!(r#"{},"hash":"{digest}"}}"#, &unhashed[..unhashed.len() - 1]);
            for options in option_sets() {
                assert!(compare(hashed.as_bytes(), true, &options), "{hashed}");
            }
            let fast =
                claimed_facts(hashed.as_bytes(), true, &Options::default()).expect("claimed");
            assert_eq!(
                fast.recomputed,
                Some(Ok(ChainHash::new(&digest))),
                "{stamp}"
            );
        }
        // The digest over `23:59:60.000+00:00`, which the fast path used to hash (and so
        // accepted): a mismatch on both paths.
        let forged = line.replace(
            car,
            "c41aba91c44ed776dd43c003bc34e205ba2c3383c9a258d7e701c55408d01086",
        );
        for fast_path in [true, false] {
            let options = Options {
                fast_path,
                ..Options::default()
            };
            let codes = |text: &str| -> Vec<&str> {
                super::super::check_journal(format!("{text}\n").as_bytes(), &options, || false)
                    .expect("in-memory read")
                    .findings
                    .iter()
                    .map(|finding| finding.code)
                    .collect()
            };
            assert_eq!(codes(&forged), [codes::HASH_MISMATCH.id], "{fast_path}");
            assert!(codes(&line).is_empty(), "{fast_path}");
        }
    }

    /// A raw control character in a string is refused whether or not the line also holds one as
    /// whitespace between tokens (the line-wide check then defers to a check per string).
    #[test]
    fn raw_control_characters_in_strings_are_refused_beside_whitespace_ones() {
        let line = r#"{"kind":"state_changed","run_id":"r1","data":{"q":"a \" b","r":["x"]},"timestamp":"2026-01-01T00:00:00Z"}"#;
        let (head, tail) = line.split_at(line.find(r#""data":{"#).expect("a data member"));
        for whitespace in ["", "\t", "\r"] {
            let spaced = format!("{head}{whitespace}{tail}");
            for options in option_sets() {
                assert!(compare(spaced.as_bytes(), true, &options), "{spaced}");
                for control in ["\u{1}", "\t", "\u{1f}"] {
                    for planted in [
                        spaced.replacen("a \\\" b", &format!("a{control}b"), 1),
                        spaced.replacen(r#""q""#, &format!("\"q{control}\""), 1),
                        spaced.replacen("r1", &format!("r{control}1"), 1),
                    ] {
                        assert_ne!(planted, spaced);
                        assert!(!compare(planted.as_bytes(), true, &options), "{planted}");
                    }
                }
            }
        }
    }

    /// Every line of the CAR fixtures and of the adversarial corpus (tests/data, tests/adversarial).
    #[test]
    fn real_and_adversarial_lines_give_the_full_paths_answers() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for folder in ["tests/data/car", "tests/adversarial/corpus"] {
            for entry in std::fs::read_dir(root.join(folder)).expect("a test data folder") {
                files.push(entry.expect("a directory entry").path());
            }
        }
        let mut claimed = 0;
        for path in files {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            for line in bytes.split(|&byte| byte == b'\n') {
                // The CAR self-heal fixtures wrap each event as {"event": …, "path": …}.
                let inner = serde_json::from_slice::<Value>(line)
                    .ok()
                    .and_then(|value| value.get("event").map(Value::to_string));
                for options in option_sets() {
                    claimed += usize::from(compare(line, true, &options));
                    if let Some(event) = &inner {
                        claimed += usize::from(compare(event.as_bytes(), true, &options));
                    }
                }
            }
        }
        assert!(claimed > 100, "the fast path claims real events: {claimed}");
    }

    /// The chrono-free reading of the common timestamp against `is_date_time` and chrono's,
    /// over random dates (leap years, centuries, days and times out of range, separators
    /// replaced) and every fraction length: it claims exactly the valid ones of its form, and
    /// reads and prints them as chrono does.
    #[test]
    fn common_timestamps_read_and_print_as_chrono_does() {
        let mut random = Random(0x2545_f491_4f6c_dd1d);
        let mut claimed = 0;
        for round in 0..40_000 {
            let year = random.below(10000);
            let month = random.below(14);
            let day = random.below(33);
            let (hour, minute, second) = (random.below(25), random.below(61), random.below(61));
            let digits = round % 11;
            let fraction: String = (0..digits)
                .map(|_| char::from(b'0' + random.below(10) as u8))
                .collect();
            let fraction = if digits == 0 {
                String::new()
            } else {
                format!(".{fraction}")
            };
            let mut text = format!(
                "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}Z"
            )
            .into_bytes();
            if round % 7 == 0 {
                let at = [4, 7, 10, 13, 16][random.below(5)];
                text[at] = b"-:T t/"[random.below(6)];
            }
            let text = String::from_utf8(text).unwrap();
            let of_its_form = year > 0 && second < 60 && digits <= 9 && text.as_bytes()[10] == b'T';
            let ours = utc_stamp(&text);
            assert_eq!(
                ours.is_some(),
                of_its_form && validate::is_date_time(&text),
                "{text}"
            );
            let Some(ours) = ours else {
                continue;
            };
            claimed += 1;
            let chrono = text
                .parse::<chrono::DateTime<chrono::Utc>>()
                .expect("chrono reads what the fast path reads");
            assert_eq!(ours.instant, instant(&chrono), "{text}");
            let mut written = Vec::new();
            ours.write_rfc3339(&mut written);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                crate::journal::car_event::timestamp_text(&chrono),
                "{text}"
            );
        }
        assert!(claimed > 10_000, "{claimed}");
    }

    #[test]
    fn every_member_has_its_slot() {
        for (slot, name) in MEMBERS.iter().enumerate() {
            assert_eq!(slot_of(name.as_bytes()), Some(slot), "{name}");
        }
        for other in ["", "kin", "kinds", "Kind", "data ", "hash\0"] {
            assert_eq!(slot_of(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn the_environment_switch_turns_the_fast_path_off() {
        std::env::set_var("PAIRLING_FAST_JOURNAL_FAST_PATH", "0");
        let off = Options::default().fast_path;
        std::env::remove_var("PAIRLING_FAST_JOURNAL_FAST_PATH");
        assert!(!off && Options::default().fast_path);
    }

    #[test]
    fn only_the_known_event_shape_takes_the_fast_path() {
        for bundle in validate::wire_bundles() {
            let schema = bundle.schema("journal.event").expect("journal.event");
            assert!(shape_is_known(schema), "{}", bundle.version);
            let mut changed = schema.clone();
            changed["properties"]["run_id"]["maxLength"] = json!(8);
            assert!(!shape_is_known(&changed));
            let mut changed = schema.clone();
            changed["minProperties"] = json!(4);
            assert!(!shape_is_known(&changed));
        }
    }
}
