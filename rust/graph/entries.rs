//! The rules of each collection's own entries: the document header, evidence sources, providers,
//! implementations, transports, capabilities, evidence claims and exclusions (bindings: `bindings`).

use serde_json::Value;

use crate::codes;
use crate::report::Finding;

use super::index::{
    blank, explicit, is_graph_id, is_schema_provider_id, is_schema_source_id, located, text, texts,
    Graph, HashMap, HashSet, Object, BINDINGS, CAPABILITIES, CLAIMS, COLLECTIONS, EXCLUSIONS,
    IMPLEMENTATIONS, PROVIDERS, SOURCES, TRANSPORTS,
};
use super::references::{IMPLEMENTATIONS_OF_CAPABILITY, TRANSPORTS_OF_IMPLEMENTATION};
use super::releases::RELEASE_IDENTITY;

const LOCAL_ONLY: [&str; 2] = ["required_local_only", "do_not_expose"];
/// A direct `https://host/…` URL without user info, or (for a `checked_in_source`) a relative
/// repository path with no empty, `.` or `..` segment. The scheme and host are split as Python's
/// `urllib.parse.urlsplit` does (leading controls and spaces ignored, tabs and line breaks
/// dropped), so the verdict is the one Pairling's validator reaches.
pub(super) fn direct_source_uri(uri: &str, kind: Option<&Value>) -> bool {
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

/// Why Python's `datetime.fromisoformat`, which Pairling's validator parses `observed_at` with,
/// cannot hold the date and time at the start of `timestamp`: no date, or a field out of its
/// range (Feb 30, hour 24, minute 60). Only what every Python version refuses; other spellings
/// are the schema's `format` to judge (PF104).
fn unreadable_date_time(timestamp: &str) -> Option<&'static str> {
    let bytes = timestamp.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = bytes.get(range)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let extended = bytes.get(4) == Some(&b'-') && bytes.get(7) == Some(&b'-');
    let (year, month, day, after) = if extended {
        (number(0..4), number(5..7), number(8..10), 10)
    } else {
        (number(0..4), number(4..6), number(6..8), 8)
    };
    let (Some(year), Some(month), Some(day)) = (year, month, day) else {
        return Some("it does not begin with a date YYYY-MM-DD");
    };
    if year == 0 {
        return Some("year 0");
    }
    if !(1..=12).contains(&month) {
        return Some("no such month");
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&day) {
        return Some("no such day in its month");
    }
    if number(after + 1..after + 3).is_some_and(|hour| hour > 23) {
        return Some("hour 24 or more");
    }
    if bytes.get(after + 3) == Some(&b':')
        && number(after + 4..after + 6).is_some_and(|minute| minute > 59)
    {
        return Some("minute 60 or more");
    }
    None
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

impl<'a> Graph<'a> {
    pub(super) fn document_rules(&self, findings: &mut Vec<Finding>) {
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
            } else if let Some(problem) = unreadable_date_time(observed_at) {
                findings.push(located(
                    codes::OBSERVED_AT_NOT_UTC,
                    format!(
                        "observed_at '{observed_at}' is not a date and time Pairling's timestamp \
                         parser (Python's datetime) reads: {problem}"
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

    pub(super) fn sources(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn provider_entries(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn implementations(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn transports(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn capabilities(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn claims(&self, findings: &mut Vec<Finding>) {
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

    pub(super) fn exclusions(&self, findings: &mut Vec<Finding>) {
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
}
