//! Findings: the one data model every check in the core reports with.
//!
//! A check never fails with an error type of its own; it returns `Finding`s. The Python layer turns
//! them into `pairling_fast.Finding` objects, and the pure-Python fallback builds the same ones, so
//! reports from both backends compare field by field. Codes are documented in `docs/findings.md`.

use crate::canonical::CanonicalizationError;
pub use crate::codes::Severity;
use crate::codes::{self, Code};
use crate::parse::JsonError;
use crate::validate::{BestMatch, SchemaViolation};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// 1-based line, for line-oriented inputs (JSONL) and for syntax errors in whole documents.
    pub line: Option<u64>,
    /// RFC 6901 pointer into the instance.
    pub pointer: Option<String>,
    /// RFC 6901 pointer to the failing keyword in the schema document, for schema findings.
    pub schema_pointer: Option<String>,
    /// For a failing `oneOf`/`anyOf`: the branch error that came closest (`best_match.rs`).
    pub best_match: Option<Box<BestMatch>>,
}

impl Finding {
    /// A finding of `code`, with the severity the code table gives it.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Finding {
            code: code.id,
            severity: code.severity,
            message: message.into(),
            line: None,
            pointer: None,
            schema_pointer: None,
            best_match: None,
        }
    }

    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// This finding on a value that stands at `prefix` in the document reported on: its pointer,
    /// and its closest branch error's, put under `prefix`.
    pub fn within(mut self, prefix: &str) -> Self {
        self.pointer = Some(format!("{prefix}{}", self.pointer.unwrap_or_default()));
        if let Some(best) = &mut self.best_match {
            best.pointer.insert_str(0, prefix);
        }
        self
    }

    pub fn on_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl From<SchemaViolation> for Finding {
    fn from(violation: SchemaViolation) -> Self {
        Finding {
            pointer: Some(violation.pointer),
            schema_pointer: Some(violation.schema_pointer),
            best_match: violation.best_match,
            ..Finding::new(codes::SCHEMA_VIOLATION, violation.message)
        }
    }
}

impl From<JsonError> for Finding {
    /// A parse error keeps the line where it was found; the column goes in the message.
    fn from(error: JsonError) -> Self {
        let message = match (error.line, error.column) {
            (Some(line), Some(column)) => {
                format!("{} (line {line}, column {column})", error.message)
            }
            _ => error.message,
        };
        let finding = Finding::new(error.code, message).at(error.pointer);
        match error.line {
            Some(line) => finding.on_line(line as u64),
            None => finding,
        }
    }
}

impl From<CanonicalizationError> for Finding {
    fn from(error: CanonicalizationError) -> Self {
        Finding::new(error.code, error.message).at(error.pointer)
    }
}
