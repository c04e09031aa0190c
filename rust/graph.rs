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
//! Findings come out in document order. `_fallback/graph.py` is the same module in Python, rule
//! for rule.

use crate::codes::{self, Code};
use std::collections::BTreeSet;
use std::sync::OnceLock;

use rayon::prelude::*;
use serde_json::{json, Map, Value};

use crate::canonical::{self, ByteSink, CanonicalizationError};
use crate::parse;
use crate::report::Finding;
use crate::validate;

pub const MAP_SCHEMA_ID: &str = "pairling.capability-map.2.0.0";
pub const DIGEST_FIELD: &str = "semantic_digest";
const DIGEST_PREFIX: &str = "sha256:";
pub const MAP_SCHEMA_VERSION: &str = "2.0.0";

// The rules' indices are keyed by ids from the document: ahash with a random state keeps
// SipHash's resistance to chosen collisions and costs a fraction of it on short ids.
type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;
type HashSet<T> = std::collections::HashSet<T, ahash::RandomState>;

/// Where the bundled schema is narrower than Pairling's validator, the schema is widened to what
/// the validator accepts (docs/maps.md, "Schema and validator"): (pointer into the schema, new
/// value as JSON). PF229 then names each value the unwidened schema would have refused, PF228
/// each value the schema allows but the validator refuses.
const SCHEMA_WIDENINGS: [(&str, &str); 7] = [
    (
        "/$defs/provider_id/pattern",
        r#""^[a-z][a-z0-9_.-]{0,255}$""#,
    ),
    ("/$defs/source_id/pattern", r#""^[a-z][a-z0-9_.-]{1,255}$""#),
    (
        "/$defs/release_membership/properties/runtime_provider_id",
        r#"{"type": "string", "minLength": 1}"#,
    ),
    (
        "/$defs/implementation/properties/identity_status/enum",
        r#"["release_pinned", "source_pinned", "observed", "unversioned"]"#,
    ),
    (
        "/$defs/evidence_claim/properties/classification/enum",
        r#"["vendor_surface", "pairling_support", "behavioral_evidence", "runtime_behavior", "exclusion"]"#,
    ),
    (
        "/$defs/effect/properties/target",
        r#"{"type": "string", "minLength": 1}"#,
    ),
    (
        "/$defs/capability/properties/shared_semantics",
        r#"{"oneOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}"#,
    ),
];
const SCHEMA_TARGET_MAX: usize = 128;
/// The six requirement kinds every binding must carry (Pairling's validator).
const MANDATORY_REQUIREMENTS: [&str; 6] = [
    "confirmation",
    "device_scope",
    "exact_identity",
    "fresh_snapshot",
    "release_membership",
    "resource_proof",
];
const EXACT_DIMENSIONS: [&str; 3] = ["provider", "implementation", "binding"];
const LOCAL_ONLY: [&str; 2] = ["required_local_only", "do_not_expose"];
const READ_EFFECT: &str = "return_data";
const RELEASABLE: &str = "implementation_candidate";
const RELEASE_IDENTITY: [&str; 3] = [
    "runtime_provider_id",
    "provider_version",
    "provider_channel",
];
const RELEASE_FIELDS: [&str; 5] = [
    "runtime_provider_id",
    "provider_version",
    "provider_channel",
    "launch_config_digest",
    "physical_device_required",
];
/// (requirement kind, its field, the manifest operation's field it must equal)
const REVIEWED_REQUIREMENTS: [(&str, &str, &str); 3] = [
    ("device_scope", "scope", "required_device_scope"),
    ("resource_proof", "proof_kind", "resource_proof_kind"),
    ("confirmation", "mode", "confirmation_requirement"),
];
/// Other pointers a root-cause finding lists before "and N more".
const LISTED_REFERENCES: usize = 5;

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

/// A list of ids, `field`, whose every id must name an entry of the collection `target`; one
/// that names none is `unknown_code`.
struct Reference {
    field: &'static str,
    target: usize,
    unknown_code: Code,
    target_noun: &'static str,
}

impl Reference {
    /// Where the item at `position` of the list is in the entry at `base`. Built only for a
    /// finding: a valid map resolves hundreds of thousands of references and locates none.
    fn pointer(&self, base: &str, position: usize) -> String {
        format!("{base}/{}/{position}", self.field)
    }
}

const CITED_SOURCES: Reference = Reference {
    field: "source_refs",
    target: SOURCES,
    unknown_code: codes::UNKNOWN_EVIDENCE_SOURCE,
    target_noun: "evidence source",
};
const BOUND_CAPABILITIES: Reference = Reference {
    field: "capability_ids",
    target: CAPABILITIES,
    unknown_code: codes::UNKNOWN_BINDING_CAPABILITY,
    target_noun: "capability",
};
const BINDING_EVIDENCE: Reference = Reference {
    field: "evidence_claim_ids",
    target: CLAIMS,
    unknown_code: codes::UNKNOWN_EVIDENCE_CLAIM,
    target_noun: "evidence claim",
};

/// A reference list whose entries must belong to the referring entry's provider.
struct SameProviderRule {
    reference: Reference,
    foreign_code: Code,
    owner_noun: &'static str,
}

// PF206 is pairling_fast's own lint: Pairling's validator does not compare transport providers.
const TRANSPORTS_OF_IMPLEMENTATION: SameProviderRule = SameProviderRule {
    reference: Reference {
        field: "transport_ids",
        target: TRANSPORTS,
        unknown_code: codes::UNKNOWN_TRANSPORT,
        target_noun: "transport",
    },
    foreign_code: codes::FOREIGN_TRANSPORT,
    owner_noun: "implementation",
};
const IMPLEMENTATIONS_OF_CAPABILITY: SameProviderRule = SameProviderRule {
    reference: Reference {
        field: "implementation_ids",
        target: IMPLEMENTATIONS,
        unknown_code: codes::UNKNOWN_CAPABILITY_IMPLEMENTATION,
        target_noun: "implementation",
    },
    foreign_code: codes::FOREIGN_IMPLEMENTATION,
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

/// The bundled map schema with `SCHEMA_WIDENINGS` applied, compiled once.
fn map_validator() -> Option<&'static validate::SchemaValidator> {
    static VALIDATOR: OnceLock<Option<validate::SchemaValidator>> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let mut schema = validate::bundled_schema(MAP_SCHEMA_ID)?.clone();
            for (pointer, widened) in SCHEMA_WIDENINGS {
                let (parent, last) = pointer.rsplit_once('/')?;
                let widened: Value = serde_json::from_str(widened).ok()?;
                schema
                    .pointer_mut(parent)?
                    .as_object_mut()?
                    .insert(last.to_string(), widened);
            }
            let options = validate::CompileOptions {
                validate_formats: Some(true),
                resources: Vec::new(),
            };
            validate::SchemaValidator::compile(&schema, &options).ok()
        })
        .as_ref()
}

