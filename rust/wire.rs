//! CAR wire checks: RPC results (schema, then the invariants the schema descriptions state),
//! catalog snapshots and the cross-checks made against them, streaming JSON-RPC 2.0 transcripts,
//! and the wire-schema bundle's own integrity.
//!
//! `python/pairling_fast/_fallback/wire.py` mirrors this module rule for rule: the same codes,
//! pointers, lines, messages and stats. The rules are written down in `docs/wire.md`.

use crate::codes::{self, Code};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::parse::{self, escape_pointer_token, JsonError};
use crate::report::Finding;
use crate::validate::{self, CompileOptions, SchemaValidator, WireBundle};

pub const WIRE_FORMAT: &str = "car.wire-schema.v1";
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

const SNAPSHOT_METHOD: &str = "models.catalog_snapshot";
const TERMINAL_CHUNKS: [&str; 2] = ["done", "error"];
const ERROR_OBJECT_MEMBERS: [&str; 3] = ["code", "message", "data"];

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn token(key: &str) -> String {
    format!("/{}", escape_pointer_token(key))
}

/// An integral JSON number (`3` or `3.0`) as an integer; `None` for anything else.
fn integer(value: &Value) -> Option<i128> {
    if let Some(number) = value.as_i64() {
        return Some(number.into());
    }
    if let Some(number) = value.as_u64() {
        return Some(number.into());
    }
    let number = value.as_f64()?;
    // Beyond 2^127 an integral double has no i128; no count or token total comes near it.
    (number.fract() == 0.0 && number.abs() < 1.7e38).then_some(number as i128)
}

fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// A strict-JSON error on one transcript line: the line is the transcript's, the column goes in
/// the message.
fn line_error_finding(error: JsonError, line: u64) -> Finding {
    let message = match error.column {
        Some(column) => format!("{} (column {column})", error.message),
        None => error.message,
    };
    Finding::new(error.code, message)
        .at(error.pointer)
        .on_line(line)
}

// ---------------------------------------------------------------------------------------------
// RPC results

/// What an `infer` result is cross-checked against: a valid snapshot's revision and rows.
#[derive(Debug, Clone)]
pub struct CatalogIndex {
    revision: String,
    row_digests: HashMap<String, String>,
}

impl CatalogIndex {
    /// From a snapshot that matched its schema (so every member below is there).
    fn of_valid_snapshot(snapshot: &Value) -> Self {
        let mut row_digests = HashMap::new();
        for row in snapshot["models"].as_array().into_iter().flatten() {
            row_digests
                .entry(text_of(&row["model"]["id"]).to_owned())
                .or_insert_with(|| text_of(&row["row_digest"]).to_owned());
        }
        CatalogIndex {
            revision: text_of(&snapshot["catalog_revision"]).to_owned(),
            row_digests,
        }
    }
}

/// `covered`, `uncovered` or `unknown`: where the wire schema lists `method`'s result.
pub fn rpc_coverage(bundle: &WireBundle, method: &str) -> &'static str {
    let coverage = &bundle.document["coverage"]["rpc_results"];
    let lists = |member: &str| {
        coverage[member]
            .as_array()
            .is_some_and(|list| list.iter().any(|m| m.as_str() == Some(method)))
    };
    if lists("covered") {
        "covered"
    } else if lists("uncovered") {
        "uncovered"
    } else {
        "unknown"
    }
}

fn result_validator<'a>(bundle: &'a WireBundle, method: &str) -> Option<&'a SchemaValidator> {
    bundle.validator(&format!("rpc.{method}.result"))
}

fn schema_findings(validator: &SchemaValidator, value: &Value) -> Vec<Finding> {
    validator
        .violations(value)
        .into_iter()
        .map(Finding::from)
        .collect()
}

/// The findings on one result (pointers relative to it) and whether it matched its schema.
///
/// The semantic checks run only on schema-valid results: they rely on the shapes it guarantees.
pub fn result_findings(
    bundle: &WireBundle,
    method: &str,
    result: &Value,
    catalog: Option<&CatalogIndex>,
    wire_schema_digest: Option<&str>,
) -> (Vec<Finding>, bool) {
    let Some(validator) = result_validator(bundle, method) else {
        let finding = if rpc_coverage(bundle, method) == "uncovered" {
            let message = format!(
                "unchecked: no schema in {} for {method} results",
                bundle.label()
            );
            Finding::new(codes::UNCHECKED_METHOD, message)
        } else {
            let message = format!(
                "unknown method {}: not in the coverage of {}",
                quoted(method),
                bundle.label()
            );
            Finding::new(codes::UNKNOWN_METHOD, message)
        };
        return (vec![finding.at("")], false);
    };
    let mut findings = schema_findings(validator, result);
    if !findings.is_empty() {
        return (findings, false);
    }
    match method {
        "tools.list" => findings.extend(count_matches(result, "tools")),
        "capabilities.list" => findings.extend(count_matches(result, "methods")),
        "infer" => check_infer(result, catalog, &mut findings),
        "tools.poll" => check_tools_poll(result, &mut findings),
        SNAPSHOT_METHOD => check_catalog_snapshot(result, &mut findings),
        "server.schema" => findings.extend(check_server_schema(result, wire_schema_digest)),
        _ => {}
    }
    (findings, true)
}

fn display_integer(value: Option<i128>) -> String {
    value.map_or_else(|| "None".to_owned(), |number| number.to_string())
}

fn count_matches(result: &Value, list_member: &str) -> Option<Finding> {
    let count = integer(&result["count"]);
    let entries = result[list_member].as_array().map_or(0, Vec::len);
    if count == Some(entries as i128) {
        return None;
    }
    let message = format!(
        "count is {} but {list_member} has {entries} entries",
        display_integer(count)
    );
    Some(Finding::new(codes::COUNT_MISMATCH, message).at("/count"))
}

fn check_infer(result: &Value, catalog: Option<&CatalogIndex>, findings: &mut Vec<Finding>) {
    let usage = &result["usage"];
    if !usage.is_null() {
        let prompt = integer(&usage["prompt_tokens"]).unwrap_or(0);
        let completion = integer(&usage["completion_tokens"]).unwrap_or(0);
        let total = integer(&usage["total_tokens"]);
        if total != Some(prompt + completion) {
            let message = format!(
                "usage.total_tokens is {} but prompt_tokens + completion_tokens is {}",
                display_integer(total),
                prompt + completion
            );
            findings
                .push(Finding::new(codes::USAGE_TOTAL_MISMATCH, message).at("/usage/total_tokens"));
        }
    }
    let Some(catalog) = catalog else { return };
    let revision = text_of(&result["catalog_revision"]);
    if revision != catalog.revision {
        let message = format!(
            "catalog_revision {} differs from the snapshot's {}",
            quoted(revision),
            quoted(&catalog.revision)
        );
        findings
            .push(Finding::new(codes::CATALOG_REVISION_MISMATCH, message).at("/catalog_revision"));
    }
    let model_id = text_of(&result["resolved_model_id"]);
    let row_digest = text_of(&result["row_digest"]);
    match catalog.row_digests.get(model_id) {
        None => {
            let message = format!(
                "resolved_model_id {} is not in the catalog snapshot",
                quoted(model_id)
            );
            findings
                .push(Finding::new(codes::MODEL_NOT_IN_CATALOG, message).at("/resolved_model_id"));
        }
        Some(expected) if expected != row_digest => {
            let message = format!(
                "row_digest {} differs from the snapshot row of {}: {}",
                quoted(row_digest),
                quoted(model_id),
                quoted(expected)
            );
            findings
                .push(Finding::new(codes::INFER_ROW_DIGEST_MISMATCH, message).at("/row_digest"));
        }
        Some(_) => {}
    }
}

