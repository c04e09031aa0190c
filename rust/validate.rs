//! JSON Schema validation: compiling user schemas, the bundled spec schemas, and our `format`
//! checks. `python/pairling_fast/_fallback/validate.py` mirrors this module; keep them in step
//! (the rules are written down in `docs/formats.md` and `docs/architecture.md`).

use crate::best_match;
use crate::codes::{self, Code};
use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::json::{Json, JsonNumber, Node, SerdeJson};
use jsonschema::{Draft, Keyword, Retrieve, Uri, ValidationError, Validator};
use serde_json::Value;

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
    /// For a `oneOf` none of whose branches matched and a failing `anyOf`: the branch error that
    /// came closest (`best_match.rs`), `None` where no branch error stands out.
    pub best_match: Option<Box<BestMatch>>,
}

/// The error of a composite's branch that came closest to matching, located as a violation is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BestMatch {
    pub pointer: String,
    pub schema_pointer: String,
    pub message: String,
}

/// A schema that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// `PF102`: the schema is invalid; `PF103`: a `$ref` cannot be resolved (a remote one never
    /// is).
    pub code: Code,
    pub message: String,
    /// Where in the schema the problem is (`""` when the resolver does not say).
    pub schema_pointer: String,
}

#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// `None` follows the draft: drafts 4, 6 and 7 assert formats, 2019-09 and 2020-12 only
    /// annotate.
    pub validate_formats: Option<bool>,
    /// Documents that `$ref`s may name by URI; nothing else is ever fetched.
    pub resources: Vec<(String, Value)>,
    /// The caller's own formats (jsonschema-rs's `formats=`), asserted like the built-in ones.
    pub formats: UserFormats,
    /// A `format` no check knows is a compile error (PF102) instead of an annotation
    /// (jsonschema-rs's `ignore_unknown_formats=False`), where formats are asserted.
    pub reject_unknown_formats: bool,
    /// The root's base URI, against which its `$id` and `$ref`s resolve (jsonschema-rs's
    /// `base_uri`).
    pub base_uri: Option<String>,
    /// The regular-expression engine of `pattern` and `patternProperties`, and its limits
    /// (jsonschema-rs's `pattern_options`); `None`: the crate's default (fancy-regex).
    pub patterns: Option<PatternEngine>,
}

/// jsonschema-rs's `FancyRegexOptions` and `RegexOptions`; a limit left `None` keeps the
/// engine's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternEngine {
    /// fancy-regex: lookaround and backreferences, backtracking stopped after `backtrack_limit`
    /// steps.
    Fancy {
        backtrack_limit: Option<usize>,
        size_limit: Option<usize>,
        dfa_size_limit: Option<usize>,
    },
    /// The `regex` crate: linear-time matching; a pattern with lookaround or backreferences
    /// does not compile.
    Regex {
        size_limit: Option<usize>,
        dfa_size_limit: Option<usize>,
    },
}

/// A caller's check of a string `format`: whether the text matches.
pub type FormatFn = std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The caller's formats by name (`CompileOptions::formats`).
#[derive(Clone, Default)]
pub struct UserFormats(pub Vec<(String, FormatFn)>);

impl UserFormats {
    fn get(&self, name: &str) -> Option<&FormatFn> {
        self.0
            .iter()
            .find_map(|(known, check)| (known == name).then_some(check))
    }
}

impl std::fmt::Debug for UserFormats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| name))
            .finish()
    }
}

/// A compiled schema. Immutable, so it can be shared across threads. `F` is the instance
/// representation: `serde_json::Value` by default; the Python glue compiles the same schema for
/// Python objects read in place (`rust/python/pynode.rs`).
pub struct SchemaValidator<F: Json = SerdeJson> {
    validator: Validator<F>,
    /// The schema document, where a branch error's `type` is read (`best_match::closest`).
    schema: Value,
}

impl SchemaValidator {
    pub fn compile(schema: &Value, opts: &CompileOptions) -> Result<Self, CompileError> {
        SchemaValidator::compile_for(schema, opts)
    }
}

