//! The rules of operation bindings: their capabilities and evidence, requirements, retry policy,
//! effects and release state.

use serde_json::Value;

use crate::codes;
use crate::report::Finding;

use super::index::{
    blank, contains, explicit, located, objects, text, texts, Graph, HashSet, Object, BINDINGS,
    IMPLEMENTATIONS, PROVIDERS,
};
use super::references::{BINDING_EVIDENCE, BOUND_CAPABILITIES};

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
const READ_EFFECT: &str = "return_data";
const RELEASABLE: &str = "implementation_candidate";
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

pub(super) fn retry(binding: &Object, base: &str, findings: &mut Vec<Finding>) {
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

impl<'a> Graph<'a> {
    pub(super) fn bindings(&self, findings: &mut Vec<Finding>) {
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
}
