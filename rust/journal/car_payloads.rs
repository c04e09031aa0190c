//! CAR's event payload contracts: the members of `data` CAR's code writes for each event kind,
//! with their JSON types (python/pairling_fast/car_payloads.toml, each contract citing its emit
//! sites and readers; build.rs turns it into `CONTRACTS`). A missing required member is PF360, a
//! member of another type PF361 (PF363 / PF364 under `payloads = "error"`), at `/data/<member>`.
//! `data` stays open: members no contract names are never reported.
//!
//! A bundle that covers a kind's payload itself (`coverage.journal_event_payloads.covered`, with
//! the schema `journal.event_payload.<kind>` in its `schemas`) replaces the contract for that
//! kind: `data` is validated against CAR's schema (PF362 / PF365).
//!
//! `_fallback/journal/car_payloads.py` mirrors this module.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::codes::{self, Code};
use crate::key_order::{self, Key};
use crate::parse::escape_pointer_token;
use crate::report::Finding;
use crate::validate::{CompileOptions, SchemaValidator};

/// A member type the table may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Any,
    String,
    Boolean,
    Null,
    Object,
    Array,
    /// Any number (`Value::as_f64`).
    Number,
    /// A number written without fraction or exponent (`as_i64` / `as_u64`).
    Integer,
    /// Such a number, not negative (`as_u64`).
    Unsigned,
}

/// One `[[contract]]` of the table.
pub struct Contract {
    /// An event kind, or `*` for every kind.
    pub kind: &'static str,
    pub releases: &'static [&'static str],
    pub members: &'static [Member],
}

pub struct Member {
    pub name: &'static str,
    pub types: &'static [Type],
    pub required: bool,
}

include!(concat!(env!("OUT_DIR"), "/car_payloads.rs"));

/// What a JSON value is, as far as the types tell values apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    String,
    Boolean,
    Null,
    Object,
    Array,
    /// An integer >= 0 (`-0` is 0, as the strict parser reads it).
    Unsigned,
    /// An integer < 0.
    Negative,
    /// A number with a fraction or exponent.
    Fraction,
}

impl Class {
    pub fn of(value: &Value) -> Class {
        match value {
            Value::String(_) => Class::String,
            Value::Bool(_) => Class::Boolean,
            Value::Null => Class::Null,
            Value::Object(_) => Class::Object,
            Value::Array(_) => Class::Array,
            Value::Number(number) if number.is_u64() => Class::Unsigned,
            Value::Number(number) if number.is_i64() => Class::Negative,
            Value::Number(_) => Class::Fraction,
        }
    }

    /// The class of a well-formed JSON value's text (the fast path's spans).
    pub fn of_token(token: &[u8]) -> Class {
        match token.first() {
            Some(b'"') => Class::String,
            Some(b't' | b'f') => Class::Boolean,
            Some(b'n') => Class::Null,
            Some(b'{') => Class::Object,
            Some(b'[') => Class::Array,
            _ if token.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) => Class::Fraction,
            _ if token.first() == Some(&b'-') && token[1..].iter().any(|&b| b != b'0') => {
                Class::Negative
            }
            _ => Class::Unsigned,
        }
    }

    fn described(self) -> &'static str {
        match self {
            Class::String => "a string",
            Class::Boolean => "a boolean",
            Class::Null => "null",
            Class::Object => "an object",
            Class::Array => "an array",
            Class::Unsigned => "an unsigned integer",
            Class::Negative => "a negative integer",
            Class::Fraction => "a number with a fraction or exponent",
        }
    }
}

impl Type {
    fn admits(self, class: Class) -> bool {
        match self {
            Type::Any => true,
            Type::String => class == Class::String,
            Type::Boolean => class == Class::Boolean,
            Type::Null => class == Class::Null,
            Type::Object => class == Class::Object,
            Type::Array => class == Class::Array,
            Type::Number => matches!(class, Class::Unsigned | Class::Negative | Class::Fraction),
            Type::Integer => matches!(class, Class::Unsigned | Class::Negative),
            Type::Unsigned => class == Class::Unsigned,
        }
    }

