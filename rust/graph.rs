//! Capability maps: schema, referential integrity and semantic digests, in one pass.
//!
//! `check_map` validates a `pairling.capability-map.2.0.0` document against its bundled schema
//! and, in the same call, applies every integrity rule of `docs/maps.md` (PF201–PF227) and
//! verifies each binding's `pairling.semantic-digest.v1`. The rules run even when the schema
//! found errors: an entry or field of the wrong type is skipped, never trusted, so a broken
//! document still gets every finding the data allows. Findings come out in document order.
//! `_fallback/graph.py` is the same module in Python, rule for rule.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical::{self, ByteSink, CanonicalizationError};
use crate::parse;
use crate::report::Finding;
use crate::validate;

pub const MAP_SCHEMA_ID: &str = "pairling.capability-map.2.0.0";
pub const DIGEST_FIELD: &str = "semantic_digest";
const DIGEST_PREFIX: &str = "sha256:";

type Object = Map<String, Value>;

/// The collections of a map, in schema order.
const COLLECTIONS: [&str; 8] = [
    "evidence_sources",
    "providers",
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
];
const SOURCES: usize = 0;
const PROVIDERS: usize = 1;
const IMPLEMENTATIONS: usize = 2;
const TRANSPORTS: usize = 3;
const CAPABILITIES: usize = 4;
const BINDINGS: usize = 5;
const CLAIMS: usize = 6;
const EXCLUSIONS: usize = 7;

/// The id member of each collection (exclusions have none).
const ID_FIELDS: [Option<&str>; 8] = [
    Some("source_id"),
    Some("provider_id"),
    Some("implementation_id"),
    Some("transport_id"),
    Some("capability_id"),
    Some("implementation_operation_id"),
    Some("claim_id"),
    None,
];
/// Collections whose ids share the schema's graph_id space (PF202 looks across these).
const GRAPH_ID_COLLECTIONS: [usize; 5] =
    [IMPLEMENTATIONS, TRANSPORTS, CAPABILITIES, BINDINGS, CLAIMS];
const CITING_COLLECTIONS: [usize; 5] = [PROVIDERS, CAPABILITIES, BINDINGS, CLAIMS, EXCLUSIONS];
const PROVIDER_OWNED_COLLECTIONS: [usize; 3] = [IMPLEMENTATIONS, TRANSPORTS, CAPABILITIES];

/// A reference list whose entries must belong to the referring entry's provider.
struct SameProviderRule {
    field: &'static str,
    target: usize,
    unknown_code: &'static str,
    foreign_code: &'static str,
    target_noun: &'static str,
    owner_noun: &'static str,
}

const TRANSPORTS_OF_IMPLEMENTATION: SameProviderRule = SameProviderRule {
    field: "transport_ids",
    target: TRANSPORTS,
    unknown_code: "PF205",
    foreign_code: "PF206",
    target_noun: "transport",
    owner_noun: "implementation",
};
const IMPLEMENTATIONS_OF_CAPABILITY: SameProviderRule = SameProviderRule {
    field: "implementation_ids",
    target: IMPLEMENTATIONS,
    unknown_code: "PF209",
    foreign_code: "PF210",
    target_noun: "implementation",
    owner_noun: "capability",
};

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
            .map(|(name, count)| (name.to_string(), json!(count)))
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
pub fn check_map_json(bytes: &[u8]) -> MapCheck {
    match parse::parse_strict(bytes) {
        Ok(document) => check_map(&document),
        Err(error) => MapCheck::unreadable(Finding::from(error)),
    }
}

/// Schema validation and the integrity rules, run side by side, then merged in document order.
pub fn check_map(document: &Value) -> MapCheck {
    let (schema_findings, (mut findings, mut stats)) =
        rayon::join(|| schema_findings(document), || integrity(document));
    stats.schema_violations = schema_findings.len();
    findings.extend(schema_findings);
    MapCheck {
        findings: in_document_order(document, findings),
        stats,
    }
}

fn schema_findings(document: &Value) -> Vec<Finding> {
    match validate::bundled_validator(MAP_SCHEMA_ID) {
        Some(validator) => validator
            .violations(document)
            .into_iter()
            .map(Finding::from)
            .collect(),
        None => {
            vec![Finding::error("PF901", format!("schema {MAP_SCHEMA_ID} is not bundled")).at("")]
        }
    }
}

