//! Capability maps: schema, Pairling's own rules and semantic digests, in one pass.
//!
//! `check_map` validates a `pairling.capability-map.2.0.0` document against its bundled schema
//! and, in the same call, applies every rule of `docs/maps.md` and verifies each binding's
//! `pairling.semantic-digest.v1`. The error rules are those of Pairling's own map validator
//! (`validate_capability_graph` in Pairling's companion); the schema is the bundled one, widened
//! where that validator accepts more (PF229 names each such value), and the rules add what the
//! validator rejects beyond the schema. pairling_fast's own extra rules are lints (warning or
//! info). The rules run even when the schema found errors: an entry or field of the wrong type
//! is skipped, never trusted, so a broken document still gets every finding the data allows.
//! Findings come out in document order. `_fallback/graph/` is the same package in Python, module
//! for module and rule for rule.
//!
//! This module is the check as a whole (`check_map`, its stats, document order); the rules live
//! by concern in `schema`, `index`, `references`, `entries`, `bindings`, `releases` and `digests`.

use crate::codes;

use serde_json::{json, Map, Value};

use crate::parse;
use crate::report::Finding;

mod bindings;
pub mod diff;
mod digests;
mod entries;
mod index;
mod references;
mod releases;
mod schema;

pub use self::digests::{seal_map, semantic_digest};
use self::index::{located, Graph, COLLECTIONS};
pub use self::index::{DIGEST_FIELD, MAP_SCHEMA_ID, MAP_SCHEMA_VERSION};
use self::schema::schema_findings;

/// What one check counted; `to_value` is the `stats` of the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapStats {
    pub collections: [usize; 8],
    pub schema_violations: usize,
    pub digests_verified: usize,
    pub digests_mismatched: usize,
    pub digests_unchecked: usize,
}

impl MapStats {
    pub fn to_value(&self) -> Value {
        let collections: Map<String, Value> = COLLECTIONS
            .iter()
            .zip(self.collections)
            .map(|(name, count)| ((*name).to_string(), json!(count)))
            .collect();
        json!({
            "collections": collections,
            "schema_violations": self.schema_violations,
            "digests": {
                "verified": self.digests_verified,
                "mismatched": self.digests_mismatched,
                "unchecked": self.digests_unchecked,
            },
        })
    }
}

#[derive(Clone, Debug, Default)]
pub struct MapCheck {
    pub findings: Vec<Finding>,
    pub stats: MapStats,
}

impl MapCheck {
    /// A document that could not be read at all: its one finding, nothing counted.
    pub fn unreadable(finding: Finding) -> Self {
        MapCheck {
            findings: vec![finding],
            stats: MapStats::default(),
        }
    }
}

/// Parse JSON text strictly, then check it; a parse error is the one finding.
pub fn check_map_json(bytes: &[u8], manifest: Option<&Value>) -> MapCheck {
    match parse::parse_strict(bytes) {
        Ok(document) => check_map(&document, manifest),
        Err(error) => MapCheck::unreadable(Finding::from(error)),
    }
}

/// Schema validation and the rules, run side by side, then merged in document order. With
/// `manifest` (Pairling's reviewed operation manifest) the release join runs too.
pub fn check_map(document: &Value, manifest: Option<&Value>) -> MapCheck {
    if let Some(finding) = other_version(document) {
        return MapCheck::unreadable(finding);
    }
    let (schema_findings, (mut findings, mut stats)) = rayon::join(
        || schema_findings(document),
        || integrity(document, manifest),
    );
    stats.schema_violations = schema_findings.len();
    findings.extend(schema_findings);
    MapCheck {
        findings: in_document_order(document, findings),
        stats,
    }
}

/// A map of another schema_version is reported as such, not checked against 2.0.0 rules.
fn other_version(document: &Value) -> Option<Finding> {
    let version = document.get("schema_version")?.as_str()?;
    (version != MAP_SCHEMA_VERSION).then(|| {
        located(
            codes::UNSUPPORTED_MAP_VERSION,
            format!(
                "capability map schema_version '{version}': pairling_fast checks schema_version \
                 {MAP_SCHEMA_VERSION} only (Pairling's validator rejects other versions too)"
            ),
            "/schema_version".to_string(),
        )
    })
}

