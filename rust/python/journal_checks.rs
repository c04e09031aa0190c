//! CAR journals: the streaming check (from a path or a Python file object), chunks and `JournalChecker` for Dask, event kinds and the chain digest.

use super::*;
use crate::journal::car_payloads;

/// A Python binary file object as a `Read`: each read briefly re-acquires the GIL. Ctrl-C
/// inside `read` ends the input and raises `interrupted`; any other exception is kept and
/// re-raised as it is.
pub(super) struct PyReader {
    file: Py<PyAny>,
    error: Option<PyErr>,
    interrupted: Arc<AtomicBool>,
}

impl std::io::Read for PyReader {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        Python::with_gil(|py| {
            let outcome = self
                .file
                .bind(py)
                .call_method1("read", (buffer.len(),))
                .and_then(|chunk| {
                    let chunk = chunk.downcast_into::<PyBytes>().map_err(|_| {
                        PyTypeError::new_err("a journal file object must be opened in binary mode")
                    })?;
                    let bytes = chunk.as_bytes();
                    let length = bytes.len().min(buffer.len());
                    buffer[..length].copy_from_slice(&bytes[..length]);
                    Ok(length)
                });
            match outcome {
                Err(error) if error.is_instance_of::<PyKeyboardInterrupt>(py) => {
                    self.interrupted.store(true, Ordering::SeqCst);
                    Ok(0)
                }
                Err(error) => {
                    let message = error.to_string();
                    self.error = Some(error);
                    Err(std::io::Error::other(message))
                }
                Ok(length) => Ok(length),
            }
        })
    }
}

/// Seeking a Python file object (`seek(offset, whence)`), so a chunk of a journal can be read
/// by byte range from any fsspec file (a bucket's object, an HTTP resource) as from a local one.
impl std::io::Seek for PyReader {
    fn seek(&mut self, position: std::io::SeekFrom) -> std::io::Result<u64> {
        let (offset, whence) = match position {
            std::io::SeekFrom::Start(offset) => (
                i64::try_from(offset).map_err(|_| std::io::Error::other("seek beyond 2^63"))?,
                0,
            ),
            std::io::SeekFrom::Current(offset) => (offset, 1),
            std::io::SeekFrom::End(offset) => (offset, 2),
        };
        Python::with_gil(|py| {
            let outcome = self
                .file
                .bind(py)
                .call_method1("seek", (offset, whence))
                .and_then(|position| position.extract::<u64>());
            outcome.map_err(|error| {
                let message = error.to_string();
                self.error = Some(error);
                std::io::Error::other(message)
            })
        })
    }
}

/// `journal::Options` from a `pairling_fast.journal.JournalOptions` (any object with its
/// attributes): the one place the Python options become the core's, so each option is named
/// once on each side. The release is read as the options resolved it (`release`), not
/// resolved again from `car_version`.
pub(super) fn journal_options(options: &Bound<'_, PyAny>) -> PyResult<journal::Options> {
    let text = |name: &str| -> PyResult<String> { options.getattr(name)?.extract() };
    let (chain, profile) = (text("chain")?, text("profile")?);
    let release: String = options.getattr("release")?.extract()?;
    let payloads = text("payloads")?;
    Ok(journal::Options {
        chain: journal::ChainMode::parse(&chain).ok_or_else(|| {
            PyValueError::new_err(format!(
                "chain must be one of auto, require, off, not {chain:?}"
            ))
        })?,
        lifecycle: options.getattr("lifecycle")?.extract()?,
        max_findings: options.getattr("max_findings")?.extract()?,
        profile: journal::Profile::parse(&profile).ok_or_else(|| {
            PyValueError::new_err(format!(
                "profile must be one of strict, car-compatible, not {profile:?}"
            ))
        })?,
        max_line_length: options.getattr("max_line_length")?.extract()?,
        car_version: bundled_release(&release)?,
        payloads: car_payloads::Mode::parse(&payloads).ok_or_else(|| {
            PyValueError::new_err(format!(
                "payloads must be one of off, warn, error, not {payloads:?}"
            ))
        })?,
        ..journal::Options::default()
    })
}