fn schema_findings(document: &Value) -> Vec<Finding> {
    match map_validator() {
        Some(validator) => validator
            .violations(document)
            .into_iter()
            .map(Finding::from)
            .collect(),
        None => {
            vec![Finding::new(
                codes::INTERNAL_ERROR,
                format!("schema {MAP_SCHEMA_ID} does not compile"),
            )
            .at("")]
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
    // Buffered: JCS comes out in tiny pieces, one `Sha256::update` each cost more than the hash.
    let mut hasher = canonical::BufferedSha256::new();
    hasher.put(b"{");
    for (position, (key, value)) in members.into_iter().enumerate() {
        if position > 0 {
            hasher.put(b",");
        }
        canonical::write_string(&mut hasher, key);
        hasher.put(b":");
        canonical::write_canonical(value, &mut hasher).map_err(|error| CanonicalizationError {
            pointer: format!("/{}{}", parse::escape_pointer_token(key), error.pointer),
            ..error
        })?;
    }
    hasher.put(b"}");
    Ok(format!("{DIGEST_PREFIX}{}", hasher.hex()))
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

/// (index, element) of each element of the array `entry[key]` that `cast` accepts; nothing if it
/// is no array. The index is the element's place in the array, skipped elements included.
fn elements<'a, T: ?Sized + 'a>(
    entry: &'a Object,
    key: &str,
    cast: fn(&'a Value) -> Option<&'a T>,
) -> impl Iterator<Item = (usize, &'a T)> {
    entry
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(move |(index, value)| cast(value).map(|element| (index, element)))
}

/// (index, string) of each string in the array `entry[key]`; nothing if it is no array.
fn texts<'a>(entry: &'a Object, key: &str) -> impl Iterator<Item = (usize, &'a str)> {
    elements(entry, key, Value::as_str)
}

fn contains(entry: &Object, key: &str, wanted: &str) -> bool {
    texts(entry, key).any(|(_, value)| value == wanted)
}

fn located(code: Code, message: String, pointer: String) -> Finding {
    Finding::new(code, message).at(pointer)
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
                    findings.push(located(
                        codes::DUPLICATE_ID,
                        format!("duplicate {id_field} '{id}': already used by /{name}/{first}"),
                        format!("/{name}/{index}/{id_field}"),
                    ));
                }
            }
        }
        let mut owners: HashMap<&str, (usize, usize)> = HashMap::default();
        for collection in GRAPH_ID_COLLECTIONS {
            let id_field = ID_FIELDS[collection].unwrap_or_default();
            for (index, id) in self.collections[collection].first_ids(id_field) {
                match owners.get(id) {
                    None => {
                        owners.insert(id, (collection, index));
                    }
                    Some(&(owner, owner_index)) => findings.push(located(
                        codes::ID_REUSED_ACROSS_COLLECTIONS,
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
        for collection in CITING_COLLECTIONS {
            for (index, entry) in &self.collections[collection].entries {
                let base = format!("/{}/{index}", COLLECTIONS[collection]);
                self.resolve(&CITED_SOURCES, entry, &base, findings);
            }
        }
    }

    /// PF204 once per unknown provider id, at its first reference, with how many there are: a
    /// renamed provider is one defect, not one per entry that names it.
    fn providers(&self, findings: &mut Vec<Finding>) {
        let mut unknown: Vec<(&str, Vec<String>)> = Vec::new();
        for collection in PROVIDER_OWNED_COLLECTIONS {
            for (index, entry) in &self.collections[collection].entries {
                let provider = text(entry, "provider_id");
                if let Some(provider) = provider.filter(|_| !self.known_provider(provider)) {
                    let pointer = format!("/{}/{index}/provider_id", COLLECTIONS[collection]);
                    match unknown.iter_mut().find(|(id, _)| *id == provider) {
                        Some((_, pointers)) => pointers.push(pointer),
                        None => unknown.push((provider, vec![pointer])),
                    }
                }
            }
        }
        for (provider, pointers) in unknown {
            findings.push(located(
                codes::UNKNOWN_PROVIDER,
                format!(
                    "provider_id '{provider}' names no provider; {}",
                    references(&pointers)
                ),
                pointers[0].clone(),
            ));
        }
    }

    /// (position, id, entry) of each id of `reference.field` in `entry` that names an entry of its
    /// target, for the caller's further rules (`reference.pointer` locates one); a finding for
    /// each that names none. The one place that words and locates an unknown reference.
    fn resolve<'e>(
        &self,
        reference: &Reference,
        entry: &'e Object,
        base: &str,
        findings: &mut Vec<Finding>,
    ) -> Vec<(usize, &'e str, &'a Object)> {
        let (field, noun) = (reference.field, reference.target_noun);
        let target = &self.collections[reference.target];
        let mut resolved = Vec::new();
        for (position, id) in texts(entry, field) {
            match target.get(id) {
                Some(found) => resolved.push((position, id, found)),
                None => findings.push(located(
                    reference.unknown_code,
                    format!("{field} entry '{id}' names no {noun}"),
                    reference.pointer(base, position),
                )),
            }
        }
        resolved
    }

    /// Each id of the rule's reference list names an entry of its target (else its unknown code)
    /// that belongs to the referring entry's provider (else `rule.foreign_code`, when both are
    /// known).
    fn same_provider(
        &self,
        rule: &SameProviderRule,
        entry: &'a Object,
        base: &str,
        findings: &mut Vec<Finding>,
    ) {
        let own_provider = self.own_provider(entry);
        let noun = rule.reference.target_noun;
        for (position, target_id, _) in self.resolve(&rule.reference, entry, base, findings) {
            let other_provider = self.provider_of(rule.reference.target, target_id);
            if let (Some(own), Some(other)) = (own_provider, other_provider) {
                if own != other {
                    findings.push(
                        Finding::new(
                            rule.foreign_code,
                            format!(
                                "{noun} '{target_id}' belongs to provider '{other}', not to the {}'s provider '{own}'",
                                rule.owner_noun
                            ),
                        )
                        .at(rule.reference.pointer(base, position)),
                    );
                }
            }
        }
    }

    fn document_rules(&self, findings: &mut Vec<Finding>) {
        let document = self.document;
        if let Some(observed_at) = text(document, "observed_at") {
            if !observed_at.ends_with('Z') {
                findings.push(located(
                    codes::OBSERVED_AT_NOT_UTC,
                    format!(
                        "observed_at '{observed_at}' is not in UTC (Pairling requires the 'Z' suffix)"
                    ),
                    "/observed_at".to_string(),
                ));
            } else if leap_second(observed_at) {
                findings.push(located(
                    codes::OBSERVED_AT_NOT_UTC,
                    format!(
                        "observed_at '{observed_at}' has second 60: RFC 3339 allows a leap second, \
                         Pairling's timestamp parser does not"
                    ),
                    "/observed_at".to_string(),
                ));
            }
        }
        if let Some(policy) = document.get("evidence_policy").and_then(Value::as_object) {
            explicit_texts(
                "/evidence_policy",
                policy,
                &["rule", "machine_readable_qualification", "safety_rule"],
                findings,
            );
        }
        if document
            .get("exclusions")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            findings.push(located(
                codes::SCHEMA_LOOSER_THAN_PAIRLING,
                "exclusions is empty: the schema allows it, Pairling's validator requires at least \
                 one exclusion"
                    .to_string(),
                "/exclusions".to_string(),
            ));
        }
    }

    fn sources(&self, findings: &mut Vec<Finding>) {
        for (index, source) in &self.collections[SOURCES].entries {
            let base = format!("/evidence_sources/{index}");
            if let Some(id) =
                text(source, "source_id").filter(|id| is_graph_id(id) && !is_schema_source_id(id))
            {
                findings.push(located(
                    codes::PAIRLING_LOOSER_THAN_SCHEMA,
                    format!(
                        "source_id '{id}' is accepted by Pairling's validator but not by the \
                         bundled schema's source_id pattern ^[a-z][a-z0-9-]{{1,127}}$"
                    ),
                    format!("{base}/source_id"),
                ));
            }
            let kind = source.get("kind");
            if let Some(uri) =
                text(source, "uri").filter(|uri| !uri.is_empty() && !direct_source_uri(uri, kind))
            {
                findings.push(located(
                    codes::SOURCE_URI_NOT_DIRECT,
                    format!(
                        "uri '{uri}' is neither a direct https:// URL nor, for a checked_in_source, \
                         a relative repository path"
                    ),
                    format!("{base}/uri"),
                ));
            }
        }
    }

    fn provider_entries(&self, findings: &mut Vec<Finding>) {
        for (index, provider) in &self.collections[PROVIDERS].entries {
            let base = format!("/providers/{index}");
            if let Some(id) = text(provider, "provider_id") {
                let (pairling, schema) = (is_graph_id(id), is_schema_provider_id(id));
                if pairling && !schema {
                    findings.push(located(
                        codes::PAIRLING_LOOSER_THAN_SCHEMA,
                        format!(
                            "provider_id '{id}' is accepted by Pairling's validator but not by the \
                             bundled schema's provider_id pattern ^[a-z][a-z0-9_]{{0,63}}$"
                        ),
                        format!("{base}/provider_id"),
                    ));
                } else if schema && !pairling {
                    findings.push(located(
                        codes::SCHEMA_LOOSER_THAN_PAIRLING,
                        format!(
                            "provider_id '{id}' matches the bundled schema but Pairling's \
                             validator requires ids of at least two characters"
                        ),
                        format!("{base}/provider_id"),
                    ));
                }
            }
            explicit_texts(&base, provider, &["display_name"], findings);
            if let Some(eligibility) = provider
                .get("implementation_eligibility")
                .and_then(Value::as_object)
            {
                let at = format!("{base}/implementation_eligibility");
                explicit_texts(&at, eligibility, &["reason"], findings);
            }
        }
    }

    fn implementations(&self, findings: &mut Vec<Finding>) {
        let mut runtime_identities: HashMap<(&str, &str, &str), usize> = HashMap::default();
        for (index, entry) in &self.collections[IMPLEMENTATIONS].entries {
            let base = format!("/implementations/{index}");
            let own_provider = self.own_provider(entry);
            self.same_provider(&TRANSPORTS_OF_IMPLEMENTATION, entry, &base, findings);
            let status = text(entry, "identity_status");
            if status == Some("unversioned") {
                findings.push(located(
                    codes::PAIRLING_LOOSER_THAN_SCHEMA,
                    "identity_status 'unversioned' is accepted by Pairling's validator but not by \
                     the bundled schema"
                        .to_string(),
                    format!("{base}/identity_status"),
                ));
            }
            explicit_texts(
                &base,
                entry,
                &["provider_version", "provider_channel"],
                findings,
            );
            explicit_items(&base, entry, "observed_versions", findings);
            explicit_items(&base, entry, "observed_channels", findings);
            let Some(membership) = entry.get("release_membership").and_then(Value::as_object)
            else {
                if status == Some("release_pinned") {
                    findings.push(located(
                        codes::PINNED_WITHOUT_MEMBERSHIP,
                        "identity_status is release_pinned but the implementation has no \
                         release_membership"
                            .to_string(),
                        format!("{base}/identity_status"),
                    ));
                }
                continue;
            };
            let release = format!("{base}/release_membership");
            explicit_texts(&release, membership, &RELEASE_IDENTITY, findings);
            let runtime = text(membership, "runtime_provider_id");
            if let Some(runtime) = runtime.filter(|id| explicit(id) && !is_schema_provider_id(id)) {
                findings.push(located(
                    codes::PAIRLING_LOOSER_THAN_SCHEMA,
                    format!(
                        "runtime_provider_id '{runtime}' is accepted by Pairling's validator but \
                         not by the bundled schema's provider_id pattern"
                    ),
                    format!("{release}/runtime_provider_id"),
                ));
            }
            if let (Some(runtime), Some(own)) = (runtime, own_provider) {
                if runtime != own {
                    findings.push(
                        Finding::new(
                            codes::RUNTIME_PROVIDER_DIFFERS,
                            format!(
                                "runtime_provider_id '{runtime}' (the runtime's provider key) \
                                 differs from the map provider '{own}'"
                            ),
                        )
                        .at(format!("{release}/runtime_provider_id")),
                    );
                }
            }
            if let Some(status) = status.filter(|status| *status != "release_pinned") {
                findings.push(located(
                    codes::RELEASED_NOT_PINNED,
                    format!(
                        "the implementation has a release_membership but its identity_status is \
                         '{status}', not release_pinned"
                    ),
                    format!("{base}/identity_status"),
                ));
            }
            for (code, field) in [
                (codes::VERSION_DIFFERS_FROM_MEMBERSHIP, "provider_version"),
                (codes::CHANNEL_DIFFERS_FROM_MEMBERSHIP, "provider_channel"),
            ] {
                if let (Some(own), Some(released)) = (text(entry, field), text(membership, field)) {
                    if own != released {
                        findings.push(located(
                            code,
                            format!(
                                "{field} '{own}' differs from the release membership's '{released}'"
                            ),
                            format!("{base}/{field}"),
                        ));
                    }
                }
            }
            // Like Pairling's validator, only the first entry of an id has a runtime identity.
            let first = text(entry, "implementation_id")
                .is_some_and(|id| self.collections[IMPLEMENTATIONS].by_id[id].0 == *index);
            if let (true, Some(runtime), Some(version), Some(channel)) = (
                first,
                runtime,
                text(membership, "provider_version"),
                text(membership, "provider_channel"),
            ) {
                let prior = *runtime_identities
                    .entry((runtime, version, channel))
                    .or_insert(*index);
                if prior != *index {
                    findings.push(located(
                        codes::AMBIGUOUS_RUNTIME_IDENTITY,
                        format!(
                            "runtime identity {runtime} {version} {channel} (runtime_provider_id, \
                             provider_version, provider_channel) is also \
                             /implementations/{prior}'s: the runtime cannot tell them apart"
                        ),
                        release,
                    ));
                }
            }
        }
    }

    fn transports(&self, findings: &mut Vec<Finding>) {
        for (index, transport) in &self.collections[TRANSPORTS].entries {
            let base = format!("/transports/{index}");
            explicit_texts(&base, transport, &["description"], findings);
            if text(transport, "kind") == Some("manager") {
                findings.push(located(
                    codes::SCHEMA_LOOSER_THAN_PAIRLING,
                    "transport kind 'manager' is in the bundled schema but not among the kinds \
                     Pairling's validator accepts"
                        .to_string(),
                    format!("{base}/kind"),
                ));
            }
        }
    }

    fn capabilities(&self, findings: &mut Vec<Finding>) {
        for (index, entry) in &self.collections[CAPABILITIES].entries {
            let base = format!("/capabilities/{index}");
            self.same_provider(&IMPLEMENTATIONS_OF_CAPABILITY, entry, &base, findings);
            explicit_texts(&base, entry, &["behavior", "version_constraints"], findings);
            explicit_items(&base, entry, "exact_exposure", findings);
            let exposure = entry.get("exact_exposure").and_then(Value::as_array);
            if exposure
                .is_some_and(|items| items.iter().all(|item| item.as_str().is_some_and(explicit)))
            {
                let mut seen = HashSet::default();
                for (position, value) in texts(entry, "exact_exposure") {
                    if !seen.insert(value) {
                        findings.push(located(
                            codes::DUPLICATE_EXACT_EXPOSURE,
                            format!("exact_exposure entry '{value}' is repeated"),
                            format!("{base}/exact_exposure/{position}"),
                        ));
                    }
                }
            }
            if let Some(shared) = text(entry, "shared_semantics") {
                if blank(shared) {
                    findings.push(located(
                        codes::WHITESPACE_ONLY,
                        "shared_semantics is only whitespace".to_string(),
                        format!("{base}/shared_semantics"),
                    ));
                } else if !shared.is_empty() && !is_graph_id(shared) {
                    findings.push(located(
                        codes::PAIRLING_LOOSER_THAN_SCHEMA,
                        format!(
                            "shared_semantics '{shared}' is accepted by Pairling's validator but \
                             is not a graph id as the bundled schema requires"
                        ),
                        format!("{base}/shared_semantics"),
                    ));
                }
            }
            if let Some(safety) = text(entry, "remote_safety").filter(|s| LOCAL_ONLY.contains(s)) {
                if !entry
                    .get("required_pairling_addition")
                    .and_then(Value::as_str)
                    .is_some_and(explicit)
                {
                    findings.push(located(
                        codes::LOCAL_ONLY_WITHOUT_REASON,
                        format!(
                            "remote_safety is {safety} but required_pairling_addition does not \
                             say why or what would make it safe"
                        ),
                        format!("{base}/required_pairling_addition"),
                    ));
                }
            }
        }
    }

    fn bindings(&self, findings: &mut Vec<Finding>) {
        let implementations = &self.collections[IMPLEMENTATIONS];
        for (index, binding) in &self.collections[BINDINGS].entries {
            let base = format!("/operation_bindings/{index}");
            let binding_id = text(binding, "implementation_operation_id");
            let implementation_id = text(binding, "implementation_id");
            let implementation = implementation_id.and_then(|id| implementations.get(id));
            if let (Some(id), None) = (implementation_id, implementation) {
                findings.push(located(
                    codes::UNKNOWN_BINDING_IMPLEMENTATION,
                    format!("implementation_id '{id}' names no implementation"),
                    format!("{base}/implementation_id"),
                ));
            }
            let released = text(binding, "release_status") == Some("released");
            let exposed = released && text(binding, "implementation_status") == Some("implemented");
            let confirmed = has_confirmation(binding);
            for (position, capability_id, capability) in
                self.resolve(&BOUND_CAPABILITIES, binding, &base, findings)
            {
                if let (Some(id), Some(_)) = (implementation_id, implementation) {
                    let listed = capability
                        .get("implementation_ids")
                        .is_some_and(Value::is_array);
                    if listed && !contains(capability, "implementation_ids", id) {
                        findings.push(located(
                            codes::CAPABILITY_NOT_OFFERED,
                            format!(
                                "capability '{capability_id}' does not list implementation '{id}' in its \
                                 implementation_ids"
                            ),
                            BOUND_CAPABILITIES.pointer(&base, position),
                        ));
                    }
                }
                let safety = text(capability, "remote_safety");
                if safety == Some("do_not_expose") && exposed {
                    findings.push(located(
                        codes::DO_NOT_EXPOSE_RELEASED,
                        format!(
                            "implemented and released binding exposes capability '{capability_id}' \
                             whose remote_safety is do_not_expose"
                        ),
                        BOUND_CAPABILITIES.pointer(&base, position),
                    ));
                }
                if safety == Some("confirmation") && !confirmed {
                    findings.push(located(
                        codes::CONFIRMATION_NOT_BOUND,
                        format!(
                            "capability '{capability_id}' requires confirmation but the binding has no \
                             confirmation requirement with a mode other than none"
                        ),
                        BOUND_CAPABILITIES.pointer(&base, position),
                    ));
                }
            }
            let mut related: HashSet<&str> = texts(binding, "capability_ids")
                .map(|(_, id)| id)
                .filter(|id| !id.is_empty())
                .collect();
            related.extend(binding_id);
            for (position, claim_id, claim) in
                self.resolve(&BINDING_EVIDENCE, binding, &base, findings)
            {
                let subject = text(claim, "subject_id");
                if !subject.is_some_and(|id| related.contains(id)) {
                    let about = subject.map_or("no subject id".to_string(), |id| format!("'{id}'"));
                    findings.push(located(
                        codes::UNRELATED_EVIDENCE,
                        format!(
                            "evidence claim '{claim_id}' is about {about}, neither this binding \
                             nor one of its capabilities"
                        ),
                        BINDING_EVIDENCE.pointer(&base, position),
                    ));
                }
            }
            requirements(binding, &base, findings);
            for (position, effect) in objects(binding, "effects") {
                let Some(target) = text(effect, "target") else {
                    continue;
                };
                let pointer = || format!("{base}/effects/{position}/target");
                if blank(target) {
                    findings.push(located(
                        codes::WHITESPACE_ONLY,
                        "target is only whitespace".to_string(),
                        pointer(),
                    ));
                }
                let length = target.chars().count();
                if length > SCHEMA_TARGET_MAX && explicit(target) {
                    findings.push(located(
                        codes::PAIRLING_LOOSER_THAN_SCHEMA,
                        format!(
                            "target of {length} characters is accepted by Pairling's validator but \
                             the bundled schema allows at most {SCHEMA_TARGET_MAX}"
                        ),
                        pointer(),
                    ));
                }
            }
            let mut forbidden = HashSet::default();
            for (position, row) in objects(binding, "forbids") {
                if let Some(kind) = text(row, "kind") {
                    if !forbidden.insert(kind) {
                        findings.push(located(
                            codes::FORBIDDEN_ACTION_REPEATED,
                            format!("forbidden action {kind} is repeated"),
                            format!("{base}/forbids/{position}"),
                        ));
                    }
                }
            }
            retry(binding, &base, findings);
            if text(binding, "release_status") == Some("not_released")
                && !binding
                    .get("required_pairling_addition")
                    .and_then(Value::as_str)
                    .is_some_and(explicit)
            {
                findings.push(located(
                    codes::NOT_RELEASED_WITHOUT_REASON,
                    "the binding is not_released but required_pairling_addition gives no reason"
                        .to_string(),
                    format!("{base}/required_pairling_addition"),
                ));
            }
            if !released {
                continue;
            }
            if let Some(status) =
                text(binding, "implementation_status").filter(|status| *status != "implemented")
            {
                findings.push(located(
                    codes::RELEASED_NOT_IMPLEMENTED,
                    format!("release_status is released but implementation_status is '{status}'"),
                    format!("{base}/implementation_status"),
                ));
            }
            let (Some(id), Some(implementation)) = (implementation_id, implementation) else {
                continue;
            };
            if !implementation
                .get("release_membership")
                .is_some_and(Value::is_object)
            {
                findings.push(located(
                    codes::RELEASED_BINDING_UNRELEASED_IMPLEMENTATION,
                    format!("release_status is released but implementation '{id}' has no release_membership"),
                    format!("{base}/release_status"),
                ));
            }
            let provider_id = self.own_provider(implementation);
            if let Some((provider_id, provider)) = provider_id
                .and_then(|id| self.collections[PROVIDERS].get(id).map(|entry| (id, entry)))
            {
                let status = provider
                    .get("implementation_eligibility")
                    .and_then(Value::as_object)
                    .and_then(|eligibility| text(eligibility, "status"));
                if status != Some(RELEASABLE) {
                    findings.push(located(
                        codes::RELEASED_NON_RELEASABLE_PROVIDER,
                        format!(
                            "release_status is released but provider '{provider_id}' is {}, not \
                             {RELEASABLE}",
                            status.map_or("without an eligibility status".to_string(), |s| {
                                format!("'{s}'")
                            })
                        ),
                        format!("{base}/release_status"),
                    ));
                }
            }
        }
    }

    fn claims(&self, findings: &mut Vec<Finding>) {
        for (index, claim) in &self.collections[CLAIMS].entries {
            let base = format!("/evidence_claims/{index}");
            let subject = (text(claim, "subject_type"), text(claim, "subject_id"));
            if let (Some(subject_type), Some(subject_id)) = subject {
                let collection = match subject_type {
                    "implementation" => Some(IMPLEMENTATIONS),
                    "capability" => Some(CAPABILITIES),
                    "operation_binding" => Some(BINDINGS),
                    _ => None,
                };
                if let Some(collection) =
                    collection.filter(|&c| !self.collections[c].contains(subject_id))
                {
                    findings.push(located(
                        codes::UNRESOLVED_CLAIM_SUBJECT,
                        format!(
                            "subject_id '{subject_id}' names no entry of {} (subject_type {subject_type})",
                            COLLECTIONS[collection]
                        ),
                        format!("{base}/subject_id"),
                    ));
                }
            }
            match text(claim, "classification") {
                Some("behavioral_evidence") => findings.push(located(
                    codes::SCHEMA_LOOSER_THAN_PAIRLING,
                    "classification 'behavioral_evidence' is in the bundled schema but Pairling's \
                     validator accepts vendor_surface, pairling_support, runtime_behavior and \
                     exclusion"
                        .to_string(),
                    format!("{base}/classification"),
                )),
                Some(classification @ ("runtime_behavior" | "exclusion")) => {
                    findings.push(located(
                        codes::PAIRLING_LOOSER_THAN_SCHEMA,
                        format!(
                            "classification '{classification}' is accepted by Pairling's \
                             validator but not by the bundled schema"
                        ),
                        format!("{base}/classification"),
                    ));
                }
                _ => {}
            }
            explicit_texts(&base, claim, &["assertion"], findings);
        }
    }

    fn exclusions(&self, findings: &mut Vec<Finding>) {
        let mut items: HashMap<&str, usize> = HashMap::default();
        for (index, exclusion) in &self.collections[EXCLUSIONS].entries {
            let base = format!("/exclusions/{index}");
            explicit_texts(&base, exclusion, &["item", "reason"], findings);
            if let Some(item) = text(exclusion, "item").filter(|item| explicit(item)) {
                let prior = *items.entry(item).or_insert(*index);
                if prior != *index {
                    findings.push(located(
                        codes::DUPLICATE_EXCLUSION,
                        format!("exclusion item '{item}' is already /exclusions/{prior}"),
                        format!("{base}/item"),
                    ));
                }
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
                    findings.push(Finding::from(binding_error(*index, problem)));
                }
                Some((recorded, Ok(expected))) if expected == recorded => {
                    stats.digests_verified += 1;
                }
                Some((recorded, Ok(expected))) => {
                    stats.digests_mismatched += 1;
                    findings.push(located(
                        codes::DIGEST_MISMATCH,
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
            self.unused(
                CAPABILITIES,
                &evidenced,
                findings,
                codes::CAPABILITY_WITHOUT_EVIDENCE,
                |id| {
                    format!(
                        "no evidence claim has capability '{id}' as its subject \
                     (evidence_policy.missing_evidence_is_unsupported)"
                    )
                },
            );
        }
        let used = self.cited(&[IMPLEMENTATIONS], "transport_ids");
        self.unused(TRANSPORTS, &used, findings, codes::ORPHAN_TRANSPORT, |id| {
            format!("no implementation uses transport '{id}'")
        });
        let cited = self.cited(&CITING_COLLECTIONS, "source_refs");
        self.unused(
            SOURCES,
            &cited,
            findings,
            codes::ORPHAN_EVIDENCE_SOURCE,
            |id| format!("nothing cites evidence source '{id}'"),
        );
        let bound = self.cited(&[BINDINGS], "capability_ids");
        self.unused(
            CAPABILITIES,
            &bound,
            findings,
            codes::ORPHAN_CAPABILITY,
            |id| format!("no operation binding binds capability '{id}'"),
        );
    }

    /// A warning for each entry of `collection` whose id is not in `used`.
    fn unused(
        &self,
        collection: usize,
        used: &HashSet<&str>,
        findings: &mut Vec<Finding>,
        code: Code,
        message: impl Fn(&str) -> String,
    ) {
        let id_field = ID_FIELDS[collection].unwrap_or_default();
        for (index, entry) in &self.collections[collection].entries {
            if let Some(id) = text(entry, id_field).filter(|id| !used.contains(id)) {
                findings.push(located(
                    code,
                    message(id),
                    format!("/{}/{index}/{id_field}", COLLECTIONS[collection]),
                ));
            }
        }
    }
}

/// Pairling's "explicit" text: something besides whitespace. Python's `str.strip`, which
/// Pairling's validator uses, also strips the separators U+001C–U+001F.
fn explicit(value: &str) -> bool {
    value.chars().any(|c| !is_python_space(c))
}

fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A non-empty string of whitespace only (an empty one is the schema's minLength).
fn blank(value: &str) -> bool {
    !value.is_empty() && !explicit(value)
}

fn id_chars(
    value: &str,
    rest: impl Fn(u8) -> bool,
    length: std::ops::RangeInclusive<usize>,
) -> bool {
    let bytes = value.as_bytes();
    length.contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes[1..].iter().all(|&b| rest(b))
}

fn lower_or_digit(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Pairling's id pattern (its validator's, and the schema's graph_id): [a-z][a-z0-9_.-]{1,255}.
fn is_graph_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b"_.-".contains(&b), 2..=256)
}

/// The bundled schema's provider_id: [a-z][a-z0-9_]{0,63}.
fn is_schema_provider_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b == b'_', 1..=64)
}

/// The bundled schema's source_id: [a-z][a-z0-9-]{1,127}.
fn is_schema_source_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b == b'-', 2..=128)
}

/// A direct `https://host/…` URL without user info, or (for a `checked_in_source`) a relative
/// repository path with no empty, `.` or `..` segment. The scheme and host are split as Python's
/// `urllib.parse.urlsplit` does (leading controls and spaces ignored, tabs and line breaks
/// dropped), so the verdict is the one Pairling's validator reaches.
fn direct_source_uri(uri: &str, kind: Option<&Value>) -> bool {
    if !explicit(uri) {
        return false;
    }
    let parsed: String = uri
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\r' | '\n'))
        .collect();
    let mut scheme = String::new();
    let mut rest = parsed.as_str();
    if let Some(colon) = parsed.find(':').filter(|&at| at > 0) {
        let candidate = &parsed[..colon];
        let valid = candidate.starts_with(|c: char| c.is_ascii_alphabetic())
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if valid {
            scheme = candidate.to_ascii_lowercase();
            rest = &parsed[colon + 1..];
        }
    }
    if scheme == "https" {
        let Some(after) = rest.strip_prefix("//") else {
            return false;
        };
        let host = after.split(['/', '?', '#']).next().unwrap_or_default();
        return !host.is_empty() && !host.contains('@') && host.contains('[') == host.contains(']');
    }
    if kind.and_then(Value::as_str) != Some("checked_in_source")
        || !scheme.is_empty()
        || uri.starts_with(['/', '~'])
    {
        return false;
    }
    uri.split('/').all(|part| !matches!(part, "" | "." | ".."))
}

/// `…THH:MM:60…`: the one RFC 3339 date-time Python's `datetime` cannot hold.
fn leap_second(timestamp: &str) -> bool {
    let bytes = timestamp.as_bytes();
    bytes.len() >= 19 && b"Tt ".contains(&bytes[10]) && bytes[16] == b':' && &bytes[17..19] == b"60"
}

/// `N references (also a, b, … and K more)` for a root-cause finding.
fn references(pointers: &[String]) -> String {
    let others = &pointers[1..];
    if others.is_empty() {
        return "1 reference".to_string();
    }
    let listed = others[..others.len().min(LISTED_REFERENCES)].join(", ");
    let more = others.len().saturating_sub(LISTED_REFERENCES);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{} references (also {listed}{tail})", pointers.len())
}

/// (index, object) of each object in the array `entry[key]`.
fn objects<'a>(entry: &'a Object, key: &str) -> impl Iterator<Item = (usize, &'a Object)> {
    elements(entry, key, Value::as_object)
}

