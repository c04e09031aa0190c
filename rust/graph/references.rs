//! Cross-references between collections: unique ids, ids that name an entry (PF201–PF206),
//! unknown providers reported once at their root, and entries nothing refers to (orphans).

use serde_json::Value;

use crate::codes::{self, Code};
use crate::report::Finding;

use super::index::{
    located, text, texts, Graph, HashMap, HashSet, Object, BINDINGS, CAPABILITIES,
    CITING_COLLECTIONS, CLAIMS, COLLECTIONS, GRAPH_ID_COLLECTIONS, ID_FIELDS, IMPLEMENTATIONS,
    PROVIDER_OWNED_COLLECTIONS, SOURCES, TRANSPORTS,
};

/// Other pointers a root-cause finding lists before "and N more".
const LISTED_REFERENCES: usize = 5;

/// A list of ids, `field`, whose every id must name an entry of the collection `target`; one
/// that names none is `unknown_code`.
pub(super) struct Reference {
    field: &'static str,
    target: usize,
    unknown_code: Code,
    target_noun: &'static str,
}

impl Reference {
    /// Where the item at `position` of the list is in the entry at `base`. Built only for a
    /// finding: a valid map resolves hundreds of thousands of references and locates none.
    pub(super) fn pointer(&self, base: &str, position: usize) -> String {
        format!("{base}/{}/{position}", self.field)
    }
}

const CITED_SOURCES: Reference = Reference {
    field: "source_refs",
    target: SOURCES,
    unknown_code: codes::UNKNOWN_EVIDENCE_SOURCE,
    target_noun: "evidence source",
};
pub(super) const BOUND_CAPABILITIES: Reference = Reference {
    field: "capability_ids",
    target: CAPABILITIES,
    unknown_code: codes::UNKNOWN_BINDING_CAPABILITY,
    target_noun: "capability",
};
pub(super) const BINDING_EVIDENCE: Reference = Reference {
    field: "evidence_claim_ids",
    target: CLAIMS,
    unknown_code: codes::UNKNOWN_EVIDENCE_CLAIM,
    target_noun: "evidence claim",
};

/// A reference list whose entries must belong to the referring entry's provider.
pub(super) struct SameProviderRule {
    reference: Reference,
    foreign_code: Code,
    owner_noun: &'static str,
}

// PF206 is pairling_fast's own lint: Pairling's validator does not compare transport providers.
pub(super) const TRANSPORTS_OF_IMPLEMENTATION: SameProviderRule = SameProviderRule {
    reference: Reference {
        field: "transport_ids",
        target: TRANSPORTS,
        unknown_code: codes::UNKNOWN_TRANSPORT,
        target_noun: "transport",
    },
    foreign_code: codes::FOREIGN_TRANSPORT,
    owner_noun: "implementation",
};
pub(super) const IMPLEMENTATIONS_OF_CAPABILITY: SameProviderRule = SameProviderRule {
    reference: Reference {
        field: "implementation_ids",
        target: IMPLEMENTATIONS,
        unknown_code: codes::UNKNOWN_CAPABILITY_IMPLEMENTATION,
        target_noun: "implementation",
    },
    foreign_code: codes::FOREIGN_IMPLEMENTATION,
    owner_noun: "capability",
};

/// `N references (also a, b, … and K more)` for a root-cause finding.
pub(super) fn references(pointers: &[String]) -> String {
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

impl<'a> Graph<'a> {
    pub(super) fn uniqueness(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn source_refs(&self, findings: &mut Vec<Finding>) {
        for collection in CITING_COLLECTIONS {
            for (index, entry) in &self.collections[collection].entries {
                let base = format!("/{}/{index}", COLLECTIONS[collection]);
                self.resolve(&CITED_SOURCES, entry, &base, findings);
            }
        }
    }

    /// PF204 once per unknown provider id, at its first reference, with how many there are: a
    /// renamed provider is one defect, not one per entry that names it.
    pub(super) fn providers(&self, findings: &mut Vec<Finding>) {
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
    pub(super) fn resolve<'e>(
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
    pub(super) fn same_provider(
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

    pub(super) fn orphans(&self, findings: &mut Vec<Finding>) {
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
