//! JSON Schema validation: compiling user schemas, the bundled spec schemas, and our `format`
//! checks. `python/pairling_fast/_fallback/validate.py` mirrors this module; keep them in step
//! (the rules are written down in `docs/formats.md` and `docs/architecture.md`).

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, Retrieve, Uri, ValidationError, Validator};
use serde_json::{Map, Value};

/// One reason an instance does not match a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// RFC 6901 pointer to the offending part of the instance.
    pub pointer: String,
    /// Pointer to the failing keyword in the schema after `$ref` resolution: jsonschema-rs's
    /// `schema_path()` (after a `$ref`, relative to the target's schema resource; docs/formats.md).
    pub schema_pointer: String,
    pub keyword: String,
    pub message: String,
}

/// A schema that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// `PF102`: the schema is invalid; `PF103`: a `$ref` cannot be resolved (a remote one never
    /// is).
    pub code: &'static str,
    pub message: String,
    /// Where in the schema the problem is (`""` when the resolver does not say).
    pub schema_pointer: String,
}

pub const INVALID_SCHEMA: &str = "PF102";
pub const UNRESOLVABLE_REF: &str = "PF103";

#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// `None` follows the draft: drafts 4, 6 and 7 assert formats, 2019-09 and 2020-12 only
    /// annotate.
    pub validate_formats: Option<bool>,
    /// Documents that `$ref`s may name by URI; nothing else is ever fetched.
    pub resources: Vec<(String, Value)>,
}

/// A compiled schema. Immutable, so it can be shared across threads.
pub struct SchemaValidator {
    validator: Validator,
}