/// The keys of `entries` that `known` rejects, sorted (the fallback's `sorted(set(a) - b)`): a
/// finding that lists ids reads the same on both backends whatever the hash order.
fn sorted_keys_without<'a, V>(
    entries: &HashMap<&'a str, V>,
    known: impl Fn(&str) -> bool,
) -> Vec<&'a str> {
    let mut keys: Vec<&str> = entries.keys().copied().filter(|key| !known(key)).collect();
    keys.sort_unstable();
    keys
}

fn explicit_texts(base: &str, entry: &Object, fields: &[&str], findings: &mut Vec<Finding>) {
    for field in fields {
        if text(entry, field).is_some_and(blank) {
            findings.push(located(
                codes::WHITESPACE_ONLY,
                format!("{field} is only whitespace"),
                format!("{base}/{field}"),
            ));
        }
    }
}

fn explicit_items(base: &str, entry: &Object, field: &str, findings: &mut Vec<Finding>) {
    for (position, value) in texts(entry, field) {
        if blank(value) {
            findings.push(located(
                codes::WHITESPACE_ONLY,
                format!("{field} entry is only whitespace"),
                format!("{base}/{field}/{position}"),
            ));
        }
    }
}

/// A JSON value as messages show it: its canonical (RFC 8785) text.
fn shown(value: &Value) -> String {
    canonical::canonicalize(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| "(a value without canonical form)".to_string())
}