fn terminal_chunk_of_status(status: &str) -> Option<&'static str> {
    match status {
        "succeeded" => Some("done"),
        "failed" => Some("error"),
        _ => None,
    }
}

fn check_tools_poll(result: &Value, findings: &mut Vec<Finding>) {
    let Some(poll) = result.as_object() else {
        return;
    };
    let status = text_of(&result["status"]);
    let chunks: &[Value] = result["chunks"].as_array().map_or(&[], Vec::as_slice);
    if status == "succeeded" && !poll.contains_key("result") {
        findings.push(
            Finding::new(
                codes::POLL_PAYLOAD_MISSING,
                "status is succeeded but result is missing",
            )
            .at(""),
        );
    }
    let error = poll.get("error").filter(|error| !error.is_null());
    if status == "failed" && error.is_none() {
        let pointer = if poll.contains_key("error") {
            "/error"
        } else {
            ""
        };
        findings.push(
            Finding::new(
                codes::POLL_PAYLOAD_MISSING,
                "status is failed but error is not set",
            )
            .at(pointer),
        );
    }
    let kind = |chunk: &Value| text_of(&chunk["kind"]).to_owned();
    let Some((last, earlier)) = chunks.split_last() else {
        return;
    };
    for (index, chunk) in earlier.iter().enumerate() {
        let chunk_kind = kind(chunk);
        if TERMINAL_CHUNKS.contains(&chunk_kind.as_str()) {
            let message =
                format!("chunk {index} is a terminal {chunk_kind} chunk but more chunks follow it");
            findings.push(
                Finding::new(codes::POLL_TERMINAL_CHUNK, message).at(format!("/chunks/{index}")),
            );
        }
    }
    let last_pointer = format!("/chunks/{}", earlier.len());
    let last_kind = kind(last);
    match terminal_chunk_of_status(status) {
        Some(expected) if last_kind != expected => {
            let message =
                format!("status is {status} but the last chunk is {last_kind}, not {expected}");
            findings.push(Finding::new(codes::POLL_TERMINAL_CHUNK, message).at(last_pointer));
        }
        None if status == "running" && TERMINAL_CHUNKS.contains(&last_kind.as_str()) => {
            let message =
                format!("status is running but the last chunk is the terminal {last_kind} chunk");
            findings.push(Finding::new(codes::POLL_TERMINAL_CHUNK, message).at(last_pointer));
        }
        _ => {}
    }
    if let (true, Some(error)) = (status == "failed" && last_kind == "error", error) {
        let chunk_message = &last["message"];
        if error != chunk_message {
            let message = format!(
                "error {} differs from the error chunk's message {}",
                quoted(text_of(error)),
                quoted(text_of(chunk_message))
            );
            findings.push(Finding::new(codes::POLL_PAYLOAD_MISSING, message).at("/error"));
        }
    }
}

fn check_catalog_snapshot(result: &Value, findings: &mut Vec<Finding>) {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut previous: Option<&str> = None;
    for (index, row) in result["models"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let model_id = text_of(&row["model"]["id"]);
        let id_pointer = format!("/models/{index}/model/id");
        if seen.contains(model_id) {
            let message = format!("model id {} appears more than once", quoted(model_id));
            findings.push(Finding::new(codes::CATALOG_DUPLICATE_ID, message).at(id_pointer));
        } else if previous.is_some_and(|previous| canonical::cmp_utf16(model_id, previous).is_lt())
        {
            let message = format!(
                "models are not sorted by id: {} comes after {}",
                quoted(model_id),
                quoted(previous.unwrap_or_default())
            );
            findings.push(Finding::new(codes::CATALOG_UNSORTED, message).at(id_pointer));
        }
        seen.insert(model_id);
        previous = Some(model_id);
        let computed = match canonical::digest_hex(&row["model"]) {
            Ok(computed) => computed,
            Err(error) => {
                let pointer = format!("/models/{index}/model{}", error.pointer);
                findings.push(Finding::new(error.code, error.message).at(pointer));
                continue;
            }
        };
        let given = text_of(&row["row_digest"]);
        if computed != given {
            let message = format!(
                "row_digest {} is not sha256(JCS(model)) {}",
                quoted(given),
                quoted(&computed)
            );
            findings.push(
                Finding::new(codes::ROW_DIGEST_MISMATCH, message)
                    .at(format!("/models/{index}/row_digest")),
            );
        }
    }
    // car-inference catalog_identity.rs: `catalog_revision(&rows)` is the canonical sha256 of
    // the rows as serialized, i.e. of the `models` array exactly as it is on the wire.
    if let Ok(computed) = canonical::digest_hex(&result["models"]) {
        let given = text_of(&result["catalog_revision"]);
        if computed != given {
            let message = format!(
                "catalog_revision {} is not sha256(JCS(models)) {}",
                quoted(given),
                quoted(&computed)
            );
            findings
                .push(Finding::new(codes::CATALOG_REVISION_WRONG, message).at("/catalog_revision"));
        }
    }
}

fn check_server_schema(result: &Value, wire_schema_digest: Option<&str>) -> Option<Finding> {
    let expected = wire_schema_digest?;
    let digest = text_of(&result["digest"]);
    if digest == expected {
        return None;
    }
    let message = format!(
        "digest {} is not the sha256 of the wire-schema file's exact bytes {}",
        quoted(digest),
        quoted(expected)
    );
    Some(Finding::new(codes::SCHEMA_DIGEST_MISMATCH, message).at("/digest"))
}

/// The catalog given alongside an `infer` result, if it is a valid snapshot; else a PF413.
fn catalog_argument(bundle: &WireBundle, catalog: &Value) -> Result<CatalogIndex, Finding> {
    let validator =
        result_validator(bundle, SNAPSHOT_METHOD).expect("the snapshot schema is bundled");
    let violations = validator.violations(catalog);
    let Some(first) = violations.first() else {
        return Ok(CatalogIndex::of_valid_snapshot(catalog));
    };
    let message = format!(
        "catalog is not a valid models.catalog_snapshot result ({} schema violations; first at {}: \
         {}); infer was not cross-checked",
        violations.len(),
        quoted(&first.pointer),
        first.message
    );
    Err(Finding::new(codes::CATALOG_NOT_A_SNAPSHOT, message))
}

/// Findings on one RPC result and the stats `{"method", "coverage", "car_version"}`.
pub fn check_rpc_result(
    bundle: &WireBundle,
    method: &str,
    result: &Value,
    catalog: Option<&Value>,
    wire_schema_digest: Option<&str>,
) -> (Vec<Finding>, Value) {
    let mut findings = Vec::new();
    let mut index = None;
    if let (Some(catalog), "infer") = (catalog, method) {
        match catalog_argument(bundle, catalog) {
            Ok(catalog) => index = Some(catalog),
            Err(finding) => findings.push(finding),
        }
    }
    findings.extend(result_findings(bundle, method, result, index.as_ref(), wire_schema_digest).0);
    let stats = json!({
        "method": method,
        "coverage": rpc_coverage(bundle, method),
        "car_version": bundle.version,
    });
    (findings, stats)
}

// ---------------------------------------------------------------------------------------------
// RPC params and notifications