impl SchemaValidator {
    pub fn compile(schema: &Value, opts: &CompileOptions) -> Result<Self, CompileError> {
        let asserts_formats = opts
            .validate_formats
            .unwrap_or_else(|| draft_asserts_formats(Draft::default().detect(schema)));
        let retriever = ResourceRetriever {
            resources: opts
                .resources
                .iter()
                .map(|(uri, document)| (without_empty_fragment(uri).to_owned(), document.clone()))
                .collect(),
        };
        let mut options = jsonschema::options()
            .with_retriever(retriever)
            .should_validate_formats(asserts_formats);
        if asserts_formats {
            // A custom `format` keyword replaces the crate's built-in one entirely, so exactly the
            // formats documented in docs/formats.md are checked, as in the Python backend.
            options = options.with_keyword("format", format_keyword);
        }
        options
            .build(schema)
            .map(|validator| SchemaValidator { validator })
            .map_err(|error| compile_error(&error))
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every violation, sorted by (pointer, schema_pointer, message).
    pub fn violations(&self, instance: &Value) -> Vec<SchemaViolation> {
        // Most instances are valid, and `is_valid` stops early without building any error.
        if self.validator.is_valid(instance) {
            return Vec::new();
        }
        let mut violations: Vec<SchemaViolation> = self
            .validator
            .iter_errors(instance)
            .map(|error| {
                let schema_pointer = error.schema_path().as_str();
                SchemaViolation {
                    pointer: error.instance_path().as_str().to_owned(),
                    keyword: reported_keyword(error.kind(), schema_pointer).to_owned(),
                    schema_pointer: schema_pointer.to_owned(),
                    message: bounded_message(error.to_string()),
                }
            })
            .collect();
        violations.sort_by(|a, b| {
            (&a.pointer, &a.schema_pointer, &a.message).cmp(&(
                &b.pointer,
                &b.schema_pointer,
                &b.message,
            ))
        });
        violations
    }
}

/// The keyword reported for an error: the last token of its `schema_pointer` (a `false` subschema
/// is `falseSchema`). jsonschema-rs names some errors after a related keyword instead (`contains`
/// for `minContains`/`maxContains`, `required` for `dependentRequired`/`dependencies`,
/// `propertyNames` for the subschema keyword a name failed); python-jsonschema names the keyword at
/// the location, and so do we, in both backends.
fn reported_keyword<'e>(kind: &'e ValidationErrorKind, schema_pointer: &'e str) -> &'e str {
    match kind {
        ValidationErrorKind::FalseSchema => kind.keyword(),
        _ => schema_pointer.rsplit('/').next().unwrap_or_default(),
    }
}

/// Messages quote the offending value; one of 30 MB must not make a 30 MB finding (nor
/// thousands of them a report of gigabytes). Longer messages keep their first
/// `MESSAGE_KEPT_CHARS` characters and say their size (the fallback cuts the same way).
pub const MESSAGE_MAX_CHARS: usize = 512;
pub const MESSAGE_KEPT_CHARS: usize = 256;

pub fn bounded_message(message: String) -> String {
    if message.chars().nth(MESSAGE_MAX_CHARS).is_none() {
        return message;
    }
    let kept: String = message.chars().take(MESSAGE_KEPT_CHARS).collect();
    format!("{kept} … [message truncated: {} bytes]", message.len())
}

fn draft_asserts_formats(draft: Draft) -> bool {
    matches!(draft, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
}

fn compile_error(error: &ValidationError<'_>) -> CompileError {
    let code = match error.kind() {
        ValidationErrorKind::Referencing(_) => UNRESOLVABLE_REF,
        _ => INVALID_SCHEMA,
    };
    CompileError {
        code,
        message: error.to_string(),
        // For a schema rejected by its meta-schema, the "instance" is the schema itself.
        schema_pointer: error.instance_path().as_str().to_owned(),
    }
}

fn without_empty_fragment(uri: &str) -> &str {
    uri.strip_suffix('#').unwrap_or(uri)
}

/// Serves `$ref`s from the caller's `resources` only: validation never touches the network.
struct ResourceRetriever {
    resources: HashMap<String, Value>,
}

impl Retrieve for ResourceRetriever {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let uri = uri.as_str();
        self.resources
            .get(without_empty_fragment(uri))
            .cloned()
            .ok_or_else(|| format!("remote $ref refused (no network): {uri}").into())
    }
}

// ---------------------------------------------------------------------------------------------
// Formats (docs/formats.md)

/// A `format` this crate asserts. `float`, `double` and unknown names check nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormatCheck {
    DateTime,
    Date,
    Time,
    /// The schemars integer formats: an integral number within `min..=max`.
    Integer {
        min: i128,
        max: i128,
    },
}

impl FormatCheck {
    fn by_name(name: &str) -> Option<Self> {
        let integer = |min: i128, max: i128| Some(FormatCheck::Integer { min, max });
        match name {
            "date-time" => Some(FormatCheck::DateTime),
            "date" => Some(FormatCheck::Date),
            "time" => Some(FormatCheck::Time),
            "int8" => integer(i8::MIN.into(), i8::MAX.into()),
            "int16" => integer(i16::MIN.into(), i16::MAX.into()),
            "int32" => integer(i32::MIN.into(), i32::MAX.into()),
            "int64" => integer(i64::MIN.into(), i64::MAX.into()),
            "uint8" => integer(0, u8::MAX.into()),
            "uint16" => integer(0, u16::MAX.into()),
            "uint32" => integer(0, u32::MAX.into()),
            "uint64" | "uint" => integer(0, u64::MAX.into()),
            _ => None,
        }
    }

    /// A format constrains only its own instance type; anything else passes.
    fn accepts(self, instance: &Value) -> bool {
        match (self, instance) {
            (FormatCheck::DateTime, Value::String(text)) => is_date_time(text),
            (FormatCheck::Date, Value::String(text)) => is_date(text),
            (FormatCheck::Time, Value::String(text)) => is_time(text),
            (FormatCheck::Integer { min, max }, Value::Number(number)) => {
                integral_value(number).is_some_and(|value| (min..=max).contains(&value))
            }
            _ => true,
        }
    }
}