fn requirements(binding: &Object, base: &str, findings: &mut Vec<Finding>) {
    if !binding.get("requires").is_some_and(Value::is_array) {
        return;
    }
    let mut kinds: HashSet<&str> = HashSet::default();
    for (position, requirement) in objects(binding, "requires") {
        let Some(kind) = text(requirement, "kind") else {
            continue;
        };
        // Formatted only for a finding: a valid binding has half a dozen requirements and none.
        let pointer = |suffix: &str| format!("{base}/requires/{position}{suffix}");
        if !kinds.insert(kind) {
            findings.push(located(
                codes::REQUIREMENT_KIND_REPEATED,
                format!("requirement kind {kind} is repeated"),
                pointer(""),
            ));
        }
        let age = requirement
            .get("max_age_seconds")
            .and_then(|age| match age {
                Value::Number(number) if number.is_f64() => number.as_f64(),
                _ => None,
            });
        if let Some(age) = age.filter(|age| {
            kind == "fresh_snapshot" && (1.0..=30.0).contains(age) && age.fract() == 0.0
        }) {
            findings.push(located(
                codes::MAX_AGE_NOT_INTEGER,
                format!(
                    "max_age_seconds {age:.1} is a float: Pairling's validator wants an integer \
                     literal (and its digest of the binding differs)"
                ),
                pointer("/max_age_seconds"),
            ));
        }
        if kind == "exact_identity" && requirement.get("dimensions").is_some_and(Value::is_array) {
            let dimensions: HashSet<&str> = texts(requirement, "dimensions")
                .map(|(_, value)| value)
                .collect();
            let lacking: Vec<&str> = EXACT_DIMENSIONS
                .into_iter()
                .filter(|item| !dimensions.contains(item))
                .collect();
            if !lacking.is_empty() {
                findings.push(located(
                    codes::EXACT_IDENTITY_INCOMPLETE,
                    format!(
                        "exact_identity dimensions lack {} (an exact implementation identity is \
                         provider, implementation and binding)",
                        lacking.join(", ")
                    ),
                    pointer("/dimensions"),
                ));
            }
            if dimensions.contains("session") != dimensions.contains("generation") {
                findings.push(located(
                    codes::SESSION_WITHOUT_GENERATION,
                    "exact_identity dimensions must name session and generation together"
                        .to_string(),
                    pointer("/dimensions"),
                ));
            }
        }
    }
    let missing: Vec<&str> = MANDATORY_REQUIREMENTS
        .into_iter()
        .filter(|kind| !kinds.contains(kind))
        .collect();
    if !missing.is_empty() {
        findings.push(located(
            codes::REQUIREMENT_KINDS_MISSING,
            format!(
                "requires lacks the mandatory requirement kinds {}",
                missing.join(", ")
            ),
            format!("{base}/requires"),
        ));
    }
}