/// Where a bundle puts a method's params: the schema that describes them, or the inventory
/// category (`coverage.rpc_params` of CAR 0.60.0 on) that says why none does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamsCoverage {
    /// `notification.<method>.params` or `rpc.<method>.params`.
    Schema(String),
    /// `coverage.rpc_params.not_read`: the daemon passes its handler no params.
    NotRead,
    /// `typed_without_schema` (with the Rust type) or `unresolved`.
    Uncovered {
        category: &'static str,
        rust_type: Option<String>,
    },
    /// A notification the daemon sends, where `coverage.notifications.inventoried` is false.
    NotificationNotInventoried,
    /// The bundle has no params inventory (before CAR 0.60.0).
    NoInventory,
    /// In none of the bundle's lists.
    Unknown,
}

impl ParamsCoverage {
    /// The category as the stats and messages name it.
    pub fn category(&self) -> &'static str {
        match self {
            ParamsCoverage::Schema(_) => "covered",
            ParamsCoverage::NotRead => "not_read",
            ParamsCoverage::Uncovered { category, .. } => category,
            ParamsCoverage::NotificationNotInventoried => "notification_not_inventoried",
            ParamsCoverage::NoInventory => "no_params_inventory",
            ParamsCoverage::Unknown => "unknown",
        }
    }
}

fn lists(list: &Value, name: &str) -> bool {
    list.as_array()
        .is_some_and(|list| list.iter().any(|item| item.as_str() == Some(name)))
}

/// How `bundle` covers the params of `method` (`notification`: the message carries no id).
pub fn params_coverage(bundle: &WireBundle, method: &str, notification: bool) -> ParamsCoverage {
    let coverage = &bundle.document["coverage"];
    let notification_schema = format!("notification.{method}.params");
    if lists(&coverage["notifications"]["covered"], &notification_schema) {
        return ParamsCoverage::Schema(notification_schema);
    }
    let params = &coverage["rpc_params"];
    if !params.is_object() {
        return ParamsCoverage::NoInventory;
    }
    if lists(&params["covered"], method) {
        return ParamsCoverage::Schema(format!("rpc.{method}.params"));
    }
    if lists(&params["not_read"], method) {
        return ParamsCoverage::NotRead;
    }
    let uncovered = &params["uncovered"];
    if let Some(rust_type) = uncovered["typed_without_schema"].get(method) {
        return ParamsCoverage::Uncovered {
            category: "typed_without_schema",
            rust_type: rust_type.as_str().map(str::to_owned),
        };
    }
    if lists(&uncovered["unresolved"], method) {
        return ParamsCoverage::Uncovered {
            category: "unresolved",
            rust_type: None,
        };
    }
    if notification && coverage["notifications"]["inventoried"] == Value::Bool(false) {
        return ParamsCoverage::NotificationNotInventoried;
    }
    ParamsCoverage::Unknown
}

/// The finding that says a method's params were not checked, if the coverage calls for one
/// (reported once per method in a transcript).
fn params_unchecked_finding(
    bundle: &WireBundle,
    method: &str,
    coverage: &ParamsCoverage,
) -> Option<Finding> {
    let label = bundle.label();
    let finding = match coverage {
        ParamsCoverage::Schema(_) | ParamsCoverage::NotRead => return None,
        ParamsCoverage::Uncovered {
            category,
            rust_type,
        } => {
            let typed = rust_type
                .as_deref()
                .map_or_else(String::new, |name| format!(" (Rust type {name})"));
            let message = format!(
                "unchecked: {label} lists the params of {method} as {category}{typed}, with no schema"
            );
            Finding::new(codes::PARAMS_UNCHECKED, message)
        }
        ParamsCoverage::NotificationNotInventoried => {
            let message = format!(
                "unchecked: notification {method} has no schema in {label}, which does not \
                 inventory server-to-client notifications yet (coverage.notifications.inventoried \
                 is false)"
            );
            Finding::new(codes::PARAMS_UNCHECKED, message)
        }
        ParamsCoverage::NoInventory => {
            let message =
                format!("unchecked: {label} has no params schemas (no coverage.rpc_params)");
            Finding::new(codes::PARAMS_UNCHECKED, message)
        }
        ParamsCoverage::Unknown => {
            let message = format!(
                "unknown method {}: not in the rpc_params inventory of {label}",
                quoted(method)
            );
            Finding::new(codes::PARAMS_UNKNOWN_METHOD, message)
        }
    };
    Some(finding.at(""))
}

/// Schema findings on the params of `method` (pointers relative to them) under a covering
/// schema; a `host.event` payload is checked against the type `coverage.notifications.
/// host_event_payloads` names for its kind.
fn params_schema_findings(bundle: &WireBundle, schema: &str, params: &Value) -> Vec<Finding> {
    let Some(validator) = bundle.validator(schema) else {
        return Vec::new();
    };
    let mut findings = schema_findings(validator, params);
    if !findings.is_empty() || !schema.starts_with("notification.") {
        return findings;
    }
    let payloads = &bundle.document["coverage"]["notifications"]["host_event_payloads"];
    let payload_type = payloads
        .get(text_of(&params["kind"]))
        .and_then(Value::as_str);
    if let Some(validator) = payload_type.and_then(|name| bundle.validator(name)) {
        for mut finding in schema_findings(validator, &params["payload"]) {
            finding.pointer = Some(format!("/payload{}", finding.pointer.unwrap_or_default()));
            findings.push(finding);
        }
    }
    findings
}

