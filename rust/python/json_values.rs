//! Strict JSON text and Python values in, the JSON value model and RFC 8785 digests out.

use super::*;

#[pyfunction]
pub(super) fn parse_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    guarded(py, "parse_json", || {
        let value = parse_text(py, data)?;
        to_python(py, &value)
    })
}

#[pyfunction]
pub(super) fn canonicalize<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guarded(py, "canonicalize", || {
        let bytes = pyvalue::canonicalize(value).map_err(|e| canonicalization_error(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    })
}

#[pyfunction]
pub(super) fn canonicalize_json<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guarded(py, "canonicalize_json", || {
        let value = parse_text(py, data)?;
        let bytes = py
            .allow_threads(|| canonical::canonicalize(&value))
            .map_err(|e| canonicalization_error(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    })
}

#[pyfunction]
pub(super) fn digest_hex(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    guarded(py, "digest_hex", || {
        pyvalue::digest_hex(value).map_err(|e| canonicalization_error(py, e))
    })
}

/// `compact` JSON text laid out as `json.dumps(..., indent=width)` lays it out
/// (`json_indent.rs`); the facade's pretty reports are encoded by `json`'s C encoder, then this.
#[pyfunction]
pub(super) fn indent_json(py: Python<'_>, compact: &str, width: usize) -> PyResult<String> {
    guarded(py, "indent_json", || {
        Ok(crate::json_indent::indent_json(compact, width))
    })
}

/// `digest_hex` of each value, in order; the sha256 of each value's canonical bytes is taken
/// without the GIL, on every core, for a large batch. The first value outside the JSON model
/// raises its `CanonicalizationError`, as a loop of `digest_hex` would.
#[pyfunction]
pub(super) fn digest_hex_many(py: Python<'_>, values: &Bound<'_, PyList>) -> PyResult<Vec<String>> {
    guarded(py, "digest_hex_many", || {
        batches::batch(
            py,
            values,
            |value| pyvalue::digest_hex(value).map_err(|e| canonicalization_error(py, e)),
            |value| pyvalue::canonicalize(value).map_err(|e| canonicalization_error(py, e)),
            |bytes| canonical::sha256_hex(&bytes),
        )
    })
}