fn retry(binding: &Object, base: &str, findings: &mut Vec<Finding>) {
    let Some(retry) = binding.get("retry").and_then(Value::as_object) else {
        return;
    };
    let read_only = binding
        .get("effects")
        .and_then(Value::as_array)
        .is_some_and(|effects| {
            effects.len() == 1
                && effects[0].get("kind").and_then(Value::as_str) == Some(READ_EFFECT)
        });
    let field = |name: &str| text(retry, name);
    if field("replay") == Some("safe") && !read_only {
        findings.push(located(
            codes::MUTATING_REPLAY_SAFE,
            "retry.replay is safe but the binding has effects other than return_data".to_string(),
            format!("{base}/retry/replay"),
        ));
    }
    if field("replay") == Some("recover_only") && field("recovery") == Some("unavailable") {
        findings.push(located(
            codes::RECOVERY_UNAVAILABLE,
            "retry.replay is recover_only but recovery is unavailable".to_string(),
            format!("{base}/retry/recovery"),
        ));
    }
    if field("ambiguity") == Some("outcome_unknown") && field("correlation") == Some("none") {
        findings.push(located(
            codes::UNCORRELATED_AMBIGUITY,
            "retry.ambiguity is outcome_unknown but correlation is none: an unknown outcome \
             could never be matched to its action"
                .to_string(),
            format!("{base}/retry/correlation"),
        ));
    }
}

