//! `RawFinding`: a finding as it crosses into Python, a frozen record the stub declares
//! (`_core.pyi`); the fallback's is `_fallback/findings.py`, a named tuple of the same fields.
//! The facade's `Finding.from_raw` reads it by name and gives it its file's path.

use std::borrow::Cow;

use super::*;
use crate::validate::BestMatch;

/// A composite's closest branch error as it crosses: (pointer, schema_pointer, message), the
/// shape a `RawViolation`'s last field has (`schemas.rs`).
type RawBestMatch = (String, String, String);

#[pyclass(frozen, eq, hash, module = "pairling_fast._core")]
#[derive(PartialEq, Eq, Hash)]
pub(super) struct RawFinding {
    // Moved out of `report::Finding` as they are: the Python strings are made only when read
    // (the facade reads each once), so a check with no findings pays nothing here.
    code: Cow<'static, str>,
    severity: &'static str,
    message: String,
    line: Option<u64>,
    pointer: Option<String>,
    schema_pointer: Option<String>,
    best_match: Option<RawBestMatch>,
}

impl From<Finding> for RawFinding {
    fn from(finding: Finding) -> Self {
        RawFinding {
            code: Cow::Borrowed(finding.code),
            severity: finding.severity.as_str(),
            message: finding.message,
            line: finding.line,
            pointer: finding.pointer,
            schema_pointer: finding.schema_pointer,
            best_match: finding.best_match.map(|best| {
                let BestMatch {
                    pointer,
                    schema_pointer,
                    message,
                } = *best;
                (pointer, schema_pointer, message)
            }),
        }
    }
}

pub(super) fn raw_findings(findings: Vec<Finding>) -> Vec<RawFinding> {
    findings.into_iter().map(RawFinding::from).collect()
}

#[pymethods]
impl RawFinding {
    /// A record from its fields (pickle rebuilds one so, when a Dask task sends it back, and
    /// the facade so a saved state's finding, by name); `ValueError` for a severity that is not
    /// `info`, `warning` or `error`.
    #[new]
    #[pyo3(signature = (
        code, severity, message, line=None, pointer=None, schema_pointer=None, best_match=None
    ))]
    fn new(
        code: String,
        severity: &str,
        message: String,
        line: Option<u64>,
        pointer: Option<String>,
        schema_pointer: Option<String>,
        // Any sequence of the three: a saved state's findings come back from JSON as lists.
        best_match: Option<[String; 3]>,
    ) -> PyResult<Self> {
        let severity = match severity {
            "info" => "info",
            "warning" => "warning",
            "error" => "error",
            other => {
                return Err(PyValueError::new_err(format!(
                    "severity {other:?} is not info, warning or error"
                )))
            }
        };
        Ok(RawFinding {
            code: Cow::Owned(code),
            severity,
            message,
            line,
            pointer,
            schema_pointer,
            best_match: best_match
                .map(|[pointer, schema_pointer, message]| (pointer, schema_pointer, message)),
        })
    }

    #[getter]
    fn code(&self) -> &str {
        &self.code
    }

    #[getter]
    fn severity(&self) -> &'static str {
        self.severity
    }

    #[getter]
    fn message(&self) -> &str {
        &self.message
    }

    #[getter]
    fn line(&self) -> Option<u64> {
        self.line
    }

    #[getter]
    fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref()
    }

    #[getter]
    fn schema_pointer(&self) -> Option<&str> {
        self.schema_pointer.as_deref()
    }

    /// For a failing `oneOf`/`anyOf`: its closest branch error, `None` otherwise.
    #[getter]
    fn best_match(&self) -> Option<(&str, &str, &str)> {
        self.best_match
            .as_ref()
            .map(|(pointer, schema_pointer, message)| {
                (pointer.as_str(), schema_pointer.as_str(), message.as_str())
            })
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        Ok((slf.get_type().into_any(), slf.borrow().fields(slf.py())?))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        // The named tuple's form, so both engines' records read alike.
        let fields = slf.borrow().fields(slf.py())?;
        let names = [
            "code",
            "severity",
            "message",
            "line",
            "pointer",
            "schema_pointer",
            "best_match",
        ];
        let parts = names
            .iter()
            .zip(fields.iter())
            .map(|(name, value)| Ok(format!("{name}={}", value.repr()?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(format!("RawFinding({})", parts.join(", ")))
    }
}

impl RawFinding {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            &*self.code,
            self.severity,
            &self.message,
            self.line,
            self.pointer.as_deref(),
            self.schema_pointer.as_deref(),
            self.best_match(),
        )
            .into_pyobject(py)
    }
}