/// Findings on the params of one request (`notification`: sent without an id), and the stats
/// `{"method", "coverage", "car_version"}`.
pub fn check_rpc_params(
    bundle: &WireBundle,
    method: &str,
    params: &Value,
    notification: bool,
) -> (Vec<Finding>, Value) {
    let coverage = params_coverage(bundle, method, notification);
    let findings = match &coverage {
        ParamsCoverage::Schema(schema) => params_schema_findings(bundle, schema, params),
        other => params_unchecked_finding(bundle, method, other)
            .into_iter()
            .collect(),
    };
    let stats = json!({
        "method": method,
        "coverage": coverage.category(),
        "car_version": bundle.version,
    });
    (findings, stats)
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC transcripts

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum IdKey {
    Integer(i128),
    Text(String),
}

struct Request {
    method: Option<String>,
    line: u64,
    rendered_id: String,
}

struct Response {
    line: u64,
    rendered_id: String,
    /// The `result` of a response that carries one (and no `error`).
    result: Option<Value>,
}

#[derive(Default)]
struct TranscriptCounts {
    blank_lines: u64,
    messages: u64,
    requests: u64,
    notifications: u64,
    responses: u64,
    error_responses: u64,
    max_in_flight: u64,
}

/// Checks a JSONL JSON-RPC 2.0 transcript fed line by line, against one wire-schema bundle: the
/// one chosen, else the default until a `server.schema` result names another by its digest.
///
/// Memory is bounded by the ids in flight (requests awaiting a response, responses awaiting their
/// request) and the methods already reported unchecked, not by the transcript's length.
pub struct TranscriptChecker {
    bundle: &'static WireBundle,
    /// The bundle was chosen by the caller: a `server.schema` digest does not switch it.
    chosen: bool,
    /// Methods whose params were already reported unchecked or unknown (once per method).
    reported_params: HashSet<String>,
    params_validated: u64,
    wire_schema_digest: Option<String>,
    findings: Vec<Finding>,
    pending: HashMap<IdKey, Request>,
    orphans: HashMap<IdKey, Response>,
    catalog: Option<CatalogIndex>,
    line: u64,
    counts: TranscriptCounts,
}

fn json_whitespace_only(line: &[u8]) -> bool {
    line.iter()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
}

impl TranscriptChecker {
    /// `bundle`: the wire schema the caller chose, or `None` for the default, which a
    /// `server.schema` result may then replace.
    pub fn new(bundle: Option<&'static WireBundle>, wire_schema_digest: Option<String>) -> Self {
        TranscriptChecker {
            bundle: bundle.unwrap_or_else(validate::default_wire_bundle),
            chosen: bundle.is_some(),
            reported_params: HashSet::new(),
            params_validated: 0,
            wire_schema_digest,
            findings: Vec::new(),
            pending: HashMap::new(),
            orphans: HashMap::new(),
            catalog: None,
            line: 0,
            counts: TranscriptCounts::default(),
        }
    }

    fn add(&mut self, finding: Finding) {
        let line = finding.line.unwrap_or(self.line);
        self.findings.push(finding.on_line(line));
    }

    fn malformed(&mut self, message: &str, pointer: &str) {
        self.add(Finding::new(codes::MALFORMED_MESSAGE, message).at(pointer));
    }

    /// One line of the transcript, with or without its line end.
    pub fn feed_line(&mut self, raw: &[u8]) {
        self.line += 1;
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if json_whitespace_only(text) {
            self.counts.blank_lines += 1;
            return;
        }
        let message = match parse::parse_strict(text) {
            Ok(message) => message,
            Err(error) => {
                self.findings.push(line_error_finding(error, self.line));
                return;
            }
        };
        self.counts.messages += 1;
        let Value::Object(message) = message else {
            return self.malformed("a JSON-RPC message must be an object", "");
        };
        match message.get("jsonrpc") {
            None => self.malformed("missing \"jsonrpc\": \"2.0\"", ""),
            Some(version) if version.as_str() != Some("2.0") => {
                self.malformed("jsonrpc must be \"2.0\"", "/jsonrpc");
            }
            Some(_) => {}
        }
        if message.contains_key("method") {
            self.request(message);
        } else if message.contains_key("result") || message.contains_key("error") {
            self.response(message);
        } else {
            self.malformed(
                "neither a request (method) nor a response (result or error)",
                "",
            );
        }
    }

    fn id_key(&mut self, id: &Value) -> Option<(IdKey, String)> {
        match id {
            Value::String(text) => Some((IdKey::Text(text.clone()), quoted(text))),
            Value::Number(number) if number.is_i64() || number.is_u64() => {
                let value = integer(id)?;
                Some((IdKey::Integer(value), value.to_string()))
            }
            _ => {
                self.malformed("id must be a string or an integer", "/id");
                None
            }
        }
    }

    fn track_in_flight(&mut self) {
        let in_flight = (self.pending.len() + self.orphans.len()) as u64;
        self.counts.max_in_flight = self.counts.max_in_flight.max(in_flight);
    }

    fn request(&mut self, message: Map<String, Value>) {
        let method = match &message["method"] {
            Value::String(method) => Some(method.clone()),
            _ => {
                self.malformed("method must be a string", "/method");
                None
            }
        };
        if message.contains_key("result") || message.contains_key("error") {
            self.malformed("a request must not carry result or error", "");
        }
        match message.get("params") {
            Some(params) if !params.is_array() && !params.is_object() => {
                self.malformed("params must be an array or an object", "/params");
            }
            Some(params) => {
                if let Some(method) = &method {
                    self.check_params(method, params, !message.contains_key("id"));
                }
            }
            None => {}
        }
        let Some(id) = message.get("id") else {
            self.counts.notifications += 1;
            return;
        };
        self.counts.requests += 1;
        let Some((key, rendered_id)) = self.id_key(id) else {
            return;
        };
        if let Some(in_flight) = self.pending.get(&key) {
            let text = format!(
                "id {rendered_id} is already in flight (request on line {})",
                in_flight.line
            );
            return self.add(Finding::new(codes::DUPLICATE_ID_IN_FLIGHT, text).at("/id"));
        }
        let request = Request {
            method,
            line: self.line,
            rendered_id,
        };
        match self.orphans.remove(&key) {
            Some(response) => self.answer(&request, response),
            None => {
                self.pending.insert(key, request);
                self.track_in_flight();
            }
        }
    }

    fn response(&mut self, mut message: Map<String, Value>) {
        self.counts.responses += 1;
        let has_result = message.contains_key("result");
        let has_error = message.contains_key("error");
        if has_result && has_error {
            self.malformed("a response must carry either result or error, not both", "");
        }
        if has_error {
            self.counts.error_responses += 1;
            self.check_error_object(&message["error"]);
        }
        let Some(id) = message.get("id") else {
            return self.malformed("a response must carry an id", "");
        };
        if id.is_null() && has_error && !has_result {
            return; // the answer to a request whose id could not be read (JSON-RPC 2.0 §5)
        }
        let Some((key, rendered_id)) = self.id_key(id) else {
            return;
        };
        let result = if has_error {
            None
        } else {
            message.remove("result")
        };
        let response = Response {
            line: self.line,
            rendered_id,
            result,
        };
        if let Some(request) = self.pending.remove(&key) {
            return self.answer(&request, response);
        }
        if let Some(waiting) = self.orphans.get(&key) {
            let text = format!(
                "id {} is already awaiting its request (response on line {})",
                response.rendered_id, waiting.line
            );
            return self.add(Finding::new(codes::DUPLICATE_ID_IN_FLIGHT, text).at("/id"));
        }
        self.orphans.insert(key, response);
        self.track_in_flight();
    }

    /// A request's params against the bundle in effect; an unchecked or unknown method once.
    fn check_params(&mut self, method: &str, params: &Value, notification: bool) {
        let coverage = params_coverage(self.bundle, method, notification);
        if coverage == ParamsCoverage::NoInventory {
            return; // before CAR 0.60.0: results are all a transcript's bundle describes
        }
        if let ParamsCoverage::Schema(schema) = &coverage {
            self.params_validated += 1;
            for mut finding in params_schema_findings(self.bundle, schema, params) {
                finding.pointer = Some(format!("/params{}", finding.pointer.unwrap_or_default()));
                self.add(finding);
            }
        } else if !self.reported_params.contains(method) {
            if let Some(mut finding) = params_unchecked_finding(self.bundle, method, &coverage) {
                finding.pointer = Some("/method".to_owned());
                self.reported_params.insert(method.to_owned());
                self.add(finding);
            }
        }
    }

    /// A valid `server.schema` result names the wire schema the daemon speaks by its digest:
    /// the matching bundle applies from here on, unless the caller chose one.
    fn select_bundle(&mut self, result: &Value, line: u64) {
        let digest = text_of(&result["digest"]);
        match validate::wire_bundle_with_digest(digest) {
            Some(bundle) if std::ptr::eq(bundle, self.bundle) => {}
            Some(bundle) if self.chosen => {
                let message = format!(
                    "server.schema names {} (digest {}), but the transcript is checked against \
                     {} as chosen",
                    bundle.label(),
                    quoted(digest),
                    self.bundle.label()
                );
                self.add(
                    Finding::new(codes::SCHEMA_DIGEST_OTHER_BUNDLE, message)
                        .at("/result/digest")
                        .on_line(line),
                );
            }
            Some(bundle) => self.bundle = bundle,
            None => {
                let known: Vec<String> = validate::wire_bundles()
                    .iter()
                    .map(|bundle| format!("{} {}", bundle.version, bundle.digest))
                    .collect();
                let message = format!(
                    "server.schema digest {} is no bundled wire schema (known: {}); checked \
                     against {}",
                    quoted(digest),
                    known.join(", "),
                    self.bundle.label()
                );
                self.add(
                    Finding::new(codes::UNKNOWN_SCHEMA_DIGEST, message)
                        .at("/result/digest")
                        .on_line(line),
                );
            }
        }
    }

    fn check_error_object(&mut self, error: &Value) {
        let Some(error) = error.as_object() else {
            return self.add(
                Finding::new(codes::MALFORMED_ERROR_OBJECT, "error must be an object").at("/error"),
            );
        };
        let problem = |message: &str, pointer: &str| {
            Finding::new(codes::MALFORMED_ERROR_OBJECT, message).at(pointer)
        };
        let mut found = Vec::new();
        match error.get("code") {
            None => found.push(problem("error has no code", "/error")),
            Some(code) if !(code.is_i64() || code.is_u64()) => {
                found.push(problem("error.code must be an integer", "/error/code"));
            }
            Some(_) => {}
        }
        match error.get("message") {
            None => found.push(problem("error has no message", "/error")),
            Some(message) if !message.is_string() => {
                found.push(problem("error.message must be a string", "/error/message"));
            }
            Some(_) => {}
        }
        for member in error
            .keys()
            .filter(|member| !ERROR_OBJECT_MEMBERS.contains(&member.as_str()))
        {
            let message = format!("unexpected member {} in error", quoted(member));
            found.push(problem(&message, &format!("/error{}", token(member))));
        }
        for finding in found {
            self.add(finding);
        }
    }

    fn answer(&mut self, request: &Request, response: Response) {
        let (Some(method), Some(result)) = (&request.method, response.result) else {
            return;
        };
        if method == "server.handshake" && !self.chosen {
            // car-server-core handler.rs answers with `server_version: CARGO_PKG_VERSION`: the
            // daemon's release, whose bundle then checks the session (the handshake included).
            if let Some(bundle) =
                validate::wire_bundle_of_release(text_of(&result["server_version"]))
            {
                self.bundle = bundle;
            }
        }
        let (findings, valid) = result_findings(
            self.bundle,
            method,
            &result,
            self.catalog.as_ref(),
            self.wire_schema_digest.as_deref(),
        );
        for mut finding in findings {
            finding.pointer = Some(format!("/result{}", finding.pointer.unwrap_or_default()));
            self.add(finding.on_line(response.line));
        }
        if valid && method == SNAPSHOT_METHOD {
            self.catalog = Some(CatalogIndex::of_valid_snapshot(&result));
        }
        if valid && method == "server.schema" {
            self.select_bundle(&result, response.line);
        }
    }

    /// The findings in line order, and the stats.
    pub fn finish(mut self) -> (Vec<Finding>, Value) {
        let pending = std::mem::take(&mut self.pending);
        let orphans = std::mem::take(&mut self.orphans);
        for request in pending.values() {
            let method = request.method.as_deref().unwrap_or("None");
            let message = format!(
                "request {} ({method}) was never answered",
                request.rendered_id
            );
            self.add(
                Finding::new(codes::REQUEST_UNANSWERED, message)
                    .at("/id")
                    .on_line(request.line),
            );
        }
        for response in orphans.values() {
            let message = format!("response to id {} has no request", response.rendered_id);
            self.add(
                Finding::new(codes::RESPONSE_WITHOUT_REQUEST, message)
                    .at("/id")
                    .on_line(response.line),
            );
        }
        // Stable: findings of one line keep the order they were found in.
        self.findings
            .sort_by_key(|finding| finding.line.unwrap_or(0));
        let counts = &self.counts;
        let stats = json!({
            "lines": self.line,
            "blank_lines": counts.blank_lines,
            "messages": counts.messages,
            "requests": counts.requests,
            "notifications": counts.notifications,
            "responses": counts.responses,
            "error_responses": counts.error_responses,
            "max_in_flight": counts.max_in_flight,
            "unanswered": pending.len(),
            "unmatched_responses": orphans.len(),
            "params_validated": self.params_validated,
            "car_version": self.bundle.version,
        });
        (self.findings, stats)
    }

    /// Feeds up to `max_lines` lines of `reader` (split at `\n`); true once it is exhausted.
    /// Callers that must stay interruptible feed a large input slice by slice.
    pub fn feed_from(&mut self, reader: &mut impl BufRead, max_lines: usize) -> io::Result<bool> {
        let mut line = Vec::new();
        for _ in 0..max_lines {
            if reader.read_until(b'\n', &mut line)? == 0 {
                return Ok(true);
            }
            self.feed_line(&line);
            line.clear();
        }
        Ok(false)
    }
}

/// A buffered reader over a transcript file.
pub fn open_transcript(path: &Path) -> io::Result<BufReader<File>> {
    Ok(BufReader::with_capacity(1 << 16, File::open(path)?))
}

pub fn check_transcript_file(
    path: &Path,
    bundle: Option<&'static WireBundle>,
    wire_schema_digest: Option<String>,
) -> io::Result<(Vec<Finding>, Value)> {
    let mut reader = open_transcript(path)?;
    let mut checker = TranscriptChecker::new(bundle, wire_schema_digest);
    while !checker.feed_from(&mut reader, usize::MAX)? {}
    Ok(checker.finish())
}

// ---------------------------------------------------------------------------------------------
// The wire-schema bundle

/// Lowercase hex sha256 of the file's exact bytes (the bundle's `digest.scope`).
pub fn wire_schema_digest(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 1 << 16];
    loop {
        let read = file.read(&mut block)?;
        if read == 0 {
            break;
        }
        hasher.update(&block[..read]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn located(code: Code, message: impl Into<String>, pointer: impl Into<String>) -> Finding {
    Finding::new(code, message).at(pointer)
}

fn string_list<'a>(
    container: &'a Map<String, Value>,
    member: &str,
    pointer: &str,
    findings: &mut Vec<Finding>,
) -> Option<Vec<&'a str>> {
    let list = container.get(member).and_then(Value::as_array);
    let strings: Option<Vec<&str>> = list.and_then(|list| list.iter().map(Value::as_str).collect());
    if strings.is_none() {
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            format!("{member} must be an array of strings"),
            pointer,
        ));
    }
    strings
}