impl<F: Json> SchemaValidator<F> {
    /// [`SchemaValidator::compile`] for instances in the representation `F`.
    pub fn compile_for(schema: &Value, opts: &CompileOptions) -> Result<Self, CompileError> {
        let resources: HashMap<String, Value> = opts
            .resources
            .iter()
            .map(|(uri, document)| (without_empty_fragment(uri).to_owned(), document.clone()))
            .collect();
        let draft = draft_of(schema, &resources);
        let vocabularies = listed_vocabularies(schema, &resources);
        let listed = |name: &str| {
            vocabularies
                .as_ref()
                .map(|names| names.iter().any(|listed| listed == name))
        };
        // A meta-schema that lists the format-assertion vocabulary (required or optional) makes
        // `format` an assertion by default (2020-12 validation §7.2.2), as in jsonschema-rs.
        let asserts_formats = opts.validate_formats.unwrap_or_else(|| {
            draft_asserts_formats(draft) || listed("format-assertion") == Some(true)
        });
        // Our `multipleOf` replaces the crate's, unless the meta-schema turns validation off.
        let validates = listed("validation") != Some(false);
        let mut options = jsonschema::options_for::<F>()
            .should_validate_formats(asserts_formats)
            .with_retriever(ResourceRetriever { resources });
        if let Some(base_uri) = &opts.base_uri {
            options = options.with_base_uri(base_uri.clone());
        }
        match opts.patterns {
            Some(PatternEngine::Fancy {
                backtrack_limit,
                size_limit,
                dfa_size_limit,
            }) => {
                let mut engine = jsonschema::PatternOptions::fancy_regex();
                if let Some(limit) = backtrack_limit {
                    engine = engine.backtrack_limit(limit);
                }
                if let Some(limit) = size_limit {
                    engine = engine.size_limit(limit);
                }
                if let Some(limit) = dfa_size_limit {
                    engine = engine.dfa_size_limit(limit);
                }
                options = options.with_pattern_options(engine);
            }
            Some(PatternEngine::Regex {
                size_limit,
                dfa_size_limit,
            }) => {
                let mut engine = jsonschema::PatternOptions::regex();
                if let Some(limit) = size_limit {
                    engine = engine.size_limit(limit);
                }
                if let Some(limit) = dfa_size_limit {
                    engine = engine.dfa_size_limit(limit);
                }
                options = options.with_pattern_options(engine);
            }
            None => {}
        }
        if validates {
            options = options.with_keyword("multipleOf", |_parent, value, _location| {
                multiple_of_keyword(value)
            });
        }
        if asserts_formats {
            // Our `format` keyword: the caller's checks, ours where docs/formats.md defines them,
            // the crate's own check for every other format it knows under the schema's draft.
            let formats = opts.formats.clone();
            let reject_unknown = opts.reject_unknown_formats;
            options = options.with_keyword("format", move |_parent, value, _location| {
                format_keyword(draft, value, &formats, reject_unknown)
            });
        }
        options
            .build(schema)
            .map(|validator| SchemaValidator {
                validator,
                schema: schema.clone(),
            })
            .map_err(|error| compile_error(&error))
    }

    pub fn is_valid(&self, instance: F::Node<'_>) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every violation, sorted by (pointer, schema_pointer, message).
    pub fn violations<'i>(&'i self, instance: F::Node<'i>) -> Vec<SchemaViolation> {
        // Most instances are valid, and `is_valid` stops early without building any error.
        if self.validator.is_valid(instance.clone()) {
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
                    best_match: best_match::closest(&error, &self.schema).map(Box::new),
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

/// One evaluation in the JSON Schema output formats (2020-12 core, section 12.4), serialised as
/// the jsonschema crate serialises them, so they are jsonschema-rs's own: `list` and
/// `hierarchical` output units, and `errors`, each error unit with its keyword location, absolute
/// location, instance location and message (jsonschema-rs's `Evaluation.errors()`).
pub struct EvaluationOutput {
    pub valid: bool,
    pub list: Value,
    pub hierarchical: Value,
    pub errors: Value,
}

impl<F: Json> SchemaValidator<F> {
    pub fn evaluate(&self, instance: F::Node<'_>) -> Result<EvaluationOutput, serde_json::Error> {
        let evaluation = self.validator.evaluate(instance);
        let errors = evaluation
            .iter_errors()
            .map(|entry| {
                serde_json::json!({
                    "schemaLocation": entry.schema_location,
                    "absoluteKeywordLocation": entry.absolute_keyword_location.map(|uri| uri.as_str()),
                    "instanceLocation": entry.instance_location.as_str(),
                    "error": entry.error.to_string(),
                })
            })
            .collect();
        Ok(EvaluationOutput {
            valid: evaluation.flag().valid,
            list: serde_json::to_value(evaluation.list())?,
            hierarchical: serde_json::to_value(evaluation.hierarchical())?,
            errors: Value::Array(errors),
        })
    }
}

/// The keyword reported for an error: the last token of its `schema_pointer` (a `false` subschema
/// is `falseSchema`). jsonschema-rs names some errors after a related keyword instead (`contains`
/// for `minContains`/`maxContains`, `required` for `dependentRequired`/`dependencies`,
/// `propertyNames` for the subschema keyword a name failed); python-jsonschema names the keyword at
/// the location, and so do we, in both backends.
pub(crate) fn reported_keyword<'e>(
    kind: &'e ValidationErrorKind,
    schema_pointer: &'e str,
) -> &'e str {
    match kind {
        ValidationErrorKind::FalseSchema => kind.keyword(),
        _ => schema_pointer.rsplit('/').next().unwrap_or_default(),
    }
}

/// `$schema`'s meta-schema, when the caller supplied it in `resources`.
fn custom_metaschema<'r>(
    schema: &Value,
    resources: &'r HashMap<String, Value>,
) -> Option<&'r Value> {
    let uri = schema.get("$schema")?.as_str()?;
    resources.get(without_empty_fragment(uri))
}

