//! The map's schema check: the bundled 2.0.0 schema, widened where Pairling's validator accepts
//! more (`SCHEMA_WIDENINGS`), compiled once.

use std::sync::OnceLock;

use serde_json::Value;

use crate::codes;
use crate::report::Finding;
use crate::validate;

use super::index::MAP_SCHEMA_ID;

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
                ..Default::default()
            };
            validate::SchemaValidator::compile(&schema, &options).ok()
        })
        .as_ref()
}

pub(super) fn schema_findings(document: &Value) -> Vec<Finding> {
    match map_validator() {
        Some(validator) => validator
            .violations(document)
            .into_iter()
            .map(|violation| {
                if violation.keyword == "format" {
                    // `format` is an annotation in 2020-12 and Pairling's validator does not assert
                    // it: its own code, a warning by default (PF104).
                    Finding {
                        pointer: Some(violation.pointer),
                        schema_pointer: Some(violation.schema_pointer),
                        ..Finding::new(codes::MAP_FORMAT_VIOLATION, violation.message)
                    }
                } else {
                    Finding::from(violation)
                }
            })
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
