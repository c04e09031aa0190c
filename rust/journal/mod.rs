//! CAR journals: streaming validation of JSONL event logs (`car.journal.event`, one per line),
//! hash-chain verification (CAR's own `event_digest`, `car_event.rs`, docs/digests.md) and run /
//! proposal / action lifecycle checks.
//!
//! Lines are read in order-preserving batches; each batch is parsed, schema-validated and hashed in
//! parallel (rayon) while the next batch is read, then the ordered checks (chain links, lifecycle
//! state) run over the batch results in line order. Memory stays bounded by one batch plus the
//! open runs / proposals / actions and a fixed window of recently closed ids, never by file size.
//! `python/pairling_fast/_fallback/journal/` implements the same rules line for line.

use crate::codes;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::parse::{self, escape_pointer_token};
use crate::report::Finding;
use crate::validate::{self, SchemaValidator};

/// CAR's journal event as CAR reads it (serde) and its chain digest.
pub mod car_event;
/// CAR's event payload contracts (`car_payloads.toml`): the members each kind's `data` holds.
pub mod car_payloads;
/// Chunks of a journal checked on many machines, reported as one (docs/cluster.md).
pub mod chunks;
/// The per-line fast path for the common event line (no `Value`, digest input from raw spans).
mod fast;
mod kinds;
/// Lines read into batches, straight from the reader.
mod lines;
/// The ordered stage: chain links, lifecycle state, counts and the findings cap.
mod ordered;
/// The ordered stage's state, saved where a verified prefix ends and resumed from.
mod state;
/// A journal checked as its bytes arrive, cut anywhere (`JournalStream`, `check --follow`).
pub mod stream;
/// The windows of recently closed ids, each id stored once.
mod window;
use lines::{Batch, LineReader, RawLine};
use ordered::{action_ids, action_key, terminal, Checker, FindingSink, MidRun};
use window::ClosedWindow;

pub const SCHEMA_ID: &str = "car.journal.event";
pub use car_event::CHAIN_RULE;
// `DEFAULT_MAX_LINE_LENGTH` (a longer line is reported, PF303, and skipped without being held in
// memory), `DEFAULT_MAX_FINDINGS` and the names `DEFAULT_CHAIN`, `DEFAULT_PROFILE` and
// `DEFAULT_PAYLOADS`, from python/pairling_fast/journal_defaults.toml (build.rs).
include!(concat!(env!("OUT_DIR"), "/journal_defaults.rs"));
/// How many completed proposals and ended actions are remembered to catch events after their end.
pub const CLOSED_WINDOW: usize = 65_536;

/// Maps and sets keyed by ids and kinds from the journal: ahash with a per-process random state is
/// several times faster than the standard SipHash and still resists chosen collisions (HashDoS).
type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;
type HashSet<K> = std::collections::HashSet<K, ahash::RandomState>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainMode {
    Auto,
    Require,
    Off,
}

impl ChainMode {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(ChainMode::Auto),
            "require" => Some(ChainMode::Require),
            "off" => Some(ChainMode::Off),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// The wire schema as written.
    Strict,
    /// What CAR's own event parser accepts: unknown top-level members and a missing `timestamp`
    /// or `data` become PF304 warnings instead of schema errors.
    CarCompatible,
}

impl Profile {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "strict" => Some(Profile::Strict),
            "car-compatible" => Some(Profile::CarCompatible),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub chain: ChainMode,
    pub lifecycle: bool,
    /// Caps the findings list (the rest are counted in `stats.suppressed_findings`); `None`: no cap.
    pub max_findings: Option<usize>,
    pub profile: Profile,
    pub max_line_length: usize,
    /// The CAR release whose bundled `journal.event` (its `EventKind`s, its envelope) events are
    /// validated against: a `WireBundle::version`.
    pub car_version: &'static str,
    /// Whether common lines may take the fast path (`fast.rs`); the reports are the same
    /// either way. Off only to compare the two paths or to rule the fast path out when debugging.
    pub fast_path: bool,
    /// CAR's payload contracts (`car_payloads.rs`): off, warnings (the default) or errors.
    pub payloads: car_payloads::Mode,
}

/// The fast path's default: on, unless `PAIRLING_FAST_JOURNAL_FAST_PATH=0` (read at every
/// `Options::default()`, so a process can compare both paths).
fn fast_path_default() -> bool {
    !matches!(std::env::var_os("PAIRLING_FAST_JOURNAL_FAST_PATH"), Some(value) if value == "0")
}