/// The draft a schema is written in: the one its `$schema` names, or, for a meta-schema supplied in
/// `resources`, the draft that meta-schema is written in (followed a few levels deep); 2020-12
/// without `$schema`, as in jsonschema-rs.
fn draft_of(schema: &Value, resources: &HashMap<String, Value>) -> Draft {
    let mut current = schema;
    for _ in 0..8 {
        match Draft::default().detect(current) {
            Draft::Unknown => {}
            known => return known,
        }
        match custom_metaschema(current, resources) {
            Some(metaschema) => current = metaschema,
            None => break,
        }
    }
    Draft::default()
}

/// The vocabulary names (`…/vocab/<name>`) listed by `$schema`'s meta-schema from `resources`;
/// `None` when it does not list any (all of its draft's apply).
fn listed_vocabularies(schema: &Value, resources: &HashMap<String, Value>) -> Option<Vec<String>> {
    let vocabularies = custom_metaschema(schema, resources)?
        .get("$vocabulary")?
        .as_object()?;
    Some(
        vocabularies
            .keys()
            .map(|uri| uri.rsplit("/vocab/").next().unwrap_or_default().to_owned())
            .collect(),
    )
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
        ValidationErrorKind::Referencing(_) => codes::UNRESOLVABLE_REF,
        _ => codes::INVALID_SCHEMA,
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
    fn accepts<'i, F: Json>(self, instance: &F::Node<'i>) -> bool {
        let text = || instance.as_string();
        match self {
            FormatCheck::DateTime => text().map_or(true, |text| is_date_time(&text)),
            FormatCheck::Date => text().map_or(true, |text| is_date(&text)),
            FormatCheck::Time => text().map_or(true, |text| is_time(&text)),
            FormatCheck::Integer { min, max } => instance.as_number().map_or(true, |number| {
                integral_value(&number.to_number())
                    .is_some_and(|value| (min..=max).contains(&value))
            }),
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
    /// The caller's check (`CompileOptions::formats`), which comes first.
    user: Option<FormatFn>,
    ours: Option<FormatCheck>,
    /// jsonschema-rs's own check, as a validator of `{"format": name}` under the schema's draft
    /// (its format checks are not public API); `None` where ours applies.
    builtin: Option<Validator>,
}

impl<'i, F: Json> Keyword<'i, F> for FormatKeyword {
    fn validate(&self, instance: F::Node<'i>) -> Result<(), ValidationError<'i>> {
        if Keyword::<F>::is_valid(self, instance.clone()) {
            Ok(())
        } else {
            Err(ValidationError::custom(format!(
                "{} is not a \"{}\"",
                instance.to_value(),
                self.name
            )))
        }
    }

    fn is_valid(&self, instance: F::Node<'i>) -> bool {
        if let Some(check) = &self.user {
            // A format constrains strings only, as jsonschema-rs's custom formats do.
            return instance.as_string().map_or(true, |text| check(&text));
        }
        match (&self.ours, &self.builtin) {
            (Some(check), _) => check.accepts::<F>(&instance),
            // The crate's checks are on strings; anything else passes without being copied.
            (None, Some(builtin)) => {
                !instance.is_string() || builtin.is_valid(&instance.to_value())
            }
            (None, None) => true,
        }
    }
}

fn format_keyword<'a, F: Json>(
    draft: Draft,
    value: &'a Value,
    formats: &UserFormats,
    reject_unknown: bool,
) -> Result<Box<dyn for<'i> Keyword<'i, F>>, ValidationError<'a>> {
    // The meta-schema has already required a string; a non-string is left to it.
    let name = value.as_str().unwrap_or_default();
    let user = formats.get(name).cloned();
    let ours = FormatCheck::by_name(name).filter(|_| user.is_none());
    let builtin = match (&user, ours) {
        (None, None) => Some(
            jsonschema::options()
                .with_draft(draft)
                .should_validate_formats(true)
                .should_ignore_unknown_formats(!reject_unknown)
                .build(&serde_json::json!({ "format": name }))
                .map_err(ValidationError::to_owned)?,
        ),
        _ => None,
    };
    Ok(Box::new(FormatKeyword {
        name: name.to_owned(),
        user,
        ours,
        builtin,
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

/// Whether `day` of `month` (1-12) is a day of the proleptic Gregorian calendar in `year`.
pub(crate) fn day_exists(year: u32, month: u32, day: u32) -> bool {
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
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
        (Some(year), Some(month), Some(day)) => day_exists(year, month, day),
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
pub(crate) fn is_date_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() > 11
        && matches!(bytes[10], b'T' | b't')
        && text.is_char_boundary(10)
        && is_date(&text[..10])
        && is_time(&text[11..])
}

// ---------------------------------------------------------------------------------------------
// multipleOf (docs/formats.md, "Numbers")

/// A JSON number as `mantissa * 10^exponent`, read from its shortest round-trip decimal form
/// (the digits JSON text would show); the sign is dropped, divisibility does not depend on it.
fn decimal_parts(number: &serde_json::Number) -> Option<(u64, i32)> {
    if let Some(value) = number.as_u64() {
        return Some((value, 0));
    }
    if let Some(value) = number.as_i64() {
        return Some((value.unsigned_abs(), 0));
    }
    let text = format!("{:e}", number.as_f64()?.abs());
    let (digits, exponent) = text.split_once('e')?;
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mantissa = format!("{whole}{fraction}").parse().ok()?;
    let exponent: i32 = exponent.parse().ok()?;
    Some((mantissa, exponent - i32::try_from(fraction.len()).ok()?))
}

/// `10^exponent mod modulus`, by square-and-multiply (exact at any exponent).
fn pow10_mod(mut exponent: u32, modulus: u128) -> u128 {
    let (mut result, mut base) = (1 % modulus, 10 % modulus);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exponent >>= 1;
    }
    result
}

/// Whether `value / multiple` is an integer, in exact decimal arithmetic on the two numbers as
/// written: `0.07` is a multiple of `0.01`, `1e308` of `1e-308`. jsonschema-rs answers most cases
/// the same way but falls back to approximate binary fractions for extreme exponents; this rule is
/// exact everywhere and the Python backend implements the same one.
fn is_multiple_of(value: &serde_json::Number, multiple: &serde_json::Number) -> bool {
    let (Some((a, p)), Some((b, q))) = (decimal_parts(value), decimal_parts(multiple)) else {
        return false;
    };
    if a == 0 {
        return true;
    }
    if b == 0 {
        return false;
    }
    let (a, b) = (u128::from(a), u128::from(b));
    let shift = i64::from(p) - i64::from(q);
    if shift >= 0 {
        // b divides a * 10^shift.
        let shift = u32::try_from(shift).unwrap_or(u32::MAX);
        (a % b) * pow10_mod(shift, b) % b == 0
    } else {
        // b * 10^-shift divides a, which has at most 20 digits.
        u32::try_from(-shift)
            .ok()
            .and_then(|places| 10_u128.checked_pow(places))
            .and_then(|scale| scale.checked_mul(b))
            .is_some_and(|divisor| a % divisor == 0)
    }
}

struct MultipleOfKeyword {
    multiple: serde_json::Number,
}

impl<'i, F: Json> Keyword<'i, F> for MultipleOfKeyword {
    fn validate(&self, instance: F::Node<'i>) -> Result<(), ValidationError<'i>> {
        if Keyword::<F>::is_valid(self, instance.clone()) {
            Ok(())
        } else {
            Err(ValidationError::custom(format!(
                "{} is not a multiple of {}",
                instance.to_value(),
                self.multiple
            )))
        }
    }

    fn is_valid(&self, instance: F::Node<'i>) -> bool {
        instance.as_number().map_or(true, |value| {
            is_multiple_of(&value.to_number(), &self.multiple)
        })
    }
}

fn multiple_of_keyword<'a, F: Json>(
    value: &'a Value,
) -> Result<Box<dyn for<'i> Keyword<'i, F>>, ValidationError<'a>> {
    // The meta-schema has already required a number greater than 0.
    let multiple = value
        .as_number()
        .cloned()
        .unwrap_or_else(|| serde_json::Number::from(1));
    Ok(Box::new(MultipleOfKeyword { multiple }))
}

// ---------------------------------------------------------------------------------------------
// Bundled schemas

const CAPABILITY_MAP_ID: &str = "pairling.capability-map.2.0.0";
const WIRE_ID_PREFIX: &str = "car.";
const CAPABILITY_MAP_TEXT: &str =
    include_str!("../schemas/coding-agent-remote-control-capability-map.schema.json");

/// The bundled CAR wire-schema files, oldest first: the specification's copy (which names no CAR
/// release) and `wire-schema.json` of the crate `car-server-core` per release
/// (schemas/SOURCE-car-server-core.md). The last one is the default.
const WIRE_FILES: [(&str, &str, &str); 3] = [
    (
        "seed",
        "car-wire-schema.v1.json",
        include_str!("../schemas/car-wire-schema.v1.json"),
    ),
    (
        "0.58.0",
        "car-wire-schema.0.58.0.json",
        include_str!("../schemas/car-wire-schema.0.58.0.json"),
    ),
    (
        "0.60.0",
        "car-wire-schema.0.60.0.json",
        include_str!("../schemas/car-wire-schema.0.60.0.json"),
    ),
];

/// Fields CAR's schema generator lists as `required` (it requires every declared field) although
/// CAR never emits them when they are empty: car-inference 0.58.0 and 0.60.0 `src/schema.rs`
/// declare `BenchmarkScore.runs` and `.spread` `#[serde(default, skip_serializing_if =
/// "Option::is_none")]`, so the catalog rows CAR publishes (its `builtin_catalog.json`, the rows of
/// its `catalog_identity_jcs_vectors.json`) omit them. The file's bytes stay as shipped; only the
/// compiled definition drops them from `required` (docs/wire.md).
const EMITTED_ONLY_WHEN_SET: [(&str, &[&str]); 1] = [("BenchmarkScore", &["runs", "spread"])];

/// `document` with the fields of `EMITTED_ONLY_WHEN_SET` no longer required.
fn as_car_emits(mut document: Value) -> Value {
    let schemas = document["schemas"].as_object_mut().into_iter().flatten();
    for (_, schema) in schemas {
        for (definition, fields) in EMITTED_ONLY_WHEN_SET {
            let required = schema
                .pointer_mut(&format!("/definitions/{definition}/required"))
                .and_then(Value::as_array_mut);
            if let Some(required) = required {
                required.retain(|name| !name.as_str().is_some_and(|name| fields.contains(&name)));
            }
        }
    }
    document
}

/// One bundled wire-schema file: its CAR release, file name, exact-bytes digest and document,
/// with each of its schemas compiled on first use.
pub struct WireBundle {
    /// The CAR release (`0.58.0`), or `seed` for the specification's copy.
    pub version: &'static str,
    pub file: &'static str,
    /// Lowercase hex sha256 of the file's exact bytes (what `server.schema` reports).
    pub digest: String,
    pub document: Value,
    validators: HashMap<String, OnceLock<SchemaValidator>>,
}

impl WireBundle {
    fn load((version, file, text): (&'static str, &'static str, &'static str)) -> Self {
        use sha2::{Digest, Sha256};
        let document = serde_json::from_str(text).expect("bundled wire schema is JSON");
        let document = as_car_emits(document);
        let validators = document["schemas"]
            .as_object()
            .expect("the wire schema has a `schemas` object")
            .keys()
            .map(|name| (name.clone(), OnceLock::new()))
            .collect();
        let digest = Sha256::digest(text.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        WireBundle {
            version,
            file,
            digest,
            document,
            validators,
        }
    }

    /// `CAR 0.58.0`, or the seed's description: how findings name the bundle.
    pub fn label(&self) -> String {
        if self.version == "seed" {
            "the seed wire schema (car-wire-schema.v1.json)".to_owned()
        } else {
            format!("CAR {}'s wire schema", self.version)
        }
    }

    pub fn schema(&self, name: &str) -> Option<&Value> {
        self.document["schemas"].get(name)
    }

    /// The compiled schema `name` of this bundle (compiled on first use), formats asserted.
    pub fn validator(&self, name: &str) -> Option<&SchemaValidator> {
        let slot = self.validators.get(name)?;
        Some(slot.get_or_init(|| {
            let options = CompileOptions {
                validate_formats: Some(true),
                resources: Vec::new(),
                ..Default::default()
            };
            let schema = self.schema(name).expect("every slot has a schema");
            SchemaValidator::compile(schema, &options).expect("bundled schemas compile")
        }))
    }
}

/// Every bundled wire-schema file, oldest first.
pub fn wire_bundles() -> &'static [WireBundle] {
    static BUNDLES: OnceLock<Vec<WireBundle>> = OnceLock::new();
    BUNDLES.get_or_init(|| WIRE_FILES.into_iter().map(WireBundle::load).collect())
}

/// The newest bundled wire schema: the one used unless a run chooses another.
pub fn default_wire_bundle() -> &'static WireBundle {
    wire_bundles()
        .last()
        .expect("at least one wire schema is bundled")
}

/// The bundle of a CAR release, written in full (`0.58.0`) or as `major.minor` (`0.58`), or `seed`.
pub fn wire_bundle_named(version: &str) -> Option<&'static WireBundle> {
    wire_bundles().iter().find(|bundle| {
        bundle.version == version
            || bundle
                .version
                .strip_prefix(version)
                .is_some_and(|rest| rest.starts_with('.') && version.matches('.').count() == 1)
    })
}

/// The bundle `car-server-core` `version` ships, written exactly as its release (`0.58.0`).
pub fn wire_bundle_of_release(version: &str) -> Option<&'static WireBundle> {
    wire_bundles()
        .iter()
        .find(|bundle| bundle.version == version && version != "seed")
}

