//! An event whose `kind` its release does not know: the schema's words for it ("not valid under
//! any of the schemas listed in the 'oneOf' keyword") replaced by what a reader needs, the release
//! and the kinds closest to the name (a misspelling is the usual cause).
//! `python/pairling_fast/_fallback/journal/kinds.py` mirrors this module.

use serde_json::Value;

use crate::report::Finding;
use crate::validate::bounded_message;

/// Where the event schema's kind enum fails: the `kind` member, at `EventKind`'s `oneOf`.
const KIND_POINTER: &str = "/kind";
const KIND_SCHEMA_POINTER: &str = "/definitions/EventKind/oneOf";

/// How many of the closest kinds a finding names, and how far (in edits) a kind may be.
const CLOSEST_NAMED: usize = 3;
const CLOSEST_EDITS: usize = 3;

/// The finding of an event whose string `kind` is not one of `kinds` (sorted) reworded; every other
/// finding as it is. `release` is the bundle's version (`seed` for the specification's copy).
pub(super) fn name_unknown_kind(
    finding: &mut Finding,
    event: &Value,
    kinds: &[String],
    release: &str,
) {
    if finding.pointer.as_deref() != Some(KIND_POINTER)
        || finding.schema_pointer.as_deref() != Some(KIND_SCHEMA_POINTER)
    {
        return;
    }
    let Some(kind) = event.get("kind").and_then(Value::as_str) else {
        return;
    };
    if kinds
        .binary_search_by(|known| known.as_str().cmp(kind))
        .is_ok()
    {
        return;
    }
    finding.message = unknown_kind_message(kind, kinds, release);
}

/// `"action_rejectd" is an unknown event kind for CAR 0.60.0; the closest are "action_rejected",
/// …`: the name first, as jsonschema-rs's message has it, so redaction masks it alike.
fn unknown_kind_message(kind: &str, kinds: &[String], release: &str) -> String {
    let quoted = |name: &str| serde_json::to_string(name).expect("a string serialises");
    let whose = if release == "seed" {
        "the seed wire schema (car-wire-schema.v1.json)".to_owned()
    } else {
        format!("CAR {release}")
    };
    let closest: Vec<String> = closest_kinds(kind, kinds)
        .into_iter()
        .map(&quoted)
        .collect();
    let tail = if closest.is_empty() {
        format!("; none of its kinds is within {CLOSEST_EDITS} edits")
    } else {
        format!("; the closest: {}", closest.join(", "))
    };
    bounded_message(format!(
        "{} is an unknown event kind for {whose}{tail}",
        quoted(kind)
    ))
}

/// Up to `CLOSEST_NAMED` of `kinds` within `CLOSEST_EDITS` edits of `name`, nearest first (ties
/// in name order).
fn closest_kinds<'k>(name: &str, kinds: &'k [String]) -> Vec<&'k str> {
    let name: Vec<char> = name.chars().collect();
    let mut near: Vec<(usize, &str)> = kinds
        .iter()
        .filter_map(|kind| {
            let kind_chars: Vec<char> = kind.chars().collect();
            // The length difference alone is a lower bound: a long value costs nothing.
            if kind_chars.len().abs_diff(name.len()) > CLOSEST_EDITS {
                return None;
            }
            let edits = edit_distance(&name, &kind_chars);
            (edits <= CLOSEST_EDITS).then_some((edits, kind.as_str()))
        })
        .collect();
    near.sort_unstable();
    near.into_iter()
        .take(CLOSEST_NAMED)
        .map(|(_, kind)| kind)
        .collect()
}

/// Levenshtein distance over characters (insertions, deletions, substitutions).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, left) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, right) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(left != right);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Vec<String> {
        let mut kinds: Vec<String> = [
            "action_rejected",
            "action_retrying",
            "action_failed",
            "run_started",
            "state_changed",
        ]
        .map(str::to_owned)
        .to_vec();
        kinds.sort();
        kinds
    }

    #[test]
    fn edit_distances() {
        let chars = |text: &str| text.chars().collect::<Vec<char>>();
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("é"), &chars("e")), 1);
        assert_eq!(edit_distance(&chars("same"), &chars("same")), 0);
    }

    #[test]
    fn names_the_closest_kinds_of_the_release() {
        assert_eq!(
            unknown_kind_message("action_rejectd", &kinds(), "0.60.0"),
            "\"action_rejectd\" is an unknown event kind for CAR 0.60.0; the closest: \
             \"action_rejected\""
        );
        assert_eq!(closest_kinds("action_fxiled", &kinds()), ["action_failed"]);
        assert_eq!(
            unknown_kind_message("nope", &kinds(), "seed"),
            "\"nope\" is an unknown event kind for the seed wire schema \
             (car-wire-schema.v1.json); none of its kinds is within 3 edits"
        );
        let long = "x".repeat(100_000);
        assert!(unknown_kind_message(&long, &kinds(), "0.58.0").contains("[message truncated"));
    }

    #[test]
    fn only_the_kind_enum_finding_is_reworded() {
        let event = serde_json::json!({"kind": "run_startd"});
        let mut finding =
            Finding::new(crate::codes::SCHEMA_VIOLATION, "schema words").at(KIND_POINTER);
        let mut other = finding.clone();
        finding.schema_pointer = Some(KIND_SCHEMA_POINTER.to_owned());
        name_unknown_kind(&mut finding, &event, &kinds(), "0.60.0");
        assert!(finding.message.ends_with("the closest: \"run_started\""));
        other.schema_pointer = Some("/properties/kind/type".to_owned());
        name_unknown_kind(&mut other, &event, &kinds(), "0.60.0");
        assert_eq!(other.message, "schema words");
    }
}
