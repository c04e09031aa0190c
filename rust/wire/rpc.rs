//! CAR RPC results (schema, then the invariants the schema descriptions state), catalog
//! snapshots and the cross-checks made against them, and the params of RPC requests and
//! notifications under the bundle's params inventory.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::shared::{integer, quoted, text_of};
use crate::canonical;
use crate::codes;
use crate::report::Finding;
use crate::validate::{SchemaValidator, WireBundle};

pub(super) const SNAPSHOT_METHOD: &str = "models.catalog_snapshot";
const TERMINAL_CHUNKS: [&str; 2] = ["done", "error"];

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
    pub(super) fn of_valid_snapshot(snapshot: &Value) -> Self {
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
        if let Some(message) = digest_mismatch("row_digest", given, "model", &computed) {
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
        if let Some(message) = digest_mismatch("catalog_revision", given, "models", &computed) {
            findings
                .push(Finding::new(codes::CATALOG_REVISION_WRONG, message).at("/catalog_revision"));
        }
    }
}

/// The message when `field`'s `given` digest is not the `computed` sha256(JCS(`of`)): a row's
/// digest and the catalog revision are the same check on different parts of the snapshot.
fn digest_mismatch(field: &str, given: &str, of: &str, computed: &str) -> Option<String> {
    (given != computed).then(|| {
        format!(
            "{field} {} is not sha256(JCS({of})) {}",
            quoted(given),
            quoted(computed)
        )
    })
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
pub(super) fn params_unchecked_finding(
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
pub(super) fn params_schema_findings(
    bundle: &WireBundle,
    schema: &str,
    params: &Value,
) -> Vec<Finding> {
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
        for finding in schema_findings(validator, &params["payload"]) {
            findings.push(finding.within("/payload"));
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

#[cfg(test)]
mod tests {
    use super::super::shared::codes_of;
    use super::*;
    use crate::validate;

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
    fn catalog_revision_is_the_digest_of_the_rows() {
        let mut findings = Vec::new();
        check_catalog_snapshot(
            &json!({"catalog_revision": "r", "models": []}),
            &mut findings,
        );
        assert_eq!(codes_of(&findings), [codes::CATALOG_REVISION_WRONG.id]);
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
        assert_eq!(codes_of(&findings), [codes::COUNT_MISMATCH.id]);
    }
}