fn integrity(document: &Value, manifest: Option<&Value>) -> (Vec<Finding>, MapStats) {
    let mut stats = MapStats::default();
    let mut findings = Vec::new();
    let Some(document) = document.as_object() else {
        return (findings, stats);
    };
    for (count, name) in stats.collections.iter_mut().zip(COLLECTIONS) {
        *count = document
            .get(name)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
    }
    let graph = Graph::new(document);
    graph.document_rules(&mut findings);
    graph.uniqueness(&mut findings);
    graph.source_refs(&mut findings);
    graph.sources(&mut findings);
    graph.provider_entries(&mut findings);
    graph.providers(&mut findings);
    graph.implementations(&mut findings);
    graph.transports(&mut findings);
    graph.capabilities(&mut findings);
    graph.bindings(&mut findings);
    graph.claims(&mut findings);
    graph.exclusions(&mut findings);
    graph.digests(&mut findings, &mut stats);
    graph.orphans(&mut findings);
    if let Some(manifest) = manifest {
        graph.release_join(manifest, &mut findings);
    }
    (findings, stats)
}

/// Where `pointer` is in the document: member and item positions, token by token.
///
/// Object members count in their order in the document, array items by index; a token that does
/// not resolve (a missing member) sorts after everything that does, by its text.
fn document_position(document: &Value, pointer: &str) -> Vec<(usize, String)> {
    let mut position = Vec::new();
    let mut node = Some(document);
    for raw_token in pointer.split('/').skip(1) {
        let token = parse::unescape_pointer_token(raw_token).into_owned();
        let step = match node {
            Some(Value::Object(map)) => map
                .keys()
                .position(|key| *key == token)
                .map(|at| (at, &map[&token])),
            Some(Value::Array(items))
                if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) =>
            {
                token
                    .parse::<usize>()
                    .ok()
                    .and_then(|at| items.get(at).map(|item| (at, item)))
            }
            _ => None,
        };
        match step {
            Some((at, child)) => {
                position.push((at, String::new()));
                node = Some(child);
            }
            None => {
                position.push((usize::MAX, token));
                node = None;
            }
        }
    }
    position
}

fn in_document_order(document: &Value, mut findings: Vec<Finding>) -> Vec<Finding> {
    // Stable: findings at one place with one code keep the order the rules emitted them in.
    findings.sort_by_cached_key(|finding| {
        (
            document_position(document, finding.pointer.as_deref().unwrap_or_default()),
            finding.code,
            finding.schema_pointer.clone().unwrap_or_default(),
        )
    });
    findings
}

#[cfg(test)]
mod tests {
    use super::entries::direct_source_uri;
    use super::index::{
        blank, explicit, is_graph_id, is_schema_provider_id, is_schema_source_id, BINDINGS,
    };
    use super::*;
    use crate::canonical;
    use crate::report::Severity;
    use serde_json::json;

    fn severity_of(findings: &[Finding], code: &str) -> Option<Severity> {
        findings.iter().find(|f| f.code == code).map(|f| f.severity)
    }

