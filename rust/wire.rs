//! CAR wire checks: RPC results (schema, then the invariants the schema descriptions state),
//! catalog snapshots and the cross-checks made against them, streaming JSON-RPC 2.0 transcripts,
//! and the wire-schema bundle's own integrity.
//!
//! `python/pairling_fast/_fallback/wire.py` mirrors this module rule for rule: the same codes,
//! pointers, lines, messages and stats. The rules are written down in `docs/wire.md`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::parse::{self, escape_pointer_token, JsonError};
use crate::report::Finding;
use crate::validate::{self, CompileOptions, SchemaValidator};

pub const WIRE_FORMAT: &str = "car.wire-schema.v1";
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

pub const UNCHECKED_METHOD: &str = "PF401";
pub const UNKNOWN_METHOD: &str = "PF402";
pub const COUNT_MISMATCH: &str = "PF403";
pub const USAGE_TOTAL_MISMATCH: &str = "PF404";
pub const POLL_PAYLOAD_MISSING: &str = "PF405";
pub const POLL_TERMINAL_CHUNK: &str = "PF406";
pub const CATALOG_UNSORTED: &str = "PF407";
pub const CATALOG_DUPLICATE_ID: &str = "PF408";
pub const ROW_DIGEST_MISMATCH: &str = "PF409";
pub const CATALOG_REVISION_MISMATCH: &str = "PF410";
pub const MODEL_NOT_IN_CATALOG: &str = "PF411";
pub const INFER_ROW_DIGEST_MISMATCH: &str = "PF412";
pub const CATALOG_NOT_A_SNAPSHOT: &str = "PF413";
pub const SCHEMA_DIGEST_MISMATCH: &str = "PF414";
pub const MALFORMED_MESSAGE: &str = "PF420";
pub const MALFORMED_ERROR_OBJECT: &str = "PF421";
pub const RESPONSE_WITHOUT_REQUEST: &str = "PF422";
pub const DUPLICATE_ID_IN_FLIGHT: &str = "PF423";
pub const REQUEST_UNANSWERED: &str = "PF424";
pub const BUNDLE_SCHEMA_INVALID: &str = "PF430";
pub const COVERED_SCHEMAS_MISMATCH: &str = "PF431";
pub const COVERAGE_UNSORTED: &str = "PF432";
pub const COVERAGE_TOTAL_MISMATCH: &str = "PF433";
pub const COVERAGE_LISTED_TWICE: &str = "PF434";
pub const RPC_COVERAGE_MISMATCH: &str = "PF435";
pub const EVENT_KIND_COVERAGE_MISMATCH: &str = "PF436";
pub const MALFORMED_BUNDLE: &str = "PF437";

const SNAPSHOT_METHOD: &str = "models.catalog_snapshot";
const TERMINAL_CHUNKS: [&str; 2] = ["done", "error"];
const ERROR_OBJECT_MEMBERS: [&str; 3] = ["code", "message", "data"];
const ROW_RULE_CAVEAT: &str =
    "the row rule is inferred from CAR's JCS digest convention, not yet confirmed against a CAR daemon";

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
    Finding::error(error.code, message)
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

/// `covered`, `uncovered` or `unknown`: where the bundled wire schema lists `method`.
pub fn rpc_coverage(method: &str) -> &'static str {
    let coverage = &validate::wire_bundle()["coverage"]["rpc_results"];
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

