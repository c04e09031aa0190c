//! `pairling.semantic-digest.v1`: each binding's digest computed, verified and sealed.

use rayon::prelude::*;
use serde_json::Value;

use crate::canonical::{self, ByteSink, CanonicalizationError};
use crate::codes;
use crate::parse;
use crate::report::Finding;

use super::MapStats;

use super::index::{located, text, Graph, Object, BINDINGS, DIGEST_FIELD};

const DIGEST_PREFIX: &str = "sha256:";
/// `pairling.semantic-digest.v1`: `sha256:` + hex sha256 of JCS(binding without `semantic_digest`).
///
/// The object is written member by member straight into the hasher (JCS: members sorted by the
/// UTF-16 code units of their keys), so the binding is never copied to drop one member.
pub fn semantic_digest(binding: &Object) -> Result<String, CanonicalizationError> {
    let mut members: Vec<(&String, &Value)> = binding
        .iter()
        .filter(|(key, _)| key.as_str() != DIGEST_FIELD)
        .collect();
    members.sort_unstable_by(|(left, _), (right, _)| canonical::cmp_utf16(left, right));
    // Buffered: JCS comes out in tiny pieces, one `Sha256::update` each cost more than the hash.
    let mut hasher = canonical::BufferedSha256::new();
    hasher.put(b"{");
    for (position, (key, value)) in members.into_iter().enumerate() {
        if position > 0 {
            hasher.put(b",");
        }
        canonical::write_string(&mut hasher, key);
        hasher.put(b":");
        canonical::write_canonical(value, &mut hasher).map_err(|error| CanonicalizationError {
            pointer: format!("/{}{}", parse::escape_pointer_token(key), error.pointer),
            ..error
        })?;
    }
    hasher.put(b"}");
    Ok(format!("{DIGEST_PREFIX}{}", hasher.hex()))
}

fn binding_error(index: usize, error: CanonicalizationError) -> CanonicalizationError {
    CanonicalizationError {
        pointer: format!("/operation_bindings/{index}{}", error.pointer),
        ..error
    }
}

/// Recompute every binding's `semantic_digest` in place (no other check); returns how many.
pub fn seal_map(document: &mut Value) -> Result<usize, CanonicalizationError> {
    let Some(bindings) = document
        .get_mut("operation_bindings")
        .and_then(Value::as_array_mut)
    else {
        return Ok(0);
    };
    let digests: Vec<Option<Result<String, CanonicalizationError>>> = bindings
        .par_iter()
        .map(|binding| binding.as_object().map(semantic_digest))
        .collect();
    let mut sealed = 0;
    for (index, (binding, digest)) in bindings.iter_mut().zip(digests).enumerate() {
        if let (Some(object), Some(digest)) = (binding.as_object_mut(), digest) {
            let digest = digest.map_err(|error| binding_error(index, error))?;
            object.insert(DIGEST_FIELD.to_string(), Value::String(digest));
            sealed += 1;
        }
    }
    Ok(sealed)
}

impl<'a> Graph<'a> {
    pub(super) fn digests(&self, findings: &mut Vec<Finding>, stats: &mut MapStats) {
        let bindings = &self.collections[BINDINGS].entries;
        let outcomes: Vec<Option<(&str, Result<String, CanonicalizationError>)>> = bindings
            .par_iter()
            .map(|(_, binding)| {
                text(binding, DIGEST_FIELD).map(|recorded| (recorded, semantic_digest(binding)))
            })
            .collect();
        for ((index, _), outcome) in bindings.iter().zip(outcomes) {
            match outcome {
                None => {}
                Some((_, Err(problem))) => {
                    findings.push(Finding::from(binding_error(*index, problem)));
                }
                Some((recorded, Ok(expected))) if expected == recorded => {
                    stats.digests_verified += 1;
                }
                Some((recorded, Ok(expected))) => {
                    stats.digests_mismatched += 1;
                    findings.push(located(
                        codes::DIGEST_MISMATCH,
                        format!("semantic_digest mismatch: expected {expected}, found {recorded}"),
                        format!("/operation_bindings/{index}/{DIGEST_FIELD}"),
                    ));
                }
            }
        }
        stats.digests_unchecked =
            stats.collections[BINDINGS] - stats.digests_verified - stats.digests_mismatched;
    }
}