impl Default for Options {
    /// The defaults of journal_defaults.toml, the table the facade's options read too.
    fn default() -> Self {
        Options {
            chain: ChainMode::parse(DEFAULT_CHAIN).expect("journal_defaults.toml: a chain mode"),
            lifecycle: true,
            max_findings: Some(DEFAULT_MAX_FINDINGS),
            profile: Profile::parse(DEFAULT_PROFILE).expect("journal_defaults.toml: a profile"),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            car_version: validate::default_wire_bundle().version,
            fast_path: fast_path_default(),
            payloads: car_payloads::Mode::parse(DEFAULT_PAYLOADS)
                .expect("journal_defaults.toml: a payloads mode"),
        }
    }
}

#[derive(Debug)]
pub struct JournalReport {
    pub findings: Vec<Finding>,
    pub stats: Value,
}

/// The schema's facts the checks need: the kind enum and the declared top-level members.
struct EventSchema {
    validator: &'static SchemaValidator,
    /// The kind enum: each kind with its index in `kind_names`.
    kinds: HashMap<String, usize>,
    /// The kinds, sorted.
    kind_names: Vec<String>,
    members: HashSet<String>,
    /// The bundle's release (`WireBundle::version`), which findings name.
    release: &'static str,
    /// Whether the schema is the shape the fast path checks by hand.
    fast: bool,
    /// CAR's payload contracts for the bundle's release, or the bundle's own payload schemas.
    payloads: car_payloads::Payloads,
}

impl EventSchema {
    fn of(bundle: &'static validate::WireBundle) -> Self {
        let schema = bundle
            .schema(EVENT_SCHEMA)
            .expect("every wire bundle has journal.event");
        let mut kind_names: Vec<String> = schema["definitions"]["EventKind"]["oneOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|branch| branch["enum"].as_array())
            .flatten()
            .filter_map(|kind| kind.as_str().map(str::to_string))
            .collect();
        kind_names.sort();
        kind_names.dedup();
        let kinds = kind_names
            .iter()
            .enumerate()
            .map(|(index, kind)| (kind.clone(), index))
            .collect();
        let members = schema["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        let payloads = car_payloads::Payloads::of(
            bundle.version,
            &bundle.document,
            kind_names.iter().map(String::as_str),
        );
        EventSchema {
            validator: bundle
                .validator(EVENT_SCHEMA)
                .expect("every wire bundle has journal.event"),
            payloads,
            kinds,
            kind_names,
            members,
            release: bundle.version,
            fast: fast::shape_is_known(schema),
        }
    }
}

/// The name of the event schema inside a wire bundle (`car.journal.event` among bundled ids).
const EVENT_SCHEMA: &str = "journal.event";

/// The event schema of the bundle of CAR release `car_version` (a `WireBundle::version`).
fn event_schema(car_version: &str) -> &'static EventSchema {
    static SCHEMAS: OnceLock<Vec<OnceLock<EventSchema>>> = OnceLock::new();
    let bundles = validate::wire_bundles();
    let slots = SCHEMAS.get_or_init(|| bundles.iter().map(|_| OnceLock::new()).collect());
    let index = bundles
        .iter()
        .position(|bundle| bundle.version == car_version)
        .expect("Options::car_version names a bundled release");
    slots[index].get_or_init(|| EventSchema::of(&bundles[index]))
}

fn default_event_schema() -> &'static EventSchema {
    event_schema(validate::default_wire_bundle().version)
}

/// The event kinds of the bundle of CAR release `car_version` (a `WireBundle::version`), sorted.
pub fn event_kinds(car_version: &str) -> Vec<String> {
    event_schema(car_version).kind_names.clone()
}

// ---------------------------------------------------------------------------------------------
// Reading lines, bounded

impl Batch {
    /// The per-line stage over the batch, in parallel, results in line order into `checked`.
    /// Each line's result is written in place into its slot, and the slots are kept from batch
    /// to batch: returning each 300-byte result and moving it through rayon's collect was
    /// `memmove`'s largest share outside the reads (perf, issue #47).
    fn check_into(&self, options: &Options, checked: &mut Vec<CheckedLine>) {
        use rayon::prelude::*;
        let text = self.text();
        checked.truncate(self.lines.len());
        checked.resize_with(self.lines.len(), CheckedLine::default);
        checked
            .par_iter_mut()
            .zip(self.lines.par_iter())
            .for_each(|(slot, raw)| check_line_into(raw, text, options, slot));
    }
}

// ---------------------------------------------------------------------------------------------
// Per-line work (parallel): parse, validate, hash, extract what the ordered checks need

/// A point in time from an RFC 3339 timestamp: (seconds since the epoch, nanoseconds).
pub type Instant = (i64, u32);

