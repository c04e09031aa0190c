//! `JournalStream`: a journal checked as its bytes arrive (`journal::stream`).

use super::*;

#[pyclass(module = "pairling_fast._core")]
pub(super) struct JournalStream {
    inner: Option<journal::stream::StreamChecker>,
}

const CLOSED: &str = "this JournalStream is closed";

#[pymethods]
impl JournalStream {
    /// A stream from its first byte, or going on from `state` (the ordered stage's JSON text
    /// as `check_journal_resumable` or `snapshot` returned it); `ValueError` for one malformed.
    #[new]
    #[pyo3(signature = (options, state=None))]
    fn new(options: &Bound<'_, PyAny>, state: Option<&str>) -> PyResult<Self> {
        let options = journal_options(options)?;
        let resume = resumed(&options, state)?;
        Ok(JournalStream {
            inner: Some(journal::stream::StreamChecker::new(&options, resume)),
        })
    }

    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<Vec<RawFinding>> {
        guarded(py, "JournalStream.feed", || {
            let stream = open_checker(&mut self.inner, CLOSED)?;
            let findings = py.allow_threads(|| stream.feed(data).to_vec());
            Ok(raw_findings(findings))
        })
    }

    #[getter]
    fn lines(&mut self) -> PyResult<u64> {
        Ok(open_checker(&mut self.inner, CLOSED)?.lines())
    }

    #[getter]
    fn events(&mut self) -> PyResult<u64> {
        Ok(open_checker(&mut self.inner, CLOSED)?.events())
    }

    #[getter]
    fn pending(&mut self) -> PyResult<u64> {
        Ok(open_checker(&mut self.inner, CLOSED)?.pending())
    }

    fn snapshot(&mut self, py: Python<'_>) -> PyResult<String> {
        guarded(py, "JournalStream.snapshot", || {
            Ok(open_checker(&mut self.inner, CLOSED)?.snapshot())
        })
    }

    #[pyo3(signature = (interrupted=false))]
    fn finish(
        &mut self,
        py: Python<'_>,
        interrupted: bool,
    ) -> PyResult<(Vec<RawFinding>, PyObject)> {
        finish_checker(
            py,
            "JournalStream.finish",
            &mut self.inner,
            CLOSED,
            |stream| stream.finish(interrupted),
        )
    }
}