/// The bundle's own name for `release`, a release as the facade resolved it
/// (`pairling_fast.schemas.release`, the one place a `car_version` becomes a release).
fn bundled_release(release: &str) -> PyResult<&'static str> {
    crate::validate::wire_bundles()
        .iter()
        .find(|bundle| bundle.version == release)
        .map(|bundle| bundle.version)
        .ok_or_else(|| PyValueError::new_err(format!("{release:?} is not a bundled CAR release")))
}

#[pyfunction]
#[pyo3(signature = (source, options, progress=None))]
pub(super) fn check_journal(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    options: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<RawFinding>, PyObject)> {
    guarded(py, "check_journal", || {
        let options = journal_options(options)?;
        let (report, _) = run_check(py, source, &options, progress, None, false)?;
        Ok((raw_findings(report.findings), to_python(py, &report.stats)?))
    })
}

/// `check_journal` going on from `state` (the JSON text of the ordered stage's state a previous
/// run returned; `source` then starts where its lines end), returning with the report the state
/// where this run's last complete line ends (None when interrupted). A malformed `state` is a
/// `ValueError` saying what is wrong.
#[pyfunction]
#[pyo3(signature = (source, state, options, progress=None))]
pub(super) fn check_journal_resumable(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    state: Option<&str>,
    options: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<RawFinding>, PyObject, Option<String>)> {
    guarded(py, "check_journal_resumable", || {
        let options = journal_options(options)?;
        let resume = resumed(&options, state)?;
        let (report, snapshot) = run_check(py, source, &options, progress, resume, true)?;
        Ok((
            raw_findings(report.findings),
            to_python(py, &report.stats)?,
            snapshot,
        ))
    })
}

/// The checker state `state` (a saved state's JSON text) holds, if given; a `ValueError` saying
/// what is wrong with a malformed one.
pub(super) fn resumed(
    options: &journal::Options,
    state: Option<&str>,
) -> PyResult<Option<journal::Resume>> {
    state
        .map(|text| journal::Resume::from_snapshot(options, text).map_err(PyValueError::new_err))
        .transpose()
}

/// The check behind both entry points: `source` is a path (str) or a binary file object.
fn run_check(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    options: &journal::Options,
    progress: Option<Py<PyAny>>,
    resume: Option<journal::Resume>,
    snapshot: bool,
) -> PyResult<(journal::JournalReport, Option<journal::Snapshot>)> {
    // Ctrl-C is noticed between batches (or inside a Python `read`); the KeyboardInterrupt
    // is consumed and the partial report is marked `interrupted` (the facade raises
    // JournalInterrupted with it). The batch being read when it came is not checked.
    // `progress(bytes_read)` is called at the same points, from the bytes counted at the
    // reader; an exception it raises stops the check and is re-raised.
    let flag = Arc::new(AtomicBool::new(false));
    let stop_flag = Arc::clone(&flag);
    let bytes_read = Arc::new(AtomicU64::new(0));
    let mut progress_error: Option<PyErr> = None;
    let mut between_batches = |bytes: &AtomicU64| {
        stop_flag.load(Ordering::SeqCst)
            || Python::with_gil(|py| {
                if let Some(callback) = &progress {
                    if let Err(error) = callback.call1(py, (bytes.load(Ordering::Relaxed),)) {
                        progress_error = Some(error);
                        return true;
                    }
                }
                stop_requested(py)
            })
    };
    let outcome = if let Ok(path) = source.downcast::<PyString>() {
        let path = path.to_cow()?.into_owned();
        py.allow_threads(|| {
            let file = std::fs::File::open(&path)?;
            check_counted(
                file,
                options,
                resume,
                snapshot,
                &bytes_read,
                &mut between_batches,
            )
        })?
    } else {
        let mut reader = PyReader {
            file: source.clone().unbind(),
            error: None,
            interrupted: flag,
        };
        let outcome = py.allow_threads(|| {
            check_counted(
                &mut reader,
                options,
                resume,
                snapshot,
                &bytes_read,
                &mut between_batches,
            )
        });
        match (outcome, reader.error.take()) {
            (Ok(outcome), _) => outcome,
            (Err(_), Some(error)) => return Err(error),
            (Err(error), None) => return Err(error.into()),
        }
    };
    if let Some(error) = progress_error {
        return Err(error);
    }
    if let Some(callback) = &progress {
        callback.call1(py, (bytes_read.load(Ordering::Relaxed),))?;
    }
    Ok(outcome)
}