/// Ids and kinds, inline up to 38 bytes: CAR's coder action ids are `coder-` and 32 hex digits
/// (38 bytes, half the events of car-server-core's fixture journal `native-car-doctor`), its
/// kinds at most 29; held boxed, such an id cost an allocation and a free per line.
type Id = Text<38>;

mod text;
use text::Text;

mod chain_hash;
use chain_hash::ChainHash;

/// What the ordered checks need from one event; the parsed value itself is dropped in the
/// parallel stage so a batch's memory is released before the next one.
#[derive(Debug, Default, PartialEq)]
struct EventFacts {
    kind: Option<Id>,
    /// `kind`'s index among the bundle's kinds (`EventSchema::kinds`), when the per-line stage
    /// looked it up: the ordered stage then counts the kind without a lookup of its own.
    kind_index: Option<u16>,
    run_id: Option<Id>,
    proposal_id: Option<Id>,
    action_id: Option<Id>,
    hash: Option<ChainHash>,
    prev_hash: Option<ChainHash>,
    /// CAR's digest of the event (or why it cannot be computed), for events that carry `hash`.
    recomputed: Option<Result<ChainHash, Uncomputable>>,
    timestamp: Option<Instant>,
}

/// Why CAR's digest of a chained event cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Uncomputable {
    /// CAR's event parser rejects the line (serde_json's message).
    CarRejects(String),
    /// No `timestamp`: CAR hashes the time it loads the journal instead.
    NoTimestamp,
}

// Nearly every line is an event: its facts inline spare an allocation per line, and a batch's
// outcomes are one `Vec`, reused from batch to batch.
#[allow(clippy::large_enum_variant)]
#[derive(Default)]
enum Outcome {
    #[default]
    Blank,
    Invalid,
    Event(EventFacts),
}

#[derive(Default)]
struct CheckedLine {
    number: u64,
    outcome: Outcome,
    findings: Vec<Finding>,
}

impl CheckedLine {
    /// The facts of the line as an event, to be filled in place (what a slot held before is
    /// overwritten member by member).
    fn event_facts(&mut self) -> &mut EventFacts {
        if !matches!(self.outcome, Outcome::Event(_)) {
            self.outcome = Outcome::Event(EventFacts::default());
        }
        match &mut self.outcome {
            Outcome::Event(facts) => facts,
            _ => unreachable!("set to an event above"),
        }
    }
}

fn string_member<const N: usize>(object: &Map<String, Value>, name: &str) -> Option<Text<N>> {
    object.get(name).and_then(Value::as_str).map(Text::new)
}

fn hash_member(object: &Map<String, Value>, name: &str) -> Option<ChainHash> {
    object.get(name).and_then(Value::as_str).map(ChainHash::new)
}

/// `check_line_into` a fresh result.
#[cfg(test)]
fn check_line(raw: &RawLine, buffer: &[u8], options: &Options) -> CheckedLine {
    let mut checked = CheckedLine::default();
    check_line_into(raw, buffer, options, &mut checked);
    checked
}

/// Checks one line into `slot`, a result of an earlier line whose findings were taken: the common
/// line is written in place by the fast path (no result moved, no allocation), any other one
/// replaces the slot.
fn check_line_into(raw: &RawLine, buffer: &[u8], options: &Options, slot: &mut CheckedLine) {
    if let RawLine::Text {
        number,
        ref span,
        terminated: true,
    } = *raw
    {
        let bytes = &buffer[span.clone()];
        let text = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if options.fast_path
            && fast::facts(
                text,
                true,
                options,
                event_schema(options.car_version),
                slot.event_facts(),
            )
        {
            slot.number = number;
            slot.findings.clear();
            return;
        }
    }
    *slot = checked_line(raw, buffer, options);
}