/// The exact integer a JSON number stands for (`5.0` counts), or `None` for a fraction or for a
/// magnitude beyond every supported integer format.
fn integral_value(number: &serde_json::Number) -> Option<i128> {
    if let Some(value) = number.as_i64() {
        return Some(value.into());
    }
    if let Some(value) = number.as_u64() {
        return Some(value.into());
    }
    let value = number.as_f64()?;
    // 2^64 bounds every format; below it the cast is exact for an integral f64.
    let limit = 18_446_744_073_709_551_616.0_f64;
    (value.fract() == 0.0 && value.abs() < limit).then_some(value as i128)
}

struct FormatKeyword {
    name: String,
    check: Option<FormatCheck>,
}

impl<'i> Keyword<'i> for FormatKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if Keyword::is_valid(self, instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(format!(
                "{instance} is not a \"{}\"",
                self.name
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.check.map_or(true, |check| check.accepts(instance))
    }
}

fn format_keyword<'a>(
    _parent: &'a Map<String, Value>,
    value: &'a Value,
    _location: Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    // The meta-schema has already required a string; a non-string is left to it.
    let name = value.as_str().unwrap_or_default();
    Ok(Box::new(FormatKeyword {
        name: name.to_owned(),
        check: FormatCheck::by_name(name),
    }))
}