/// `pairling.semantic-digest.v1`: `sha256:` + hex sha256 of JCS(binding without `semantic_digest`).
///
/// The object is written member by member straight into the hasher (JCS: members sorted by the
/// UTF-16 code units of their keys), so the binding is never copied to drop one member.
pub fn semantic_digest(binding: &Object) -> Result<String, CanonicalizationError> {
    let mut members: Vec<(&String, &Value)> = binding
        .iter()
        .filter(|(key, _)| key.as_str() != DIGEST_FIELD)
        .collect();
    members.sort_unstable_by(|(left, _), (right, _)| canonical::cmp_utf16(left, right));
    let mut hasher = Sha256::new();
    hasher.put(b"{");
    for (position, (key, value)) in members.into_iter().enumerate() {
        if position > 0 {
            hasher.put(b",");
        }
        canonical::write_canonical(&Value::String(key.clone()), &mut hasher)?;
        hasher.put(b":");
        canonical::write_canonical(value, &mut hasher).map_err(|error| CanonicalizationError {
            pointer: format!("/{}{}", parse::escape_pointer_token(key), error.pointer),
            ..error
        })?;
    }
    hasher.put(b"}");
    Ok(format!("{DIGEST_PREFIX}{:x}", hasher.finalize()))
}

fn binding_error(index: usize, error: CanonicalizationError) -> CanonicalizationError {
    CanonicalizationError {
        pointer: format!("/operation_bindings/{index}{}", error.pointer),
        ..error
    }
}

/// Recompute every binding's `semantic_digest` in place (no other check); returns how many.
pub fn seal_map(document: &mut Value) -> Result<usize, CanonicalizationError> {
    let Some(bindings) = document
        .get_mut("operation_bindings")
        .and_then(Value::as_array_mut)
    else {
        return Ok(0);
    };
    let digests: Vec<Option<Result<String, CanonicalizationError>>> = bindings
        .par_iter()
        .map(|binding| binding.as_object().map(semantic_digest))
        .collect();
    let mut sealed = 0;
    for (index, (binding, digest)) in bindings.iter_mut().zip(digests).enumerate() {
        if let (Some(object), Some(digest)) = (binding.as_object_mut(), digest) {
            let digest = digest.map_err(|error| binding_error(index, error))?;
            object.insert(DIGEST_FIELD.to_string(), Value::String(digest));
            sealed += 1;
        }
    }
    Ok(sealed)
}

fn text<'a>(entry: &'a Object, key: &str) -> Option<&'a str> {
    entry.get(key).and_then(Value::as_str)
}

/// (index, string) of each string in the array `entry[key]`; nothing if it is no array.
fn texts<'a>(entry: &'a Object, key: &str) -> impl Iterator<Item = (usize, &'a str)> {
    entry
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(index, value)| value.as_str().map(|text| (index, text)))
}

fn contains(entry: &Object, key: &str, wanted: &str) -> bool {
    texts(entry, key).any(|(_, value)| value == wanted)
}

fn error(code: &'static str, message: String, pointer: String) -> Finding {
    Finding::error(code, message).at(pointer)
}

fn warning(code: &'static str, message: String, pointer: String) -> Finding {
    Finding::warning(code, message).at(pointer)
}

#[derive(Default)]
struct Collection<'a> {
    /// (index in the document, entry) of every entry that is an object.
    entries: Vec<(usize, &'a Object)>,
    /// id → (index, entry) of the first entry with that id.
    by_id: HashMap<&'a str, (usize, &'a Object)>,
}

impl<'a> Collection<'a> {
    fn get(&self, id: &str) -> Option<&'a Object> {
        self.by_id.get(id).map(|(_, entry)| *entry)
    }

    fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// (index, id) of the entries that hold the first occurrence of their id, in document order.
    fn first_ids(&self, id_field: &'a str) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.entries.iter().filter_map(move |(index, entry)| {
            let id = text(entry, id_field)?;
            (self.by_id[id].0 == *index).then_some((*index, id))
        })
    }
}

/// The collections of one document, indexed by id (the first entry of an id wins).
struct Graph<'a> {
    document: &'a Object,
    collections: Vec<Collection<'a>>,
}

impl<'a> Graph<'a> {
    fn new(document: &'a Object) -> Self {
        let collections = COLLECTIONS
            .iter()
            .zip(ID_FIELDS)
            .map(|(name, id_field)| {
                let mut collection = Collection::default();
                let items = document
                    .get(*name)
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for (index, item) in items.iter().enumerate() {
                    if let Some(entry) = item.as_object() {
                        collection.entries.push((index, entry));
                        if let Some(id) = id_field.and_then(|field| text(entry, field)) {
                            collection.by_id.entry(id).or_insert((index, entry));
                        }
                    }
                }
                collection
            })
            .collect();
        Graph {
            document,
            collections,
        }
    }