    fn described(self) -> &'static str {
        match self {
            Type::Any => "any value",
            Type::String => "a string",
            Type::Boolean => "a boolean",
            Type::Null => "null",
            Type::Object => "an object",
            Type::Array => "an array",
            Type::Number => "a number",
            Type::Integer => "an integer",
            Type::Unsigned => "an unsigned integer",
        }
    }
}

fn admitted(types: &[Type], class: Class) -> bool {
    types.iter().any(|t| t.admits(class))
}

fn described(types: &[Type]) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.described()).collect();
    names.join(" or ")
}

/// `payloads`: whether contracts are checked, and how their findings weigh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off,
    Warn,
    Error,
}

impl Mode {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Mode::Off),
            "warn" => Some(Mode::Warn),
            "error" => Some(Mode::Error),
            _ => None,
        }
    }

    fn codes(self) -> [Code; 3] {
        match self {
            Mode::Error => [
                codes::PAYLOAD_MEMBER_MISSING_ERROR,
                codes::PAYLOAD_MEMBER_TYPE_ERROR,
                codes::PAYLOAD_SCHEMA_VIOLATION_ERROR,
            ],
            _ => [
                codes::PAYLOAD_MEMBER_MISSING,
                codes::PAYLOAD_MEMBER_TYPE,
                codes::PAYLOAD_SCHEMA_VIOLATION,
            ],
        }
    }
}

/// How one kind's `data` is checked.
enum Rule {
    /// The table's members for the kind (those of `*` included), in the byte order of their
    /// names, each with its name as a `key_order::Key`.
    Members(Vec<(Key<'static>, &'static Member)>),
    /// The bundle covers the kind itself: its schema.
    Schema(Box<SchemaValidator>),
}

/// The payload rules of one bundle, by event kind.
pub struct Payloads {
    /// The rule of each kind, in the order of the kinds `of` was given.
    rules: Vec<Rule>,
    /// Each kind's index in `rules`.
    kinds: HashMap<String, usize, ahash::RandomState>,
}

/// The name of a covered kind's payload schema inside a bundle's `schemas`.
pub fn covered_schema_name(kind: &str) -> String {
    format!("journal.event_payload.{kind}")
}

impl Payloads {
    /// The rules for the kinds `kinds` of the bundle `document` of CAR release `release`, each
    /// kind's at its index in `kinds` (`admits` is asked by that index).
    pub fn of<'a>(
        release: &str,
        document: &Value,
        kinds: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let applies = |contract: &&Contract| contract.releases.contains(&release);
        let every: Vec<&'static Member> = CONTRACTS
            .iter()
            .filter(applies)
            .filter(|contract| contract.kind == "*")
            .flat_map(|contract| contract.members)
            .collect();
        let covered: Vec<&str> = document["coverage"]["journal_event_payloads"]["covered"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut rules = Vec::new();
        let mut indices = HashMap::default();
        for kind in kinds {
            let schema = covered
                .contains(&kind)
                .then(|| document["schemas"].get(covered_schema_name(kind)))
                .flatten()
                .and_then(|schema| {
                    let options = CompileOptions {
                        validate_formats: Some(true),
                        resources: Vec::new(),
                        ..Default::default()
                    };
                    SchemaValidator::compile(schema, &options).ok()
                });
            let rule = match schema {
                Some(validator) => Rule::Schema(Box::new(validator)),
                None => {
                    let mut members: Vec<&'static Member> = CONTRACTS
                        .iter()
                        .filter(applies)
                        .filter(|contract| contract.kind == kind)
                        .flat_map(|contract| contract.members)
                        .chain(every.iter().copied())
                        .collect();
                    members.sort_by_key(|member| member.name);
                    let named =
                        |member: &'static Member| (Key::new(member.name.as_bytes()), member);
                    Rule::Members(members.into_iter().map(named).collect())
                }
            };
            indices.insert(kind.to_owned(), rules.len());
            rules.push(rule);
        }
        Payloads {
            rules,
            kinds: indices,
        }
    }

    fn rule(&self, kind: &str) -> Option<&Rule> {
        self.kinds.get(kind).map(|&index| &self.rules[index])
    }