fn has_confirmation(binding: &Object) -> bool {
    objects(binding, "requires").any(|(_, requirement)| {
        text(requirement, "kind") == Some("confirmation")
            && text(requirement, "mode").is_some_and(|mode| mode != "none")
    })
}

/// Pairling's reviewed operation manifest, indexed as its validator indexes it.
#[derive(Default)]
struct Manifest<'m> {
    operations: HashMap<&'m str, &'m Object>,
    memberships: HashMap<&'m str, &'m Object>,
    released: HashMap<&'m str, BTreeSet<&'m str>>,
}

fn read_manifest<'m>(manifest: &'m Value, findings: &mut Vec<Finding>) -> Manifest<'m> {
    let mut index = Manifest::default();
    let Some(manifest) = manifest.as_object() else {
        findings.push(located(
            codes::MALFORMED_MANIFEST,
            "the operation manifest is not an object".to_string(),
            String::new(),
        ));
        return index;
    };
    for field in ["operations", "release_memberships"] {
        if !manifest.get(field).is_some_and(Value::is_array) {
            findings.push(located(
                codes::MALFORMED_MANIFEST,
                format!("the operation manifest's {field} is not an array"),
                String::new(),
            ));
        }
    }
    for (_, row) in objects(manifest, "operations") {
        if let Some(id) = text(row, "id") {
            index.operations.insert(id, row);
        }
    }
    for (_, row) in objects(manifest, "release_memberships") {
        let Some(provider_id) = text(row, "map_provider_id") else {
            continue;
        };
        index.memberships.insert(provider_id, row);
        let operations = objects(row, "capabilities")
            .flat_map(|(_, capability)| texts(capability, "operation_ids").map(|(_, id)| id))
            .collect();
        index.released.insert(provider_id, operations);
    }
    index
}