    fn known_provider(&self, provider_id: Option<&str>) -> bool {
        provider_id.is_some_and(|id| self.collections[PROVIDERS].contains(id))
    }

    /// The provider of an entry, when the entry has one and that provider is itself known.
    fn own_provider(&self, entry: &'a Object) -> Option<&'a str> {
        text(entry, "provider_id").filter(|id| self.known_provider(Some(id)))
    }

    /// The known provider of the known entry `id` of `collection`.
    fn provider_of(&self, collection: usize, id: &str) -> Option<&'a str> {
        self.collections[collection]
            .get(id)
            .and_then(|entry| self.own_provider(entry))
    }

    fn cited(&self, collections: &[usize], key: &str) -> HashSet<&'a str> {
        collections
            .iter()
            .flat_map(|&collection| self.collections[collection].entries.iter())
            .flat_map(|(_, entry)| texts(entry, key).map(|(_, value)| value))
            .collect()
    }

    fn uniqueness(&self, findings: &mut Vec<Finding>) {
        for (collection, (name, id_field)) in COLLECTIONS.iter().zip(ID_FIELDS).enumerate() {
            let Some(id_field) = id_field else { continue };
            let collection = &self.collections[collection];
            for (index, entry) in &collection.entries {
                let Some(id) = text(entry, id_field) else {
                    continue;
                };
                let first = collection.by_id[id].0;
                if first != *index {
                    findings.push(error(
                        "PF201",
                        format!("duplicate {id_field} '{id}': already used by /{name}/{first}"),
                        format!("/{name}/{index}/{id_field}"),
                    ));
                }
            }
        }
        let mut owners: HashMap<&str, (usize, usize)> = HashMap::new();
        for collection in GRAPH_ID_COLLECTIONS {
            let id_field = ID_FIELDS[collection].unwrap_or_default();
            for (index, id) in self.collections[collection].first_ids(id_field) {
                match owners.get(id) {
                    None => {
                        owners.insert(id, (collection, index));
                    }
                    Some(&(owner, owner_index)) => findings.push(warning(
                        "PF202",
                        format!(
                            "graph id '{id}' is also the {} of /{}/{owner_index}",
                            ID_FIELDS[owner].unwrap_or_default(),
                            COLLECTIONS[owner]
                        ),
                        format!("/{}/{index}/{id_field}", COLLECTIONS[collection]),
                    )),
                }
            }
        }
    }

    fn source_refs(&self, findings: &mut Vec<Finding>) {
        let sources = &self.collections[SOURCES];
        for collection in CITING_COLLECTIONS {
            for (index, entry) in &self.collections[collection].entries {
                for (position, source_id) in texts(entry, "source_refs") {
                    if !sources.contains(source_id) {
                        findings.push(error(
                            "PF203",
                            format!("source_refs entry '{source_id}' names no evidence source"),
                            format!(
                                "/{}/{index}/source_refs/{position}",
                                COLLECTIONS[collection]
                            ),
                        ));
                    }
                }
            }
        }
    }

    fn providers(&self, findings: &mut Vec<Finding>) {
        for collection in PROVIDER_OWNED_COLLECTIONS {
            for (index, entry) in &self.collections[collection].entries {
                let provider = text(entry, "provider_id");
                if let Some(provider) = provider.filter(|_| !self.known_provider(provider)) {
                    findings.push(error(
                        "PF204",
                        format!("provider_id '{provider}' names no provider"),
                        format!("/{}/{index}/provider_id", COLLECTIONS[collection]),
                    ));
                }
            }
        }
    }

    /// Each entry of `rule.field` names an entry of `rule.target` (else `rule.unknown_code`) that
    /// belongs to the referring entry's provider (else `rule.foreign_code`, when both are known).
    fn same_provider(
        &self,
        rule: &SameProviderRule,
        entry: &'a Object,
        base: &str,
        findings: &mut Vec<Finding>,
    ) {
        let own_provider = self.own_provider(entry);
        let (field, noun) = (rule.field, rule.target_noun);
        for (position, target_id) in texts(entry, field) {
            let pointer = format!("{base}/{field}/{position}");
            if !self.collections[rule.target].contains(target_id) {
                let message = format!("{field} entry '{target_id}' names no {noun}");
                findings.push(error(rule.unknown_code, message, pointer));
                continue;
            }
            let other_provider = self.provider_of(rule.target, target_id);
            if let (Some(own), Some(other)) = (own_provider, other_provider) {
                if own != other {
                    findings.push(error(
                        rule.foreign_code,
                        format!(
                            "{noun} '{target_id}' belongs to provider '{other}', not to the {}'s provider '{own}'",
                            rule.owner_noun
                        ),
                        pointer,
                    ));
                }
            }
        }
    }

    fn implementations(&self, findings: &mut Vec<Finding>) {
        for (index, entry) in &self.collections[IMPLEMENTATIONS].entries {
            let base = format!("/implementations/{index}");
            let own_provider = self.own_provider(entry);
            self.same_provider(&TRANSPORTS_OF_IMPLEMENTATION, entry, &base, findings);
            let runtime = entry
                .get("release_membership")
                .and_then(Value::as_object)
                .and_then(|membership| text(membership, "runtime_provider_id"));
            if let Some(runtime) = runtime {
                let pointer = format!("{base}/release_membership/runtime_provider_id");
                if !self.known_provider(Some(runtime)) {
                    findings.push(error(
                        "PF207",
                        format!("runtime_provider_id '{runtime}' names no provider"),
                        pointer,
                    ));
                } else if let Some(own) = own_provider.filter(|own| *own != runtime) {
                    findings.push(warning(
                        "PF208",
                        format!("runtime_provider_id '{runtime}' differs from the implementation's provider '{own}'"),
                        pointer,
                    ));
                }
            }
            identity(entry, &base, findings);
        }
    }

    fn capabilities(&self, findings: &mut Vec<Finding>) {
        let capabilities = &self.collections[CAPABILITIES];
        for (index, entry) in &capabilities.entries {
            let base = format!("/capabilities/{index}");
            self.same_provider(&IMPLEMENTATIONS_OF_CAPABILITY, entry, &base, findings);
            if let Some(shared) =
                text(entry, "shared_semantics").filter(|id| !capabilities.contains(id))
            {
                findings.push(error(
                    "PF211",
                    format!("shared_semantics '{shared}' names no capability"),
                    format!("{base}/shared_semantics"),
                ));
            }
        }
    }

    fn bindings(&self, findings: &mut Vec<Finding>) {
        let implementations = &self.collections[IMPLEMENTATIONS];
        let capabilities = &self.collections[CAPABILITIES];
        let claims = &self.collections[CLAIMS];
        for (index, binding) in &self.collections[BINDINGS].entries {
            let base = format!("/operation_bindings/{index}");
            let implementation_id = text(binding, "implementation_id");
            let implementation = implementation_id.and_then(|id| implementations.get(id));
            if let (Some(id), None) = (implementation_id, implementation) {
                findings.push(error(
                    "PF212",
                    format!("implementation_id '{id}' names no implementation"),
                    format!("{base}/implementation_id"),
                ));
            }
            let exposed = text(binding, "implementation_status") == Some("implemented")
                && text(binding, "release_status") == Some("released");
            let confirmed = has_confirmation(binding);
            for (position, capability_id) in texts(binding, "capability_ids") {
                let pointer = format!("{base}/capability_ids/{position}");
                let Some(capability) = capabilities.get(capability_id) else {
                    findings.push(error(
                        "PF213",
                        format!("capability_ids entry '{capability_id}' names no capability"),
                        pointer,
                    ));
                    continue;
                };
                if let (Some(id), Some(_)) = (implementation_id, implementation) {
                    let listed = capability
                        .get("implementation_ids")
                        .is_some_and(Value::is_array);
                    if listed && !contains(capability, "implementation_ids", id) {
                        findings.push(error(
                            "PF214",
                            format!(
                                "capability '{capability_id}' does not list implementation '{id}' in its \
                                 implementation_ids"
                            ),
                            pointer.clone(),
                        ));
                    }
                }
                let safety = text(capability, "remote_safety");
                if safety == Some("do_not_expose") && exposed {
                    findings.push(error(
                        "PF222",
                        format!(
                            "implemented and released binding exposes capability '{capability_id}' whose \
                             remote_safety is do_not_expose"
                        ),
                        pointer.clone(),
                    ));
                }
                if safety == Some("confirmation") && !confirmed {
                    findings.push(warning(
                        "PF223",
                        format!(
                            "capability '{capability_id}' requires confirmation but the binding has no \
                             confirmation requirement with a mode other than none"
                        ),
                        pointer,
                    ));
                }
            }
            for (position, claim_id) in texts(binding, "evidence_claim_ids") {
                if !claims.contains(claim_id) {
                    findings.push(error(
                        "PF215",
                        format!("evidence_claim_ids entry '{claim_id}' names no evidence claim"),
                        format!("{base}/evidence_claim_ids/{position}"),
                    ));
                }
            }
            if let (Some(id), Some(implementation)) = (implementation_id, implementation) {
                let released = text(binding, "release_status") == Some("released");
                if released
                    && !implementation
                        .get("release_membership")
                        .is_some_and(Value::is_object)
                {
                    findings.push(error(
                        "PF220",
                        format!("release_status is released but implementation '{id}' has no release_membership"),
                        format!("{base}/release_status"),
                    ));
                }
            }
        }
    }

    fn claims(&self, findings: &mut Vec<Finding>) {
        for (index, claim) in &self.collections[CLAIMS].entries {
            let (Some(subject_type), Some(subject_id)) =
                (text(claim, "subject_type"), text(claim, "subject_id"))
            else {
                continue;
            };
            let collection = match subject_type {
                "implementation" => IMPLEMENTATIONS,
                "capability" => CAPABILITIES,
                "operation_binding" => BINDINGS,
                _ => continue,
            };
            if !self.collections[collection].contains(subject_id) {
                findings.push(error(
                    "PF216",
                    format!(
                        "subject_id '{subject_id}' names no entry of {} (subject_type {subject_type})",
                        COLLECTIONS[collection]
                    ),
                    format!("/evidence_claims/{index}/subject_id"),
                ));
            }
        }
    }

    fn digests(&self, findings: &mut Vec<Finding>, stats: &mut MapStats) {
        let bindings = &self.collections[BINDINGS].entries;
        let outcomes: Vec<Option<(&str, Result<String, CanonicalizationError>)>> = bindings
            .par_iter()
            .map(|(_, binding)| {
                text(binding, DIGEST_FIELD).map(|recorded| (recorded, semantic_digest(binding)))
            })
            .collect();
        for ((index, _), outcome) in bindings.iter().zip(outcomes) {
            match outcome {
                None => {}
                Some((_, Err(problem))) => {
                    findings.push(Finding::from(binding_error(*index, problem)))
                }
                Some((recorded, Ok(expected))) if expected == recorded => {
                    stats.digests_verified += 1
                }
                Some((recorded, Ok(expected))) => {
                    stats.digests_mismatched += 1;
                    findings.push(error(
                        "PF221",
                        format!("semantic_digest mismatch: expected {expected}, found {recorded}"),
                        format!("/operation_bindings/{index}/{DIGEST_FIELD}"),
                    ));
                }
            }
        }
        stats.digests_unchecked =
            stats.collections[BINDINGS] - stats.digests_verified - stats.digests_mismatched;
    }

    fn orphans(&self, findings: &mut Vec<Finding>) {
        let policy = self
            .document
            .get("evidence_policy")
            .and_then(Value::as_object);
        if policy.and_then(|policy| policy.get("missing_evidence_is_unsupported"))
            == Some(&Value::Bool(true))
        {
            let evidenced: HashSet<&str> = self.collections[CLAIMS]
                .entries
                .iter()
                .filter(|(_, claim)| text(claim, "subject_type") == Some("capability"))
                .filter_map(|(_, claim)| text(claim, "subject_id"))
                .collect();
            self.unused(CAPABILITIES, &evidenced, findings, "PF224", |id| {
                format!(
                    "no evidence claim has capability '{id}' as its subject \
                     (evidence_policy.missing_evidence_is_unsupported)"
                )
            });
        }
        let used = self.cited(&[IMPLEMENTATIONS], "transport_ids");
        self.unused(TRANSPORTS, &used, findings, "PF225", |id| {
            format!("no implementation uses transport '{id}'")
        });
        let cited = self.cited(&CITING_COLLECTIONS, "source_refs");
        self.unused(SOURCES, &cited, findings, "PF226", |id| {
            format!("nothing cites evidence source '{id}'")
        });
        let bound = self.cited(&[BINDINGS], "capability_ids");
        self.unused(CAPABILITIES, &bound, findings, "PF227", |id| {
            format!("no operation binding binds capability '{id}'")
        });
    }

    /// A warning for each entry of `collection` whose id is not in `used`.
    fn unused(
        &self,
        collection: usize,
        used: &HashSet<&str>,
        findings: &mut Vec<Finding>,
        code: &'static str,
        message: impl Fn(&str) -> String,
    ) {
        let id_field = ID_FIELDS[collection].unwrap_or_default();
        for (index, entry) in &self.collections[collection].entries {
            if let Some(id) = text(entry, id_field).filter(|id| !used.contains(id)) {
                findings.push(warning(
                    code,
                    message(id),
                    format!("/{}/{index}/{id_field}", COLLECTIONS[collection]),
                ));
            }
        }
    }
}