/// `n` ASCII digits at `text[start..]`, as a number.
fn digits(text: &[u8], start: usize, n: usize) -> Option<u32> {
    let field = text.get(start..start + n)?;
    field.iter().try_fold(0_u32, |acc, &byte| {
        byte.is_ascii_digit()
            .then(|| acc * 10 + u32::from(byte - b'0'))
    })
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`, a real day of the (proleptic Gregorian) calendar.
fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    match (
        digits(bytes, 0, 4),
        digits(bytes, 5, 2),
        digits(bytes, 8, 2),
    ) {
        (Some(year), Some(month), Some(day)) => {
            (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
        }
        _ => false,
    }
}

/// RFC 3339 `full-time`: `HH:MM:SS(.frac)?(Z|±HH:MM)`. A leap second (`:60`) is accepted only
/// where one can occur: at 23:59 UTC once the offset is applied.
fn is_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 9 || bytes[2] != b':' || bytes[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (
        digits(bytes, 0, 2),
        digits(bytes, 3, 2),
        digits(bytes, 6, 2),
    ) else {
        return false;
    };
    let mut rest = 8;
    if bytes[rest] == b'.' {
        let fraction = bytes[rest + 1..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        if fraction == 0 {
            return false;
        }
        rest += 1 + fraction;
    }
    let offset_minutes: i64 = match &bytes[rest..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (Some(offset_hour), Some(offset_minute)) =
                (digits(bytes, rest + 1, 2), digits(bytes, rest + 4, 2))
            else {
                return false;
            };
            if offset_hour > 23 || offset_minute > 59 {
                return false;
            }
            let magnitude = i64::from(offset_hour * 60 + offset_minute);
            if *sign == b'+' {
                magnitude
            } else {
                -magnitude
            }
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let utc_minute_of_day = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
    second < 60 || utc_minute_of_day == 23 * 60 + 59
}

/// RFC 3339 `date-time`: `full-date "T" full-time`, with `T`/`Z` in either case (RFC 3339 §5.6).
fn is_date_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() > 11
        && matches!(bytes[10], b'T' | b't')
        && text.is_char_boundary(10)
        && is_date(&text[..10])
        && is_time(&text[11..])
}

// ---------------------------------------------------------------------------------------------
// Bundled schemas

const CAPABILITY_MAP_ID: &str = "pairling.capability-map.2.0.0";
const WIRE_ID_PREFIX: &str = "car.";
const CAPABILITY_MAP_TEXT: &str =
    include_str!("../schemas/coding-agent-remote-control-capability-map.schema.json");
const WIRE_TEXT: &str = include_str!("../schemas/car-wire-schema.v1.json");

/// The whole CAR wire schema document (its `schemas` member holds one schema per message type).
pub fn wire_bundle() -> &'static Value {
    static WIRE: OnceLock<Value> = OnceLock::new();
    WIRE.get_or_init(|| serde_json::from_str(WIRE_TEXT).expect("bundled wire schema is JSON"))
}

fn bundled_schemas() -> &'static HashMap<String, Value> {
    static SCHEMAS: OnceLock<HashMap<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let capability_map = serde_json::from_str(CAPABILITY_MAP_TEXT)
            .expect("bundled capability-map schema is JSON");
        let wire_schemas = wire_bundle()["schemas"]
            .as_object()
            .expect("the wire schema has a `schemas` object");
        wire_schemas
            .iter()
            .map(|(name, schema)| (format!("{WIRE_ID_PREFIX}{name}"), schema.clone()))
            .chain([(CAPABILITY_MAP_ID.to_owned(), capability_map)])
            .collect()
    })
}

/// Ids of the bundled schemas, sorted.
pub fn bundled_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = bundled_schemas().keys().map(String::as_str).collect();
    ids.sort_unstable();
    ids
}

pub fn bundled_schema(id: &str) -> Option<&'static Value> {
    bundled_schemas().get(id)
}

/// The compiled bundled schema (compiled on first use), formats always asserted.
pub fn bundled_validator(id: &str) -> Option<&'static SchemaValidator> {
    static VALIDATORS: OnceLock<HashMap<&'static str, OnceLock<SchemaValidator>>> = OnceLock::new();
    let slots = VALIDATORS.get_or_init(|| {
        bundled_ids()
            .into_iter()
            .map(|id| (id, OnceLock::new()))
            .collect()
    });
    let (&id, slot) = slots.get_key_value(id)?;
    Some(slot.get_or_init(|| {
        let options = CompileOptions {
            validate_formats: Some(true),
            resources: Vec::new(),
        };
        let schema = bundled_schema(id).expect("every slot has a bundled schema");
        SchemaValidator::compile(schema, &options).expect("bundled schemas compile")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_message_keeps_its_start_and_says_its_size() {
        let short = "x".repeat(MESSAGE_MAX_CHARS);
        assert_eq!(bounded_message(short.clone()), short);
        let long = format!("\"{}\" is not of type \"integer\"", "é".repeat(1000));
        let bounded = bounded_message(long.clone());
        assert!(bounded.starts_with(&long.chars().take(MESSAGE_KEPT_CHARS).collect::<String>()));
        assert!(bounded.ends_with(&format!("[message truncated: {} bytes]", long.len())));
    }

    fn compile(
        schema: Value,
        validate_formats: Option<bool>,
    ) -> Result<SchemaValidator, CompileError> {
        SchemaValidator::compile(
            &schema,
            &CompileOptions {
                validate_formats,
                resources: Vec::new(),
            },
        )
    }

    fn triples(violations: &[SchemaViolation]) -> Vec<(&str, &str, &str)> {
        violations
            .iter()
            .map(|v| {
                (
                    v.pointer.as_str(),
                    v.schema_pointer.as_str(),
                    v.keyword.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn date_time() {
        for valid in [
            "2024-02-29T12:00:00Z",
            "2026-12-02t14:21:11.877945340z",
            "2026-12-02T14:21:11+05:30",
            "1998-12-31T23:59:60Z",
            "1998-12-31T15:59:60-08:00",
        ] {
            assert!(is_date_time(valid), "{valid}");
        }
        for invalid in [
            "2023-02-29T12:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-12-02 14:21:11Z",
            "2026-12-02T14:21:11",
            "2026-12-02T24:00:00Z",
            "2026-12-02T14:21:11.Z",
            "2026-12-02T14:21:11+24:00",
            "1998-12-31T23:58:60Z",
            "1998-12-31T23:59:61Z",
            "２０２６-12-02T14:21:11Z",
            "",
        ] {
            assert!(!is_date_time(invalid), "{invalid}");
        }
    }

    #[test]
    fn integer_formats() {
        let uint8 = FormatCheck::by_name("uint8").unwrap();
        assert!(uint8.accepts(&json!(255)));
        assert!(uint8.accepts(&json!(5.0)));
        assert!(!uint8.accepts(&json!(300)));
        assert!(!uint8.accepts(&json!(-1)));
        assert!(uint8.accepts(&json!("300")));
        let uint64 = FormatCheck::by_name("uint64").unwrap();
        assert!(uint64.accepts(&json!(u64::MAX)));
        assert!(!uint64.accepts(&json!(-1)));
        assert!(!FormatCheck::by_name("int32").unwrap().accepts(&json!(2.5)));
        assert!(!FormatCheck::by_name("int64")
            .unwrap()
            .accepts(&json!(9.3e18)));
        assert_eq!(FormatCheck::by_name("double"), None);
    }

    #[test]
    fn formats_follow_the_draft_unless_forced() {
        let bad = json!("2023-02-29T00:00:00Z");
        let draft7 =
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "format": "date-time"});
        let draft2020 = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "format": "date-time",
        });
        assert!(!compile(draft7.clone(), None).unwrap().is_valid(&bad));
        assert!(compile(draft7, Some(false)).unwrap().is_valid(&bad));
        assert!(compile(draft2020.clone(), None).unwrap().is_valid(&bad));
        let forced = compile(draft2020, Some(true)).unwrap();
        assert_eq!(
            triples(&forced.violations(&bad)),
            [("", "/format", "format")]
        );
    }

    #[test]
    fn compile_errors() {
        let remote = compile(json!({"$ref": "https://example.com/s.json"}), None)
            .err()
            .unwrap();
        assert_eq!(remote.code, UNRESOLVABLE_REF);
        assert!(remote
            .message
            .contains("remote $ref refused (no network): https://example.com/s.json"));
        let invalid = compile(json!({"properties": {"a": {"type": 5}}}), None)
            .err()
            .unwrap();
        assert_eq!(invalid.code, INVALID_SCHEMA);
        assert_eq!(invalid.schema_pointer, "/properties/a/type");
    }

    #[test]
    fn resources_serve_refs() {
        let options = CompileOptions {
            validate_formats: None,
            resources: vec![(
                "https://example.com/port.json#".to_owned(),
                json!({"type": "integer"}),
            )],
        };
        let schema = json!({"properties": {"port": {"$ref": "https://example.com/port.json"}}});
        let validator = SchemaValidator::compile(&schema, &options).unwrap();
        assert!(validator.is_valid(&json!({"port": 1})));
        assert_eq!(
            triples(&validator.violations(&json!({"port": "x"}))),
            [("/port", "/type", "type")]
        );
    }

    #[test]
    fn keywords_are_the_last_schema_pointer_token() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "propertyNames": {"maxLength": 1},
            "dependentRequired": {"a": ["b"]},
            "properties": {"f": false},
        });
        let violations = compile(schema, None)
            .unwrap()
            .violations(&json!({"a": 1, "f": 2}));
        assert_eq!(
            triples(&violations),
            [
                ("", "/dependentRequired", "dependentRequired"),
                ("/f", "/properties/f", "falseSchema"),
            ]
        );
    }

    #[test]
    fn bundled() {
        let ids = bundled_ids();
        assert_eq!(ids.len(), 20);
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        for id in ids {
            assert!(bundled_schema(id).is_some());
            assert!(bundled_validator(id).is_some(), "{id}");
        }
        assert!(bundled_validator("nope").is_none());
        assert!(wire_bundle()["schemas"].is_object());
        let action_result = bundled_validator("car.type.action_result").unwrap();
        let result = json!({
            "action_id": "a",
            "status": "nope",
            "state_changes": {},
            "timestamp": "2026-12-02T14:21:11Z",
        });
        assert_eq!(
            triples(&action_result.violations(&result)),
            [("/status", "/definitions/ActionStatus/enum", "enum")]
        );
    }

    #[test]
    fn validators_are_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<SchemaValidator>();
    }
}
