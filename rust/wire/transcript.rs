//! Streaming JSON-RPC 2.0 transcripts (JSONL, fed line by line): message shape, request and
//! response pairing by id, and each answered result and request's params checked by the RPC
//! rules under the wire-schema bundle in effect.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::{json, Map, Value};

use super::rpc::{
    params_coverage, params_schema_findings, params_unchecked_finding, result_findings,
    CatalogIndex, ParamsCoverage, SNAPSHOT_METHOD,
};
use super::shared::{integer, quoted, text_of, token};
use crate::codes;
use crate::parse::{self, JsonError};
use crate::report::Finding;
use crate::validate::{self, WireBundle};

const ERROR_OBJECT_MEMBERS: [&str; 3] = ["code", "message", "data"];

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
            for finding in params_schema_findings(self.bundle, schema, params) {
                self.add(finding.within("/params"));
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
        for finding in findings {
            self.add(finding.within("/result").on_line(response.line));
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

#[cfg(test)]
mod tests {
    use super::super::shared::codes_of;
    use super::*;

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
        assert_eq!(codes_of(&findings), [codes::REQUEST_UNANSWERED.id]);
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(stats["max_in_flight"], 1);
    }
}