/// The bundle whose exact bytes have this sha256 (lowercase hex).
pub fn wire_bundle_with_digest(digest: &str) -> Option<&'static WireBundle> {
    wire_bundles().iter().find(|bundle| bundle.digest == digest)
}

/// The default bundle's whole document (its `schemas` member holds one schema per message type).
pub fn wire_bundle() -> &'static Value {
    &default_wire_bundle().document
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

/// The compiled bundled schema (compiled on first use), formats always asserted. A `car.<name>`
/// id is a schema of the default wire bundle.
pub fn bundled_validator(id: &str) -> Option<&'static SchemaValidator> {
    if let Some(name) = id.strip_prefix(WIRE_ID_PREFIX) {
        return default_wire_bundle().validator(name);
    }
    static CAPABILITY_MAP: OnceLock<SchemaValidator> = OnceLock::new();
    (id == CAPABILITY_MAP_ID).then(|| {
        CAPABILITY_MAP.get_or_init(|| {
            let options = CompileOptions {
                validate_formats: Some(true),
                resources: Vec::new(),
                ..Default::default()
            };
            let schema = bundled_schema(id).expect("the capability map is bundled");
            SchemaValidator::compile(schema, &options).expect("bundled schemas compile")
        })
    })
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
                ..Default::default()
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
        assert!(uint8.accepts::<SerdeJson>(&&json!(255)));
        assert!(uint8.accepts::<SerdeJson>(&&json!(5.0)));
        assert!(!uint8.accepts::<SerdeJson>(&&json!(300)));
        assert!(!uint8.accepts::<SerdeJson>(&&json!(-1)));
        assert!(uint8.accepts::<SerdeJson>(&&json!("300")));
        let uint64 = FormatCheck::by_name("uint64").unwrap();
        assert!(uint64.accepts::<SerdeJson>(&&json!(u64::MAX)));
        assert!(!uint64.accepts::<SerdeJson>(&&json!(-1)));
        assert!(!FormatCheck::by_name("int32")
            .unwrap()
            .accepts::<SerdeJson>(&&json!(2.5)));
        assert!(!FormatCheck::by_name("int64")
            .unwrap()
            .accepts::<SerdeJson>(&&json!(9.3e18)));
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
        assert_eq!(remote.code, codes::UNRESOLVABLE_REF);
        assert!(remote
            .message
            .contains("remote $ref refused (no network): https://example.com/s.json"));
        let invalid = compile(json!({"properties": {"a": {"type": 5}}}), None)
            .err()
            .unwrap();
        assert_eq!(invalid.code, codes::INVALID_SCHEMA);
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
            ..Default::default()
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
        // The capability map and the default bundle's (CAR 0.60.0's) 120 schemas.
        assert_eq!(ids.len(), 121);
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        for id in ids {
            assert!(bundled_schema(id).is_some());
            assert!(bundled_validator(id).is_some(), "{id}");
        }
        assert!(bundled_validator("nope").is_none());
        assert!(bundled_validator("car.nope").is_none());
        let versions: Vec<&str> = wire_bundles().iter().map(|b| b.version).collect();
        assert_eq!(versions, ["seed", "0.58.0", "0.60.0"]);
        assert_eq!(wire_bundle_named("0.58").map(|b| b.version), Some("0.58.0"));
        assert!(wire_bundle_named("0").is_none() && wire_bundle_named("0.5").is_none());
        assert!(wire_bundle_of_release("seed").is_none());
        let digest = &wire_bundles()[1].digest;
        assert_eq!(
            wire_bundle_with_digest(digest).map(|b| b.version),
            Some("0.58.0")
        );
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
    fn multiple_of_is_exact_decimal_arithmetic() {
        let multiple = |value: Value, of: Value| {
            is_multiple_of(value.as_number().unwrap(), of.as_number().unwrap())
        };
        assert!(multiple(json!(0.07), json!(0.01)));
        assert!(multiple(json!(1e308), json!(1e-308)));
        assert!(!multiple(json!(1e-308), json!(1e308)));
        assert!(multiple(json!(12391239123_u64), json!(1e-8)));
        assert!(!multiple(json!(1e308), json!(0.123456789)));
        assert!(multiple(json!(0.0075), json!(0.0001)));
        assert!(!multiple(json!(0.00751), json!(0.0001)));
        assert!(multiple(json!(-12), json!(4)));
        assert!(!multiple(json!(u64::MAX), json!(2)));
        assert!(multiple(json!(0), json!(0.3)));
        assert!(multiple(json!(4.5), json!(1.5)));
        assert!(!multiple(json!(35), json!(1.5)));
    }

    #[test]
    fn custom_metaschemas_follow_their_draft_and_vocabulary() {
        let metaschema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/meta",
            "$vocabulary": {
                "https://json-schema.org/draft/2020-12/vocab/core": true,
                "https://json-schema.org/draft/2020-12/vocab/format-assertion": false,
            },
        });
        let resources = HashMap::from([("https://example.com/meta".to_owned(), metaschema)]);
        let schema = json!({"$schema": "https://example.com/meta#", "format": "ipv4"});
        assert_eq!(draft_of(&schema, &resources), Draft::Draft202012);
        assert_eq!(
            listed_vocabularies(&schema, &resources),
            Some(vec!["core".to_owned(), "format-assertion".to_owned()])
        );
        assert_eq!(listed_vocabularies(&schema, &HashMap::new()), None);
        let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#"});
        assert_eq!(draft_of(&draft4, &resources), Draft::Draft4);
    }

    #[test]
    fn crate_formats_under_the_schema_draft() {
        let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#"});
        let check = |schema: &Value, format: &str, instance: Value| {
            let mut schema = schema.clone();
            schema["format"] = json!(format);
            compile(schema, Some(true)).unwrap().is_valid(&instance)
        };
        assert!(!check(&draft7, "ipv4", json!("1.2.3")));
        assert!(!check(&draft7, "email", json!("no-at-sign")));
        assert!(check(&draft7, "ipv4", json!(5)));
        // `uuid` and `duration` are 2019-09 formats: unknown to draft 7, so not asserted there.
        assert!(check(&draft7, "uuid", json!("nope")));
        assert!(!check(&json!({}), "uuid", json!("nope")));
        // Ours on top: integer formats on numbers.
        assert!(!check(&draft7, "uint8", json!(256)));
    }

    #[test]
    fn validators_are_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<SchemaValidator>();
    }
}