fn result_validator(method: &str) -> Option<&'static SchemaValidator> {
    validate::bundled_validator(&format!("car.rpc.{method}.result"))
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
    method: &str,
    result: &Value,
    catalog: Option<&CatalogIndex>,
    wire_schema_digest: Option<&str>,
) -> (Vec<Finding>, bool) {
    let Some(validator) = result_validator(method) else {
        let finding = if rpc_coverage(method) == "uncovered" {
            let message =
                format!("unchecked: no schema in car.wire-schema.v1 for {method} results");
            Finding::info(UNCHECKED_METHOD, message)
        } else {
            let message = format!(
                "unknown method {}: not in car.wire-schema.v1 coverage",
                quoted(method)
            );
            Finding::warning(UNKNOWN_METHOD, message)
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
    Some(Finding::error(COUNT_MISMATCH, message).at("/count"))
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
                .push(Finding::warning(USAGE_TOTAL_MISMATCH, message).at("/usage/total_tokens"));
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
        findings.push(Finding::error(CATALOG_REVISION_MISMATCH, message).at("/catalog_revision"));
    }
    let model_id = text_of(&result["resolved_model_id"]);
    let row_digest = text_of(&result["row_digest"]);
    match catalog.row_digests.get(model_id) {
        None => {
            let message = format!(
                "resolved_model_id {} is not in the catalog snapshot",
                quoted(model_id)
            );
            findings.push(Finding::error(MODEL_NOT_IN_CATALOG, message).at("/resolved_model_id"));
        }
        Some(expected) if expected != row_digest => {
            let message = format!(
                "row_digest {} differs from the snapshot row of {}: {}",
                quoted(row_digest),
                quoted(model_id),
                quoted(expected)
            );
            findings.push(Finding::error(INFER_ROW_DIGEST_MISMATCH, message).at("/row_digest"));
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
            Finding::error(
                POLL_PAYLOAD_MISSING,
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
            Finding::error(
                POLL_PAYLOAD_MISSING,
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
            findings
                .push(Finding::error(POLL_TERMINAL_CHUNK, message).at(format!("/chunks/{index}")));
        }
    }
    let last_pointer = format!("/chunks/{}", earlier.len());
    let last_kind = kind(last);
    match terminal_chunk_of_status(status) {
        Some(expected) if last_kind != expected => {
            let message =
                format!("status is {status} but the last chunk is {last_kind}, not {expected}");
            findings.push(Finding::error(POLL_TERMINAL_CHUNK, message).at(last_pointer));
        }
        None if status == "running" && TERMINAL_CHUNKS.contains(&last_kind.as_str()) => {
            let message =
                format!("status is running but the last chunk is the terminal {last_kind} chunk");
            findings.push(Finding::error(POLL_TERMINAL_CHUNK, message).at(last_pointer));
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
            findings.push(Finding::error(POLL_PAYLOAD_MISSING, message).at("/error"));
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
            findings.push(Finding::error(CATALOG_DUPLICATE_ID, message).at(id_pointer));
        } else if previous.is_some_and(|previous| model_id < previous) {
            let message = format!(
                "models are not sorted by id: {} comes after {}",
                quoted(model_id),
                quoted(previous.unwrap_or_default())
            );
            findings.push(Finding::error(CATALOG_UNSORTED, message).at(id_pointer));
        }
        seen.insert(model_id);
        previous = Some(model_id);
        let computed = match canonical::digest_hex(&row["model"]) {
            Ok(computed) => computed,
            Err(error) => {
                let pointer = format!("/models/{index}/model{}", error.pointer);
                findings.push(Finding::error(error.code, error.message).at(pointer));
                continue;
            }
        };
        let given = text_of(&row["row_digest"]);
        if computed != given {
            let message = format!(
                "row_digest {} is not sha256(JCS(model)) {}; {ROW_RULE_CAVEAT}",
                quoted(given),
                quoted(&computed)
            );
            findings.push(
                Finding::warning(ROW_DIGEST_MISMATCH, message)
                    .at(format!("/models/{index}/row_digest")),
            );
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
    Some(Finding::error(SCHEMA_DIGEST_MISMATCH, message).at("/digest"))
}

/// The catalog given alongside an `infer` result, if it is a valid snapshot; else a PF413.
fn catalog_argument(catalog: &Value) -> Result<CatalogIndex, Finding> {
    let validator = result_validator(SNAPSHOT_METHOD).expect("the snapshot schema is bundled");
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
    Err(Finding::error(CATALOG_NOT_A_SNAPSHOT, message))
}

/// Findings on one RPC result and the stats `{"method", "coverage"}`.
pub fn check_rpc_result(
    method: &str,
    result: &Value,
    catalog: Option<&Value>,
    wire_schema_digest: Option<&str>,
) -> (Vec<Finding>, Value) {
    let mut findings = Vec::new();
    let mut index = None;
    if let (Some(catalog), "infer") = (catalog, method) {
        match catalog_argument(catalog) {
            Ok(catalog) => index = Some(catalog),
            Err(finding) => findings.push(finding),
        }
    }
    findings.extend(result_findings(method, result, index.as_ref(), wire_schema_digest).0);
    (
        findings,
        json!({"method": method, "coverage": rpc_coverage(method)}),
    )
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

/// Checks a JSONL JSON-RPC 2.0 transcript fed line by line.
///
/// Memory is bounded by the ids in flight (requests awaiting a response, responses awaiting their
/// request), not by the transcript's length.
#[derive(Default)]
pub struct TranscriptChecker {
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
    pub fn new(wire_schema_digest: Option<String>) -> Self {
        TranscriptChecker {
            wire_schema_digest,
            ..Default::default()
        }
    }

    fn add(&mut self, finding: Finding) {
        let line = finding.line.unwrap_or(self.line);
        self.findings.push(finding.on_line(line));
    }

    fn malformed(&mut self, message: &str, pointer: &str) {
        self.add(Finding::error(MALFORMED_MESSAGE, message).at(pointer));
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
                self.malformed("jsonrpc must be \"2.0\"", "/jsonrpc")
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
        if message
            .get("params")
            .is_some_and(|params| !params.is_array() && !params.is_object())
        {
            self.malformed("params must be an array or an object", "/params");
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
            return self.add(Finding::error(DUPLICATE_ID_IN_FLIGHT, text).at("/id"));
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
            return self.add(Finding::error(DUPLICATE_ID_IN_FLIGHT, text).at("/id"));
        }
        self.orphans.insert(key, response);
        self.track_in_flight();
    }

    fn check_error_object(&mut self, error: &Value) {
        let Some(error) = error.as_object() else {
            return self.add(
                Finding::error(MALFORMED_ERROR_OBJECT, "error must be an object").at("/error"),
            );
        };
        let problem = |message: &str, pointer: &str| {
            Finding::error(MALFORMED_ERROR_OBJECT, message).at(pointer)
        };
        let mut found = Vec::new();
        match error.get("code") {
            None => found.push(problem("error has no code", "/error")),
            Some(code) if !(code.is_i64() || code.is_u64()) => {
                found.push(problem("error.code must be an integer", "/error/code"))
            }
            Some(_) => {}
        }
        match error.get("message") {
            None => found.push(problem("error has no message", "/error")),
            Some(message) if !message.is_string() => {
                found.push(problem("error.message must be a string", "/error/message"))
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
        let (findings, valid) = result_findings(
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
                Finding::warning(REQUEST_UNANSWERED, message)
                    .at("/id")
                    .on_line(request.line),
            );
        }
        for response in orphans.values() {
            let message = format!("response to id {} has no request", response.rendered_id);
            self.add(
                Finding::error(RESPONSE_WITHOUT_REQUEST, message)
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
    wire_schema_digest: Option<String>,
) -> io::Result<(Vec<Finding>, Value)> {
    let mut reader = open_transcript(path)?;
    let mut checker = TranscriptChecker::new(wire_schema_digest);
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

fn error_at(code: &'static str, message: impl Into<String>, pointer: impl Into<String>) -> Finding {
    Finding::error(code, message).at(pointer)
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
        findings.push(error_at(
            MALFORMED_BUNDLE,
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
            findings.push(error_at(
                COVERAGE_LISTED_TWICE,
                message,
                format!("{pointer}/{index}"),
            ));
        } else if let Some(previous) = previous.filter(|&previous| item < previous) {
            let message = format!(
                "not sorted: {} comes after {}",
                quoted(item),
                quoted(previous)
            );
            findings.push(error_at(
                COVERAGE_UNSORTED,
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
        findings.push(error_at(
            MALFORMED_BUNDLE,
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
        findings.push(error_at(
            MALFORMED_BUNDLE,
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
            findings.push(error_at(
                COVERAGE_LISTED_TWICE,
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
        findings.push(error_at(
            COVERAGE_TOTAL_MISMATCH,
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
            findings.push(error_at(BUNDLE_SCHEMA_INVALID, message, pointer));
            continue;
        }
        if let Err(error) = SchemaValidator::compile(schema, &options) {
            let message = format!(
                "schema {} does not compile: {} {}",
                quoted(name),
                error.code,
                error.message
            );
            findings.push(error_at(
                BUNDLE_SCHEMA_INVALID,
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
            findings.push(error_at(
                COVERED_SCHEMAS_MISMATCH,
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
        findings.push(error_at(
            COVERED_SCHEMAS_MISMATCH,
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
            findings.push(error_at(RPC_COVERAGE_MISMATCH, message, pointer));
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
            findings.push(error_at(
                RPC_COVERAGE_MISMATCH,
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
        findings.push(error_at(EVENT_KIND_COVERAGE_MISMATCH, message, pointer));
    }
    let known: HashSet<&str> = kinds.iter().copied().collect();
    for (member, items) in [("covered", &partition.0), ("uncovered", &partition.1)] {
        for (index, item) in items
            .iter()
            .enumerate()
            .filter(|(_, item)| !known.contains(*item))
        {
            let message = format!("{} is not an EventKind of journal.event", quoted(item));
            findings.push(error_at(
                EVENT_KIND_COVERAGE_MISMATCH,
                message,
                format!("{pointer}/{member}/{index}"),
            ));
        }
    }
}

/// Every integrity problem of a parsed wire-schema bundle.
pub fn bundle_findings(bundle: &Value) -> Vec<Finding> {
    let Some(bundle) = bundle.as_object() else {
        return vec![error_at(
            MALFORMED_BUNDLE,
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
        findings.push(error_at(
            MALFORMED_BUNDLE,
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
        findings.push(error_at(MALFORMED_BUNDLE, message, pointer));
    }
    let empty = Map::new();
    let schemas = match bundle.get("schemas").and_then(Value::as_object) {
        Some(schemas) => schemas,
        None => {
            findings.push(error_at(
                MALFORMED_BUNDLE,
                "schemas must be an object",
                "/schemas",
            ));
            &empty
        }
    };
    check_schemas(schemas, &mut findings);
    let Some(coverage) = bundle.get("coverage").and_then(Value::as_object) else {
        findings.push(error_at(
            MALFORMED_BUNDLE,
            "coverage must be an object",
            "/coverage",
        ));
        return findings;
    };
    if let Some(covered) = string_list(coverage, "covered", "/coverage/covered", &mut findings) {
        check_covered_schemas(&covered, schemas, &mut findings);
    }
    if let Some((methods, _)) = partition(coverage, "rpc_results", &mut findings) {
        check_rpc_coverage(&methods, schemas, &mut findings);
    }
    let events = partition(coverage, "journal_event_payloads", &mut findings);
    match (event_kinds(schemas), events) {
        (None, _) => {
            let message = "journal.event has no EventKind enum (definitions.EventKind)";
            findings.push(error_at(
                EVENT_KIND_COVERAGE_MISMATCH,
                message,
                "/schemas/journal.event",
            ));
        }
        (Some(kinds), Some(events)) => check_event_coverage(&events, &kinds, &mut findings),
        (Some(_), None) => {}
    }
    findings
}

/// The integrity findings of the wire-schema file at `path`, and the stats `{"digest", "schemas"}`.
pub fn check_wire_schema(path: &Path) -> io::Result<(Vec<Finding>, Value)> {
    let data = std::fs::read(path)?;
    let digest = hex(&Sha256::digest(&data));
    let bundle = match parse::parse_strict(&data) {
        Ok(bundle) => bundle,
        Err(error) => {
            return Ok((
                vec![Finding::from(error)],
                json!({"digest": digest, "schemas": 0}),
            ))
        }
    };
    let schemas = bundle
        .get("schemas")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    Ok((
        bundle_findings(&bundle),
        json!({"digest": digest, "schemas": schemas}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|finding| finding.code).collect()
    }

    #[test]
    fn bundled_wire_schema_passes_its_own_integrity_check() {
        assert_eq!(bundle_findings(validate::wire_bundle()), Vec::new());
    }

    #[test]
    fn unsorted_and_miscounted_rpc_coverage_is_caught() {
        let mut bundle = validate::wire_bundle().clone();
        let rpc = &mut bundle["coverage"]["rpc_results"];
        rpc["covered"].as_array_mut().unwrap().swap(0, 1);
        rpc["total"] = json!(1);
        assert_eq!(
            codes(&bundle_findings(&bundle)),
            [COVERAGE_UNSORTED, COVERAGE_TOTAL_MISMATCH]
        );
    }

    #[test]
    fn tools_list_count_must_match() {
        let result = json!({"count": 2, "tools": []});
        let (findings, valid) = result_findings("tools.list", &result, None, None);
        assert!(valid);
        assert_eq!(codes(&findings), [COUNT_MISMATCH]);
    }

    #[test]
    fn example_session_passes_clean() {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/transcripts/session.jsonl");
        let (findings, stats) = check_transcript_file(&example, None).unwrap();
        assert_eq!(findings, Vec::new());
        assert_eq!(stats["messages"], 41);
    }

    #[test]
    fn transcript_pairs_responses_before_requests() {
        let mut checker = TranscriptChecker::new(None);
        checker.feed_line(br#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#);
        checker.feed_line(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"state.set\"}\n");
        checker.feed_line(br#"{"jsonrpc":"2.0","id":2,"method":"state.set"}"#);
        let (findings, stats) = checker.finish();
        assert_eq!(codes(&findings), [REQUEST_UNANSWERED]);
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(stats["max_in_flight"], 1);
    }
}