fn sorted_and_unique(items: &[&str], pointer: &str, findings: &mut Vec<Finding>) {
    let mut seen = HashSet::new();
    let mut previous: Option<&str> = None;
    for (index, &item) in items.iter().enumerate() {
        if seen.contains(item) {
            let message = format!("{} is listed twice", quoted(item));
            findings.push(located(
                codes::COVERAGE_LISTED_TWICE,
                message,
                format!("{pointer}/{index}"),
            ));
        } else if let Some(previous) = previous.filter(|&previous| item < previous) {
            let message = format!(
                "not sorted: {} comes after {}",
                quoted(item),
                quoted(previous)
            );
            findings.push(located(
                codes::COVERAGE_UNSORTED,
                message,
                format!("{pointer}/{index}"),
            ));
        }
        seen.insert(item);
        previous = Some(item);
    }
}

type Partition<'a> = (Vec<&'a str>, Vec<&'a str>);

/// A covered/uncovered/total partition: sorted, unique, disjoint, adding up to total.
fn partition<'a>(
    coverage: &'a Map<String, Value>,
    member: &str,
    findings: &mut Vec<Finding>,
) -> Option<Partition<'a>> {
    let pointer = format!("/coverage/{member}");
    let Some(part) = coverage.get(member).and_then(Value::as_object) else {
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            format!("coverage.{member} must be an object"),
            pointer,
        ));
        return None;
    };
    let covered = string_list(part, "covered", &format!("{pointer}/covered"), findings);
    let uncovered = string_list(part, "uncovered", &format!("{pointer}/uncovered"), findings);
    let total = part
        .get("total")
        .and_then(integer)
        .filter(|total| *total >= 0);
    if total.is_none() {
        let message = format!("coverage.{member}.total must be a non-negative integer");
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            message,
            format!("{pointer}/total"),
        ));
    }
    let (covered, uncovered) = (covered?, uncovered?);
    sorted_and_unique(&covered, &format!("{pointer}/covered"), findings);
    sorted_and_unique(&uncovered, &format!("{pointer}/uncovered"), findings);
    let covered_set: HashSet<&str> = covered.iter().copied().collect();
    for (index, item) in uncovered.iter().enumerate() {
        if covered_set.contains(item) {
            let message = format!("{} is both covered and uncovered", quoted(item));
            findings.push(located(
                codes::COVERAGE_LISTED_TWICE,
                message,
                format!("{pointer}/uncovered/{index}"),
            ));
        }
    }
    let listed = (covered.len() + uncovered.len()) as i128;
    if let Some(total) = total.filter(|total| *total != listed) {
        let message = format!(
            "total is {total} but covered ({}) + uncovered ({}) is {listed}",
            covered.len(),
            uncovered.len()
        );
        findings.push(located(
            codes::COVERAGE_TOTAL_MISMATCH,
            message,
            format!("{pointer}/total"),
        ));
    }
    Some((covered, uncovered))
}