    fn binding(id: &str, implementation: &str, capabilities: &[&str]) -> Value {
        json!({
            "implementation_operation_id": id,
            "implementation_id": implementation,
            "operation_id": "session.prompt.send",
            "capability_ids": capabilities,
            "implementation_status": "implemented",
            "release_status": "released",
            "requires": [
                {"kind": "release_membership"},
                {"kind": "fresh_snapshot", "max_age_seconds": 10},
                {"kind": "exact_identity", "dimensions": ["provider", "implementation", "binding"]},
                {"kind": "device_scope", "scope": "session:write"},
                {"kind": "resource_proof", "proof_kind": "none"},
                {"kind": "confirmation", "mode": "none"},
            ],
            "effects": [{"kind": "start_inference"}],
            "invalidates": [],
            "forbids": [{"kind": "identity_fallback"}],
            "retry": {"replay": "forbidden", "recovery": "provider_event", "ambiguity": "outcome_unknown", "correlation": "client_action_id"},
            "runtime_proofs_required": ["operation_discovered"],
            "evidence_claim_ids": ["claim.send"],
            "source_refs": ["docs"],
            "required_pairling_addition": "",
            "semantic_digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        })
    }

    fn small_map() -> Value {
        let mut document = json!({
            "$schema": "./coding-agent-remote-control-capability-map.schema.json",
            "schema_version": "2.0.0",
            "observed_at": "2026-01-05T10:00:00Z",
            "evidence_policy": {
                "rule": "direct sources only",
                "direct_sources_required": true,
                "missing_evidence_is_unsupported": true,
                "machine_readable_values": [true, false, "qualified"],
                "machine_readable_qualification": "qualified means partly structured",
                "support_values": ["supported", "partial", "missing", "not_applicable"],
                "safety_rule": "never expose do_not_expose",
            },
            "evidence_sources": [{"source_id": "docs", "uri": "https://docs.example/cli", "kind": "official_docs"}],
            "providers": [{
                "provider_id": "cli",
                "display_name": "CLI",
                "implementation_eligibility": {"status": "implementation_candidate", "reason": "stable"},
                "source_refs": ["docs"],
            }],
            "implementations": [{
                "implementation_id": "cli.v1",
                "provider_id": "cli",
                "identity_status": "release_pinned",
                "provider_version": "1.0.0",
                "provider_channel": "stable",
                "observed_versions": ["1.0.0"],
                "observed_channels": ["stable"],
                "transport_ids": ["cli.stdio"],
                "release_membership": {
                    "runtime_provider_id": "cli",
                    "provider_version": "1.0.0",
                    "provider_channel": "stable",
                    "launch_config_digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111",
                    "physical_device_required": false,
                },
            }],
            "transports": [{"transport_id": "cli.stdio", "provider_id": "cli", "description": "stdio", "kind": "jsonrpc_stdio"}],
            "capabilities": [{
                "capability_id": "cli.prompt",
                "provider_id": "cli",
                "implementation_ids": ["cli.v1"],
                "plane": "steer",
                "behavior": "sends a prompt",
                "exact_exposure": ["prompt"],
                "lifecycle": "before_turn",
                "machine_readable": true,
                "maturity": "public",
                "version_constraints": ">=1.0.0",
                "remote_safety": "safe",
                "required_pairling_addition": "",
                "shared_semantics": null,
                "provider_overlay": false,
                "source_refs": ["docs"],
            }],
            "operation_bindings": [binding("cli.v1.send", "cli.v1", &["cli.prompt"])],
            "evidence_claims": [
                {"claim_id": "claim.send", "subject_type": "operation_binding", "subject_id": "cli.v1.send",
                 "classification": "vendor_surface", "assertion": "documented", "source_refs": ["docs"]},
                {"claim_id": "claim.prompt", "subject_type": "capability", "subject_id": "cli.prompt",
                 "classification": "vendor_surface", "assertion": "documented", "source_refs": ["docs"]},
            ],
            "exclusions": [{"item": "raw terminal input", "reason": "not remote-safe"}],
        });
        seal_map(&mut document).unwrap();
        document
    }

    fn codes(check: &MapCheck) -> Vec<(&'static str, String)> {
        check
            .findings
            .iter()
            .map(|f| (f.code, f.pointer.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn streamed_semantic_digest_equals_digest_of_the_copy_without_the_member() {
        let binding = json!({
            "z": [1, 2.5, {"\u{e9}": null, "b": "\u{1f600}"}],
            "semantic_digest": "sha256:whatever",
            "\u{1f600}": true,
            "\u{e000}": "private use sorts after the surrogate pair",
            "a": {"nested": [-0.0, 1e21]},
        });
        let mut without = binding.clone();
        without.as_object_mut().unwrap().remove(DIGEST_FIELD);
        let expected = format!("sha256:{}", canonical::digest_hex(&without).unwrap());
        assert_eq!(
            semantic_digest(binding.as_object().unwrap()).unwrap(),
            expected
        );
        let empty = json!({"semantic_digest": "x"});
        let expected_empty = format!("sha256:{}", canonical::digest_hex(&json!({})).unwrap());
        assert_eq!(
            semantic_digest(empty.as_object().unwrap()).unwrap(),
            expected_empty
        );
    }

    #[test]
    fn digest_errors_point_into_the_binding() {
        let binding = json!({"requires": [{"max_age_seconds": 9007199254740993u64}]});
        let error = semantic_digest(binding.as_object().unwrap()).unwrap_err();
        assert_eq!(error.pointer, "/requires/0/max_age_seconds");
        assert_eq!(error.code, "PF005");
    }

    #[test]
    fn sealed_small_map_is_clean() {
        let check = check_map(&small_map(), None);
        assert!(check.findings.is_empty(), "{:?}", check.findings);
        assert_eq!(check.stats.digests_verified, 1);
        assert_eq!(check.stats.collections[BINDINGS], 1);
    }

    #[test]
    fn tampered_binding_is_named_with_both_digests() {
        let mut document = small_map();
        document["operation_bindings"][0]["operation_id"] = json!("session.prompt.steer");
        let check = check_map(&document, None);
        assert_eq!(
            codes(&check),
            vec![("PF221", "/operation_bindings/0/semantic_digest".to_string())]
        );
        let message = &check.findings[0].message;
        assert!(
            message.contains("expected sha256:") && message.contains("found sha256:"),
            "{message}"
        );
        assert_eq!(check.stats.digests_mismatched, 1);
    }

    #[test]
    fn integrity_runs_on_schema_invalid_documents_without_panicking() {
        let mut document = small_map();
        document["providers"] = json!("not an array");
        document["capabilities"][0]["implementation_ids"] = json!([1, null, "missing.impl"]);
        document["operation_bindings"]
            .as_array_mut()
            .unwrap()
            .push(json!(42));
        let check = check_map(&document, None);
        let found = codes(&check);
        assert!(
            found.contains(&("PF209", "/capabilities/0/implementation_ids/2".to_string())),
            "{found:?}"
        );
        assert!(
            found.contains(&("PF204", "/implementations/0/provider_id".to_string())),
            "{found:?}"
        );
        assert!(found.iter().any(|(code, _)| *code == "PF101"));
        assert_eq!(severity_of(&check.findings, "PF209"), Some(Severity::Error));
        assert_eq!(check.stats.digests_unchecked, 1);
    }

    #[test]
    fn findings_follow_document_order_not_pointer_text() {
        let mut document = small_map();
        let bindings = document["operation_bindings"].as_array_mut().unwrap();
        let template = bindings[0].clone();
        for index in 1..12 {
            let mut copy = template.clone();
            copy["implementation_operation_id"] = json!(format!("cli.v1.send{index}"));
            bindings.push(copy);
        }
        let check = check_map(&document, None);
        let pointers: Vec<String> = check
            .findings
            .iter()
            .filter(|f| f.code == "PF221")
            .map(|f| f.pointer.clone().unwrap())
            .collect();
        let expected: Vec<String> = (1..12)
            .map(|i| format!("/operation_bindings/{i}/semantic_digest"))
            .collect();
        assert_eq!(pointers, expected);
    }

    #[test]
    fn unparsable_text_is_one_located_finding() {
        let check = check_map_json(b"{\"a\": 1,}", None);
        assert_eq!(check.findings.len(), 1);
        assert_eq!(check.findings[0].code, "PF001");
        assert_eq!(check.stats, MapStats::default());
    }

    #[test]
    fn source_uris_are_split_as_python_splits_them() {
        // (uri, source_kind, direct?)
        let cases = [
            ("https://docs.example/a?b#c", "official_docs", true),
            (" \tHTTPS://docs.example", "official_docs", true),
            ("https://user@docs.example/", "official_docs", false),
            ("https:docs.example", "official_docs", false),
            ("http://docs.example", "official_docs", false),
            ("https://[::1/x", "official_docs", false),
            ("mac/companiond/registry.py", "checked_in_source", true),
            ("mac/companiond/registry.py", "official_docs", false),
            ("mac/../registry.py", "checked_in_source", false),
            ("/etc/passwd", "checked_in_source", false),
            ("~/x", "checked_in_source", false),
            ("file:x", "checked_in_source", false),
            (" \u{1f} ", "checked_in_source", false),
        ];
        for (uri, kind, direct) in cases {
            assert_eq!(
                direct_source_uri(uri, Some(&json!(kind))),
                direct,
                "{uri:?} as {kind}"
            );
        }
    }

    #[test]
    fn whitespace_is_what_python_strips() {
        assert!(blank(" \t\u{a0}\u{3000}\u{1c}\u{1f}"));
        assert!(!blank(""));
        assert!(explicit("\u{200b}"));
        assert!(is_graph_id("approval.policy") && !is_graph_id("a") && !is_graph_id("A.b"));
        assert!(is_schema_provider_id("a") && !is_schema_provider_id("a.b"));
        assert!(is_schema_source_id("acp-v1") && !is_schema_source_id("acp_v1"));
    }

    #[test]
    fn another_schema_version_is_one_named_finding() {
        let check = check_map(&json!({"schema_version": "1.0.0", "agents": []}), None);
        assert_eq!(
            codes(&check),
            vec![("PF253", "/schema_version".to_string())]
        );
        assert!(check.findings[0].message.contains("'1.0.0'"));
    }

    #[test]
    fn an_unknown_provider_is_reported_once_with_its_references() {
        let mut document = small_map();
        document["providers"][0]["provider_id"] = json!("cli_renamed");
        let check = check_map(&document, None);
        let errors: Vec<_> = check.findings.iter().filter(|f| f.is_error()).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].code, "PF204");
        assert!(
            errors[0].message.contains("3 references"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn missing_pointer_tokens_sort_after_resolved_ones() {
        let document = json!({"a": {"x": 1}, "b": 2});
        assert!(document_position(&document, "/a/zz") > document_position(&document, "/a/x"));
        assert!(document_position(&document, "/b") > document_position(&document, "/a/zz"));
        assert_eq!(document_position(&document, ""), vec![]);
    }
}