/// `input` checked, its bytes counted for `between_batches` and left in `bytes_read` at the end:
/// one reading path for a file opened here and a Python file object (read straight into the
/// check's batches, `journal/lines.rs`).
fn check_counted(
    input: impl std::io::Read + Send,
    options: &journal::Options,
    resume: Option<journal::Resume>,
    snapshot: bool,
    bytes_read: &AtomicU64,
    between_batches: &mut impl FnMut(&AtomicU64) -> bool,
) -> std::io::Result<(journal::JournalReport, Option<journal::Snapshot>)> {
    let counted = CountingReader::new(input);
    let counter = counted.counter();
    let outcome = journal::check_journal_from(counted, options, resume, snapshot, || {
        between_batches(&counter)
    });
    bytes_read.store(counter.load(Ordering::Relaxed), Ordering::Relaxed);
    outcome
}

/// The per-line stage over the lines beginning in bytes `[start, end)` of the journal `source`
/// (a path, or a binary file object with `read` and `seek`, e.g. an fsspec file), encoded for
/// `JournalChecker.feed` (docs/cluster.md). Of `options` the per-line ones apply (lifecycle and
/// the findings cap are the ordered stage's).
#[pyfunction]
pub(super) fn check_journal_chunk<'py>(
    py: Python<'py>,
    source: &Bound<'_, PyAny>,
    start: u64,
    end: u64,
    options: &Bound<'_, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guarded(py, "check_journal_chunk", || {
        let options = journal_options(options)?;
        let encoded = if let Ok(path) = source.downcast::<PyString>() {
            let path = path.to_cow()?.into_owned();
            py.allow_threads(|| {
                let file = std::fs::File::open(path)?;
                journal::chunks::check_chunk(file, start..end, &options)
            })?
        } else {
            let interrupted = Arc::new(AtomicBool::new(false));
            let mut reader = PyReader {
                file: source.clone().unbind(),
                error: None,
                interrupted: Arc::clone(&interrupted),
            };
            let outcome = py
                .allow_threads(|| journal::chunks::check_chunk(&mut reader, start..end, &options));
            // A chunk cut short by Ctrl-C would look like a shorter journal: never a result.
            if interrupted.load(Ordering::SeqCst) {
                return Err(PyKeyboardInterrupt::new_err("journal chunk interrupted"));
            }
            match (outcome, reader.error.take()) {
                (Ok(encoded), _) => encoded,
                (Err(_), Some(error)) => return Err(error),
                (Err(error), None) => return Err(error.into()),
            }
        };
        Ok(PyBytes::new(py, &encoded))
    })
}

/// The ordered stage of `check_journal` fed chunk by chunk, in file order.
#[pyclass(module = "pairling_fast._core")]
pub(super) struct JournalChecker {
    inner: Option<journal::chunks::ChunkedChecker>,
}

const FINISHED: &str = "this JournalChecker has finished";

#[pymethods]
impl JournalChecker {
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let options = journal_options(options)?;
        Ok(JournalChecker {
            inner: Some(journal::chunks::ChunkedChecker::new(&options)),
        })
    }

    fn feed(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
        guarded(py, "JournalChecker.feed", || {
            let checker = open_checker(&mut self.inner, FINISHED)?;
            py.allow_threads(|| checker.feed(chunk))
                .map_err(|error| PyValueError::new_err(error.to_string()))
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
            "JournalChecker.finish",
            &mut self.inner,
            FINISHED,
            |checker| checker.finish(interrupted),
        )
    }
}

#[pyfunction]
pub(super) fn journal_event_kinds(release: &str) -> PyResult<Vec<String>> {
    Ok(journal::event_kinds(bundled_release(release)?))
}

/// CAR's chain digest of one journal line (`car_event::line_digest`); `ValueError` with CAR's
/// reason when CAR cannot compute it.
#[pyfunction]
pub(super) fn journal_chain_digest(py: Python<'_>, line: &[u8]) -> PyResult<String> {
    py.allow_threads(|| crate::journal::car_event::line_digest(line))
        .map_err(PyValueError::new_err)
}