/// Every string of every `enum` in `schema` and its `oneOf`/`anyOf` branches, in document order.
fn enum_strings<'a>(schema: &'a Value, into: &mut Vec<&'a str>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        into.extend(values.iter().filter_map(Value::as_str));
    }
    for keyword in ["oneOf", "anyOf"] {
        for branch in schema
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            enum_strings(branch, into);
        }
    }
}

fn event_kinds(schemas: &Map<String, Value>) -> Option<Vec<&str>> {
    let kind = schemas
        .get("journal.event")?
        .get("definitions")?
        .get("EventKind")?;
    let mut kinds = Vec::new();
    enum_strings(kind, &mut kinds);
    (!kinds.is_empty()).then_some(kinds)
}

fn check_schemas(schemas: &Map<String, Value>, findings: &mut Vec<Finding>) {
    let options = CompileOptions {
        validate_formats: Some(true),
        resources: Vec::new(),
    };
    for (name, schema) in schemas {
        let pointer = format!("/schemas{}", token(name));
        if schema.get("$schema").and_then(Value::as_str) != Some(DRAFT_07) || !schema.is_object() {
            let message = format!(
                "schema {} does not declare $schema {}",
                quoted(name),
                quoted(DRAFT_07)
            );
            findings.push(located(codes::BUNDLE_SCHEMA_INVALID, message, pointer));
            continue;
        }
        if let Err(error) = SchemaValidator::compile(schema, &options) {
            let message = format!(
                "schema {} does not compile: {} {}",
                quoted(name),
                error.code,
                error.message
            );
            findings.push(located(
                codes::BUNDLE_SCHEMA_INVALID,
                message,
                pointer + &error.schema_pointer,
            ));
        }
    }
}

fn check_covered_schemas(
    covered: &[&str],
    schemas: &Map<String, Value>,
    findings: &mut Vec<Finding>,
) {
    sorted_and_unique(covered, "/coverage/covered", findings);
    for (index, name) in covered.iter().enumerate() {
        if !schemas.contains_key(*name) {
            let message = format!(
                "coverage.covered lists {}, which is not in schemas",
                quoted(name)
            );
            findings.push(located(
                codes::COVERED_SCHEMAS_MISMATCH,
                message,
                format!("/coverage/covered/{index}"),
            ));
        }
    }
    let listed: HashSet<&str> = covered.iter().copied().collect();
    for name in schemas
        .keys()
        .filter(|name| !listed.contains(name.as_str()))
    {
        let message = format!("schema {} is not listed in coverage.covered", quoted(name));
        findings.push(located(
            codes::COVERED_SCHEMAS_MISMATCH,
            message,
            format!("/schemas{}", token(name)),
        ));
    }
}

fn check_rpc_coverage(methods: &[&str], schemas: &Map<String, Value>, findings: &mut Vec<Finding>) {
    for (index, method) in methods.iter().enumerate() {
        if !schemas.contains_key(&format!("rpc.{method}.result")) {
            let message = format!(
                "covered RPC method {} has no rpc.{method}.result schema",
                quoted(method)
            );
            let pointer = format!("/coverage/rpc_results/covered/{index}");
            findings.push(located(codes::RPC_COVERAGE_MISMATCH, message, pointer));
        }
    }
    let covered: HashSet<&str> = methods.iter().copied().collect();
    for name in schemas.keys() {
        let method = name
            .strip_prefix("rpc.")
            .and_then(|rest| rest.strip_suffix(".result"));
        if method.is_some_and(|method| !covered.contains(method)) {
            let message = format!(
                "schema {} is not in coverage.rpc_results.covered",
                quoted(name)
            );
            findings.push(located(
                codes::RPC_COVERAGE_MISMATCH,
                message,
                format!("/schemas{}", token(name)),
            ));
        }
    }
}

fn check_event_coverage(partition: &Partition<'_>, kinds: &[&str], findings: &mut Vec<Finding>) {
    let pointer = "/coverage/journal_event_payloads";
    let listed: HashSet<&str> = partition.0.iter().chain(&partition.1).copied().collect();
    for kind in kinds.iter().filter(|kind| !listed.contains(*kind)) {
        let message = format!(
            "event kind {} is in neither covered nor uncovered",
            quoted(kind)
        );
        findings.push(located(
            codes::EVENT_KIND_COVERAGE_MISMATCH,
            message,
            pointer,
        ));
    }
    let known: HashSet<&str> = kinds.iter().copied().collect();
    for (member, items) in [("covered", &partition.0), ("uncovered", &partition.1)] {
        for (index, item) in items
            .iter()
            .enumerate()
            .filter(|(_, item)| !known.contains(*item))
        {
            let message = format!("{} is not an EventKind of journal.event", quoted(item));
            findings.push(located(
                codes::EVENT_KIND_COVERAGE_MISMATCH,
                message,
                format!("{pointer}/{member}/{index}"),
            ));
        }
    }
}

