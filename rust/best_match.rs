//! Which branch of a failing `oneOf`/`anyOf` came closest: python-jsonschema's `best_match`
//! (`jsonschema/exceptions.py`, `best_match` and `by_relevance`) over the branch errors
//! jsonschema-rs collects (`ValidationErrorKind::OneOfNotValid` / `AnyOf`'s `context`).
//! `python/pairling_fast/_fallback/best_match.py` mirrors this module; docs/reports.md states the
//! rule.
//!
//! From the composite, descend into its branch errors while one of them is strictly the most
//! relevant: the deepest in the instance, then the first in instance order, then a nested
//! `oneOf`/`anyOf` (to descend further), then one whose schema's `type` the instance has. Two
//! branch errors equally relevant stop the descent: nothing says which branch was meant.

use std::cmp::{Ordering, Reverse};

use jsonschema::error::ValidationErrorKind;
use jsonschema::ValidationError;
use serde_json::Value;

use crate::parse::unescape_pointer_token;
use crate::validate::{bounded_message, reported_keyword, BestMatch};

/// The branch error of `error` (a `oneOf` none of whose branches matched, or a failing `anyOf`)
/// that came closest, `None` for any other error or where no branch error stands out. A branch
/// error's `type` is read beside its keyword in `schema`, the validated schema document.
pub(crate) fn closest(error: &ValidationError<'_>, schema: &Value) -> Option<BestMatch> {
    let mut context = branch_errors(error.kind())?;
    let mut best = None;
    loop {
        let mut ranked: Vec<(Relevance, &ValidationError<'static>)> = context
            .into_iter()
            .map(|branch_error| (relevance(branch_error, schema), branch_error))
            .collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0));
        let chosen = match ranked.as_slice() {
            [] => break,
            [first, second, ..] if first.0 == second.0 => break,
            [(_, first), ..] => *first,
        };
        best = Some(chosen);
        match branch_errors(chosen.kind()) {
            Some(next) => context = next,
            None => break,
        }
    }
    best.map(|error| BestMatch {
        pointer: error.instance_path().as_str().to_owned(),
        schema_pointer: error.schema_path().as_str().to_owned(),
        message: bounded_message(error.to_string()),
    })
}

/// The errors of every branch, in branch order, for the composites python-jsonschema gives a
/// context (not a `oneOf` that more than one branch matched).
fn branch_errors(kind: &ValidationErrorKind) -> Option<Vec<&ValidationError<'static>>> {
    match kind {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            Some(context.iter().flatten().collect())
        }
        _ => None,
    }
}

/// python-jsonschema's relevance, smallest first: deepest, first in instance order, a weak
/// (composite) keyword, a schema whose `type` the instance has.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Relevance {
    depth: Reverse<usize>,
    path: Path,
    not_weak: bool,
    type_mismatch: bool,
}

fn relevance(error: &ValidationError<'_>, schema: &Value) -> Relevance {
    let pointer = error.instance_path().as_str();
    let path = Path(pointer.split('/').skip(1).map(str::to_owned).collect());
    let schema_pointer = error.schema_path().as_str();
    let keyword = reported_keyword(error.kind(), schema_pointer);
    let type_matches = keyword != "falseSchema"
        && declared_type(schema, schema_pointer)
            .is_some_and(|declared| has_type(error.instance(), declared));
    Relevance {
        depth: Reverse(path.0.len()),
        path,
        not_weak: !matches!(keyword, "anyOf" | "oneOf"),
        type_mismatch: !type_matches,
    }
}

/// An instance location's tokens (escaped), ordered as python-jsonschema orders its paths: array
/// indices as numbers, names as strings.
#[derive(PartialEq, Eq)]
struct Path(Vec<String>);

impl Ord for Path {
    fn cmp(&self, other: &Self) -> Ordering {
        for (a, b) in self.0.iter().zip(&other.0) {
            let order = match (index(a), index(b)) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => a.cmp(b),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

impl PartialOrd for Path {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A token written as an array index (`0`, `17`; no sign or leading zero), as (digits, token) so
/// that any length compares as the number.
fn index(token: &str) -> Option<(usize, &str)> {
    let canonical = !token.is_empty()
        && token.bytes().all(|byte| byte.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    canonical.then_some((token.len(), token))
}

/// The `type` of the schema object holding the keyword at `schema_pointer`, read in `schema`.
fn declared_type<'s>(schema: &'s Value, schema_pointer: &str) -> Option<&'s Value> {
    let (parent, _keyword) = schema_pointer.rsplit_once('/')?;
    let mut node = schema;
    for token in parent.split('/').skip(1) {
        let token = unescape_pointer_token(token);
        node = match node {
            Value::Object(members) => members.get(token.as_ref())?,
            Value::Array(items) if token.bytes().all(|byte| byte.is_ascii_digit()) => {
                items.get(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    node.get("type")
}

/// Whether `instance` has one of the JSON Schema types `declared` names (a name or a list).
fn has_type(instance: &Value, declared: &Value) -> bool {
    match declared {
        Value::String(name) => is_type(instance, name),
        Value::Array(names) => names
            .iter()
            .any(|name| name.as_str().is_some_and(|name| is_type(instance, name))),
        _ => false,
    }
}

fn is_type(instance: &Value, name: &str) -> bool {
    match (name, instance) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(number)) => {
            number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{CompileOptions, SchemaValidator};
    use serde_json::json;

    fn closest_of(schema: Value, instance: Value) -> Option<(String, String, String)> {
        let validator = SchemaValidator::compile(&schema, &CompileOptions::default()).unwrap();
        let violations = validator.violations(&instance);
        let best = violations[0].best_match.as_deref()?;
        Some((
            best.pointer.clone(),
            best.schema_pointer.clone(),
            best.message.clone(),
        ))
    }

    #[test]
    fn the_deepest_error_of_the_branch_whose_type_matches() {
        let schema = json!({"oneOf": [
            {"type": "string"},
            {"type": "object", "properties": {"port": {"type": "integer"}}},
        ]});
        assert_eq!(
            closest_of(schema, json!({"port": "80"})),
            Some((
                "/port".to_owned(),
                "/oneOf/1/properties/port/type".to_owned(),
                "\"80\" is not of type \"integer\"".to_owned()
            ))
        );
    }

    #[test]
    fn equally_relevant_branches_name_none() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(closest_of(schema, json!(null)), None);
        let schema = json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(closest_of(schema, json!({})), None);
    }

    #[test]
    fn descends_through_nested_composites() {
        let schema = json!({"anyOf": [
            {"type": "integer"},
            {"type": "array", "items": {"anyOf": [{"type": "null"}, {"type": "object", "required": ["id"]}]}},
        ]});
        assert_eq!(
            closest_of(schema, json!([null, {}])),
            Some((
                "/1".to_owned(),
                "/anyOf/1/items/anyOf/1/required".to_owned(),
                "\"id\" is a required property".to_owned()
            ))
        );
    }

    #[test]
    fn paths_order_indices_as_numbers() {
        let short = Path(vec!["9".to_owned()]);
        let long = Path(vec!["10".to_owned()]);
        assert!(short < long);
        assert!(Path(vec!["b".to_owned()]) > Path(vec!["a".to_owned()]));
    }
}