fn identity(implementation: &Object, base: &str, findings: &mut Vec<Finding>) {
    for (code, field, observed) in [
        ("PF217", "provider_version", "observed_versions"),
        ("PF218", "provider_channel", "observed_channels"),
    ] {
        let Some(value) = text(implementation, field) else {
            continue;
        };
        let listed = implementation.get(observed).is_some_and(Value::is_array);
        if listed && !contains(implementation, observed, value) {
            findings.push(error(
                code,
                format!("{field} '{value}' is not in {observed}"),
                format!("{base}/{field}"),
            ));
        }
    }
    let pinned = text(implementation, "identity_status") == Some("release_pinned");
    if pinned
        && !implementation
            .get("release_membership")
            .is_some_and(Value::is_object)
    {
        findings.push(error(
            "PF219",
            "identity_status is release_pinned but the implementation has no release_membership"
                .to_string(),
            format!("{base}/identity_status"),
        ));
    }
}

fn has_confirmation(binding: &Object) -> bool {
    binding
        .get("requires")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|requirement| {
            requirement.get("kind").and_then(Value::as_str) == Some("confirmation")
                && requirement
                    .get("mode")
                    .and_then(Value::as_str)
                    .is_some_and(|mode| mode != "none")
        })
}

fn integrity(document: &Value) -> (Vec<Finding>, MapStats) {
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
    graph.uniqueness(&mut findings);
    graph.source_refs(&mut findings);
    graph.providers(&mut findings);
    graph.implementations(&mut findings);
    graph.capabilities(&mut findings);
    graph.bindings(&mut findings);
    graph.claims(&mut findings);
    graph.digests(&mut findings, &mut stats);
    graph.orphans(&mut findings);
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
        let token = raw_token.replace("~1", "/").replace("~0", "~");
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
    use super::*;
    use crate::report::Severity;

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
            "requires": [{"kind": "release_membership"}],
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
            "exclusions": [],
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
        let check = check_map(&small_map());
        assert!(check.findings.is_empty(), "{:?}", check.findings);
        assert_eq!(check.stats.digests_verified, 1);
        assert_eq!(check.stats.collections[BINDINGS], 1);
    }

    #[test]
    fn tampered_binding_is_named_with_both_digests() {
        let mut document = small_map();
        document["operation_bindings"][0]["operation_id"] = json!("session.prompt.steer");
        let check = check_map(&document);
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
        let check = check_map(&document);
        let found = codes(&check);
        assert!(
            found.contains(&("PF209", "/capabilities/0/implementation_ids/2".to_string())),
            "{found:?}"
        );
        assert!(
            found.contains(&("PF204", "/capabilities/0/provider_id".to_string())),
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
        let check = check_map(&document);
        let pointers: Vec<String> = check
            .findings
            .iter()
            .map(|f| f.pointer.clone().unwrap())
            .collect();
        let expected: Vec<String> = (1..12)
            .map(|i| format!("/operation_bindings/{i}/semantic_digest"))
            .collect();
        assert_eq!(pointers, expected);
    }

    #[test]
    fn unparsable_text_is_one_located_finding() {
        let check = check_map_json(b"{\"a\": 1,}");
        assert_eq!(check.findings.len(), 1);
        assert_eq!(check.findings[0].code, "PF001");
        assert_eq!(check.stats, MapStats::default());
    }

    #[test]
    fn missing_pointer_tokens_sort_after_resolved_ones() {
        let document = json!({"a": {"x": 1}, "b": 2});
        assert!(document_position(&document, "/a/zz") > document_position(&document, "/a/x"));
        assert!(document_position(&document, "/b") > document_position(&document, "/a/zz"));
        assert_eq!(document_position(&document, ""), vec![]);
    }
}