/// The full path of `check_line_into` (and the rare line the fast path leaves).
fn checked_line(raw: &RawLine, buffer: &[u8], options: &Options) -> CheckedLine {
    let (number, bytes, terminated) = match *raw {
        RawLine::TooLong { number, length } => {
            let finding = Finding::new(
                codes::LINE_TOO_LONG,
                format!(
                    "line is {length} bytes long, over the limit of {} bytes; skipped",
                    options.max_line_length
                ),
            )
            .at("")
            .on_line(number);
            return CheckedLine {
                number,
                outcome: Outcome::Invalid,
                findings: vec![finding],
            };
        }
        RawLine::Text {
            number,
            ref span,
            terminated,
        } => (number, &buffer[span.clone()], terminated),
    };
    let text = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let car_compatible = options.profile == Profile::CarCompatible;
    // car-eventlog's loader skips every line of ASCII whitespace (`is_ascii_whitespace`: also form
    // feed), though JSON's whitespace has no form feed; without its newline, such a last line is
    // still a torn tail (`load_from_journal`).
    if text.iter().all(u8::is_ascii_whitespace) {
        let mut findings = Vec::new();
        if text.contains(&0x0c) {
            findings.push(
                Finding::new(
                    codes::FORM_FEED_LINE,
                    "a line of whitespace with a form feed, which JSON does not count as \
                     whitespace: CAR's loader skips it as blank",
                )
                .at("")
                .on_line(number),
            );
        }
        if car_compatible && !terminated {
            findings.push(torn_tail().on_line(number));
        }
        return CheckedLine {
            number,
            outcome: Outcome::Blank,
            findings,
        };
    }
    let strict = parse::parse_strict(text);
    // CAR's own reading of the line: the chain digest needs it for every chained event, the
    // car-compatible profile for every line.
    let carries_hash =
        matches!(&strict, Ok(Value::Object(o)) if o.get("hash").is_some_and(Value::is_string));
    let car = (car_compatible || (carries_hash && options.chain != ChainMode::Off))
        .then(|| car_event::parse(text, options.car_version));
    let mut findings = Vec::new();
    let car_accepts = matches!(car, Some(Ok(_)));
    let value = match strict {
        Ok(value) => Some(value),
        Err(error) if !terminated && !car_accepts => {
            return invalid_line(
                number,
                Finding::new(
                    codes::TRUNCATED_FINAL_LINE,
                    format!(
                        "the last line has no newline and is not valid JSON (truncated?): {}",
                        with_column(&error)
                    ),
                )
                .at(""),
            )
        }
        Err(error) if car_compatible && car_accepts => {
            // CAR reads it: the defect is in a member CAR ignores or inside `data`, where
            // serde_json keeps the last duplicate and reads a wide integer as a float.
            let code = match error.code {
                codes::DUPLICATE_KEY => codes::CAR_DUPLICATE_KEY,
                codes::INTEGER_OUT_OF_RANGE => codes::CAR_WIDE_INTEGER,
                _ => codes::CAR_IGNORED_VALUE,
            };
            findings.push(
                Finding::new(
                    code,
                    format!(
                        "{} ({}); CAR's event parser accepts the line",
                        with_column(&error),
                        error.code
                    ),
                )
                .at(error.pointer.clone())
                .on_line(number),
            );
            None
        }
        Err(error) => {
            // The parser's own code (PF001 syntax, PF002 duplicate key, PF003 not UTF-8, …).
            return invalid_line(
                number,
                Finding::new(error.code, with_column(&error)).at(error.pointer),
            );
        }
    };
    let schema = event_schema(options.car_version);
    match &value {
        Some(Value::Object(object)) => {
            findings.extend(schema_findings(
                value.as_ref().unwrap_or(&Value::Null),
                object,
                options.profile,
                schema,
            ));
        }
        Some(other) if !car_accepts => {
            let mut line = invalid_line(
                number,
                Finding::new(
                    codes::NOT_AN_OBJECT,
                    format!(
                        "a journal line must be a JSON object (an event), not {}",
                        json_type(other)
                    ),
                )
                .at(""),
            );
            if car_compatible && !terminated {
                // CAR's loader reads an unterminated last line it cannot make an event of as a
                // torn tail, whatever JSON it is (`load_from_journal`; a differential found `0`).
                line.findings.push(torn_tail().on_line(number));
            }
            return line;
        }
        Some(other) => findings.push(
            Finding::new(
                codes::CAR_ARRAY_EVENT,
                format!(
                    "the event is {}, not an object: CAR's parser reads an array's items as the \
                     event's fields in declaration order",
                    json_type(other)
                ),
            )
            .at(""),
        ),
        None => {}
    }
    match &car {
        Some(Ok(_)) if car_compatible => {
            // Whatever the schema forbids and CAR reads anyway is a warning under its own code.
            for finding in &mut findings {
                if finding.is_error() {
                    *finding = car_tolerated(finding, value.as_ref());
                }
            }
        }
        Some(Err(_)) if car_compatible && !findings.iter().any(Finding::is_error) => {
            findings.push(
                Finding::new(
                    codes::CAR_REJECTS,
                    "CAR's event parser (serde_json into car-eventlog 0.58.0's Event) rejects the \
                     line",
                )
                .at(""),
            );
        }
        _ => {}
    }
    if let Some(Value::Object(object)) = &value {
        findings.extend(payload_findings(object, schema, options));
    }
    if car_compatible && !terminated {
        findings.push(torn_tail());
    }
    for finding in &mut findings {
        finding.line = Some(number);
    }
    if car_compatible && !terminated && !car_accepts {
        // CAR drops an unterminated last line it cannot parse (a torn tail): it is none of its
        // events, so not a link of its chain either.
        return CheckedLine {
            number,
            outcome: Outcome::Invalid,
            findings,
        };
    }
    let facts = match (&car, &value) {
        (Some(Ok(event)), _) if car_compatible => car_facts(event),
        (_, Some(Value::Object(object))) => EventFacts {
            kind: string_member(object, "kind"),
            kind_index: None,
            run_id: string_member(object, "run_id"),
            proposal_id: string_member(object, "proposal_id"),
            action_id: string_member(object, "action_id"),
            hash: hash_member(object, "hash"),
            prev_hash: hash_member(object, "prev_hash"),
            recomputed: None,
            // A chained line was read by CAR's parser too: its timestamp is the same chrono
            // parse of the same string (a strict object has one `timestamp`), so it is not
            // parsed twice.
            timestamp: match &car {
                Some(Ok(event)) => event.timestamp.0.as_ref().map(instant),
                _ => object
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(parse_timestamp),
            },
        },
        _ => EventFacts::default(),
    };
    let recomputed = match &car {
        _ if facts.hash.is_none() || options.chain == ChainMode::Off => None,
        Some(Ok(event)) => Some(
            car_event::digest(event)
                .map(|digest| ChainHash::new(&digest))
                .ok_or(Uncomputable::NoTimestamp),
        ),
        Some(Err(reason)) => Some(Err(Uncomputable::CarRejects(reason.clone()))),
        None => None,
    };
    let kind_index = facts
        .kind
        .as_deref()
        .and_then(|kind| schema.kinds.get(kind))
        .and_then(|&index| u16::try_from(index).ok());
    CheckedLine {
        number,
        outcome: Outcome::Event(EventFacts {
            recomputed,
            kind_index,
            ..facts
        }),
        findings,
    }
}