/// `coverage.rpc_params` (CAR 0.60.0 on), as CAR's own test `every_daemon_method_has_a_params_entry`
/// (car-server-core wire_schema.rs) holds it: four sorted, disjoint buckets that together are
/// exactly the RPC inventory of `rpc_results` and add up to `total`; a covered method has its
/// `rpc.<method>.params` schema and every such schema's method is covered.
fn check_params_coverage(
    params: &Map<String, Value>,
    rpc_methods: &HashSet<&str>,
    schemas: &Map<String, Value>,
    findings: &mut Vec<Finding>,
) {
    let pointer = "/coverage/rpc_params";
    let covered = string_list(params, "covered", &format!("{pointer}/covered"), findings);
    let not_read = string_list(params, "not_read", &format!("{pointer}/not_read"), findings);
    let uncovered = params.get("uncovered").and_then(Value::as_object);
    let typed = uncovered
        .and_then(|uncovered| uncovered.get("typed_without_schema"))
        .and_then(Value::as_object)
        .filter(|typed| typed.values().all(Value::is_string));
    if typed.is_none() {
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            "uncovered.typed_without_schema must be an object of Rust type names",
            format!("{pointer}/uncovered/typed_without_schema"),
        ));
    }
    let empty = Map::new();
    let unresolved = string_list(
        uncovered.unwrap_or(&empty),
        "unresolved",
        &format!("{pointer}/uncovered/unresolved"),
        findings,
    );
    let total = params.get("total").and_then(integer);
    if total.is_none() {
        let message = "coverage.rpc_params.total must be a non-negative integer";
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            message,
            format!("{pointer}/total"),
        ));
    }
    let (Some(covered), Some(not_read), Some(typed), Some(unresolved)) =
        (covered, not_read, typed, unresolved)
    else {
        return;
    };
    let typed: Vec<&str> = typed.keys().map(String::as_str).collect();
    let buckets: [(&str, &Vec<&str>); 4] = [
        ("covered", &covered),
        ("not_read", &not_read),
        ("uncovered/typed_without_schema", &typed),
        ("uncovered/unresolved", &unresolved),
    ];
    let mut bucket_of: HashMap<&str, &str> = HashMap::new();
    for (bucket, items) in buckets {
        let at = format!("{pointer}/{bucket}");
        sorted_and_unique(items, &at, findings);
        for (index, &item) in items.iter().enumerate() {
            match bucket_of.get(item) {
                Some(&other) if other != bucket => {
                    let message = format!("{} is in both {other} and {bucket}", quoted(item));
                    findings.push(located(
                        codes::COVERAGE_LISTED_TWICE,
                        message,
                        format!("{at}/{index}"),
                    ));
                }
                Some(_) => {}
                None => {
                    bucket_of.insert(item, bucket);
                }
            }
            if !rpc_methods.contains(item) {
                let message = format!(
                    "{} is not in the RPC inventory of coverage.rpc_results",
                    quoted(item)
                );
                findings.push(located(
                    codes::PARAMS_COVERAGE_MISMATCH,
                    message,
                    format!("{at}/{index}"),
                ));
            }
        }
    }
    let mut missing: Vec<&str> = rpc_methods
        .iter()
        .copied()
        .filter(|method| !bucket_of.contains_key(method))
        .collect();
    missing.sort_unstable();
    for method in missing {
        let message = format!("RPC method {} is in no rpc_params bucket", quoted(method));
        findings.push(located(codes::PARAMS_COVERAGE_MISMATCH, message, pointer));
    }
    let listed = (covered.len() + not_read.len() + typed.len() + unresolved.len()) as i128;
    if let Some(total) = total.filter(|total| *total != listed) {
        let message = format!("total is {total} but the four buckets list {listed}");
        findings.push(located(
            codes::COVERAGE_TOTAL_MISMATCH,
            message,
            format!("{pointer}/total"),
        ));
    }
    for (index, method) in covered.iter().enumerate() {
        if !schemas.contains_key(&format!("rpc.{method}.params")) {
            let message = format!(
                "covered params of {} have no rpc.{method}.params schema",
                quoted(method)
            );
            findings.push(located(
                codes::PARAMS_COVERAGE_MISMATCH,
                message,
                format!("{pointer}/covered/{index}"),
            ));
        }
    }
    let covered: HashSet<&str> = covered.iter().copied().collect();
    for name in schemas.keys() {
        let method = name
            .strip_prefix("rpc.")
            .and_then(|rest| rest.strip_suffix(".params"));
        if method.is_some_and(|method| !covered.contains(method)) {
            let message = format!(
                "schema {} is not in coverage.rpc_params.covered",
                quoted(name)
            );
            findings.push(located(
                codes::PARAMS_COVERAGE_MISMATCH,
                message,
                format!("/schemas{}", token(name)),
            ));
        }
    }
}

/// `coverage.notifications` (CAR 0.60.0 on): each covered notification and each host-event
/// payload type names a schema of the bundle, every `notification.*` schema is covered, and
/// `inventoried` is a boolean.
fn check_notification_coverage(
    notifications: &Map<String, Value>,
    schemas: &Map<String, Value>,
    findings: &mut Vec<Finding>,
) {
    let pointer = "/coverage/notifications";
    if !notifications
        .get("inventoried")
        .is_some_and(Value::is_boolean)
    {
        let message = "coverage.notifications.inventoried must be true or false";
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            message,
            format!("{pointer}/inventoried"),
        ));
    }
    let at = format!("{pointer}/covered");
    if let Some(covered) = string_list(notifications, "covered", &at, findings) {
        sorted_and_unique(&covered, &at, findings);
        for (index, name) in covered.iter().enumerate() {
            if !schemas.contains_key(*name) {
                let message = format!("covered notification {} has no schema", quoted(name));
                findings.push(located(
                    codes::NOTIFICATION_COVERAGE_MISMATCH,
                    message,
                    format!("{at}/{index}"),
                ));
            }
        }
        let covered: HashSet<&str> = covered.into_iter().collect();
        for name in schemas
            .keys()
            .filter(|name| name.starts_with("notification.") && !covered.contains(name.as_str()))
        {
            let message = format!(
                "schema {} is not in coverage.notifications.covered",
                quoted(name)
            );
            findings.push(located(
                codes::NOTIFICATION_COVERAGE_MISMATCH,
                message,
                format!("/schemas{}", token(name)),
            ));
        }
    }
    let payloads = notifications
        .get("host_event_payloads")
        .and_then(Value::as_object);
    let Some(payloads) = payloads else {
        let message = "coverage.notifications.host_event_payloads must be an object";
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            message,
            format!("{pointer}/host_event_payloads"),
        ));
        return;
    };
    for (kind, name) in payloads {
        if !name.as_str().is_some_and(|name| schemas.contains_key(name)) {
            let message = format!(
                "host event kind {} names {}, which is not a schema of the bundle",
                quoted(kind),
                name
            );
            findings.push(located(
                codes::NOTIFICATION_COVERAGE_MISMATCH,
                message,
                format!("{pointer}/host_event_payloads{}", token(kind)),
            ));
        }
    }
}

/// Every integrity problem of a parsed wire-schema bundle.
pub fn bundle_findings(bundle: &Value) -> Vec<Finding> {
    let Some(bundle) = bundle.as_object() else {
        return vec![located(
            codes::MALFORMED_BUNDLE,
            "the wire-schema bundle must be an object",
            "",
        )];
    };
    let mut findings = Vec::new();
    if bundle.get("format").and_then(Value::as_str) != Some(WIRE_FORMAT) {
        let pointer = if bundle.contains_key("format") {
            "/format"
        } else {
            ""
        };
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            format!("format must be {}", quoted(WIRE_FORMAT)),
            pointer,
        ));
    }
    if bundle.get("json_schema_draft").and_then(Value::as_str) != Some(DRAFT_07) {
        let pointer = if bundle.contains_key("json_schema_draft") {
            "/json_schema_draft"
        } else {
            ""
        };
        let message = format!("json_schema_draft must be {}", quoted(DRAFT_07));
        findings.push(located(codes::MALFORMED_BUNDLE, message, pointer));
    }
    let empty = Map::new();
    let schemas = match bundle.get("schemas").and_then(Value::as_object) {
        Some(schemas) => schemas,
        None => {
            findings.push(located(
                codes::MALFORMED_BUNDLE,
                "schemas must be an object",
                "/schemas",
            ));
            &empty
        }
    };
    check_schemas(schemas, &mut findings);
    let Some(coverage) = bundle.get("coverage").and_then(Value::as_object) else {
        findings.push(located(
            codes::MALFORMED_BUNDLE,
            "coverage must be an object",
            "/coverage",
        ));
        return findings;
    };
    if let Some(covered) = string_list(coverage, "covered", "/coverage/covered", &mut findings) {
        check_covered_schemas(&covered, schemas, &mut findings);
    }
    if let Some((methods, others)) = partition(coverage, "rpc_results", &mut findings) {
        check_rpc_coverage(&methods, schemas, &mut findings);
        if let Some(params) = coverage.get("rpc_params") {
            match params.as_object() {
                Some(params) => {
                    let inventory = methods.iter().chain(&others).copied().collect();
                    check_params_coverage(params, &inventory, schemas, &mut findings);
                }
                None => findings.push(located(
                    codes::MALFORMED_BUNDLE,
                    "coverage.rpc_params must be an object",
                    "/coverage/rpc_params",
                )),
            }
        }
    }
    if let Some(notifications) = coverage.get("notifications") {
        match notifications.as_object() {
            Some(notifications) => {
                check_notification_coverage(notifications, schemas, &mut findings);
            }
            None => findings.push(located(
                codes::MALFORMED_BUNDLE,
                "coverage.notifications must be an object",
                "/coverage/notifications",
            )),
        }
    }
    let events = partition(coverage, "journal_event_payloads", &mut findings);
    match (event_kinds(schemas), events) {
        (None, _) => {
            let message = "journal.event has no EventKind enum (definitions.EventKind)";
            findings.push(located(
                codes::EVENT_KIND_COVERAGE_MISMATCH,
                message,
                "/schemas/journal.event",
            ));
        }
        (Some(kinds), Some(events)) => check_event_coverage(&events, &kinds, &mut findings),
        (Some(_), None) => {}
    }
    findings
}

