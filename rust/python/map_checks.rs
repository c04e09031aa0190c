//! Capability maps: check (from a value or text) and seal.

use super::*;

pub(super) type RawMapCheck = (Vec<RawFinding>, PyObject);

pub(super) fn raw_map_check(py: Python<'_>, check: graph::MapCheck) -> PyResult<RawMapCheck> {
    let stats = to_python(py, &check.stats.to_value())?;
    Ok((raw_findings(check.findings), stats))
}

/// Pairling's reviewed operation manifest, when one is given (a value outside the JSON model
/// raises, like any other argument).
pub(super) fn manifest_value(
    py: Python<'_>,
    manifest: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<serde_json::Value>> {
    manifest.map(|value| python_value(py, value)).transpose()
}

/// A parsed map; a Python value outside the JSON model is the one finding, not an exception.
#[pyfunction]
#[pyo3(signature = (document, manifest=None))]
pub(super) fn check_map(
    py: Python<'_>,
    document: &Bound<'_, PyAny>,
    manifest: Option<&Bound<'_, PyAny>>,
) -> PyResult<RawMapCheck> {
    guarded(py, "check_map", || {
        let manifest = manifest_value(py, manifest)?;
        let check = match to_value(document) {
            Ok(value) => py.allow_threads(|| graph::check_map(&value, manifest.as_ref())),
            Err(error) => graph::MapCheck::unreadable(Finding::from(error)),
        };
        raw_map_check(py, check)
    })
}

#[pyfunction]
#[pyo3(signature = (data, manifest=None))]
pub(super) fn check_map_json(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    manifest: Option<&Bound<'_, PyAny>>,
) -> PyResult<RawMapCheck> {
    guarded(py, "check_map_json", || {
        let manifest = manifest_value(py, manifest)?;
        let bytes = shared_text(data)?;
        let check = interruptible(py, bytes.len(), move || {
            graph::check_map_json(&bytes, manifest.as_ref())
        })?;
        raw_map_check(py, check)
    })
}

#[pyfunction]
pub(super) fn seal_map(py: Python<'_>, document: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    guarded(py, "seal_map", || sealed(py, python_value(py, document)?))
}

/// Parse once, seal, convert once: a map given as text never crosses into Python unsealed.
#[pyfunction]
pub(super) fn seal_map_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    guarded(py, "seal_map_json", || sealed(py, parse_text(py, data)?))
}

/// Seal a map value and hand it to Python: one path for both inputs, so the value and the text
/// form cannot drift (the GIL is released while the digests are computed).
fn sealed(py: Python<'_>, mut value: serde_json::Value) -> PyResult<PyObject> {
    py.allow_threads(|| graph::seal_map(&mut value))
        .map_err(|e| canonicalization_error(py, e))?;
    to_python(py, &value)
}