/// The payload contract findings of an event whose `kind` is a kind of the bundle and whose `data`
/// is an object (otherwise the schema has said what is wrong).
fn payload_findings(
    object: &Map<String, Value>,
    schema: &EventSchema,
    options: &Options,
) -> Vec<Finding> {
    match (object.get("kind"), object.get("data")) {
        (Some(Value::String(kind)), Some(Value::Object(data)))
            if options.payloads != car_payloads::Mode::Off =>
        {
            schema.payloads.findings(kind, data, options.payloads)
        }
        _ => Vec::new(),
    }
}

/// A last line without its newline under car-compatible: car-eventlog's `load_from_journal`
/// records it as `torn_tail_line` whatever it holds (an event, a line it cannot parse,
/// whitespace), and `load_read_only` then refuses the journal.
fn torn_tail() -> Finding {
    Finding::new(
        codes::CAR_TORN_TAIL,
        "the last line has no newline: CAR's read-only loader refuses the journal as a torn tail",
    )
    .at("")
}

fn invalid_line(number: u64, finding: Finding) -> CheckedLine {
    CheckedLine {
        number,
        outcome: Outcome::Invalid,
        findings: vec![finding.on_line(number)],
    }
}

/// The facts of an event as CAR read it (car-compatible: `null` ids are absent, the kind may be
/// in its `{"name": null}` form, the event may be an array).
fn car_facts(event: &car_event::CarEvent) -> EventFacts {
    EventFacts {
        kind: Some(Text::new(&event.kind.0)),
        kind_index: None,
        run_id: event.run_id.as_deref().map(Text::new),
        proposal_id: event.proposal_id.as_deref().map(Text::new),
        action_id: event.action_id.as_deref().map(Text::new),
        hash: event.hash.as_deref().map(ChainHash::new),
        prev_hash: event.prev_hash.as_deref().map(ChainHash::new),
        recomputed: None,
        timestamp: event.timestamp.0.as_ref().map(instant),
    }
}

/// A schema error CAR's parser does not make: the same message, as a warning under the code
/// of what CAR tolerates.
fn car_tolerated(finding: &Finding, event: Option<&Value>) -> Finding {
    let pointer = finding.pointer.as_deref().unwrap_or("");
    let code = match pointer {
        "/timestamp" => codes::CAR_TIMESTAMP,
        _ if event
            .and_then(|e| e.pointer(pointer))
            .is_some_and(Value::is_null) =>
        {
            codes::CAR_NULL_MEMBER
        }
        _ => codes::CAR_SCHEMA_TOLERATED,
    };
    let message = format!(
        "{} ({}); CAR's event parser accepts it",
        finding.message, finding.code
    );
    Finding::new(code, message).at(finding.pointer.clone().unwrap_or_default())
}