/// The integrity findings of the wire-schema file at `path`, and the stats `{"digest", "schemas",
/// "car_version"}` (the bundled release with these exact bytes, else null).
pub fn check_wire_schema(path: &Path) -> io::Result<(Vec<Finding>, Value)> {
    let data = std::fs::read(path)?;
    let digest = hex(&Sha256::digest(&data));
    let bundled_version = validate::wire_bundle_with_digest(&digest).map(|bundle| bundle.version);
    let bundle = match parse::parse_strict(&data) {
        Ok(bundle) => bundle,
        Err(error) => {
            let stats = json!({"digest": digest, "schemas": 0, "car_version": bundled_version});
            return Ok((vec![Finding::from(error)], stats));
        }
    };
    let schemas = bundle
        .get("schemas")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    Ok((
        bundle_findings(&bundle),
        json!({"digest": digest, "schemas": schemas, "car_version": bundled_version}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|finding| finding.code).collect()
    }

    #[test]
    fn every_bundled_wire_schema_passes_its_own_integrity_check() {
        for bundle in validate::wire_bundles() {
            assert_eq!(
                bundle_findings(&bundle.document),
                Vec::new(),
                "{}",
                bundle.version
            );
        }
    }

    #[test]
    fn a_params_inventory_that_misses_a_method_is_caught() {
        let mut bundle = validate::wire_bundle_named("0.60.0")
            .unwrap()
            .document
            .clone();
        let params = &mut bundle["coverage"]["rpc_params"];
        params["not_read"].as_array_mut().unwrap().remove(0);
        assert_eq!(
            codes(&bundle_findings(&bundle)),
            [
                codes::PARAMS_COVERAGE_MISMATCH.id,
                codes::COVERAGE_TOTAL_MISMATCH.id
            ]
        );
    }

    #[test]
    fn unsorted_and_miscounted_rpc_coverage_is_caught() {
        let mut bundle = validate::wire_bundle().clone();
        let rpc = &mut bundle["coverage"]["rpc_results"];
        rpc["covered"].as_array_mut().unwrap().swap(0, 1);
        rpc["total"] = json!(1);
        assert_eq!(
            codes(&bundle_findings(&bundle)),
            [
                codes::COVERAGE_UNSORTED.id,
                codes::COVERAGE_TOTAL_MISMATCH.id
            ]
        );
    }

    #[test]
    fn params_coverage_names_the_inventory_category() {
        let bundle = validate::wire_bundle_named("0.60.0").unwrap();
        let category = |method: &str, notification: bool| {
            params_coverage(bundle, method, notification).category()
        };
        assert_eq!(category("mail.send", false), "covered");
        assert_eq!(category("host.event", true), "covered");
        assert_eq!(category("host.subscribe", false), "not_read");
        assert_eq!(category("verify", false), "typed_without_schema");
        assert_eq!(category("state.set", false), "unresolved");
        assert_eq!(category("x.pushed", true), "notification_not_inventoried");
        assert_eq!(category("x.pushed", false), "unknown");
        let old = validate::wire_bundle_named("0.58.0").unwrap();
        assert_eq!(
            params_coverage(old, "mail.send", false),
            ParamsCoverage::NoInventory
        );
    }

    #[test]
    fn the_handshake_release_then_an_unknown_digest() {
        let mut checker = TranscriptChecker::new(None, None);
        checker.feed_line(br#"{"jsonrpc":"2.0","id":1,"method":"server.handshake"}"#);
        checker.feed_line(br#"{"jsonrpc":"2.0","id":1,"result":{"server_version":"0.58.0"}}"#);
        checker.feed_line(br#"{"jsonrpc":"2.0","id":2,"method":"server.schema"}"#);
        let schema = json!({"jsonrpc": "2.0", "id": 2, "result": {
            "car_version": "0.61.0", "digest": "0".repeat(64), "digest_algorithm": "sha256",
            "schema": {}}});
        checker.feed_line(schema.to_string().as_bytes());
        let (findings, stats) = checker.finish();
        // The 0.58.0 handshake result lacks most members: checked against 0.58.0, not the default.
        assert!(findings[..findings.len() - 1]
            .iter()
            .all(|f| f.code == "PF101"));
        assert_eq!(
            findings.last().map(|f| f.code),
            Some(codes::UNKNOWN_SCHEMA_DIGEST.id)
        );
        assert_eq!(stats["car_version"], "0.58.0");
    }

    #[test]
    fn catalog_revision_is_the_digest_of_the_rows() {
        let mut findings = Vec::new();
        check_catalog_snapshot(
            &json!({"catalog_revision": "r", "models": []}),
            &mut findings,
        );
        assert_eq!(codes(&findings), [codes::CATALOG_REVISION_WRONG.id]);
        let empty = canonical::digest_hex(&json!([])).unwrap();
        findings.clear();
        check_catalog_snapshot(
            &json!({"catalog_revision": empty, "models": []}),
            &mut findings,
        );
        assert_eq!(findings, Vec::new());
    }

    #[test]
    fn tools_list_count_must_match() {
        let result = json!({"count": 2, "tools": []});
        let bundle = validate::default_wire_bundle();
        let (findings, valid) = result_findings(bundle, "tools.list", &result, None, None);
        assert!(valid);
        assert_eq!(codes(&findings), [codes::COUNT_MISMATCH.id]);
    }

    #[test]
    fn example_session_passes_clean() {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/transcripts/session.jsonl");
        let (findings, stats) = check_transcript_file(&example, None, None).unwrap();
        assert_eq!(findings, Vec::new());
        assert_eq!(stats["messages"], 41);
    }

    #[test]
    fn transcript_pairs_responses_before_requests() {
        let mut checker = TranscriptChecker::new(None, None);
        checker.feed_line(br#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#);
        checker.feed_line(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"state.set\"}\n");
        checker.feed_line(br#"{"jsonrpc":"2.0","id":2,"method":"state.set"}"#);
        let (findings, stats) = checker.finish();
        assert_eq!(codes(&findings), [codes::REQUEST_UNANSWERED.id]);
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(stats["max_in_flight"], 1);
    }
}
