//! The release join against Pairling's reviewed operation manifest (PF254–PF260).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::canonical;
use crate::codes;
use crate::report::Finding;

use super::index::{
    located, objects, sorted_keys_without, text, texts, Graph, HashMap, HashSet, Object, BINDINGS,
    IMPLEMENTATIONS, PROVIDERS,
};

pub(super) const RELEASE_IDENTITY: [&str; 3] = [
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
/// A JSON value as messages show it: its canonical (RFC 8785) text.
fn shown(value: &Value) -> String {
    canonical::canonicalize(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| "(a value without canonical form)".to_string())
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

/// Python's rendering of a sorted list of strings, as the fallback's message shows it.
fn python_list<'s>(items: impl Iterator<Item = &'s &'s str>) -> String {
    let quoted: Vec<String> = items.map(|item| format!("'{item}'")).collect();
    format!("[{}]", quoted.join(", "))
}

impl<'a> Graph<'a> {
    /// The release join against Pairling's reviewed operation manifest (PF254–PF260).
    pub(super) fn release_join(&self, manifest: &Value, findings: &mut Vec<Finding>) {
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