impl<'a> Graph<'a> {
    /// The release join against Pairling's reviewed operation manifest (PF254–PF260).
    fn release_join(&self, manifest: &Value, findings: &mut Vec<Finding>) {
        let reviewed = read_manifest(manifest, findings);
        if reviewed.operations.is_empty() {
            return;
        }
        let implementations = &self.collections[IMPLEMENTATIONS];
        let providers = &self.collections[PROVIDERS];
        let mut bound: HashSet<&str> = HashSet::default();
        let mut released: HashMap<&str, BTreeSet<&str>> = HashMap::default();
        for (index, binding) in &self.collections[BINDINGS].entries {
            let base = format!("/operation_bindings/{index}");
            let implementation =
                text(binding, "implementation_id").and_then(|id| implementations.get(id));
            let (Some(implementation), Some(operation_id)) =
                (implementation, text(binding, "operation_id"))
            else {
                continue;
            };
            bound.insert(operation_id);
            if text(binding, "release_status") == Some("released") {
                let provider = self.own_provider(implementation).unwrap_or_default();
                released.entry(provider).or_default().insert(operation_id);
            }
            let Some(definition) = reviewed.operations.get(operation_id) else {
                findings.push(located(
                    codes::OPERATION_NOT_REVIEWED,
                    format!("operation '{operation_id}' is not in the reviewed operation manifest"),
                    format!("{base}/operation_id"),
                ));
                continue;
            };
            let mut rows: HashMap<&str, (usize, &Object)> = HashMap::default();
            for (position, requirement) in objects(binding, "requires") {
                if let Some(kind) = text(requirement, "kind") {
                    rows.insert(kind, (position, requirement));
                }
            }
            for (kind, field, reviewed_field) in REVIEWED_REQUIREMENTS {
                let expected = definition.get(reviewed_field).unwrap_or(&Value::Null);
                let row = rows.get(kind);
                let actual = row.map(|(_, row)| row.get(field).unwrap_or(&Value::Null));
                if actual != Some(expected) {
                    findings.push(located(
                        codes::REQUIREMENT_DIFFERS_FROM_REVIEW,
                        format!(
                            "{kind} {field} differs from the reviewed operation's {reviewed_field} {}",
                            shown(expected)
                        ),
                        match row {
                            Some((position, _)) => format!("{base}/requires/{position}"),
                            None => format!("{base}/requires"),
                        },
                    ));
                }
            }
        }
        let missing = sorted_keys_without(&reviewed.operations, |id| bound.contains(id));
        if !missing.is_empty() {
            findings.push(located(
                codes::REVIEWED_WITHOUT_BINDING,
                format!(
                    "reviewed operations without a binding: {}",
                    missing.join(", ")
                ),
                "/operation_bindings".to_string(),
            ));
        }
        let strangers = sorted_keys_without(&reviewed.memberships, |id| providers.contains(id));
        if !strangers.is_empty() {
            findings.push(located(
                codes::MEMBERSHIP_UNKNOWN_PROVIDER,
                format!(
                    "release memberships of the manifest name no map provider: {}",
                    strangers.join(", ")
                ),
                "/providers".to_string(),
            ));
        }
        let empty = BTreeSet::new();
        let provider_ids: BTreeSet<&str> = reviewed
            .released
            .keys()
            .chain(released.keys())
            .copied()
            .collect();
        for provider_id in provider_ids {
            let expected = reviewed.released.get(provider_id).unwrap_or(&empty);
            let actual = released.get(provider_id).unwrap_or(&empty);
            let at = match providers.by_id.get(provider_id) {
                Some((index, _)) => format!("/providers/{index}/provider_id"),
                None => "/providers".to_string(),
            };
            if actual != expected {
                findings.push(located(
                    codes::RELEASED_BINDINGS_DIFFER,
                    format!(
                        "released bindings of provider '{provider_id}' differ from the manifest: \
                         missing {}, not in the manifest {}",
                        python_list(expected.difference(actual)),
                        python_list(actual.difference(expected))
                    ),
                    at,
                ));
            }
            let membership = reviewed.memberships.get(provider_id);
            let pinned = implementations.entries.iter().find(|(index, entry)| {
                text(entry, "implementation_id")
                    .is_some_and(|id| implementations.by_id[id].0 == *index)
                    && text(entry, "provider_id") == Some(provider_id)
                    && entry
                        .get("release_membership")
                        .is_some_and(Value::is_object)
            });
            let (Some(membership), Some((index, implementation))) = (membership, pinned) else {
                continue;
            };
            let release = &implementation["release_membership"];
            for field in RELEASE_FIELDS {
                let value = release.get(field).unwrap_or(&Value::Null);
                let expected = membership.get(field).unwrap_or(&Value::Null);
                if value != expected {
                    findings.push(located(
                        codes::RELEASE_IDENTITY_DIFFERS,
                        format!(
                            "release {field} {} differs from the manifest's {}",
                            shown(value),
                            shown(expected)
                        ),
                        format!("/implementations/{index}/release_membership/{field}"),
                    ));
                }
            }
        }
    }
}

/// Python's rendering of a sorted list of strings, as the fallback's message shows it.
fn python_list<'s>(items: impl Iterator<Item = &'s &'s str>) -> String {
    let quoted: Vec<String> = items.map(|item| format!("'{item}'")).collect();
    format!("[{}]", quoted.join(", "))
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