    /// Whether the `data` of the kind at index `kind` (among those `of` was given: no lookup of
    /// its name on the fast path) breaks no rule, `data`'s members given as (key, value text) in
    /// byte order of their keys: one merge walk of those and the rule's members (sorted by name
    /// too), not a search per member. A kind the bundle covers itself is never decided here (the
    /// full path validates it).
    pub(crate) fn admits<'t>(
        &self,
        kind: usize,
        mut data: impl Iterator<Item = (Key<'t>, &'t [u8])>,
    ) -> bool {
        match self.rules.get(kind) {
            Some(Rule::Members(members)) => {
                let mut next = data.next();
                members.iter().all(|&(name, member)| loop {
                    let Some((key, value)) = next else {
                        return !member.required;
                    };
                    match key_order::order(key, name) {
                        Ordering::Less => next = data.next(),
                        Ordering::Equal => return admitted(member.types, Class::of_token(value)),
                        Ordering::Greater => return !member.required,
                    }
                })
            }
            Some(Rule::Schema(_)) => false,
            None => true,
        }
    }

    /// The findings for an event of `kind` whose `data` is `data`, pointers from `/data`.
    pub fn findings(&self, kind: &str, data: &Map<String, Value>, mode: Mode) -> Vec<Finding> {
        let [missing, mistyped, violated] = mode.codes();
        match self.rule(kind) {
            _ if mode == Mode::Off => Vec::new(),
            Some(Rule::Members(members)) => members
                .iter()
                .filter_map(|(_, member)| {
                    let pointer = format!("/data/{}", escape_pointer_token(member.name));
                    let wanted = described(member.types);
                    match data.get(member.name).map(Class::of) {
                        None if member.required => Some(Finding::new(
                            missing,
                            format!(
                                "{kind} data has no \"{}\", which CAR writes on every {kind} \
                                 ({wanted})",
                                member.name
                            ),
                        )),
                        Some(class) if !admitted(member.types, class) => Some(Finding::new(
                            mistyped,
                            format!(
                                "\"{}\" is {}; CAR writes {wanted} here ({kind})",
                                member.name,
                                class.described()
                            ),
                        )),
                        _ => None,
                    }
                    .map(|finding| finding.at(pointer))
                })
                .collect(),
            Some(Rule::Schema(validator)) => {
                let data = Value::Object(data.clone());
                validator
                    .violations(&data)
                    .into_iter()
                    .map(|violation| {
                        let message =
                            format!("{} (CAR's payload schema of {kind})", violation.message);
                        Finding {
                            pointer: Some(violation.pointer),
                            schema_pointer: Some(violation.schema_pointer),
                            best_match: violation.best_match,
                            ..Finding::new(violated, message)
                        }
                        .within("/data")
                    })
                    .collect()
            }
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payloads(document: &Value) -> Payloads {
        Payloads::of(
            "0.58.0",
            document,
            ["run_started", "inference_metered", "state_changed"],
        )
    }

    fn kind_index(payloads: &Payloads, kind: &str) -> usize {
        payloads.kinds[kind]
    }

    fn found(payloads: &Payloads, kind: &str, data: Value) -> Vec<(String, String)> {
        let data = data.as_object().expect("an object").clone();
        payloads
            .findings(kind, &data, Mode::Warn)
            .into_iter()
            .map(|f| (f.code.to_owned(), f.pointer.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn missing_and_mistyped_members_are_located() {
        let rules = payloads(&json!({}));
        let good = json!({"agent_id": "a", "intent": "i", "started_at": "2026-01-01T00:00:00Z"});
        assert!(found(&rules, "run_started", good.clone()).is_empty());
        let mut bad = good.clone();
        bad.as_object_mut().unwrap().remove("intent");
        bad["agent_id"] = json!(7);
        assert_eq!(
            found(&rules, "run_started", bad),
            [
                ("PF361".to_owned(), "/data/agent_id".to_owned()),
                ("PF360".to_owned(), "/data/intent".to_owned()),
            ]
        );
        // Every kind: the metric keys, when present, have CAR's types; other members are open.
        assert!(found(&rules, "state_changed", json!({"anything": "x"})).is_empty());
        assert_eq!(
            found(
                &rules,
                "inference_metered",
                json!({"tokens_in": "12", "agent": "a"})
            ),
            [("PF361".to_owned(), "/data/tokens_in".to_owned())]
        );
        assert_eq!(
            found(
                &rules,
                "state_changed",
                json!({"tokens_out": -1, "cost_usd": 1})
            ),
            [("PF361".to_owned(), "/data/tokens_out".to_owned())]
        );
    }

    #[test]
    fn the_span_check_agrees_with_the_value_check() {
        let rules = payloads(&json!({}));
        for text in [
            "0", "-0", "-1", "1.0", "1e3", "\"s\"", "true", "null", "[]", "{}",
        ] {
            let value: Value = crate::parse::parse_strict(text.as_bytes()).expect("JSON");
            assert_eq!(
                Class::of_token(text.as_bytes()),
                Class::of(&value),
                "{text}"
            );
            let data = json!({"tokens_in": value});
            let by_value = found(&rules, "state_changed", data.clone()).is_empty();
            let members = [
                (Key::new(b"a"), &b"1"[..]),
                (Key::new(b"tokens_in"), text.as_bytes()),
                (Key::new(b"z"), b"2"),
            ];
            let by_span = rules.admits(kind_index(&rules, "state_changed"), members.into_iter());
            assert_eq!(by_value, by_span, "{text}");
        }
    }

    #[test]
    fn a_kind_the_bundle_covers_takes_the_bundles_schema() {
        let bundle = json!({
            "coverage": {"journal_event_payloads": {"covered": ["run_started"]}},
            "schemas": {"journal.event_payload.run_started": {
                "type": "object", "required": ["run_label"],
                "properties": {"run_label": {"type": "string"}}
            }}
        });
        let rules = payloads(&bundle);
        // Ours no longer applies (no agent_id needed); CAR's schema does.
        assert!(found(&rules, "run_started", json!({"run_label": "x"})).is_empty());
        assert_eq!(
            found(&rules, "run_started", json!({"run_label": 1})),
            [("PF362".to_owned(), "/data/run_label".to_owned())]
        );
        assert!(!rules.admits(
            kind_index(&rules, "run_started"),
            [(Key::new(b"run_label"), &b"\"x\""[..])].into_iter()
        ));
        // Other kinds keep the contracts.
        assert_eq!(
            found(&rules, "inference_metered", json!({"agent": 1})),
            [("PF361".to_owned(), "/data/agent".to_owned())]
        );
    }

    #[test]
    fn a_payload_schemas_failing_composite_names_its_closest_branch_inside_data() {
        let bundle = json!({
            "coverage": {"journal_event_payloads": {"covered": ["run_started"]}},
            "schemas": {"journal.event_payload.run_started": {
                "type": "object",
                "properties": {"limit": {"anyOf": [
                    {"type": "object", "properties": {"max": {"type": "integer"}}},
                    {"type": "null"}
                ]}}
            }}
        });
        let data = json!({"limit": {"max": "ten"}});
        let [finding] =
            &payloads(&bundle).findings("run_started", data.as_object().unwrap(), Mode::Warn)[..]
        else {
            panic!("one finding")
        };
        assert_eq!(finding.pointer.as_deref(), Some("/data/limit"));
        let best = finding.best_match.as_deref().expect("a closest branch");
        assert_eq!(
            (best.pointer.as_str(), best.schema_pointer.as_str()),
            (
                "/data/limit/max",
                "/properties/limit/anyOf/0/properties/max/type"
            )
        );
        assert_eq!(best.message, "\"ten\" is not of type \"integer\"");
    }

    #[test]
    fn error_mode_uses_the_error_codes_and_off_reports_nothing() {
        let rules = payloads(&json!({}));
        let data = json!({"agent_id": 1}).as_object().unwrap().clone();
        let codes: Vec<&str> = rules
            .findings("run_started", &data, Mode::Error)
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(codes, ["PF364", "PF363", "PF363"]);
        assert!(rules.findings("run_started", &data, Mode::Off).is_empty());
    }
}