/// The parser's message with its column; its line is always 1 within one journal line.
fn with_column(error: &parse::JsonError) -> String {
    match error.column {
        Some(column) => format!("{} (column {column})", error.message),
        None => error.message.clone(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Required members CAR's event parser defaults when they are missing (checked against
/// car-runtime 0.58.0), with the stand-in used to validate the rest of the event.
const CAR_DEFAULTED: [(&str, &str); 2] =
    [("data", "{}"), ("timestamp", "\"1970-01-01T00:00:00Z\"")];

/// The event's schema findings (none for a valid event: `SchemaValidator::violations` asks the
/// quick yes/no first). A kind the release does not know is named as such (`kinds.rs`).
fn violations(schema: &EventSchema, event: &Value) -> Vec<Finding> {
    schema
        .validator
        .violations(event)
        .into_iter()
        .map(|violation| {
            let mut finding = Finding::from(violation);
            kinds::name_unknown_kind(&mut finding, event, &schema.kind_names, schema.release);
            finding
        })
        .collect()
}

/// Schema findings of one event. Under `car-compatible`, unknown members (which CAR's parser
/// ignores) and missing `data` / `timestamp` (which it defaults) are PF304 warnings, and the rest
/// of the event is validated as if they were absent / present.
fn schema_findings(
    event: &Value,
    object: &Map<String, Value>,
    profile: Profile,
    schema: &EventSchema,
) -> Vec<Finding> {
    let tolerates = profile == Profile::CarCompatible;
    let unknown: Vec<&String> = object
        .keys()
        .filter(|key| tolerates && !schema.members.contains(*key))
        .collect();
    let missing: Vec<(&str, &str)> = CAR_DEFAULTED
        .into_iter()
        .filter(|(name, _)| tolerates && !object.contains_key(*name))
        .collect();
    if unknown.is_empty() && missing.is_empty() {
        return violations(schema, event);
    }
    let mut tolerated: Map<String, Value> = object
        .iter()
        .filter(|(key, _)| schema.members.contains(*key))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (name, stand_in) in &missing {
        let stand_in = serde_json::from_str(stand_in).expect("a JSON literal");
        tolerated.insert((*name).to_string(), stand_in);
    }
    let mut findings = violations(schema, &Value::Object(tolerated));
    for key in unknown {
        let message = format!(
            "unknown member \"{key}\": the schema forbids it, CAR's event parser ignores it"
        );
        let pointer = format!("/{}", escape_pointer_token(key));
        findings.push(Finding::new(codes::CAR_TOLERATED, message).at(pointer));
    }
    for (name, _) in missing {
        let message =
            format!("no \"{name}\": the schema requires it, CAR's event parser defaults it");
        findings.push(Finding::new(codes::CAR_TOLERATED, message).at(""));
    }
    findings
}

/// A timestamp as the instant CAR reads (chrono's relaxed RFC 3339, as `DateTime<Utc>`); `None` if
/// chrono does not read it (the schema check reports that).
pub fn parse_timestamp(text: &str) -> Option<Instant> {
    text.parse::<chrono::DateTime<chrono::Utc>>()
        .ok()
        .map(|time| instant(&time))
}

fn instant(time: &chrono::DateTime<chrono::Utc>) -> Instant {
    (time.timestamp(), time.timestamp_subsec_nanos())
}

/// Whether `name` is an `EventKind` of CAR `release`'s event parser: the kind enum of that
/// release's wire schema (the interop tests compare it with CAR's own enum); the default
/// release's for the specification's copy (`seed`).
pub fn is_event_kind(release: &str, name: &str) -> bool {
    car_parser_schema(release).kinds.contains_key(name)
}

/// The event schema whose kinds CAR `release`'s parser knows (see `is_event_kind`).
fn car_parser_schema(release: &str) -> &'static EventSchema {
    match validate::wire_bundle_of_release(release) {
        Some(bundle) => event_schema(bundle.version),
        None => default_event_schema(),
    }
}

/// Checks a whole journal. `should_stop` is asked between batches (the Python glue checks for
/// Ctrl-C there); when it says stop, the report covers the lines read so far and
/// `stats.interrupted` is true. I/O errors of the reader are returned as they are.
pub fn check_journal<R: Read + Send>(
    reader: R,
    options: &Options,
    should_stop: impl FnMut() -> bool,
) -> io::Result<JournalReport> {
    check_journal_from(reader, options, None, false, should_stop).map(|(report, _)| report)
}

/// The ordered stage's state (`state.rs`'s JSON text) where a verified prefix ends.
pub type Snapshot = String;

/// A checker resumed from a `Snapshot` (its lines are numbered on from the snapshot's); the
/// message says why the snapshot cannot be read.
pub struct Resume(Checker);

impl Resume {
    pub fn from_snapshot(options: &Options, snapshot: &str) -> Result<Self, String> {
        Checker::restore(options, snapshot).map(Resume)
    }
}

/// `check_journal` of the lines of `reader`, going on from `resume` when given (`reader` then
/// starts where the snapshot's lines end), and with `snapshot` the ordered stage's state at the
/// end of the last line with a newline: a last line without one is checked and reported, but
/// left out of the snapshot so the next run reads it again once it is complete. No snapshot when
/// the check was interrupted.
pub fn check_journal_from<R: Read + Send>(
    reader: R,
    options: &Options,
    resume: Option<Resume>,
    snapshot: bool,
    mut should_stop: impl FnMut() -> bool,
) -> io::Result<(JournalReport, Option<Snapshot>)> {
    let mut checker = resume.map_or_else(|| Checker::new(options), |Resume(checker)| checker);
    let mut lines = LineReader::new(reader, options.max_line_length, checker.lines);
    let mut batch = lines.next_batch(Batch::default(), |_| true)?;
    // The buffers of the other batch in flight and of the other batch's results, reused.
    let mut spare = Batch::default();
    let mut checked: Vec<CheckedLine> = Vec::new();
    let mut spare_checked: Vec<CheckedLine> = Vec::new();
    let mut interrupted = false;
    while !batch.is_empty() {
        if should_stop() {
            interrupted = true;
            break;
        }
        // A three-stage pipeline: this batch is checked on the pool while the previous batch's
        // results go through the ordered checks and the next batch is read.
        let mut previous = std::mem::replace(&mut checked, std::mem::take(&mut spare_checked));
        let into = &mut checked;
        let (_, (next, emptied)) = rayon::join(
            || batch.check_into(options, into),
            || {
                // The slots stay for the batch after next (`check_into`).
                for line in &mut previous {
                    checker.take(line);
                }
                (
                    lines.next_batch(std::mem::take(&mut spare), |_| true),
                    previous,
                )
            },
        );
        spare_checked = emptied;
        spare = std::mem::replace(&mut batch, next?);
    }
    let torn = if snapshot && lines.torn && !interrupted {
        checked.pop()
    } else {
        None
    };
    for line in &mut checked {
        checker.take(line);
    }
    let snapshot = (snapshot && !interrupted).then(|| checker.snapshot());
    if let Some(mut line) = torn {
        checker.take(&mut line);
    }
    let stats = checker.finish(interrupted);
    let report = JournalReport {
        findings: checker.sink.findings,
        stats,
    };
    Ok((report, snapshot))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(text: &str, options: &Options) -> JournalReport {
        check_journal(text.as_bytes(), options, || false).expect("in-memory read")
    }

    fn codes_of(report: &JournalReport) -> Vec<(&'static str, Option<u64>)> {
        report.findings.iter().map(|f| (f.code, f.line)).collect()
    }

    const STARTED: &str = r#"{"kind":"run_started","run_id":"r1","data":{"agent_id":"a","intent":"i","started_at":"2026-01-01T00:00:00Z"},"timestamp":"2026-01-01T00:00:00Z"}"#;
    const COMPLETED: &str = r#"{"kind":"run_completed","run_id":"r1","data":{"termination_kind":"incomplete","completion_digest":"d","termination":{"kind":"incomplete"}},"timestamp":"2026-01-01T00:00:01Z"}"#;

    #[test]
    fn a_clean_journal_has_no_findings_and_counts_every_line() {
        let text = format!("{STARTED}\r\n\n  \n{COMPLETED}\n");
        let report = check(&text, &Options::default());
        assert_eq!(codes_of(&report), vec![]);
        assert_eq!(report.stats["lines"], 4);
        assert_eq!(report.stats["events"], 2);
        assert_eq!(report.stats["blank_lines"], 2);
        assert_eq!(report.stats["kinds"]["run_started"], 1);
        assert_eq!(report.stats["chain"], json!({"verified": 0}));
    }

    #[test]
    fn line_level_problems_are_located() {
        let text = format!(
            "{STARTED}\n[1]\n{{\"a\":1,\"a\":2}}\nnot json\n\u{0}\n{COMPLETED}\n{{\"kind\""
        );
        let report = check(&text, &Options::default());
        let found = codes_of(&report);
        assert!(found.contains(&(codes::NOT_AN_OBJECT.id, Some(2))));
        assert!(found.contains(&("PF002", Some(3))));
        assert!(found.contains(&("PF001", Some(4))));
        assert!(found.contains(&(codes::TRUNCATED_FINAL_LINE.id, Some(7))));
        assert_eq!(report.stats["invalid_lines"], 5);
    }

    #[test]
    fn a_too_long_line_is_skipped_but_counted() {
        let options = Options {
            max_line_length: 300,
            ..Options::default()
        };
        let text = format!("{STARTED}\n{}\n{COMPLETED}\n", "x".repeat(1000));
        let report = check(&text, &options);
        assert_eq!(codes_of(&report), vec![(codes::LINE_TOO_LONG.id, Some(2))]);
        assert_eq!(report.stats["lines"], 3);
    }

    /// `count` chained events, one JSON line each.
    fn chained_lines(count: usize) -> Vec<String> {
        let mut previous = String::new();
        (0..count)
            .map(|n| {
                let event = json!({"kind": "state_changed", "data": {"n": n}, "timestamp": "2026-01-01T00:00:00Z"});
                let (line, hash) =
                    car_event::chain_line(&event.to_string(), &previous).expect("digest");
                previous = hash;
                line
            })
            .collect()
    }

    #[test]
    fn the_chain_locates_edits_and_deletions() {
        let lines = chained_lines(5);
        let intact = check(&(lines.join("\n") + "\n"), &Options::default());
        assert_eq!(codes_of(&intact), vec![]);
        assert_eq!(intact.stats["chain"], json!({"verified": 5}));

        let mut edited = lines.clone();
        edited[2] = edited[2].replace("\"n\":2", "\"n\":7");
        let report = check(&(edited.join("\n") + "\n"), &Options::default());
        assert_eq!(codes_of(&report), vec![(codes::HASH_MISMATCH.id, Some(3))]);
        assert_eq!(report.stats["chain"], json!({"tampered_at": 2}));

        let mut deleted = lines;
        deleted.remove(1);
        let report = check(&(deleted.join("\n") + "\n"), &Options::default());
        assert_eq!(codes_of(&report), vec![(codes::LINK_MISMATCH.id, Some(2))]);
        assert_eq!(report.stats["chain"], json!({"tampered_at": 1}));
    }

    /// A check of `text[..split]` saved and resumed over the rest equals the whole check, at
    /// every split (the snapshot ends at the last newline before `split`, as in a real run).
    fn assert_resumes_everywhere(text: &str, options: &Options) {
        let whole = check(text, options);
        let bytes = text.as_bytes();
        for split in 0..=bytes.len() {
            let (_, snapshot) =
                check_journal_from(&bytes[..split], options, None, true, || false).expect("read");
            let snapshot = snapshot.expect("not interrupted");
            let offset = bytes[..split]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
            let resume = Resume::from_snapshot(options, &snapshot).expect("restores");
            let (resumed, _) =
                check_journal_from(&bytes[offset..], options, Some(resume), false, || false)
                    .expect("read");
            assert_eq!(resumed.findings, whole.findings, "split at {split}");
            assert_eq!(resumed.stats, whole.stats, "split at {split}");
        }
    }

    #[test]
    fn a_resumed_check_equals_the_whole_check() {
        let mut lines = chained_lines(4);
        lines[2] = lines[2].replace("\"n\":2", "\"n\":9");
        let text = format!(
            "{STARTED}\n{}\n\n{{\"a\":1,\"a\":2}}\n{STARTED}\n{}\n{{\"kind\"",
            lines.join("\n"),
            COMPLETED.replace("00:01", "00:00")
        );
        assert_resumes_everywhere(&text, &Options::default());
        let capped = Options {
            max_findings: Some(2),
            max_line_length: 120,
            ..Options::default()
        };
        assert_resumes_everywhere(&text, &capped);
    }

    #[test]
    fn timestamps_compare_as_instants() {
        assert!(
            parse_timestamp("2026-01-01T01:00:00+01:00") == parse_timestamp("2026-01-01T00:00:00Z")
        );
        assert!(
            parse_timestamp("2026-01-01T00:00:00.5Z")
                > parse_timestamp("2026-01-01T00:00:00.123456789Z")
        );
        assert_eq!(parse_timestamp("1970-01-02T00:00:00Z"), Some((86_400, 0)));
        // chrono's relaxed RFC 3339, as CAR reads it: a space for `T`, no colon in the offset.
        assert_eq!(
            parse_timestamp("2026-01-01 05:30:00+0530"),
            parse_timestamp("2026-01-01T00:00:00Z")
        );
        assert_eq!(parse_timestamp("2026-01-01X00:00:00Z"), None);
    }
}
