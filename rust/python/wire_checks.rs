//! CAR wire checks: RPC results and params, transcripts (whole or fed in batches), the wire-schema bundle.

use super::*;

pub(super) type WireOutcome = (Vec<RawFinding>, PyObject);

pub(super) fn wire_outcome(
    py: Python<'_>,
    (findings, stats): (Vec<crate::report::Finding>, serde_json::Value),
) -> PyResult<WireOutcome> {
    Ok((raw_findings(findings), to_python(py, &stats)?))
}

/// The bundle a run chose (`None`: not chosen); an unknown version is a ValueError.
pub(super) fn chosen_bundle(
    car_version: Option<&str>,
) -> PyResult<Option<&'static crate::validate::WireBundle>> {
    car_version
        .map(|version| {
            validate::wire_bundle_named(version).ok_or_else(|| {
                let known: Vec<&str> = validate::wire_bundles()
                    .iter()
                    .map(|bundle| bundle.version)
                    .collect();
                pyo3::exceptions::PyValueError::new_err(format!(
                    "no bundled wire schema for CAR version {version:?} (bundled: {})",
                    known.join(", ")
                ))
            })
        })
        .transpose()
}

pub(super) fn bundle_or_default(
    car_version: Option<&str>,
) -> PyResult<&'static crate::validate::WireBundle> {
    Ok(chosen_bundle(car_version)?.unwrap_or_else(validate::default_wire_bundle))
}

/// Every bundled wire schema, oldest first: `(car_version, file, sha256)`.
#[pyfunction]
pub(super) fn wire_bundles() -> Vec<(&'static str, &'static str, String)> {
    validate::wire_bundles()
        .iter()
        .map(|bundle| (bundle.version, bundle.file, bundle.digest.clone()))
        .collect()
}

/// A Python value as JSON; `what` names the argument in the error, as the fallback does.
pub(super) fn argument_value(
    py: Python<'_>,
    what: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<serde_json::Value> {
    to_value(value).map_err(|mut error| {
        error.message = format!("{what}: {}", error.message);
        canonicalization_error(py, error)
    })
}

#[pyfunction]
#[pyo3(signature = (method, result, catalog=None, wire_schema_digest=None, car_version=None))]
pub(super) fn check_rpc_result(
    py: Python<'_>,
    method: &str,
    result: &Bound<'_, PyAny>,
    catalog: Option<&Bound<'_, PyAny>>,
    wire_schema_digest: Option<&str>,
    car_version: Option<&str>,
) -> PyResult<WireOutcome> {
    guarded(py, "check_rpc_result", || {
        let bundle = bundle_or_default(car_version)?;
        let result = argument_value(py, "result", result)?;
        let catalog = catalog
            .map(|catalog| argument_value(py, "catalog", catalog))
            .transpose()?;
        let outcome = py.allow_threads(|| {
            crate::wire::rpc::check_rpc_result(
                bundle,
                method,
                &result,
                catalog.as_ref(),
                wire_schema_digest,
            )
        });
        wire_outcome(py, outcome)
    })
}

#[pyfunction]
#[pyo3(signature = (method, params, car_version=None))]
pub(super) fn check_rpc_params(
    py: Python<'_>,
    method: &str,
    params: &Bound<'_, PyAny>,
    car_version: Option<&str>,
) -> PyResult<WireOutcome> {
    guarded(py, "check_rpc_params", || {
        let bundle = bundle_or_default(car_version)?;
        let params = argument_value(py, "params", params)?;
        let outcome =
            py.allow_threads(|| crate::wire::rpc::check_rpc_params(bundle, method, &params, false));
        wire_outcome(py, outcome)
    })
}

#[pyfunction]
#[pyo3(signature = (path, wire_schema_digest=None, car_version=None))]
pub(super) fn check_transcript_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    wire_schema_digest: Option<String>,
    car_version: Option<&str>,
) -> PyResult<WireOutcome> {
    // Slice by slice without the GIL, checking for Ctrl-C between slices.
    const LINES_PER_SLICE: usize = 1 << 14;
    guarded(py, "check_transcript_file", || {
        let bundle = chosen_bundle(car_version)?;
        let mut reader = crate::wire::transcript::open_transcript(&path)?;
        let mut checker =
            crate::wire::transcript::TranscriptChecker::new(bundle, wire_schema_digest);
        while !py.allow_threads(|| checker.feed_from(&mut reader, LINES_PER_SLICE))? {
            if stop_requested(py) {
                return Err(PyKeyboardInterrupt::new_err("transcript check interrupted"));
            }
        }
        wire_outcome(py, checker.finish())
    })
}

/// A JSON-RPC transcript fed in batches of lines (from a file object or an iterable).
#[pyclass(module = "pairling_fast._core")]
pub(super) struct TranscriptChecker {
    inner: Option<crate::wire::transcript::TranscriptChecker>,
}

impl TranscriptChecker {
    fn running(&mut self) -> PyResult<&mut crate::wire::transcript::TranscriptChecker> {
        self.inner.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("the transcript checker is finished")
        })
    }
}

#[pymethods]
impl TranscriptChecker {
    #[new]
    #[pyo3(signature = (wire_schema_digest=None, car_version=None))]
    fn new(wire_schema_digest: Option<String>, car_version: Option<&str>) -> PyResult<Self> {
        let bundle = chosen_bundle(car_version)?;
        Ok(TranscriptChecker {
            inner: Some(crate::wire::transcript::TranscriptChecker::new(
                bundle,
                wire_schema_digest,
            )),
        })
    }

    fn feed_lines(&mut self, py: Python<'_>, lines: Vec<Bound<'_, PyBytes>>) -> PyResult<()> {
        guarded(py, "TranscriptChecker.feed_lines", || {
            let checker = self.running()?;
            let lines: Vec<&[u8]> = lines.iter().map(|line| line.as_bytes()).collect();
            py.allow_threads(|| lines.iter().for_each(|line| checker.feed_line(line)));
            Ok(())
        })
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<WireOutcome> {
        guarded(py, "TranscriptChecker.finish", || {
            self.running()?;
            let checker = self.inner.take().expect("checked just above");
            wire_outcome(py, checker.finish())
        })
    }
}

#[pyfunction]
pub(super) fn check_wire_schema(py: Python<'_>, path: std::path::PathBuf) -> PyResult<WireOutcome> {
    guarded(py, "check_wire_schema", || {
        let outcome = py.allow_threads(|| crate::wire::bundle::check_wire_schema(&path))?;
        wire_outcome(py, outcome)
    })
}

#[pyfunction]
pub(super) fn wire_schema_digest(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
    guarded(py, "wire_schema_digest", || {
        Ok(py.allow_threads(|| crate::wire::bundle::wire_schema_digest(&path))?)
    })
}
