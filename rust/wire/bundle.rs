//! The wire-schema bundle's own integrity (format, draft, every schema compiles, the coverage
//! inventories sorted, disjoint and complete), and the digest that names a bundle file.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::shared::{integer, quoted, token};
use crate::codes::{self, Code};
use crate::parse;
use crate::report::Finding;
use crate::validate::{self, CompileOptions, SchemaValidator};

pub const WIRE_FORMAT: &str = "car.wire-schema.v1";
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

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
        ..Default::default()
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
    let code = codes::RPC_COVERAGE_MISMATCH;
    check_rpc_schemas_listed(schemas, "result", &covered, "rpc_results", code, findings);
}

/// A finding for each `rpc.<method>.<part>` schema (`part`: `result` or `params`) whose method
/// `coverage.<list>.covered` does not list.
fn check_rpc_schemas_listed(
    schemas: &Map<String, Value>,
    part: &str,
    covered: &HashSet<&str>,
    list: &str,
    code: Code,
    findings: &mut Vec<Finding>,
) {
    let suffix = format!(".{part}");
    for name in schemas.keys() {
        let method = name
            .strip_prefix("rpc.")
            .and_then(|rest| rest.strip_suffix(suffix.as_str()));
        if method.is_some_and(|method| !covered.contains(method)) {
            let message = format!("schema {} is not in coverage.{list}.covered", quoted(name));
            findings.push(located(code, message, format!("/schemas{}", token(name))));
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
    let code = codes::PARAMS_COVERAGE_MISMATCH;
    check_rpc_schemas_listed(schemas, "params", &covered, "rpc_params", code, findings);
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
    use super::super::shared::codes_of;
    use super::*;

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
            codes_of(&bundle_findings(&bundle)),
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
            codes_of(&bundle_findings(&bundle)),
            [
                codes::COVERAGE_UNSORTED.id,
                codes::COVERAGE_TOTAL_MISMATCH.id
            ]
        );
    }
}
