//! How the wire checks read JSON values and word them in messages: the one quoting of a name,
//! pointer token and reading of an integral number that RPC results, transcripts and the bundle
//! check share, so a message or pointer reads the same whichever part emits it (and the one
//! `codes_of` their unit tests compare findings by).

use serde_json::Value;

use crate::parse::escape_pointer_token;
#[cfg(test)]
use crate::report::Finding;

pub(super) fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

pub(super) fn token(key: &str) -> String {
    format!("/{}", escape_pointer_token(key))
}

/// An integral JSON number (`3` or `3.0`) as an integer; `None` for anything else.
pub(super) fn integer(value: &Value) -> Option<i128> {
    if let Some(number) = value.as_i64() {
        return Some(number.into());
    }
    if let Some(number) = value.as_u64() {
        return Some(number.into());
    }
    let number = value.as_f64()?;
    // Beyond 2^127 an integral double has no i128; no count or token total comes near it.
    (number.fract() == 0.0 && number.abs() < 1.7e38).then_some(number as i128)
}

pub(super) fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The codes of `findings`, in order: what the wire modules' unit tests compare.
#[cfg(test)]
pub(super) fn codes_of(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|finding| finding.code).collect()
}
